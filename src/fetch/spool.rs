//! Temporary files that hold a copy of an input: a download, or standard input, so the
//! text report can show source lines without keeping the document in memory.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};

/// A temporary file without a name (`tempfile::tempfile`: made nameless where the
/// system can, its name removed at once elsewhere), so the system frees it when the
/// last handle to it closes, also when plikt is killed (a named spool file outlived
/// every SIGKILL in the temporary directory).
#[derive(Debug)]
pub struct Spool {
    file: File,
}

impl Spool {
    /// Creates an empty spool file in the system's temporary directory.
    pub fn new() -> io::Result<Self> {
        Ok(Self {
            file: tempfile::tempfile()?,
        })
    }

    /// The open file.
    pub fn file_mut(&mut self) -> &mut File {
        &mut self.file
    }

    /// A reader from the start of the file (a handle of its own, which keeps the file
    /// after the spool is dropped).
    pub fn reader(&self) -> io::Result<File> {
        let mut f = self.file.try_clone()?;
        f.seek(SeekFrom::Start(0))?;
        Ok(f)
    }
}

/// Copies what is read through it into a [`Spool`], up to `cap` bytes.
#[derive(Debug)]
pub struct Tee<R> {
    inner: R,
    spool: Spool,
    written: u64,
    cap: u64,
    complete: bool,
}

impl<R: Read> Tee<R> {
    /// Reads from `inner`, keeping the first `cap` bytes in a new spool file.
    pub fn new(inner: R, cap: u64) -> io::Result<Self> {
        Ok(Self {
            inner,
            spool: Spool::new()?,
            written: 0,
            cap,
            complete: true,
        })
    }

    /// The spool file, if it holds everything that was read.
    pub fn into_spool(self) -> Option<Spool> {
        self.complete.then_some(self.spool)
    }
}

impl<R: Read> Read for Tee<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if self.complete {
            if self.written + n as u64 > self.cap {
                self.complete = false;
            } else {
                self.spool.file.write_all(&buf[..n])?;
                self.written += n as u64;
            }
        }
        Ok(n)
    }
}
