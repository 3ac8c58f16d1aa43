//! The nodes of a feed that the KB profile reads (catalogue §3), each field with the
//! rule that reads it. Every node keeps its position; values are kept as written.

use super::List;
use crate::xml::{Attribute, Pos, QNameValue};

/// Character content of a simple-valued element (catalogue §0.3 "value").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Value {
    /// Text and CDATA after reference expansion, untrimmed.
    pub raw: String,
    /// Position of the element's `<`.
    pub pos: Pos,
    /// The element had element children (an error under the element's rule).
    pub has_children: bool,
}

impl Value {
    pub(super) fn at(pos: Pos) -> Self {
        Self {
            raw: String::new(),
            pos,
            has_children: false,
        }
    }

    /// Makes this a fresh value at `pos`, keeping the text's allocation.
    pub(super) fn reset(&mut self, pos: Pos) {
        self.raw.clear();
        self.pos = pos;
        self.has_children = false;
    }

    /// The value with XML whitespace (#x20 #x9 #xD #xA) trimmed.
    pub fn trimmed(&self) -> &str {
        trim_xml(&self.raw)
    }
}

impl AsRef<Value> for Value {
    fn as_ref(&self) -> &Value {
        self
    }
}

/// Trims XML whitespace (#x20 #x9 #xD #xA), not other Unicode spaces.
pub fn trim_xml(s: &str) -> &str {
    s.trim_matches(|c: char| matches!(c, ' ' | '\t' | '\r' | '\n'))
}

/// An attribute's value and position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttrValue {
    /// Normalised value.
    pub value: String,
    /// Position of the attribute name.
    pub pos: Pos,
}

impl From<&Attribute> for AttrValue {
    fn from(a: &Attribute) -> Self {
        Self {
            value: a.value.clone(),
            pos: a.pos,
        }
    }
}

/// `xsi:type` on a typed identifier (§0.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XsiType {
    /// The attribute value as written.
    pub raw: String,
    /// The value resolved as a QName.
    pub resolved: QNameValue,
    /// Position of the attribute name.
    pub pos: Pos,
}

/// R101 `guid`.
#[derive(Debug, Clone, Default)]
pub struct Guid {
    /// The guid's value.
    pub value: Value,
    /// `isPermaLink`, if given.
    pub is_perma_link: Option<AttrValue>,
}

impl AsRef<Value> for Guid {
    fn as_ref(&self) -> &Value {
        &self.value
    }
}

/// A DCMI Terms element that may carry `xsi:type` (R101a, R112, R113, S201-references).
#[derive(Debug, Clone, Default)]
pub struct Typed {
    /// The element's value.
    pub value: Value,
    /// Its `xsi:type`, if any (in the real XSI namespace).
    pub xsi_type: Option<XsiType>,
}

/// `media:hash` (F305).
#[derive(Debug, Clone, Default)]
pub struct Hash {
    /// The digest.
    pub value: Value,
    /// `algo`; MediaRSS default `md5`.
    pub algo: Option<AttrValue>,
}

/// `media:license` (F307).
#[derive(Debug, Clone, Default)]
pub struct License {
    /// Free text, may be empty.
    pub value: Value,
    /// `href`: the licence URI.
    pub href: Option<AttrValue>,
    /// `type`: MIME type of the licence document.
    pub mime: Option<AttrValue>,
}

/// `media:credit` (F308-credit).
#[derive(Debug, Clone, Default)]
pub struct Credit {
    /// The name credited.
    pub value: Value,
    /// `role`.
    pub role: Option<AttrValue>,
    /// `scheme`: `urn:ebu` (default) or `urn:yvs`.
    pub scheme: Option<AttrValue>,
}

/// `media:copyright` (F308-copyright).
#[derive(Debug, Clone, Default)]
pub struct Copyright {
    /// The holder.
    pub value: Value,
    /// `url` of the terms of use.
    pub url: Option<AttrValue>,
}

/// S201 `media:content`: a file of the resource.
#[derive(Debug, Clone, Default)]
pub struct MediaContent {
    /// Position of `<media:content`.
    pub pos: Pos,
    /// Inside a `media:group`.
    pub in_group: bool,
    /// F302 `url`.
    pub url: Option<AttrValue>,
    /// F303 `type`.
    pub mime: Option<AttrValue>,
    /// MediaRSS `fileSize` in bytes (H-SIZE).
    pub file_size: Option<AttrValue>,
    /// MediaRSS `medium`.
    pub medium: Option<AttrValue>,
    /// F305.
    pub hashes: List<Hash>,
    /// F307.
    pub licenses: List<License>,
    /// F308-credit.
    pub credits: List<Credit>,
    /// F308-copyright.
    pub copyrights: List<Copyright>,
    /// F311.
    pub keywords: List<Value>,
    /// MARKER-isFormatOf: `dcterms:isFormatOf` child; value = the item's link.
    pub markers: List<Value>,
}

