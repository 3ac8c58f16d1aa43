//! The entries of resources and their metadata records, as every list, manifest and
//! notification writes them (§10.1, §14.5–§14.8): straight from a catalog row into the
//! document, without building an [`Entry`](super::Entry).

use std::io::{self, Write};

use super::{Attrs, DocumentWriter, EntryWriter, Set, record, url_key, writer};
use crate::store::{Digests, PublishedFile};

impl Set<'_> {
    /// A string that starts with the URI of a deposit (the collection its files belong
    /// to, §14.7; its current metadata record is served there) and goes on with its
    /// record's URL (the same and `metadata.xml`); with where each ends.
    pub(super) fn deposit_urls(&self, deposit: i64) -> (String, usize, usize) {
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
    /// §10.1, §14.8: `lastmod` is when the version was deposited, the instant the
    /// resource took these bytes at the Source: the same in a Resource List, a dump's
    /// manifest and a Change List (there the change's time, also on `rs:md` for 1.1
    /// readers, §12), so that a Destination that applied the change audits in sync
    /// against the list; `rel="memento"`'s `modified` is when plikt stored the bytes;
    /// `rel="via"` is the
    /// publisher's original with its pubDate; `rel="memento"` the version-specific URI
    /// (§14.6, first approach), retrievable after the resource changes again;
    /// `describedby` the deposit's record (§14.5) and `collection` the deposit (§14.7).
    pub(super) fn write_file<W: Write>(
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
        lastmod(&mut e, &mut md, change, &f.deposited_at)?;
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
    pub(super) fn write_current<W: Write>(
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
    pub(super) fn record_of(&self, f: &PublishedFile) -> io::Result<Vec<u8>> {
        match self
            .catalog
            .version_metadata(self.publisher, f.deposit_id, f.version_id)
            .map_err(|e| io::Error::other(e.to_string()))?
        {
            Some((metadata, _, _)) => record_bytes(&metadata).map_err(io::Error::other),
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
    pub(super) fn write_record<W: Write>(
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
/// `deposited`.
fn lastmod<'a, W: Write>(
    e: &mut EntryWriter<'_, W>,
    md: &mut Attrs<'a>,
    change: Option<(&'a str, &'a str)>,
    deposited: &str,
) -> io::Result<()> {
    match change {
        Some((change, at)) => {
            md.push("change", change).push("datetime", at);
            e.lastmod(at)
        }
        None => e.lastmod(deposited),
    }
}

/// A version's metadata record, from its stored metadata (JSON) by the profile's
/// record mapping: the same bytes each time, so it is made when listed or served, not
/// kept.
pub fn record_bytes(metadata: &str) -> Result<Vec<u8>, record::RecordError> {
    record::record(record::kb24(), metadata)
}
