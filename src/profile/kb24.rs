//! KB e-plikt RSS delivery profile 2.4: the feed-time rules of `kb-profile-rules.md`.
//!
//! Each check names the catalogue rule it implements. Shared checks (G-URL, typed
//! identifiers, MIME) are reported under the element's own rule (§0.4.4).

use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash as _, Hasher};

use super::date;
use super::finding::{Finding, RuleId, Severity};
use super::syntax::{self, Mime};
use super::vocabulary::{self, Vocabulary};
use crate::feed::{Channel, Item, MediaContent, Root, Typed, Value, trim_xml};
use crate::xml::{KNOWN_NAMESPACES, NsDecl, NsId, Pos, QNameValue};

use RuleId as R;
use Severity::{Error, Info, Warning};

const DCTERMS: &str = KNOWN_NAMESPACES[3];
const MRSS: &str = KNOWN_NAMESPACES[2];
const XSI: &str = KNOWN_NAMESPACES[5];

/// Options that the feed alone cannot decide.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProfileOptions {
    /// R112 / decision §7.13: the host publication is itself deposit-liable, so every
    /// item must carry a typed `dcterms:isPartOf`.
    pub require_is_part_of: bool,
}

/// State of the profile across one feed.
#[derive(Debug, Default)]
pub struct Kb24 {
    options: ProfileOptions,
    /// Hash of each trimmed guid → item index (R101 uniqueness; 8 bytes of key per item).
    guids: HashMap<u64, u32>,
    /// The last valid pubDate instant and its item (G-ORDER).
    previous: Option<(i64, u32)>,
    /// Prefixes bound to DCMI Terms, in order of appearance (G-NS-PREFIX).
    dcterms_prefixes: Vec<String>,
    /// Prefixes bound to other namespaces (G-NS-PREFIX).
    other_prefixes: HashMap<String, String>,
    /// Declarations already reported (one finding per distinct declaration).
    reported: HashSet<(RuleId, Severity, String, String)>,
    channels: u32,
    root: Pos,
}

/// Normalises a namespace name for near-miss detection: lower case, no scheme, no
/// `www.`, no trailing slash.
fn near(uri: &str) -> String {
    let u = uri.trim().to_ascii_lowercase();
    let u = u
        .strip_prefix("http://")
        .or_else(|| u.strip_prefix("https://"))
        .unwrap_or(&u);
    let u = u.strip_prefix("www.").unwrap_or(u);
    u.trim_end_matches('/').to_string()
}

fn found(v: &str) -> String {
    const MAX: usize = 80;
    if v.chars().count() > MAX {
        format!("`{}…`", v.chars().take(MAX).collect::<String>())
    } else {
        format!("`{v}`")
    }
}

impl Kb24 {
    /// A profile checker for one feed.
    pub fn new(options: ProfileOptions) -> Self {
        Self {
            options,
            ..Self::default()
        }
    }

    /// G-RSS: the root element. Returns false when validation must stop (§0.4.2).
    pub fn root(&mut self, root: &Root, out: &mut Vec<Finding>) -> bool {
        self.root = root.pos;
        if !root.is_rss {
            let what = if root.name.contains("http://www.w3.org/2005/Atom") {
                " (an Atom feed)"
            } else if root.name.contains("rdf-syntax-ns") {
                " (RSS 1.0 / RDF)"
            } else {
                ""
            };
            out.push(Finding::new(
                R::GRss,
                Error,
                root.pos,
                format!(
                    "the root element is `{}`{what}; the profile requires RSS 2.0: `<rss version=\"2.0\">` (no namespace) with one `<channel>`",
                    root.name
                ),
            ));
            return false;
        }
        match &root.version {
            None => out.push(Finding::new(
                R::GRss,
                Error,
                root.pos,
                "`<rss>` has no `version`; write `<rss version=\"2.0\">`",
            )),
            Some(v) if v.value != "2.0" => out.push(Finding::new(
                R::GRss,
                Error,
                v.pos,
                format!(
                    "RSS version is {}; write exactly `version=\"2.0\"`",
                    found(&v.value)
                ),
            )),
            Some(_) => {}
        }
        true
    }

    /// G-RSS: exactly one channel.
    pub fn channel_start(&mut self, pos: Pos, out: &mut Vec<Finding>) {
        self.channels += 1;
        if self.channels == 2 {
            out.push(Finding::new(R::GRss, Error, pos, "a second `<channel>`; an RSS 2.0 feed has exactly one channel — put all items in the first"));
        }
    }

    /// End of the document.
    pub fn end(&mut self, out: &mut Vec<Finding>) {
        if self.channels == 0 {
            out.push(Finding::new(R::GRss, Error, self.root, "`<rss>` has no `<channel>`; items go in `<rss version=\"2.0\"><channel>…</channel></rss>`"));
        }
    }

