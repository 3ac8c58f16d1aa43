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
//! - `mod.rs` (here): the reader's types, events and state;
//! - `content.rs`: the scanner of content, comments, CDATA, processing instructions,
//!   references and end tags;
//! - `tag.rs`: start tags, attributes, namespaces;
//! - `prolog.rs`: the XML declaration;
//! - `dtd.rs`: the DOCTYPE and its internal subset, what it declares;
//! - `decl.rs`: the grammar of markup declarations;
//! - `entity.rs`: references, entity expansion and its bounds, attribute values;
//! - `input.rs`: reading the document or an entity's replacement text;
//! - `names.rs`: names and white space; `error.rs`: what can go wrong.
//!
//! Names come out as `(namespace, local name)` pairs, never prefixes: publishers bind
//! DCMI Terms to `dcterms`, `dc` or `dct`. Every element and attribute carries its
//! 1-based line:column, resolved while its bytes are still in the decoder's window;
//! what comes from an entity's replacement text carries the position of the reference.

mod content;
mod decl;
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

use decode::Decoder;
pub use decode::{DecodeErrorKind, Encoding, Limits, SNIFF, is_plain_utf8};
use dtd::Dtd;
use entity::Budget;
pub use error::{Malformed, ReadError, XmlError};
use input::Input;

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
    fn name(self) -> crate::i18n::Message {
        crate::i18n::Message::new(match self {
            Self::StartTag => "xml-markup-start-tag",
            Self::EndTag => "xml-markup-end-tag",
            Self::Comment => "xml-markup-comment",
            Self::Cdata => "xml-what-cdata",
            Self::Instruction => "xml-markup-instruction",
            Self::Doctype => "xml-markup-doctype",
            Self::Declaration => "xml-markup-declaration",
        })
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

    /// Text from here on is of no interest where it is white space: skip white space at
    /// its start, so white space between tags makes no event. Errors in text are still
    /// reported where the text starts.
    pub fn skip_space(&mut self, on: bool) {
        self.skip_space = on;
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
/// plikt's one XML escaper: the reports, the web pages' XML and the ResourceSync
/// documents all escape through it or [`write_escaped`].
pub fn escape(s: &str) -> std::borrow::Cow<'_, str> {
    if !needs_escaping(s.as_bytes()) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = Vec::with_capacity(s.len() + 16);
    write_escaped(&mut out, s).expect("writing to a Vec");
    std::borrow::Cow::Owned(String::from_utf8(out).expect("escaping keeps UTF-8"))
}

/// Writes `s` escaped as [`escape`] does, in runs: most values the ResourceSync
/// documents carry (times, digests, numbers, most URLs) need no escaping at all, and
/// are written in one piece (the writer's hot path, BENCHMARKS.md).
pub fn write_escaped(out: &mut impl std::io::Write, s: &str) -> std::io::Result<()> {
    let bytes = s.as_bytes();
    if !needs_escaping(bytes) {
        return out.write_all(bytes);
    }
    let mut start = 0;
    for (i, b) in bytes.iter().enumerate() {
        let entity: &[u8] = match b {
            b'&' => b"&amp;",
            b'<' => b"&lt;",
            b'>' => b"&gt;",
            b'"' => b"&quot;",
            b'\'' => b"&apos;",
            _ => continue,
        };
        out.write_all(&bytes[start..i])?;
        out.write_all(entity)?;
        start = i + 1;
    }
    out.write_all(&bytes[start..])
}

/// Whether any of the five characters [`escape`] replaces is in `bytes` (looked for
/// with SIMD).
fn needs_escaping(bytes: &[u8]) -> bool {
    memchr::memchr3(b'&', b'<', b'>', bytes).is_some()
        || memchr::memchr2(b'"', b'\'', bytes).is_some()
}

#[cfg(test)]
mod tests;
