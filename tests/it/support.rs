//! Shared helpers of the integration tests.

use std::path::{Path, PathBuf};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `fixtures/feeds/*.xml`, sorted.
pub fn feed_fixtures() -> Vec<PathBuf> {
    let dir = root().join("fixtures/feeds");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "xml"))
        .collect();
    v.sort();
    v
}

/// One line of a `.expected` file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Expected {
    pub rule: String,
    pub severity: String,
    pub pos: Option<(u32, u32)>,
}

/// Parses `NAME.expected` beside `feed`.
pub fn expected(feed: &Path) -> Vec<Expected> {
    let path = feed.with_extension("expected");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut parts = l.split_whitespace();
            let rule = parts.next().expect("rule").to_string();
            let severity = parts.next().unwrap_or_else(|| panic!("{}: no severity in `{l}`", path.display())).to_string();
            let pos = parts.next().map(|p| {
                let (a, b) = p.split_once(':').unwrap_or_else(|| panic!("{}: bad position `{p}`", path.display()));
                (a.parse().expect("line"), b.parse().expect("column"))
            });
            Expected { rule, severity, pos }
        })
        .collect()
}
