//! Writing documents to `data_dir/www/`: each replaced atomically (a temporary file
//! beside it, fsync, rename, folder fsync), so a Destination reads the old document or
//! the new one, never half of one; list documents stream their body and get their
//! `completed` time filled in at the end; small sidecar files (`.<name>.meta`) record
//! what listing a document elsewhere needs without reading it back.

use std::fs::{self, File};
use std::io::{self, BufWriter, Cursor, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::{DocumentWriter, Ln, MAX_BYTES, MAX_ENTRIES, Md, PublishError, Root};
use crate::store::sync_dir;

/// An I/O error at `path` as a [`PublishError`].
pub(super) fn write_err(path: &Path) -> impl Fn(io::Error) -> PublishError + use<> {
    let path = path.to_path_buf();
    move |source| PublishError::Write {
        path: path.clone(),
        source,
    }
}

/// Writes `path` atomically: a temporary file beside it, fsync, rename, folder fsync.
/// A reader sees the old document or the new one, never half of one.
pub(super) fn atomic_write(
    path: &Path,
    write: impl FnOnce(&mut Draft) -> io::Result<()>,
) -> Result<(), PublishError> {
    atomic_replace(path, |out| write(out).map(|()| true)).map(drop)
}

/// The temporary file a document is written to beside `path` before it is renamed into
/// place (`.name.<pid>.tmp`: a publish and the object store's copy skip such names).
pub(super) fn tmp_beside(path: &Path) -> PathBuf {
    path.with_file_name(format!(
        ".{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("doc"),
        std::process::id()
    ))
}

/// Whether `name` is a temporary file ([`tmp_beside`]) of this process.
pub(super) fn is_own_tmp(name: &str) -> bool {
    name.ends_with(&format!(".{}.tmp", std::process::id()))
}

/// `path` filled by `fill` on a temporary file beside it, then renamed into place (its
/// folder made first): a reader never sees half of it.
pub(super) fn fill_then_rename(
    path: &Path,
    fill: impl FnOnce(&Path) -> Result<(), PublishError>,
) -> Result<(), PublishError> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(write_err(parent))?;
    }
    let tmp = tmp_beside(path);
    let result = fill(&tmp).and_then(|()| fs::rename(&tmp, path).map_err(write_err(path)));
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Documents up to this size are drafted in memory.
const IN_MEMORY: u64 = 1 << 20;

/// A document being written: in memory while small (most are), so that one whose bytes
/// did not change costs no file at all; past [`IN_MEMORY`] in its temporary file. On a
/// publish that writes a set again most documents are as they were, and creating and
/// removing a file for each was most of its time (issue 35 §6).
pub(super) struct Draft {
    memory: Cursor<Vec<u8>>,
    file: Option<BufWriter<File>>,
    tmp: PathBuf,
}

impl Draft {
    fn new(tmp: PathBuf) -> Self {
        Self {
            memory: Cursor::new(Vec::new()),
            file: None,
            tmp,
        }
    }

    /// The temporary file, made and filled with what is in memory.
    fn spill(&mut self) -> io::Result<&mut BufWriter<File>> {
        if self.file.is_none() {
            // Readable too: compared with the document in place before it replaces it.
            let file = fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(&self.tmp)?;
            let mut out = BufWriter::new(file);
            out.write_all(self.memory.get_ref())?;
            out.seek(SeekFrom::Start(self.memory.position()))?;
            self.memory = Cursor::new(Vec::new());
            self.file = Some(out);
        }
        Ok(self.file.as_mut().expect("made above"))
    }
}

