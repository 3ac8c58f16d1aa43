//! XML for the whole crate: reading feeds and checking what plikt writes.
//!
//! [`XmlReader`] is a streaming pull parser. It scans the text [`Decoder`] hands it
//! (valid UTF-8, characters XML allows) in place, with `memchr`, and checks what the
//! catalogue's `G-XML` requires: well-formed markup (XML 1.0 §2–§4: tags, attributes,
//! comments, CDATA, processing instructions, references), end tags that match,
//! namespace well-formedness (unbound prefixes, `xmlns:p=""`, duplicate expanded
//! attribute names), one root element and nothing but markup after it, no undefined
//! entities, no DTD entity declarations (never expanded, never fetched), a nesting
//! limit, and size limits.
//! Names come out as `(namespace, local name)` pairs, never prefixes: publishers bind
//! DCMI Terms to `dcterms`, `dc` or `dct`. Every element and attribute carries its
//! 1-based line:column, resolved while its bytes are still in the decoder's window.

mod decode;

use std::collections::HashMap;
use std::fmt;
use std::io::{self, BufRead, Read};

use decode::{DecodeError, Decoder, is_xml_char};
pub use decode::{DecodeErrorKind, Encoding, Limits, SNIFF, is_plain_utf8};

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
    /// A syntax error, described.
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
                "`{n}` is not a valid XML name: a name starts with a letter or `_`, goes on with letters, digits, `-`, `.` or `_`, and has at most one `:` between two non-empty parts"
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
    dec: Decoder<R>,
    /// The start tag being read, without `<` and `>`.
    tag: String,
    /// Its attributes: where the name starts and ends, where the value starts and ends.
    spans: Vec<(usize, usize, usize, usize)>,
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
}

/// What one piece of the input amounted to.
enum Step {
    Skip,
    Start,
    End,
    /// Text in `self.text`.
    Text,
    /// Text in the decoder, between these indexes (see [`Decoder::text`]).
    Window(usize, usize),
    Eof,
}

/// The kinds of markup, for the error when the input ends inside one.
#[derive(Clone, Copy)]
enum Markup {
    StartTag,
    EndTag,
    Comment,
    Cdata,
    Instruction,
    Doctype,
    Declaration,
}

impl Markup {
    fn name(self) -> &'static str {
        match self {
            Self::StartTag => "a start tag",
            Self::EndTag => "an end tag",
            Self::Comment => "a comment",
            Self::Cdata => "a CDATA section",
            Self::Instruction => "a processing instruction",
            Self::Doctype => "a DOCTYPE",
            Self::Declaration => "markup `<!…`",
        }
    }
}

impl<R: Read> XmlReader<R> {
    /// A reader over `input` with `limits`.
    pub fn new(input: R, limits: ReaderLimits) -> Self {
        Self::over(Decoder::new(input, limits.decode), limits)
    }

    fn over(dec: Decoder<R>, limits: ReaderLimits) -> Self {
        let uris: Vec<String> = KNOWN_NAMESPACES.iter().map(|s| (*s).to_string()).collect();
        let ids = uris
            .iter()
            .enumerate()
            .map(|(i, u)| (u.clone(), NsId(u32::try_from(i).unwrap_or(0))))
            .collect();
        Self {
            dec,
            tag: String::new(),
            spans: Vec::new(),
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
        self.dec.offset()
    }

    /// The position of [`XmlReader::offset`].
    pub fn position(&mut self) -> Pos {
        let at = self.offset();
        self.dec.resolve(at)
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
        self.dec.jump(at, pos);
    }

    /// The namespace name of `id`.
    pub fn namespace(&self, id: NsId) -> &str {
        self.uris.get(id.0 as usize).map_or("", String::as_str)
    }

    /// The encoding of the input, once known.
    pub fn encoding(&self) -> Option<Encoding> {
        self.dec.encoding()
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
        let pos = self.dec.resolve(offset);
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
            return Ok(match self.step()? {
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
                Step::Window(from, to) => XmlEvent::Text(self.dec.text(from..to)),
                Step::Eof => XmlEvent::Eof,
            });
        }
    }

