//! The scanner of content (XML 1.0 §2.4–§2.7, §3.1, §4.1): character data, references,
//! comments, CDATA sections, processing instructions (the XML declaration at the very
//! start), end tags, and the dispatch to start tags (`tag.rs`) and the DOCTYPE (`dtd.rs`);
//! reading on from the decoder as a piece of markup needs.

use crate::msg;
use std::io::Read;

use super::decode::DecodeError;
use super::entity::{char_reference, predefined};
use super::names::{self, is_xml_space};
use super::{
    DecodeErrorKind, Encoding, Malformed, Markup, ReadError, Step, XmlReader, decl, dtd, prolog,
};

impl<R: Read> XmlReader<R> {
    /// Reads one piece of the input (text, a reference or markup) and turns it into
    /// state in `self`. The scanner follows XML 1.0 §2.4–§2.8, §3.1 and §4.1: what it
    /// reports as malformed is what those productions do not allow.
    #[inline(never)]
    pub(super) fn step(&mut self) -> Result<Step, ReadError> {
        let text_start = self.offset();
        if self.skip_space {
            self.skip_white_space(text_start)?;
        }
        let start = self.offset();
        let first = loop {
            if let Some(&b) = self.input.window().as_bytes().first() {
                break b;
            }
            if !self.more(text_start)? {
                if !self.input.in_document() {
                    return self.end_of_entity();
                }
                return self.end_of_input();
            }
        };
        match first {
            b'<' => self.markup(text_start, start),
            b'&' => self.reference(text_start, start),
            _ => self.text(text_start),
        }
    }

    /// Character data up to the next `<` or `&` (or the end of the input).
    fn text(&mut self, text_start: u64) -> Result<Step, ReadError> {
        let mut from = 0;
        let len = loop {
            let w = self.input.window().as_bytes();
            match memchr::memchr3(b'<', b'&', b']', &w[from..]) {
                Some(i) if w[from + i] != b']' => break from + i,
                Some(i) if w.len() >= from + i + 3 => {
                    // XML §2.4: `]]>` is not allowed in character data.
                    if &w[from + i..from + i + 3] == b"]]>" && !self.open.is_empty() {
                        let kind = Malformed::BadCharacterData(msg!("xml-what-cdata-end"));
                        return Err(self.err_at(kind, text_start));
                    }
                    from += i + 1;
                    continue;
                }
                // Too close to the end to tell: look again with more.
                Some(i) => from += i,
                None => from = w.len(),
            }
            if !self.more(text_start)? {
                break self.input.window().len();
            }
        };
        let text = self
            .input
            .window()
            .as_bytes()
            .get(..len)
            .unwrap_or_default();
        if self.open.is_empty() {
            if text.iter().all(|&b| is_xml_space(b)) {
                self.input.consume(len);
                return Ok(Step::Skip);
            }
            let kind = if self.root_seen {
                Malformed::AfterRoot(msg!("xml-what-text"))
            } else {
                Malformed::BeforeRoot
            };
            return Err(self.err_at(kind, text_start));
        }
        let at = self.input.index();
        self.input.consume(len);
        Ok(Step::Window(at, at + len))
    }

    /// `&name;` or `&#…;` (XML §4.1): a character, or an entity's replacement text.
    fn reference(&mut self, text_start: u64, start: u64) -> Result<Step, ReadError> {
        if self.open.is_empty() {
            return Err(self.err_at(Malformed::AfterRoot(msg!("xml-what-reference")), start));
        }
        let mut i = 1;
        let end = loop {
            let w = self.input.window().as_bytes();
            match w[i..]
                .iter()
                .position(|&b| !names::is_name_byte(b) && b != b'#')
            {
                Some(n) if w[i + n] == b';' => break i + n,
                Some(_) => {
                    return Err(self.err_at(Malformed::Syntax(msg!("xml-bare-amp")), start));
                }
                None => i = w.len(),
            }
            if !self.more(text_start)? {
                return Err(self.err_at(Malformed::Syntax(msg!("xml-truncated-reference")), start));
            }
        };
        let w = self.input.window();
        let name = w.get(1..end).unwrap_or_default();
        let c = if name.starts_with('#') {
            char_reference(name)
        } else if let Some(c) = predefined(name) {
            Ok(c)
        } else if dtd::reference_end(w, 0) == Some(end) {
            return self.entity_reference(end, start);
        } else {
            Err(Malformed::Syntax(msg!("xml-bad-reference", name = name)))
        };
        match c {
            Ok(c) => {
                self.input.consume(end + 1);
                self.text.clear();
                self.text.push(c);
                Ok(Step::Text)
            }
            Err(kind) => Err(self.err_at(kind, start)),
        }
    }

