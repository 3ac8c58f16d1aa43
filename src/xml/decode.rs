//! Input decoding and position tracking: the only place that sees every byte of a feed.
//!
//! [`Decoder`] sits between the raw input and the reader's scanner. It
//! - detects the encoding (byte-order mark, then the XML declaration's `encoding`),
//!   and hands the scanner text that is valid UTF-8 (a `str`, so the scanner never
//!   checks it again): UTF-8 passes through, ISO-8859-1, windows-1252 and UTF-16 are
//!   transcoded (G-XML: "UTF-8 and ISO-8859-1 occur in Swedish feeds");
//! - rejects what XML 1.0 forbids at the character level (invalid UTF-8, control
//!   characters such as U+0001, U+FFFE/U+FFFF), with the position where it occurs;
//! - enforces the size limits (whole input, one piece of markup), so memory never
//!   depends on the size of the feed;
//! - turns byte offsets of the decoded stream into 1-based line:column (columns count
//!   characters) without holding the document: it keeps only the bytes between the
//!   last resolved offset and the read position, and offsets are resolved in order.

use std::io::{self, BufRead, Read};

use super::Pos;

/// How much raw input is read at a time.
const CHUNK: usize = 64 * 1024;
/// How many bytes at the start of a document decide its encoding (BOM, XML declaration).
pub const SNIFF: usize = 1024;

/// An encoding the decoder can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// UTF-8 (also US-ASCII, a subset)
    Utf8,
    /// ISO-8859-1 (Latin-1): every byte is the code point of the same value.
    Latin1,
    /// windows-1252: Latin-1 with printable characters in 0x80–0x9F.
    Windows1252,
    /// UTF-16, little endian.
    Utf16Le,
    /// UTF-16, big endian.
    Utf16Be,
}

impl Encoding {
    /// Maps an XML `encoding` label to a supported encoding (case-insensitive).
    pub(super) fn from_label(label: &str) -> Option<Self> {
        match label.trim().to_ascii_lowercase().as_str() {
            "utf-8" | "utf8" | "us-ascii" | "ascii" => Some(Self::Utf8),
            "iso-8859-1" | "iso8859-1" | "iso_8859-1" | "latin1" | "latin-1" | "l1"
            | "iso-ir-100" | "cp819" | "ibm819" => Some(Self::Latin1),
            "windows-1252" | "cp1252" | "x-cp1252" => Some(Self::Windows1252),
            "utf-16" | "utf-16le" => Some(Self::Utf16Le),
            "utf-16be" => Some(Self::Utf16Be),
            _ => None,
        }
    }
}

/// Limits on what the decoder accepts.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest number of input bytes read (the whole feed).
    pub max_bytes: u64,
    /// Largest single piece of markup or text between two events (bytes, decoded).
    pub max_event_bytes: usize,
}

/// Why the decoder stopped.
#[derive(Debug)]
pub enum DecodeErrorKind {
    /// Bytes that are not UTF-8 in a UTF-8 document.
    InvalidUtf8,
    /// A character XML 1.0 does not allow (§2.2 `Char`).
    ForbiddenChar(u32),
    /// A lone or reversed UTF-16 surrogate.
    InvalidUtf16,
    /// The declared encoding is not one plikt reads.
    UnsupportedEncoding(String),
    /// The input is larger than [`Limits::max_bytes`].
    TooLarge(u64),
    /// One piece of markup or text is larger than [`Limits::max_event_bytes`].
    EventTooLarge(usize),
    /// Reading the input failed.
    Io(io::Error),
}

/// A decoding failure with the offset (in the decoded stream) where it occurred.
#[derive(Debug)]
pub struct DecodeError {
    /// What went wrong.
    pub kind: DecodeErrorKind,
    /// Offset in the decoded (UTF-8) stream.
    pub offset: u64,
}

