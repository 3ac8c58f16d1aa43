//! Metadata records (§14.5): one XML record in DCMI Terms per deposited version, built
//! from the item's stored metadata by the declarative `[record]` mapping of
//! `mappings/kb-rss-2.4.toml` (feed element → record element).

use std::sync::LazyLock;

use serde::Deserialize;
use serde_json::Value;

use crate::xml::escape;

/// A record mapping.
#[derive(Debug, Deserialize)]
pub struct RecordMapping {
    /// Root element (no namespace).
    pub root: String,
    /// Namespace of the record's elements.
    pub namespace: String,
    /// Its prefix.
    pub prefix: String,
    /// Feed element → record element, in record order.
    pub fields: Vec<Field>,
    /// Identifies the mapping's text (16 hex digits of its SHA-256): records digested
    /// with another mapping are digested again.
    #[serde(skip)]
    pub id: String,
}

/// One mapping line.
#[derive(Debug, Deserialize)]
pub struct Field {
    /// Key of the item's stored metadata (the profile's element name).
    pub from: String,
    /// Record element.
    pub to: String,
}

#[derive(Debug, Deserialize)]
struct MappingFile {
    record: RecordMapping,
}

static KB24: LazyLock<RecordMapping> = LazyLock::new(|| {
    let text = include_str!("../../mappings/kb-rss-2.4.toml");
    let mut mapping = toml::from_str::<MappingFile>(text)
        .expect("mappings/kb-rss-2.4.toml has a valid [record] table (a test parses it)")
        .record;
    use sha2::Digest;
    mapping.id = hex::encode(&sha2::Sha256::digest(text.as_bytes())[..8]);
    mapping
});

/// The record mapping of profile 2.4.
pub fn kb24() -> &'static RecordMapping {
    &KB24
}

const XSI: &str = "http://www.w3.org/2001/XMLSchema-instance";

/// The stored metadata of a version does not decode.
#[derive(Debug, thiserror::Error)]
#[error(
    "the stored metadata of a version does not decode ({0}); `plikt audit` and the catalog's versions.metadata show which"
)]
pub struct RecordError(#[from] serde_json::Error);

/// The record of one version, from its stored metadata (JSON).
pub fn record(mapping: &RecordMapping, metadata: &str) -> Result<Vec<u8>, RecordError> {
    let item = serde_json::to_value(crate::store::ItemMetadata::parse(metadata)?)?;
    let (root, ns, prefix) = (&mapping.root, &mapping.namespace, &mapping.prefix);
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<{root} xmlns:{prefix}=\"{ns}\" xmlns:xsi=\"{XSI}\">\n"
    );
    for field in &mapping.fields {
        let values: Vec<&Value> = match item.get(&field.from) {
            Some(Value::Array(a)) => a.iter().collect(),
            Some(v) => vec![v],
            None => Vec::new(),
        };
        for v in values {
            let (text, kind) = match v {
                Value::String(s) => (s.as_str(), None),
                Value::Object(o) => (
                    o.get("value").and_then(Value::as_str).unwrap_or(""),
                    o.get("type").and_then(Value::as_str),
                ),
                _ => continue,
            };
            if text.trim().is_empty() {
                continue;
            }
            let to = &field.to;
            match kind {
                // The feed's own QName (`dcterms:isbn`) is kept: its prefix is the
                // publisher's; the local name is what matters.
                Some(k) => {
                    let local = k.rsplit(':').next().unwrap_or(k);
                    out.push_str(&format!(
                        "  <{prefix}:{to} xsi:type=\"{prefix}:{}\">{}</{prefix}:{to}>\n",
                        escape(local),
                        escape(text)
                    ));
                }
                None => out.push_str(&format!(
                    "  <{prefix}:{to}>{}</{prefix}:{to}>\n",
                    escape(text)
                )),
            }
        }
    }
    out.push_str(&format!("</{root}>\n"));
    Ok(out.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_built_by_the_mapping() {
        let meta = r#"{"guid":"g-1","title":["Midsommarnatt på Öland"],"identifier":[{"value":"9789198654011","type":"dcterms:isbn"}],"creator":["Ekström, Saga","A & B"],"pubDate":"Fri, 14 Mar 2025 10:00:00 +0100","description":[""]}"#;
        let r = String::from_utf8(record(kb24(), meta).unwrap()).unwrap();
        assert!(
            r.contains("<dcterms:identifier>g-1</dcterms:identifier>"),
            "{r}"
        );
        assert!(
            r.contains("<dcterms:title>Midsommarnatt på Öland</dcterms:title>"),
            "{r}"
        );
        assert!(
            r.contains(
                "<dcterms:identifier xsi:type=\"dcterms:isbn\">9789198654011</dcterms:identifier>"
            ),
            "{r}"
        );
        assert!(
            r.contains("<dcterms:creator>A &amp; B</dcterms:creator>"),
            "{r}"
        );
        assert!(
            r.contains("<dcterms:issued>Fri, 14 Mar 2025 10:00:00 +0100</dcterms:issued>"),
            "{r}"
        );
        assert!(!r.contains("description"), "empty values are left out: {r}");
        // Fields come in the mapping's order: identifier before title.
        assert!(r.find("identifier").unwrap() < r.find("title").unwrap());
        let mut x = crate::xml::XmlReader::new(r.as_bytes(), crate::xml::ReaderLimits::default());
        loop {
            match x.read_event() {
                Ok(crate::xml::XmlEvent::Eof) => break,
                Ok(_) => {}
                Err(e) => panic!("{e:?}\n{r}"),
            }
        }
    }
}
