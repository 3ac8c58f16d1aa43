//! The grammar of markup declarations in the DOCTYPE (XML 1.0 §2.5–§2.6, §3.2–§3.3.1,
//! §4.2.2, §4.7): element type declarations with their content models, attribute types,
//! notation declarations, external identifiers, comments and processing instructions,
//! over a cursor ([`Cur`]) into the text being parsed. What they declare is of no use to
//! reading the document, so they are only checked; `dtd.rs` keeps what is used.

use super::Malformed;
use super::names::{is_name, is_ncname, is_nmtoken, is_xml_space, name_run};
use crate::msg;

/// An error and the index in the text being parsed where it is.
pub(super) type Fault = (Malformed, usize);

/// The text being parsed: the DOCTYPE, or a parameter entity's replacement text.
pub(super) struct Cur<'s> {
    pub s: &'s str,
    pub i: usize,
    /// What its end is called in messages.
    pub end: &'static str,
}

impl<'s> Cur<'s> {
    pub(super) fn rest(&self) -> &'s str {
        self.s.get(self.i..).unwrap_or_default()
    }

    pub(super) fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.i).copied()
    }

    pub(super) fn eat(&mut self, what: &str) -> bool {
        let yes = self.rest().starts_with(what);
        if yes {
            self.i += what.len();
        }
        yes
    }

    /// Skips white space; how much there was.
    pub(super) fn space(&mut self) -> usize {
        let n = self
            .rest()
            .bytes()
            .position(|b| !is_xml_space(b))
            .unwrap_or(self.rest().len());
        self.i += n;
        n
    }

    pub(super) fn syntax(&self, message: String) -> Fault {
        (doctype(message), self.i)
    }

    /// Requires white space, saying what it separates.
    pub(super) fn need_space(&mut self, what: &str) -> Result<(), Fault> {
        if self.space() == 0 {
            return Err(self.syntax(format!("white space is needed {what}")));
        }
        Ok(())
    }

    /// Requires `what` here.
    pub(super) fn expect(&mut self, what: &str, context: &str) -> Result<(), Fault> {
        if self.eat(what) {
            return Ok(());
        }
        let found = self.found();
        Err(self.syntax(format!("{context}: expected `{what}`, found {found}")))
    }

    /// What is at the cursor, for a message.
    pub(super) fn found(&self) -> String {
        match self.rest().chars().next() {
            None => self.end.into(),
            Some(c) => format!("`{}`", c.escape_default()),
        }
    }

    /// A `Name` at the cursor.
    pub(super) fn name(&mut self, what: &str) -> Result<&'s str, Fault> {
        let name = name_run(self.rest());
        if !is_name(name) {
            let found = if name.is_empty() {
                self.found()
            } else {
                format!("`{name}`")
            };
            return Err(self.syntax(format!(
                "{what} must be a name (a letter or `_` first, then letters, digits, `-`, `.`, `_`), found {found}"
            )));
        }
        self.i += name.len();
        Ok(name)
    }

    /// A name that Namespaces in XML 1.0 §7 keeps free of colons (entities, notations,
    /// processing instruction targets).
    pub(super) fn ncname(&mut self, what: &str) -> Result<&'s str, Fault> {
        let at = self.i;
        let name = self.name(what)?;
        if !is_ncname(name) {
            return Err((
                doctype(format!(
                    "{what} `{name}` contains a colon, which Namespaces in XML forbids in the names of entities, notations and processing instructions"
                )),
                at,
            ));
        }
        Ok(name)
    }

    /// A quoted literal; returns its text between the quotes and where that starts.
    pub(super) fn literal(&mut self, what: &str) -> Result<(&'s str, usize), Fault> {
        let q = match self.peek() {
            Some(q @ (b'"' | b'\'')) => q,
            _ => {
                let found = self.found();
                return Err(self.syntax(format!("{what} must be in quotes, found {found}")));
            }
        };
        let start = self.i + 1;
        let Some(len) = memchr::memchr(q, &self.s.as_bytes()[start..]) else {
            return Err(self.syntax(format!("{what} opens with a quote that is never closed")));
        };
        self.i = start + len + 1;
        Ok((&self.s[start..start + len], start))
    }
}

