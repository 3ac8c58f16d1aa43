//! Republishing the collection as a ResourceSync Source (ANSI/NISO Z39.99; plikt is an
//! aggregator that republishes what it collected, §14.8).
//!
//! [`publish`] writes static documents under `data_dir/www/` (any web server could
//! serve them), each replaced atomically (write, fsync, rename, folder fsync):
//!
//! ```text
//! .well-known/resourcesync                      Source Description (public sets)
//! .well-known/resourcesync-with-restricted      … with the restricted sets (served at
//!                                               .well-known/resourcesync to Destinations
//!                                               that authenticate)
//! resourcesync/<publisher>/                     the publisher's public set (`gratis`):
//!   capabilitylist.xml
//!   resourcelist.xml                            current files and records (at, completed);
//!                                               past PART_ENTRIES files an index over
//!   resourcelist/part-NNNNN.xml                   parts with rel="index"
//!   changelist.xml                              the open Change List (days not yet closed)
//!   changelist/YYYY-MM-DD.xml                   closed Change Lists, written once
//!   changelist/YYYY-MM-DD-part-NNNNN.xml          (parts, when a day's list is an index)
//!   changelist-archive.xml                      every closed list
//!   resourcedump.xml, resourcedump/part-N.zip   Resource Dump (+ manifests beside)
//!   changedump.xml, changedump/YYYY-MM-DD.zip   Change Dump, one package per closed day
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
//! written once; an unchanged Resource List and Resource Dump are left alone.
//! Lists past PART_ENTRIES files become an index over parts (Resource and Change
//! Lists alike). Dump packages hold the metadata records too, like the lists.

mod dump;
pub mod record;
mod writer;

use std::fs::{self, File};
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

pub use writer::{
    Attrs, DocumentWriter, Entry, EntryWriter, Ln, MAX_BYTES, MAX_ENTRIES, Md, RS_NS, Root,
    SITEMAP_NS,
};

use crate::config::Config;
use crate::store::{
    Catalog, Digests, JournalKey, JournalPage, Page, PublishedFile, StoreError, hex, sync_dir,
};

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
    /// A document would pass the Sitemap limits.
    #[error(
        "{path}: more than {MAX_ENTRIES} entries or {MAX_BYTES} bytes in one document (a Change List Index for one day is not implemented yet); the previous document was kept"
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
    /// Entries written to Resource Lists (0 for a set whose list was unchanged).
    pub resources: u64,
    /// Entries in all Change Lists.
    pub changes: u64,
    /// Resource Dump packages (re)written.
    pub dump_packages: u64,
}

/// The capability the access level `gratis` is published under.
pub const PUBLIC: &str = "gratis";

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
    hex(&Sha256::digest(url.as_bytes())[..8])
}

/// Where the documents live.
pub fn www(config: &Config) -> PathBuf {
    config.data_dir.join("www")
}

/// The path of a set's capability list below `base_url`.
pub fn capability_list_path(publisher: &str, access: &str) -> String {
    format!("{}/capabilitylist.xml", set_path(publisher, access))
}

/// The effective access level of restricted and non-conforming items.
pub const RESTRICTED: &str = "restricted";

/// Where a set's documents live below `base_url`: the public set of a publisher, or
/// its restricted set (only for authenticated Destinations, never linked from public
/// documents).
pub fn set_path(publisher: &str, access: &str) -> String {
    if access == PUBLIC {
        format!("resourcesync/{publisher}")
    } else {
        format!("resourcesync/{publisher}/restricted")
    }
}

/// The Source Description listing the restricted sets too, served at
/// `/.well-known/resourcesync` to authenticated Destinations.
pub const FULL_SOURCE_DESCRIPTION: &str = ".well-known/resourcesync-with-restricted";

/// Whether [`publish`] writes the dumps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dumps {
    /// Resource Dump and Change Dump packages and documents are brought up to date.
    Write,
    /// Dumps are left as they are (the lists only: `plikt publish --no-dumps`).
    Keep,
}