/// Streaming decoder + line index; see the module docs.
#[derive(Debug)]
pub struct Decoder<R> {
    inner: R,
    limits: Limits,
    encoding: Option<Encoding>,
    /// Raw bytes read but not yet decoded (an incomplete sequence, or the sniffed head).
    raw: Vec<u8>,
    /// What UTF-8 input is read into, [`CHUNK`] bytes long once allocated.
    chunk: Vec<u8>,
    /// Decoded text; `out[mark..]` is kept for position resolution.
    out: String,
    /// Next byte handed to the consumer (index into `out`).
    pos: usize,
    /// Index into `out` of the last resolved offset.
    mark: usize,
    /// Offset in the decoded stream of `out[0]`.
    base: u64,
    /// Position at `mark`.
    line: u32,
    column: u32,
    raw_total: u64,
    eof: bool,
    pending: Option<DecodeError>,
    /// Keep consumed bytes for [`Decoder::resolve`]; off for plain decoding.
    track: bool,
    /// The input started with a byte-order mark.
    bom: bool,
}

impl<R: Read> Decoder<R> {
    /// Wraps `inner`; the encoding is detected on first read.
    pub fn new(inner: R, limits: Limits) -> Self {
        Self {
            inner,
            limits,
            encoding: None,
            raw: Vec::new(),
            chunk: Vec::new(),
            out: String::new(),
            pos: 0,
            mark: 0,
            base: 0,
            line: 1,
            column: 1,
            raw_total: 0,
            eof: false,
            pending: None,
            track: true,
            bom: false,
        }
    }

    /// A decoder that only decodes: positions are not tracked, consumed bytes are dropped.
    pub fn untracked(inner: R, limits: Limits) -> Self {
        Self {
            track: false,
            ..Self::new(inner, limits)
        }
    }

    /// A decoder for UTF-8 input that starts in the middle of a document: no byte-order
    /// mark or XML declaration is looked for, and positions are counted from 1:1 at its
    /// first byte (see `profile::split`).
    pub fn continuing(inner: R, limits: Limits) -> Self {
        Self {
            encoding: Some(Encoding::Utf8),
            ..Self::new(inner, limits)
        }
    }

    /// Positions from decoded `offset` on continue from `pos`: the bytes that follow it
    /// are not the ones that followed it in the source, a stretch was read elsewhere.
    pub fn jump(&mut self, offset: u64, pos: Pos) {
        self.resolve(offset);
        self.line = pos.line;
        self.column = pos.column;
    }

    /// The encoding in use, once detected.
    pub fn encoding(&self) -> Option<Encoding> {
        self.encoding
    }

    /// Whether the input started with a byte-order mark.
    pub fn bom(&self) -> bool {
        self.bom
    }

    /// Line and column of `offset` (decoded stream). Offsets must be resolved in
    /// non-decreasing order; an offset before the last resolved one gives that one's
    /// position, one past the decoded data gives the end of the decoded data.
    pub fn resolve(&mut self, offset: u64) -> Pos {
        let target = offset.saturating_sub(self.base);
        let target = usize::try_from(target)
            .unwrap_or(usize::MAX)
            .clamp(self.mark, self.out.len());
        let span = &self.out.as_bytes()[self.mark..target];
        self.mark = target;
        if span.len() <= 32 {
            // The usual span, a line break and indentation before a start tag: a plain
            // loop beats the set-up of the SIMD searches below.
            for &b in span {
                if b == b'\n' {
                    self.line = self.line.saturating_add(1);
                    self.column = 1;
                } else {
                    self.column += u32::from(b & 0xC0 != 0x80);
                }
            }
            return Pos {
                line: self.line,
                column: self.column,
            };
        }
        // Lines: memchr (SIMD). Columns: only the bytes after the last newline matter,
        // and ASCII (the usual case) needs no per-byte count.
        let after_newline = match memchr::memrchr(b'\n', span) {
            Some(last) => {
                // Usually the only one: the line break before an indented start tag.
                let lines = match memchr::memchr(b'\n', &span[..last]) {
                    None => 1,
                    Some(first) => 1 + count_newlines(&span[first..last]),
                };
                self.line = self
                    .line
                    .saturating_add(u32::try_from(lines).unwrap_or(u32::MAX));
                self.column = 1;
                &span[last + 1..]
            }
            None => span,
        };
        // Characters are the bytes that are not UTF-8 continuation bytes; a CR counts
        // too, which only matters for a lone CR inside a line (CR LF ends the line).
        let chars = if after_newline.is_ascii() {
            after_newline.len()
        } else {
            after_newline.iter().filter(|&&b| b & 0xC0 != 0x80).count()
        };
        self.column = self
            .column
            .saturating_add(u32::try_from(chars).unwrap_or(u32::MAX));
        Pos {
            line: self.line,
            column: self.column,
        }
    }

