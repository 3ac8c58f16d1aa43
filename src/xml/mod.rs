//! The only module that uses quick-xml.
//!
//! [`XmlReader`] is a streaming pull parser over [`Decoder`] that adds what quick-xml
//! leaves out and the catalogue's `G-XML` requires: namespace well-formedness
//! (unbound prefixes, `xmlns:p=""`, duplicate expanded attribute names), one root
//! element and nothing but markup after it, no undefined entities, no DTD entity
//! declarations (never expanded, never fetched), a nesting limit, and size limits.
//! Names come out as `(namespace, local name)` pairs, never prefixes: publishers bind
//! DCMI Terms to `dcterms`, `dc` or `dct`. Every element and attribute carries its
//! 1-based line:column, resolved while its bytes are still in the decoder's window.

mod decode;

use std::collections::HashMap;
use std::fmt;
use std::io::{self, BufRead, Read};

use quick_xml::events::{BytesStart, Event};

pub use decode::{DecodeErrorKind, Encoding, Limits, SNIFF, is_plain_utf8};
use decode::{Decoder, is_xml_char};

/// A 1-based line and column (columns count Unicode scalar values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize)]
pub struct Pos {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// An interned namespace name. The ones the profile cares about have fixed values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NsId(u32);

impl NsId {
    /// No namespace (RSS 2.0 elements).
    pub const NONE: Self = Self(0);
    /// `http://www.w3.org/XML/1998/namespace`, bound to `xml`.
    pub const XML: Self = Self(1);
    /// MediaRSS, `http://search.yahoo.com/mrss/` (catalogue §0.2).
    pub const MRSS: Self = Self(2);
    /// DCMI Metadata Terms, `http://purl.org/dc/terms/`.
    pub const DCTERMS: Self = Self(3);
    /// The DC 15-element set, `http://purl.org/dc/elements/1.1/` (forbidden, G-NS-DCELEMENTS).
    pub const DC_ELEMENTS: Self = Self(4);
    /// XML Schema instance, `http://www.w3.org/2001/XMLSchema-instance`.
    pub const XSI: Self = Self(5);
    /// Atom, `http://www.w3.org/2005/Atom` (pagination links).
    pub const ATOM: Self = Self(6);
}

/// Namespace names with fixed [`NsId`]s, in id order.
pub const KNOWN_NAMESPACES: [&str; 7] = [
    "",
    "http://www.w3.org/XML/1998/namespace",
    "http://search.yahoo.com/mrss/",
    "http://purl.org/dc/terms/",
    "http://purl.org/dc/elements/1.1/",
    "http://www.w3.org/2001/XMLSchema-instance",
    "http://www.w3.org/2005/Atom",
];

const XMLNS_URI: &str = "http://www.w3.org/2000/xmlns/";
/// At most this many distinct namespace names per document.
const MAX_NAMESPACES: usize = 10_000;

/// Limits the reader enforces; all of them stop with a `G-XML` error.
#[derive(Debug, Clone, Copy)]
pub struct ReaderLimits {
    /// Size limits of the decoder.
    pub decode: Limits,
    /// Deepest element nesting.
    pub max_depth: usize,
}

impl Default for ReaderLimits {
    fn default() -> Self {
        Self {
            decode: Limits {
                max_bytes: 1 << 30,
                max_event_bytes: 16 << 20,
            },
            max_depth: 256,
        }
    }
}

/// An attribute with its namespace resolved (`xmlns` declarations are in [`NsDecl`]).
#[derive(Debug, Clone)]
pub struct Attribute {
    /// Namespace of the attribute; unprefixed attributes have none.
    pub ns: NsId,
    /// Local name.
    pub local: String,
    /// Value after entity expansion and attribute-value normalisation (XML §3.3.3).
    pub value: String,
    /// Position of the first character of the attribute's name.
    pub pos: Pos,
    /// For `xsi:type`: the value resolved as a QName against the element's in-scope
    /// namespaces (XSD semantics: an unprefixed value takes the default namespace).
    pub qname: Option<QNameValue>,
}

/// A QName-valued attribute, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QNameValue {
    /// The prefix is bound: namespace and local name.
    Resolved(NsId, String),
    /// The prefix is bound to nothing in scope.
    Unbound(String),
    /// Not a QName at all (empty, spaces, several colons).
    Invalid,
}

