//! The profile's controlled vocabularies, read from `mappings/` (data, not code).

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde::Deserialize;

/// One profile's mapping file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Mapping {
    profile: String,
    vocabulary: Vocabulary,
    /// The record mapping, read by `resourcesync` (not the validator's business).
    #[allow(dead_code)]
    record: Option<toml::Value>,
}

/// Fixed values and vocabularies of a profile (see `mappings/kb-rss-2.4.toml`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Vocabulary {
    /// R107.
    pub access_rights: Vec<String>,
    /// §0.3 typed identifiers.
    pub identifier_types: Vec<String>,
    /// Accepted identifier types that are probable typos → the spelling to suggest.
    pub identifier_type_typos: BTreeMap<String, String>,
    /// R104.
    pub publisher_prefix: String,
    /// §0.3 registered top-level media types.
    pub media_top_level_types: Vec<String>,
    /// F305: algorithm → hexadecimal digits.
    pub hash_algorithms: BTreeMap<String, usize>,
    /// F308-credit schemes.
    pub credit_schemes: Vec<String>,
    /// F308-credit EBU roles.
    pub ebu_roles: Vec<String>,
}

impl Vocabulary {
    /// True if `list` holds `value`.
    pub fn has(list: &[String], value: &str) -> bool {
        list.iter().any(|v| v == value)
    }
}

static KB24: LazyLock<Mapping> = LazyLock::new(|| {
    let m: Mapping = toml::from_str(include_str!("../../mappings/kb-rss-2.4.toml"))
        .unwrap_or_else(|e| panic!("mappings/kb-rss-2.4.toml is compiled in and must parse: {e}"));
    assert_eq!(
        m.profile,
        super::PROFILE,
        "mappings/kb-rss-2.4.toml names another profile"
    );
    m
});

/// KB profile 2.4's vocabulary.
pub fn kb24() -> &'static Vocabulary {
    &KB24.vocabulary
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_kb_2_4_mapping_parses_and_names_its_profile() {
        // Loading checks the profile name.
        let v = super::kb24();
        assert_eq!(v.access_rights, ["gratis", "restricted"]);
        assert_eq!(v.hash_algorithms.get("md5"), Some(&32));
        assert!(v.identifier_types.iter().any(|t| t == "issue-number"));
    }
}
