//! The document type declaration (XML 1.0 §2.8 `doctypedecl`) and its internal subset:
//! element type (§3.2), attribute-list (§3.3), entity (§4.2) and notation (§4.7)
//! declarations, parameter-entity references between them, comments and processing
//! instructions. Everything is checked against the grammar and the well-formedness
//! constraints; what reading the document needs is kept in a [`Dtd`]: general entities
//! and attribute defaults and types.
//!
//! Nothing is fetched: an external subset or external parameter entity is never read.
//! As XML §5.1 requires of a processor that does not read them, entity and attribute-list
//! declarations after a reference to a parameter entity that was not read are checked
//! but not used, unless the document is `standalone="yes"`. Internal parameter entities
//! are included (§4.4.8): their replacement text must be whole declarations (WFC: PE
//! Between Declarations). Conditional sections are not allowed here (§3.4: they belong to
//! the external subset), nor parameter-entity references inside declarations (WFC: PEs
//! in Internal Subset).
//!
//! The DOCTYPE is parsed once it is whole in the decoder's window ([`XmlReader::doctype`]
//! finds its end first), so positions are exact: the offset of any error is known.
//!
//! Kept in an import circle with `entity` and `tag`, as the grammar is: declarations hold
//! entity values and attribute defaults, which those expand and normalise.

use crate::msg;
use std::collections::HashMap;
use std::io::Read;
use std::sync::Arc;

use super::decl::{Cur, Fault, att_type, comment, element, external_id, instruction, notation};
use super::entity::{Budget, normalize_default};
use super::names::{is_name, is_name_start, name_run};
use super::{Malformed, Markup, ReadError, Step, XmlReader};

/// What the DOCTYPE declares that reading the document needs.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Dtd {
    /// General entities by name (the first declaration binds).
    pub(super) entities: HashMap<String, Entity>,
    /// Attributes declared per element type (qualified name), first declaration first.
    pub(super) attlists: HashMap<String, Vec<AttDef>>,
    /// WFC: Entity Declared does not apply (§4.1): the DTD has an external subset or
    /// parameter-entity references, and the document is not `standalone="yes"`.
    pub(super) open: bool,
    /// The external subset's system identifier.
    pub(super) external: Option<String>,
}

/// A general entity.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Entity {
    /// An internal entity: its replacement text (character references expanded).
    Internal {
        name: Arc<str>,
        text: Arc<str>,
        /// The text holds no `<`, `&` or `]]>`: it is character data as it stands.
        plain: bool,
    },
    /// An external entity, parsed or not (`NDATA`): never read.
    External { system: String, unparsed: bool },
}

/// One attribute of an attribute-list declaration.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct AttDef {
    pub name: String,
    /// Declared `CDATA`: values are not tokenised (§3.3.3).
    pub cdata: bool,
    /// The default value, normalised; `None` for `#REQUIRED` and `#IMPLIED`.
    pub default: Option<String>,
}

impl Dtd {
    /// Whether the DTD changes how the document reads: entities or attributes.
    pub(super) fn declares_anything(&self) -> bool {
        !self.entities.is_empty() || !self.attlists.is_empty()
    }
}

/// What an entity declaration declares.
enum Declared {
    General(Entity),
    Parameter(Pe),
}

/// A parameter entity.
enum Pe {
    Internal(Arc<str>),
    External,
}

/// Parses one DOCTYPE: its state, and the parameter entities known so far.
struct Parser<'b> {
    standalone: bool,
    dtd: Dtd,
    pes: HashMap<String, Pe>,
    /// Declarations are used (none after an unread parameter entity, §5.1).
    processing: bool,
    /// A parameter-entity reference occurred.
    pe_refs: bool,
    /// Parameter entities being included, for WFC: No Recursion.
    active: Vec<String>,
    budget: &'b mut Budget,
    /// Offset of the DOCTYPE in the document, for the expansion budget.
    base: u64,
}

