//! Start tags (XML 1.0 §3.1 `STag`, `EmptyElemTag`): one resumable pass checks a tag's
//! syntax and finds its attributes; then names are checked exactly, attribute values
//! normalised (entities included), defaults from the DOCTYPE's attribute-list
//! declarations added, and names resolved against the namespaces in scope (Namespaces in
//! XML 1.0 §5–§6).
//!
//! Kept in an import circle with `dtd` and `entity`, as the grammar is: attribute values
//! take their defaults and entities from the DOCTYPE.

use crate::msg;
use std::io::Read;

use super::dtd::AttDef;
use super::entity::attribute_value;
use super::names::{bad_name, is_name_byte, is_scanned_name, is_xml_space, run, split_qname};
use super::{
    Attribute, KNOWN_NAMESPACES, Malformed, Markup, NsDecl, NsId, Pos, QNameValue, ReadError, Step,
    XMLNS_URI, XmlReader,
};

impl<R: Read> XmlReader<R> {
    /// `<name attributes… >` or `…/>` (XML §3.1 `STag`, `EmptyElemTag`).
    pub(super) fn start_tag(&mut self, text_start: u64, start: u64) -> Result<Step, ReadError> {
        let (gt, name_len, empty) = self.scan_start_tag(text_start, start)?;
        if self.root_seen && self.open.is_empty() {
            let name = self.input.window().get(1..1 + name_len).unwrap_or_default();
            let kind = Malformed::AfterRoot(msg!("xml-what-second-root", name = name));
            return Err(self.err_at(kind, start));
        }
        let content = self
            .input
            .window()
            .get(1..gt - usize::from(empty))
            .unwrap_or_default();
        let mut tag = std::mem::take(&mut self.tag);
        tag.clear();
        tag.push_str(content);
        self.input.consume(gt + 1);
        let step = self.start(&tag, name_len, start);
        if step.is_ok() && empty {
            self.pending_end = true;
        }
        self.tag = tag;
        step
    }

    /// Checks the syntax of the start tag at the window's start, reading on as needed,
    /// and returns the index of its `>`, the length of its name, and whether it ends
    /// with `/>`. The attributes' names and values go to `self.spans`, as indexes into
    /// the tag without its `<`.
    // Over 100 lines: one resumable state machine over a tag's grammar (XML 1.0 §3.1).
    fn scan_start_tag(
        &mut self,
        text_start: u64,
        start: u64,
    ) -> Result<(usize, usize, bool), ReadError> {
        self.spans.clear();
        let mut at = At::Name;
        let mut i = 1;
        let mut name_len = 0;
        // A name that is not one: where it starts, and what ends it.
        let mut bad: Option<(usize, &[u8])> = None;
        loop {
            let w = self.input.window().as_bytes();
            // Each state takes its run of bytes at once, then looks at the byte after it.
            while i < w.len() {
                let fault = match at {
                    At::Name | At::Key(_) => {
                        i += run(&w[i..], is_name_byte);
                        let Some(&b) = w.get(i) else { break };
                        match at {
                            At::Name if i > 1 && (is_xml_space(b) || b == b'>' || b == b'/') => {
                                name_len = i - 1;
                                at = At::Space(false);
                                continue;
                            }
                            At::Name if i == 1 => Some((no_tag(), 0)),
                            At::Name => {
                                bad = Some((1, b">"));
                                Some((Malformed::BadName(String::new()), 0))
                            }
                            At::Key(k) if is_xml_space(b) => {
                                at = At::Eq(k, i);
                                None
                            }
                            At::Key(k) if b == b'=' => {
                                at = At::Quote(k, i);
                                None
                            }
                            At::Key(k) if b == b'>' || b == b'/' => Some((no_value(&w[k..i]), k)),
                            At::Key(k) => {
                                bad = Some((k, b"=>"));
                                Some((Malformed::BadName(String::new()), k))
                            }
                            _ => None,
                        }
                    }
                    At::Space(seen) => {
                        let n = run(&w[i..], is_xml_space);
                        i += n;
                        let seen = seen || n > 0;
                        at = At::Space(seen);
                        let Some(&b) = w.get(i) else { break };
                        match b {
                            b'>' => return Ok((i, name_len, false)),
                            b'/' => {
                                at = At::Slash;
                                None
                            }
                            b if seen && is_name_byte(b) => {
                                at = At::Key(i);
                                continue;
                            }
                            b => Some((between_attributes(seen, b), i)),
                        }
                    }
                    At::Eq(k, e) | At::Quote(k, e) => {
                        i += run(&w[i..], is_xml_space);
                        match (at, w.get(i)) {
                            (_, None) => break,
                            (At::Eq(..), Some(b'=')) => {
                                at = At::Quote(k, e);
                                None
                            }
                            (At::Eq(..), Some(_)) => Some((no_value(&w[k..e]), k)),
                            (_, Some(&q @ (b'"' | b'\''))) => {
                                at = At::Value(q, k, e, i + 1);
                                None
                            }
                            (_, Some(_)) => Some((unquoted(&w[k..e]), k)),
                        }
                    }
                    At::Value(q, k, e, v) => match memchr::memchr(q, &w[i..]) {
                        Some(n) => {
                            i += n;
                            self.spans.push((k - 1, e - 1, v - 1, i - 1));
                            at = At::Space(false);
                            None
                        }
                        None => {
                            i = w.len();
                            break;
                        }
                    },
                    At::Slash if w[i] == b'>' => return Ok((i, name_len, true)),
                    At::Slash => Some((slash(), i - 1)),
                };
                if let Some((mut kind, index)) = fault {
                    if let Some((from, stops)) = bad {
                        kind = self.bad_name_at(text_start, from, stops)?;
                    }
                    return Err(self.err_at(kind, start + index as u64));
                }
                i += 1;
            }
            if !self.more(text_start)? {
                if let At::Value(q, ..) = at {
                    return Err(self.err_at(unclosed_value(q), start));
                }
                return Err(self.truncated(Markup::StartTag, start));
            }
        }
    }

