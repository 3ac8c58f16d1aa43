//! References (XML 1.0 §4.1, §4.4): character references, the five predefined entities,
//! and the internal general entities of the DOCTYPE, expanded in content and in attribute
//! values (with attribute-value normalisation, §3.3.3) under a bound on how much they
//! may expand, like expat's and libxml2's.
//!
//! The bound is expat's (`XML_SetBillionLaughsAttackProtectionMaximumAmplification`):
//! once the document's own text and the expanded text together pass
//! [`ReaderLimits::amplification_threshold`] (8 MiB), the expanded text may be at most
//! [`ReaderLimits::max_amplification`] (100) times the document's text read so far;
//! entity references nest at most [`ReaderLimits::max_entity_depth`] (40, libxml2's)
//! deep. Billion laughs stops after about 8 MiB of expansion with a clear `G-XML` error.
//! External entities are never fetched: a reference to one is a finding, not a request.
//!
//! Kept in an import circle with `dtd` and `tag`, as the grammar is: references expand
//! the entities the DOCTYPE declares.

use crate::msg;
use std::io::Read;
use std::sync::Arc;

use super::dtd::{Dtd, Entity, reference_end};
use super::{Malformed, ReadError, ReaderLimits, Step, XmlReader, decode::is_xml_char};

/// How much entity expansion has produced so far, against the limits.
#[derive(Debug, Clone, Default)]
pub(super) struct Budget {
    expanded: u64,
    max_amplification: u64,
    threshold: u64,
    /// How deep entity references may nest.
    pub max_depth: usize,
}

impl Budget {
    pub fn new(limits: &ReaderLimits) -> Self {
        Self {
            expanded: 0,
            max_amplification: limits.max_amplification,
            threshold: limits.amplification_threshold,
            max_depth: limits.max_entity_depth,
        }
    }

    /// Counts `n` more bytes of expanded text, with `direct` bytes of the document read.
    pub fn spend(&mut self, n: usize, direct: u64) -> Result<(), Malformed> {
        self.expanded = self.expanded.saturating_add(n as u64);
        let total = direct.saturating_add(self.expanded);
        if total > self.threshold && total > direct.saturating_mul(self.max_amplification) {
            return Err(Malformed::Amplification {
                factor: self.max_amplification,
            });
        }
        Ok(())
    }
}

/// The character of a character reference, `#123` or `#x7B` (§4.1 `CharRef`, WFC: Legal
/// Character), given without `&` and `;`.
pub(super) fn char_reference(name: &str) -> Result<char, Malformed> {
    let code = match name.strip_prefix("#x") {
        Some(hex) if !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
            u32::from_str_radix(hex, 16).ok()
        }
        Some(_) => None,
        None => name
            .strip_prefix('#')
            .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|d| d.parse::<u32>().ok()),
    };
    match code.and_then(char::from_u32) {
        Some(c) if is_xml_char(c) => Ok(c),
        _ => Err(Malformed::BadCharRef(name.to_string())),
    }
}

/// One of XML's five predefined entities.
pub(super) fn predefined(name: &str) -> Option<char> {
    Some(match name {
        "lt" => '<',
        "gt" => '>',
        "amp" => '&',
        "apos" => '\'',
        "quot" => '"',
        _ => return None,
    })
}

/// An attribute value as written in a start tag, with references resolved and white
/// space normalised (§3.3.3), appended to `out`. `direct` is how much of the document
/// has been read, for the budget.
pub(super) fn attribute_value(
    raw: &str,
    out: &mut String,
    dtd: Option<&Dtd>,
    budget: &mut Budget,
    direct: u64,
) -> Result<(), Malformed> {
    if !raw
        .bytes()
        .any(|b| matches!(b, b'&' | b'<' | b'\t' | b'\n' | b'\r'))
    {
        out.push_str(raw);
        return Ok(());
    }
    Normalizer {
        dtd,
        budget,
        direct,
        active: Vec::new(),
    }
    .run(raw, out, true)
}

/// A default value of an attribute-list declaration, normalised as
/// [`attribute_value`] does, with the entities `dtd` declares so far.
pub(super) fn normalize_default(
    raw: &str,
    out: &mut String,
    dtd: &Dtd,
    budget: &mut Budget,
    direct: u64,
) -> Result<(), Malformed> {
    Normalizer {
        dtd: Some(dtd),
        budget,
        direct,
        active: Vec::new(),
    }
    .run(raw, out, true)
}

/// Attribute-value normalisation through entities.
struct Normalizer<'a> {
    dtd: Option<&'a Dtd>,
    budget: &'a mut Budget,
    direct: u64,
    /// Entities being expanded, for WFC: No Recursion.
    active: Vec<&'a str>,
}

impl<'a> Normalizer<'a> {
    /// Appends `raw` normalised; `literal` for text of the document itself, where a
    /// line end CR LF is one character (§2.11), not text of an entity.
    fn run(&mut self, raw: &str, out: &mut String, literal: bool) -> Result<(), Malformed> {
        let mut rest = raw;
        while let Some(i) = rest.find(['&', '<', '\t', '\n', '\r']) {
            out.push_str(&rest[..i]);
            let b = rest.as_bytes()[i];
            match b {
                b'<' => return Err(Malformed::BadCharacterData(msg!("xml-what-lt-in-value"))),
                b'&' => {
                    let Some(end) = reference_end(rest, i) else {
                        let kind = if rest[i + 1..].starts_with('#') {
                            let end = rest[i..].find(';').map_or(rest.len(), |e| i + e);
                            Malformed::BadCharRef(rest[i + 1..end].to_string())
                        } else {
                            Malformed::Syntax(msg!("xml-amp-in-value"))
                        };
                        return Err(kind);
                    };
                    let name = &rest[i + 1..end];
                    rest = &rest[end + 1..];
                    if name.starts_with('#') {
                        out.push(char_reference(name)?);
                    } else if let Some(c) = predefined(name) {
                        out.push(c);
                    } else {
                        self.entity(name, out)?;
                    }
                    continue;
                }
                b'\r' if literal && rest.as_bytes().get(i + 1) == Some(&b'\n') => {
                    rest = &rest[i + 2..];
                    out.push(' ');
                    continue;
                }
                _ => out.push(' '),
            }
            rest = &rest[i + 1..];
        }
        out.push_str(rest);
        Ok(())
    }

