//! Findings: what validation reports. Findings are data, not errors (STYLE habit 2).

use std::fmt;

use crate::xml::Pos;

macro_rules! rules {
    ($($(#[$doc:meta])* $variant:ident = $id:literal, $summary:literal,)*) => {
        /// A rule of the catalogue (`kb-profile-rules.md`), spelt as the catalogue spells it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum RuleId {
            $($(#[$doc])* $variant,)*
        }

        impl RuleId {
            /// Every rule, in catalogue order.
            pub const ALL: &[RuleId] = &[$(RuleId::$variant,)*];

            /// The ID as the catalogue spells it, e.g. `R115-creator`.
            pub fn as_str(self) -> &'static str {
                match self { $(RuleId::$variant => $id,)* }
            }

            /// What the rule requires, in one line (shown as the hint of a finding).
            pub fn summary(self) -> &'static str {
                match self { $(RuleId::$variant => $summary,)* }
            }
        }
    };
}

rules! {
    /// §2 well-formed, namespace-well-formed XML (fatal).
    GXml = "G-XML", "the feed must be well-formed, namespace-well-formed XML 1.0 (UTF-8 or a declared encoding), all of its text in the feed (no external entities)",
    /// §2 RSS 2.0 root, version, one channel.
    GRss = "G-RSS", "the root is `<rss version=\"2.0\">` in no namespace with exactly one `<channel>`",
    /// §2 channel title, link, description.
    GRssChannel = "G-RSS-CHANNEL", "the channel has exactly one `title`, `link` and `description`",
    /// §2 MediaRSS namespace exactly `http://search.yahoo.com/mrss/`.
    GNsMrss = "G-NS-MRSS", "MediaRSS elements are in exactly `http://search.yahoo.com/mrss/`",
    /// §2 DCMI Terms namespace exactly `http://purl.org/dc/terms/`.
    GNsDcterms = "G-NS-DCTERMS", "Dublin Core elements are in exactly `http://purl.org/dc/terms/` (any prefix)",
    /// §2 no DC 1.1 elements.
    GNsDcelements = "G-NS-DCELEMENTS", "no element may be in the DC 1.1 namespace `http://purl.org/dc/elements/1.1/`",
    /// §2 one prefix for DCMI Terms, used for nothing else.
    GNsPrefix = "G-NS-PREFIX", "DCMI Terms use one prefix, `dcterms` recommended, bound to nothing else",
    /// §2 XML Schema instance namespace.
    GNsXsi = "G-NS-XSI", "xsi is exactly `http://www.w3.org/2001/XMLSchema-instance`",
    /// §2 items newest first.
    GOrder = "G-ORDER", "items are sorted by pubDate, newest first (compared as instants)",
    /// guid.
    R101 = "R101", "`guid`: mandatory, once, non-empty, unique in the feed, never changed",
    /// dcterms:identifier with xsi:type.
    R101a = "R101a", "`dcterms:identifier xsi:type=\"dcterms:isbn|issn|doi|uri|…\"`: desired for duplicate control",
    /// link.
    R102 = "R102", "`link`: mandatory, once, absolute http(s) URL where the item was first published",
    /// pubDate.
    R103 = "R103", "`pubDate`: mandatory, once, RFC 2822 with a four-digit year, e.g. `Sun, 22 Nov 2026 09:30:00 +0100`",
    /// dcterms:publisher.
    R104 = "R104", "`dcterms:publisher`: mandatory, once, `http://id.kb.se/organisations/SE<orgnr>[-suffix]`",
    /// title.
    R105 = "R105", "`title`: mandatory, once, non-empty",
    /// description.
    R106 = "R106", "`description`: optional, at most once",
    /// dcterms:accessRights.
    R107 = "R107", "`dcterms:accessRights`: mandatory, once, `gratis` or `restricted`",
    /// dcterms:license.
    R108 = "R108", "`dcterms:license`: desired, at most once, a URI",
    /// dcterms:isPartOf.
    R112 = "R112", "`dcterms:isPartOf xsi:type=\"dcterms:issn|isbn|…\"`: the host publication",
    /// dcterms:isFormatOf (item level).
    R113 = "R113", "`dcterms:isFormatOf xsi:type=\"dcterms:isbn|…\"`: the same content in another format",
    /// dcterms:creator.
    R115Creator = "R115-creator", "`dcterms:creator`: `Efternamn, Förnamn (roll)` or an institution's name",
    /// dcterms:contributor.
    R115Contributor = "R115-contributor", "`dcterms:contributor`: `Efternamn, Förnamn (roll)` or an institution's name",
    /// dcterms:format.
    R117 = "R117", "`dcterms:format`: mandatory, once, the MIME type of the file at `link`",
    /// media:content (structure).
    S201Content = "S201-content", "`media:content` (also in `media:group`): every file of the item; KB downloads all of them",
    /// media:content/@url.
    F302 = "F302", "`media:content/@url`: mandatory, absolute http(s) URL",
    /// media:content/dcterms:isFormatOf: the alternative-form marker.
    MarkerIsFormatOf = "MARKER-isFormatOf", "`media:content/dcterms:isFormatOf`: at most once, exactly the item's `link`",
    /// media:content/@type.
    F303 = "F303", "`media:content/@type`: mandatory, a MIME type",
    /// dcterms:references.
    S201References = "S201-references", "`dcterms:references xsi:type=\"dcterms:uri|…\"`: files delivered another way (FTP)",
    /// media:hash.
    F305 = "F305", "`media:hash algo=\"md5\"`: 32 hexadecimal digits, one per algorithm",
    /// media:license.
    F307 = "F307", "`media:license href=\"URI\"`: the file's licence",
    /// media:keywords (item).
    R118 = "R118", "`media:keywords` (item): comma-separated keywords",
    /// media:keywords (file).
    F311 = "F311", "`media:keywords` (file): comma-separated keywords",
    /// media:credit.
    F308Credit = "F308-credit", "`media:credit role=\"…\"`: lower-case role, scheme `urn:ebu` (default) or `urn:yvs`",
    /// media:copyright.
    F308Copyright = "F308-copyright", "`media:copyright url=\"…\"`: holder, with an absolute http(s) URL",
    /// §5 file downloadable.
    HFetch = "H-FETCH", "every `link` and `media:content/@url` can be downloaded",
    /// §5 credentials per feed.
    HAuth = "H-AUTH", "credentials go only to the feed's own origin",
    /// §5 declared vs served MIME type.
    HMime = "H-MIME", "the declared MIME type matches what the server sends",
    /// §5 MD5 of the bytes equals media:hash.
    HMd5 = "H-MD5", "the MD5 of the downloaded bytes equals `media:hash`",
    /// §5 byte count equals fileSize.
    HSize = "H-SIZE", "the byte count equals `fileSize`",
    /// §5 no DRM.
    HDrm = "H-DRM", "files carry no DRM",
    /// §5 no items missed between harvests.
    HCoverage = "H-COVERAGE", "no items were missed between harvests",
    /// §5 guid + pubDate versioning.
    HVersion = "H-VERSION", "a changed item keeps its guid and gets a newer pubDate",
    /// §5 publisher agreed for the feed.
    HPublisher = "H-PUBLISHER", "the publisher identifier is one agreed for this feed",
    /// §5 no pagination.
    HPagination = "H-PAGINATION", "the feed is not paginated",
}

impl RuleId {
    /// Parses the catalogue spelling.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|r| r.as_str() == s)
    }

    /// Checked at harvest time (§5), not by `plikt validate`.
    pub fn is_harvest_time(self) -> bool {
        self.as_str().starts_with("H-")
    }
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// §0.1 severities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// Does not conform.
    Error,
    /// Conforms, but something desired is missing or suspicious.
    Warning,
    /// Advisory.
    Info,
}

impl Severity {
    /// `error`, `warning` or `info`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Warning => "warning",
            Self::Info => "info",
        }
    }

    /// Parses `error`, `warning` or `info`.
    pub fn parse(s: &str) -> Option<Self> {
        [Self::Error, Self::Warning, Self::Info]
            .into_iter()
            .find(|v| v.as_str() == s)
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One thing validation found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The catalogue rule.
    pub rule: RuleId,
    /// How bad it is.
    pub severity: Severity,
    /// Where: the element's `<` or the attribute's name.
    pub pos: Option<Pos>,
    /// 1-based index of the item, for item findings.
    pub item: Option<u32>,
    /// The item's guid, where it has one.
    pub guid: Option<String>,
    /// What is wrong and what to write instead.
    pub message: String,
}

impl Finding {
    /// A finding at `pos`.
    pub fn new(rule: RuleId, severity: Severity, pos: Pos, message: impl Into<String>) -> Self {
        Self {
            rule,
            severity,
            pos: Some(pos),
            item: None,
            guid: None,
            message: message.into(),
        }
    }
}