/// A namespace declaration (`xmlns` or `xmlns:p`).
#[derive(Debug, Clone)]
pub struct NsDecl {
    /// The prefix; `None` for the default namespace.
    pub prefix: Option<String>,
    /// The namespace name as written.
    pub uri: String,
    /// Position of the first character of `xmlns`.
    pub pos: Pos,
}

/// A start tag (also of an empty element, which is followed by [`XmlEvent::End`]).
#[derive(Debug)]
pub struct Start<'a> {
    /// Namespace of the element.
    pub ns: NsId,
    /// Namespace name of the element ("" for none).
    pub ns_uri: &'a str,
    /// Local name.
    pub local: &'a str,
    /// Position of the `<`.
    pub pos: Pos,
    /// Attributes other than namespace declarations, in document order.
    pub attrs: &'a [Attribute],
    /// Namespace declarations on this element.
    pub decls: &'a [NsDecl],
}

impl Start<'_> {
    /// The attribute with this namespace and local name.
    pub fn attr(&self, ns: NsId, local: &str) -> Option<&Attribute> {
        self.attrs.iter().find(|a| a.ns == ns && a.local == local)
    }
}

/// What [`XmlReader::read_event`] returns.
#[derive(Debug)]
pub enum XmlEvent<'a> {
    /// An element starts.
    Start(Start<'a>),
    /// The innermost open element ends.
    End,
    /// Character data: text, CDATA or a resolved reference. Whitespace is kept.
    Text(&'a str),
    /// The document ended after its root element.
    Eof,
    /// Nothing was read: the reader is exactly at the offset given to
    /// [`XmlReader::stop_at`], between two events, two elements deep.
    Boundary,
}

/// The open elements and in-scope namespace bindings at one point of a document, so
/// that another reader can read on from there ([`XmlReader::continuing`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    /// (prefix, namespace name), outermost first; "" is the default namespace.
    bindings: Vec<(String, String)>,
    /// Qualified names of the open elements, outermost first.
    open: Vec<String>,
}