/// Writes every document from the catalog (the dumps only with [`Dumps::Write`]).
pub fn publish(config: &Config, dumps: Dumps) -> Result<Published, PublishError> {
    let catalog_path = config.data_dir.join("catalog.sqlite");
    let mut catalog = Catalog::open(&catalog_path)?;
    // Records newly deposited (or all, after the mapping changed) are digested once.
    let started = std::time::Instant::now();
    let digested = catalog.fill_record_digests(&record::kb24().id, &|metadata| {
        Digests::of(&record_bytes(metadata))
    })?;
    tracing::debug!(
        records = digested,
        ms = started.elapsed().as_millis() as u64,
        "metadata records digested"
    );
    let www = www(config);
    let base = config.base_url.as_str();
    let mut published = Published::default();

    // Source Descriptions (§11): the public one lists the public sets; the other one,
    // for authenticated Destinations, the restricted sets as well.
    for (file, accesses) in [
        (".well-known/resourcesync", &[PUBLIC][..]),
        (FULL_SOURCE_DESCRIPTION, &[PUBLIC, RESTRICTED][..]),
    ] {
        atomic_write(&www.join(file), |out| {
            let mut w =
                DocumentWriter::new(out, Root::UrlSet, &[], &Md::capability("description"))?;
            for p in &config.publishers {
                for access in accesses {
                    w.entry(&Entry {
                        loc: format!("{base}{}/capabilitylist.xml", set_path(&p.id, access)),
                        md: Some(Md::capability("capabilitylist")),
                        ..Entry::default()
                    })?;
                }
            }
            w.finish().map(drop)
        })?;
    }
    let blobs =
        crate::store::Blobs::open(&config.data_dir).map_err(|source| PublishError::Write {
            path: config.data_dir.join("blobs"),
            source,
        })?;
    for p in &config.publishers {
        let fingerprint = format!(
            "{} {} {base}",
            catalog.last_change_seq(&p.id)?,
            record::kb24().id
        );
        for access in [PUBLIC, RESTRICTED] {
            let dir = set_path(&p.id, access);
            // An empty set's documents need no walk over the collection.
            let empty = !catalog.has_access(&p.id, access)?;
            let spec = SetSpec {
                catalog_path: &catalog_path,
                blobs: &blobs,
                www: &www,
                base,
                publisher: &p.id,
                access,
                cap: format!("{base}{dir}/capabilitylist.xml"),
                dir,
                empty,
                fingerprint: fingerprint.clone(),
            };
            let set = Set {
                catalog: &catalog,
                spec: &spec,
            };
            let t = std::time::Instant::now();
            let (resources, changes, closed) = write_set(&set)?;
            let lists_ms = t.elapsed().as_millis() as u64;
            let t = std::time::Instant::now();
            if dumps == Dumps::Write {
                published.dump_packages +=
                    dump::write_resource_dump(&set, config.resourcesync.dump_package_bytes)?;
            }
            let resource_dump_ms = t.elapsed().as_millis() as u64;
            let t = std::time::Instant::now();
            if dumps == Dumps::Write {
                published.dump_packages += dump::write_change_dump(&set, &closed)?;
            }
            let change_dump_ms = t.elapsed().as_millis() as u64;
            tracing::debug!(publisher = %p.id, access, resources, changes, lists_ms, resource_dump_ms, change_dump_ms, "set published");
            published.sets += 1;
            published.resources += resources;
            published.changes += changes;
        }
    }
    Ok(published)
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
    /// Where the catalog is (for a second connection).
    catalog_path: &'a Path,
    blobs: &'a crate::store::Blobs,
    /// Where the documents are written.
    www: &'a Path,
    base: &'a str,
    publisher: &'a str,
    /// `gratis` or `restricted`.
    access: &'a str,
    /// Path of the set's documents below `base_url`.
    dir: String,
    /// URL of its Capability List.
    cap: String,
    /// No deposited version of the publisher has this access: the set's documents are
    /// written empty without walking the collection.
    empty: bool,
    /// The publisher's last journalled change (every deposited version is journalled),
    /// the record mapping and `base_url`: unchanged when the set's documents would be
    /// (the Resource List and Resource Dump keep theirs).
    fingerprint: String,
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
        from: &str,
        until: Option<&str>,
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
        from: &str,
        until: Option<&str>,
        at_most: u64,
    ) -> Result<u64, StoreError> {
        if self.empty {
            return Ok(0);
        }
        self.catalog
            .count_journal(self.publisher, self.access, from, until, at_most)
    }

    /// A string that starts with the URI of a deposit (the collection its files belong
    /// to, §14.7; its current metadata record is served there) and goes on with its
    /// record's URL (the same and `metadata.xml`); with where each ends.
    fn deposit_urls(&self, deposit: i64) -> (String, usize, usize) {
        use std::fmt::Write as _;
        let mut b = String::with_capacity(4 * self.base.len() + 256);
        let _ = write!(b, "{}d/{}/{deposit}/", self.base, self.publisher);
        let d = b.len();
        b.push_str("metadata.xml");
        let r = b.len();
        (b, d, r)
    }

    /// Writes a file's entry (`change`: in a Change List or Change Dump manifest, the
    /// change and its time; `path`: in a dump manifest, where the file is in the
    /// package). Written straight to `w`, without building an [`Entry`]: the large lists
    /// are made of these.
    ///
    /// §10.1, §14.8: `lastmod` is when plikt stored the version (in a Change List the
    /// change's time, also on `rs:md` for 1.1 readers, §12); `rel="via"` is the
    /// publisher's original with its pubDate; `rel="memento"` the version-specific URI
    /// (§14.6, first approach), retrievable after the resource changes again;
    /// `describedby` the deposit's record (§14.5) and `collection` the deposit (§14.7).
    fn write_file<W: Write>(
        &self,
        w: &mut DocumentWriter<W>,
        f: &PublishedFile,
        change: Option<(&str, &str)>,
        path: Option<&str>,
    ) -> io::Result<()> {
        use std::fmt::Write as _;
        // One digest of the URL for both paths (`resource_path`, `version_path`).
        let key = url_key(&f.url);
        let mut digits = [0u8; 20];
        let length = writer::decimal(f.length, &mut digits);
        // The entry's URLs and hash, one after another in one string: the deposit's URL,
        // its record's, the resource's, its version's, the hash.
        let (mut b, d, r) = self.deposit_urls(f.deposit_id);
        b.extend_from_within(..d);
        b.push_str(&key);
        let l = b.len();
        b.extend_from_within(..d);
        let _ = write!(b, "v{}/{key}", f.version_id);
        let m = b.len();
        let _ = write!(b, "md5:{} sha-256:{}", f.md5, f.sha256);
        let (deposit_url, record, loc, memento, hash) =
            (&b[..d], &b[..r], &b[r..l], &b[l..m], &b[m..]);
        // hash, length and type: the same on rs:md, via and memento.
        let mut described = Attrs::default();
        described.push("hash", hash).push("length", length);
        if let Some(t) = &f.content_type {
            described.push("type", t);
        }
        let mut e = w.url(loc)?;
        let mut md = Attrs::default();
        lastmod(&mut e, &mut md, change, &f.stored_at)?;
        md.extend(described.as_slice());
        if let Some(p) = path {
            md.push("path", p);
        }
        e.md(md.as_slice())?;
        let mut via = Attrs::default();
        via.push("modified", &f.pub_date);
        via.extend(described.as_slice());
        e.ln("via", &f.url, via.as_slice())?;
        let mut m = Attrs::default();
        m.push("modified", &f.stored_at);
        m.extend(described.as_slice());
        e.ln("memento", memento, m.as_slice())?;
        e.ln("describedby", record, &[("type", "application/xml")])?;
        e.ln("collection", deposit_url, &[])?;
        e.end()
    }

    /// Resource List entries of a deposit's current files, its record first.
    fn write_current<W: Write>(
        &self,
        w: &mut DocumentWriter<W>,
        f: &PublishedFile,
    ) -> io::Result<()> {
        if f.first_of_version {
            self.write_record(w, f, None, None)?;
        }
        self.write_file(w, f, None, None)
    }

    /// The metadata record of `f`'s version: its bytes, made from the catalog.
    fn record_of(&self, f: &PublishedFile) -> io::Result<Vec<u8>> {
        match self
            .catalog
            .version_metadata(self.publisher, f.deposit_id, f.version_id)
            .map_err(|e| io::Error::other(e.to_string()))?
        {
            Some((metadata, _, _)) => Ok(record_bytes(&metadata)),
            None => Err(io::Error::other(format!(
                "version {} of deposit {} is not deposited",
                f.version_id, f.deposit_id
            ))),
        }
    }

    /// Writes the entry of the metadata record of `f`'s version (records of a version
    /// never change; their digests come from the catalog, see [`publish`]): §14.5,
    /// `rel="describes"` the deposit and `rel="profile"` the record's namespace.
    /// `change` and `path` as in [`Set::write_file`].
    fn write_record<W: Write>(
        &self,
        w: &mut DocumentWriter<W>,
        f: &PublishedFile,
        change: Option<(&str, &str)>,
        path: Option<&str>,
    ) -> io::Result<()> {
        let made;
        let digest = match &f.record {
            Some(d) => d,
            // Deposited after this publish digested the records.
            None => {
                made = Digests::of(&self.record_of(f)?);
                &made
            }
        };
        use std::fmt::Write as _;
        let at = &f.deposited_at;
        let mut digits = [0u8; 20];
        let length = writer::decimal(digest.length, &mut digits);
        // The deposit's URL, its record's, the record version's, the hash: one string.
        let (mut b, d, r) = self.deposit_urls(f.deposit_id);
        b.extend_from_within(..d);
        let _ = write!(b, "v{}/metadata.xml", f.version_id);
        let m = b.len();
        let _ = write!(b, "md5:{} sha-256:{}", digest.md5, digest.sha256);
        let (deposit_url, loc, memento, hash) = (&b[..d], &b[..r], &b[r..m], &b[m..]);
        let mut e = w.url(loc)?;
        let mut md = Attrs::default();
        lastmod(&mut e, &mut md, change, at)?;
        md.push("hash", hash)
            .push("length", length)
            .push("type", "application/xml");
        if let Some(p) = path {
            md.push("path", p);
        }
        e.md(md.as_slice())?;
        e.ln("describes", deposit_url, &[])?;
        e.ln("profile", &record::kb24().namespace, &[])?;
        e.ln(
            "memento",
            memento,
            &[
                ("modified", at),
                ("hash", hash),
                ("length", length),
                ("type", "application/xml"),
            ],
        )?;
        e.end()
    }
}

