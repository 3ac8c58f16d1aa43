//! What goes wrong while reading: [`Malformed`] (catalogue `G-XML`), with its position
//! ([`XmlError`]), or the input itself failing ([`ReadError`]).

use std::fmt;
use std::io;

use super::{MAX_NAMESPACES, Pos};
use crate::i18n::Message;
use crate::msg;

/// Why a document is not (namespace-)well-formed, or exceeds a limit: catalogue `G-XML`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Malformed {
    /// A syntax error, described.
    Syntax(Message),
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
    AfterRoot(Message),
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
    BadCharacterData(Message),
    /// Too many distinct namespace names.
    TooManyNamespaces,
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.message(), f)
    }
}

impl Malformed {
    /// What is wrong and what to write instead, in no language yet (the `G-XML`
    /// finding's message; `Display` is its English text).
    pub fn message(&self) -> Message {
        match self {
            Self::Syntax(s) => msg!("xml-syntax", detail = s.clone()),
            Self::MismatchedEnd { expected, found } => {
                msg!("xml-mismatched-end", expected = expected, found = found)
            }
            Self::Unclosed(name) => msg!("xml-unclosed", name = name),
            Self::Empty => msg!("xml-empty"),
            Self::AfterRoot(what) => msg!("xml-after-root", what = what.clone()),
            Self::BeforeRoot => msg!("xml-before-root"),
            Self::UnboundPrefix(p) => msg!("xml-unbound-prefix", prefix = p),
            Self::EmptyPrefixBinding(p) => msg!("xml-empty-prefix-binding", prefix = p),
            Self::ReservedPrefix(p) => msg!("xml-reserved-prefix", detail = p.clone()),
            Self::BadName(n) => msg!("xml-bad-name", name = n),
            Self::DuplicateAttribute(n) => msg!("xml-duplicate-attribute", name = n),
            Self::UndefinedEntity(n) => msg!("xml-undefined-entity", name = n),
            Self::ExternalEntity { name, system } => {
                msg!("xml-external-entity", name = name, system = system)
            }
            Self::UndeclaredEntity {
                name,
                dtd: Some(dtd),
            } => msg!("xml-undeclared-entity-dtd", name = name, dtd = dtd),
            Self::UndeclaredEntity { name, dtd: None } => {
                msg!("xml-undeclared-entity", name = name)
            }
            Self::InEntity { name, error } => {
                let inner = match &**error {
                    Self::Syntax(s) => s.clone(),
                    other => other.message(),
                };
                msg!("xml-in-entity", name = name, error = inner)
            }
            Self::Amplification { factor } => msg!("xml-amplification", factor = *factor),
            Self::EntitiesTooDeep(n) => msg!("xml-entities-too-deep", depth = *n),
            Self::BadCharRef(n) => msg!("xml-bad-char-ref", reference = n),
            Self::InvalidUtf8 => msg!("xml-invalid-utf8"),
            Self::InvalidUtf16 => msg!("xml-invalid-utf16"),
            Self::ForbiddenChar(c) => msg!("xml-forbidden-char", code = format!("{c:04X}")),
            Self::UnsupportedEncoding(e) => msg!("xml-unsupported-encoding", encoding = e),
            Self::TooDeep(n) => msg!("xml-too-deep", depth = *n),
            Self::TooLarge(n) => msg!("xml-too-large", bytes = *n),
            Self::EventTooLarge(n) => msg!("xml-event-too-large", bytes = *n),
            Self::BadCharacterData(what) => msg!("xml-bad-character-data", what = what.clone()),
            Self::TooManyNamespaces => msg!("xml-too-many-namespaces", max = MAX_NAMESPACES),
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