/// Why a document is not (namespace-)well-formed, or exceeds a limit: catalogue `G-XML`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Malformed {
    /// quick-xml's syntax or well-formedness error, as text.
    Syntax(String),
    /// An end tag that does not match the open element.
    MismatchedEnd {
        /// The open element.
        expected: String,
        /// The end tag found.
        found: String,
    },
    /// The input ended inside an element.
    Unclosed(String),
    /// No root element at all (empty or whitespace-only input).
    Empty,
    /// Something other than markup after the root element, or a second root.
    AfterRoot(String),
    /// Text before the root element.
    BeforeRoot,
    /// An element or attribute prefix that is not declared.
    UnboundPrefix(String),
    /// `xmlns:p=""` (not allowed in XML 1.0 namespaces).
    EmptyPrefixBinding(String),
    /// A reserved prefix or namespace misused (`xml`, `xmlns`).
    ReservedPrefix(String),
    /// A name with an empty part or several colons.
    BadName(String),
    /// The same (namespace, local name) twice on one element.
    DuplicateAttribute(String),
    /// A reference to an entity that is not one of XML's five.
    UndefinedEntity(String),
    /// A character reference to a character XML forbids.
    BadCharRef(String),
    /// A DOCTYPE that declares entities.
    EntityDeclaration,
    /// Invalid UTF-8.
    InvalidUtf8,
    /// Invalid UTF-16.
    InvalidUtf16,
    /// A character XML forbids.
    ForbiddenChar(u32),
    /// An encoding plikt does not read.
    UnsupportedEncoding(String),
    /// Nesting deeper than the limit.
    TooDeep(usize),
    /// The input is larger than the limit.
    TooLarge(u64),
    /// One piece of markup or text is larger than the limit.
    EventTooLarge(usize),
    /// `<` or `]]>` where XML forbids it.
    BadCharacterData(&'static str),
    /// Too many distinct namespace names.
    TooManyNamespaces,
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Syntax(s) => write!(f, "the feed is not well-formed XML: {s}"),
            Self::MismatchedEnd { expected, found } => write!(
                f,
                "end tag `</{found}>` does not close the open element `<{expected}>`; write `</{expected}>`"
            ),
            Self::Unclosed(name) => write!(
                f,
                "the feed ends inside `<{name}>`: it is truncated or the element is never closed; deliver the whole document"
            ),
            Self::Empty => write!(
                f,
                "the input holds no XML element at all (empty or only whitespace/comments); deliver an RSS 2.0 document"
            ),
            Self::AfterRoot(what) => write!(
                f,
                "{what} after the end of the root element; a feed has exactly one root `<rss>` and nothing but comments after it"
            ),
            Self::BeforeRoot => write!(
                f,
                "text before the root element; the document must start with `<?xml …?>` or `<rss>`"
            ),
            Self::UnboundPrefix(p) => write!(
                f,
                "namespace prefix `{p}` is not declared; add `xmlns:{p}=\"…\"` on this element or on `<rss>`"
            ),
            Self::EmptyPrefixBinding(p) => write!(
                f,
                "`xmlns:{p}=\"\"` un-declares a prefix, which XML 1.0 namespaces forbid; remove it"
            ),
            Self::ReservedPrefix(p) => write!(f, "reserved prefix or namespace misused: {p}"),
            Self::BadName(n) => write!(
                f,
                "`{n}` is not a valid qualified name (at most one colon, non-empty parts)"
            ),
            Self::DuplicateAttribute(n) => write!(
                f,
                "attribute `{n}` occurs twice on this element (after namespace resolution); keep one"
            ),
            Self::UndefinedEntity(n) => write!(
                f,
                "undefined entity `&{n};`; XML knows only &lt; &gt; &amp; &apos; &quot; — write the character itself (UTF-8), a character reference such as `&#160;`, or wrap HTML in CDATA"
            ),
            Self::BadCharRef(n) => write!(
                f,
                "character reference `&{n};` does not name a character XML allows"
            ),
            Self::EntityDeclaration => write!(
                f,
                "the DOCTYPE declares entities; plikt never expands DTD entities (protection against entity-expansion and external-entity attacks); remove the DOCTYPE and write the characters directly"
            ),
            Self::InvalidUtf8 => write!(
                f,
                "bytes that are not valid UTF-8; save the feed as UTF-8, or declare its real encoding, e.g. `<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>`"
            ),
            Self::InvalidUtf16 => write!(
                f,
                "invalid UTF-16 (an unpaired surrogate or an odd number of bytes)"
            ),
            Self::ForbiddenChar(c) => write!(
                f,
                "character U+{c:04X} is not allowed in XML 1.0; remove it (control characters often come from copy-paste)"
            ),
            Self::UnsupportedEncoding(e) => write!(
                f,
                "encoding `{e}` is not supported; deliver UTF-8 (or ISO-8859-1, windows-1252, UTF-16)"
            ),
            Self::TooDeep(n) => write!(
                f,
                "elements are nested more than {n} levels deep; an RSS feed needs fewer than 10"
            ),
            Self::TooLarge(n) => write!(f, "the feed is larger than the limit of {n} bytes"),
            Self::EventTooLarge(n) => write!(
                f,
                "a single tag or text is larger than the limit of {n} bytes; deliver large files through media:content, not inline"
            ),
            Self::BadCharacterData(what) => {
                write!(f, "{what} is not allowed in character data; escape it")
            }
            Self::TooManyNamespaces => write!(f, "more than {MAX_NAMESPACES} distinct namespaces"),
        }
    }
}

/// A `G-XML` failure with its position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XmlError {
    /// What is wrong.
    pub kind: Malformed,
    /// Where it was detected.
    pub pos: Pos,
}

/// Why reading stopped: the document is malformed, or the input could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// `G-XML`.
    Malformed(XmlError),
    /// The input failed (file, pipe or network), not the document.
    Io(io::Error),
}