    /// Reads one piece of the input (text, a reference or markup) and turns it into
    /// state in `self`. The scanner follows XML 1.0 §2.4–§2.8, §3.1 and §4.1: what it
    /// reports as malformed is what those productions do not allow.
    #[inline(never)]
    fn step(&mut self) -> Result<Step, ReadError> {
        let text_start = self.offset();
        if self.skip_space {
            self.skip_white_space(text_start)?;
        }
        let start = self.offset();
        let first = loop {
            if let Some(&b) = self.dec.window().as_bytes().first() {
                break b;
            }
            if !self.more(text_start)? {
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
            let w = self.dec.window().as_bytes();
            match memchr::memchr3(b'<', b'&', b']', &w[from..]) {
                Some(i) if w[from + i] != b']' => break from + i,
                Some(i) if w.len() >= from + i + 3 => {
                    // XML §2.4: `]]>` is not allowed in character data.
                    if &w[from + i..from + i + 3] == b"]]>" && !self.open.is_empty() {
                        let kind = Malformed::BadCharacterData("`]]>`");
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
                break self.dec.window().len();
            }
        };
        let text = self.dec.window().as_bytes().get(..len).unwrap_or_default();
        if self.open.is_empty() {
            if text.iter().all(|&b| is_xml_space(b)) {
                self.dec.consume(len);
                return Ok(Step::Skip);
            }
            let kind = if self.root_seen {
                Malformed::AfterRoot("text".into())
            } else {
                Malformed::BeforeRoot
            };
            return Err(self.err_at(kind, text_start));
        }
        let at = self.dec.index();
        self.dec.consume(len);
        Ok(Step::Window(at, at + len))
    }

    /// `&name;` or `&#…;` (XML §4.1): one character of text.
    fn reference(&mut self, text_start: u64, start: u64) -> Result<Step, ReadError> {
        if self.open.is_empty() {
            return Err(self.err_at(Malformed::AfterRoot("a reference".into()), start));
        }
        let mut i = 1;
        let end = loop {
            let w = self.dec.window().as_bytes();
            match w[i..].iter().position(|&b| !is_name_byte(b) && b != b'#') {
                Some(n) if w[i + n] == b';' => break i + n,
                Some(_) => {
                    return Err(self.err_at(
                        Malformed::Syntax("a bare `&` that starts no reference; write `&amp;` (in URLs too: `?id=1&amp;sektion=2`) or wrap the text in CDATA".into()),
                        start,
                    ));
                }
                None => i = w.len(),
            }
            if !self.more(text_start)? {
                return Err(self.err_at(
                    Malformed::Syntax(
                        "the input ends inside a reference `&…;`; the feed is truncated".into(),
                    ),
                    start,
                ));
            }
        };
        let name = self.dec.window().get(1..end).unwrap_or_default();
        match resolve_reference(name) {
            Ok(c) => {
                self.dec.consume(end + 1);
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
        match self.dec.window().as_bytes().get(1) {
            Some(b'/') => self.end_tag(text_start, start),
            Some(b'?') => self.instruction(text_start, start),
            Some(b'!') => self.declaration(text_start, start),
            _ => self.start_tag(text_start, start),
        }
    }

    /// `</name S?>` (XML §3.1 `ETag`), which must close the innermost open element.
    fn end_tag(&mut self, text_start: u64, start: u64) -> Result<Step, ReadError> {
        // The usual case: `</name>` for the open element, already in the window.
        if let Some((_, at)) = self.open.last() {
            let name = self.open_names.as_bytes().get(*at..).unwrap_or_default();
            let w = self.dec.window().as_bytes();
            if w.get(2..2 + name.len()) == Some(name) && w.get(2 + name.len()) == Some(&b'>') {
                self.dec.consume(name.len() + 3);
                self.close_element();
                return Ok(Step::End);
            }
        }
        let gt = self.find(text_start, start, 2, b">", Markup::EndTag)?;
        let w = self.dec.window();
        let name = w
            .get(2..gt)
            .unwrap_or_default()
            .trim_end_matches([' ', '\t', '\n', '\r']);
        let kind = match self.open.last() {
            None => Malformed::AfterRoot(format!("end tag `</{name}>` without a start tag")),
            Some((_, at)) if self.open_names.get(*at..) != Some(name) => Malformed::MismatchedEnd {
                expected: self.open_names.get(*at..).unwrap_or_default().to_string(),
                found: name.to_string(),
            },
            Some(_) => {
                self.dec.consume(gt + 1);
                self.close_element();
                return Ok(Step::End);
            }
        };
        Err(self.err_at(kind, start))
    }

    /// `<?target …?>` (XML §2.6); the XML declaration (§2.8) only at the very start.
    fn instruction(&mut self, text_start: u64, start: u64) -> Result<Step, ReadError> {
        let end = self.find(text_start, start, 2, b"?>", Markup::Instruction)?;
        let w = self.dec.window();
        let body = w.get(2..end).unwrap_or_default();
        let target = &body[..body.bytes().position(is_xml_space).unwrap_or(body.len())];
        if target.eq_ignore_ascii_case("xml") && (target != "xml" || start != 0 || self.continued) {
            return Err(self.err_at(
                Malformed::Syntax(
                    "the XML declaration `<?xml …?>` must come first, before anything else, even whitespace".into(),
                ),
                start,
            ));
        }
        if !is_name(target) {
            let kind = Malformed::Syntax(format!(
                "`<?{target}` does not start a processing instruction: `<?` must be followed by a name, as in `<?xml-stylesheet …?>`"
            ));
            return Err(self.err_at(kind, start));
        }
        self.dec.consume(end + 2);
        Ok(Step::Skip)
    }

    /// `<!--…-->` (§2.5), `<![CDATA[…]]>` (§2.7) or `<!DOCTYPE …>` (§2.8).
    fn declaration(&mut self, text_start: u64, start: u64) -> Result<Step, ReadError> {
        // Enough to tell which, unless the input ends first.
        let whole = self.fill_to(text_start, 9)?;
        let w = self.dec.window().as_bytes();
        if w.starts_with(b"<!--") {
            let end = self.find(text_start, start, 4, b"--", Markup::Comment)?;
            self.need(text_start, start, end + 3, Markup::Comment)?;
            if self.dec.window().as_bytes()[end + 2] != b'>' {
                let kind = Malformed::Syntax(
                    "`--` inside a comment, which XML forbids; write `- -` or remove it".into(),
                );
                return Err(self.err_at(kind, start));
            }
            self.dec.consume(end + 3);
            return Ok(Step::Skip);
        }
        if w.starts_with(b"<![CDATA[") {
            if self.open.is_empty() {
                let kind = Malformed::AfterRoot("a CDATA section".into());
                return Err(self.err_at(kind, start));
            }
            let end = self.find(text_start, start, 9, b"]]>", Markup::Cdata)?;
            let at = self.dec.index();
            self.dec.consume(end + 3);
            return Ok(Step::Window(at + 9, at + end));
        }
        if w.starts_with(b"<!DOCTYPE") {
            if self.root_seen {
                let kind = Malformed::Syntax("DOCTYPE after the root element".into());
                return Err(self.err_at(kind, start));
            }
            let end = self.doctype_end(text_start, start)?;
            let w = self.dec.window().as_bytes();
            // XML §2.8 `doctypedecl ::= '<!DOCTYPE' S Name …`
            let name = w[9..end].trim_ascii_start();
            if !is_xml_space(w[9]) || !name.first().is_some_and(|&b| is_name_start(b)) {
                let kind = Malformed::Syntax(
                    "`<!DOCTYPE` must be followed by a space and the root element's name, as in `<!DOCTYPE rss>`".into(),
                );
                return Err(self.err_at(kind, start));
            }
            if memchr::memmem::find(&w[..end], b"<!ENTITY").is_some() {
                return Err(self.err_at(Malformed::EntityDeclaration, start));
            }
            self.dec.consume(end + 1);
            return Ok(Step::Skip);
        }
        if !whole {
            return Err(self.truncated(Markup::Declaration, start));
        }
        let what = String::from_utf8_lossy(&w[..9]).into_owned();
        let kind = Malformed::Syntax(format!(
            "`{what}` starts no markup XML knows: `<!` begins a comment `<!--…-->`, a CDATA section `<![CDATA[…]]>` or a DOCTYPE"
        ));
        Err(self.err_at(kind, start))
    }

    /// The index of the `>` that ends the DOCTYPE at the window's start: the first one
    /// outside quotes and outside the internal subset `[…]`.
    fn doctype_end(&mut self, text_start: u64, start: u64) -> Result<usize, ReadError> {
        let mut i = 9;
        let mut quote = None;
        let mut depth = 0usize;
        loop {
            let w = self.dec.window().as_bytes();
            while i < w.len() {
                let b = w[i];
                match quote {
                    Some(q) if b == q => quote = None,
                    Some(_) => {}
                    None => match b {
                        b'"' | b'\'' => quote = Some(b),
                        b'[' => depth += 1,
                        b']' => depth = depth.saturating_sub(1),
                        b'>' if depth == 0 => return Ok(i),
                        _ => {}
                    },
                }
                i += 1;
            }
            if !self.more(text_start)? {
                return Err(self.truncated(Markup::Doctype, start));
            }
        }
    }

    /// `<name attributes… >` or `…/>` (XML §3.1 `STag`, `EmptyElemTag`).
    fn start_tag(&mut self, text_start: u64, start: u64) -> Result<Step, ReadError> {
        let (gt, name_len, empty) = self.scan_start_tag(text_start, start)?;
        if self.root_seen && self.open.is_empty() {
            let name = self.dec.window().get(1..1 + name_len).unwrap_or_default();
            let kind = Malformed::AfterRoot(format!("a second root element `<{name}>`"));
            return Err(self.err_at(kind, start));
        }
        let content = self
            .dec
            .window()
            .get(1..gt - usize::from(empty))
            .unwrap_or_default();
        let mut tag = std::mem::take(&mut self.tag);
        tag.clear();
        tag.push_str(content);
        self.dec.consume(gt + 1);
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
    fn scan_start_tag(
        &mut self,
        text_start: u64,
        start: u64,
    ) -> Result<(usize, usize, bool), ReadError> {
        /// Where the scan is.
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
        self.spans.clear();
        let mut at = At::Name;
        let mut i = 1;
        let mut name_len = 0;
        loop {
            let w = self.dec.window().as_bytes();
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
                            At::Name if i == 1 => Some((
                                Malformed::Syntax(
                                    "a `<` that starts no tag; write `&lt;` for a `<` in text"
                                        .into(),
                                ),
                                0,
                            )),
                            At::Name => Some((bad_name(w, 1, b">"), 0)),
                            At::Key(k) if is_xml_space(b) => {
                                at = At::Eq(k, i);
                                None
                            }
                            At::Key(k) if b == b'=' => {
                                at = At::Quote(k, i);
                                None
                            }
                            At::Key(k) if b == b'>' || b == b'/' => Some((no_value(&w[k..i]), k)),
                            At::Key(k) => Some((bad_name(w, k, b"=>"), k)),
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
                            _ if !seen => Some((
                                Malformed::Syntax(
                                    "no white space between an attribute's value and what follows; separate attributes with a space".into(),
                                ),
                                i,
                            )),
                            b => Some((
                                Malformed::Syntax(format!(
                                    "`{}` where an attribute name, `>` or `/>` should come",
                                    char::from(b).escape_default()
                                )),
                                i,
                            )),
                        }
                    }
                    At::Eq(k, e) => {
                        i += run(&w[i..], is_xml_space);
                        match w.get(i) {
                            None => break,
                            Some(b'=') => {
                                at = At::Quote(k, e);
                                None
                            }
                            Some(_) => Some((no_value(&w[k..e]), k)),
                        }
                    }
                    At::Quote(k, e) => {
                        i += run(&w[i..], is_xml_space);
                        match w.get(i) {
                            None => break,
                            Some(&q @ (b'"' | b'\'')) => {
                                at = At::Value(q, k, e, i + 1);
                                None
                            }
                            Some(_) => {
                                let key = String::from_utf8_lossy(&w[k..e]);
                                let kind = Malformed::Syntax(format!(
                                    "the value of attribute `{key}` must be in quotes: {key}=\"…\""
                                ));
                                Some((kind, k))
                            }
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
                    At::Slash => Some((
                        Malformed::Syntax("`/` in a start tag must be followed by `>`".into()),
                        i - 1,
                    )),
                };
                if let Some((kind, index)) = fault {
                    return Err(self.err_at(kind, start + index as u64));
                }
                i += 1;
            }
            if !self.more(text_start)? {
                if let At::Value(q, ..) = at {
                    let q = char::from(q);
                    let kind = Malformed::Syntax(format!(
                        "an attribute value in this start tag opens with `{q}` and is never closed; add the closing `{q}`"
                    ));
                    return Err(self.err_at(kind, start));
                }
                return Err(self.truncated(Markup::StartTag, start));
            }
        }
    }

    /// The index of the first `pat` at or after `from` in the window, reading on as
    /// needed; the input ending first is an error inside `what`.
    fn find(
        &mut self,
        text_start: u64,
        start: u64,
        mut from: usize,
        pat: &[u8],
        what: Markup,
    ) -> Result<usize, ReadError> {
        loop {
            let w = self.dec.window().as_bytes();
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
    fn fill_to(&mut self, text_start: u64, n: usize) -> Result<bool, ReadError> {
        while self.dec.window().len() < n {
            if !self.more(text_start)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Makes the window at least `n` bytes long; the input ending first is an error
    /// inside `what`, which starts at `start`.
    fn need(
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
    fn more(&mut self, keep: u64) -> Result<bool, ReadError> {
        match self.dec.more(keep) {
            Ok(more) => Ok(more),
            Err(e) => Err(self.decode_error(e)),
        }
    }

    /// The input ended inside `what`, which starts at `start`.
    fn truncated(&mut self, what: Markup, start: u64) -> ReadError {
        let name = what.name();
        let kind = match self.open.last() {
            Some((_, at)) => Malformed::Unclosed(self.open_names[*at..].to_string()),
            None => Malformed::Syntax(format!(
                "the input ends inside {name}; the feed is truncated or {name} is never closed"
            )),
        };
        self.err_at(kind, start)
    }

    /// Nothing more to read.
    fn end_of_input(&mut self) -> Result<Step, ReadError> {
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

    /// Text from here on is of no interest where it is white space: skip white space at
    /// its start, so white space between tags makes no event. Errors in text are still
    /// reported where the text starts.
    pub fn skip_space(&mut self, on: bool) {
        self.skip_space = on;
    }

    /// Consumes the white space at the read position (XML §2.3 `S`).
    fn skip_white_space(&mut self, text_start: u64) -> Result<(), ReadError> {
        loop {
            let w = self.dec.window().as_bytes();
            let n = w.iter().position(|&b| !is_xml_space(b)).unwrap_or(w.len());
            let all = n == w.len();
            self.dec.consume(n);
            if !all || !self.more(text_start)? {
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

    /// The decoder's failure as a `G-XML` error, or an input error.
    fn decode_error(&mut self, d: DecodeError) -> ReadError {
        let kind = match d.kind {
            DecodeErrorKind::InvalidUtf8 => Malformed::InvalidUtf8,
            DecodeErrorKind::InvalidUtf16 => Malformed::InvalidUtf16,
            DecodeErrorKind::ForbiddenChar(c) => Malformed::ForbiddenChar(c),
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
        let one_line_ascii = tag.is_ascii() && memchr::memchr(b'\n', tag.as_bytes()).is_none();
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
            if !key.bytes().next().is_some_and(is_name_start) {
                return Err(self.err_at(Malformed::BadName(key.to_string()), at));
            }
            let apos = match u32::try_from(k) {
                Ok(k) if one_line_ascii => Pos {
                    line: pos.line,
                    column: pos.column.saturating_add(1 + k),
                },
                _ => self.dec.resolve(at),
            };
            if key == "xmlns" || key.starts_with("xmlns:") {
                let mut value = String::new();
                if let Err(kind) = attribute_value(raw, &mut value) {
                    return Err(self.err_at(kind, at));
                }
                self.declare(key, value, apos, start)?;
            } else {
                let slot = self.attr_slot();
                slot.local.clear();
                slot.local.push_str(key);
                slot.value.clear();
                slot.pos = apos;
                slot.qname = None;
                if let Err(kind) = attribute_value(raw, &mut slot.value) {
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
        if !qname.bytes().next().is_some_and(is_name_start) {
            return Err(self.err_at(Malformed::BadName(qname.to_string()), start));
        }
        if self.open.len() >= self.limits.max_depth {
            return Err(self.err_at(Malformed::TooDeep(self.limits.max_depth), start));
        }
        self.root_seen = true;
        let pos = self.dec.resolve(start);
        self.decls.clear();
        self.attrs_len = 0;
        let scope = self.bindings.len();
        self.read_attributes(tag, start, pos)?;

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

/// Escapes text for XML content or a quoted attribute value: `<`, `>`, `&`, `"`, `'`.
pub fn escape(s: &str) -> std::borrow::Cow<'_, str> {
    let special = |c: char| matches!(c, '<' | '>' | '&' | '"' | '\'');
    if !s.contains(special) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// XML 1.0 §2.3 `S`: space, tab, line feed, carriage return.
fn is_xml_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// A byte of an XML 1.0 `Name` (§2.3 `NameChar`): exact for ASCII; every byte of a
/// non-ASCII character counts, as the decoder has checked the characters themselves.
fn is_name_byte(b: u8) -> bool {
    NAME_BYTES[usize::from(b)]
}

/// `G-XML` for the name that starts at `from` in `w` and runs to white space or one of
/// `stops`.
fn bad_name(w: &[u8], from: usize, stops: &[u8]) -> Malformed {
    let end = w[from..]
        .iter()
        .position(|&b| is_xml_space(b) || stops.contains(&b))
        .map_or(w.len(), |e| from + e);
    Malformed::BadName(String::from_utf8_lossy(&w[from..end]).into_owned())
}

/// `G-XML` for an attribute written without `="…"`.
fn no_value(key: &[u8]) -> Malformed {
    let key = String::from_utf8_lossy(key);
    Malformed::Syntax(format!("attribute `{key}` has no value; write {key}=\"…\""))
}

/// How many bytes at the start of `bytes` satisfy `pred`.
fn run(bytes: &[u8], pred: impl Fn(u8) -> bool) -> usize {
    bytes.iter().position(|&b| !pred(b)).unwrap_or(bytes.len())
}

/// [`is_name_byte`] as a table: names are checked at every tag.
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

/// XML 1.0 §2.3 `Name`, with [`is_name_byte`]'s approximation for non-ASCII characters:
/// no digit, `-` or `.` first.
fn is_name(s: &str) -> bool {
    s.bytes().next().is_some_and(is_name_start) && s.bytes().all(is_name_byte)
}

/// A byte that can start an XML 1.0 `Name` (§2.3 `NameStartChar`, approximated as in
/// [`is_name_byte`]): not a digit, `-` or `.`.
fn is_name_start(b: u8) -> bool {
    is_name_byte(b) && !b.is_ascii_digit() && b != b'-' && b != b'.'
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
