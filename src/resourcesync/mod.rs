//! Republishing the collection as a ResourceSync Source (ANSI/NISO Z39.99; plikt is an
//! aggregator that republishes what it collected, §14.8), with the Archives (0.9.1) and
//! Change Notification (1.0.1) extensions.
//!
//! [`publish`] writes static documents under `data_dir/www/` (any web server could
//! serve them), each replaced atomically (write, fsync, rename, folder fsync). Where
//! each lives is [`layout`]: the one list the server serves from.
//!
//! ```text
//! .well-known/resourcesync                      Source Description (public sets; a
//!                                               Destination gets its own, made when asked)
//! resourcesync/<publisher>/                     the publisher's public set (`gratis`):
//!   capabilitylist.xml                          9 capabilities, the topic with its hub
//!   resourcelist.xml                            live: a copy of today's snapshot
//!   resourcelist/YYYY-MM-DD.xml                 the day's snapshot (an index past
//!   resourcelist/<16 hex>.xml                     PART_ENTRIES files, over parts
//!                                                 named by content, shared)
//!   resourcelist-archive.xml                    snapshots of days that are over
//!   resourcedump.xml, resourcedump/YYYY-MM-DD.xml  live and dated Resource Dumps
//!   resourcedump/<16 hex>.zip                   packages, named by content, shared
//!   resourcedump-archive.xml
//!   changelist.xml                              the open Change List (days not closed)
//!   changelist/YYYY-MM-DD.xml                   closed Change Lists, written once
//!   changelist-archive.xml                      every closed list
//!   changedump.xml                              packages of the last closed days
//!   changedump/YYYY-MM-DD.xml, …/YYYY-MM-DD.zip a closed day's Change Dump, package
//!   changedump-archive.xml                      every day's Change Dump
//!   change/                                     the change-notification topic
//!   <kind>-archive/part-NNNNN.xml               archive parts, past 50,000 entries
//! resourcesync/<publisher>/restricted/…         the restricted set (restricted and
//!                                               non-conforming items), the same documents
//! ```
//!
//! Resources are served by `plikt serve` / `plikt run` at
//! `<base_url>d/<publisher>/<deposit>/<key>`, where `key` is the first 16 hex digits of
//! the SHA-256 of the publisher's URL: stable across versions of the deposit, so an
//! updated file is the same resource with new content. Every version stays retrievable
//! at `<base_url>d/<publisher>/<deposit>/v<version>/<key>`, which each entry names in a
//! `rel="memento"` link (§14.6): nothing deposited is ever overwritten. The deposit's
//! URI `<base_url>d/<publisher>/<deposit>/` serves its current metadata record, also at
//! `…/metadata.xml` (and per version at `…/v<version>/metadata.xml`). Records are made
//! from the catalog when listed, served or packed (record.rs); their digests are
//! computed once per version and kept in the catalog.
//!
//! Cost per publish follows the changes: closed Change Lists and Change Dumps are
//! written once; an unchanged Resource List and Resource Dump are left alone; dump
//! packages are shared by every snapshot that has them. Lists past PART_ENTRIES files
//! become an index over parts. Dump packages hold the metadata records too.
//!
//! One publish at a time per data folder (`www/.publish.lock`), whoever runs it, and
//! among the workers of a PostgreSQL catalog (a session advisory lock).

mod archive;
mod audit;
mod change_dump;
mod change_list;
mod chunks;
mod entries;
mod files;
pub mod layout;
mod mirror;
mod notification;
mod package;
pub mod record;
mod resource_dump;
mod resource_list;
mod stub;
mod writer;

use std::fs::File;
use std::io;
use std::ops::Neg;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

pub use entries::record_bytes;
pub use layout::{Kind, SOURCE_DESCRIPTION, capability_list_path, set_path, topic_path};
pub use notification::{Notification, empty_notification, write_notification};
pub use writer::{
    Attrs, DocumentWriter, Entry, EntryWriter, Ln, MAX_BYTES, MAX_ENTRIES, Md, RS_NS, Root,
    SITEMAP_NS,
};

use crate::config::Config;
use crate::store::{
    Access, Catalog, Digests, JournalPage, Page, PublishedFile, StoreError, Timestamp,
};
use files::atomic_write;

