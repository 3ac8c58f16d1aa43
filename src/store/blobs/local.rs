//! The local folder: `blobs/ab/<sha256>` under the data folder (256 folders: few enough
//! that creating them costs nothing, and ext4's hashed directories keep millions of
//! entries per folder fast).
//!
//! A blob is written to `tmp/` and committed in a batch ([`Local::commit`]): the batch's
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

/// The blob folders of one data folder.
#[derive(Debug, Clone)]
pub(super) struct Local {
    root: PathBuf,
    tmp: PathBuf,
    /// `root`, held open: every blob served is opened beneath it ([`open_in`]).
    dir: std::sync::Arc<File>,
}

impl Local {
    /// Opens (and creates) `data_dir/blobs` and `data_dir/tmp`.
    pub(super) fn open(data_dir: &Path) -> io::Result<Self> {
        let root = data_dir.join("blobs");
        let tmp = data_dir.join("tmp");
        fs::create_dir_all(&root)?;
        fs::create_dir_all(&tmp)?;
        let dir = std::sync::Arc::new(File::open(&root)?);
        Ok(Self { root, tmp, dir })
    }

    /// The folder of the blobs.
    pub(super) fn root(&self) -> &Path {
        &self.root
    }

    /// The folder of the blobs being written.
    pub(super) fn tmp(&self) -> &Path {
        &self.tmp
    }

    /// Where the blob with this SHA-256 lives.
    pub(super) fn path(&self, sha256: &str) -> PathBuf {
        self.root.join(relative(sha256))
    }

    /// Opens the blob for reading, never through a symlink that leaves the blob folder
    /// ([`open_beneath`]).
    pub(super) fn open_blob(&self, sha256: &str) -> io::Result<File> {
        open_in(&self.dir, &self.root, &relative(sha256))
    }

    /// Moves a batch of written blobs (SHA-256, temporary file) into place, durably:
    /// (1) their bytes reach the disk, (2) they are renamed to `blobs/ab/<sha256>`, (3)
    /// the new names reach the disk. Only then may anything (the catalog) record them. A
    /// blob whose name exists already is dropped: identical bytes are stored once.
    pub(super) fn commit(&self, batch: Vec<(String, TmpFile)>) -> io::Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let tmp_files: Vec<&Path> = batch.iter().map(|(_, t)| t.path()).collect();
        self.sync_files(&tmp_files)?;
        let mut new_folders = false;
        let mut folders = std::collections::BTreeSet::new();
        for (sha256, mut tmp) in batch {
            let target = self.path(&sha256);
            let dir = target
                .parent()
                .expect("blob paths have folders")
                .to_path_buf();
            if !dir.exists() {
                fs::create_dir_all(&dir)?;
                new_folders = true;
            }
            let tmp = tmp.0.take().expect("not yet committed");
            if target.exists() {
                fs::remove_file(&tmp)?;
            } else {
                fs::rename(&tmp, &target)?;
                folders.insert(dir);
            }
        }
        if new_folders {
            folders.insert(self.root.clone());
        }
        let folders: Vec<&Path> = folders.iter().map(PathBuf::as_path).collect();
        self.sync_files(&folders)
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
    pub(super) fn clean_tmp(&self) -> io::Result<usize> {
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

    /// The temporary files now, with their age. A harvest may be writing beside: a file
    /// it renamed into place or removed between the listing and its age is not one.
    pub(super) fn leftovers(&self) -> io::Result<Vec<String>> {
        let mut out = Vec::new();
        for e in fs::read_dir(&self.tmp)? {
            let e = e?;
            let meta = match e.metadata() {
                Ok(m) => m,
                Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
                Err(err) => return Err(err),
            };
            let age = meta
                .modified()
                .ok()
                .and_then(|t| t.elapsed().ok())
                .map_or(0, |d| d.as_secs());
            out.push(format!(
                "{}: temporary file, {age} s old",
                e.path().display()
            ));
        }
        out.sort();
        Ok(out)
    }

    /// A new temporary file to write a blob to.
    pub(super) fn writer(&self) -> io::Result<(File, TmpFile)> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = self.tmp.join(format!("{}-{n}.part", std::process::id()));
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(file) => return Ok((file, TmpFile(Some(path)))),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Every blob: (its SHA-256, path), a folder (`ab/`) at a time, each sorted.
    pub(super) fn list_pages<E: From<super::BlobError>>(
        &self,
        mut f: impl FnMut(Vec<(String, String)>) -> Result<(), E>,
    ) -> Result<(), E> {
        let io = |e: io::Error| E::from(super::BlobError::io(&self.root)(e));
        for a in fs::read_dir(&self.root).map_err(io)? {
            let a = a.map_err(io)?.path();
            if !a.is_dir() {
                continue;
            }
            let mut page = Vec::new();
            for file in fs::read_dir(&a).map_err(io)? {
                let file = file.map_err(io)?.path();
                if let Some(name) = file.file_name().and_then(|n| n.to_str()) {
                    page.push((name.to_string(), file.display().to_string()));
                }
            }
            page.sort();
            f(page)?;
        }
        Ok(())
    }
}

/// A temporary file removed on drop unless it was renamed into place.
#[derive(Debug)]
pub(super) struct TmpFile(Option<PathBuf>);

impl TmpFile {
    /// Its path.
    pub(super) fn path(&self) -> &Path {
        self.0.as_deref().expect("not yet committed")
    }
}

impl Drop for TmpFile {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = fs::remove_file(p);
        }
    }
}

/// Appends a chunk to a blob's temporary file.
pub(super) fn write(file: &mut File, chunk: &[u8]) -> io::Result<()> {
    file.write_all(chunk)
}

/// Opens `relative` under `root` for reading, refusing any path (`..`, an absolute
/// symlink, a symlink to a folder elsewhere) that resolves outside `root`: a symlink
/// placed in a served folder must not serve a file from elsewhere on the machine.
/// Linux resolves it in the kernel (`openat2` with `RESOLVE_BENEATH`), with no race
/// against a symlink swapped in between a check and the open.
pub fn open_beneath(root: &Path, relative: &Path) -> io::Result<File> {
    open_in(&File::open(root)?, root, relative)
}

/// [`open_beneath`] with `root` already open as `dir`.
fn open_in(dir: &File, root: &Path, relative: &Path) -> io::Result<File> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{Mode, OFlags, ResolveFlags};
        match rustix::fs::openat2(
            dir,
            relative,
            OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
        ) {
            Ok(fd) => Ok(File::from(fd)),
            Err(rustix::io::Errno::XDEV) => Err(outside(root, relative)),
            Err(e) => Err(e.into()),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = dir;
        let root = root.canonicalize()?;
        let path = root.join(relative).canonicalize()?;
        if !path.starts_with(&root) {
            return Err(outside(&root, relative));
        }
        File::open(path)
    }
}

/// A blob's path below the blob folder: `ab/<sha256>`.
fn relative(sha256: &str) -> PathBuf {
    Path::new(&sha256[..2.min(sha256.len())]).join(sha256)
}

/// A path that leads outside its folder is, for whoever asked, not there.
fn outside(root: &Path, relative: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!(
            "{} leads outside {} (through a symlink or `..`)",
            relative.display(),
            root.display()
        ),
    )
}
