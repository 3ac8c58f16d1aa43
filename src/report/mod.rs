//! Printers of validation reports, one file per format behind one trait (STYLE habit 8).

mod json;
mod junit;
mod snippet;
mod text;

use std::io::{self, Write};

pub use json::Json;
pub use junit::Junit;
pub use snippet::Snippets;
pub use text::Text;

use crate::profile::{Options, ProfileOptions, Report};
use crate::xml::ReaderLimits;

/// Where a report's feed came from.
#[derive(Debug)]
pub struct Source {
    /// How to name it: a path, a URL, or `-` for standard input.
    pub name: String,
    /// A file holding the same bytes, for showing source lines (read from its start).
    pub copy: Option<std::fs::File>,
}

/// A report format.
pub trait Printer {
    /// Writes `report` about `source` to `out`.
    fn print(&self, report: &Report, source: &Source, out: &mut dyn Write) -> io::Result<()>;
}

/// The validation options of `plikt validate` and of the web service (one validation
/// path): the feed's size limit, whether R112's `dcterms:isPartOf` is required, and the
/// findings kept per rule and severity — all for JUnit, which lists every finding.
pub fn options(
    max_bytes: u64,
    require_is_part_of: bool,
    max_findings: usize,
    junit: bool,
) -> Options {
    let mut limits = ReaderLimits::default();
    limits.decode.max_bytes = max_bytes;
    Options {
        limits,
        profile: ProfileOptions { require_is_part_of },
        max_findings_per_rule: if junit { 0 } else { max_findings },
        ..Options::default()
    }
}