/// Why publishing failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PublishError {
    /// The catalog failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Writing a document failed.
    #[error("{path}: {source}")]
    Write {
        /// The document.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// The publish was asked to stop (`plikt run` on SIGTERM) before it finished.
    #[error(
        "the publish stopped before it finished, on shutdown: the sets it did not reach keep the documents of the publish before, and the next publish writes them"
    )]
    Interrupted,
    /// The object store's documents were published by a newer plikt, in a layout this
    /// one does not know: it leaves them alone rather than write them back in its own.
    #[error(
        "the published documents in the object store are of a newer plikt (manifest format {found}; this plikt knows up to {known}): this worker leaves them alone; upgrade its plikt to the version the other workers run"
    )]
    NewerDocuments {
        /// The format found.
        found: u32,
        /// The newest this plikt knows.
        known: u32,
    },
    /// The right to publish among workers ended while this publish was copying its
    /// documents up (its catalog connection ended, so PostgreSQL released the lock and
    /// another worker may be publishing): it stops before it writes another document
    /// over that worker's.
    #[error(
        "the publish lost its lock among workers while copying documents to the object store ({reason}): it stopped so as not to write over another worker's newer documents; the next publish writes what this one did not"
    )]
    LockLost {
        /// Why: the lock no longer held, or the connection's error.
        reason: String,
    },
    /// A document would pass the Sitemap limits.
    #[error(
        "{path}: more than {MAX_ENTRIES} entries or {MAX_BYTES} bytes in one document; the previous document was kept"
    )]
    TooLarge {
        /// The document.
        path: PathBuf,
    },
}

/// What [`publish`] wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Published {
    /// Capability lists (sets).
    pub sets: usize,
    /// Sets left as they were: nothing they show changed since the publish that last
    /// wrote them ([`SetSpec::state`]).
    pub unchanged: usize,
    /// Entries written to Resource Lists (0 for a set whose list was unchanged).
    pub resources: u64,
    /// Entries in all Change Lists.
    pub changes: u64,
    /// Dump packages written.
    pub dump_packages: u64,
}

/// The version of the documents' layout, part of every set's fingerprint: a plikt
/// that writes them differently writes them again.
const LAYOUT: &str = "layout-4";

/// The path of a resource below `base_url`.
pub fn resource_path(publisher: &str, deposit: i64, url: &str) -> String {
    format!("d/{publisher}/{deposit}/{}", url_key(url))
}

/// The version-specific path of a resource below `base_url` (§14.6, a Memento).
pub fn version_path(publisher: &str, deposit: i64, version: i64, url: &str) -> String {
    format!("d/{publisher}/{deposit}/v{version}/{}", url_key(url))
}

/// The resource key of a publisher's URL: 16 hex digits of its SHA-256.
pub fn url_key(url: &str) -> String {
    hex::encode(&Sha256::digest(url.as_bytes())[..8])
}

/// Where the documents live.
pub fn www(config: &Config) -> PathBuf {
    config.data_dir.join("www")
}

/// Whether [`publish`] writes the dumps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dumps {
    /// Resource Dump and Change Dump packages and documents are brought up to date.
    Write,
    /// Dumps are left as they are (the lists only: `plikt publish --no-dumps`).
    Keep,
}

/// Writes every document from the catalog (the dumps only with [`Dumps::Write`]).
/// Waits for a publish in progress (of this process or another) to end first.
pub fn publish(config: &Config, dumps: Dumps) -> Result<Published, PublishError> {
    publish_until(config, dumps, &never)
}

/// Never asked to stop.
fn never() -> bool {
    false
}