/// `ExternalID` (§4.2.2), or with `public_only` also a notation's `PublicID` (§4.7):
/// returns the system literal (absent only for a `PublicID`).
pub(super) fn external_id<'s>(
    c: &mut Cur<'s>,
    public_only: bool,
) -> Result<(Option<&'s str>, bool), Fault> {
    if c.eat("SYSTEM") {
        c.need_space("after `SYSTEM`")?;
        let (system, _) = c.literal("the system identifier")?;
        return Ok((Some(system), false));
    }
    if c.eat("PUBLIC") {
        c.need_space("after `PUBLIC`")?;
        let (public, at) = c.literal("the public identifier")?;
        if let Some(bad) = public.chars().position(|ch| !is_pubid_char(ch)) {
            let ch = public.chars().nth(bad).unwrap_or(' ');
            return Err((
                doctype(format!(
                    "`{}` is not allowed in a public identifier (letters, digits, space and -'()+,./:=?;!*#@$_% are)",
                    ch.escape_default()
                )),
                at,
            ));
        }
        let before = c.i;
        let spaced = c.space() > 0;
        if public_only && (!spaced || !matches!(c.peek(), Some(b'"' | b'\''))) {
            c.i = before;
            return Ok((None, true));
        }
        if !spaced {
            return Err(c.syntax(
                "white space is needed between the public and the system identifier".into(),
            ));
        }
        let (system, _) = c.literal("the system identifier")?;
        return Ok((Some(system), true));
    }
    let found = c.found();
    Err(c.syntax(format!(
        "expected `SYSTEM \"…\"` or `PUBLIC \"…\" \"…\"`, found {found}"
    )))
}

/// §2.3 `PubidChar`.
pub(super) fn is_pubid_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, ' ' | '\r' | '\n') || "-'()+,./:=?;!*#@$_%".contains(c)
}

/// `AttType` (§3.3.1); true for `CDATA`.
pub(super) fn att_type(c: &mut Cur<'_>) -> Result<bool, Fault> {
    if c.eat("CDATA") {
        return Ok(true);
    }
    for t in [
        "IDREFS", "IDREF", "ID", "ENTITIES", "ENTITY", "NMTOKENS", "NMTOKEN",
    ] {
        if c.eat(t) {
            return Ok(false);
        }
    }
    let notation = c.eat("NOTATION");
    if notation {
        c.need_space("after `NOTATION`")?;
    }
    if !c.eat("(") {
        let found = c.found();
        return Err(c.syntax(format!(
            "an attribute's type is CDATA, ID, IDREF, IDREFS, ENTITY, ENTITIES, NMTOKEN, NMTOKENS, NOTATION (…) or (a|b|…); found {found}"
        )));
    }
    loop {
        c.space();
        if notation {
            c.name("a notation's name")?;
        } else {
            let token = name_run(c.rest());
            if !is_nmtoken(token) {
                let found = c.found();
                return Err(c.syntax(format!(
                    "an enumerated value must be a name token, found {found}"
                )));
            }
            c.i += token.len();
        }
        c.space();
        if c.eat(")") {
            return Ok(false);
        }
        c.expect("|", "an enumerated type `(a|b|…)`")?;
    }
}

/// `<!ELEMENT` (§3.2).
pub(super) fn element(c: &mut Cur<'_>) -> Result<(), Fault> {
    c.i += "<!ELEMENT".len();
    c.need_space("after `<!ELEMENT`")?;
    c.name("the element type's name")?;
    c.need_space("after the element type's name")?;
    if !(c.eat("EMPTY") || c.eat("ANY")) {
        c.expect(
            "(",
            "an element's content model (EMPTY, ANY, (#PCDATA|…)* or (a, b | …))",
        )?;
        c.space();
        if c.eat("#PCDATA") {
            mixed(c)?;
        } else {
            group(c, 0)?;
        }
    }
    c.space();
    c.expect(">", "an element type declaration")
}

/// The rest of `Mixed` (§3.2.2) after `( #PCDATA`.
pub(super) fn mixed(c: &mut Cur<'_>) -> Result<(), Fault> {
    let mut names = 0;
    loop {
        c.space();
        if c.eat(")") {
            if names > 0 && !c.eat("*") {
                return Err(c.syntax("mixed content with element names ends with `)*`".into()));
            }
            if names == 0 {
                c.eat("*");
            }
            return Ok(());
        }
        c.expect("|", "mixed content `(#PCDATA | a | b)*`")?;
        c.space();
        c.name("an element type's name")?;
        names += 1;
    }
}

