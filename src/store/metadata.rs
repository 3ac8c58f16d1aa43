//! An item's metadata as the catalog keeps it with each version (JSON in
//! `versions.metadata`): what the feed said, keyed by the profile's element names, for
//! the record mapping (`mappings/`) to make the version's metadata record from. Written
//! by the harvest, read by the publisher; a stored value that does not decode is an
//! error, never an empty record.
//!
//! Fields are in the order of their names, so the JSON is the same bytes that earlier
//! plikt wrote from a sorted map: the item hash of `H-VERSION` compares them.

use serde::{Deserialize, Serialize};

/// The metadata of one item.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[allow(missing_docs)]
pub struct ItemMetadata {
    /// R107.
    #[serde(rename = "accessRights")]
    pub access_rights: Vec<String>,
    /// `media:content`, also in `media:group` (S201-content).
    pub content: Vec<ContentMetadata>,
    pub contributor: Vec<String>,
    pub creator: Vec<String>,
    pub description: Vec<String>,
    pub format: Vec<String>,
    /// R101.
    pub guid: String,
    pub identifier: Vec<Typed>,
    #[serde(rename = "isFormatOf")]
    pub is_format_of: Vec<Typed>,
    #[serde(rename = "isPartOf")]
    pub is_part_of: Vec<Typed>,
    pub keywords: Vec<String>,
    pub license: Vec<String>,
    pub link: Vec<String>,
    /// R103, as written.
    #[serde(rename = "pubDate")]
    pub pub_date: String,
    /// R104.
    pub publisher: Vec<String>,
    pub references: Vec<Typed>,
    pub title: Vec<String>,
}

/// A value with its `xsi:type` (R105, R112 …).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Typed {
    /// The type as written (`dcterms:URI`), if any.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// The value.
    pub value: String,
}

/// One `media:content`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[allow(missing_docs)]
pub struct ContentMetadata {
    pub copyright: Vec<String>,
    pub credit: Vec<Credit>,
    #[serde(rename = "fileSize")]
    pub file_size: Option<String>,
    pub hash: Vec<Hash>,
    #[serde(rename = "inGroup")]
    pub in_group: bool,
    #[serde(rename = "isFormatOf")]
    pub is_format_of: Vec<String>,
    pub keywords: Vec<String>,
    pub license: Vec<License>,
    pub medium: Option<String>,
    #[serde(rename = "type")]
    pub mime: Option<String>,
    pub url: Option<String>,
}

/// `media:hash`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[allow(missing_docs)]
pub struct Hash {
    pub algo: String,
    pub value: String,
}

/// `media:license`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[allow(missing_docs)]
pub struct License {
    pub href: Option<String>,
    pub value: String,
}

/// `media:credit`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[allow(missing_docs)]
pub struct Credit {
    pub role: Option<String>,
    pub value: String,
}

impl ItemMetadata {
    /// Decodes stored metadata.
    pub fn parse(json: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(json)
    }

    /// The JSON the catalog keeps.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("metadata always encodes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_json_is_what_a_sorted_map_gives() {
        let m = ItemMetadata {
            guid: "g".into(),
            title: vec!["T".into()],
            identifier: vec![Typed {
                kind: Some("dcterms:URI".into()),
                value: "https://x".into(),
            }],
            content: vec![ContentMetadata {
                url: Some("https://x/a.pdf".into()),
                hash: vec![Hash {
                    algo: "md5".into(),
                    value: "00".into(),
                }],
                license: vec![License {
                    href: None,
                    value: "CC".into(),
                }],
                credit: vec![Credit {
                    role: Some("author".into()),
                    value: "A".into(),
                }],
                ..ContentMetadata::default()
            }],
            ..ItemMetadata::default()
        };
        let json = m.to_json();
        // A serde_json map sorts its keys: the order earlier plikt wrote.
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(json, value.to_string());
        assert_eq!(ItemMetadata::parse(&json).unwrap(), m);
    }

    #[test]
    fn metadata_that_does_not_decode_is_an_error() {
        assert!(ItemMetadata::parse("{\"title\": 3}").is_err());
        assert!(ItemMetadata::parse("not json").is_err());
        // Fields an older row lacks are empty.
        assert_eq!(ItemMetadata::parse("{}").unwrap(), ItemMetadata::default());
    }
}