/// The streaming, namespace-aware reader; see the module docs.
#[derive(Debug)]
pub struct XmlReader<R: Read> {
    reader: quick_xml::Reader<Decoder<R>>,
    buf: Vec<u8>,
    limits: ReaderLimits,
    /// Interned namespace names.
    uris: Vec<String>,
    ids: HashMap<String, NsId>,
    /// In-scope bindings (prefix, namespace); "" is the default namespace.
    bindings: Vec<(String, NsId)>,
    /// `bindings.len()` at each open element, and where its qualified name starts in
    /// `open_names`.
    open: Vec<(usize, usize)>,
    /// The qualified names of the open elements, concatenated.
    open_names: String,
    root_seen: bool,
    pending_end: bool,
    done: bool,
    /// Attribute slots; the first `attrs_len` belong to the current element.
    attrs: Vec<Attribute>,
    attrs_len: usize,
    decls: Vec<NsDecl>,
    local: String,
    text: String,
    ns: NsId,
    pos: Pos,
    /// Read from the middle of a document ([`XmlReader::continuing`]).
    continued: bool,
    /// Where to report [`XmlEvent::Boundary`].
    boundary: Option<u64>,
    /// White space at the start of text is skipped ([`XmlReader::skip_space`]).
    skip_space: bool,
    /// Bytes skipped that way: quick-xml's offsets do not count them.
    skipped: u64,
}

/// What one quick-xml event amounted to.
enum Step {
    Skip,
    Start,
    End,
    Text,
    Eof,
}

impl<R: Read> XmlReader<R> {
    /// A reader over `input` with `limits`.
    pub fn new(input: R, limits: ReaderLimits) -> Self {
        Self::over(Decoder::new(input, limits.decode), limits)
    }

    fn over(decoder: Decoder<R>, limits: ReaderLimits) -> Self {
        let mut reader = quick_xml::Reader::from_reader(decoder);
        let config = reader.config_mut();
        config.check_end_names = true;
        config.check_comments = true;
        config.allow_dangling_amp = false;
        config.expand_empty_elements = false;
        config.trim_text(false);
        let uris: Vec<String> = KNOWN_NAMESPACES.iter().map(|s| (*s).to_string()).collect();
        let ids = uris
            .iter()
            .enumerate()
            .map(|(i, u)| (u.clone(), NsId(u32::try_from(i).unwrap_or(0))))
            .collect();
        Self {
            reader,
            buf: Vec::with_capacity(1024),
            limits,
            uris,
            ids,
            bindings: vec![("xml".into(), NsId::XML)],
            open: Vec::new(),
            open_names: String::new(),
            root_seen: false,
            pending_end: false,
            done: false,
            attrs: Vec::new(),
            attrs_len: 0,
            decls: Vec::new(),
            local: String::new(),
            text: String::new(),
            ns: NsId::NONE,
            pos: Pos::default(),
            continued: false,
            boundary: None,
            skip_space: false,
            skipped: 0,
        }
    }

    /// A reader over UTF-8 `input` that starts in the middle of a document, just after
    /// the point where `scope` was taken: its elements are open and its bindings in
    /// scope. Positions count from 1:1 at the first byte of `input`; an XML declaration
    /// or DOCTYPE is misplaced here.
    pub fn continuing(input: R, limits: ReaderLimits, scope: &Scope) -> Result<Self, XmlError> {
        let mut r = Self::over(Decoder::continuing(input, limits.decode), limits);
        r.bindings.clear();
        for (prefix, uri) in &scope.bindings {
            let id = r.intern(uri).map_err(|kind| XmlError {
                kind,
                pos: Pos::default(),
            })?;
            r.bindings.push((prefix.clone(), id));
        }
        for name in &scope.open {
            r.open.push((r.bindings.len(), r.open_names.len()));
            r.open_names.push_str(name);
        }
        r.root_seen = true;
        r.continued = true;
        Ok(r)
    }

