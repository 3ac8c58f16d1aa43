//! The item rules of catalogue §3 that read an item's own elements, R101–R118, with
//! what they share: G-REPEAT and the mandatory elements, §0.3 typed identifiers and MIME
//! types. The files of an item (S201, F3xx) are in `media`.

use std::hash::{DefaultHasher, Hash as _, Hasher};

use super::{DCTERMS, ItemCheck, R, found};
use crate::feed::{Typed, Value, XsiType, trim_xml};
use crate::i18n::Message;
use crate::msg;
use crate::profile::date;
use crate::profile::finding::{
    RuleId,
    Severity::{Error, Info, Warning},
};
use crate::profile::syntax::{self, Mime};
use crate::profile::vocabulary::Vocabulary;
use crate::xml::{NsId, Pos, QNameValue};

impl ItemCheck<'_> {
    /// G-REPEAT and the mandatory rules: the first occurrence, reporting a missing
    /// mandatory one and every repetition.
    fn single<'v, T: AsRef<Value>>(
        &mut self,
        rule: RuleId,
        name: &str,
        list: &'v [T],
        mandatory: Option<Message>,
    ) -> Option<&'v Value> {
        if list.is_empty()
            && let Some(example) = mandatory
        {
            self.push(
                rule,
                Error,
                self.item.pos,
                msg!("item-missing", name = name, example = example),
            );
        }
        for extra in list.iter().skip(1) {
            self.push(
                rule,
                Error,
                extra.as_ref().pos,
                msg!("item-repeated", name = name),
            );
        }
        let first = list.first()?.as_ref();
        self.text_only(rule, name, first).then_some(first)
    }

    /// Reports child elements inside a simple value; true if the value is usable.
    pub(super) fn text_only(&mut self, rule: RuleId, name: &str, v: &Value) -> bool {
        if v.has_children {
            self.push(rule, Error, v.pos, msg!("item-children", name = name));
        }
        !v.has_children
    }

    /// R101: presence, once, not empty. Returns the hash and position of a usable
    /// guid, for uniqueness across items.
    pub(super) fn guid(&mut self) -> Option<(u64, Pos)> {
        let item = self.item;
        let v = self.single(R::R101, "guid", &item.guids, Some(msg!("example-guid")))?;
        let value = v.trimmed();
        if value.is_empty() {
            self.push(R::R101, Error, v.pos, msg!("r101-empty"));
            return None;
        }
        let mut h = DefaultHasher::new();
        value.hash(&mut h);
        Some((h.finish(), v.pos))
    }

    /// R101: a guid that is not a URL must say `isPermaLink="false"`.
    pub(super) fn guid_perma_link(&mut self) {
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
                msg!("r101-perma-link", value = found(value)),
            );
        }
    }

    /// R101a: every `dcterms:identifier` with an xsi:type is a valid typed identifier;
    /// an item with none gets a warning (KB wants one for duplicate control).
    pub(super) fn identifiers(&mut self) {
        let item = self.item;
        for t in &item.identifiers {
            if t.xsi_type.is_some() {
                self.typed(R::R101a, "identifier", t);
            }
        }
        if !item.identifiers.iter().any(|t| t.xsi_type.is_some()) {
            self.push(R::R101a, Warning, item.pos, msg!("r101a-none"));
        }
    }

    /// §0.3 typed identifier, reported under `rule`.
    fn typed(&mut self, rule: RuleId, name: &str, t: &Typed) {
        let Some(ty) = &t.xsi_type else { return };
        if let Some(kind) = self.identifier_type(rule, ty) {
            self.identifier_value(rule, name, kind, &t.value);
        }
    }

    /// §0.3 typed identifier, its `xsi:type`: a DCMI Terms name from the profile's list
    /// (R101a decision: the union of the tables, `issn` on R101a info, typos warned).
    /// Returns the type when the value can be checked against it.
    fn identifier_type<'t>(&mut self, rule: RuleId, ty: &'t XsiType) -> Option<&'t str> {
        let types = "doi, ean, hdl, isan, isbn, ismn, isrc, issn, issue-number, matrix-number, upc, uri, urn";
        let kind = match &ty.resolved {
            QNameValue::Unbound(p) => {
                self.push(
                    rule,
                    Error,
                    ty.pos,
                    msg!(
                        "type-unbound",
                        prefix = p,
                        value = found(&ty.raw),
                        ns = DCTERMS
                    ),
                );
                return None;
            }
            QNameValue::Invalid => {
                self.push(
                    rule,
                    Error,
                    ty.pos,
                    msg!("type-not-qname", value = found(&ty.raw)),
                );
                return None;
            }
            QNameValue::Resolved(ns, _) if *ns != NsId::DCTERMS => {
                self.push(
                    rule,
                    Error,
                    ty.pos,
                    msg!("type-namespace", value = found(&ty.raw), ns = DCTERMS),
                );
                return None;
            }
            QNameValue::Resolved(_, local) => local.as_str(),
        };
        if !Vocabulary::has(&self.voc.identifier_types, kind) {
            self.push(
                rule,
                Error,
                ty.pos,
                msg!(
                    "type-unknown",
                    kind = kind,
                    types = types,
                    lower = kind.to_ascii_lowercase()
                ),
            );
            return None;
        }
        if let Some(fix) = self.voc.identifier_type_typos.get(kind) {
            self.push(
                rule,
                Warning,
                ty.pos,
                msg!("type-typo", kind = kind, fix = fix),
            );
        }
        if kind == "issn" && rule == R::R101a {
            self.push(rule, Info, ty.pos, msg!("r101a-issn"));
        }
        Some(kind)
    }

    /// §0.3 typed identifier, its value of type `kind`: text, not empty, the type's
    /// syntax (info), and for `uri` an http(s) scheme (G-URL; S201-references: info).
    fn identifier_value(&mut self, rule: RuleId, name: &str, kind: &str, v: &Value) {
        if !self.text_only(rule, name, v) {
            return;
        }
        let value = v.trimmed();
        if value.is_empty() {
            self.push(
                rule,
                Error,
                v.pos,
                msg!("type-empty", name = name, kind = kind),
            );
            return;
        }
        if let Some(problem) = syntax::identifier_syntax(kind, value) {
            self.push(rule, Info, v.pos, problem);
        } else if kind == "uri"
            && let Ok(scheme) = syntax::absolute_uri(value)
            && !syntax::is_http_scheme(scheme)
        {
            if rule == R::S201References {
                self.push(
                    rule,
                    Info,
                    v.pos,
                    msg!(
                        "s201-references-outside",
                        value = found(value),
                        scheme = scheme
                    ),
                );
            } else {
                self.push(
                    rule,
                    Warning,
                    v.pos,
                    msg!("uri-not-http", value = found(value)),
                );
            }
        }
    }

    /// R112, R113, S201-references: typed, or untyped (the pre-2.2 form: warning).
    pub(super) fn typed_list(&mut self, rule: RuleId, name: &str, list: &[Typed]) {
        for t in list {
            if t.xsi_type.is_some() {
                self.typed(rule, name, t);
            } else {
                self.push(
                    rule,
                    Warning,
                    t.value.pos,
                    msg!("type-missing", name = name),
                );
            }
        }
    }

    /// R102 `link`: exactly one, an absolute http(s) URL (G-URL). Returns the link for
    /// the marker comparison.
    pub(super) fn link(&mut self) -> Option<String> {
        let v = self.single(
            R::R102,
            "link",
            &self.item.links,
            Some(msg!("example-link")),
        )?;
        let value = v.trimmed();
        match syntax::http_url(value) {
            Ok(u) => {
                if u.non_ascii {
                    self.push(
                        R::R102,
                        Info,
                        v.pos,
                        msg!("r102-non-ascii", value = found(value)),
                    );
                }
            }
            Err(e) => self.push(R::R102, Error, v.pos, msg!("r102-invalid", error = e)),
        }
        Some(value.to_string())
    }

    /// R103 `pubDate`: exactly one, RFC 2822 with a four-digit year (§6.2); a wrong
    /// day name is a warning. Returns the instant for G-ORDER.
    pub(super) fn pub_date(&mut self) -> Option<i64> {
        let v = self.single(
            R::R103,
            "pubDate",
            &self.item.pub_dates,
            Some(msg!(
                "example-code",
                code = "`<pubDate>Sun, 22 Nov 2026 09:30:00 +0100</pubDate>`"
            )),
        )?;
        match date::parse(v.trimmed()) {
            Ok(d) => {
                if let Some((given, actual)) = d.weekday_mismatch {
                    self.push(
                        R::R103,
                        Warning,
                        v.pos,
                        msg!("r103-weekday", given = given, actual = actual),
                    );
                }
                if d.comment {
                    self.push(R::R103, Info, v.pos, msg!("r103-comment"));
                }
                if let Some(m) = d.military {
                    self.push(R::R103, Info, v.pos, msg!("r103-military", zone = m));
                }
                Some(d.instant)
            }
            Err(e) => {
                self.push(
                    R::R103,
                    Error,
                    v.pos,
                    msg!("r103-date", value = found(v.trimmed()), error = e.0),
                );
                None
            }
        }
    }

    /// R104: `dcterms:publisher` — `http://id.kb.se/organisations/SE<10 digits>[-suffix]`,
    /// exactly one; a failed Luhn check digit is info.
    pub(super) fn publisher(&mut self) {
        let example = msg!(
            "example-code",
            code = "`<dcterms:publisher>http://id.kb.se/organisations/SE5560041815</dcterms:publisher>`"
        );
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
                msg!("r104-invalid", value = found(value), prefix = prefix),
            ),
            Some(orgnr) => {
                if value.len() != v.raw.len() {
                    self.push(R::R104, Info, v.pos, msg!("r104-space"));
                }
                if !syntax::luhn(orgnr) {
                    self.push(
                        R::R104,
                        Info,
                        v.pos,
                        msg!("r104-check-digit", orgnr = orgnr),
                    );
                }
            }
        }
    }

    /// R105 `title`: exactly one, not empty.
    pub(super) fn title(&mut self) {
        let Some(v) = self.single(
            R::R105,
            "title",
            &self.item.titles,
            Some(msg!("example-code", code = "`<title>…</title>`")),
        ) else {
            return;
        };
        if v.trimmed().is_empty() {
            self.push(R::R105, Error, v.pos, msg!("r105-empty"));
        }
    }

    /// R106 `description`: at most one.
    pub(super) fn description(&mut self) {
        self.single(R::R106, "description", &self.item.descriptions, None);
    }

    /// R107 `dcterms:accessRights`: exactly one, `gratis` or `restricted`.
    pub(super) fn access_rights(&mut self) {
        let Some(v) = self.single(
            R::R107,
            "dcterms:accessRights",
            &self.item.access_rights,
            Some(msg!(
                "example-code",
                code = "`<dcterms:accessRights>gratis</dcterms:accessRights>`"
            )),
        ) else {
            return;
        };
        let value = v.trimmed();
        if Vocabulary::has(&self.voc.access_rights, value) {
            if value.len() != v.raw.len() {
                self.push(R::R107, Info, v.pos, msg!("r107-space"));
            }
        } else {
            let message = match value.to_ascii_lowercase().as_str() {
                "gratis" | "free" | "open" | "public" => {
                    msg!("r107-invalid-gratis", value = found(value))
                }
                "restricted" | "paywall" | "closed" | "subscription" => {
                    msg!("r107-invalid-restricted", value = found(value))
                }
                _ => msg!("r107-invalid", value = found(value)),
            };
            self.push(R::R107, Error, v.pos, message);
        }
    }

    /// R108 `dcterms:license`: at most one, an absolute URI (since 2.3); absent is a
    /// warning.
    pub(super) fn license(&mut self) {
        if self.item.licenses.is_empty() {
            self.push(R::R108, Warning, self.item.pos, msg!("r108-none"));
            return;
        }
        let Some(v) = self.single(R::R108, "dcterms:license", &self.item.licenses, None) else {
            return;
        };
        let value = v.trimmed();
        match syntax::absolute_uri(value) {
            Err(e) => self.push(R::R108, Error, v.pos, msg!("r108-invalid", error = e)),
            Ok(scheme) if !syntax::is_http_scheme(scheme) => {
                self.push(
                    R::R108,
                    Warning,
                    v.pos,
                    msg!("r108-not-http", value = found(value)),
                );
            }
            Ok(_) => {}
        }
    }

    /// R115-creator / R115-contributor: not empty (warning).
    pub(super) fn names(&mut self, rule: RuleId, name: &str, list: &[Value]) {
        for v in list {
            if self.text_only(rule, name, v) && v.trimmed().is_empty() {
                self.push(rule, Warning, v.pos, msg!("r115-empty", name = name));
            }
        }
    }

    /// R117 `dcterms:format`: exactly one, the MIME type of the file at `link`.
    pub(super) fn format(&mut self) {
        let Some(v) = self.single(
            R::R117,
            "dcterms:format",
            &self.item.formats,
            Some(msg!("example-format")),
        ) else {
            return;
        };
        self.mime(R::R117, "dcterms:format", v.pos, v.trimmed());
    }

    /// §0.3 MIME type, reported under `rule`: not one is an error, an unregistered
    /// top-level type a warning.
    pub(super) fn mime(&mut self, rule: RuleId, what: &str, pos: Pos, value: &str) {
        match syntax::mime(value, &self.voc.media_top_level_types) {
            Ok(Mime::Ok) => {}
            Ok(Mime::UnknownTopLevel(t)) => self.push(
                rule,
                Warning,
                pos,
                msg!("mime-top-level", what = what, value = found(value), top = t),
            ),
            Err(e) => self.push(
                rule,
                Error,
                pos,
                msg!("named-error", what = what, error = e),
            ),
        }
    }

    /// R118 / F311 `media:keywords`: no check but empty (info).
    pub(super) fn keywords(&mut self, rule: RuleId, list: &[Value]) {
        for v in list {
            if v.trimmed().is_empty() && !v.has_children {
                self.push(rule, Info, v.pos, msg!("keywords-empty"));
            }
        }
    }
}
