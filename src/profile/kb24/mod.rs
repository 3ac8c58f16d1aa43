//! KB e-plikt RSS delivery profile 2.4: the feed-time rules of `kb-profile-rules.md`.
//!
//! Each check names the catalogue rule it implements. Shared checks (G-URL, typed
//! identifiers, MIME) are reported under the element's own rule (§0.4.4).
//!
//! The rules are grouped as the catalogue groups them, one file a group, each adding
//! its methods to [`Kb24`] or to the checks of one item:
//!
//! - `channel`: the root and the channel (§2 G-RSS, G-RSS-CHANNEL; S201-content on
//!   `media:content` under the channel);
//! - `namespace`: namespace declarations and DC 1.1 elements (§2 G-NS-*);
//! - `item`: the item rules R101–R118 (§3) and what they share (G-REPEAT, §0.3 typed
//!   identifiers and MIME types);
//! - `media`: the files of an item (§3 S201-content, F302–F311, MARKER-isFormatOf);
//! - here: the state across one feed and the rules across items (R101 uniqueness,
//!   G-ORDER).

mod channel;
mod item;
mod media;
mod namespace;

use std::collections::{HashMap, HashSet};

use super::finding::{Finding, RuleId, Severity};
use super::vocabulary::{self, Vocabulary};
use crate::feed::Item;
use crate::i18n::Message;
use crate::msg;
use crate::xml::{KNOWN_NAMESPACES, Pos};

use RuleId as R;
use Severity::Error;

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

/// `v` in backticks for a message, cut after 80 characters.
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
            c.push(R::R112, Error, item.pos, msg!("r112-required"));
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
                        msg!(
                            "r101-duplicate",
                            value = found(guid.unwrap_or_default()),
                            first = *first
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
                let f = Finding::new(R::GOrder, Error, pos, msg!("g-order", previous = prev_item));
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
    fn push(&mut self, rule: RuleId, severity: Severity, pos: Pos, message: Message) {
        self.out.push(Finding::new(rule, severity, pos, message));
    }
}