    /// Offset in the decoded stream of the first byte of [`Decoder::window`].
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// The decoded text not yet consumed: complete characters only.
    #[inline]
    pub fn window(&self) -> &str {
        self.out.get(self.pos..).unwrap_or_default()
    }

    /// Where [`Decoder::window`] starts, as an index for [`Decoder::text`].
    pub fn index(&self) -> usize {
        self.pos
    }

    /// Text consumed since the last [`Decoder::more`]: `range` holds indexes from
    /// [`Decoder::index`].
    pub fn text(&self, range: std::ops::Range<usize>) -> &str {
        self.out.get(range).unwrap_or_default()
    }

    /// Hands out `text` instead of the window, until [`Decoder::restore`] gets back what
    /// this returns (the decoded text and the read index). Meanwhile nothing else may be
    /// asked of the decoder but [`Decoder::window`], [`Decoder::consume`],
    /// [`Decoder::index`], [`Decoder::text`] and [`Decoder::offset`] (which then means
    /// nothing): the reader's `Input` sees to it.
    pub fn divert(&mut self, text: &str) -> (String, usize) {
        let outer = std::mem::replace(&mut self.out, text.to_owned());
        (outer, std::mem::replace(&mut self.pos, 0))
    }

    /// Goes back to the text [`Decoder::divert`] put aside.
    pub fn restore(&mut self, (out, pos): (String, usize)) {
        self.out = out;
        self.pos = pos;
    }

