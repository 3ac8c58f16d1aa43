//! What the scanner reads from: the decoder's window, or the replacement text of the
//! internal entities being expanded (XML §4.4.2 "Included"), innermost first.
//!
//! A reference to an internal entity whose replacement text holds markup pushes that
//! text here; the scanner then reads it with the same code as the document, and pops it
//! when it is used up. The decoder reads the entity's text in place of its window
//! ([`Decoder::divert`]), so reading costs the document nothing; while an entity is read,
//! every position is the position of the outermost reference's `&`, and no more input
//! is read.

use std::io::Read;
use std::ops::Range;
use std::sync::Arc;

use super::Pos;
use super::decode::{DecodeError, Decoder};

/// The replacement text of one entity being read.
#[derive(Debug)]
pub(super) struct Expansion {
    /// The entity's name.
    pub name: Arc<str>,
    /// Open elements when the reference was read: the text must close what it opens.
    pub depth: usize,
    /// The decoder's text and read index outside this entity, while it reads the entity.
    outer: (String, usize),
}

/// The decoder and the entities being expanded; see the module docs.
#[derive(Debug)]
pub(super) struct Input<R> {
    pub dec: Decoder<R>,
    stack: Vec<Expansion>,
    /// Offset and position of the outermost reference being expanded.
    reference: (u64, Pos),
}

impl<R: Read> Input<R> {
    pub fn new(dec: Decoder<R>) -> Self {
        Self {
            dec,
            stack: Vec::new(),
            reference: (0, Pos::default()),
        }
    }

    /// The text not yet read: complete characters only.
    #[inline]
    pub fn window(&self) -> &str {
        self.dec.window()
    }

    /// Consumes `n` bytes of the window (ending on a character boundary).
    #[inline]
    pub fn consume(&mut self, n: usize) {
        self.dec.consume(n);
    }

    /// Where [`Input::window`] starts, as an index for [`Input::text`].
    #[inline]
    pub fn index(&self) -> usize {
        self.dec.index()
    }

    /// Text consumed since the last [`Input::more`], between indexes from
    /// [`Input::index`].
    #[inline]
    pub fn text(&self, range: Range<usize>) -> &str {
        self.dec.text(range)
    }

    /// Offset in the decoded document of the next byte read. Inside an entity it means
    /// nothing but its order: [`Input::resolve`] gives the reference's position for any
    /// offset then, and [`Input::more`] reads nothing.
    #[inline]
    pub fn offset(&self) -> u64 {
        self.dec.offset()
    }

    /// How much of the document has been read: inside an entity, up to its reference.
    pub fn direct(&self) -> u64 {
        if self.stack.is_empty() {
            self.dec.offset()
        } else {
            self.reference.0
        }
    }

    /// The position of decoded `offset` ([`Decoder::resolve`]); inside an entity, the
    /// position of the outermost reference.
    #[inline]
    pub fn resolve(&mut self, offset: u64) -> Pos {
        if self.stack.is_empty() {
            self.dec.resolve(offset)
        } else {
            self.reference.1
        }
    }

    /// More text after the window ([`Decoder::more`]); an entity's text has no more.
    #[inline]
    pub fn more(&mut self, keep: u64) -> Result<bool, DecodeError> {
        if self.stack.is_empty() {
            self.dec.more(keep)
        } else {
            Ok(false)
        }
    }

    /// Whether the document itself is read, not an entity.
    #[inline]
    pub fn in_document(&self) -> bool {
        self.stack.is_empty()
    }

    /// The entities being read, outermost first.
    #[inline]
    pub fn expansions(&self) -> &[Expansion] {
        &self.stack
    }

    /// Reads `text`, the replacement text of entity `name`, before the rest; `offset`
    /// is where its reference starts, `depth` the number of open elements.
    pub fn push(&mut self, name: Arc<str>, text: &str, offset: u64, depth: usize) {
        if self.stack.is_empty() {
            let pos = self.dec.resolve(offset);
            self.reference = (offset, pos);
        }
        let outer = self.dec.divert(text);
        self.stack.push(Expansion { name, depth, outer });
    }

    /// Stops reading the innermost entity, which is used up.
    pub fn pop(&mut self) {
        if let Some(e) = self.stack.pop() {
            self.dec.restore(e.outer);
        }
    }
}