/// [`publish`], stopping with [`PublishError::Interrupted`] once `stopping` says so:
/// it is asked before each set, before a set's dumps and before each dump package
/// or day of packages it writes (a first publish of a large collection copies every
/// file into packages, minutes of work). What was written stays, as after a crash:
/// every document is replaced whole, and a set's fingerprint only after its documents,
/// so the next publish finds what is missing. The documents are not copied to the
/// object store then (dump packages under new names excepted, which go up as they are
/// written and which no document lists yet); the next publish copies them.
// Over 100 lines: the publish's order of steps in one place (issue 35 §3 hands it a context).
pub fn publish_until(
    config: &Config,
    dumps: Dumps,
    stopping: &(dyn Fn() -> bool + Sync),
) -> Result<Published, PublishError> {
    let www = www(config);
    let (_lock, catalog_path, mut catalog, blobs) = begin(config, &www, Pull::Early, stopping)?;
    // With the object store, the documents are shared: first what another worker
    // published since this one last did (issue 17 §2).
    let mirror = match blobs.documents() {
        Some(documents) => {
            let (mirror, pulled) = mirror::pull(documents, &www, mirror::Lost::Forget)?;
            tracing::debug!(
                files = pulled.files,
                bytes = pulled.bytes,
                removed = pulled.removed,
                "documents pulled from the object store"
            );
            Some(mirror)
        }
        None => None,
    };
    // Records newly deposited (or all, after the mapping changed) are digested once.
    let started = std::time::Instant::now();
    let digested = catalog.fill_record_digests(&record::kb24().id, &|metadata| {
        record_bytes(metadata)
            .map(|r| Digests::of(&r))
            .map_err(|e| e.to_string())
    })?;
    tracing::debug!(
        records = digested,
        ms = started.elapsed().as_millis() as u64,
        "metadata records digested"
    );
    let base = config.base_url.as_str();
    let now = Timestamp::now();
    let mut published = Published::default();
    // The folders of the sets written (the others were left alone).
    let mut written: Vec<String> = Vec::new();
    // The second catalog connection the Change Lists are read through ([`write_set`]),
    // opened at the first set written and kept for the others: on PostgreSQL a
    // connection is a TCP (and TLS) handshake and a SCRAM exchange.
    let mut lists_catalog: Option<Catalog> = None;
    write_public_source_description(config, &www)?;
    // Every publisher's journal position and non-empty sets, in one statement.
    let positions = catalog.set_positions()?;
    for p in &config.publishers {
        let position = positions.get(&p.id).copied().unwrap_or_default();
        let fingerprint = format!(
            "{} {LAYOUT} {} {base}",
            position.last_seq,
            record::kb24().id
        );
        for access in [Access::Gratis, Access::Restricted] {
            let dir = set_path(&p.id, access);
            // An empty set's documents need no walk over the collection.
            let empty = !position.has(access);
            let spec = SetSpec {
                blobs: &blobs,
                www: &www,
                base,
                publisher: &p.id,
                access,
                cap: format!("{base}{dir}/capabilitylist.xml"),
                dir,
                empty,
                fingerprint: fingerprint.clone(),
                now,
                retention_days: config.resourcesync.snapshot_retention_days,
                stopping: Stopping(stopping),
                mirror: mirror.as_ref(),
            };
            spec.go_on()?;
            // A set whose state is the one its documents were last written in is left
            // alone: a publish after one publisher's run touches that publisher's sets
            // (and, once a UTC day, every set: days close, snapshots are archived).
            let state = spec.state(dumps, config.resourcesync.dump_package_bytes);
            let state_path = www.join(format!("{}/{}", spec.dir, layout::SET_STATE));
            // With the object store, only if the set there is as here (a set written
            // here whose copy up did not finish is written again).
            let in_step = mirror.as_ref().is_none_or(|m| m.in_step(&spec.dir));
            if in_step
                && files::read_sidecar(&state_path).as_deref() == Some(std::slice::from_ref(&state))
            {
                published.sets += 1;
                published.unchanged += 1;
                continue;
            }
            if let Some(m) = &mirror {
                let restored = m.restore(&spec.dir)?;
                if restored.files > 0 {
                    tracing::warn!(set = %spec.dir, files = restored.files, "documents missing from the folder were brought back from the object store");
                }
            }
            let set = Set {
                catalog: &catalog,
                spec: &spec,
            };
            let t = std::time::Instant::now();
            let lists = match &mut lists_catalog {
                Some(c) => c,
                None => lists_catalog.insert(Catalog::open(&catalog_path)?),
            };
            let (resources, changes, closed) = write_set(&set, lists)?;
            let lists_ms = t.elapsed().as_millis() as u64;
            let t = std::time::Instant::now();
            if dumps == Dumps::Write {
                spec.go_on()?;
                published.dump_packages += resource_dump::write_resource_dump(
                    &set,
                    config.resourcesync.dump_package_bytes,
                )?;
            }
            let resource_dump_ms = t.elapsed().as_millis() as u64;
            let t = std::time::Instant::now();
            if dumps == Dumps::Write {
                published.dump_packages += change_dump::write_change_dump(&set, &closed)?;
            }
            let change_dump_ms = t.elapsed().as_millis() as u64;
            tracing::debug!(publisher = %p.id, access = %access, resources, changes, lists_ms, resource_dump_ms, change_dump_ms, "set published");
            // Last, once every document of the set is in place.
            files::write_sidecar(&state_path, &[&state])?;
            written.push(spec.dir.clone());
            published.sets += 1;
            published.resources += resources;
            published.changes += changes;
        }
    }
    if let Some(mirror) = mirror {
        let pushed = mirror.push(
            mirror::Touched::Sets(&written),
            &mirror::Fence::new(&catalog),
        )?;
        tracing::info!(
            files = pushed.files,
            bytes = pushed.bytes,
            removed = pushed.removed,
            "documents copied to the object store"
        );
    }
    Ok(published)
}

