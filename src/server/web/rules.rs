//! The rule pages' data: for every [`RuleId`], its one-line text from
//! [`RuleId::summary`] (the CLI's help lines: one source of truth) and, from
//! `rules.toml`, the profile clause, severities and a correct and an incorrect example.
//! Tests check that every rule the validator can emit has its page and that each
//! feed-time example gives (or does not give) its rule when validated.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::profile::{self, Finding, Options, RuleId};

/// What `rules.toml` says about one rule.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleDoc {
    /// The clause of KB's profile 2.4 the rule comes from (quoted as KB writes it).
    pub clause: String,
    /// Where in the feed.
    pub xpath: String,
    /// The severities it gives (`error`, `warning`, `info`); when, in each language,
    /// is [`RuleId::when`].
    pub severities: Vec<String>,
    /// Where the examples go in the example feed: `item`, `item2`, `channel`, `rss`.
    #[serde(rename = "in")]
    pub place: Place,
    /// Elements of the example feed the examples replace.
    #[serde(default)]
    pub replace: Vec<String>,
    /// A correct example.
    pub correct: String,
    /// An incorrect example.
    pub incorrect: String,
}

/// Where an example goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Place {
    /// In the item.
    Item,
    /// In a second, older item.
    Item2,
    /// In the channel.
    Channel,
    /// The `<rss>` start tag.
    Rss,
}

impl Place {
    /// The catalogue ID of the text that says where.
    pub fn text_id(self) -> &'static str {
        match self {
            Place::Item => "rule-in-item",
            Place::Item2 => "rule-in-item2",
            Place::Channel => "rule-in-channel",
            Place::Rss => "rule-in-rss",
        }
    }
}

/// Every rule's documentation, by ID.
pub fn docs() -> &'static BTreeMap<String, RuleDoc> {
    static DOCS: OnceLock<BTreeMap<String, RuleDoc>> = OnceLock::new();
    DOCS.get_or_init(|| {
        toml::from_str(include_str!("rules.toml"))
            .unwrap_or_else(|e| panic!("src/server/web/rules.toml: {e}"))
    })
}

/// The documentation of `rule` (every rule has one: a test checks).
pub fn doc(rule: RuleId) -> Option<&'static RuleDoc> {
    docs().get(rule.as_str())
}

const RSS: &str = r#"<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">"#;

const CHANNEL: &[(&str, &str)] = &[
    ("channel-title", "<title>Exempelbladet</title>"),
    ("channel-link", "<link>https://www.exempelbladet.se/</link>"),
    (
        "channel-description",
        "<description>Nyheter från Exempelbladet</description>",
    ),
];

const ITEM: &[(&str, &str)] = &[
    ("title", "<title>Ny scen i kulturhuset</title>"),
    (
        "link",
        "<link>https://www.exempelbladet.se/kultur/2025/03/14/ny-scen</link>",
    ),
    (
        "guid",
        r#"<guid isPermaLink="false">exempelbladet-2025-0314-1</guid>"#,
    ),
    (
        "pubDate",
        "<pubDate>Fri, 14 Mar 2025 09:12:00 +0100</pubDate>",
    ),
    (
        "identifier",
        r#"<dcterms:identifier xsi:type="dcterms:uri">https://www.exempelbladet.se/kultur/2025/03/14/ny-scen</dcterms:identifier>"#,
    ),
    (
        "publisher",
        "<dcterms:publisher>http://id.kb.se/organisations/SE5560041815-DD</dcterms:publisher>",
    ),
    (
        "accessRights",
        "<dcterms:accessRights>gratis</dcterms:accessRights>",
    ),
    (
        "license",
        "<dcterms:license>https://creativecommons.org/licenses/by/4.0/</dcterms:license>",
    ),
    ("format", "<dcterms:format>text/html</dcterms:format>"),
];

fn indent(snippet: &str, by: &str) -> String {
    snippet
        .lines()
        .map(|l| format!("{by}{l}\n"))
        .collect::<String>()
}

fn item(out: &mut String, second: bool, replace: &[String], snippet: Option<&str>) {
    out.push_str("    <item>\n");
    for (key, line) in ITEM {
        if replace.iter().any(|r| r == key) {
            continue;
        }
        let line = if second {
            match *key {
                "guid" => line.replace("-1<", "-7<").replace("0314", "0313"),
                "link" | "identifier" => line.replace("ny-scen", "ny-scen-2"),
                "pubDate" => line.replace("Fri, 14 Mar 2025 09:12", "Thu, 13 Mar 2025 16:05"),
                _ => (*line).to_string(),
            }
        } else {
            (*line).to_string()
        };
        out.push_str(&format!("      {line}\n"));
    }
    if let Some(s) = snippet {
        out.push_str(&indent(s, "      "));
    }
    out.push_str("    </item>\n");
}