/// Parses `doctype`, the whole `<!DOCTYPE … >`; `standalone` is the XML declaration's.
/// An error comes with its index in `doctype`.
pub(super) fn parse(
    doctype: &str,
    standalone: bool,
    budget: &mut Budget,
    base: u64,
) -> Result<Dtd, Fault> {
    let mut p = Parser {
        standalone,
        dtd: Dtd::default(),
        pes: HashMap::new(),
        processing: true,
        pe_refs: false,
        active: Vec::new(),
        budget,
        base,
    };
    let mut c = Cur {
        s: doctype,
        i: 0,
        end: "the end of the DOCTYPE",
    };
    c.expect("<!DOCTYPE", "a DOCTYPE")?;
    if c.space() == 0 || !c.peek().is_some_and(|b| is_name_start(b) || b >= 0x80) {
        return Err((
            super::decl::doctype("`<!DOCTYPE` must be followed by a space and the root element's name, as in `<!DOCTYPE rss>`".into()),
            0,
        ));
    }
    c.name("the DOCTYPE's root element name")?;
    let spaced = c.space() > 0;
    if spaced && matches!(c.peek(), Some(b'S' | b'P')) {
        let (system, _) = external_id(&mut c, false)?;
        p.dtd.external = system.map(str::to_string);
        p.dtd.open = !standalone;
        c.space();
    }
    if c.eat("[") {
        p.subset(&mut c, false)?;
        c.expect("]", "the internal subset")?;
        c.space();
    }
    if c.rest().starts_with("--") {
        return Err(c.syntax(
            "`--` in the DOCTYPE: XML has no SGML comments here; write a comment `<!-- … -->` inside the internal subset `[…]`, or remove it".into(),
        ));
    }
    if c.peek() != Some(b'>') || c.i + 1 != doctype.len() {
        let found = c.found();
        return Err(c.syntax(format!(
            "the DOCTYPE must end with `>` after its name, external identifier (`SYSTEM \"…\"` or `PUBLIC \"…\" \"…\"`) and internal subset `[…]`; found {found}"
        )));
    }
    p.dtd.open = (p.dtd.external.is_some() || p.pe_refs) && !standalone;
    Ok(p.dtd)
}