/// Copies the documents another data folder published (`from_www`: its `www/`, of the
/// embedded default) to where `config` keeps them — its own `www/`, and the object store
/// when `[blobs]` is there — so that what the archives list (snapshots, closed change
/// lists, dump packages) moves with the collection (`plikt migrate`). Files already
/// there with the same length are left alone, so it resumes. Returns the files copied
/// into the folder, and those copied to the object store (dump packages go straight
/// there, the folder keeping stubs of them).
pub fn move_documents(config: &Config, from_www: &Path) -> Result<(u64, u64), PublishError> {
    let www = www(config);
    if !from_www.is_dir() {
        return Ok((0, 0));
    }
    // The folder itself (the configuration moved up keeps its data_dir): nothing to copy
    // into it, but its documents still go to the object store, below.
    let same_folder = crate::config::same_path(from_www, &www);
    // No early copy: the old folder's documents go in first, and the pull under the
    // lock brings down only what the object store has that differs.
    let (_lock, _, catalog, blobs) = begin(config, &www, Pull::UnderLock, &|| false)?;
    let documents = blobs.documents();
    // Copied into the folder; dump packages moved straight to the object store.
    let (mut copied, mut moved) = (0, 0);
    let from_files = match same_folder {
        true => Vec::new(),
        false => mirror::local_files(from_www)?,
    };
    for rel in from_files {
        let (src, dst) = (from_www.join(&rel), www.join(&rel));
        // Here already (a migrate run again), or a stub of it: the package went up.
        let same = match (std::fs::metadata(&src), std::fs::metadata(&dst)) {
            (Ok(a), Ok(b)) => a.len() == b.len() || stub::length(&dst) == Some(a.len()),
            _ => false,
        };
        if same {
            continue;
        }
        // A dump package goes straight to the object store, the new folder keeping a
        // stub of it: the packages are about the collection's size again.
        if let Some(documents) = &documents
            && stub::only_in_store(&rel)
            && mirror::move_package(documents, &www, &rel, &src)?
        {
            moved += 1;
            continue;
        }
        files::fill_then_rename(&dst, |tmp| {
            std::fs::copy(&src, tmp)
                .map(drop)
                .map_err(files::write_err(&dst))
        })?;
        copied += 1;
    }
    let pushed = match documents {
        // What the folder has and the object store not yet, up (the pull brings down
        // only what the object store has that differs).
        Some(documents) => {
            mirror::pull(documents, &www, mirror::Lost::Forget)?
                .0
                .push(mirror::Touched::All, &mirror::Fence::new(&catalog))?
                .files
                + moved
        }
        None => 0,
    };
    Ok((copied, pushed))
}

/// Every dump package the published documents list, read again (`plikt audit`): with
/// an object store (`blobs`), those its lists of published documents name, each looked
/// up and read there (no worker keeps their bytes); with the local folder, those the
/// dumps in `data_dir/www` list, against the length and hash they list. How many, and a
/// line for each that is missing or holds other bytes, saying what brings it back.
pub fn audit_packages(
    config: &Config,
    blobs: &crate::store::Blobs,
) -> Result<(u64, Vec<String>), PublishError> {
    match blobs.documents() {
        Some(documents) => mirror::audit_packages(&documents, &www(config)),
        None => Ok(audit::audit_folder(&www(config))),
    }
}