    /// G-NS-DCELEMENTS: an element in the DC 1.1 namespace.
    pub fn dc_element(&mut self, pos: Pos, local: &str, out: &mut Vec<Finding>) {
        out.push(Finding::new(
            R::GNsDcelements,
            Error,
            pos,
            format!(
                "`{local}` is in the Dublin Core 1.1 namespace `http://purl.org/dc/elements/1.1/`, which the profile forbids; bind its prefix to `{DCTERMS}` (DCMI Terms) instead"
            ),
        ));
    }

    /// G-NS-MRSS, G-NS-DCTERMS, G-NS-XSI, G-NS-PREFIX: one namespace declaration.
    pub fn namespace(&mut self, decl: &NsDecl, out: &mut Vec<Finding>) {
        let prefix = decl.prefix.as_deref().unwrap_or("");
        let uri = decl.uri.as_str();
        let shown = if prefix.is_empty() {
            "xmlns".to_string()
        } else {
            format!("xmlns:{prefix}")
        };
        let mut report = |rule, severity, message: String, this: &mut Self| {
            if this
                .reported
                .insert((rule, severity, prefix.to_string(), uri.to_string()))
            {
                out.push(Finding::new(rule, severity, decl.pos, message));
            }
        };
        let n = near(uri);
        if uri != MRSS
            && (matches!(
                n.as_str(),
                "search.yahoo.com/mrss" | "video.search.yahoo.com/mrss" | "rssboard.org/media-rss"
            ) || prefix == "media")
        {
            report(
                R::GNsMrss,
                Error,
                format!(
                    "{shown}=\"{uri}\" is not the MediaRSS namespace; write exactly `{MRSS}` (with the trailing slash) — elements in this namespace are not read as MediaRSS"
                ),
                self,
            );
        }
        if uri != DCTERMS && (n == "purl.org/dc/terms" || matches!(prefix, "dcterms" | "dct")) {
            report(
                R::GNsDcterms,
                Error,
                format!(
                    "{shown}=\"{uri}\" is not the DCMI Terms namespace; write exactly `{DCTERMS}` — elements in this namespace are not read as DCMI Terms"
                ),
                self,
            );
        }
        if uri != XSI && (n == "w3.org/2001/xmlschema-instance" || prefix == "xsi") {
            report(
                R::GNsXsi,
                Error,
                format!(
                    "{shown}=\"{uri}\" is not the XML Schema instance namespace; write exactly `{XSI}` (http, not https) — `type` attributes in this namespace are not xsi:type"
                ),
                self,
            );
        }
        // G-NS-PREFIX.
        if uri == DCTERMS {
            if prefix != "dcterms" {
                report(
                    R::GNsPrefix,
                    Info,
                    format!(
                        "DCMI Terms are bound to the prefix `{prefix}`; this is allowed, but the profile recommends `dcterms`"
                    ),
                    self,
                );
            }
            if !self.dcterms_prefixes.iter().any(|p| p == prefix) {
                if let Some(first) = self.dcterms_prefixes.first().cloned() {
                    report(
                        R::GNsPrefix,
                        Warning,
                        format!(
                            "DCMI Terms are bound to both `{first}` and `{prefix}`; use one prefix consistently (profile §2)"
                        ),
                        self,
                    );
                }
                if let Some(other) = self.other_prefixes.get(prefix).cloned() {
                    report(
                        R::GNsPrefix,
                        Warning,
                        format!(
                            "the prefix `{prefix}` is bound to DCMI Terms here and to `{other}` elsewhere; use the DCMI Terms prefix only for DCMI Terms (profile §2)"
                        ),
                        self,
                    );
                }
                self.dcterms_prefixes.push(prefix.to_string());
            }
        } else {
            if self.dcterms_prefixes.iter().any(|p| p == prefix) {
                report(
                    R::GNsPrefix,
                    Warning,
                    format!(
                        "the prefix `{prefix}` is used for DCMI Terms and here for `{uri}`; use the DCMI Terms prefix only for DCMI Terms (profile §2)"
                    ),
                    self,
                );
            }
            self.other_prefixes
                .entry(prefix.to_string())
                .or_insert_with(|| uri.to_string());
        }
    }

    /// G-RSS-CHANNEL and channel-level S201-content: the channel's own elements.
    pub fn channel(&mut self, channel: &Channel, out: &mut Vec<Finding>) {
        for (name, list) in [
            ("title", &channel.titles),
            ("link", &channel.links),
            ("description", &channel.descriptions),
        ] {
            match list.as_slice() {
                [] => out.push(Finding::new(
                    R::GRssChannel,
                    Error,
                    channel.pos,
                    format!("the channel has no `<{name}>`; RSS 2.0 requires channel title, link and description"),
                )),
                [_, rest @ ..] => {
                    for extra in rest {
                        out.push(Finding::new(
                            R::GRssChannel,
                            Error,
                            extra.pos,
                            format!("a second channel `<{name}>`; the channel has exactly one"),
                        ));
                    }
                }
            }
        }
        for pos in &channel.stray_contents {
            out.push(Finding::new(
                R::S201Content,
                Warning,
                *pos,
                "`media:content` directly under `<channel>` belongs to no item and is not harvested; move it into the item it belongs to",
            ));
        }
    }

