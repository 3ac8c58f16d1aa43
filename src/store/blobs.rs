//! Content-addressed blob store: `blobs/ab/<sha256>` under the data folder (256
//! folders: few enough that creating them costs nothing, and ext4's hashed directories
//! keep millions of entries per folder fast).
//!
//! A blob is written to `tmp/`, fsynced, renamed into place, and its folder fsynced, so
//! a crash at any instant leaves either no blob or a complete one. Identical bytes are
//! stored once: a second copy is dropped when the name already exists.

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
                        blobs: self.clone(),
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
    blobs: Blobs,
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

    /// Flushes the bytes to disk (fsync) and computes the digests. The blob is not in
    /// the store until [`Written::commit`].
    pub fn finish(mut self) -> io::Result<Written> {
        let file = self.file.take().expect("open until finish");
        file.sync_all()?;
        drop(file);
        let digests = std::mem::take(&mut self.digester).finish();
        Ok(Written {
            digests,
            tmp: std::mem::replace(&mut self.tmp, TmpFile(None)),
            blobs: self.blobs.clone(),
        })
    }
}

/// A fully written, fsynced temporary file with its digests.
#[derive(Debug)]
pub struct Written {
    /// The digests.
    pub digests: Digests,
    tmp: TmpFile,
    blobs: Blobs,
}

impl Written {
    /// Moves the blob into place (rename, then fsync of its folder). If a blob with the
    /// same SHA-256 exists, this copy is dropped: identical bytes are stored once.
    pub fn commit(mut self) -> io::Result<PathBuf> {
        let target = self.blobs.path(&self.digests.sha256);
        let dir = target.parent().expect("blob paths have folders");
        if !dir.exists() {
            fs::create_dir_all(dir)?;
            // Make the new folder itself durable.
            sync_dir(&self.blobs.root)?;
        }
        let tmp = self.tmp.0.take().expect("not yet committed");
        if target.exists() {
            fs::remove_file(&tmp)?;
        } else {
            fs::rename(&tmp, &target)?;
        }
        sync_dir(dir)?;
        Ok(target)
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
        for _ in 0..2 {
            let mut w = blobs.writer().unwrap();
            w.write(&Bytes::from_static(b"hello ")).unwrap();
            w.write(&Bytes::from_static(b"world")).unwrap();
            let written = w.finish().unwrap();
            assert_eq!(written.digests.length, 11);
            paths.push(written.commit().unwrap());
        }
        assert_eq!(paths[0], paths[1]);
        assert_eq!(fs::read(&paths[0]).unwrap(), b"hello world");
        assert_eq!(blobs.list().unwrap().len(), 1);
        // An abandoned writer leaves nothing behind.
        let mut w = blobs.writer().unwrap();
        w.write(&Bytes::from_static(b"partial")).unwrap();
        drop(w);
        assert_eq!(fs::read_dir(dir.join("tmp")).unwrap().count(), 0);
        fs::remove_dir_all(&dir).unwrap();
    }
}
