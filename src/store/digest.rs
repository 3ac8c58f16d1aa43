//! MD5 and SHA-256 of a stream in one pass. Small files are hashed inline; once a file
//! passes [`INLINE_LIMIT`], each digest moves to its own thread so that hashing runs
//! beside the download and the disk writes, and MD5 (~400 MB/s per core) is the bound.

use std::sync::mpsc::{SyncSender, sync_channel};
use std::thread::JoinHandle;

use bytes::Bytes;
use md5::{Digest, Md5};
use sha2::Sha256;

/// Files up to this size are hashed on the caller's thread.
pub const INLINE_LIMIT: u64 = 1 << 20;

/// The digests and length of some bytes, hexadecimal lower case.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Digests {
    /// SHA-256.
    pub sha256: String,
    /// MD5.
    pub md5: String,
    /// Byte count.
    pub length: u64,
}

impl Digests {
    /// The digests of bytes in memory (small ones: no threads).
    pub fn of(bytes: &[u8]) -> Self {
        Self {
            sha256: hex::encode(Sha256::digest(bytes)),
            md5: hex::encode(Md5::digest(bytes)),
            length: bytes.len() as u64,
        }
    }
}

/// Computes [`Digests`] chunk by chunk.
#[derive(Debug)]
pub struct Digester {
    state: State,
    length: u64,
}

#[derive(Debug)]
enum State {
    Inline(Box<(Md5, Sha256)>),
    Threads { md5: Worker, sha: Worker },
    Done,
}

#[derive(Debug)]
struct Worker {
    tx: SyncSender<Bytes>,
    handle: JoinHandle<String>,
}

impl Worker {
    fn spawn<D: Digest + Send + 'static>(mut d: D) -> Worker {
        let (tx, rx) = sync_channel::<Bytes>(4);
        let handle = std::thread::spawn(move || {
            for chunk in rx {
                d.update(&chunk);
            }
            hex::encode(d.finalize())
        });
        Worker { tx, handle }
    }

    fn finish(self) -> String {
        drop(self.tx);
        self.handle.join().expect("a digest thread panicked")
    }
}

impl Default for Digester {
    fn default() -> Self {
        Self::new()
    }
}

impl Digester {
    /// Starts empty.
    pub fn new() -> Self {
        Self {
            state: State::Inline(Box::new((Md5::new(), Sha256::new()))),
            length: 0,
        }
    }

    /// Adds a chunk.
    pub fn update(&mut self, chunk: &Bytes) {
        self.length += chunk.len() as u64;
        match &mut self.state {
            State::Inline(h) => {
                h.0.update(chunk);
                h.1.update(chunk);
                if self.length > INLINE_LIMIT
                    && let State::Inline(h) = std::mem::replace(&mut self.state, State::Done)
                {
                    let (md5, sha) = *h;
                    self.state = State::Threads {
                        md5: Worker::spawn(md5),
                        sha: Worker::spawn(sha),
                    };
                }
            }
            State::Threads { md5, sha } => {
                // A send fails only if the thread died, which `finish` reports.
                let _ = md5.tx.send(chunk.clone());
                let _ = sha.tx.send(chunk.clone());
            }
            State::Done => unreachable!("update after finish"),
        }
    }

    /// Bytes added so far.
    pub fn bytes(&self) -> u64 {
        self.length
    }

    /// The digests of everything added.
    pub fn finish(mut self) -> Digests {
        let (md5, sha256) = match std::mem::replace(&mut self.state, State::Done) {
            State::Inline(h) => {
                let (md5, sha) = *h;
                (hex::encode(md5.finalize()), hex::encode(sha.finalize()))
            }
            State::Threads { md5, sha } => (md5.finish(), sha.finish()),
            State::Done => unreachable!("finish twice"),
        };
        Digests {
            sha256,
            md5,
            length: self.length,
        }
    }
}

/// The digests of a whole file, read in 1 MiB pieces (`plikt audit`, dump packages).
pub fn digest_file(path: &std::path::Path) -> std::io::Result<Digests> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let mut d = Digester::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        d.update(&Bytes::copy_from_slice(&buf[..n]));
    }
    Ok(d.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_and_threaded_digests_agree_with_known_values() {
        let mut d = Digester::new();
        d.update(&Bytes::from_static(b"abc"));
        let small = d.finish();
        assert_eq!(small.md5, "900150983cd24fb0d6963f7d28e17f72");
        assert_eq!(
            small.sha256,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        // 3 MiB of 'a' crosses the inline limit: same result as one inline pass.
        let big = vec![b'a'; 3 << 20];
        let mut d = Digester::new();
        for c in big.chunks(65536) {
            d.update(&Bytes::copy_from_slice(c));
        }
        let threaded = d.finish();
        assert_eq!(threaded.md5, hex::encode(Md5::digest(&big)));
        assert_eq!(threaded.sha256, hex::encode(Sha256::digest(&big)));
        assert_eq!(threaded.length, 3 << 20);
    }
}