    /// `G-XML` for the name that starts at `from` in the window and runs to white space
    /// or one of `stops`, read on to there (or to the end of the input), so that the
    /// message does not depend on how the bytes arrived.
    #[cold]
    fn bad_name_at(
        &mut self,
        text_start: u64,
        from: usize,
        stops: &[u8],
    ) -> Result<Malformed, ReadError> {
        loop {
            let w = self.input.window().as_bytes();
            let ends = |b: &u8| is_xml_space(*b) || stops.contains(b);
            if w.get(from..).is_some_and(|t| t.iter().any(ends)) || !self.more(text_start)? {
                return Ok(bad_name(self.input.window().as_bytes(), from, stops));
            }
        }
    }

    /// A reusable attribute slot (allocations are kept across elements).
    fn attr_slot(&mut self) -> &mut Attribute {
        if self.attrs_len == self.attrs.len() {
            self.attrs.push(Attribute {
                ns: NsId::NONE,
                local: String::new(),
                value: String::new(),
                pos: Pos::default(),
                qname: None,
            });
        }
        self.attrs_len += 1;
        &mut self.attrs[self.attrs_len - 1]
    }

    /// Pass 1 of [`XmlReader::start`]: namespace declarations, and the other attributes
    /// (qualified names for now) into reused slots, with positions. `tag` is the tag
    /// without `<` and `>`, `self.spans` its attributes' names and values; `start` is
    /// the tag's offset, `pos` its position.
    fn read_attributes(&mut self, tag: &str, start: u64, pos: Pos) -> Result<(), ReadError> {
        // Most elements have no attributes.
        if self.spans.is_empty() {
            return Ok(());
        }
        // In a one-line ASCII tag (the usual case) an attribute's column is the tag's
        // plus its byte offset: no need to resolve each one.
        let one_line_ascii = self.input.in_document()
            && tag.is_ascii()
            && memchr::memchr(b'\n', tag.as_bytes()).is_none();
        let spans = std::mem::take(&mut self.spans);
        let read = self.read_spans(tag, &spans, one_line_ascii, start, pos);
        self.spans = spans;
        read
    }

    fn read_spans(
        &mut self,
        tag: &str,
        spans: &[(usize, usize, usize, usize)],
        one_line_ascii: bool,
        start: u64,
        pos: Pos,
    ) -> Result<(), ReadError> {
        for &(k, e, v, end) in spans {
            let key = tag.get(k..e).unwrap_or_default();
            let raw = tag.get(v..end).unwrap_or_default();
            let at = start + 1 + k as u64;
            if !is_scanned_name(key) {
                return Err(self.err_at(Malformed::BadName(key.to_string()), at));
            }
            let apos = match u32::try_from(k) {
                Ok(k) if one_line_ascii => Pos {
                    line: pos.line,
                    column: pos.column.saturating_add(1 + k),
                },
                _ => self.input.resolve(at),
            };
            let direct = self.input.direct();
            if key == "xmlns" || key.starts_with("xmlns:") {
                let mut value = String::new();
                let dtd = self.dtd.as_deref();
                if let Err(kind) = attribute_value(raw, &mut value, dtd, &mut self.budget, direct) {
                    return Err(self.err_at(kind, at));
                }
                if let Some(dtd) = dtd {
                    let element = &tag[..run(tag.as_bytes(), is_name_byte)];
                    let declared = dtd.attlists.get(element);
                    if declared.is_some_and(|d| d.iter().any(|d| d.name == key && !d.cdata)) {
                        value = tokenized(&value);
                    }
                }
                self.declare(key, value, apos, start)?;
            } else {
                let slot = self.attr_slot();
                slot.local.clear();
                slot.local.push_str(key);
                slot.value.clear();
                slot.pos = apos;
                slot.qname = None;
                let slot = &mut self.attrs[self.attrs_len - 1];
                let dtd = self.dtd.as_deref();
                let value = &mut slot.value;
                if let Err(kind) = attribute_value(raw, value, dtd, &mut self.budget, direct) {
                    return Err(self.err_at(kind, at));
                }
            }
        }
        Ok(())
    }