    /// `&name;` in an attribute value.
    fn entity(&mut self, name: &str, out: &mut String) -> Result<(), Malformed> {
        let Some(dtd) = self.dtd else {
            return Err(Malformed::UndefinedEntity(name.to_string()));
        };
        match dtd.entities.get(name) {
            Some(Entity::Internal {
                name: key, text, ..
            }) => {
                let in_entity = |error: Malformed| Malformed::InEntity {
                    name: name.to_string(),
                    error: Box::new(error),
                };
                if self.active.contains(&&**key) {
                    return Err(in_entity(Malformed::Syntax(msg!("xml-entity-recursion"))));
                }
                if self.active.len() >= self.budget.max_depth {
                    return Err(Malformed::EntitiesTooDeep(self.budget.max_depth));
                }
                self.budget.spend(text.len(), self.direct)?;
                if text.contains('<') {
                    return Err(in_entity(Malformed::Syntax(msg!("xml-entity-lt"))));
                }
                if text.contains("]]>") {
                    return Err(in_entity(Malformed::BadCharacterData(msg!(
                        "xml-what-cdata-end"
                    ))));
                }
                self.active.push(key);
                let expanded = self.run(text, out, false);
                self.active.pop();
                expanded.map_err(|e| match e {
                    Malformed::InEntity { .. }
                    | Malformed::Amplification { .. }
                    | Malformed::EntitiesTooDeep(_) => e,
                    e => in_entity(e),
                })
            }
            Some(Entity::External { unparsed: true, .. }) => Err(unparsed(name)),
            Some(Entity::External { system, .. }) => Err(Malformed::Syntax(msg!(
                "xml-external-in-value",
                name = name,
                system = system
            ))),
            None if dtd.open => Err(Malformed::UndeclaredEntity {
                name: name.to_string(),
                dtd: dtd.external.clone(),
            }),
            None => Err(Malformed::UndefinedEntity(name.to_string())),
        }
    }
}

/// A reference to an unparsed entity (WFC: Parsed Entity).
fn unparsed(name: &str) -> Malformed {
    Malformed::Syntax(msg!("xml-unparsed-entity", name = name))
}

impl<R: Read> XmlReader<R> {
    /// `&name;` in content for an entity other than the predefined ones: an internal
    /// entity's text is read next, plain text at once; `end` is the index of the `;` in
    /// the window, `start` the offset of the `&`.
    pub(super) fn entity_reference(&mut self, end: usize, start: u64) -> Result<Step, ReadError> {
        let Some(dtd) = self.dtd.clone() else {
            let name = self
                .input
                .window()
                .get(1..end)
                .unwrap_or_default()
                .to_string();
            return Err(self.err_at(Malformed::UndefinedEntity(name), start));
        };
        // The name is looked up where it is; it is copied only for a message.
        let name = self.input.window().get(1..end).unwrap_or_default();
        let kind = match dtd.entities.get(name) {
            Some(Entity::Internal {
                name: key,
                text,
                plain,
            }) => {
                let depth = self.input.expansions().len();
                if self.input.expansions().iter().any(|e| e.name == *key) {
                    Malformed::Syntax(msg!("xml-entity-self", name = name))
                } else if depth >= self.limits.max_entity_depth {
                    Malformed::EntitiesTooDeep(self.limits.max_entity_depth)
                } else {
                    let direct = self.input.direct();
                    if let Err(kind) = self.budget.spend(text.len(), direct) {
                        return Err(self.err_at(kind, start));
                    }
                    self.input.consume(end + 1);
                    if *plain {
                        self.text.clear();
                        self.text.push_str(text);
                        return Ok(Step::Text);
                    }
                    self.input
                        .push(Arc::clone(key), text, start, self.open.len());
                    return Ok(Step::Skip);
                }
            }
            Some(Entity::External { unparsed: true, .. }) => unparsed(name),
            Some(Entity::External { system, .. }) => Malformed::ExternalEntity {
                name: name.to_string(),
                system: system.clone(),
            },
            None if dtd.open => Malformed::UndeclaredEntity {
                name: name.to_string(),
                dtd: dtd.external.clone(),
            },
            None => Malformed::UndefinedEntity(name.to_string()),
        };
        Err(self.err_at(kind, start))
    }

    /// The replacement text of the innermost entity is used up: it must have closed
    /// every element it opened (§4.3.2, WFC: Parsed Entity).
    pub(super) fn end_of_entity(&mut self) -> Result<Step, ReadError> {
        let depth = self.input.expansions().last().map_or(0, |e| e.depth);
        if let Some((_, at)) = self.open.get(depth) {
            let open = self.open_names.get(*at..).unwrap_or_default();
            let open = open.get(..self.open.get(depth + 1).map_or(open.len(), |(_, e)| e - at));
            let kind = Malformed::Syntax(msg!(
                "xml-entity-open-element",
                name = open.unwrap_or_default()
            ));
            let at = self.input.offset();
            return Err(self.err_at(kind, at));
        }
        self.input.pop();
        Ok(Step::Skip)
    }
}
