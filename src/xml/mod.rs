//! XML for the whole crate: reading feeds and checking what plikt writes.
//!
//! [`XmlReader`] is a streaming pull parser. It scans the text [`Decoder`] hands it
//! (valid UTF-8, characters XML allows) in place, with `memchr`, and checks what the
//! catalogue's `G-XML` requires: well-formedness as XML 1.0 (fifth edition) defines it,
//! every production and well-formedness constraint of a document that reads no external
//! entity, and Namespaces in XML 1.0 (unbound prefixes, `xmlns:p=""`, duplicate expanded
//! attribute names, QNames, no colons in entity, notation and PI names), plus a nesting
//! limit and size limits. A document that XML 1.0 calls well-formed is never refused,
//! with two exceptions the catalogue makes and [`Malformed::is_not_well_formed`] tells
//! apart: references to text plikt does not read (external entities, entities that only
//! an unread external DTD may declare) and encodings plikt does not read.
//!
//! The files, by concern:
//! - `decode.rs`: bytes to checked text, encodings, line:column positions;
//! - `mod.rs` (here): the events, and the scanner of content, comments, CDATA,
//!   processing instructions, references and end tags;
//! - `tag.rs`: start tags, attributes, namespaces;
//! - `prolog.rs`: the XML declaration;
//! - `dtd.rs`: the DOCTYPE and its internal subset;
//! - `entity.rs`: references, entity expansion and its bounds, attribute values;
//! - `input.rs`: reading the document or an entity's replacement text;
//! - `names.rs`: names and white space; `error.rs`: what can go wrong.
//!
//! Names come out as `(namespace, local name)` pairs, never prefixes: publishers bind
//! DCMI Terms to `dcterms`, `dc` or `dct`. Every element and attribute carries its
//! 1-based line:column, resolved while its bytes are still in the decoder's window;
//! what comes from an entity's replacement text carries the position of the reference.

mod decode;
mod dtd;
mod entity;
mod error;
mod input;
mod names;
mod prolog;
mod tag;

use std::collections::HashMap;
use std::fmt;
use std::io::{BufRead, Read};
use std::sync::Arc;

use decode::{DecodeError, Decoder};
pub use decode::{DecodeErrorKind, Encoding, Limits, SNIFF, is_plain_utf8};
use dtd::Dtd;
use entity::{Budget, char_reference, predefined};
pub use error::{Malformed, ReadError, XmlError};
use input::Input;
use names::is_xml_space;

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
    /// Entity expansion may produce at most this many times the document's own text
    /// read so far (expat's default: 100)…
    pub max_amplification: u64,
    /// …once the document's text and the expanded text together pass this many bytes
    /// (expat's default: 8 MiB).
    pub amplification_threshold: u64,
    /// Deepest nesting of entity references (libxml2's default: 40).
    pub max_entity_depth: usize,
}

impl Default for ReaderLimits {
    fn default() -> Self {
        Self {
            decode: Limits {
                max_bytes: 1 << 30,
                max_event_bytes: 16 << 20,
            },
            max_depth: 256,
            max_amplification: 100,
            amplification_threshold: 8 << 20,
            max_entity_depth: 40,
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
    /// The DOCTYPE declares entities or attributes.
    declarations: bool,
}

impl Scope {
    /// Whether the document's DOCTYPE declares entities or attributes, which a reader
    /// continuing from this scope ([`XmlReader::continuing`]) would not know.
    pub fn has_declarations(&self) -> bool {
        self.declarations
    }
}

/// The streaming, namespace-aware reader; see the module docs.
#[derive(Debug)]
pub struct XmlReader<R: Read> {
    input: Input<R>,
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
    /// The XML declaration says `standalone="yes"`.
    standalone: bool,
    doctype_seen: bool,
    /// What the DOCTYPE declares, if there is one.
    dtd: Option<Arc<Dtd>>,
    /// Entity expansion so far, against the limits.
    budget: Budget,
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
            input: Input::new(dec),
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
            standalone: false,
            doctype_seen: false,
            dtd: None,
            budget: Budget::new(&limits),
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
            declarations: self.dtd.as_ref().is_some_and(|d| d.declares_anything()),
        }
    }

