//! Printers of validation reports, one file per format behind one trait (STYLE habit 8).

mod json;
mod junit;
mod snippet;
mod text;

use std::io::{self, Write};
use std::path::PathBuf;

pub use json::Json;
pub use junit::Junit;
pub use snippet::Snippets;
pub use text::Text;

use crate::profile::Report;

/// Where a report's feed came from.
#[derive(Debug, Clone)]
pub struct Source {
    /// How to name it: a path, a URL, or `-` for standard input.
    pub name: String,
    /// A file holding the same bytes, for showing source lines.
    pub copy: Option<PathBuf>,
}

/// A report format.
pub trait Printer {
    /// Writes `report` about `source` to `out`.
    fn print(&self, report: &Report, source: &Source, out: &mut dyn Write) -> io::Result<()>;
}
