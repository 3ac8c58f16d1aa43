//! Content-addressed blob store: `blobs/ab/<sha256>` under the data folder (256
//! folders: few enough that creating them costs nothing, and ext4's hashed directories
//! keep millions of entries per folder fast).
//!
//! A blob is written to `tmp/` and committed in a batch ([`Blobs::commit`]): the batch's
//! bytes are made durable, then renamed into place, then the names are made durable. So a
//! crash at any instant leaves either no blob or a complete one under a blob name, and
//! the catalog, which records a blob only after its commit, never names a missing one.
//! Batching matters for small files: on Linux one `syncfs(2)` per batch replaces an fsync
//! (and a disk cache flush) per file. Identical bytes are stored once: a second copy is
//! dropped when the name already exists.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;

use super::digest::{Digester, Digests};

/// The blob folders of one data folder.
#[derive(Debug, Clone)]
pub struct Blobs {
    root: PathBuf,
    tmp: PathBuf,
}

impl Blobs {
    /// Opens (and creates) `data_dir/blobs` and `data_dir/tmp`.
    pub fn open(data_dir: &Path) -> io::Result<Self> {
        let root = data_dir.join("blobs");
        let tmp = data_dir.join("tmp");
        fs::create_dir_all(&root)?;
        fs::create_dir_all(&tmp)?;
        Ok(Self { root, tmp })
    }

    /// Where the blob with this SHA-256 lives.
    pub fn path(&self, sha256: &str) -> PathBuf {
        self.root.join(&sha256[..2.min(sha256.len())]).join(sha256)
    }

    /// Moves a batch of written blobs into place, durably: (1) their bytes reach the
    /// disk, (2) they are renamed to `blobs/ab/<sha256>`, (3) the new names reach the
    /// disk. Only then may anything (the catalog) record them. A blob whose name exists
    /// already is dropped: identical bytes are stored once. Returns the blobs' paths.
    pub fn commit(&self, batch: Vec<Written>) -> io::Result<Vec<PathBuf>> {
        if batch.is_empty() {
            return Ok(Vec::new());
        }
        let tmp_files: Vec<&Path> = batch.iter().map(Written::path).collect();
        self.sync_files(&tmp_files)?;
        let mut new_folders = false;
        let mut folders = std::collections::BTreeSet::new();
        let mut paths = Vec::with_capacity(batch.len());
        for mut w in batch {
            let target = self.path(&w.digests.sha256);
            let dir = target
                .parent()
                .expect("blob paths have folders")
                .to_path_buf();
            if !dir.exists() {
                fs::create_dir_all(&dir)?;
                new_folders = true;
            }
            let tmp = w.tmp.0.take().expect("not yet committed");
            if target.exists() {
                fs::remove_file(&tmp)?;
            } else {
                fs::rename(&tmp, &target)?;
                folders.insert(dir);
            }
            paths.push(target);
        }
        if new_folders {
            folders.insert(self.root.clone());
        }
        let folders: Vec<&Path> = folders.iter().map(PathBuf::as_path).collect();
        self.sync_files(&folders)?;
        Ok(paths)
    }

    /// Makes these files' (or folders') contents durable: one `syncfs(2)` of the data
    /// folder's file system on Linux, an fsync of each elsewhere.
    fn sync_files(&self, files: &[&Path]) -> io::Result<()> {
        #[cfg(target_os = "linux")]
        {
            let _ = files;
            let root = File::open(&self.root)?;
            rustix::fs::syncfs(&root)?;
        }
        #[cfg(not(target_os = "linux"))]
        for f in files {
            File::open(f)?.sync_all()?;
        }
        Ok(())
    }

    /// Removes temporary files left by a crash. Call only while holding the data
    /// folder's lock (no other writer is running).
    pub fn clean_tmp(&self) -> io::Result<usize> {
        let mut n = 0;
        for e in fs::read_dir(&self.tmp)? {
            let e = e?;
            if e.file_type()?.is_file() {
                fs::remove_file(e.path())?;
                n += 1;
            }
        }
        Ok(n)
    }

