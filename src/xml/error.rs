//! What goes wrong while reading: [`Malformed`] (catalogue `G-XML`), with its position
//! ([`XmlError`]), or the input itself failing ([`ReadError`]).

use std::fmt;
use std::io;

use super::{MAX_NAMESPACES, Pos};

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
    /// A reference to an entity that is declared nowhere (XML §4.1 WFC: Entity Declared).
    UndefinedEntity(String),
    /// A character reference to a character XML forbids.
    BadCharRef(String),
    /// A reference in content to an external parsed entity. Well-formed XML (a processor
    /// that does not validate need not read it), but plikt never fetches anything, so
    /// the feed's text is not all in the feed: catalogue `G-XML` ("DTDs/external
    /// entities must never be fetched").
    ExternalEntity {
        /// The entity's name.
        name: String,
        /// Its system identifier.
        system: String,
    },
    /// A reference to an entity declared nowhere plikt reads, in a document whose DTD has
    /// an external subset or parameter-entity references and is not `standalone="yes"`:
    /// well-formed XML (the declaration may be in what plikt does not read; XML §4.1
    /// makes it a validity constraint then), but the text is unknown: catalogue `G-XML`
    /// ("Undefined entities … are errors").
    UndeclaredEntity {
        /// The entity's name.
        name: String,
        /// The external subset's system identifier, if the DOCTYPE names one.
        dtd: Option<String>,
    },
    /// An error in the replacement text of an entity, reported at the reference.
    InEntity {
        /// The entity's name (`%name` for a parameter entity).
        name: String,
        /// What is wrong in its replacement text.
        error: Box<Malformed>,
    },
    /// Entity references expand to more than the limit allows (billion laughs).
    Amplification {
        /// The largest ratio of expanded to literal text allowed.
        factor: u64,
    },
    /// Entity references nested deeper than the limit.
    EntitiesTooDeep(usize),
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
                "undefined entity `&{n};`; XML knows only &lt; &gt; &amp; &apos; &quot; and what the DOCTYPE declares — write the character itself (UTF-8), a character reference such as `&#160;`, or wrap HTML in CDATA"
            ),
            Self::ExternalEntity { .. }
            | Self::UndeclaredEntity { .. }
            | Self::InEntity { .. }
            | Self::Amplification { .. }
            | Self::EntitiesTooDeep(_)
            | Self::BadCharRef(_) => self.fmt_entity(f),
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

impl Malformed {
    /// The messages about references and entities.
    fn fmt_entity(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ExternalEntity { name, system } => write!(
                f,
                "`&{name};` refers to the external entity \"{system}\", which plikt never fetches (protection against external-entity attacks), so this text is not in the feed; write the text itself instead of the reference"
            ),
            Self::UndeclaredEntity {
                name,
                dtd: Some(dtd),
            } => write!(
                f,
                "entity `&{name};` is not declared in the feed; it may be declared in the external DTD \"{dtd}\", which plikt never fetches — write the character itself (UTF-8) or a character reference such as `&#160;`, or declare it in the DOCTYPE's internal subset"
            ),
            Self::UndeclaredEntity { name, dtd: None } => write!(
                f,
                "entity `&{name};` is declared nowhere plikt reads (in a DTD with parameter-entity references XML makes that a validity error, not a well-formedness error), so its text is unknown; write the character itself (UTF-8) or a character reference such as `&#160;`, or declare the entity in the DOCTYPE"
            ),
            Self::InEntity { name, error } => {
                write!(
                    f,
                    "in the replacement text of entity `{name}`, referenced here: "
                )?;
                match &**error {
                    Self::Syntax(s) => f.write_str(s),
                    other => write!(f, "{other}"),
                }
            }
            Self::Amplification { factor } => write!(
                f,
                "entity references expand to more than {factor} times the text of the feed (an entity-expansion or \"billion laughs\" attack, or a DOCTYPE that should not be there); write the text directly"
            ),
            Self::EntitiesTooDeep(n) => write!(
                f,
                "entity references are nested more than {n} levels deep; write the text directly"
            ),
            Self::BadCharRef(n) => write!(
                f,
                "character reference `&{n};` does not name a character XML allows"
            ),
            _ => Ok(()),
        }
    }
}

impl Malformed {
    /// Whether XML 1.0 and Namespaces in XML 1.0 call the document not well-formed: false
    /// for what only plikt refuses, each for its reason: an entity whose text plikt does
    /// not read ([`Malformed::ExternalEntity`], [`Malformed::UndeclaredEntity`]), an
    /// encoding plikt does not read, and the limits (size, nesting, namespaces, entity
    /// expansion).
    pub fn is_not_well_formed(&self) -> bool {
        match self {
            Self::ExternalEntity { .. }
            | Self::UndeclaredEntity { .. }
            | Self::UnsupportedEncoding(_)
            | Self::TooDeep(_)
            | Self::TooLarge(_)
            | Self::EventTooLarge(_)
            | Self::TooManyNamespaces
            | Self::Amplification { .. }
            | Self::EntitiesTooDeep(_) => false,
            Self::InEntity { error, .. } => error.is_not_well_formed(),
            _ => true,
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