/// The rest of a `choice` or `seq` (§3.2.1) after its `(`: content particles separated
/// by one kind of connector, `|` (at least two particles) or `,`.
pub(super) fn group(c: &mut Cur<'_>, depth: usize) -> Result<(), Fault> {
    if depth > 256 {
        return Err(c.syntax("content models are nested too deep".into()));
    }
    let mut connector = None;
    let mut particles = 0;
    loop {
        c.space();
        if c.eat("(") {
            group(c, depth + 1)?;
        } else {
            if c.rest().starts_with("#PCDATA") {
                return Err(c.syntax(
                    "`#PCDATA` comes only first in mixed content, as in `(#PCDATA | a)*`".into(),
                ));
            }
            c.name("an element type's name")?;
        }
        if matches!(c.peek(), Some(b'?' | b'*' | b'+')) {
            c.i += 1;
        }
        particles += 1;
        c.space();
        if c.eat(")") {
            if connector == Some(b'|') && particles < 2 {
                return Err(c.syntax("a choice has two particles or more".into()));
            }
            if matches!(c.peek(), Some(b'?' | b'*' | b'+')) {
                c.i += 1;
            }
            return Ok(());
        }
        match (c.peek(), connector) {
            (Some(b @ (b'|' | b',')), None) => connector = Some(b),
            (Some(b), Some(k)) if b == k => {}
            (Some(b'|' | b','), Some(k)) => {
                return Err(c.syntax(format!(
                    "`,` and `|` are mixed in one group; put parentheses around the part joined by `{}`",
                    char::from(k)
                )));
            }
            _ => {
                let found = c.found();
                return Err(c.syntax(format!(
                    "a content model goes on with `,`, `|` or `)`, found {found}"
                )));
            }
        }
        c.i += 1;
    }
}

/// `<!NOTATION` (§4.7).
pub(super) fn notation(c: &mut Cur<'_>) -> Result<(), Fault> {
    c.i += "<!NOTATION".len();
    c.need_space("after `<!NOTATION`")?;
    c.ncname("a notation's name")?;
    c.need_space("after the notation's name")?;
    external_id(c, true)?;
    c.space();
    c.expect(">", "a notation declaration")
}

/// `<!--…-->` (§2.5).
pub(super) fn comment(c: &mut Cur<'_>) -> Result<(), Fault> {
    let at = c.i;
    let body = c.i + 4;
    let Some(end) = memchr::memmem::find(&c.s.as_bytes()[body..], b"--") else {
        return Err((comment_never_closed(), at));
    };
    if c.s.as_bytes().get(body + end + 2) != Some(&b'>') {
        return Err((Malformed::Syntax(msg!("xml-comment-dashes")), at));
    }
    c.i = body + end + 3;
    Ok(())
}

pub(super) fn comment_never_closed() -> Malformed {
    Malformed::Syntax(msg!("xml-doctype-comment"))
}

/// `<?target …?>` (§2.6) in the DTD.
pub(super) fn instruction(c: &mut Cur<'_>) -> Result<(), Fault> {
    let at = c.i;
    c.i += 2;
    let target = name_run(c.rest());
    if let Some(kind) = bad_target(target) {
        return Err((kind, at));
    }
    c.i += target.len();
    if !c.rest().starts_with("?>") && c.space() == 0 {
        return Err(c.syntax(
            "a processing instruction's target is followed by white space or `?>`".into(),
        ));
    }
    match memchr::memmem::find(c.rest().as_bytes(), b"?>") {
        Some(end) => {
            c.i += end + 2;
            Ok(())
        }
        None => Err((Malformed::Syntax(msg!("xml-pi-unclosed")), at)),
    }
}

/// What is wrong with a processing instruction's target (§2.6 `PITarget`), if anything.
pub(super) fn bad_target(target: &str) -> Option<Malformed> {
    if target.eq_ignore_ascii_case("xml") {
        return Some(Malformed::Syntax(msg!("xml-decl-first")));
    }
    if !is_name(target) {
        return Some(Malformed::Syntax(msg!("xml-pi-target", target = target)));
    }
    if target.contains(':') {
        return Some(Malformed::Syntax(msg!("xml-pi-colon", target = target)));
    }
    None
}

/// A syntax error inside the DOCTYPE (its declarations, in the detail of XML 1.0's
/// grammar): described in English only, inside a sentence of the reader's language.
pub(super) fn doctype(detail: String) -> Malformed {
    Malformed::Syntax(msg!("xml-doctype", detail = detail))
}