    /// Markup: a start or end tag, a comment, CDATA, a processing instruction or the
    /// XML declaration, a DOCTYPE.
    fn markup(&mut self, text_start: u64, start: u64) -> Result<Step, ReadError> {
        self.need(text_start, start, 2, Markup::StartTag)?;
        match self.input.window().as_bytes().get(1) {
            Some(b'/') => self.end_tag(text_start, start),
            Some(b'?') => self.instruction(text_start, start),
            Some(b'!') => self.declaration(text_start, start),
            _ => self.start_tag(text_start, start),
        }
    }

    /// `</name S?>` (XML §3.1 `ETag`), which must close the innermost open element.
    fn end_tag(&mut self, text_start: u64, start: u64) -> Result<Step, ReadError> {
        if let Some(e) = self.input.expansions().last()
            && self.open.len() <= e.depth
        {
            let kind = Malformed::Syntax(msg!("xml-end-outside-entity"));
            return Err(self.err_at(kind, start));
        }
        // The usual case: `</name>` for the open element, already in the window.
        if let Some((_, at)) = self.open.last() {
            let name = self.open_names.as_bytes().get(*at..).unwrap_or_default();
            let w = self.input.window().as_bytes();
            if w.get(2..2 + name.len()) == Some(name) && w.get(2 + name.len()) == Some(&b'>') {
                self.input.consume(name.len() + 3);
                self.close_element();
                return Ok(Step::End);
            }
        }
        let gt = self.find(text_start, start, 2, b">", Markup::EndTag)?;
        let w = self.input.window();
        let name = w
            .get(2..gt)
            .unwrap_or_default()
            .trim_end_matches([' ', '\t', '\n', '\r']);
        let kind = match self.open.last() {
            None => Malformed::AfterRoot(msg!("xml-what-stray-end", name = name)),
            Some((_, at)) if self.open_names.get(*at..) != Some(name) => Malformed::MismatchedEnd {
                expected: self.open_names.get(*at..).unwrap_or_default().to_string(),
                found: name.to_string(),
            },
            Some(_) => {
                self.input.consume(gt + 1);
                self.close_element();
                return Ok(Step::End);
            }
        };
        Err(self.err_at(kind, start))
    }

    /// `<?target …?>` (XML §2.6); the XML declaration (§2.8) only at the very start.
    fn instruction(&mut self, text_start: u64, start: u64) -> Result<Step, ReadError> {
        let end = self.find(text_start, start, 2, b"?>", Markup::Instruction)?;
        let w = self.input.window();
        let body = w.get(2..end).unwrap_or_default();
        let target = &body[..body.bytes().position(is_xml_space).unwrap_or(body.len())];
        if target == "xml" && start == 0 && !self.continued && self.input.in_document() {
            let mismatch = match prolog::xml_declaration(body) {
                Ok(decl) => {
                    self.standalone = decl.standalone;
                    let actual = self.input.dec.encoding().unwrap_or(Encoding::Utf8);
                    decl.encoding.and_then(|label| {
                        prolog::encoding_mismatch(label, actual, self.input.dec.bom())
                    })
                }
                Err((kind, at)) => return Err(self.err_at(kind, start + 2 + at as u64)),
            };
            if let Some(kind) = mismatch {
                return Err(self.err_at(kind, start));
            }
        } else if let Some(kind) = decl::bad_target(target) {
            return Err(self.err_at(kind, start));
        }
        self.input.consume(end + 2);
        Ok(Step::Skip)
    }

    /// `<!--…-->` (§2.5), `<![CDATA[…]]>` (§2.7) or `<!DOCTYPE …>` (§2.8).
    fn declaration(&mut self, text_start: u64, start: u64) -> Result<Step, ReadError> {
        // Enough to tell which, unless the input ends first.
        let whole = self.fill_to(text_start, 9)?;
        let w = self.input.window().as_bytes();
        if w.starts_with(b"<!--") {
            let end = self.find(text_start, start, 4, b"--", Markup::Comment)?;
            self.need(text_start, start, end + 3, Markup::Comment)?;
            if self.input.window().as_bytes()[end + 2] != b'>' {
                let kind = Malformed::Syntax(msg!("xml-comment-dashes"));
                return Err(self.err_at(kind, start));
            }
            self.input.consume(end + 3);
            return Ok(Step::Skip);
        }
        if w.starts_with(b"<![CDATA[") {
            if self.open.is_empty() {
                let kind = Malformed::AfterRoot(msg!("xml-what-cdata"));
                return Err(self.err_at(kind, start));
            }
            let end = self.find(text_start, start, 9, b"]]>", Markup::Cdata)?;
            let at = self.input.index();
            self.input.consume(end + 3);
            return Ok(Step::Window(at + 9, at + end));
        }
        if w.starts_with(b"<!DOCTYPE") {
            return self.doctype(text_start, start);
        }
        if !whole {
            return Err(self.truncated(Markup::Declaration, start));
        }
        let what = String::from_utf8_lossy(&w[..9]).into_owned();
        let kind = Malformed::Syntax(msg!("xml-bang", what = what));
        Err(self.err_at(kind, start))
    }