/// The example feed of `doc` with `snippet` in its place: a conforming feed except
/// for what the snippet does.
pub fn example_feed(doc: &RuleDoc, snippet: &str) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(if doc.place == Place::Rss {
        snippet
    } else {
        RSS
    });
    out.push_str("\n  <channel>\n");
    for (key, line) in CHANNEL {
        if doc.place == Place::Channel && doc.replace.iter().any(|r| r == key) {
            continue;
        }
        out.push_str(&format!("    {line}\n"));
    }
    if doc.place == Place::Channel {
        out.push_str(&indent(snippet, "    "));
    }
    match doc.place {
        Place::Item => item(&mut out, false, &doc.replace, Some(snippet)),
        Place::Item2 => {
            item(&mut out, false, &[], None);
            item(&mut out, true, &doc.replace, Some(snippet));
        }
        Place::Channel | Place::Rss => item(&mut out, false, &[], None),
    }
    out.push_str("  </channel>\n</rss>\n");
    out
}

/// What plikt reports for `snippet` of `doc`: every finding of the example feed.
pub fn findings(doc: &RuleDoc, snippet: &str) -> Vec<Finding> {
    let feed = example_feed(doc, snippet);
    profile::validate(feed.as_bytes(), &Options::default())
        .map(|r| r.findings)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_the_validator_can_emit_has_a_page_and_nothing_else_does() {
        let ids: Vec<&str> = RuleId::ALL.iter().map(|r| r.as_str()).collect();
        for id in &ids {
            let d = docs()
                .get(*id)
                .unwrap_or_else(|| panic!("rules.toml has no [{id}]"));
            assert!(!d.severities.is_empty(), "{id}: no severities");
            for s in &d.severities {
                let severity = profile::Severity::parse(s)
                    .unwrap_or_else(|| panic!("{id}: unknown severity {s}"));
                for lang in crate::i18n::Lang::ALL {
                    let rule = RuleId::ALL.iter().find(|r| r.as_str() == *id).unwrap();
                    // Each language's catalogue has the rule's text and when it gives
                    // each of its severities.
                    assert!(
                        crate::i18n::has(lang, &format!("rule-{id}"))
                            && crate::i18n::has(lang, &format!("rule-{id}-{s}")),
                        "{lang}: no rule-{id} or rule-{id}-{s}"
                    );
                    assert!(!rule.when(severity, lang).starts_with("rule-"));
                }
            }
            assert!(
                !d.correct.is_empty() && !d.incorrect.is_empty() && d.correct != d.incorrect,
                "{id}: examples"
            );
        }
        for key in docs().keys() {
            assert!(
                ids.contains(&key.as_str()),
                "rules.toml: [{key}] is no rule"
            );
        }
    }

    #[test]
    fn the_example_feed_conforms() {
        let doc = doc(RuleId::R106).unwrap();
        let feed = example_feed(doc, "");
        let report = profile::validate(feed.as_bytes(), &Options::default()).unwrap();
        assert!(report.findings.is_empty(), "{feed}\n{:#?}", report.findings);
    }

    #[test]
    fn each_correct_example_passes_its_rule_and_each_incorrect_one_fails_it() {
        let mut wrong = Vec::new();
        for rule in RuleId::ALL.iter().copied().filter(|r| !r.is_harvest_time()) {
            let d = doc(rule).unwrap();
            let of_rule = |snippet: &str| -> Vec<String> {
                findings(d, snippet)
                    .into_iter()
                    .filter(|f| f.rule == rule)
                    .map(|f| format!("{}[{}] {}", f.severity, f.rule, f.message))
                    .collect()
            };
            // Infos are advice, not a verdict: a correct example may have one (an ftp:
            // URI under dcterms:references is correct, and plikt says it is not fetched).
            let good: Vec<String> = of_rule(&d.correct)
                .into_iter()
                .filter(|f| !f.starts_with("info"))
                .collect();
            if !good.is_empty() {
                wrong.push(format!("{rule}: the correct example gives {good:?}"));
            }
            let bad = of_rule(&d.incorrect);
            // Only errors and warnings are a verdict; an incorrect example must give one
            // of the severities the page lists.
            if !bad
                .iter()
                .any(|f| d.severities.iter().any(|s| f.starts_with(s.as_str())))
            {
                let all: Vec<String> = findings(d, &d.incorrect)
                    .iter()
                    .map(|f| format!("{}[{}] {}", f.severity, f.rule, f.message))
                    .collect();
                wrong.push(format!(
                    "{rule}: the incorrect example gives no finding of the rule: {all:?}"
                ));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