    /// Every item rule of §3, plus R101 uniqueness and G-ORDER across items.
    pub fn item(&mut self, item: &Item, out: &mut Vec<Finding>) {
        let start = out.len();
        let keys = self.check_item(item, out);
        self.across_items(&keys, item.index, item_guid(item), &mut *out, start);
    }

    /// The rules of §3 that need only the item itself: everything [`Kb24::item`]
    /// checks but R101 uniqueness and G-ORDER, whose inputs come back as [`ItemKeys`]
    /// for [`Kb24::across_items`]. Needs no state, so items can be checked on another
    /// thread (`profile::split`).
    pub fn check_item(&self, item: &Item, out: &mut Vec<Finding>) -> ItemKeys {
        let start = out.len();
        let mut c = ItemCheck {
            item,
            out,
            voc: vocabulary::kb24(),
        };
        let mut keys = ItemKeys {
            guid: c.guid(),
            ..ItemKeys::default()
        };
        keys.guid_at = c.out.len() - start;
        c.guid_perma_link();
        c.identifiers();
        let link = c.link();
        if let Some(instant) = c.pub_date()
            && let Some(v) = item.pub_dates.first()
        {
            keys.date = Some((instant, v.pos));
        }
        keys.date_at = c.out.len() - start;
        c.publisher();
        c.title();
        c.description();
        c.access_rights();
        c.license();
        c.typed_list(R::R112, "isPartOf", &item.is_part_of);
        if self.options.require_is_part_of && !item.is_part_of.iter().any(|t| t.xsi_type.is_some())
        {
            c.push(
                R::R112,
                Error,
                item.pos,
                "this feed's host publication is deposit-liable, so each item needs `<dcterms:isPartOf xsi:type=\"dcterms:issn\">` (or isbn) naming it",
            );
        }
        c.typed_list(R::R113, "isFormatOf", &item.is_format_of);
        c.names(R::R115Creator, "creator", &item.creators);
        c.names(R::R115Contributor, "contributor", &item.contributors);
        c.format();
        c.structure();
        for content in &item.contents {
            c.content(content, link.as_ref());
        }
        c.scoped_hashes();
        c.typed_list(R::S201References, "references", &item.references);
        c.keywords(R::R118, &item.keywords);
        keys
    }

    /// R101 uniqueness and G-ORDER for item `index` (items in document order), whose
    /// own findings are `out[start..]`; then marks all of them with the item's index
    /// and `guid`.
    pub fn across_items(
        &mut self,
        keys: &ItemKeys,
        index: u32,
        guid: Option<&str>,
        out: &mut Vec<Finding>,
        start: usize,
    ) {
        let mut inserted = 0;
        if let Some((hash, pos)) = keys.guid {
            match self.guids.get(&hash) {
                Some(first) => {
                    let f = Finding::new(
                        R::R101,
                        Error,
                        pos,
                        format!(
                            "guid {} is already used by item {first}; every item needs its own guid (a new version keeps its guid and gets a newer pubDate)",
                            found(guid.unwrap_or_default())
                        ),
                    );
                    out.insert(start + keys.guid_at, f);
                    inserted = 1;
                }
                None => {
                    self.guids.insert(hash, index);
                }
            }
        }
        if let Some((instant, pos)) = keys.date {
            if let Some((prev, prev_item)) = self.previous
                && instant > prev
            {
                let f = Finding::new(
                    R::GOrder,
                    Error,
                    pos,
                    format!(
                        "items must be sorted by pubDate, newest first: this item is newer than item {prev_item} before it (compared as instants, zones applied); move it up"
                    ),
                );
                out.insert(start + keys.date_at + inserted, f);
            }
            self.previous = Some((instant, index));
        }
        for f in &mut out[start..] {
            f.item = Some(index);
            f.guid = guid.map(str::to_string);
        }
    }
}

/// The trimmed first guid of `item`, if not empty: what findings name the item by.
pub fn item_guid(item: &Item) -> Option<&str> {
    item.guids
        .first()
        .map(|g| g.value.trimmed())
        .filter(|g| !g.is_empty())
}

/// What the rules across items need of one item ([`Kb24::check_item`]).
#[derive(Debug, Clone, Default)]
pub struct ItemKeys {
    /// Hash of the trimmed guid and its position, when the item has one usable guid.
    guid: Option<(u64, Pos)>,
    /// Where among the item's findings a duplicate guid is reported.
    guid_at: usize,
    /// The pubDate as an instant, and its position, when it is valid.
    date: Option<(i64, Pos)>,
    /// Where among the item's findings G-ORDER is reported.
    date_at: usize,
}