/// What writing `www` needs, taken in the order every writer takes it: the data folder's
/// publish lock (the processes of one machine), the catalog, its publish lock (among
/// workers on one PostgreSQL catalog: one publish at a time), the blob store. Waits for a
/// publish in progress, unless `stopping` says to stop (`Err(Interrupted)`: a worker
/// asked to stop does not wait for another's publish, which can take minutes); the locks
/// last as long as the file and the catalog returned.
///
/// A folder that never copied the object store's documents (a new worker) copies them
/// first, before it waits for the catalog's lock: on a large deposit that takes as long
/// as copying the published tree, and the other workers' publishes would wait for it.
/// Copying only reads the object store, so it needs no lock among workers; what another
/// publish changes meanwhile is copied under the lock, as always.
fn begin(
    config: &Config,
    www: &Path,
    pull: Pull,
    stopping: &(dyn Fn() -> bool + Sync),
) -> Result<(File, crate::store::Location, Catalog, crate::store::Blobs), PublishError> {
    let file = lock(www, stopping)?;
    let blobs =
        crate::store::Blobs::open(&config.data_dir, &config.blobs).map_err(StoreError::from)?;
    if let Some(documents) = blobs.documents()
        && pull == Pull::Early
        && mirror::never_copied(www)
    {
        match mirror::pull(documents, www, mirror::Lost::Fail) {
            Ok((_, copied)) => tracing::info!(
                files = copied.files,
                bytes = copied.bytes,
                "copied the published documents from the object store into a new folder"
            ),
            // Another publish changed them meanwhile: the copy under the lock goes on
            // from what is here.
            Err(e) => {
                tracing::info!(error = %e, "copying the published documents before the publish lock stopped; going on under the lock")
            }
        }
    }
    let location = crate::store::Location::of(config)?;
    let catalog = Catalog::open(&location)?;
    // A publish dates its documents by this machine's clock (`store::clock`).
    catalog.check_clock(config.catalog.max_clock_offset())?;
    // Nothing is pushed under a prefix that holds another catalog's collection, or to a
    // store that refuses plikt (a publish, `plikt migrate`'s documents).
    crate::store::check_object_store(&blobs, &catalog, true)?;
    if !catalog.lock_publishing(stopping, LOCK_POLL)? {
        return Err(PublishError::Interrupted);
    }
    Ok((file, location, catalog, blobs))
}

/// Whether [`begin`] copies the object store's documents into a folder that never
/// copied them before it waits for the publish lock among workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pull {
    /// Before the lock (a publish: a new worker does not hold up the others' publishes).
    Early,
    /// Only under the lock, after what the caller puts in the folder first (`plikt
    /// migrate`'s documents of the old folder, which the object store's then replace
    /// where they differ).
    UnderLock,
}

/// Takes the data folder's publish lock, waiting for a publish in progress until
/// `stopping` says to stop.
fn lock(www: &Path, stopping: &(dyn Fn() -> bool + Sync)) -> Result<File, PublishError> {
    let path = www.join(".publish.lock");
    std::fs::create_dir_all(www).map_err(files::write_err(www))?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(files::write_err(&path))?;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(std::fs::TryLockError::WouldBlock) if stopping() => {
                return Err(PublishError::Interrupted);
            }
            Err(std::fs::TryLockError::WouldBlock) => std::thread::sleep(LOCK_POLL),
            Err(std::fs::TryLockError::Error(e)) => return Err(files::write_err(&path)(e)),
        }
    }
}

/// How often a publish waiting for another one looks whether it is to stop (and, for
/// the data folder's lock file, whether it may go on).
const LOCK_POLL: std::time::Duration = std::time::Duration::from_millis(200);

/// The public Source Description (§8): the public sets. `plikt serve` makes each
/// Destination its own when asked ([`source_description`]): only the sets it may read.
fn write_public_source_description(config: &Config, www: &Path) -> Result<(), PublishError> {
    atomic_write(&www.join(SOURCE_DESCRIPTION), |out| {
        write_source_description(config, out, &|_| false)
    })
}

/// The Source Description a Destination may read: every public set, and the restricted
/// sets of the publishers `restricted` names (§8).
pub fn source_description(config: &Config, restricted: &dyn Fn(&str) -> bool) -> Vec<u8> {
    let mut out = Vec::new();
    write_source_description(config, &mut out, restricted).expect("writing to memory cannot fail");
    out
}

