//! The decoder: encodings, forbidden characters, positions however the bytes arrive.

use super::*;

/// The limits of these tests: far above their inputs.
const LIMITS: Limits = Limits {
    max_bytes: 1 << 30,
    max_event_bytes: 1 << 20,
};

fn decode(input: &[u8]) -> (String, Option<DecodeErrorKind>) {
    read(Decoder::new(input, LIMITS))
}

/// Everything `d` decodes, the way the reader takes it, and the error it stops with.
fn read<R: Read>(mut d: Decoder<R>) -> (String, Option<DecodeErrorKind>) {
    let mut out = String::new();
    loop {
        out.push_str(d.window());
        d.consume(d.window().len());
        match d.more(d.offset()) {
            Ok(true) => {}
            Ok(false) => return (out, None),
            Err(e) => return (out, Some(e.kind)),
        }
    }
}

/// Gives at most `n` bytes per read, as a pipe might.
struct Trickle<'a>(&'a [u8], usize);

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.0.len().min(buf.len()).min(self.1);
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

#[test]
fn the_encoding_is_decided_by_the_first_kib_however_the_input_arrives() {
    // An XML declaration whose `?>` comes only after the first KiB (found by the split
    // fuzz target): its label is not read, whether the decoder gets the whole input
    // in one read or a few bytes at a time, and the document is read as UTF-8.
    let mut doc = b"<?xml version=\"1.0\" encoding=\"U\n<rss>".to_vec();
    doc.extend(std::iter::repeat_n(b' ', 2000));
    doc.extend_from_slice(b"<?pi x=\"1\"?></rss>");
    for step in [usize::MAX, 4096, 100, 1] {
        let mut d = Decoder::new(Trickle(&doc, step), LIMITS);
        d.more(0).expect("the first read");
        assert_eq!(d.encoding(), Some(Encoding::Utf8), "reads of {step}");
        let (out, err) = read(d);
        assert!(err.is_none(), "reads of {step}: {err:?}");
        assert_eq!(out.as_bytes(), doc, "reads of {step}");
    }
    assert!(is_plain_utf8(&doc));
}

#[test]
fn latin1_is_transcoded() {
    let (s, e) = decode(b"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a>\xe5\xe4\xf6</a>");
    assert!(e.is_none());
    assert!(s.ends_with("<a>åäö</a>"));
}

#[test]
fn utf16_with_bom_is_transcoded() {
    let text = "<a>å</a>";
    let mut bytes = vec![0xFF, 0xFE];
    for u in text.encode_utf16() {
        bytes.extend_from_slice(&u.to_le_bytes());
    }
    assert_eq!(decode(&bytes).0, text);
}

#[test]
fn control_character_is_refused_after_the_valid_prefix() {
    let (s, e) = decode(b"<a>ok\x01</a>");
    assert_eq!(s, "<a>ok");
    assert!(matches!(e, Some(DecodeErrorKind::ForbiddenChar(1))));
}

#[test]
fn invalid_utf8_is_refused() {
    let (_, e) = decode(b"<a>\xff\xfe</a>");
    assert!(matches!(e, Some(DecodeErrorKind::InvalidUtf8)));
}

#[test]
fn truncated_utf8_sequence_at_end_is_refused() {
    let (_, e) = decode(b"<a>\xc3");
    assert!(matches!(e, Some(DecodeErrorKind::InvalidUtf8)));
}

#[test]
fn positions_count_characters_and_lines() {
    let mut d = Decoder::new("ab\nåäö<x".as_bytes(), LIMITS);
    let mut out = Vec::new();
    d.read_to_end(&mut out).unwrap();
    assert_eq!(d.resolve(1), Pos { line: 1, column: 2 });
    let lt = out.iter().position(|&b| b == b'<').unwrap() as u64;
    assert_eq!(d.resolve(lt), Pos { line: 2, column: 4 });
}

/// Whatever the steps between the offsets resolved (short spans counted byte by byte,
/// long ones with SIMD searches), positions are those of a plain count.
#[test]
fn positions_agree_with_a_plain_count_for_every_span_length() {
    // Line feeds at irregular places, non-ASCII characters, CR LF.
    let text: String = (0..3000)
        .map(|i| match i % 37 {
            0 | 9 | 10 => '\n',
            5 => 'å',
            20 => '\r',
            _ if i % 101 == 0 => '€',
            _ => 'x',
        })
        .collect();
    let plain = |offset: usize| {
        let before = &text.as_bytes()[..offset];
        let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
        let start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let column = 1 + before[start..]
            .iter()
            .filter(|&&b| b & 0xC0 != 0x80)
            .count();
        Pos {
            line: u32::try_from(line).unwrap(),
            column: u32::try_from(column).unwrap(),
        }
    };
    for step in [1, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 255, 700] {
        let mut d = Decoder::new(text.as_bytes(), LIMITS);
        let mut out = Vec::new();
        d.read_to_end(&mut out).unwrap();
        let mut offset = 0;
        while offset <= text.len() {
            if text.is_char_boundary(offset) {
                assert_eq!(
                    d.resolve(offset as u64),
                    plain(offset),
                    "step {step}, offset {offset}"
                );
            }
            offset += step;
        }
    }
}

#[test]
fn unsupported_encoding_is_named() {
    let (_, e) = decode(b"<?xml version=\"1.0\" encoding=\"Shift_JIS\"?><a/>");
    assert!(matches!(e, Some(DecodeErrorKind::UnsupportedEncoding(l)) if l == "Shift_JIS"));
}