    /// The index of the first `pat` at or after `from` in the window, reading on as
    /// needed; the input ending first is an error inside `what`.
    pub(super) fn find(
        &mut self,
        text_start: u64,
        start: u64,
        mut from: usize,
        pat: &[u8],
        what: Markup,
    ) -> Result<usize, ReadError> {
        loop {
            let w = self.input.window().as_bytes();
            let found = match pat {
                [b] => memchr::memchr(*b, &w[from.min(w.len())..]),
                _ => memchr::memmem::find(&w[from.min(w.len())..], pat),
            };
            if let Some(i) = found {
                return Ok(from + i);
            }
            from = from.max(w.len().saturating_sub(pat.len() - 1));
            if !self.more(text_start)? {
                return Err(self.truncated(what, start));
            }
        }
    }

    /// Makes the window at least `n` bytes long, unless the input ends first.
    #[inline]
    pub(super) fn fill_to(&mut self, text_start: u64, n: usize) -> Result<bool, ReadError> {
        while self.input.window().len() < n {
            if !self.more(text_start)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Makes the window at least `n` bytes long; the input ending first is an error
    /// inside `what`, which starts at `start`.
    #[inline]
    pub(super) fn need(
        &mut self,
        text_start: u64,
        start: u64,
        n: usize,
        what: Markup,
    ) -> Result<(), ReadError> {
        if self.fill_to(text_start, n)? {
            Ok(())
        } else {
            Err(self.truncated(what, start))
        }
    }

    /// More input after the window, keeping what lies from `keep` on (see
    /// [`Decoder::more`]).
    pub(super) fn more(&mut self, keep: u64) -> Result<bool, ReadError> {
        match self.input.more(keep) {
            Ok(more) => Ok(more),
            Err(e) => Err(self.decode_error(e)),
        }
    }

    /// The input ended inside `what`, which starts at `start`.
    pub(super) fn truncated(&mut self, what: Markup, start: u64) -> ReadError {
        let name = what.name();
        let kind = match self.open.last() {
            Some((_, at)) => Malformed::Unclosed(self.open_names[*at..].to_string()),
            None => Malformed::Syntax(msg!("xml-truncated", what = name)),
        };
        self.err_at(kind, start)
    }

    /// Nothing more to read.
    pub(super) fn end_of_input(&mut self) -> Result<Step, ReadError> {
        let end = self.offset();
        if let Some((_, name)) = self.open.last() {
            let kind = Malformed::Unclosed(self.open_names[*name..].to_string());
            return Err(self.err_at(kind, end));
        }
        if !self.root_seen {
            return Err(self.err_at(Malformed::Empty, end));
        }
        self.done = true;
        Ok(Step::Eof)
    }

    /// Consumes the white space at the read position (XML §2.3 `S`).
    pub(super) fn skip_white_space(&mut self, text_start: u64) -> Result<(), ReadError> {
        loop {
            let w = self.input.window().as_bytes();
            let n = w.iter().position(|&b| !is_xml_space(b)).unwrap_or(w.len());
            let all = n == w.len();
            self.input.consume(n);
            if !all || !self.more(text_start)? {
                return Ok(());
            }
        }
    }

    pub(super) fn close_element(&mut self) {
        if let Some((len, name)) = self.open.pop() {
            self.bindings.truncate(len);
            self.open_names.truncate(name);
        }
    }

    /// The decoder's failure as a `G-XML` error, or an input error.
    pub(super) fn decode_error(&mut self, d: DecodeError) -> ReadError {
        let kind = match d.kind {
            DecodeErrorKind::InvalidUtf8 => Malformed::InvalidUtf8,
            DecodeErrorKind::InvalidUtf16 => Malformed::InvalidUtf16,
            DecodeErrorKind::ForbiddenChar(c) => Malformed::ForbiddenChar(c),
            // A label that is no encoding name makes the XML declaration malformed.
            DecodeErrorKind::UnsupportedEncoding(l) if !prolog::is_enc_name(&l) => {
                Malformed::Syntax(msg!("xml-encoding-name", label = l))
            }
            DecodeErrorKind::UnsupportedEncoding(l) => Malformed::UnsupportedEncoding(l),
            DecodeErrorKind::TooLarge(n) => Malformed::TooLarge(n),
            DecodeErrorKind::EventTooLarge(n) => Malformed::EventTooLarge(n),
            DecodeErrorKind::Io(io) => {
                self.done = true;
                return ReadError::Io(io);
            }
        };
        self.err_at(kind, d.offset)
    }
}