fn write_source_description(
    config: &Config,
    out: &mut impl io::Write,
    restricted: &dyn Fn(&str) -> bool,
) -> io::Result<()> {
    let base = config.base_url.as_str();
    let mut w = DocumentWriter::new(out, Root::UrlSet, &[], &Md::capability("description"))?;
    for p in &config.publishers {
        let accesses = if restricted(&p.id) {
            &[Access::Gratis, Access::Restricted][..]
        } else {
            &[Access::Gratis][..]
        };
        for access in accesses {
            w.entry(&Entry {
                loc: format!("{base}{}", capability_list_path(&p.id, *access)),
                md: Some(Md::capability("capabilitylist")),
                ..Entry::default()
            })?;
        }
    }
    w.finish().map(drop)
}

/// One set being published: a publisher's public or restricted resources, read
/// through one catalog connection (the Resource List and the Change Lists are written
/// at the same time, each through its own: [`write_set`]).
#[derive(Debug)]
struct Set<'a> {
    catalog: &'a Catalog,
    spec: &'a SetSpec<'a>,
}

impl<'a> std::ops::Deref for Set<'a> {
    type Target = SetSpec<'a>;
    fn deref(&self) -> &SetSpec<'a> {
        self.spec
    }
}

/// What a [`Set`] is, apart from the catalog connection it reads through.
#[derive(Debug)]
struct SetSpec<'a> {
    blobs: &'a crate::store::Blobs,
    /// Where the documents are written.
    www: &'a Path,
    base: &'a str,
    publisher: &'a str,
    /// Which set of the publisher.
    access: Access,
    /// Path of the set's documents below `base_url`.
    dir: String,
    /// URL of its Capability List.
    cap: String,
    /// No deposited version of the publisher has this access: the set's documents are
    /// written empty without walking the collection.
    empty: bool,
    /// The publisher's last journalled change (every deposited version is journalled),
    /// the layout, the record mapping and `base_url`: unchanged when the set's
    /// documents would be (the Resource List and Resource Dump keep theirs).
    fingerprint: String,
    /// The instant of this publish: which days are closed, which day a snapshot is of.
    now: Timestamp,
    /// Snapshots older than this many days leave the archives (0: kept for ever).
    retention_days: u32,
    /// Whether the publish is to stop ([`publish_until`]).
    stopping: Stopping<'a>,
    /// With an object store: where each dump package goes as soon as it is written,
    /// the folder keeping a stub of it ([`mirror::Mirror::send_package`]).
    mirror: Option<&'a mirror::Mirror>,
}

/// Whether a publish is to stop ([`publish_until`]).
#[derive(Clone, Copy)]
struct Stopping<'a>(&'a (dyn Fn() -> bool + Sync));

impl std::fmt::Debug for Stopping<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Stopping")
    }
}

impl SetSpec<'_> {
    /// `Err(Interrupted)` once the publish is to stop ([`publish_until`]).
    fn go_on(&self) -> Result<(), PublishError> {
        if (self.stopping.0)() {
            Err(PublishError::Interrupted)
        } else {
            Ok(())
        }
    }

    /// What the set's documents are a function of, as one line: its journal position
    /// and layout (the fingerprint), whether it is empty, the day of this publish and
    /// the start of its open days, the settings that shape the documents, whether the
    /// dumps are written, and plikt's version. Kept in the set's [`layout::SET_STATE`]
    /// once its documents are written; a publish that finds the same line there leaves
    /// the set alone.
    fn state(&self, dumps: Dumps, dump_package_bytes: u64) -> String {
        let open_from = self.open_from();
        format!(
            "{} empty={} day={} open={open_from} retention={} package={dump_package_bytes} dumps={dumps:?} plikt={}",
            self.fingerprint,
            self.empty,
            self.today(),
            self.retention_days,
            env!("CARGO_PKG_VERSION"),
        )
    }

    /// The UTC day of this publish, `YYYY-MM-DD`: the day of the snapshots it writes.
    fn today(&self) -> String {
        self.now.day()
    }

    /// The first day whose snapshots are kept, if the retention is bounded.
    fn retention_cutoff(&self) -> Option<String> {
        (self.retention_days > 0).then(|| {
            self.now
                .plus(chrono::Duration::days(i64::from(self.retention_days).neg()))
                .day()
        })
    }

    /// `rel="archives"` to the archive of `kind` (Archives §2.2).
    fn archives_link(&self, kind: Kind) -> Ln {
        Ln::new(
            "archives",
            format!("{}{}/{}", self.base, self.dir, kind.archive_document()),
        )
    }
}

