//! From a validated feed item to what the harvester records: either a rejection (the
//! item cannot be identified or collected) or a version to collect, with its files,
//! metadata, findings and effective access level (issue 3 §3).

use serde_json::{Value as Json, json};
use sha2::{Digest, Sha256};

use crate::feed::{Item, Typed, Value};
use crate::profile::{Finding, RuleId, Severity, parse_pub_date, syntax};
use crate::store::{self as meta, Access, FileRole, NewFile, StoredFinding, Timestamp};

/// What to do with one item.
#[derive(Debug, Clone)]
pub enum Plan {
    /// Recorded as rejected, with the reason.
    Reject {
        /// The guid, if it has one.
        guid: Option<String>,
        /// Why: names the rule and what the publisher should fix.
        reason: String,
    },
    /// A version to compare with the catalog and, if new, collect.
    Collect(Box<Candidate>),
}

/// An item that can be identified and collected.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// R101, trimmed.
    pub guid: String,
    /// R103 as an instant.
    pub pub_date: Timestamp,
    /// Seconds since the epoch.
    pub instant: i64,
    /// R103 as written.
    pub pub_date_raw: String,
    /// SHA-256 of `metadata` (H-VERSION: same pubDate, changed content).
    pub item_hash: String,
    /// The item's metadata as JSON (the record mapping reads this).
    pub metadata: String,
    /// The item's own findings as JSON.
    pub findings: String,
    /// No profile errors.
    pub conforming: bool,
    /// `gratis` only for a conforming item whose accessRights is exactly `gratis`.
    pub access: Access,
    /// `link` and every `media:content` (also in groups), each URL once.
    pub files: Vec<NewFile>,
    /// R104 values (H-PUBLISHER).
    pub publishers: Vec<String>,
}

/// The trimmed guid of an item, if it has a non-empty one.
pub fn guid(item: &Item) -> Option<String> {
    item.guids
        .first()
        .map(|g| g.value.trimmed().to_string())
        .filter(|g| !g.is_empty())
}

/// Plans one item. `duplicate` says its guid occurs more than once in the feed.
pub fn plan(item: &Item, findings: &[Finding], duplicate: bool) -> Plan {
    let Some(guid) = guid(item) else {
        return Plan::Reject {
            guid: None,
            reason: "the item has no guid (R101), so plikt cannot identify it; give every item a unique, stable `<guid>`".into(),
        };
    };
    if duplicate {
        return Plan::Reject {
            reason: format!(
                "the guid `{guid}` occurs more than once in the feed (R101), so plikt cannot tell which item is meant; every item needs its own guid"
            ),
            guid: Some(guid),
        };
    }
    let raw = item
        .pub_dates
        .first()
        .map(|d| d.trimmed().to_string())
        .unwrap_or_default();
    let instant = match parse_pub_date(&raw) {
        Ok(d) => d.instant,
        Err(e) if raw.is_empty() => {
            let _ = e;
            return Plan::Reject {
                guid: Some(guid),
                reason: "the item has no pubDate (R103), so plikt cannot tell new versions apart; write e.g. `<pubDate>Sun, 22 Nov 2026 08:00:00 +0100</pubDate>`".into(),
            };
        }
        Err(e) => {
            return Plan::Reject {
                guid: Some(guid),
                reason: format!("the pubDate `{raw}` is not usable (R103: {})", e.0),
            };
        }
    };
    let files = files(item);
    if files.is_empty() {
        return Plan::Reject {
            guid: Some(guid),
            reason: "the item has no valid file URL: neither `<link>` (R102) nor any `media:content/@url` (F302) is an absolute http(s) URL".into(),
        };
    }
    let conforming = !findings.iter().any(|f| f.severity == Severity::Error);
    let access = match item.access_rights.as_slice() {
        [a] if conforming && a.trimmed() == Access::Gratis.as_str() => Access::Gratis,
        _ => Access::Restricted,
    };
    let metadata = metadata(item, &guid, &raw).to_json();
    let item_hash = hex::encode(Sha256::digest(metadata.as_bytes()));
    let findings = Json::Array(
        findings
            .iter()
            .map(|f| {
                json!({
                    "rule": f.rule.as_str(),
                    "severity": f.severity.as_str(),
                    "line": f.pos.map(|p| p.line),
                    "column": f.pos.map(|p| p.column),
                    "message": f.message.to_string(),
                })
            })
            .collect(),
    )
    .to_string();
    Plan::Collect(Box::new(Candidate {
        pub_date: Timestamp::from(chrono::DateTime::from_timestamp(instant, 0).unwrap_or_default()),
        instant,
        pub_date_raw: raw,
        guid,
        item_hash,
        metadata,
        findings,
        conforming,
        access,
        files,
        publishers: item
            .publishers
            .iter()
            .map(|p| p.trimmed().to_string())
            .collect(),
    }))
}

