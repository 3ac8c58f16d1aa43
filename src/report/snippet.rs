//! Source lines for the text report, read back from a file in one streaming pass.
//!
//! Only the lines that findings point at are kept, and of each only a window around
//! the columns concerned, so a minified single-line feed of any size costs little.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, BufRead, Read};

use crate::xml::decoded;

/// Characters shown before a column (twice as many after it).
const CONTEXT: u32 = 50;

/// A stretch of one source line: the characters from `first_column` on.
#[derive(Debug, Clone, Default)]
pub struct Stretch {
    /// Column of the first character kept.
    pub first_column: u32,
    /// The characters (tabs and control characters shown as spaces).
    pub text: String,
    /// More characters precede on the line.
    pub cut_before: bool,
    /// More characters follow on the line.
    pub cut_after: bool,
}

/// Source lines by line number.
#[derive(Debug, Default)]
pub struct Snippets {
    lines: BTreeMap<u32, Stretch>,
}

/// A wanted line being read.
struct Open {
    /// Column ranges to keep.
    ranges: Vec<(u32, u32)>,
    bytes: Vec<u8>,
    first_column: u32,
    cut_after: bool,
    /// Column of the next character.
    column: u32,
}

impl Open {
    fn new(columns: &BTreeSet<u32>) -> Self {
        let ranges = columns
            .iter()
            .map(|c| (c.saturating_sub(CONTEXT).max(1), c + 2 * CONTEXT))
            .collect();
        Self {
            ranges,
            bytes: Vec::new(),
            first_column: 0,
            cut_after: false,
            column: 1,
        }
    }

    /// Takes the bytes of one line (without the newline).
    fn feed(&mut self, chunk: &[u8]) {
        for &b in chunk {
            if b == b'\r' {
                continue;
            }
            if b & 0xC0 != 0x80 {
                self.column += 1; // a new character starts
            }
            let column = self.column - 1;
            if self.ranges.iter().any(|(a, z)| (*a..=*z).contains(&column)) {
                if self.first_column == 0 {
                    self.first_column = column;
                }
                self.bytes
                    .push(if b == b'\t' || b < 0x20 { b' ' } else { b });
            } else if self.first_column != 0 {
                self.cut_after = true;
            }
        }
    }

    fn close(self) -> Stretch {
        Stretch {
            first_column: self.first_column.max(1),
            cut_before: self.first_column > 1,
            cut_after: self.cut_after,
            text: String::from_utf8_lossy(&self.bytes).into_owned(),
        }
    }
}

impl Snippets {
    /// Reads the windows around `positions` (line, column) from `input` (raw feed bytes
    /// in any encoding the validator reads). Stops quietly where the input cannot be
    /// decoded: the lines before it are still shown.
    pub fn read<R: Read>(
        input: R,
        positions: impl IntoIterator<Item = (u32, u32)>,
    ) -> io::Result<Self> {
        let mut wanted: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
        for (line, column) in positions {
            wanted.entry(line).or_default().insert(column);
        }
        let mut lines = BTreeMap::new();
        let Some(&last) = wanted.keys().next_back() else {
            return Ok(Self { lines });
        };
        let mut r = decoded(input);
        let mut line = 1u32;
        let mut open = wanted.get(&line).map(Open::new);
        while let Ok(buf) = r.fill_buf() {
            if buf.is_empty() {
                break;
            }
            let (chunk, ended) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (&buf[..i], true),
                None => (buf, false),
            };
            let used = chunk.len() + usize::from(ended);
            if let Some(o) = open.as_mut() {
                o.feed(chunk);
            }
            r.consume(used);
            if ended {
                if let Some(o) = open.take() {
                    lines.insert(line, o.close());
                }
                line += 1;
                if line > last {
                    break;
                }
                open = wanted.get(&line).map(Open::new);
            }
        }
        if let Some(o) = open.take() {
            lines.insert(line, o.close());
        }
        Ok(Self { lines })
    }

    /// The stretch of `line`, if read.
    pub fn line(&self, line: u32) -> Option<&Stretch> {
        self.lines.get(&line)
    }
}
