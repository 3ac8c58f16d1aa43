//! Stubs: in a worker's folder, a dump package kept in the object store only is a stub
//! of a few lines (what it is, its length and SHA-256), the same bytes in every folder.

use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::PublishError;

/// The first line of a stub of a dump package kept in the object store only.
const MAGIC: &str = "plikt: a dump package kept in the object store only";
/// A stub is at most this long; a package is longer (a ZIP has at least its manifest).
pub(super) const MAX: u64 = 512;

/// A document kept in the object store as a manifest and a stub list it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Entry {
    pub(super) length: u64,
    pub(super) sha256: String,
}

/// Whether the document `rel` is kept in the object store only: a dump package.
pub(super) fn only_in_store(rel: &str) -> bool {
    rel.ends_with(".zip")
}

/// The stub of a package kept in the object store only: what it is, its length and its
/// SHA-256; the same bytes in every worker's folder.
fn bytes(entry: &Entry) -> String {
    format!(
        "{MAGIC}; plikt serves it from there.\nlength: {}\nsha256: {}\n",
        entry.length, entry.sha256
    )
}

/// The package a stub at `path` stands for (`None`: `path` is not a stub).
pub(super) fn read(path: &Path) -> Option<Entry> {
    if fs::metadata(path).ok()?.len() > MAX {
        return None;
    }
    let text = fs::read_to_string(path).ok()?;
    let mut lines = text.strip_prefix(MAGIC)?.lines().skip(1);
    let length = lines.next()?.strip_prefix("length: ")?.parse().ok()?;
    let sha256 = lines.next()?.strip_prefix("sha256: ")?;
    (sha256.len() == 64 && sha256.bytes().all(|b| b.is_ascii_hexdigit())).then(|| Entry {
        length,
        sha256: sha256.to_string(),
    })
}

/// Replaces the file at `path` by a stub of `entry`.
pub(super) fn write(path: &Path, entry: &Entry) -> Result<(), PublishError> {
    let bytes = bytes(entry);
    super::files::atomic_write(path, |out| std::io::Write::write_all(out, bytes.as_bytes()))
}

/// The length of the package a stub at `path` stands for (`None`: not a stub).
pub(super) fn length(path: &Path) -> Option<u64> {
    read(path).map(|e| e.length)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stub_stands_for_its_package_and_nothing_else_is_taken_for_one() {
        let tmp = tempfile::Builder::new()
            .prefix("plikt-stub-")
            .tempdir()
            .unwrap();
        let dir = tmp.path();
        let path = dir.join("2026-11-25.zip");
        let entry = Entry {
            length: 123_456_789,
            sha256: "ab".repeat(32),
        };
        // A package, even a tiny one, is no stub.
        fs::write(&path, b"PK\x05\x06\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0").unwrap();
        assert_eq!(read(&path), None);
        write(&path, &entry).unwrap();
        let written = fs::metadata(&path).unwrap().len();
        assert!(written <= MAX, "{written}");
        assert_eq!(read(&path), Some(entry.clone()));
        assert_eq!(length(&path), Some(123_456_789));
        // The same bytes in every worker's folder: nothing of the folder or the time.
        assert_eq!(fs::read_to_string(&path).unwrap(), bytes(&entry));
        // What begins like a stub but lacks a digest, or is too long, is none.
        fs::write(&path, format!("{MAGIC}\nlength: 12\nsha256: xyz\n")).unwrap();
        assert_eq!(read(&path), None);
        let long = format!("{}{}", bytes(&entry), " ".repeat(MAX as usize));
        fs::write(&path, long).unwrap();
        assert_eq!(read(&path), None);
        // Packages only: their manifests and the dumps that list them stay in the folder.
        assert!(only_in_store("resourcesync/a/changedump/2026-11-25.zip"));
        assert!(only_in_store(
            "resourcesync/a/resourcedump/0123456789abcdef.zip"
        ));
        assert!(!only_in_store(
            "resourcesync/a/changedump/2026-11-25-manifest.xml"
        ));
        assert!(!only_in_store("resourcesync/a/changedump/.2026-11-25.meta"));
    }
}