    /// A new blob being written.
    pub fn writer(&self) -> io::Result<BlobWriter> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = self.tmp.join(format!("{}-{n}.part", std::process::id()));
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(file) => {
                    return Ok(BlobWriter {
                        file: Some(file),
                        tmp: TmpFile(Some(path)),
                        digester: Digester::new(),
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Every blob file on disk: (SHA-256 from its name, path). For `plikt audit`.
    pub fn list(&self) -> io::Result<Vec<(String, PathBuf)>> {
        let mut out = Vec::new();
        for a in fs::read_dir(&self.root)? {
            let a = a?.path();
            if !a.is_dir() {
                continue;
            }
            for f in fs::read_dir(&a)? {
                let f = f?.path();
                if let Some(name) = f.file_name().and_then(|n| n.to_str()) {
                    out.push((name.to_string(), f.clone()));
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// Re-reads a blob and computes its digests (`plikt audit`).
    pub fn digest(&self, sha256: &str) -> io::Result<Digests> {
        super::digest::digest_file(&self.path(sha256))
    }
}

/// A temporary file removed on drop unless it was renamed into place.
#[derive(Debug)]
struct TmpFile(Option<PathBuf>);

impl Drop for TmpFile {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = fs::remove_file(p);
        }
    }
}

/// A blob being written: bytes go to a temporary file and both digests at once.
/// Dropped without [`Written::commit`], the temporary file is removed.
#[derive(Debug)]
pub struct BlobWriter {
    file: Option<File>,
    tmp: TmpFile,
    digester: Digester,
}

impl BlobWriter {
    /// Appends a chunk.
    pub fn write(&mut self, chunk: &Bytes) -> io::Result<()> {
        self.file
            .as_mut()
            .expect("open until finish")
            .write_all(chunk)?;
        self.digester.update(chunk);
        Ok(())
    }

    /// Bytes written so far.
    pub fn bytes(&self) -> u64 {
        self.digester.bytes()
    }

    /// Closes the temporary file and computes the digests. The blob is not in the store
    /// (nor durable) until [`Blobs::commit`].
    pub fn finish(mut self) -> io::Result<Written> {
        let file = self.file.take().expect("open until finish");
        drop(file);
        let digests = std::mem::take(&mut self.digester).finish();
        Ok(Written {
            digests,
            tmp: std::mem::replace(&mut self.tmp, TmpFile(None)),
        })
    }
}

/// A fully written temporary file with its digests, waiting for [`Blobs::commit`].
/// Dropped without a commit, the temporary file is removed.
#[derive(Debug)]
pub struct Written {
    /// The digests.
    pub digests: Digests,
    tmp: TmpFile,
}

impl Written {
    /// The temporary file, for checks that read the bytes back before the commit.
    pub fn path(&self) -> &Path {
        self.tmp.0.as_deref().expect("not yet committed")
    }
}

/// fsync of a folder, so a rename or a new entry in it survives a crash.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_bytes_are_stored_once_and_tmp_is_cleaned() {
        let dir = std::env::temp_dir().join(format!("plikt-blobs-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let blobs = Blobs::open(&dir).unwrap();
        let mut paths = Vec::new();
        // Twice in one batch, then again in a batch of its own.
        for n in [2, 1] {
            let mut batch = Vec::new();
            for _ in 0..n {
                let mut w = blobs.writer().unwrap();
                w.write(&Bytes::from_static(b"hello ")).unwrap();
                w.write(&Bytes::from_static(b"world")).unwrap();
                let written = w.finish().unwrap();
                assert_eq!(written.digests.length, 11);
                batch.push(written);
            }
            paths.extend(blobs.commit(batch).unwrap());
        }
        assert_eq!(paths.len(), 3);
        assert!(paths.iter().all(|p| *p == paths[0]));
        assert_eq!(fs::read(&paths[0]).unwrap(), b"hello world");
        assert_eq!(blobs.list().unwrap().len(), 1);
        // An abandoned writer, or a written blob never committed, leaves nothing behind.
        let mut w = blobs.writer().unwrap();
        w.write(&Bytes::from_static(b"partial")).unwrap();
        drop(w);
        let mut w = blobs.writer().unwrap();
        w.write(&Bytes::from_static(b"wrong bytes")).unwrap();
        drop(w.finish().unwrap());
        assert_eq!(fs::read_dir(dir.join("tmp")).unwrap().count(), 0);
        fs::remove_dir_all(&dir).unwrap();
    }
}