impl Parser<'_> {
    /// `intSubset` (§2.8): declarations, references to parameter entities, comments,
    /// processing instructions and white space, up to `]` (or the end of `c`, a
    /// parameter entity's text, when `nested`).
    fn subset(&mut self, c: &mut Cur<'_>, nested: bool) -> Result<(), Fault> {
        loop {
            c.space();
            let rest = c.rest();
            if rest.is_empty() {
                if nested {
                    return Ok(());
                }
                return Err(c.syntax("the internal subset `[…]` is never closed with `]`".into()));
            }
            if rest.starts_with(']') && !nested {
                return Ok(());
            }
            if rest.starts_with("<!--") {
                comment(c)?;
            } else if rest.starts_with("<?") {
                instruction(c)?;
            } else if rest.starts_with("<!ELEMENT") {
                element(c)?;
            } else if rest.starts_with("<!ATTLIST") {
                self.attlist(c)?;
            } else if rest.starts_with("<!ENTITY") {
                self.entity(c)?;
            } else if rest.starts_with("<!NOTATION") {
                notation(c)?;
            } else if rest.starts_with("<![") {
                return Err(c.syntax(
                    "a conditional section `<![INCLUDE[…]]>` or `<![IGNORE[…]]>` belongs in an external DTD, never in the DOCTYPE's internal subset (XML §3.4); remove it".into(),
                ));
            } else if rest.starts_with('%') {
                self.pe_reference(c)?;
            } else {
                let what = rest.chars().take(12).collect::<String>();
                return Err(c.syntax(format!(
                    "`{}` starts no declaration: the internal subset holds only `<!ELEMENT`, `<!ATTLIST`, `<!ENTITY`, `<!NOTATION`, comments, processing instructions and `%name;`",
                    what.escape_default()
                )));
            }
        }
    }

    /// `%name;` between declarations: an internal parameter entity's text is included
    /// as declarations; an external or undeclared one is not read (§5.1).
    fn pe_reference(&mut self, c: &mut Cur<'_>) -> Result<(), Fault> {
        let at = c.i;
        c.i += 1;
        let name = c.name("a parameter-entity reference's name")?;
        c.expect(";", "a parameter-entity reference `%name;`")?;
        self.pe_refs = true;
        self.dtd.open = !self.standalone;
        match self.pes.get(name) {
            Some(Pe::Internal(text)) => {
                let text = Arc::clone(text);
                let wrap = |error: Malformed| {
                    (
                        Malformed::InEntity {
                            name: format!("%{name}"),
                            error: Box::new(error),
                        },
                        at,
                    )
                };
                if self.active.iter().any(|a| a == name) {
                    return Err(wrap(Malformed::Syntax(msg!(
                        "xml-entity-recursion-parameter"
                    ))));
                }
                if self.active.len() >= self.budget.max_depth {
                    return Err((Malformed::EntitiesTooDeep(self.budget.max_depth), at));
                }
                self.budget
                    .spend(text.len(), self.base + at as u64)
                    .map_err(|m| (m, at))?;
                self.active.push(name.to_string());
                let mut inner = Cur {
                    s: &text,
                    i: 0,
                    end: "the end of the parameter entity's text",
                };
                let parsed = self.subset(&mut inner, true);
                self.active.pop();
                parsed.map_err(|(m, _)| match m {
                    Malformed::InEntity { .. }
                    | Malformed::Amplification { .. }
                    | Malformed::EntitiesTooDeep(_) => (m, at),
                    m => wrap(m),
                })
            }
            Some(Pe::External) => {
                self.processing = self.processing && self.standalone;
                Ok(())
            }
            None if self.standalone => Err((Malformed::UndefinedEntity(format!("%{name}")), at)),
            None => {
                self.processing = false;
                Ok(())
            }
        }
    }

    /// `<!ENTITY` (§4.2): general or parameter, internal or external.
    fn entity(&mut self, c: &mut Cur<'_>) -> Result<(), Fault> {
        c.i += "<!ENTITY".len();
        c.need_space("after `<!ENTITY`")?;
        let parameter = c.eat("%");
        if parameter {
            c.need_space("after `%` in a parameter-entity declaration")?;
        }
        let name = c.ncname("an entity's name")?;
        c.need_space("after the entity's name")?;
        let declared = if matches!(c.peek(), Some(b'"' | b'\'')) {
            let (raw, at) = c.literal("the entity's value")?;
            let text: Arc<str> = entity_value(raw, at)?.into();
            if parameter {
                Declared::Parameter(Pe::Internal(text))
            } else {
                let plain = !text.contains(['<', '&']) && !text.contains("]]>");
                Declared::General(Entity::Internal {
                    name: name.into(),
                    text,
                    plain,
                })
            }
        } else {
            let (system, _) = external_id(c, false)?;
            let system = system.unwrap_or_default().to_string();
            let before = c.i;
            let spaced = c.space() > 0;
            let mut unparsed = false;
            if c.rest().starts_with("NDATA") {
                if parameter {
                    return Err(c.syntax("a parameter entity cannot be unparsed (`NDATA`)".into()));
                }
                if !spaced {
                    return Err(c.syntax("white space is needed before `NDATA`".into()));
                }
                c.i += "NDATA".len();
                c.need_space("after `NDATA`")?;
                c.ncname("the notation's name")?;
                unparsed = true;
            } else {
                c.i = before;
            }
            if parameter {
                Declared::Parameter(Pe::External)
            } else {
                Declared::General(Entity::External { system, unparsed })
            }
        };
        c.space();
        c.expect(">", "an entity declaration")?;
        if self.processing {
            match declared {
                Declared::General(e) if !is_predefined(name) => {
                    self.dtd.entities.entry(name.to_string()).or_insert(e);
                }
                Declared::Parameter(pe) => {
                    self.pes.entry(name.to_string()).or_insert(pe);
                }
                Declared::General(_) => {}
            }
        }
        Ok(())
    }

    /// `<!ATTLIST` (§3.3).
    fn attlist(&mut self, c: &mut Cur<'_>) -> Result<(), Fault> {
        c.i += "<!ATTLIST".len();
        c.need_space("after `<!ATTLIST`")?;
        let element = c.name("the element type's name")?;
        loop {
            let spaced = c.space() > 0;
            if c.eat(">") {
                return Ok(());
            }
            if !spaced {
                return Err(
                    c.syntax("white space is needed before each attribute definition".into())
                );
            }
            let name = c.name("an attribute's name")?;
            c.need_space("after the attribute's name")?;
            let cdata = att_type(c)?;
            c.need_space("after the attribute's type")?;
            let default = if c.eat("#REQUIRED") || c.eat("#IMPLIED") {
                None
            } else {
                if c.eat("#FIXED") {
                    c.need_space("after `#FIXED`")?;
                }
                let (raw, at) = c.literal("the attribute's default value")?;
                if !self.processing {
                    check_literal(raw, at)?;
                    continue;
                }
                let mut value = String::new();
                normalize_default(
                    raw,
                    &mut value,
                    &self.dtd,
                    self.budget,
                    self.base + at as u64,
                )
                .map_err(|m| (m, at))?;
                if !cdata {
                    value = super::tag::tokenized(&value);
                }
                Some(value)
            };
            if self.processing {
                let defs = self.dtd.attlists.entry(element.to_string()).or_default();
                if !defs.iter().any(|d| d.name == name) {
                    defs.push(AttDef {
                        name: name.to_string(),
                        cdata,
                        default,
                    });
                }
            }
        }
    }
}

