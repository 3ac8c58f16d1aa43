//! The XML declaration (XML 1.0 §2.8 `XMLDecl`): `<?xml version="1.x" encoding="…"
//! standalone="yes|no"?>`, its pseudo-attributes in lower case and in this order, the
//! version `1.` and digits (§2.8: a 1.0 processor reads other 1.x versions as 1.0), the
//! encoding a name (§4.3.3 `EncName`), standalone `yes` or `no` (§2.9). The decoder has
//! read the encoding's name already, to decode; this checks the declaration's grammar.

use super::names::is_xml_space;
use super::{Encoding, Malformed};

/// What the XML declaration says.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct XmlDecl<'a> {
    /// `standalone="yes"`.
    pub standalone: bool,
    /// The `encoding`, if given.
    pub encoding: Option<&'a str>,
}

/// §4.3.3 `EncName`: `[A-Za-z] ([A-Za-z0-9._] | '-')*`.
pub(super) fn is_enc_name(value: &str) -> bool {
    value
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic())
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// XML §4.3.3: it is a fatal error for a document to be in an encoding other than the
/// one its declaration names. `actual` is the encoding the decoder reads, `bom` whether
/// a byte-order mark said so; `label` the declaration's encoding.
pub(super) fn encoding_mismatch(label: &str, actual: Encoding, bom: bool) -> Option<Malformed> {
    let utf16 = |e: Option<Encoding>| matches!(e, Some(Encoding::Utf16Le | Encoding::Utf16Be));
    let declared = Encoding::from_label(label);
    let (is, says) = match actual {
        Encoding::Utf16Le | Encoding::Utf16Be if !utf16(declared) => {
            ("UTF-16", "by its byte-order mark")
        }
        Encoding::Utf8 if utf16(declared) => {
            ("not UTF-16", "it has no byte-order mark and reads as ASCII")
        }
        Encoding::Utf8 if bom && declared != Some(Encoding::Utf8) => {
            ("UTF-8", "by its byte-order mark")
        }
        _ => return None,
    };
    Some(Malformed::Syntax(format!(
        "the XML declaration says encoding=\"{label}\" but the document is {is} ({says}); declare the encoding the document is saved in, or save it in the one declared"
    )))
}

/// What is wrong with a pseudo-attribute, and what to write.
fn wrong(what: String) -> Malformed {
    Malformed::Syntax(format!(
        "{what}; an XML declaration reads `<?xml version=\"1.0\" encoding=\"UTF-8\"?>` (pseudo-attributes in lower case, in the order version, encoding, standalone)"
    ))
}

/// Checks `body`, the declaration between `<?` and `?>` (starting with `xml`); returns
/// what it says, or the error and its index in `body`.
pub(super) fn xml_declaration(body: &str) -> Result<XmlDecl<'_>, (Malformed, usize)> {
    let mut i = "xml".len();
    let mut seen = 0;
    let mut decl = XmlDecl::default();
    let names = ["version", "encoding", "standalone"];
    loop {
        let spaced = body[i..].bytes().take_while(|&b| is_xml_space(b)).count();
        i += spaced;
        if i == body.len() {
            if seen == 0 {
                return Err((wrong("the XML declaration has no version".into()), 0));
            }
            return Ok(decl);
        }
        let at = i;
        let key_len = body[i..]
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':'))
            .count();
        let key = &body[i..i + key_len];
        let index = names.iter().position(|n| *n == key);
        match index {
            _ if spaced == 0 => {
                return Err((
                    wrong("white space is needed before each pseudo-attribute".into()),
                    at,
                ));
            }
            Some(0) if seen == 0 => seen = 1,
            Some(_) if seen == 0 => {
                return Err((
                    wrong(format!(
                        "`{key}` comes before `version`, which is required and comes first"
                    )),
                    at,
                ));
            }
            Some(n) if n >= seen => seen = n + 1,
            Some(_) => return Err((wrong(format!("`{key}` is out of order or repeated")), at)),
            None => {
                return Err((
                    wrong(format!(
                        "`{key}` is no pseudo-attribute of the XML declaration"
                    )),
                    at,
                ));
            }
        }
        i += key_len;
        i += body[i..].bytes().take_while(|&b| is_xml_space(b)).count();
        if !body[i..].starts_with('=') {
            return Err((wrong(format!("`{key}` must be followed by `=`")), at));
        }
        i += 1;
        i += body[i..].bytes().take_while(|&b| is_xml_space(b)).count();
        let q = body.as_bytes().get(i).copied();
        let Some(q @ (b'"' | b'\'')) = q else {
            return Err((wrong(format!("the value of `{key}` must be in quotes")), at));
        };
        let Some(len) = body[i + 1..].bytes().position(|b| b == q) else {
            return Err((wrong(format!("the value of `{key}` is never closed")), at));
        };
        let value = &body[i + 1..i + 1 + len];
        i += len + 2;
        let ok = match key {
            "version" => value
                .strip_prefix("1.")
                .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())),
            "encoding" => {
                decl.encoding = Some(value);
                is_enc_name(value)
            }
            _ => {
                decl.standalone = value == "yes";
                matches!(value, "yes" | "no")
            }
        };
        if !ok {
            let rule = match key {
                "version" => "`1.0`",
                "encoding" => "a name such as `UTF-8` or `ISO-8859-1`",
                _ => "`yes` or `no`",
            };
            return Err((
                wrong(format!("`{key}=\"{value}\"`: the value must be {rule}")),
                at,
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_xml_declarations_grammar_is_checked() {
        for good in [
            "xml version=\"1.0\"",
            "xml version='1.0' encoding='UTF-8' standalone='yes' ",
            "xml version=\"1.1\"",
            "xml version = \"1.0\"\n standalone=\"no\"",
        ] {
            assert!(xml_declaration(good).is_ok(), "{good}");
        }
        for bad in [
            "xml",
            "xml VERSION=\"1.0\"",
            "xml encoding=\"UTF-8\"",
            "xml version=\"1.0\" standalone=\"maybe\"",
            "xml version=\"1.0\" standalone=\"yes\" encoding=\"UTF-8\"",
            "xml version=\"2.0\"",
            "xml version=\"1.\"",
            "xml version=\"1.0\"encoding=\"UTF-8\"",
            "xml version=\"1.0\" encoding=\"8BIT\"",
            "xml version=\"1.0\" encoding=\"\"",
            "xml version=1.0",
            "xml version=\"1.0\" version=\"1.0\"",
            "xml version=\"1.0\" foo=\"bar\"",
        ] {
            assert!(xml_declaration(bad).is_err(), "{bad}");
        }
        assert!(
            xml_declaration("xml version=\"1.0\" standalone='yes'").is_ok_and(|d| d.standalone)
        );
    }
}