/// A `media:group` (for the S201-content structure warnings).
#[derive(Debug, Clone, Copy, Default)]
pub struct Group {
    /// Position of `<media:group`.
    pub pos: Pos,
    /// Nested in another `media:group`.
    pub nested: bool,
    /// How many `media:content` it holds directly.
    pub contents: usize,
}

/// A `media:hash` at item or group level, applying to the contents below it (§6.3).
#[derive(Debug, Clone, Default)]
pub struct ScopedHash {
    /// The hash.
    pub hash: Hash,
    /// Position of the group it sits in, if any (else it is on the item).
    pub group: Option<Pos>,
}

/// An RSS `<enclosure>`.
#[derive(Debug, Clone, Default)]
pub struct Enclosure {
    /// Position of `<enclosure`.
    pub pos: Pos,
    /// `url`.
    pub url: Option<AttrValue>,
}

/// One `/rss/channel/item` with every element the profile reads (catalogue §3).
#[derive(Debug, Clone, Default)]
pub struct Item {
    /// 1-based index of the item in the feed.
    pub index: u32,
    /// Position of `<item`.
    pub pos: Pos,
    /// R101.
    pub guids: List<Guid>,
    /// R101a (all `dcterms:identifier`, typed or not).
    pub identifiers: List<Typed>,
    /// R102.
    pub links: List<Value>,
    /// R103.
    pub pub_dates: List<Value>,
    /// R104.
    pub publishers: List<Value>,
    /// R105.
    pub titles: List<Value>,
    /// R106.
    pub descriptions: List<Value>,
    /// R107.
    pub access_rights: List<Value>,
    /// R108.
    pub licenses: List<Value>,
    /// R112.
    pub is_part_of: List<Typed>,
    /// R113 (item level).
    pub is_format_of: List<Typed>,
    /// R115-creator.
    pub creators: List<Value>,
    /// R115-contributor.
    pub contributors: List<Value>,
    /// R117.
    pub formats: List<Value>,
    /// S201-content, in document order, also those inside `media:group`.
    pub contents: List<MediaContent>,
    /// `media:group`s.
    pub groups: List<Group>,
    /// S201-references.
    pub references: List<Typed>,
    /// R118 (item-level `media:keywords`).
    pub keywords: List<Value>,
    /// `media:hash` on the item or a group.
    pub scoped_hashes: List<ScopedHash>,
    /// RSS `enclosure`s.
    pub enclosures: List<Enclosure>,
}

/// The channel's own elements (G-RSS-CHANNEL), delivered when the channel ends.
#[derive(Debug, Clone, Default)]
pub struct Channel {
    /// Position of `<channel`.
    pub pos: Pos,
    /// `title`.
    pub titles: List<Value>,
    /// `link`.
    pub links: List<Value>,
    /// `description`.
    pub descriptions: List<Value>,
    /// `media:content` directly under the channel (not harvested: S201-content warning).
    pub stray_contents: Vec<Pos>,
    /// Pagination links (`atom:link rel="next"` …) for H-PAGINATION.
    pub pagination: Vec<AttrValue>,
}

/// The root element.
#[derive(Debug, Clone, Default)]
pub struct Root {
    /// Position of the root's `<`.
    pub pos: Pos,
    /// The root is `rss` in no namespace.
    pub is_rss: bool,
    /// Its name as `{namespace}local` when it is not.
    pub name: String,
    /// `version`.
    pub version: Option<AttrValue>,
}

impl Item {
    /// Empties the item for reuse as item `index` at `pos`, keeping its allocations.
    pub(super) fn reset(&mut self, index: u32, pos: Pos) {
        self.index = index;
        self.pos = pos;
        self.guids.clear();
        self.identifiers.clear();
        self.links.clear();
        self.pub_dates.clear();
        self.publishers.clear();
        self.titles.clear();
        self.descriptions.clear();
        self.access_rights.clear();
        self.licenses.clear();
        self.is_part_of.clear();
        self.is_format_of.clear();
        self.creators.clear();
        self.contributors.clear();
        self.formats.clear();
        self.contents.clear();
        self.groups.clear();
        self.references.clear();
        self.keywords.clear();
        self.scoped_hashes.clear();
        self.enclosures.clear();
    }
}