    /// Offset in the decoded stream of the next byte to be read.
    pub fn offset(&self) -> u64 {
        self.input.offset()
    }

    /// The position of [`XmlReader::offset`].
    pub fn position(&mut self) -> Pos {
        let at = self.offset();
        self.input.resolve(at)
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
        self.input.dec.jump(at, pos);
    }

    /// The namespace name of `id`.
    pub fn namespace(&self, id: NsId) -> &str {
        self.uris.get(id.0 as usize).map_or("", String::as_str)
    }

    /// The encoding of the input, once known.
    pub fn encoding(&self) -> Option<Encoding> {
        self.input.dec.encoding()
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

    /// `kind` at decoded `offset`; inside an entity, at the outermost reference and
    /// said to be in the entity's replacement text.
    fn err_at(&mut self, kind: Malformed, offset: u64) -> ReadError {
        self.done = true;
        let pos = self.input.resolve(offset);
        let kind = match self.input.expansions() {
            [] => kind,
            _ if matches!(
                kind,
                Malformed::Amplification { .. } | Malformed::EntitiesTooDeep(_)
            ) =>
            {
                kind
            }
            chain => Malformed::InEntity {
                name: chain
                    .iter()
                    .map(|e| &*e.name)
                    .collect::<Vec<_>>()
                    .join("` → `"),
                error: Box::new(kind),
            },
        };
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
                if here == at && !self.done && self.open.len() == 2 && self.input.in_document() {
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
                Step::Window(from, to) => XmlEvent::Text(self.input.text(from..to)),
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
                Malformed::AfterRoot("text".into())
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
            return Err(self.err_at(Malformed::AfterRoot("a reference".into()), start));
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
        let w = self.input.window();
        let name = w.get(1..end).unwrap_or_default();
        let c = if name.starts_with('#') {
            char_reference(name)
        } else if let Some(c) = predefined(name) {
            Ok(c)
        } else if dtd::reference_end(w, 0) == Some(end) {
            return self.entity_reference(end, start);
        } else {
            Err(Malformed::Syntax(format!(
                "`&{name};` is no reference: an entity's name starts with a letter or `_`; write `&amp;` for a plain `&`"
            )))
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
            let kind = Malformed::Syntax(
                "an end tag that closes an element opened outside the entity: an element starts and ends in the same entity".into(),
            );
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
            None => Malformed::AfterRoot(format!("end tag `</{name}>` without a start tag")),
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
        } else if let Some(kind) = dtd::bad_target(target) {
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
                let kind = Malformed::Syntax(
                    "`--` inside a comment, which XML forbids; write `- -` or remove it".into(),
                );
                return Err(self.err_at(kind, start));
            }
            self.input.consume(end + 3);
            return Ok(Step::Skip);
        }
        if w.starts_with(b"<![CDATA[") {
            if self.open.is_empty() {
                let kind = Malformed::AfterRoot("a CDATA section".into());
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
        let kind = Malformed::Syntax(format!(
            "`{what}` starts no markup XML knows: `<!` begins a comment `<!--…-->`, a CDATA section `<![CDATA[…]]>` or a DOCTYPE"
        ));
        Err(self.err_at(kind, start))
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
    fn fill_to(&mut self, text_start: u64, n: usize) -> Result<bool, ReadError> {
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
        match self.input.more(keep) {
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
            let w = self.input.window().as_bytes();
            let n = w.iter().position(|&b| !is_xml_space(b)).unwrap_or(w.len());
            let all = n == w.len();
            self.input.consume(n);
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
            // A label that is no encoding name makes the XML declaration malformed.
            DecodeErrorKind::UnsupportedEncoding(l) if !prolog::is_enc_name(&l) => {
                Malformed::Syntax(format!(
                    "`encoding=\"{l}\"`: the encoding's name must start with a letter and go on with letters, digits, `.`, `_` or `-`, such as `UTF-8` or `ISO-8859-1`"
                ))
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

#[cfg(test)]
mod tests;