    /// A start tag whose syntax [`XmlReader::scan_start_tag`] has checked: `tag` is its
    /// text between `<` and `>` (or `/>`), its name `name_len` bytes long.
    fn start(&mut self, tag: &str, name_len: usize, start: u64) -> Result<Step, ReadError> {
        let qname = &tag[..name_len];
        if !is_scanned_name(qname) {
            return Err(self.err_at(Malformed::BadName(qname.to_string()), start));
        }
        if self.open.len() >= self.limits.max_depth {
            return Err(self.err_at(Malformed::TooDeep(self.limits.max_depth), start));
        }
        self.root_seen = true;
        let pos = self.input.resolve(start);
        self.decls.clear();
        self.attrs_len = 0;
        let scope = self.bindings.len();
        self.read_attributes(tag, start, pos)?;
        if let Some(dtd) = self.dtd.clone()
            && let Some(defs) = dtd.attlists.get(qname)
        {
            self.apply_attlist(defs, pos, start)?;
        }

        // Pass 2: resolve the element name and the attributes.
        let Some((prefix, local)) = split_qname(qname) else {
            return Err(self.err_at(Malformed::BadName(qname.to_string()), start));
        };
        let ns = match prefix {
            None => self.lookup("").unwrap_or(NsId::NONE),
            Some(p) => match self.lookup(p) {
                Some(id) => id,
                None => return Err(self.err_at(Malformed::UnboundPrefix(p.to_string()), start)),
            },
        };
        self.local.clear();
        self.local.push_str(local);
        for i in 0..self.attrs_len {
            let key = &self.attrs[i].local;
            // (prefix length and its binding, local name length), without allocating.
            let split =
                split_qname(key).map(|(p, l)| (p.map(|p| (p.len(), self.lookup(p))), l.len()));
            let (ans, alocal_len) = match split {
                None => {
                    let kind = Malformed::BadName(key.clone());
                    return Err(self.err_at(kind, start));
                }
                Some((None, l)) => (NsId::NONE, l),
                Some((Some((_, Some(id))), l)) => (id, l),
                Some((Some((plen, None)), _)) => {
                    let kind = Malformed::UnboundPrefix(key[..plen].to_string());
                    return Err(self.err_at(kind, start));
                }
            };
            let (done, rest) = self.attrs.split_at_mut(i);
            let attr = &mut rest[0];
            let local_start = attr.local.len() - alocal_len;
            if done
                .iter()
                .any(|a| a.ns == ans && a.local == attr.local[local_start..])
            {
                let kind = Malformed::DuplicateAttribute(attr.local.clone());
                return Err(self.err_at(kind, start));
            }
            attr.local.drain(..local_start);
            attr.ns = ans;
            let attr = &self.attrs[i];
            if attr.ns == NsId::XSI && attr.local == "type" {
                let resolved = self.resolve_qname_value(&attr.value);
                self.attrs[i].qname = Some(resolved);
            }
        }
        self.open.push((scope, self.open_names.len()));
        self.open_names.push_str(qname);
        self.ns = ns;
        self.pos = pos;
        Ok(Step::Start)
    }

    /// What the DOCTYPE declares for this element's attributes (XML §3.3): a declared
    /// default fills in an attribute the tag does not have (a namespace declaration
    /// too), and a value of a type other than CDATA is tokenised (§3.3.3).
    fn apply_attlist(&mut self, defs: &[AttDef], pos: Pos, start: u64) -> Result<(), ReadError> {
        for def in defs {
            if def.name == "xmlns" || def.name.starts_with("xmlns:") {
                let prefix = def.name.strip_prefix("xmlns:");
                if !self.decls.iter().any(|d| d.prefix.as_deref() == prefix)
                    && let Some(value) = &def.default
                {
                    self.declare(&def.name, value.clone(), pos, start)?;
                }
                continue;
            }
            let given = self.attrs[..self.attrs_len]
                .iter_mut()
                .find(|a| a.local == def.name);
            match (given, &def.default) {
                (Some(a), _) if !def.cdata => a.value = tokenized(&a.value),
                (Some(_), _) | (None, None) => {}
                (None, Some(value)) => {
                    let slot = self.attr_slot();
                    slot.local.clone_from(&def.name);
                    slot.value.clone_from(value);
                    slot.pos = pos;
                    slot.qname = None;
                }
            }
        }
        Ok(())
    }