    /// Consumes `n` bytes of the window (ending on a character boundary).
    #[inline]
    pub fn consume(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.out.len());
    }

    /// Decodes more input after the window, for a piece of markup or text the window
    /// holds only part of. Positions before decoded offset `keep` are resolved and their
    /// bytes dropped; one piece longer than [`Limits::max_event_bytes`] fails. False when
    /// the input has ended; an error once everything before it has been handed out.
    pub fn more(&mut self, keep: u64) -> Result<bool, DecodeError> {
        if self.track {
            self.resolve(keep);
        }
        let before = self.out.len() - self.pos;
        if self.pending.is_none() {
            self.fill();
        }
        if self.out.len() - self.pos > before {
            return Ok(true);
        }
        match self.pending.take() {
            Some(e) => Err(e),
            None => Ok(false),
        }
    }

    /// Reads raw bytes into `self.raw`; returns how many were read.
    fn read_raw(&mut self) -> io::Result<usize> {
        let start = self.raw.len();
        self.raw.resize(start + CHUNK, 0);
        let n = loop {
            match self.inner.read(&mut self.raw[start..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.raw.truncate(start);
                    return Err(e);
                }
            }
        };
        self.raw.truncate(start + n);
        if n == 0 {
            self.eof = true;
        }
        self.raw_total += n as u64;
        Ok(n)
    }

    /// Detects the encoding from the first bytes.
    fn sniff(&mut self) -> Result<Encoding, DecodeErrorKind> {
        while self.raw.len() < SNIFF && !self.eof {
            self.read_raw().map_err(DecodeErrorKind::Io)?;
        }
        let (encoding, bom) = detect(&self.raw)?;
        self.raw.drain(..bom);
        self.bom = bom > 0;
        Ok(encoding)
    }

    fn fail(&mut self, kind: DecodeErrorKind) {
        if self.pending.is_none() {
            let offset = self.base + self.out.len() as u64;
            self.pending = Some(DecodeError { kind, offset });
        }
    }

    /// Makes more decoded bytes available, or records why it cannot.
    fn fill(&mut self) {
        if !self.track {
            self.mark = self.pos;
        }
        // Keep only the bytes from the last resolved offset (or the read position, if
        // that comes first) on.
        let keep = self.mark.min(self.pos);
        if keep > 0 {
            self.out.drain(..keep);
            self.base += keep as u64;
            self.pos -= keep;
            self.mark -= keep;
        }
        if self.out.len() > self.limits.max_event_bytes {
            self.fail(DecodeErrorKind::EventTooLarge(self.limits.max_event_bytes));
            return;
        }
        let encoding = match self.encoding {
            Some(e) => e,
            None => match self.sniff() {
                Ok(e) => {
                    self.encoding = Some(e);
                    e
                }
                Err(kind) => return self.fail(kind),
            },
        };
        // Read until at least one byte is decoded, or the input ends.
        let before = self.out.len();
        while self.out.len() == before && self.pending.is_none() {
            if encoding == Encoding::Utf8 {
                if self.eof && self.raw.is_empty() {
                    return;
                }
                if let Err(e) = self.read_utf8() {
                    return self.fail(DecodeErrorKind::Io(e));
                }
                if self.eof && self.out.len() == before && !self.raw.is_empty() {
                    self.raw.clear();
                    return self.fail(DecodeErrorKind::InvalidUtf8);
                }
                if self.raw_total > self.limits.max_bytes {
                    return self.fail(DecodeErrorKind::TooLarge(self.limits.max_bytes));
                }
                continue;
            }
            if self.raw.is_empty() || !self.decode_some(encoding) {
                if self.eof {
                    if !self.raw.is_empty() {
                        let kind = match encoding {
                            Encoding::Utf16Le | Encoding::Utf16Be => DecodeErrorKind::InvalidUtf16,
                            _ => DecodeErrorKind::InvalidUtf8,
                        };
                        self.raw.clear();
                        self.fail(kind);
                    }
                    return;
                }
                if let Err(e) = self.read_raw() {
                    return self.fail(DecodeErrorKind::Io(e));
                }
                if self.raw_total > self.limits.max_bytes {
                    return self.fail(DecodeErrorKind::TooLarge(self.limits.max_bytes));
                }
            }
        }
    }

    /// Decodes what it can of `raw` into `out`. Returns false if nothing could be
    /// decoded because more input is needed.
    fn decode_some(&mut self, encoding: Encoding) -> bool {
        let before = self.out.len();
        match encoding {
            // Decoded as it is read, by `read_utf8`.
            Encoding::Utf8 => {}
            Encoding::Latin1 | Encoding::Windows1252 => {
                let mut used = 0;
                let mut bad = None;
                let raw = std::mem::take(&mut self.raw);
                for &b in &raw {
                    let c = if encoding == Encoding::Windows1252 && (0x80..0xA0).contains(&b) {
                        WINDOWS_1252[usize::from(b - 0x80)]
                    } else {
                        char::from(b)
                    };
                    if !is_xml_char(c) {
                        bad = Some(c);
                        break;
                    }
                    self.out.push(c);
                    used += 1;
                }
                self.raw = raw;
                self.raw.drain(..used);
                if let Some(c) = bad {
                    self.fail(DecodeErrorKind::ForbiddenChar(u32::from(c)));
                }
            }
            Encoding::Utf16Le | Encoding::Utf16Be => {
                let unit = |pair: &[u8]| {
                    if encoding == Encoding::Utf16Le {
                        u16::from_le_bytes([pair[0], pair[1]])
                    } else {
                        u16::from_be_bytes([pair[0], pair[1]])
                    }
                };
                let mut used = 0;
                let units: Vec<u16> = self.raw.chunks_exact(2).map(unit).collect();
                let mut i = 0;
                while i < units.len() {
                    let u = units[i];
                    let (c, n) = if (0xD800..0xDC00).contains(&u) {
                        if i + 1 >= units.len() {
                            break; // need the low surrogate
                        }
                        match char::decode_utf16([u, units[i + 1]]).next() {
                            Some(Ok(c)) => (c, 2),
                            _ => {
                                self.fail(DecodeErrorKind::InvalidUtf16);
                                break;
                            }
                        }
                    } else {
                        match char::from_u32(u32::from(u)) {
                            Some(c) => (c, 1),
                            None => {
                                self.fail(DecodeErrorKind::InvalidUtf16);
                                break;
                            }
                        }
                    };
                    if !is_xml_char(c) {
                        self.fail(DecodeErrorKind::ForbiddenChar(u32::from(c)));
                        break;
                    }
                    self.out.push(c);
                    i += n;
                    used += 2 * n;
                }
                self.raw.drain(..used);
            }
        }
        self.out.len() > before || self.pending.is_some()
    }

    /// UTF-8 input: reads a chunk after what waits in `raw` (the sniffed head, or an
    /// incomplete character) and appends what is valid to `out`: complete characters
    /// XML allows. An incomplete character at the end waits in `raw` for the next read.
    fn read_utf8(&mut self) -> io::Result<()> {
        // More than an incomplete character waiting (the sniffed head): decode it before
        // reading on, so no byte is read before it is needed.
        let mut n = 0;
        if !self.eof && self.raw.len() <= 3 {
            if self.chunk.len() < CHUNK {
                self.chunk.resize(CHUNK, 0);
            }
            n = loop {
                match self.inner.read(&mut self.chunk) {
                    Ok(0) => {
                        self.eof = true;
                        break 0;
                    }
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            };
        }
        self.raw_total += n as u64;
        // The usual case, nothing waiting: decode straight from the chunk.
        let from_chunk = self.raw.is_empty();
        if !from_chunk {
            self.raw.extend_from_slice(&self.chunk[..n]);
        }
        let read = if from_chunk {
            &self.chunk[..n]
        } else {
            &self.raw[..]
        };
        let (text, err) = match std::str::from_utf8(read) {
            Ok(text) => (text, false),
            Err(e) => (
                std::str::from_utf8(&read[..e.valid_up_to()]).unwrap_or_default(),
                e.error_len().is_some() || self.eof,
            ),
        };
        let bad = check_chars(text.as_bytes());
        // `check_chars` points at the first byte of a character.
        let upto = bad.map_or(text.len(), |(i, _)| i);
        self.out.push_str(text.get(..upto).unwrap_or_default());
        if from_chunk {
            self.raw.extend_from_slice(&self.chunk[upto..n]);
        } else {
            self.raw.drain(..upto);
        }
        if let Some((_, c)) = bad {
            self.fail(DecodeErrorKind::ForbiddenChar(c));
        } else if err {
            self.fail(DecodeErrorKind::InvalidUtf8);
        }
        Ok(())
    }
}

