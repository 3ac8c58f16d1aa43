//! Names (XML 1.0 fifth edition §2.3, Namespaces in XML 1.0 §3–§4) and white space.
//!
//! Scanning goes a byte at a time through [`NAME_BYTES`], which lets every byte of a
//! non-ASCII character through; a name that holds one is then checked character by
//! character against the exact `NameStartChar` and `NameChar` ranges ([`is_name`]), so
//! the usual ASCII name costs one table look-up per byte and nothing more.

use super::Malformed;

/// XML 1.0 §2.3 `S`: space, tab, line feed, carriage return.
#[inline]
pub(super) fn is_xml_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// A byte that may be part of an XML 1.0 `Name` (§2.3 `NameChar`): exact for ASCII; every
/// byte of a non-ASCII character passes, and [`is_name`] checks the characters.
#[inline]
pub(super) fn is_name_byte(b: u8) -> bool {
    NAME_BYTES[usize::from(b)]
}

/// [`is_name_byte`] as a table: names are scanned at every tag.
const NAME_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0u8;
    loop {
        table[b as usize] =
            b.is_ascii_alphanumeric() || matches!(b, b'_' | b':' | b'-' | b'.') || b >= 0x80;
        if b == u8::MAX {
            break table;
        }
        b += 1;
    }
};

/// A byte that can start a `Name`, as far as one byte tells: not a digit, `-` or `.` (a
/// non-ASCII first character is checked by [`is_name`]).
#[inline]
pub(super) fn is_name_start(b: u8) -> bool {
    is_name_byte(b) && !b.is_ascii_digit() && b != b'-' && b != b'.'
}

/// XML 1.0 fifth edition §2.3 `NameStartChar`.
pub(super) fn is_name_start_char(c: char) -> bool {
    matches!(c,
        ':' | 'A'..='Z' | '_' | 'a'..='z'
        | '\u{C0}'..='\u{D6}' | '\u{D8}'..='\u{F6}' | '\u{F8}'..='\u{2FF}'
        | '\u{370}'..='\u{37D}' | '\u{37F}'..='\u{1FFF}' | '\u{200C}'..='\u{200D}'
        | '\u{2070}'..='\u{218F}' | '\u{2C00}'..='\u{2FEF}' | '\u{3001}'..='\u{D7FF}'
        | '\u{F900}'..='\u{FDCF}' | '\u{FDF0}'..='\u{FFFD}' | '\u{10000}'..='\u{EFFFF}')
}

/// XML 1.0 fifth edition §2.3 `NameChar`.
pub(super) fn is_name_char(c: char) -> bool {
    is_name_start_char(c)
        || matches!(c, '-' | '.' | '0'..='9' | '\u{B7}' | '\u{300}'..='\u{36F}' | '\u{203F}'..='\u{2040}')
}

/// XML 1.0 §2.3 `Name`, exactly.
pub(super) fn is_name(s: &str) -> bool {
    if s.is_ascii() {
        return s.bytes().next().is_some_and(is_name_start) && s.bytes().all(is_name_byte);
    }
    let mut chars = s.chars();
    chars.next().is_some_and(is_name_start_char) && chars.all(is_name_char)
}

/// [`is_name`] for a run of name bytes ([`is_name_byte`]), as the scanner finds them:
/// for ASCII, only the first byte needs a look.
#[inline]
pub(super) fn is_scanned_name(s: &str) -> bool {
    if s.is_ascii() {
        s.bytes().next().is_some_and(is_name_start)
    } else {
        is_name(s)
    }
}

/// XML 1.0 §2.3 `Nmtoken`: one or more name characters.
pub(super) fn is_nmtoken(s: &str) -> bool {
    !s.is_empty() && s.chars().all(is_name_char)
}

/// Namespaces in XML 1.0 §3 `NCName`: a `Name` without a colon.
pub(super) fn is_ncname(s: &str) -> bool {
    !s.contains(':') && is_name(s)
}

/// How many bytes at the start of `bytes` satisfy `pred`.
#[inline]
pub(super) fn run(bytes: &[u8], pred: impl Fn(u8) -> bool) -> usize {
    bytes.iter().position(|&b| !pred(b)).unwrap_or(bytes.len())
}

/// The run of name bytes at the start of `s` (a `Name` if [`is_name`] says so).
pub(super) fn name_run(s: &str) -> &str {
    &s[..run(s.as_bytes(), is_name_byte)]
}

/// Splits `p:local` into prefix and local name; `None` if not a QName (Namespaces in XML
/// 1.0 §4): an empty part, several colons, or a local part that does not start as a name.
#[inline]
pub(super) fn split_qname(name: &str) -> Option<(Option<&str>, &str)> {
    // Names are short: one plain loop beats memchr's set-up.
    let mut colon = None;
    for (i, &b) in name.as_bytes().iter().enumerate() {
        if b == b':' {
            if colon.is_some() {
                return None;
            }
            colon = Some(i);
        }
    }
    match colon {
        None if !name.is_empty() => Some((None, name)),
        Some(i) if i > 0 && i + 1 < name.len() => {
            let local = &name[i + 1..];
            let first = local.as_bytes()[0];
            let starts = if first < 0x80 {
                is_name_start(first)
            } else {
                starts_as_name(local)
            };
            starts.then_some((Some(&name[..i]), local))
        }
        _ => None,
    }
}

/// Whether a non-ASCII `s` starts with a `NameStartChar`.
#[cold]
fn starts_as_name(s: &str) -> bool {
    s.chars().next().is_some_and(is_name_start_char)
}

/// `G-XML` for the name that starts at `from` in `w` and runs to white space or one of
/// `stops`.
pub(super) fn bad_name(w: &[u8], from: usize, stops: &[u8]) -> Malformed {
    let end = w[from..]
        .iter()
        .position(|&b| is_xml_space(b) || stops.contains(&b))
        .map_or(w.len(), |e| from + e);
    Malformed::BadName(String::from_utf8_lossy(&w[from..end]).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_fifth_editions_ranges() {
        for good in [
            "a",
            "_x",
            ":",
            "a-b.c",
            "é",
            "日本",
            "a\u{B7}",
            "x\u{300}",
            "\u{10000}",
        ] {
            assert!(is_name(good), "{good:?}");
        }
        // U+00D7 (×) and U+00F7 (÷) are no name characters; U+0300 and U+00B7 only go on.
        for bad in [
            "",
            "1a",
            "-a",
            ".a",
            "a×b",
            "÷",
            "\u{300}a",
            "\u{B7}",
            "a b",
            "\u{F0000}",
        ] {
            assert!(!is_name(bad), "{bad:?}");
        }
    }

    #[test]
    fn a_qnames_local_part_starts_as_a_name() {
        assert_eq!(split_qname("p:a"), Some((Some("p"), "a")));
        assert_eq!(split_qname("p:é"), Some((Some("p"), "é")));
        for bad in ["p:1a", "p:-a", ":a", "a:", "a:b:c", "p:\u{300}"] {
            assert_eq!(split_qname(bad), None, "{bad}");
        }
    }
}