    /// The open elements and bindings in scope after the last event.
    pub fn scope(&self) -> Scope {
        let mut open = Vec::with_capacity(self.open.len());
        for (i, (_, start)) in self.open.iter().enumerate() {
            let end = self
                .open
                .get(i + 1)
                .map_or(self.open_names.len(), |(_, e)| *e);
            open.push(self.open_names[*start..end].to_string());
        }
        Scope {
            bindings: self
                .bindings
                .iter()
                .map(|(p, id)| (p.clone(), self.namespace(*id).to_string()))
                .collect(),
            open,
        }
    }

    /// Offset in the decoded stream of the next byte to be read.
    pub fn offset(&self) -> u64 {
        self.reader.buffer_position() + self.skipped
    }

    /// The position of [`XmlReader::offset`].
    pub fn position(&mut self) -> Pos {
        let at = self.offset();
        self.reader.get_mut().resolve(at)
    }

    /// Reports [`XmlEvent::Boundary`] instead of reading on when the reader is exactly
    /// at decoded `offset` between two events, two elements deep (inside `<rss><channel>`);
    /// when it reads past `offset` otherwise, nothing is reported.
    pub fn stop_at(&mut self, offset: u64) {
        self.boundary = Some(offset);
    }

    /// Positions from here on continue from `pos`: the bytes that follow were not the
    /// next ones of the source (a stretch of it was read by another reader).
    pub fn jump(&mut self, pos: Pos) {
        let at = self.offset();
        self.reader.get_mut().jump(at, pos);
    }

    /// The namespace name of `id`.
    pub fn namespace(&self, id: NsId) -> &str {
        self.uris.get(id.0 as usize).map_or("", String::as_str)
    }

    /// The encoding of the input, once known.
    pub fn encoding(&self) -> Option<Encoding> {
        self.reader.get_ref().encoding()
    }

    fn intern(&mut self, uri: &str) -> Result<NsId, Malformed> {
        if let Some(id) = self.ids.get(uri) {
            return Ok(*id);
        }
        if self.uris.len() >= MAX_NAMESPACES {
            return Err(Malformed::TooManyNamespaces);
        }
        let id = NsId(u32::try_from(self.uris.len()).map_err(|_| Malformed::TooManyNamespaces)?);
        self.uris.push(uri.to_string());
        self.ids.insert(uri.to_string(), id);
        Ok(id)
    }

    fn lookup(&self, prefix: &str) -> Option<NsId> {
        self.bindings
            .iter()
            .rev()
            .find(|(p, _)| p == prefix)
            .map(|(_, id)| *id)
    }

    fn err_at(&mut self, kind: Malformed, offset: u64) -> ReadError {
        self.done = true;
        let pos = self.reader.get_mut().resolve(offset);
        ReadError::Malformed(XmlError { kind, pos })
    }