/// The five entities every document has; their declarations change nothing (§4.6).
fn is_predefined(name: &str) -> bool {
    matches!(name, "lt" | "gt" | "amp" | "apos" | "quot")
}

/// The replacement text of an internal entity from its literal value (§4.5): character
/// references are expanded, general-entity references kept as they are (included when
/// the entity is), line ends normalised (§2.11). A `%` is refused: a parameter-entity
/// reference cannot occur inside a declaration in the internal subset.
fn entity_value(raw: &str, at: usize) -> Result<String, Fault> {
    let mut out = String::with_capacity(raw.len());
    let mut i = 0;
    let b = raw.as_bytes();
    while i < b.len() {
        match b[i] {
            b'%' => {
                return Err((
                    super::decl::doctype("`%` in an entity's value: a parameter-entity reference cannot occur inside a declaration in the internal subset (XML §2.8, WFC: PEs in Internal Subset); write `&#37;` for a percent sign".into()),
                    at + i,
                ));
            }
            b'&' => {
                let end = reference_end(raw, i).ok_or_else(|| bad_reference(at + i))?;
                let name = &raw[i + 1..end];
                if name.starts_with('#') {
                    out.push(super::entity::char_reference(name).map_err(|m| (m, at + i))?);
                } else {
                    out.push_str(&raw[i..=end]);
                }
                i = end + 1;
            }
            b'\r' => {
                out.push('\n');
                i += if b.get(i + 1) == Some(&b'\n') { 2 } else { 1 };
            }
            _ => {
                let n = raw[i..].find(['%', '&', '\r']).unwrap_or(raw.len() - i);
                out.push_str(&raw[i..i + n]);
                i += n;
            }
        }
    }
    Ok(out)
}

/// The index of the `;` ending the reference that starts with the `&` at `i` in `s`, if
/// the reference is well-formed: `&Name;`, `&#digits;` or `&#xhex;`.
pub(super) fn reference_end(s: &str, i: usize) -> Option<usize> {
    let rest = &s[i + 1..];
    let len = if let Some(num) = rest.strip_prefix("#x") {
        2 + num.bytes().take_while(u8::is_ascii_hexdigit).count()
    } else if let Some(num) = rest.strip_prefix('#') {
        1 + num.bytes().take_while(u8::is_ascii_digit).count()
    } else {
        let name = name_run(rest);
        if !is_name(name) {
            return None;
        }
        name.len()
    };
    let digits = !rest.starts_with('#') || len > if rest.starts_with("#x") { 2 } else { 1 };
    (digits && rest.as_bytes().get(len) == Some(&b';')).then_some(i + 1 + len)
}

fn bad_reference(at: usize) -> Fault {
    (
        super::decl::doctype(
            "a bare `&` that starts no reference; write `&amp;`, `&name;` or `&#…;`".into(),
        ),
        at,
    )
}