impl ItemKeys {
    /// Moves the positions, for an item read by a reader that started elsewhere.
    pub fn map_positions(&mut self, f: impl Fn(Pos) -> Pos) {
        if let Some((_, pos)) = &mut self.guid {
            *pos = f(*pos);
        }
        if let Some((_, pos)) = &mut self.date {
            *pos = f(*pos);
        }
    }
}

/// The checks of one item.
struct ItemCheck<'a> {
    item: &'a Item,
    /// The profile's vocabularies (`mappings/kb-rss-2.4.toml`).
    voc: &'static Vocabulary,
    out: &'a mut Vec<Finding>,
}

impl ItemCheck<'_> {
    fn push(&mut self, rule: RuleId, severity: Severity, pos: Pos, message: impl Into<String>) {
        self.out.push(Finding::new(rule, severity, pos, message));
    }

    /// G-REPEAT and the mandatory rules: the first occurrence, reporting a missing
    /// mandatory one and every repetition.
    fn single<'v, T: AsRef<Value>>(
        &mut self,
        rule: RuleId,
        name: &str,
        list: &'v [T],
        mandatory: Option<&str>,
    ) -> Option<&'v Value> {
        if list.is_empty()
            && let Some(example) = mandatory
        {
            self.push(
                rule,
                Error,
                self.item.pos,
                format!(
                    "the item has no `<{name}>`, which the profile requires; add e.g. {example}"
                ),
            );
        }
        for extra in list.iter().skip(1) {
            self.push(
                rule,
                Error,
                extra.as_ref().pos,
                format!("a second `<{name}>` in this item; it may occur only once"),
            );
        }
        let first = list.first()?.as_ref();
        self.text_only(rule, name, first).then_some(first)
    }

    /// Reports child elements inside a simple value; true if the value is usable.
    fn text_only(&mut self, rule: RuleId, name: &str, v: &Value) -> bool {
        if v.has_children {
            self.push(
                rule,
                Error,
                v.pos,
                format!("`<{name}>` contains child elements; it must hold text only (escape markup or wrap it in CDATA)"),
            );
        }
        !v.has_children
    }

    /// R101: presence, once, not empty. Returns the hash and position of a usable
    /// guid, for uniqueness across items.
    fn guid(&mut self) -> Option<(u64, Pos)> {
        let item = self.item;
        let v = self.single(
            R::R101,
            "guid",
            &item.guids,
            Some("`<guid isPermaLink=\"false\">urn:uuid:…</guid>` that never changes"),
        )?;
        let value = v.trimmed();
        if value.is_empty() {
            self.push(
                R::R101,
                Error,
                v.pos,
                "`<guid>` is empty; give each item a unique, persistent identifier",
            );
            return None;
        }
        let mut h = DefaultHasher::new();
        value.hash(&mut h);
        Some((h.finish(), v.pos))
    }

    /// R101: a guid that is not a URL must say `isPermaLink="false"`.
    fn guid_perma_link(&mut self) {
        let item = self.item;
        let Some(g) = item.guids.first() else {
            return;
        };
        let value = g.value.trimmed();
        if g.value.has_children || value.is_empty() {
            return;
        }
        let perma = g.is_perma_link.as_ref().map(|a| trim_xml(&a.value));
        if perma != Some("false") && syntax::http_url(value).is_err() {
            self.push(
                R::R101,
                Info,
                g.value.pos,
                format!("guid {} is not an http(s) URL, but `isPermaLink` is not `false` (RSS 2.0 default true); add `isPermaLink=\"false\"`", found(value)),
            );
        }
    }

    /// R101a.
    fn identifiers(&mut self) {
        let item = self.item;
        for t in &item.identifiers {
            if t.xsi_type.is_some() {
                self.typed(R::R101a, "identifier", t);
            }
        }
        if !item.identifiers.iter().any(|t| t.xsi_type.is_some()) {
            self.push(
                R::R101a,
                Warning,
                item.pos,
                "no typed identifier; KB wants one for duplicate control, e.g. `<dcterms:identifier xsi:type=\"dcterms:isbn\">978…</dcterms:identifier>` (or `dcterms:uri` with the item's URL)",
            );
        }
    }

    /// §0.3 typed identifier, reported under `rule`.
    fn typed(&mut self, rule: RuleId, name: &str, t: &Typed) {
        let Some(ty) = &t.xsi_type else { return };
        let types = "doi, ean, hdl, isan, isbn, ismn, isrc, issn, issue-number, matrix-number, upc, uri, urn";
        let kind = match &ty.resolved {
            QNameValue::Unbound(p) => {
                self.push(
                    rule,
                    Error,
                    ty.pos,
                    format!("the prefix `{p}` in xsi:type {} is not declared; use the prefix you bound to `{DCTERMS}`, e.g. `dcterms:isbn`", found(&ty.raw)),
                );
                return;
            }
            QNameValue::Invalid => {
                self.push(
                    rule,
                    Error,
                    ty.pos,
                    format!(
                        "xsi:type {} is not a qualified name; write e.g. `dcterms:isbn`",
                        found(&ty.raw)
                    ),
                );
                return;
            }
            QNameValue::Resolved(ns, _) if *ns != NsId::DCTERMS => {
                self.push(
                    rule,
                    Error,
                    ty.pos,
                    format!("xsi:type {} is not in the DCMI Terms namespace; its prefix must be the one bound to `{DCTERMS}`, e.g. `dcterms:isbn`", found(&ty.raw)),
                );
                return;
            }
            QNameValue::Resolved(_, local) => local.as_str(),
        };
        if !Vocabulary::has(&self.voc.identifier_types, kind) {
            self.push(
                rule,
                Error,
                ty.pos,
                format!("`{kind}` is not an identifier type of the profile; use one of {types} (lower case, e.g. `dcterms:{}`)", kind.to_ascii_lowercase()),
            );
            return;
        }
        if let Some(fix) = self.voc.identifier_type_typos.get(kind) {
            self.push(
                rule,
                Warning,
                ty.pos,
                format!("`{kind}` is probably a typo in the profile's R101a table; write `{fix}`"),
            );
        }
        if kind == "issn" && rule == R::R101a {
            self.push(rule, Info, ty.pos, "an ISSN identifies a serial, not this item; put it in `dcterms:isPartOf xsi:type=\"dcterms:issn\"`");
        }
        if !self.text_only(rule, name, &t.value) {
            return;
        }
        let value = t.value.trimmed();
        if value.is_empty() {
            self.push(
                rule,
                Error,
                t.value.pos,
                format!("`dcterms:{name}` with xsi:type `{kind}` is empty; write the identifier"),
            );
            return;
        }
        if let Some(problem) = syntax::identifier_syntax(kind, value) {
            self.push(rule, Info, t.value.pos, problem);
        } else if kind == "uri"
            && let Ok(scheme) = syntax::absolute_uri(value)
            && !syntax::is_http_scheme(scheme)
        {
            if rule == R::S201References {
                self.push(rule, Info, t.value.pos, format!("{} is delivered outside the feed ({scheme}:); the harvester does not fetch it", found(value)));
            } else {
                self.push(
                    rule,
                    Warning,
                    t.value.pos,
                    format!(
                        "URI {} is not http or https (profile §2: all URLs are http or https)",
                        found(value)
                    ),
                );
            }
        }
    }

    /// R112, R113, S201-references: typed, or untyped (the pre-2.2 form: warning).
    fn typed_list(&mut self, rule: RuleId, name: &str, list: &[Typed]) {
        for t in list {
            if t.xsi_type.is_some() {
                self.typed(rule, name, t);
            } else {
                self.push(
                    rule,
                    Warning,
                    t.value.pos,
                    format!("`dcterms:{name}` has no xsi:type (the form before profile 2.2); write e.g. `<dcterms:{name} xsi:type=\"dcterms:issn\">…`"),
                );
            }
        }
    }

    /// R102. Returns the link for the marker comparison.
    fn link(&mut self) -> Option<String> {
        let v = self.single(
            R::R102,
            "link",
            &self.item.links,
            Some("`<link>https://…/article</link>` where the item was first published"),
        )?;
        let value = v.trimmed();
        match syntax::http_url(value) {
            Ok(u) => {
                if u.non_ascii {
                    self.push(R::R102, Info, v.pos, format!("link {} contains non-ASCII characters; it works, but percent-encoding is safer", found(value)));
                }
            }
            Err(e) => self.push(R::R102, Error, v.pos, format!("`<link>`: {e}")),
        }
        Some(value.to_string())
    }

    /// R103. Returns the instant for G-ORDER.
    fn pub_date(&mut self) -> Option<i64> {
        let v = self.single(
            R::R103,
            "pubDate",
            &self.item.pub_dates,
            Some("`<pubDate>Sun, 22 Nov 2026 09:30:00 +0100</pubDate>`"),
        )?;
        match date::parse(v.trimmed()) {
            Ok(d) => {
                if let Some((given, actual)) = d.weekday_mismatch {
                    self.push(R::R103, Warning, v.pos, format!("pubDate says `{given}` but that date is a {actual}; write `{actual}` or correct the date"));
                }
                if d.comment {
                    self.push(R::R103, Info, v.pos, "pubDate ends with a comment such as `(CET)`; legal RFC 2822, but the numeric zone alone is clearer");
                }
                if let Some(m) = d.military {
                    self.push(R::R103, Info, v.pos, format!("military time zone `{m}` is read as -0000 (RFC 2822 §4.3); write a numeric zone such as `+0100`"));
                }
                Some(d.instant)
            }
            Err(e) => {
                self.push(
                    R::R103,
                    Error,
                    v.pos,
                    format!("pubDate {}: {}", found(v.trimmed()), e.0),
                );
                None
            }
        }
    }

    /// R104.
    fn publisher(&mut self) {
        let example =
            "`<dcterms:publisher>http://id.kb.se/organisations/SE5560041815</dcterms:publisher>`";
        let Some(v) = self.single(
            R::R104,
            "dcterms:publisher",
            &self.item.publishers,
            Some(example),
        ) else {
            return;
        };
        let value = v.trimmed();
        let prefix = self.voc.publisher_prefix.as_str();
        let ok = value
            .strip_prefix(prefix)
            .and_then(syntax::organisation_number);
        match ok {
            None => self.push(
                R::R104,
                Error,
                v.pos,
                format!(
                    "publisher {} is not a KB organisation identifier; write `{prefix}` + the 10-digit organisation number without hyphen + an optional `-suffix` agreed with KB (2 or more letters/digits), e.g. `{prefix}5560041815`",
                    found(value)
                ),
            ),
            Some(orgnr) => {
                if value.len() != v.raw.len() {
                    self.push(R::R104, Info, v.pos, "white space around the publisher identifier was ignored; write it without");
                }
                if !syntax::luhn(orgnr) {
                    self.push(R::R104, Info, v.pos, format!("organisation number {orgnr} fails its check digit; check it against the Swedish companies register"));
                }
            }
        }
    }

    /// R105.
    fn title(&mut self) {
        let Some(v) = self.single(
            R::R105,
            "title",
            &self.item.titles,
            Some("`<title>…</title>`"),
        ) else {
            return;
        };
        if v.trimmed().is_empty() {
            self.push(
                R::R105,
                Error,
                v.pos,
                "`<title>` is empty; give the item its title",
            );
        }
    }

    /// R106.
    fn description(&mut self) {
        self.single(R::R106, "description", &self.item.descriptions, None);
    }

    /// R107.
    fn access_rights(&mut self) {
        let Some(v) = self.single(
            R::R107,
            "dcterms:accessRights",
            &self.item.access_rights,
            Some("`<dcterms:accessRights>gratis</dcterms:accessRights>`"),
        ) else {
            return;
        };
        let value = v.trimmed();
        if Vocabulary::has(&self.voc.access_rights, value) {
            if value.len() != v.raw.len() {
                self.push(
                    R::R107,
                    Info,
                    v.pos,
                    "white space around accessRights was ignored; write it without",
                );
            }
        } else {
            let hint = match value.to_ascii_lowercase().as_str() {
                "gratis" | "free" | "open" | "public" => " (`gratis`: free to read when published)",
                "restricted" | "paywall" | "closed" | "subscription" => {
                    " (`restricted`: payment, subscription or other conditions)"
                }
                _ => "",
            };
            self.push(
                R::R107,
                Error,
                v.pos,
                format!(
                    "accessRights must be exactly `gratis` or `restricted`; found {}{hint}",
                    found(value)
                ),
            );
        }
    }

    /// R108.
    fn license(&mut self) {
        if self.item.licenses.is_empty() {
            self.push(
                R::R108,
                Warning,
                self.item.pos,
                "no `<dcterms:license>`; KB wants a licence URI for rights handling, e.g. `https://creativecommons.org/licenses/by/4.0/`",
            );
            return;
        }
        let Some(v) = self.single(R::R108, "dcterms:license", &self.item.licenses, None) else {
            return;
        };
        let value = v.trimmed();
        match syntax::absolute_uri(value) {
            Err(e) => self.push(
                R::R108,
                Error,
                v.pos,
                format!("dcterms:license must be a URI since profile 2.3: {e}"),
            ),
            Ok(scheme) if !syntax::is_http_scheme(scheme) => {
                self.push(
                    R::R108,
                    Warning,
                    v.pos,
                    format!(
                        "licence URI {} is not http or https (profile §2)",
                        found(value)
                    ),
                );
            }
            Ok(_) => {}
        }
    }

    /// R115-creator / R115-contributor.
    fn names(&mut self, rule: RuleId, name: &str, list: &[Value]) {
        for v in list {
            if self.text_only(rule, name, v) && v.trimmed().is_empty() {
                self.push(rule, Warning, v.pos, format!("`dcterms:{name}` is empty; write `Efternamn, Förnamn` for a person or the name of the institution, or leave the element out"));
            }
        }
    }

    /// R117.
    fn format(&mut self) {
        let Some(v) = self.single(
            R::R117,
            "dcterms:format",
            &self.item.formats,
            Some(
                "`<dcterms:format>text/html</dcterms:format>`, the MIME type of the file at `link`",
            ),
        ) else {
            return;
        };
        self.mime(R::R117, "dcterms:format", v.pos, v.trimmed());
    }

    fn mime(&mut self, rule: RuleId, what: &str, pos: Pos, value: &str) {
        match syntax::mime(value, &self.voc.media_top_level_types) {
            Ok(Mime::Ok) => {}
            Ok(Mime::UnknownTopLevel(t)) => self.push(
                rule,
                Warning,
                pos,
                format!("{what} {}: `{t}` is not a registered top-level media type (application, audio, font, image, message, model, multipart, text, video …)", found(value)),
            ),
            Err(e) => self.push(rule, Error, pos, format!("{what}: {e}")),
        }
    }

    /// S201-content warnings on the structure: groups and enclosures.
    fn structure(&mut self) {
        let item = self.item;
        for g in &item.groups {
            if g.nested {
                self.push(R::S201Content, Warning, g.pos, "`media:group` inside another `media:group`; MediaRSS groups do not nest — flatten them");
            } else if g.contents == 0 {
                self.push(
                    R::S201Content,
                    Warning,
                    g.pos,
                    "`media:group` without `media:content`; remove it or put the files in it",
                );
            }
        }
        for e in &item.enclosures {
            let url = e.url.as_ref().map(|u| trim_xml(&u.value)).unwrap_or("");
            let covered = item
                .contents
                .iter()
                .any(|c| c.url.as_ref().is_some_and(|u| trim_xml(&u.value) == url));
            if !covered {
                self.push(
                    R::S201Content,
                    Warning,
                    e.pos,
                    format!("`<enclosure>` {} has no `media:content` with the same URL; KB reads only media:content — add `<media:content url=\"…\" type=\"…\"/>`", found(url)),
                );
            }
        }
    }

    /// F302, F303, F305, F307, F308, F311 and the marker, for one `media:content`.
    fn content(&mut self, c: &MediaContent, link: Option<&String>) {
        match &c.url {
            None => self.push(R::F302, Error, c.pos, "`media:content` has no `url`; KB downloads every media:content, so give the file's absolute http(s) URL"),
            Some(a) => match syntax::http_url(trim_xml(&a.value)) {
                Ok(u) if u.non_ascii => self.push(R::F302, Info, a.pos, "the url contains non-ASCII characters; it works, but percent-encoding is safer"),
                Ok(_) => {}
                Err(e) => self.push(R::F302, Error, a.pos, format!("media:content url: {e}")),
            },
        }
        match &c.mime {
            None => self.push(R::F303, Error, c.pos, "`media:content` has no `type`; add the file's MIME type, e.g. `type=\"application/pdf\"`"),
            Some(a) => self.mime(R::F303, "media:content type", a.pos, trim_xml(&a.value)),
        }
        // MARKER-isFormatOf.
        for extra in c.markers.iter().skip(1) {
            self.push(
                R::MarkerIsFormatOf,
                Error,
                extra.pos,
                "a second `dcterms:isFormatOf` marker in this media:content; at most one",
            );
        }
        if let Some(m) = c.markers.first()
            && self.text_only(R::MarkerIsFormatOf, "dcterms:isFormatOf", m)
        {
            let value = m.trimmed();
            match link {
                    None => self.push(
                        R::MarkerIsFormatOf,
                        Error,
                        m.pos,
                        "the alternative-form marker must repeat the item's `<link>`, but the item has none",
                    ),
                    Some(text) => {
                        if !syntax::same_url(text, value) {
                            self.push(
                                R::MarkerIsFormatOf,
                                Error,
                                m.pos,
                                format!("the alternative-form marker {} differs from the item's link {}; it must be the same URL", found(value), found(text)),
                            );
                        }
                    }
                }
        }
        // F305.
        self.hashes(&c.hashes, true);
        // F307.
        for l in &c.licenses {
            match &l.href {
                None => self.push(R::F307, Error, l.value.pos, "`media:license` has no `href`; KB reads only href: write `href=\"https://creativecommons.org/licenses/by/4.0/\"`"),
                Some(h) => match syntax::absolute_uri(trim_xml(&h.value)) {
                    Err(e) => self.push(R::F307, Error, h.pos, format!("media:license href: {e}")),
                    Ok(s) if !syntax::is_http_scheme(s) => {
                        self.push(R::F307, Warning, h.pos, format!("licence URI {} is not http or https (profile §2)", found(&h.value)));
                    }
                    Ok(_) => {}
                },
            }
            if let Some(t) = &l.mime
                && syntax::mime(trim_xml(&t.value), &self.voc.media_top_level_types).is_err()
            {
                self.push(
                    R::F307,
                    Warning,
                    t.pos,
                    format!(
                        "media:license type {} is not a MIME type; write e.g. `text/html`",
                        found(&t.value)
                    ),
                );
            }
        }
        // F308-credit.
        for cr in &c.credits {
            let scheme = cr.scheme.as_ref().map(|s| (trim_xml(&s.value), s.pos));
            if let Some((s, pos)) = scheme
                && !Vocabulary::has(&self.voc.credit_schemes, s)
            {
                self.push(R::F308Credit, Error, pos, format!("media:credit scheme {} is not `urn:ebu` or `urn:yvs`; leave it out for EBU roles", found(s)));
            }
            if let Some(role) = &cr.role {
                let r = trim_xml(&role.value);
                if r.chars().any(char::is_uppercase) {
                    self.push(
                        R::F308Credit,
                        Warning,
                        role.pos,
                        format!(
                            "media:credit role {} must be lower case (MediaRSS): `{}`",
                            found(r),
                            r.to_lowercase()
                        ),
                    );
                }
                let ebu = scheme.is_none_or(|(s, _)| s == "urn:ebu");
                if ebu && !Vocabulary::has(&self.voc.ebu_roles, &r.to_lowercase()) {
                    self.push(R::F308Credit, Info, role.pos, format!("role {} is not one of the EBU roles MediaRSS names (author, editor, photographer, …)", found(r)));
                }
            }
        }
        // F308-copyright.
        for cp in &c.copyrights {
            if let Some(u) = &cp.url
                && let Err(e) = syntax::http_url(trim_xml(&u.value))
            {
                self.push(
                    R::F308Copyright,
                    Error,
                    u.pos,
                    format!("media:copyright url: {e}"),
                );
            }
        }
        self.keywords(R::F311, &c.keywords);
    }

    /// F305 syntax of a set of hashes (one element's). `content`: the set belongs to
    /// one media:content (so "no MD5" is a warning).
    fn hashes(&mut self, hashes: &[crate::feed::Hash], content: bool) {
        let mut seen: Vec<(&str, &str)> = Vec::new();
        let mut md5 = false;
        for h in hashes {
            let algo = h.algo.as_ref().map_or("md5", |a| trim_xml(&a.value));
            let value = h.value.trimmed();
            // Names in the vocabulary are lower case; most feeds write them so.
            let lower;
            let key = if algo.bytes().any(|b| b.is_ascii_uppercase()) {
                lower = algo.to_ascii_lowercase();
                lower.as_str()
            } else {
                algo
            };
            let Some((name, &len)) = self.voc.hash_algorithms.get_key_value(key) else {
                let pos = h.algo.as_ref().map_or(h.value.pos, |a| a.pos);
                let known: Vec<&str> = self
                    .voc
                    .hash_algorithms
                    .keys()
                    .map(String::as_str)
                    .collect();
                self.push(
                    R::F305,
                    Error,
                    pos,
                    format!(
                        "media:hash algo {} is not one of {}; KB wants `algo=\"md5\"`",
                        found(algo),
                        known.join(", ")
                    ),
                );
                continue;
            };
            let name = name.as_str();
            md5 |= name == "md5";
            if !syntax::is_hex(value, len) {
                self.push(
                    R::F305,
                    Error,
                    h.value.pos,
                    format!(
                        "{name} hash {} must be exactly {len} hexadecimal digits (found {})",
                        found(value),
                        value.chars().count()
                    ),
                );
                continue;
            }
            if let Some((_, other)) = seen.iter().find(|(n, _)| *n == name) {
                if !other.eq_ignore_ascii_case(value) {
                    self.push(
                        R::F305,
                        Error,
                        h.value.pos,
                        format!(
                            "two different {name} hashes for the same file; give one per algorithm"
                        ),
                    );
                }
            } else if hashes.len() > 1 {
                seen.push((name, value));
            }
        }
        if content
            && !hashes.is_empty()
            && !md5
            && let Some(h) = hashes.first()
        {
            self.push(R::F305, Warning, h.value.pos, "no MD5 among the hashes; KB verifies files with MD5: add `<media:hash algo=\"md5\">…</media:hash>`");
        }
    }

    /// F305 for hashes on the item or a group, which apply to all contents below.
    fn scoped_hashes(&mut self) {
        let item = self.item;
        for s in &item.scoped_hashes {
            self.hashes(std::slice::from_ref(&s.hash), false);
            let covered = match s.group {
                None => item.contents.len(),
                Some(g) => item
                    .groups
                    .iter()
                    .find(|x| x.pos == g)
                    .map_or(0, |x| x.contents),
            };
            if covered > 1 {
                self.push(
                    R::F305,
                    Info,
                    s.hash.value.pos,
                    format!("this media:hash applies to all {covered} files below it, which can't all have the same digest; put a media:hash in each media:content"),
                );
            }
        }
    }

    /// R118 / F311.
    fn keywords(&mut self, rule: RuleId, list: &[Value]) {
        for v in list {
            if v.trimmed().is_empty() && !v.has_children {
                self.push(
                    rule,
                    Info,
                    v.pos,
                    "`media:keywords` is empty; leave it out or list keywords separated by commas",
                );
            }
        }
    }
}