    /// The next event. After an error or [`XmlEvent::Eof`] it keeps returning `Eof`.
    #[inline]
    pub fn read_event(&mut self) -> Result<XmlEvent<'_>, ReadError> {
        if self.pending_end {
            self.pending_end = false;
            self.close_element();
            return Ok(XmlEvent::End);
        }
        if let Some(at) = self.boundary {
            let here = self.offset();
            if here >= at {
                self.boundary = None;
                if here == at && !self.done && self.open.len() == 2 {
                    return Ok(XmlEvent::Boundary);
                }
            }
        }
        loop {
            if self.done {
                return Ok(XmlEvent::Eof);
            }
            let mut buf = std::mem::take(&mut self.buf);
            buf.clear();
            let step = self.step(&mut buf);
            self.buf = buf;
            return Ok(match step? {
                Step::Skip => continue,
                Step::Start => XmlEvent::Start(Start {
                    ns: self.ns,
                    ns_uri: self.uris.get(self.ns.0 as usize).map_or("", String::as_str),
                    local: &self.local,
                    pos: self.pos,
                    attrs: &self.attrs[..self.attrs_len],
                    decls: &self.decls,
                }),
                Step::End => XmlEvent::End,
                Step::Text => XmlEvent::Text(&self.text),
                Step::Eof => XmlEvent::Eof,
            });
        }
    }

    /// Reads one quick-xml event into `buf` and turns it into state in `self`.
    #[inline(never)]
    fn step(&mut self, buf: &mut Vec<u8>) -> Result<Step, ReadError> {
        let text_start = self.offset();
        if self.skip_space {
            self.skip_white_space()?;
        }
        let start = self.offset();
        // Positions are resolved at start tags and errors; in between, keep the
        // decoder's window of unresolved bytes small.
        self.reader.get_mut().advance(start);
        let event = match self.reader.read_event_into(buf) {
            Ok(e) => e,
            Err(e) => return Err(self.convert_error(e)),
        };
        let misplaced_decl = || {
            Malformed::Syntax(
                "the XML declaration `<?xml …?>` must come first, before anything else, even whitespace".into(),
            )
        };
        match event {
            Event::Decl(_) if start != 0 || self.continued => {
                Err(self.err_at(misplaced_decl(), start))
            }
            Event::PI(pi) if pi.target().eq_ignore_ascii_case("xml") => {
                Err(self.err_at(misplaced_decl(), start))
            }
            Event::Decl(_) | Event::PI(_) | Event::Comment(_) => Ok(Step::Skip),
            Event::DocType(d) => {
                if self.root_seen {
                    Err(self.err_at(
                        Malformed::Syntax("DOCTYPE after the root element".into()),
                        start,
                    ))
                } else if d.contains("<!ENTITY") {
                    Err(self.err_at(Malformed::EntityDeclaration, start))
                } else {
                    Ok(Step::Skip)
                }
            }
            Event::Start(e) => self.start(&e, start, false),
            Event::Empty(e) => self.start(&e, start, true),
            Event::End(_) => {
                self.close_element();
                Ok(Step::End)
            }
            Event::Text(t) => {
                if self.open.is_empty() {
                    if t.bytes().all(is_xml_space) {
                        return Ok(Step::Skip);
                    }
                    let kind = if self.root_seen {
                        Malformed::AfterRoot("text".into())
                    } else {
                        Malformed::BeforeRoot
                    };
                    return Err(self.err_at(kind, text_start));
                }
                if memchr::memchr(b']', t.as_bytes()).is_some() && t.contains("]]>") {
                    return Err(self.err_at(Malformed::BadCharacterData("`]]>`"), text_start));
                }
                self.text.clear();
                self.text.push_str(&t);
                Ok(Step::Text)
            }
            Event::CData(c) => {
                if self.open.is_empty() {
                    return Err(self.err_at(Malformed::AfterRoot("a CDATA section".into()), start));
                }
                self.text.clear();
                self.text.push_str(&c);
                Ok(Step::Text)
            }
            Event::GeneralRef(r) => {
                if self.open.is_empty() {
                    return Err(self.err_at(Malformed::AfterRoot("a reference".into()), start));
                }
                match resolve_reference(&r) {
                    Ok(c) => {
                        self.text.clear();
                        self.text.push(c);
                        Ok(Step::Text)
                    }
                    Err(kind) => Err(self.err_at(kind, start)),
                }
            }
            Event::Eof => {
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
        }
    }

    /// Text from here on is of no interest where it is white space: skip white space at
    /// its start, so white space between tags makes no event. Errors in text are still
    /// reported where the text starts.
    pub fn skip_space(&mut self, on: bool) {
        self.skip_space = on;
    }

    /// Consumes the white space at the read position (XML §2.3 `S`).
    fn skip_white_space(&mut self) -> Result<(), ReadError> {
        loop {
            let buf = match self.reader.get_mut().fill_buf() {
                Ok(buf) => buf,
                Err(e) => return Err(self.convert_error(quick_xml::Error::Io(e.into()))),
            };
            let n = buf
                .iter()
                .position(|&b| !is_xml_space(b))
                .unwrap_or(buf.len());
            let all = n == buf.len() && n > 0;
            self.reader.get_mut().consume(n);
            self.skipped += n as u64;
            if !all {
                return Ok(());
            }
        }
    }

    fn close_element(&mut self) {
        if let Some((len, name)) = self.open.pop() {
            self.bindings.truncate(len);
            self.open_names.truncate(name);
        }
    }

    fn convert_error(&mut self, e: quick_xml::Error) -> ReadError {
        use quick_xml::errors::{Error as QError, IllFormedError};
        let offset = self.reader.error_position() + self.skipped;
        let kind = match e {
            QError::Io(io) => {
                return match self.reader.get_mut().take_error() {
                    Some(d) => {
                        let kind = match d.kind {
                            DecodeErrorKind::InvalidUtf8 => Malformed::InvalidUtf8,
                            DecodeErrorKind::InvalidUtf16 => Malformed::InvalidUtf16,
                            DecodeErrorKind::ForbiddenChar(c) => Malformed::ForbiddenChar(c),
                            DecodeErrorKind::UnsupportedEncoding(l) => {
                                Malformed::UnsupportedEncoding(l)
                            }
                            DecodeErrorKind::TooLarge(n) => Malformed::TooLarge(n),
                            DecodeErrorKind::EventTooLarge(n) => Malformed::EventTooLarge(n),
                            DecodeErrorKind::Io(io) => {
                                self.done = true;
                                return ReadError::Io(io);
                            }
                        };
                        self.err_at(kind, d.offset)
                    }
                    None => {
                        self.done = true;
                        ReadError::Io(io::Error::new(io.kind(), io.to_string()))
                    }
                };
            }
            QError::IllFormed(IllFormedError::MismatchedEndTag { expected, found }) => {
                Malformed::MismatchedEnd { expected, found }
            }
            QError::IllFormed(IllFormedError::UnmatchedEndTag(name)) => {
                Malformed::AfterRoot(format!("end tag `</{name}>` without a start tag"))
            }
            QError::IllFormed(IllFormedError::UnclosedReference) => Malformed::Syntax(
                "a bare `&` that starts no reference; write `&amp;` (in URLs too: `?id=1&amp;sektion=2`) or wrap the text in CDATA".into(),
            ),
            QError::Escape(quick_xml::escape::EscapeError::UnrecognizedEntity(_, name)) => {
                Malformed::UndefinedEntity(name)
            }
            other => Malformed::Syntax(other.to_string()),
        };
        self.err_at(kind, offset)
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
    /// (qualified names for now) into reused slots, with positions. `start` is the tag's
    /// offset, `pos` its position.
    fn read_attributes(
        &mut self,
        e: &BytesStart<'_>,
        start: u64,
        pos: Pos,
    ) -> Result<(), ReadError> {
        // Most elements have no attributes: no need to set up quick-xml's parser.
        if e.attributes_raw().bytes().all(is_xml_space) {
            return Ok(());
        }
        let content: &str = e;
        let content_ptr = content.as_ptr() as usize;
        // In a one-line ASCII tag (the usual case) an attribute's column is the tag's
        // plus its byte offset: no need to resolve each one.
        let one_line_ascii =
            content.is_ascii() && memchr::memchr(b'\n', content.as_bytes()).is_none();
        let mut attrs = e.attributes();
        // Duplicates are found in pass 2, after namespace resolution (quick-xml's own
        // check allocates for every element with attributes).
        attrs.with_checks(false);
        for a in attrs {
            let a = match a {
                Ok(a) => a,
                Err(err) => return Err(self.err_at(Malformed::Syntax(err.to_string()), start)),
            };
            let key: &str = a.key.as_ref();
            let key_offset = (key.as_ptr() as usize - content_ptr) as u64;
            let apos = match u32::try_from(key_offset) {
                Ok(k) if one_line_ascii => Pos {
                    line: pos.line,
                    column: pos.column.saturating_add(1 + k),
                },
                _ => self.reader.get_mut().resolve(start + 1 + key_offset),
            };
            if key == "xmlns" || key.starts_with("xmlns:") {
                let mut value = String::new();
                if let Err(kind) = attribute_value(&a.value, &mut value) {
                    return Err(self.err_at(kind, start + 1 + key_offset));
                }
                self.declare(key, value, apos, start)?;
            } else {
                let slot = self.attr_slot();
                slot.local.clear();
                slot.local.push_str(key);
                slot.value.clear();
                slot.pos = apos;
                slot.qname = None;
                if let Err(kind) = attribute_value(&a.value, &mut slot.value) {
                    return Err(self.err_at(kind, start + 1 + key_offset));
                }
            }
        }
        Ok(())
    }

    fn start(&mut self, e: &BytesStart<'_>, start: u64, empty: bool) -> Result<Step, ReadError> {
        let qname: &str = e.name().0;
        if self.root_seen && self.open.is_empty() {
            let kind = Malformed::AfterRoot(format!("a second root element `<{qname}>`"));
            return Err(self.err_at(kind, start));
        }
        if self.open.len() >= self.limits.max_depth {
            return Err(self.err_at(Malformed::TooDeep(self.limits.max_depth), start));
        }
        self.root_seen = true;
        let pos = self.reader.get_mut().resolve(start);
        self.decls.clear();
        self.attrs_len = 0;
        let scope = self.bindings.len();
        self.read_attributes(e, start, pos)?;

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
        if empty {
            self.pending_end = true;
        }
        self.ns = ns;
        self.pos = pos;
        Ok(Step::Start)
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

/// The input decoded to UTF-8 as the reader sees it (same encoding detection), for
/// reading source lines back. Stops with an error where the reader would.
pub fn decoded<R: Read>(input: R) -> impl BufRead {
    Decoder::untracked(
        input,
        Limits {
            max_bytes: u64::MAX,
            max_event_bytes: usize::MAX,
        },
    )
}

/// Escapes text for XML content or a double-quoted attribute value.
pub fn escape(s: &str) -> std::borrow::Cow<'_, str> {
    quick_xml::escape::escape(s)
}

/// XML 1.0 §2.3 `S`: space, tab, line feed, carriage return.
fn is_xml_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Splits `p:local` into prefix and local name; `None` if not a QName.
fn split_qname(name: &str) -> Option<(Option<&str>, &str)> {
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
        Some(i) if i > 0 && i + 1 < name.len() => Some((Some(&name[..i]), &name[i + 1..])),
        _ => None,
    }
}

/// Resolves `&name;` (without `&` and `;`): XML's five predefined entities and
/// character references.
fn resolve_reference(name: &str) -> Result<char, Malformed> {
    let c = match name {
        "lt" => '<',
        "gt" => '>',
        "amp" => '&',
        "apos" => '\'',
        "quot" => '"',
        _ => {
            let Some(num) = name.strip_prefix('#') else {
                return Err(Malformed::UndefinedEntity(name.to_string()));
            };
            let code = match num.strip_prefix('x') {
                Some(hex) => u32::from_str_radix(hex, 16).ok(),
                None => num.parse::<u32>().ok(),
            };
            match code.and_then(char::from_u32) {
                Some(c) if is_xml_char(c) => c,
                _ => return Err(Malformed::BadCharRef(name.to_string())),
            }
        }
    };
    Ok(c)
}

/// An attribute value with references resolved and whitespace normalised (XML §3.3.3).
fn attribute_value(raw: &str, out: &mut String) -> Result<(), Malformed> {
    if !raw
        .bytes()
        .any(|b| matches!(b, b'&' | b'<' | b'\t' | b'\n' | b'\r'))
    {
        out.push_str(raw);
        return Ok(());
    }
    let mut rest = raw;
    while let Some(i) = rest.find(['&', '<', '\t', '\n', '\r']) {
        out.push_str(&rest[..i]);
        let c = rest[i..].chars().next().unwrap_or(' ');
        rest = &rest[i + c.len_utf8()..];
        match c {
            '<' => return Err(Malformed::BadCharacterData("`<` in an attribute value")),
            '&' => {
                let Some(end) = rest.find(';') else {
                    return Err(Malformed::Syntax(
                        "`&` in an attribute value must be written `&amp;`".into(),
                    ));
                };
                out.push(resolve_reference(&rest[..end])?);
                rest = &rest[end + 1..];
            }
            '\r' => {
                rest = rest.strip_prefix('\n').unwrap_or(rest);
                out.push(' ');
            }
            _ => out.push(' '),
        }
    }
    out.push_str(rest);
    Ok(())
}

#[cfg(test)]
mod tests;