impl Set<'_> {
    /// [`Catalog::count_current_files`] of this set.
    fn count_current_files(&self, at_most: u64) -> Result<u64, StoreError> {
        if self.empty {
            return Ok(0);
        }
        self.catalog
            .count_current_files(self.publisher, self.access, at_most)
    }

    /// [`Catalog::current_files`] of this set.
    fn current_files(
        &self,
        page: Option<Page>,
        each: &mut dyn FnMut(&PublishedFile) -> io::Result<()>,
    ) -> Result<(), StoreError> {
        if self.empty {
            return Ok(());
        }
        self.catalog
            .current_files(self.publisher, self.access, page, each)
    }

    /// [`Catalog::journal`] of this set.
    fn journal(
        &self,
        from: Timestamp,
        until: Option<Timestamp>,
        page: Option<JournalPage>,
        each: &mut dyn FnMut(&crate::store::JournalEntry, &PublishedFile) -> io::Result<()>,
    ) -> Result<(), StoreError> {
        if self.empty {
            return Ok(());
        }
        self.catalog
            .journal(self.publisher, self.access, from, until, page, each)
    }

    /// [`Catalog::count_journal`] of this set.
    fn count_journal(
        &self,
        from: Timestamp,
        until: Option<Timestamp>,
        at_most: u64,
    ) -> Result<u64, StoreError> {
        if self.empty {
            return Ok(0);
        }
        self.catalog
            .count_journal(self.publisher, self.access, from, until, at_most)
    }
}

/// Writes one set's Capability List, Resource List and Change Lists (with their
/// archives), the Change Lists through `lists` (a second connection to the catalog);
/// returns the entries of the Resource List and Change Lists, and the closed periods.
fn write_set(
    set: &Set<'_>,
    lists: &mut Catalog,
) -> Result<(u64, u64, change_list::Periods), PublishError> {
    let SetSpec { www, base, dir, .. } = set.spec;
    // Capability List (§9), with the archives (Archives §2.1) and the change
    // notification topic with its hub (Change Notification §5).
    atomic_write(&www.join(format!("{dir}/capabilitylist.xml")), |out| {
        let mut w = DocumentWriter::new(
            out,
            Root::UrlSet,
            &[Ln::new("up", format!("{base}{SOURCE_DESCRIPTION}"))],
            &Md::capability("capabilitylist"),
        )?;
        for kind in Kind::ALL {
            w.entry(&Entry {
                loc: format!("{base}{dir}/{}", kind.document()),
                md: Some(Md::capability(kind.capability())),
                ..Entry::default()
            })?;
        }
        for kind in Kind::ALL {
            w.entry(&Entry {
                loc: format!("{base}{dir}/{}", kind.archive_document()),
                md: Some(Md::capability(kind.archive_capability())),
                ..Entry::default()
            })?;
        }
        w.entry(&Entry {
            loc: format!("{base}{dir}/{}", layout::TOPIC),
            md: Some(Md::capability("change-notification")),
            lns: vec![Ln::new("hub", format!("{base}{}", layout::HUB))],
            ..Entry::default()
        })?;
        w.finish().map(drop)
    })?;

    // The Resource List (§10) and the Change Lists (§12) at the same time, the Change
    // Lists through a second catalog connection: both mostly wait for SQLite and
    // format entries, and each has a core to itself.
    let spec = set.spec;
    let (resources, changes) = std::thread::scope(|s| {
        let changes = s.spawn(move || {
            change_list::write_change_lists(&Set {
                catalog: &*lists,
                spec,
            })
        });
        let t = std::time::Instant::now();
        let resources = resource_list::write_resource_list(set);
        tracing::debug!(
            publisher = set.publisher,
            access = %set.access,
            ms = t.elapsed().as_millis() as u64,
            "resource list written"
        );
        let changes = changes
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        Ok::<_, PublishError>((resources?, changes?))
    })?;
    let (changes, closed) = changes;
    Ok((resources, changes, closed))
}

/// Files per Resource List document: with a metadata record per deposit at most twice
/// as many entries, below the Sitemap limit of 50,000, with room for the 50 MB limit
/// (an entry is about 1 KB unless its URLs are very long).
pub const PART_ENTRIES: u64 = 20_000;
