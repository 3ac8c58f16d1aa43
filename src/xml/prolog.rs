//! The XML declaration (XML 1.0 §2.8 `XMLDecl`): `<?xml version="1.x" encoding="…"
//! standalone="yes|no"?>`, its pseudo-attributes in lower case and in this order, the
//! version `1.` and digits (§2.8: a 1.0 processor reads other 1.x versions as 1.0), the
//! encoding a name (§4.3.3 `EncName`), standalone `yes` or `no` (§2.9). The decoder has
//! read the encoding's name already, to decode; this checks the declaration's grammar.

use super::names::is_xml_space;
use super::{Encoding, Malformed};
use crate::i18n::Message;
use crate::msg;

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
    let id = match actual {
        Encoding::Utf16Le | Encoding::Utf16Be if !utf16(declared) => "xml-encoding-utf16-bom",
        Encoding::Utf8 if utf16(declared) => "xml-encoding-not-utf16",
        Encoding::Utf8 if bom && declared != Some(Encoding::Utf8) => "xml-encoding-utf8-bom",
        _ => return None,
    };
    Some(Malformed::Syntax(Message::new(id).arg("label", label)))
}

/// What is wrong with a pseudo-attribute, and what to write.
fn wrong(what: Message) -> Malformed {
    Malformed::Syntax(msg!("xml-decl", what = what))
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
                return Err((wrong(msg!("xml-decl-no-version")), 0));
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
                return Err((wrong(msg!("xml-decl-space")), at));
            }
            Some(0) if seen == 0 => seen = 1,
            Some(_) if seen == 0 => {
                return Err((wrong(msg!("xml-decl-before-version", key = key)), at));
            }
            Some(n) if n >= seen => seen = n + 1,
            Some(_) => return Err((wrong(msg!("xml-decl-order", key = key)), at)),
            None => {
                return Err((wrong(msg!("xml-decl-unknown", key = key)), at));
            }
        }
        i += key_len;
        i += body[i..].bytes().take_while(|&b| is_xml_space(b)).count();
        if !body[i..].starts_with('=') {
            return Err((wrong(msg!("xml-decl-eq", key = key)), at));
        }
        i += 1;
        i += body[i..].bytes().take_while(|&b| is_xml_space(b)).count();
        let q = body.as_bytes().get(i).copied();
        let Some(q @ (b'"' | b'\'')) = q else {
            return Err((wrong(msg!("xml-decl-quotes", key = key)), at));
        };
        let Some(len) = body[i + 1..].bytes().position(|b| b == q) else {
            return Err((wrong(msg!("xml-decl-unclosed", key = key)), at));
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
            let id = match key {
                "version" => "xml-decl-version",
                "encoding" => "xml-decl-encoding",
                _ => "xml-decl-standalone",
            };
            return Err((wrong(Message::new(id).arg("value", value)), at));
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