/// Checks an attribute value's literal without using it: no `<`, and every `&` starts a
/// reference (§3.1 `AttValue`).
fn check_literal(raw: &str, at: usize) -> Result<(), Fault> {
    if let Some(i) = raw.find('<') {
        return Err((
            Malformed::BadCharacterData(msg!("xml-what-lt-in-value")),
            at + i,
        ));
    }
    let mut from = 0;
    while let Some(i) = raw[from..].find('&') {
        let end = reference_end(raw, from + i).ok_or_else(|| bad_reference(at + from + i))?;
        from = end + 1;
    }
    Ok(())
}

impl<R: Read> XmlReader<R> {
    /// `<!DOCTYPE …>` at the window's start: read whole, checked, its declarations kept.
    pub(super) fn doctype(&mut self, text_start: u64, start: u64) -> Result<Step, ReadError> {
        if self.root_seen || self.doctype_seen {
            let kind = Malformed::Syntax(if self.root_seen {
                msg!("xml-doctype-after-root")
            } else {
                msg!("xml-doctype-second")
            });
            return Err(self.err_at(kind, start));
        }
        self.doctype_seen = true;
        let end = self.doctype_end(text_start, start)?;
        let text = self
            .input
            .window()
            .get(..=end)
            .unwrap_or_default()
            .to_string();
        let mut budget = std::mem::take(&mut self.budget);
        let parsed = parse(&text, self.standalone, &mut budget, start);
        self.budget = budget;
        match parsed {
            Ok(dtd) => {
                self.dtd = Some(Arc::new(dtd));
                self.input.consume(end + 1);
                Ok(Step::Skip)
            }
            Err((kind, at)) => Err(self.err_at(kind, start + at as u64)),
        }
    }

    /// The index of the `>` that ends the DOCTYPE at the window's start: outside its
    /// literals, and after its internal subset, whose comments, processing instructions
    /// and literals may hold any of `[`, `]`, `>` and quotes.
    fn doctype_end(&mut self, text_start: u64, start: u64) -> Result<usize, ReadError> {
        #[derive(Clone, Copy, PartialEq)]
        enum In {
            /// Before the internal subset (or after it, when the flag is set).
            Head(bool),
            Subset,
            /// In a declaration of the subset.
            Decl,
            /// In a literal: its quote and where it returns to.
            Quote(u8, &'static In),
            Comment,
            Pi,
        }
        const HEAD: In = In::Head(false);
        const DECL: In = In::Decl;
        let mut at = HEAD;
        let mut i = 9;
        loop {
            let w = self.input.window().as_bytes();
            // Three bytes of look-ahead (`<!--`, `-->`, `?>`) unless the input ended.
            while i + 3 < w.len() {
                let b = w[i];
                match at {
                    In::Head(after) => match b {
                        b'"' | b'\'' if !after => at = In::Quote(b, &HEAD),
                        b'[' if !after => at = In::Subset,
                        b'>' => return Ok(i),
                        _ => {}
                    },
                    In::Subset => match b {
                        b']' => at = In::Head(true),
                        b'<' if w[i + 1..].starts_with(b"!--") => {
                            at = In::Comment;
                            i += 3;
                        }
                        b'<' if w[i + 1] == b'?' => at = In::Pi,
                        b'<' => at = In::Decl,
                        _ => {}
                    },
                    In::Decl => match b {
                        b'"' | b'\'' => at = In::Quote(b, &DECL),
                        b'>' => at = In::Subset,
                        _ => {}
                    },
                    In::Quote(q, back) if b == q => at = *back,
                    In::Quote(..) => {}
                    In::Comment if w[i..].starts_with(b"-->") => {
                        at = In::Subset;
                        i += 2;
                    }
                    In::Pi if w[i..].starts_with(b"?>") => {
                        at = In::Subset;
                        i += 1;
                    }
                    In::Comment | In::Pi => {}
                }
                i += 1;
            }
            if !self.more(text_start)? {
                // The last bytes: only the end of the DOCTYPE matters now.
                let w = self.input.window().as_bytes();
                if let Some(n) = w.get(i..).and_then(|t| t.iter().position(|&b| b == b'>')) {
                    return Ok(i + n);
                }
                return Err(self.truncated(Markup::Doctype, start));
            }
        }
    }
}