/// An entry's `<lastmod>`, and the start of its `<rs:md>`: in a Change List (`change`)
/// the change's time, also on `rs:md` with the change for 1.1 readers (§12); otherwise
/// `stored`.
fn lastmod<'a, W: Write>(
    e: &mut EntryWriter<'_, W>,
    md: &mut Attrs<'a>,
    change: Option<(&'a str, &'a str)>,
    stored: &str,
) -> io::Result<()> {
    match change {
        Some((change, at)) => {
            md.push("change", change).push("datetime", at);
            e.lastmod(at)
        }
        None => e.lastmod(stored),
    }
}

/// A version's metadata record, from its stored metadata (JSON) by the profile's
/// record mapping: the same bytes each time, so it is made when listed or served, not
/// kept.
pub fn record_bytes(metadata: &str) -> Vec<u8> {
    record::record(record::kb24(), metadata)
}

/// Closed Change List periods: (from, until).
type Periods = Vec<(String, String)>;

/// Writes one set's Capability List, Resource List and Change Lists; returns the
/// entries of the Resource List and Change Lists, and the closed periods.
fn write_set(set: &Set<'_>) -> Result<(u64, u64, Periods), PublishError> {
    let SetSpec { www, base, dir, .. } = set.spec;
    // Capability List (§9).
    atomic_write(&www.join(format!("{dir}/capabilitylist.xml")), |out| {
        let mut w = DocumentWriter::new(
            out,
            Root::UrlSet,
            &[Ln::new("up", format!("{base}.well-known/resourcesync"))],
            &Md::capability("capabilitylist"),
        )?;
        for capability in [
            "resourcelist",
            "resourcedump",
            "changelist",
            "changedump",
            "changelist-archive",
        ] {
            w.entry(&Entry {
                loc: format!("{base}{dir}/{capability}.xml"),
                md: Some(Md::capability(capability)),
                ..Entry::default()
            })?;
        }
        w.finish().map(drop)
    })?;

    // The Resource List (§10) and the Change Lists (§12) at the same time, the Change
    // Lists through a second catalog connection: both mostly wait for SQLite and
    // format entries, and each has a core to itself.
    let spec = set.spec;
    let (resources, changes) = std::thread::scope(|s| {
        let changes = s.spawn(|| {
            let catalog = Catalog::open(spec.catalog_path)?;
            write_change_lists(&Set {
                catalog: &catalog,
                spec,
            })
        });
        let t = std::time::Instant::now();
        let resources = write_resource_list(set);
        tracing::debug!(
            publisher = set.publisher,
            access = set.access,
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

/// Writes the Resource List: one document, or past [`PART_ENTRIES`] files a Resource
/// List Index (`resourcelist.xml`, a `<sitemapindex>`) over parts
/// `resourcelist/part-NNNNN.xml`, each linking it as `rel="index"`. Returns the entries.
fn write_resource_list(set: &Set<'_>) -> Result<u64, PublishError> {
    let SetSpec {
        www,
        base,
        dir,
        cap,
        ..
    } = set.spec;
    let fingerprint = &set.fingerprint;
    // Unchanged set (no new change in the journal): the list written before is still
    // true as of its `at`, so it is left alone.
    let stamp = www.join(format!("{dir}/.resourcelist.fingerprint"));
    if www.join(format!("{dir}/resourcelist.xml")).exists()
        && fs::read_to_string(&stamp).is_ok_and(|s| s == *fingerprint)
    {
        return Ok(0);
    }
    let index_url = format!("{base}{dir}/resourcelist.xml");
    let parts_dir = www.join(format!("{dir}/resourcelist"));
    let mut written_entries = 0u64;
    // One document, or (counting no further than needed to tell) an index.
    if set.count_current_files(PART_ENTRIES + 1)? <= PART_ENTRIES {
        let written = list_document(
            &www.join(format!("{dir}/resourcelist.xml")),
            Root::UrlSet,
            &[Ln::new("up", cap.to_string())],
            "resourcelist",
            &mut |w| {
                set.current_files(None, &mut |f| set.write_current(w, f))
                    .map(|()| true)
                    .map_err(|e| io::Error::other(e.to_string()))
            },
        )?;
        // Parts of an earlier, larger list are gone with the index.
        let _ = fs::remove_dir_all(&parts_dir);
        atomic_write(&stamp, |out| out.write_all(fingerprint.as_bytes()))?;
        return Ok(written.map_or(0, |w| w.entries));
    }
    // Parts of PART_ENTRIES files until the files run out.
    let mut index = Vec::new();
    let mut after = (0, -1);
    for i in 0.. {
        let name = format!("resourcelist/part-{:05}.xml", i + 1);
        let page = Some(Page {
            after,
            limit: PART_ENTRIES,
        });
        // A part is replaced only when its content changed: the files it lists
        // (version, URL, digest) are fingerprinted as it is written, and a part whose
        // fingerprint is the one recorded is dropped before it replaces anything. New
        // deposits land in the last part, so usually only that one changes.
        let part_stamp = parts_dir.join(format!(".part-{:05}.fingerprint", i + 1));
        let doc = www.join(format!("{dir}/{name}"));
        let recorded = fs::read_to_string(&part_stamp)
            .ok()
            .filter(|_| doc.exists());
        let mut fp = Sha256::new();
        let mut fingerprint = String::new();
        let mut last = after;
        let mut files = 0u64;
        let mut digits = [0u8; 20];
        let written = list_document(
            &doc,
            Root::UrlSet,
            &[
                Ln::new("up", cap.to_string()),
                Ln::new("index", index_url.clone()),
            ],
            "resourcelist",
            &mut |w| {
                set.current_files(page, &mut |f| {
                    for piece in [
                        writer::decimal(u64::try_from(f.version_id).unwrap_or(0), &mut digits),
                        " ",
                        &f.url,
                        " ",
                        &f.sha256,
                        "\n",
                    ] {
                        fp.update(piece.as_bytes());
                    }
                    last = f.key();
                    files += 1;
                    set.write_current(w, f)
                })
                .map_err(|e| io::Error::other(e.to_string()))?;
                fingerprint = hex(&fp.clone().finalize());
                // No files left (the part before ended the list exactly): no part.
                Ok(files > 0
                    && recorded
                        .as_deref()
                        .and_then(|t| t.split_whitespace().next())
                        != Some(&fingerprint))
            },
        )?;
        after = last;
        if files == 0 {
            break;
        }
        let url = format!("{base}{dir}/{name}");
        match written {
            Some(part) => {
                written_entries += part.entries;
                atomic_write(&part_stamp, |out| {
                    write!(out, "{fingerprint} {} {}", part.at, part.completed)
                })?;
                index.push((url, part.at, part.completed));
            }
            None => {
                // Unchanged: listed with the times recorded when it was written.
                let recorded = recorded.unwrap_or_default();
                let mut t = recorded.split_whitespace().skip(1);
                let (at, done) = (t.next().unwrap_or_default(), t.next().unwrap_or_default());
                index.push((url, at.to_string(), done.to_string()));
            }
        }
        if files < PART_ENTRIES {
            break;
        }
    }
    // Parts of an earlier, larger list beyond the new last part.
    remove_parts(&parts_dir, "part-", index.len() as u64);
    list_document(
        &www.join(format!("{dir}/resourcelist.xml")),
        Root::SitemapIndex,
        &[Ln::new("up", cap.to_string())],
        "resourcelist",
        &mut |w| {
            for (loc, at, completed) in &index {
                w.entry(&Entry {
                    loc: loc.clone(),
                    md: Some(
                        Md::default()
                            .with("at", at.clone())
                            .with("completed", completed.clone()),
                    ),
                    ..Entry::default()
                })?;
            }
            Ok(true)
        },
    )?;
    atomic_write(&stamp, |out| out.write_all(fingerprint.as_bytes()))?;
    Ok(written_entries)
}

/// A `completed` time of the same width, filled in when the document's body is written.
const COMPLETED_PLACEHOLDER: &str = "0000-00-00T00:00:00.000Z";

/// Where the `completed` placeholder sits in a document whose `<rs:md>` ends with it.
fn completed_offset(root: Root, lns: &[Ln], md: &Md) -> io::Result<u64> {
    let header = DocumentWriter::new(Vec::new(), root, lns, md)?.bytes();
    Ok(header - "\"/>\n".len() as u64 - COMPLETED_PLACEHOLDER.len() as u64)
}

/// A list document [`list_document`] wrote.
#[derive(Debug)]
struct ListWritten {
    /// Its entries.
    entries: u64,
    /// Its `at` and `completed`.
    at: String,
    completed: String,
}

/// Writes a document whose `<rs:md>` has `at` (now) and `completed` (when the body is
/// written): `completed` goes in as a placeholder of the same width and is filled in
/// at the end, so the body streams to disk. `body` returns false when what it wrote
/// is what the document held already: the new one is dropped and the old one kept
/// (`None`).
fn list_document(
    path: &Path,
    root: Root,
    lns: &[Ln],
    capability: &str,
    body: &mut dyn FnMut(&mut DocumentWriter<&mut BufWriter<File>>) -> io::Result<bool>,
) -> Result<Option<ListWritten>, PublishError> {
    let at = crate::store::now();
    let md = Md::capability(capability)
        .with("at", at.clone())
        .with("completed", COMPLETED_PLACEHOLDER);
    let completed_at = completed_offset(root, lns, &md).map_err(|source| PublishError::Write {
        path: path.to_path_buf(),
        source,
    })?;
    let mut entries = 0u64;
    let mut completed = String::new();
    let mut too_large = false;
    let result = atomic_replace(path, |out| {
        let mut w = DocumentWriter::new(&mut *out, root, lns, &md)?;
        if !body(&mut w)? {
            return Ok(false);
        }
        entries = w.entries() as u64;
        if w.entries() > MAX_ENTRIES || w.bytes() > MAX_BYTES {
            // Refused before the rename: the previous document stays in place.
            too_large = true;
            return Err(io::Error::other("over the Sitemap limits"));
        }
        w.finish()?;
        out.flush()?;
        let file = out.get_mut();
        completed = crate::store::now();
        file.seek(SeekFrom::Start(completed_at))?;
        file.write_all(completed.as_bytes())?;
        file.seek(SeekFrom::End(0)).map(|_| true)
    });
    if too_large {
        return Err(PublishError::TooLarge {
            path: path.to_path_buf(),
        });
    }
    Ok(result?.then_some(ListWritten {
        entries,
        at,
        completed,
    }))
}

/// Days are closed this long after they end, so that a change committed a moment
/// after midnight with an earlier time stamp still lands in its day's list.
const CLOSE_AFTER_SECS: i64 = 300;

/// Change Lists (§12), one per UTC day. A day's list is closed (`until`) and written
/// once, a few minutes after the day ends; the open list `changelist.xml` (advertised
/// in the Capability List: `resync --incremental` reads it) covers the days not closed
/// yet; `changelist-archive.xml` (Archives 0.9.1) lists every closed list, so a
/// Destination reaches all history. Returns the entries written and the closed periods.
fn write_change_lists(set: &Set<'_>) -> Result<(u64, Periods), PublishError> {
    let SetSpec {
        www,
        base,
        publisher,
        dir,
        cap,
        ..
    } = set.spec;
    let catalog = set.catalog;
    use chrono::{DateTime, Duration, NaiveTime, Utc};
    let day_start = |t: DateTime<Utc>| t.date_naive().and_time(NaiveTime::MIN).and_utc();
    let now = Utc::now();
    // Days before `open_from` are closed.
    let open_from = day_start(now - Duration::seconds(CLOSE_AFTER_SECS));
    let first = catalog
        .first_change(publisher)?
        .and_then(|t| DateTime::parse_from_rfc3339(&t).ok())
        .map(|t| day_start(t.with_timezone(&Utc)));
    let mut changes = 0u64;
    let mut closed = Vec::new();
    let mut periods = Vec::new();
    let mut day = first.unwrap_or(open_from);
    while day < open_from {
        let until = day + Duration::days(1);
        let name = format!("changelist/{}.xml", day.format("%Y-%m-%d"));
        let path = www.join(format!("{dir}/{name}"));
        let (from_s, until_s) = (crate::store::instant(day), crate::store::instant(until));
        // Closed lists are never rewritten.
        if !path.exists() {
            let url = format!("{base}{dir}/{name}");
            changes += change_list(set, &path, &url, &from_s, Some(&until_s))?;
        }
        closed.push((
            format!("{base}{dir}/{name}"),
            from_s.clone(),
            until_s.clone(),
        ));
        periods.push((from_s, until_s));
        day = until;
    }
    let open = www.join(format!("{dir}/changelist.xml"));
    let open_url = format!("{base}{dir}/changelist.xml");
    changes += change_list(
        set,
        &open,
        &open_url,
        &crate::store::instant(open_from),
        None,
    )?;
    atomic_write(&www.join(format!("{dir}/changelist-archive.xml")), |out| {
        let mut w = DocumentWriter::new(
            out,
            Root::UrlSet,
            &[Ln::new("up", cap.to_string())],
            &Md::capability("changelist-archive"),
        )?;
        for (loc, from, until) in &closed {
            w.entry(&Entry {
                loc: loc.clone(),
                md: Some(
                    Md::capability("changelist")
                        .with("from", from.clone())
                        .with("until", until.clone()),
                ),
                ..Entry::default()
            })?;
        }
        w.finish().map(drop)
    })?;
    Ok((changes, periods))
}

/// Writes one Change List of the set's changes in [`from`, `until`) at `path` (URL
/// `url`); past [`PART_ENTRIES`] files a Change List Index over parts
/// `<stem>-part-NNNNN.xml` beside it, each with `rel="index"`. Returns the entries.
fn change_list(
    set: &Set<'_>,
    path: &Path,
    url: &str,
    from: &str,
    until: Option<&str>,
) -> Result<u64, PublishError> {
    let SetSpec { cap, .. } = set.spec;
    let mut md = Md::capability("changelist").with("from", from);
    if let Some(u) = until {
        md = md.with("until", u);
    }
    // One document, or (counting no further than needed to tell) an index.
    let total = set.count_journal(from, until, PART_ENTRIES + 1)?;
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .map_or("changelist".to_string(), |s| {
            if s == "changelist" {
                "open".to_string()
            } else {
                s.to_string()
            }
        });
    let parts_dir = path
        .parent()
        .expect("documents live in folders")
        .join(if stem == "open" { "changelist" } else { "" });
    let part_name = |n: u64| format!("{stem}-part-{n:05}.xml");
    let url_dir = url.rsplit_once('/').map_or("", |(d, _)| d).to_string();
    let part_url_dir = if stem == "open" {
        format!("{url_dir}/changelist")
    } else {
        url_dir.clone()
    };
    if total <= PART_ENTRIES {
        let (count, _, _) = change_list_document(
            set,
            path,
            &md,
            &[Ln::new("up", cap.to_string())],
            from,
            until,
            None,
        )?;
        remove_parts(&parts_dir, &format!("{stem}-part-"), 0);
        return Ok(count);
    }
    // Parts of PART_ENTRIES files until the changes run out.
    let mut count = 0;
    let mut listed = Vec::new();
    let mut after = None;
    for i in 0.. {
        let name = part_name(i + 1);
        let (n, files, last) = change_list_document(
            set,
            &parts_dir.join(&name),
            &md,
            &[
                Ln::new("up", cap.to_string()),
                Ln::new("index", url.to_string()),
            ],
            from,
            until,
            Some(JournalPage {
                after: after.take(),
                limit: PART_ENTRIES,
            }),
        )?;
        if files == 0 {
            // The part before ended the list exactly (no part was written).
            break;
        }
        count += n;
        after = last;
        listed.push(format!("{part_url_dir}/{name}"));
        if files < PART_ENTRIES {
            break;
        }
    }
    let parts = listed.len() as u64;
    remove_parts(&parts_dir, &format!("{stem}-part-"), parts);
    atomic_write(path, |out| {
        let mut w = DocumentWriter::new(
            out,
            Root::SitemapIndex,
            &[Ln::new("up", cap.to_string())],
            &md,
        )?;
        for loc in &listed {
            w.entry(&Entry {
                loc: loc.clone(),
                md: Some(
                    md.clone()
                        .0
                        .into_iter()
                        .filter(|(k, _)| *k != "capability")
                        .fold(Md::default(), |m, (k, v)| m.with(k, v)),
                ),
                ..Entry::default()
            })?;
        }
        w.finish().map(drop)
    })?;
    Ok(count)
}

/// Removes `<prefix>NNNNN.xml` parts numbered above `keep` from `dir`.
fn remove_parts(dir: &Path, prefix: &str, keep: u64) {
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

/// One Change List document (a whole list, or one part of an index; a part with no
/// files is not written). Returns its entries, its files and the key of its last file
/// (where the next part starts).
fn change_list_document(
    set: &Set<'_>,
    path: &Path,
    md: &Md,
    lns: &[Ln],
    from: &str,
    until: Option<&str>,
    page: Option<JournalPage>,
) -> Result<(u64, u64, Option<JournalKey>), PublishError> {
    let mut count = 0u64;
    let mut files = 0u64;
    let mut last = None;
    let mut too_large = false;
    let part = page.is_some();
    let result = atomic_replace(path, |out| {
        let mut w = DocumentWriter::new(out, Root::UrlSet, lns, md)?;
        let r = set.journal(from, until, page, &mut |e, f| {
            if w.full(4096) {
                too_large = true;
                // Refused before the rename: the previous document stays in place.
                return Err(io::Error::other("over the Sitemap limits"));
            }
            // A version's record goes first, with the version's change.
            let change = Some((e.change.as_str(), e.at.as_str()));
            if f.first_of_version {
                count += 1;
                set.write_record(&mut w, f, change, None)?;
            }
            count += 1;
            files += 1;
            last = Some(e.key(f));
            set.write_file(&mut w, f, change, None)
        });
        r.map_err(|e| io::Error::other(e.to_string()))?;
        // A part past the last file is not written; a whole list is, even empty.
        if part && files == 0 {
            return Ok(false);
        }
        w.finish().map(|_| true)
    });
    if too_large {
        return Err(PublishError::TooLarge {
            path: path.to_path_buf(),
        });
    }
    result.map(|_| (count, files, last))
}

/// Writes `path` atomically: a temporary file beside it, fsync, rename, folder fsync.
/// A reader sees the old document or the new one, never half of one.
fn atomic_write(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> Result<(), PublishError> {
    atomic_replace(path, |out| write(out).map(|()| true)).map(drop)
}

/// [`atomic_write`], where `write` may return false: the new content is dropped and
/// `path` left as it was. Returns whether `path` was replaced.
fn atomic_replace(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<bool>,
) -> Result<bool, PublishError> {
    let err = |source| PublishError::Write {
        path: path.to_path_buf(),
        source,
    };
    let dir = path.parent().expect("documents live in folders");
    fs::create_dir_all(dir).map_err(err)?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("doc"),
        std::process::id()
    ));
    let result = (|| {
        let mut out = BufWriter::new(File::create(&tmp)?);
        if !write(&mut out)? {
            return Ok(false);
        }
        let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.sync_all()?;
        fs::rename(&tmp, path)?;
        sync_dir(dir).map(|()| true)
    })();
    if !matches!(result, Ok(true)) {
        let _ = fs::remove_file(&tmp);
    }
    result.map_err(err)
}