/// The files of an item: `link`, then every `media:content` in document order (inside
/// `media:group` too, whatever its `isDefault`), each URL once. Invalid URLs are left
/// out (their findings are already recorded).
fn files(item: &Item) -> Vec<NewFile> {
    let mut out: Vec<NewFile> = Vec::new();
    for c in &item.contents {
        let Some(url) = c.url.as_ref().map(|u| u.value.trim()) else {
            continue;
        };
        if syntax::http_url(url).is_err() || out.iter().any(|f| f.url == url) {
            continue;
        }
        let md5 = c
            .hashes
            .iter()
            .find(|h| {
                h.algo
                    .as_ref()
                    .is_none_or(|a| a.value.trim().eq_ignore_ascii_case("md5"))
            })
            .map(|h| h.value.trimmed().to_ascii_lowercase())
            .filter(|h| syntax::is_hex(h, 32));
        out.push(NewFile {
            role: FileRole::Content,
            url: url.to_string(),
            declared_type: c.mime.as_ref().map(|m| m.value.trim().to_string()),
            declared_size: c
                .file_size
                .as_ref()
                .and_then(|s| s.value.trim().parse().ok()),
            declared_md5: md5,
        });
    }
    if let Some(link) = item.links.first().map(Value::trimmed)
        && syntax::http_url(link).is_ok()
        && !out.iter().any(|f| f.url == link)
    {
        out.insert(
            0,
            NewFile {
                role: FileRole::Link,
                url: link.to_string(),
                declared_type: None,
                declared_size: None,
                declared_md5: None,
            },
        );
    }
    out
}

fn values(list: &[Value]) -> Vec<String> {
    list.iter().map(|v| v.trimmed().to_string()).collect()
}

fn typed(list: &[Typed]) -> Vec<meta::Typed> {
    list.iter()
        .map(|t| meta::Typed {
            value: t.value.trimmed().to_string(),
            kind: t.xsi_type.as_ref().map(|x| x.raw.trim().to_string()),
        })
        .collect()
}

/// The item's metadata, keyed by the profile's element names (the record mapping in
/// `mappings/` reads these keys).
fn metadata(item: &Item, guid: &str, pub_date: &str) -> meta::ItemMetadata {
    let attr = |a: &Option<crate::feed::AttrValue>| a.as_ref().map(|a| a.value.trim().to_string());
    let content = item
        .contents
        .iter()
        .map(|c| meta::ContentMetadata {
            url: attr(&c.url),
            mime: attr(&c.mime),
            file_size: attr(&c.file_size),
            medium: attr(&c.medium),
            in_group: c.in_group,
            hash: c
                .hashes
                .iter()
                .map(|h| meta::Hash {
                    algo: h
                        .algo
                        .as_ref()
                        .map_or("md5".to_string(), |a| a.value.trim().to_ascii_lowercase()),
                    value: h.value.trimmed().to_string(),
                })
                .collect(),
            license: c
                .licenses
                .iter()
                .map(|l| meta::License {
                    href: attr(&l.href),
                    value: l.value.trimmed().to_string(),
                })
                .collect(),
            credit: c
                .credits
                .iter()
                .map(|l| meta::Credit {
                    role: attr(&l.role),
                    value: l.value.trimmed().to_string(),
                })
                .collect(),
            copyright: c
                .copyrights
                .iter()
                .map(|l| l.value.trimmed().to_string())
                .collect(),
            keywords: values(&c.keywords),
            is_format_of: values(&c.markers),
        })
        .collect();
    meta::ItemMetadata {
        guid: guid.to_string(),
        link: values(&item.links),
        pub_date: pub_date.to_string(),
        publisher: values(&item.publishers),
        title: values(&item.titles),
        description: values(&item.descriptions),
        access_rights: values(&item.access_rights),
        license: values(&item.licenses),
        identifier: typed(&item.identifiers),
        is_part_of: typed(&item.is_part_of),
        is_format_of: typed(&item.is_format_of),
        creator: values(&item.creators),
        contributor: values(&item.contributors),
        format: values(&item.formats),
        references: typed(&item.references),
        keywords: values(&item.keywords),
        content,
    }
}

/// A finding of the validator as the catalog stores it.
pub fn stored(f: &Finding) -> StoredFinding {
    StoredFinding {
        rule: f.rule.as_str().to_string(),
        severity: f.severity,
        line: f.pos.map(|p| p.line),
        column: f.pos.map(|p| p.column),
        item: f.item,
        guid: f.guid.clone(),
        url: None,
        // The catalog keeps English, the language of its other texts (and of
        // `plikt status`, the dashboard and the JSON of /status).
        message: f.message.to_string(),
    }
}

/// A harvest-time finding (`H-*`).
pub fn harvest_finding(
    rule: RuleId,
    severity: Severity,
    guid: Option<&str>,
    url: Option<&str>,
    message: String,
) -> StoredFinding {
    StoredFinding {
        rule: rule.as_str().to_string(),
        severity,
        line: None,
        column: None,
        item: None,
        guid: guid.map(str::to_string),
        url: url.map(str::to_string),
        message,
    }
}

/// H-PUBLISHER: the organisation id (`SE` + 10 digits + optional `-suffix`) of an R104
/// value or of a configured organisation (bare or as the whole URI).
pub fn organisation_id(value: &str) -> Option<&str> {
    let v = value.trim();
    let v = v
        .strip_prefix("http://id.kb.se/organisations/")
        .unwrap_or(v);
    syntax::organisation_number(v.strip_prefix("SE")?).map(|_| v)
}
