//! Source lines for the text report, read back from a file in one streaming pass.
//!
//! Only the lines that findings point at are kept, and of each only a window around
//! the columns concerned, so a minified single-line feed of any size costs little.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, BufRead, BufReader, Read};

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
    /// More characters precede / follow on the line.
    pub cut_before: bool,
    /// More characters follow on the line.
    pub cut_after: bool,
}

/// Source lines by line number.
#[derive(Debug, Default)]
pub struct Snippets {
    lines: BTreeMap<u32, Stretch>,
}

impl Snippets {
    /// Reads the windows around `positions` (line, column) from `input` (raw feed bytes
    /// in any encoding the validator reads).
    pub fn read<R: Read>(input: R, positions: impl IntoIterator<Item = (u32, u32)>) -> io::Result<Self> {
        let mut wanted: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
        for (line, column) in positions {
            wanted.entry(line).or_default().insert(column);
        }
        let mut lines = BTreeMap::new();
        let Some(&last) = wanted.keys().next_back() else { return Ok(Self { lines }) };
        let mut r = BufReader::new(decoded(input));
        let mut line = 1u32;
        let mut column = 1u32;
        let mut char_column = 1u32;
        let mut current: Option<(Vec<(u32, u32)>, Vec<u8>, Stretch)> = None;
        let start_line = |line: u32, wanted: &BTreeMap<u32, BTreeSet<u32>>| {
            wanted.get(&line).map(|cols| {
                let ranges = cols.iter().map(|c| (c.saturating_sub(CONTEXT).max(1), c + 2 * CONTEXT)).collect();
                (ranges, Vec::new(), Stretch { first_column: 0, ..Stretch::default() })
            })
        };
        current = current.or_else(|| start_line(1, &wanted));
        loop {
            let buf = match r.fill_buf() {
                Ok(b) => b,
                Err(_) => break, // a decoding error: show what was read
            };
            if buf.is_empty() {
                break;
            }
            let n = buf.len();
            match &mut current {
                None => {
                    // Skip to the next newline quickly.
                    match buf.iter().position(|&b| b == b'\n') {
                        Some(i) => {
                            r.consume(i + 1);
                            line += 1;
                            column = 1;
                            if line > last {
                                break;
                            }
                            current = start_line(line, &wanted);
                        }
                        None => r.consume(n),
                    }
                    continue;
                }
                Some((ranges, bytes, stretch)) => {
                    let mut used = 0;
                    let mut ended = false;
                    for &b in buf {
                        used += 1;
                        if b == b'\n' {
                            ended = true;
                            break;
                        }
                        if b == b'\r' {
                            continue;
                        }
                        // Column of the character this byte belongs to.
                        let lead = b & 0xC0 != 0x80;
                        if lead {
                            char_column = column;
                            column += 1;
                        }
                        if ranges.iter().any(|(a, z)| (*a..=*z).contains(&char_column)) {
                            if stretch.first_column == 0 {
                                stretch.first_column = char_column;
                                stretch.cut_before = char_column > 1;
                            }
                            bytes.push(if b == b'\t' || b < 0x20 { b' ' } else { b });
                        } else if stretch.first_column != 0 && lead {
                            stretch.cut_after = true;
                        }
                    }
                    r.consume(used);
                    if ended {
                        if let Some((_, bytes, mut stretch)) = current.take() {
                            stretch.text = String::from_utf8_lossy(&bytes).into_owned();
                            lines.insert(line, stretch);
                        }
                        line += 1;
                        column = 1;
                        if line > last {
                            break;
                        }
                        current = start_line(line, &wanted);
                    }
                }
            }
        }
        if let Some((_, bytes, mut stretch)) = current.take() {
            stretch.text = String::from_utf8_lossy(&bytes).into_owned();
            lines.insert(line, stretch);
        }
        Ok(Self { lines })
    }

    /// The stretch of `line`, if read.
    pub fn line(&self, line: u32) -> Option<&Stretch> {
        self.lines.get(&line)
    }
}