impl Write for Draft {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.file.is_none() && self.memory.position() + buf.len() as u64 <= IN_MEMORY {
            return self.memory.write(buf);
        }
        self.spill()?.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.file {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

impl Seek for Draft {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        match &mut self.file {
            Some(f) => f.seek(to),
            None => self.memory.seek(to),
        }
    }
}

/// [`atomic_write`], where `write` may return false: the new content is dropped and
/// `path` left as it was. Returns whether `path` was replaced.
pub(super) fn atomic_replace(
    path: &Path,
    write: impl FnOnce(&mut Draft) -> io::Result<bool>,
) -> Result<bool, PublishError> {
    let dir = path.parent().expect("documents live in folders");
    fs::create_dir_all(dir).map_err(write_err(path))?;
    let tmp = tmp_beside(path);
    let result = (|| {
        let mut draft = Draft::new(tmp.clone());
        if !write(&mut draft)? {
            return Ok(false);
        }
        // The same bytes as the document in place: it stays, with its modification
        // time, so its ETag holds and a Destination polling it gets 304 Not Modified;
        // nor is it synced, renamed or copied to the object store again (a publish
        // that writes a set again writes most of its documents as they were).
        let file = match draft.file {
            None => {
                let bytes = draft.memory.into_inner();
                if same_as(&bytes, path)? {
                    return Ok(false);
                }
                let mut file = File::create(&tmp)?;
                file.write_all(&bytes)?;
                file
            }
            Some(out) => {
                let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
                if same_bytes(&file, path)? {
                    return Ok(false);
                }
                file
            }
        };
        file.sync_all()?;
        fs::rename(&tmp, path)?;
        sync_dir(dir).map(|()| true)
    })();
    if !matches!(result, Ok(true)) {
        let _ = fs::remove_file(&tmp);
    }
    result.map_err(write_err(path))
}

/// Whether the file at `path` holds `bytes` (false if there is none).
fn same_as(bytes: &[u8], path: &Path) -> io::Result<bool> {
    match File::open(path) {
        Ok(f) if f.metadata()?.len() != bytes.len() as u64 => Ok(false),
        Ok(mut f) => {
            let mut old = Vec::with_capacity(bytes.len());
            io::Read::read_to_end(&mut f, &mut old)?;
            Ok(old == bytes)
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// Whether `written` (a new document, just written) holds the same bytes as the file at
/// `path` (false if there is none). Compared by length first, then in chunks up to the
/// first difference.
fn same_bytes(written: &File, path: &Path) -> io::Result<bool> {
    let len = written.metadata()?.len();
    let mut old = match File::open(path) {
        Ok(f) if f.metadata()?.len() == len => f,
        Ok(_) => return Ok(false),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    let mut new = written;
    new.seek(SeekFrom::Start(0))?;
    // Both are `len` bytes long: compared chunk by chunk, up to the first difference.
    let (mut a, mut b) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
    let mut left = len;
    while left > 0 {
        let n = left.min(a.len() as u64) as usize;
        io::Read::read_exact(&mut new, &mut a[..n])?;
        io::Read::read_exact(&mut old, &mut b[..n])?;
        if a[..n] != b[..n] {
            return Ok(false);
        }
        left -= n as u64;
    }
    Ok(true)
}

/// Replaces `to` atomically with a copy of `from` (a live document that is also at its
/// dated URL).
pub(super) fn atomic_copy(from: &Path, to: &Path) -> Result<(), PublishError> {
    let mut input = File::open(from).map_err(write_err(from))?;
    atomic_write(to, |out| io::copy(&mut input, out).map(drop))
}

/// Writes a small sidecar file of lines (atomically).
pub(super) fn write_sidecar(path: &Path, lines: &[&str]) -> Result<(), PublishError> {
    atomic_write(path, |out| {
        for l in lines {
            writeln!(out, "{l}")?;
        }
        Ok(())
    })
}

/// The lines of a sidecar file, if it is there.
pub(super) fn read_sidecar(path: &Path) -> Option<Vec<String>> {
    fs::read_to_string(path)
        .ok()
        .map(|t| t.lines().map(str::to_string).collect())
}

/// The days whose `.<YYYY-MM-DD>.<listing>` sidecar is among the file names `names`
/// (a Resource Dump snapshot's list of packages, a Change Dump day's marker, a Resource
/// List snapshot's list of parts), oldest first.
pub(super) fn marked_days(names: &[String], listing: &str) -> Vec<String> {
    let suffix = format!(".{listing}");
    let mut days: Vec<String> = names
        .iter()
        .filter_map(|name| {
            let day = name.strip_prefix('.')?.strip_suffix(suffix.as_str())?;
            super::layout::is_day(day).then(|| day.to_string())
        })
        .collect();
    days.sort();
    days
}

/// The names of the files in `folder` (none if it is not there).
pub(super) fn names_in(folder: &Path) -> Vec<String> {
    fs::read_dir(folder)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect()
}

/// Removes `<prefix>NNNNN.xml` parts numbered above `keep` from `dir`.
pub(super) fn remove_parts(dir: &Path, prefix: &str, keep: u64) {
    if let Ok(entries) = fs::read_dir(dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            let n: Option<u64> = name
                .strip_prefix(prefix)
                .and_then(|n| n.strip_suffix(".xml"))
                .and_then(|n| n.parse().ok());
            if n.is_some_and(|n| n > keep) {
                let _ = fs::remove_file(e.path());
            }
        }
    }
}

/// A `completed` time of the same width, filled in when the document's body is written.
pub(super) const COMPLETED_PLACEHOLDER: &str = "0000-00-00T00:00:00.000Z";

/// Where the `completed` placeholder sits in a document whose `<rs:md>` ends with it.
pub(super) fn completed_offset(root: Root, lns: &[Ln], md: &Md) -> io::Result<u64> {
    let header = DocumentWriter::new(Vec::new(), root, lns, md)?.bytes();
    Ok(header - "\"/>\n".len() as u64 - COMPLETED_PLACEHOLDER.len() as u64)
}

/// A list document [`list_document`] wrote.
#[derive(Debug)]
pub(super) struct ListWritten {
    /// Its entries.
    pub entries: u64,
    /// Its `at`.
    pub at: String,
    /// Its `completed`.
    pub completed: String,
}

/// Writes a document whose `<rs:md>` has `at` (now) and `completed` (when the body is
/// written): `completed` goes in as a placeholder of the same width and is filled in
/// at the end, so the body streams to disk. `body` returns false when what it wrote
/// is what the document held already: the new one is dropped and the old one kept
/// (`None`).
pub(super) fn list_document(
    path: &Path,
    root: Root,
    lns: &[Ln],
    capability: &str,
    body: &mut dyn FnMut(&mut DocumentWriter<&mut Draft>) -> io::Result<bool>,
) -> Result<Option<ListWritten>, PublishError> {
    let at = crate::store::now().to_string();
    let md = Md::capability(capability)
        .with("at", at.clone())
        .with("completed", COMPLETED_PLACEHOLDER);
    let completed_at = completed_offset(root, lns, &md).map_err(write_err(path))?;
    let mut entries = 0u64;
    let mut completed = String::new();
    let mut too_large = false;
    // The body was kept (the document in place may still be left, if byte for byte
    // the same).
    let mut kept = false;
    let result = atomic_replace(path, |out| {
        let mut w = DocumentWriter::new(&mut *out, root, lns, &md)?;
        if !body(&mut w)? {
            return Ok(false);
        }
        kept = true;
        entries = w.entries() as u64;
        if w.entries() > MAX_ENTRIES || w.bytes() > MAX_BYTES {
            // Refused before the rename: the previous document stays in place.
            too_large = true;
            return Err(io::Error::other("over the Sitemap limits"));
        }
        w.finish()?;
        completed = crate::store::now().to_string();
        out.seek(SeekFrom::Start(completed_at))?;
        out.write_all(completed.as_bytes())?;
        out.seek(SeekFrom::End(0)).map(|_| true)
    });
    if too_large {
        return Err(PublishError::TooLarge {
            path: path.to_path_buf(),
        });
    }
    result?;
    Ok(kept.then_some(ListWritten {
        entries,
        at,
        completed,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A document drafted in memory and one past [`IN_MEMORY`] (in its temporary
    /// file) alike: written whole, a patch after a seek back lands in place, the same
    /// bytes again leave the file untouched, and no temporary file is left.
    #[test]
    fn drafts_in_memory_and_spilled_are_written_and_compared_alike() {
        let dir = tempfile::tempdir().unwrap();
        for size in [1000, IN_MEMORY as usize + 1000] {
            let path = dir.path().join(format!("doc-{size}.xml"));
            let body = |out: &mut Draft| {
                out.write_all(b"HEAD")?;
                out.write_all(&vec![b'x'; size])?;
                out.seek(SeekFrom::Start(0))?;
                out.write_all(b"head")?;
                out.seek(SeekFrom::End(0)).map(|_| true)
            };
            assert!(atomic_replace(&path, body).unwrap(), "{size}: written");
            let bytes = fs::read(&path).unwrap();
            assert_eq!(bytes.len(), size + 4);
            assert!(bytes.starts_with(b"headx") && bytes.ends_with(b"xx"));
            let modified = fs::metadata(&path).unwrap().modified().unwrap();
            assert!(
                !atomic_replace(&path, body).unwrap(),
                "{size}: the same bytes"
            );
            assert_eq!(fs::metadata(&path).unwrap().modified().unwrap(), modified);
            let changed = |out: &mut Draft| out.write_all(&vec![b'y'; size]).map(|()| true);
            assert!(
                atomic_replace(&path, changed).unwrap(),
                "{size}: other bytes"
            );
            assert_eq!(fs::read(&path).unwrap(), vec![b'y'; size]);
        }
        let names = names_in(dir.path());
        assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
    }
}