    /// Checks and records one namespace declaration (`key` is `xmlns` or `xmlns:p`).
    fn declare(&mut self, key: &str, value: String, pos: Pos, start: u64) -> Result<(), ReadError> {
        let prefix = key.strip_prefix("xmlns:").map(str::to_string);
        let reserved = || Malformed::ReservedPrefix(format!("{key}=\"{value}\""));
        if let Some(p) = &prefix {
            if p.is_empty() || p.contains(':') {
                return Err(self.err_at(Malformed::BadName(key.to_string()), start));
            }
            if value.is_empty() {
                return Err(self.err_at(Malformed::EmptyPrefixBinding(p.clone()), start));
            }
            if p == "xmlns" || (p == "xml") != (value == KNOWN_NAMESPACES[1]) {
                let kind = reserved();
                return Err(self.err_at(kind, start));
            }
        }
        if self.decls.iter().any(|d| d.prefix == prefix) {
            return Err(self.err_at(Malformed::DuplicateAttribute(key.to_string()), start));
        }
        if value == XMLNS_URI || (prefix.is_none() && value == KNOWN_NAMESPACES[1]) {
            let kind = reserved();
            return Err(self.err_at(kind, start));
        }
        let id = if value.is_empty() {
            NsId::NONE
        } else {
            match self.intern(&value) {
                Ok(id) => id,
                Err(kind) => return Err(self.err_at(kind, start)),
            }
        };
        self.bindings.push((prefix.clone().unwrap_or_default(), id));
        self.decls.push(NsDecl {
            prefix,
            uri: value,
            pos,
        });
        Ok(())
    }

    /// Resolves a QName-valued attribute against the in-scope namespaces.
    fn resolve_qname_value(&self, value: &str) -> QNameValue {
        let value = value.trim_matches(|c: char| matches!(c, ' ' | '\t' | '\n' | '\r'));
        if value.is_empty() || value.contains(char::is_whitespace) {
            return QNameValue::Invalid;
        }
        match split_qname(value) {
            None => QNameValue::Invalid,
            Some((None, local)) => {
                QNameValue::Resolved(self.lookup("").unwrap_or(NsId::NONE), local.to_string())
            }
            Some((Some(p), local)) => match self.lookup(p) {
                Some(id) => QNameValue::Resolved(id, local.to_string()),
                None => QNameValue::Unbound(p.to_string()),
            },
        }
    }
}

/// Where the scan of a start tag is ([`XmlReader::scan_start_tag`]).
#[derive(Clone, Copy)]
enum At {
    Name,
    /// Between attributes; after white space or not.
    Space(bool),
    /// In a name that starts here.
    Key(usize),
    /// After a name, before `=`.
    Eq(usize, usize),
    /// After `=`, before the value.
    Quote(usize, usize),
    /// In a value: the quote, the name, where the value starts.
    Value(u8, usize, usize, usize),
    /// After `/`.
    Slash,
}

/// `G-XML` for a `<` followed by no name.
fn no_tag() -> Malformed {
    Malformed::Syntax(msg!("xml-bare-lt"))
}

/// `G-XML` for byte `b` after an attribute (after white space or not).
fn between_attributes(seen: bool, b: u8) -> Malformed {
    if !seen {
        return Malformed::Syntax(msg!("xml-attribute-space"));
    }
    Malformed::Syntax(msg!(
        "xml-attribute-unexpected",
        what = char::from(b).escape_default().to_string()
    ))
}

/// `G-XML` for an attribute value without quotes.
fn unquoted(key: &[u8]) -> Malformed {
    let key = String::from_utf8_lossy(key);
    Malformed::Syntax(msg!("xml-attribute-quotes", key = key))
}

/// `G-XML` for a `/` not followed by `>`.
fn slash() -> Malformed {
    Malformed::Syntax(msg!("xml-slash"))
}

/// `G-XML` for a value opened with `q` and never closed.
fn unclosed_value(q: u8) -> Malformed {
    Malformed::Syntax(msg!("xml-attribute-unclosed", quote = char::from(q)))
}

/// A normalised value of a type other than CDATA (§3.3.3): no leading or trailing
/// spaces, one between tokens.
pub(super) fn tokenized(value: &str) -> String {
    value
        .split(' ')
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `G-XML` for an attribute written without `="…"`.
fn no_value(key: &[u8]) -> Malformed {
    let key = String::from_utf8_lossy(key);
    Malformed::Syntax(msg!("xml-attribute-no-value", key = key))
}