impl<R: Read> Read for Decoder<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: Read> BufRead for Decoder<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos == self.out.len() {
            // Everything from the last resolved offset is kept.
            let keep = self.base + self.mark as u64;
            self.more(keep)
                .map_err(|e| io::Error::other(format!("{:?}", e.kind)))?;
        }
        // Bytes: a reader of this trait may consume part of a character.
        Ok(&self.out.as_bytes()[self.pos..])
    }

    fn consume(&mut self, amt: usize) {
        self.pos = (self.pos + amt).min(self.out.len());
    }
}

/// How many line feeds `bytes` holds (a loop the compiler vectorises, in blocks of 32).
fn count_newlines(bytes: &[u8]) -> usize {
    let mut blocks = bytes.chunks_exact(32);
    let mut n = 0;
    for block in &mut blocks {
        n += usize::from(block.iter().fold(0u8, |acc, &b| acc + u8::from(b == b'\n')));
    }
    n + blocks.remainder().iter().filter(|&&b| b == b'\n').count()
}

/// XML 1.0 §2.2 `Char`.
pub fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// Finds the first character XML forbids in valid UTF-8 `bytes`: C0 controls other
/// than tab, LF, CR, and U+FFFE / U+FFFF (EF BF BE / EF BF BF). `bytes` ends on a
/// character boundary.
fn check_chars(bytes: &[u8]) -> Option<(usize, u32)> {
    const BLOCK: usize = 64;
    let suspicious = |b: u8| (b < 0x20 && b != b'\t' && b != b'\n' && b != b'\r') || b == 0xEF;
    for (n, block) in bytes.chunks(BLOCK).enumerate() {
        // A fold without early exit vectorises; most blocks have nothing suspicious.
        if !block.iter().fold(false, |acc, &b| acc | suspicious(b)) {
            continue;
        }
        for i in n * BLOCK..n * BLOCK + block.len() {
            let b = bytes[i];
            if b < 0x20 && b != b'\t' && b != b'\n' && b != b'\r' {
                return Some((i, u32::from(b)));
            }
            if b == 0xEF
                && bytes.get(i + 1) == Some(&0xBF)
                && let Some(&last @ (0xBE | 0xBF)) = bytes.get(i + 2)
            {
                return Some((i, if last == 0xBE { 0xFFFE } else { 0xFFFF }));
            }
        }
    }
    None
}

