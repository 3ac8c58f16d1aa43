//! Findings: what validation reports. Findings are data, not errors (STYLE habit 2).

use std::fmt;

use crate::i18n::{Lang, Message};
use crate::xml::Pos;

macro_rules! rules {
    ($($(#[$doc:meta])* $variant:ident = $id:literal,)*) => {
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

            /// What the rule requires, in one line, in `lang` (the hint of a finding, the
            /// CLI's help line, the rule page's text): `rule-<ID>` of the catalogues.
            pub fn summary(self, lang: Lang) -> String {
                crate::i18n::text(lang, &format!("rule-{}", self.as_str()), &[])
            }

            /// When the rule gives `severity`, in `lang` (the rule pages):
            /// `rule-<ID>-<severity>` of the catalogues.
            pub fn when(self, severity: Severity, lang: Lang) -> String {
                crate::i18n::text(
                    lang,
                    &format!("rule-{}-{}", self.as_str(), severity.as_str()),
                    &[],
                )
            }
        }
    };
}

rules! {
    /// §2 well-formed, namespace-well-formed XML (fatal).
    GXml = "G-XML",
    /// §2 RSS 2.0 root, version, one channel.
    GRss = "G-RSS",
    /// §2 channel title, link, description.
    GRssChannel = "G-RSS-CHANNEL",
    /// §2 MediaRSS namespace exactly `http://search.yahoo.com/mrss/`.
    GNsMrss = "G-NS-MRSS",
    /// §2 DCMI Terms namespace exactly `http://purl.org/dc/terms/`.
    GNsDcterms = "G-NS-DCTERMS",
    /// §2 no DC 1.1 elements.
    GNsDcelements = "G-NS-DCELEMENTS",
    /// §2 one prefix for DCMI Terms, used for nothing else.
    GNsPrefix = "G-NS-PREFIX",
    /// §2 XML Schema instance namespace.
    GNsXsi = "G-NS-XSI",
    /// §2 items newest first.
    GOrder = "G-ORDER",
    /// guid.
    R101 = "R101",
    /// dcterms:identifier with xsi:type.
    R101a = "R101a",
    /// link.
    R102 = "R102",
    /// pubDate.
    R103 = "R103",
    /// dcterms:publisher.
    R104 = "R104",
    /// title.
    R105 = "R105",
    /// description.
    R106 = "R106",
    /// dcterms:accessRights.
    R107 = "R107",
    /// dcterms:license.
    R108 = "R108",
    /// dcterms:isPartOf.
    R112 = "R112",
    /// dcterms:isFormatOf (item level).
    R113 = "R113",
    /// dcterms:creator.
    R115Creator = "R115-creator",
    /// dcterms:contributor.
    R115Contributor = "R115-contributor",
    /// dcterms:format.
    R117 = "R117",
    /// media:content (structure).
    S201Content = "S201-content",
    /// media:content/@url.
    F302 = "F302",
    /// media:content/dcterms:isFormatOf: the alternative-form marker.
    MarkerIsFormatOf = "MARKER-isFormatOf",
    /// media:content/@type.
    F303 = "F303",
    /// dcterms:references.
    S201References = "S201-references",
    /// media:hash.
    F305 = "F305",
    /// media:license.
    F307 = "F307",
    /// media:keywords (item).
    R118 = "R118",
    /// media:keywords (file).
    F311 = "F311",
    /// media:credit.
    F308Credit = "F308-credit",
    /// media:copyright.
    F308Copyright = "F308-copyright",
    /// §5 file downloadable.
    HFetch = "H-FETCH",
    /// §5 credentials per feed.
    HAuth = "H-AUTH",
    /// §5 declared vs served MIME type.
    HMime = "H-MIME",
    /// §5 MD5 of the bytes equals media:hash.
    HMd5 = "H-MD5",
    /// §5 byte count equals fileSize.
    HSize = "H-SIZE",
    /// §5 no DRM.
    HDrm = "H-DRM",
    /// §5 no items missed between harvests.
    HCoverage = "H-COVERAGE",
    /// §5 guid + pubDate versioning.
    HVersion = "H-VERSION",
    /// §5 publisher agreed for the feed.
    HPublisher = "H-PUBLISHER",
    /// §5 no pagination.
    HPagination = "H-PAGINATION",
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
    /// What is wrong and what to write instead, in no language yet (rendered by the
    /// report printers and the web pages; `Display` is English).
    pub message: Message,
}

impl Finding {
    /// A finding at `pos`.
    pub fn new(rule: RuleId, severity: Severity, pos: Pos, message: Message) -> Self {
        Self {
            rule,
            severity,
            pos: Some(pos),
            item: None,
            guid: None,
            message,
        }
    }
}