/// Whether a document starting with `head` (its first 1 KiB or all of it) is UTF-8
/// without a byte-order mark, so that its byte offsets are offsets of the decoded stream.
pub fn is_plain_utf8(head: &[u8]) -> bool {
    matches!(detect(head), Ok((Encoding::Utf8, 0)))
}

/// The encoding of a document that starts with `head`, and the length of its byte-order
/// mark. Only the first [`SNIFF`] bytes count, however many `head` has, so the verdict does
/// not depend on how the input arrived (all at once, in pipe-sized reads, or the head
/// [`is_plain_utf8`] is given).
fn detect(head: &[u8]) -> Result<(Encoding, usize), DecodeErrorKind> {
    let head = &head[..head.len().min(SNIFF)];
    for (bom, encoding) in [
        (&[0xEF, 0xBB, 0xBF][..], Encoding::Utf8),
        (&[0xFF, 0xFE], Encoding::Utf16Le),
        (&[0xFE, 0xFF], Encoding::Utf16Be),
    ] {
        if head.starts_with(bom) {
            return Ok((encoding, bom.len()));
        }
    }
    if head.starts_with(&[0x3C, 0x00, 0x3F, 0x00]) {
        return Ok((Encoding::Utf16Le, 0));
    }
    if head.starts_with(&[0x00, 0x3C, 0x00, 0x3F]) {
        return Ok((Encoding::Utf16Be, 0));
    }
    match declared_encoding(head) {
        None => Ok((Encoding::Utf8, 0)),
        Some(label) => match Encoding::from_label(&label) {
            // A UTF-16 label on a document without a BOM that reads as ASCII is a lie;
            // read it as what it is.
            Some(Encoding::Utf16Le | Encoding::Utf16Be) => Ok((Encoding::Utf8, 0)),
            Some(e) => Ok((e, 0)),
            None => Err(DecodeErrorKind::UnsupportedEncoding(label)),
        },
    }
}

/// The `encoding` pseudo-attribute of an XML declaration at the start of `head`.
fn declared_encoding(head: &[u8]) -> Option<String> {
    if !head.starts_with(b"<?xml") {
        return None;
    }
    let end = head.windows(2).position(|w| w == b"?>")?;
    let decl = std::str::from_utf8(&head[..end]).ok()?;
    let rest = &decl[decl.find("encoding")? + "encoding".len()..];
    let rest = rest.trim_start().strip_prefix('=')?.trim_start();
    let quote = rest.chars().next().filter(|q| *q == '"' || *q == '\'')?;
    let rest = &rest[1..];
    Some(rest[..rest.find(quote)?].to_string())
}

/// windows-1252 code points for bytes 0x80–0x9F (unassigned bytes map to the C1 control
/// of the same value, as in the WHATWG Encoding Standard).
const WINDOWS_1252: [char; 32] = [
    '\u{20AC}', '\u{81}', '\u{201A}', '\u{192}', '\u{201E}', '\u{2026}', '\u{2020}', '\u{2021}',
    '\u{2C6}', '\u{2030}', '\u{160}', '\u{2039}', '\u{152}', '\u{8D}', '\u{17D}', '\u{8F}',
    '\u{90}', '\u{2018}', '\u{2019}', '\u{201C}', '\u{201D}', '\u{2022}', '\u{2013}', '\u{2014}',
    '\u{2DC}', '\u{2122}', '\u{161}', '\u{203A}', '\u{153}', '\u{9D}', '\u{17E}', '\u{178}',
];

#[cfg(test)]
mod tests;
