//! What the ResourceSync publisher reads: the current files of deposits and the change
//! journal, streamed row by row.

use super::sql::sql;
use super::sql::{Db, DbError, Param, Row, chunks, params, value_rows_sharing};

use super::Packed;
use super::StoreError;
use super::catalog::Catalog;
use super::digest::Digests;
use super::state::{Access, Change, FileState, Timestamp, VersionState, sql as lit};

/// A stored file of a deposited version.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PublishedFile {
    /// The deposit.
    pub deposit_id: i64,
    /// The version.
    pub version_id: i64,
    /// The publisher's URL (the feed's `link` or `media:content/@url`).
    pub url: String,
    /// SHA-256 of the bytes (the blob's name).
    pub sha256: String,
    /// MD5.
    pub md5: String,
    /// Byte count.
    pub length: u64,
    /// `Content-Type` as the publisher's server sent it, else the declared type.
    pub content_type: Option<String>,
    /// When plikt stored it.
    pub stored_at: String,
    /// The item's pubDate (UTC).
    pub pub_date: String,
    /// The version's effective access.
    pub access: Access,
    /// The first stored file of its version (the version's record is listed with it).
    pub first_of_version: bool,
    /// Its place among its version's files.
    pub ord: i64,
    /// When the version was deposited.
    pub deposited_at: String,
    /// Length and digests of the version's metadata record, if known
    /// ([`Catalog::fill_record_digests`]).
    pub record: Option<Digests>,
    /// Where its blob is in a pack on the object store (`None`: at its own name).
    pub pack: Option<Packed>,
}

impl PublishedFile {
    /// Its place in [`Catalog::current_files`]: (deposit, ord).
    pub fn key(&self) -> (i64, i64) {
        (self.deposit_id, self.ord)
    }
}

/// A page of [`Catalog::current_files`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    /// The key of the last file before the page ((0, -1): from the start).
    pub after: (i64, i64),
    /// Files in the page.
    pub limit: u64,
}

/// One entry of the change journal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JournalEntry {
    /// Position in the journal.
    pub seq: i64,
    /// Created or updated.
    pub change: Change,
    /// When.
    pub at: String,
}

/// A file's place in [`Catalog::journal`]: (at, seq, ord).
pub type JournalKey = (String, i64, i64);

impl JournalEntry {
    /// The place of one of its files (`f`) in [`Catalog::journal`].
    pub fn key(&self, f: &PublishedFile) -> JournalKey {
        (self.at.clone(), self.seq, f.ord)
    }
}

/// A page of [`Catalog::journal`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalPage {
    /// The key of the last file before the page ([`JournalEntry::key`]; `None`: from
    /// the start).
    pub after: Option<JournalKey>,
    /// Files in the page.
    pub limit: u64,
}

/// The latest deposited version of deposit `d` (a deposit's current version).
fn current_version() -> String {
    format!(
        "SELECT id FROM versions x WHERE x.deposit_id = d.id
         AND x.state = {} ORDER BY x.pub_date DESC LIMIT 1",
        lit(VersionState::Deposited)
    )
}

/// `FROM … WHERE …` of a set's current files (?1 publisher, ?2 access): what
/// [`Catalog::current_files`] lists and [`Catalog::count_current_files`] counts;
/// `join` goes before `WHERE`.
fn current_files_from(join: &str) -> String {
    format!(
        "FROM deposits d JOIN versions v ON v.id = ({})
         JOIN files f ON f.version_id = v.id {join}
         WHERE d.publisher = ?1 AND v.access = ?2 AND f.state = {}",
        current_version(),
        lit(FileState::Stored)
    )
}

/// `FROM … WHERE …` of a set's journalled files in a period (?1 publisher, ?2 access,
/// ?3 from, ?4 until or NULL; a real bound either way, so that SQLite stops at the
/// period's end): what [`Catalog::journal`] lists and [`Catalog::count_journal`]
/// counts; `join` goes before `WHERE`.
fn journal_from(join: &str) -> String {
    format!(
        "FROM changes c JOIN versions v ON v.id = c.version_id
         JOIN files f ON f.version_id = v.id {join}
         WHERE c.publisher = ?1 AND v.access = ?2 AND f.state = {}
           AND c.at >= ?3 AND c.at < coalesce(?4, '9999')",
        lit(FileState::Stored)
    )
}

/// The columns [`read_file`] reads; the query joins `versions v`, `files f` and
/// [`RECORD_JOIN`] (the record's digests, the blob's place in a pack).
const FILE_COLUMNS: &str = "v.deposit_id, v.id, f.url, f.sha256, f.md5, f.length,
    coalesce(f.content_type, f.declared_type), f.fetched_at, v.pub_date, v.access,
    coalesce(v.deposited_at, v.found_at), rd.length, rd.md5, rd.sha256, f.ord,
    b.pack, b.pack_offset";

const RECORD_JOIN: &str = "LEFT JOIN record_digests rd ON rd.version_id = v.id
    LEFT JOIN blobs b ON b.sha256 = f.sha256";

fn file(r: &Row<'_>) -> Result<PublishedFile, DbError> {
    let mut f = PublishedFile::default();
    read_file(r, 0, &mut f)?;
    Ok(f)
}

/// Reads [`FILE_COLUMNS`] starting at column `i` into `f`, reusing its strings (the
/// publisher reads millions of rows into one). `first_of_version` is left false: the
/// query's caller knows it, from the row before (a version's stored files come one
/// after another, in `ord` order).
fn read_file(r: &Row<'_>, i: usize, f: &mut PublishedFile) -> Result<(), DbError> {
    let length = |c: usize| r.get::<i64>(c).map(|n| n.max(0).unsigned_abs());
    let text = |c: usize, into: &mut String| -> Result<(), DbError> {
        into.clear();
        into.push_str(r.text(c)?.unwrap_or_default());
        Ok(())
    };
    f.deposit_id = r.get(i)?;
    f.version_id = r.get(i + 1)?;
    text(i + 2, &mut f.url)?;
    text(i + 3, &mut f.sha256)?;
    text(i + 4, &mut f.md5)?;
    f.length = length(i + 5)?;
    match r.text(i + 6)? {
        Some(t) => {
            let into = f.content_type.get_or_insert_with(String::new);
            into.clear();
            into.push_str(t);
        }
        None => f.content_type = None,
    }
    text(i + 7, &mut f.stored_at)?;
    text(i + 8, &mut f.pub_date)?;
    f.access = r.get(i + 9)?;
    f.first_of_version = false;
    text(i + 10, &mut f.deposited_at)?;
    f.ord = r.get(i + 14)?;
    if r.get::<Option<i64>>(i + 11)?.is_some() {
        let d = f.record.get_or_insert_with(Digests::default);
        d.length = length(i + 11)?;
        text(i + 12, &mut d.md5)?;
        text(i + 13, &mut d.sha256)?;
    } else {
        f.record = None;
    }
    f.pack = super::records::packed(r, i + 15, f.length)?;
    Ok(())
}

/// Reads the rows of a journal query (`c.seq, c.change, c.at`, then [`FILE_COLUMNS`]) and
/// calls `each` for every file, into one entry and one file reused row after row;
/// `previous` is the change the rows continue, if they start within one. `writing`
/// names what `each` writes, for its errors.
fn journal_rows(
    db: &Db,
    query: (&str, &[&dyn Param]),
    mut previous: Option<i64>,
    writing: &str,
    each: &mut dyn FnMut(&JournalEntry, &PublishedFile) -> std::io::Result<()>,
) -> Result<(), StoreError> {
    let ctx = "reading the change journal";
    let (mut e, mut f) = (JournalEntry::default(), PublishedFile::default());
    db.each(query.0, query.1, |row| {
        e.seq = row.get(0).map_err(sql(ctx))?;
        e.change = row.get(1).map_err(sql(ctx))?;
        e.at.clear();
        e.at.push_str(row.text(2).map_err(sql(ctx))?.unwrap_or_default());
        read_file(row, 3, &mut f).map_err(sql(ctx))?;
        f.first_of_version = previous != Some(e.seq);
        previous = Some(e.seq);
        each(&e, &f).map_err(|source| StoreError::Io {
            path: writing.into(),
            source,
        })
    })
}

/// Where a publisher's sets stand ([`Catalog::set_positions`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SetPositions {
    /// Its last journalled change (0: none): the position its sets' documents and
    /// topics are at once they are up to date.
    pub last_seq: i64,
    /// Its deposited versions (the tally).
    versions: i64,
    /// Of those, the restricted ones.
    restricted: i64,
}

impl SetPositions {
    /// Whether a deposited version of the publisher has this access: an empty set's
    /// documents are written without a walk over the collection.
    pub fn has(&self, access: Access) -> bool {
        match access {
            Access::Restricted => self.restricted > 0,
            Access::Gratis => self.versions > self.restricted,
        }
    }
}

impl Catalog {
    /// Calls `each` for every stored file of the latest deposited version of every
    /// deposit of `publisher` whose latest deposited version has access `access`, in
    /// (deposit, file) order; with a `page`, only `limit` files after the key `after`
    /// (the [`PublishedFile::key`] of the last file of the page before; keyset paging:
    /// a page costs the same wherever it is).
    pub fn current_files(
        &self,
        publisher: &str,
        access: Access,
        page: Option<Page>,
        each: &mut dyn FnMut(&PublishedFile) -> std::io::Result<()>,
    ) -> Result<(), StoreError> {
        let (limit, (deposit, ord)) = page.map_or((i64::MAX, (0, -1)), |p| {
            (i64::try_from(p.limit).unwrap_or(i64::MAX), p.after)
        });
        let ctx = "listing current files";
        // A page that starts within a deposit continues its current version.
        let mut previous = (ord >= 0).then_some(deposit);
        let mut f = PublishedFile::default();
        self.db().each(
            &format!(
                "SELECT {FILE_COLUMNS} {}
                   AND d.id >= ?3 AND (d.id > ?3 OR f.ord > ?4)
                 ORDER BY d.id, f.ord LIMIT ?5",
                current_files_from(RECORD_JOIN)
            ),
            params![publisher, access, deposit, ord, limit],
            |row| {
                read_file(row, 0, &mut f).map_err(sql(ctx))?;
                f.first_of_version = previous != Some(f.deposit_id);
                previous = Some(f.deposit_id);
                each(&f).map_err(|source| StoreError::Io {
                    path: "resourcesync document".into(),
                    source,
                })
            },
        )
    }

    /// How many files [`Catalog::journal`] lists for a period, counted up to `at_most`
    /// (enough to tell one document from an index, at a bounded cost).
    pub fn count_journal(
        &self,
        publisher: &str,
        access: Access,
        from: Timestamp,
        until: Option<Timestamp>,
        at_most: u64,
    ) -> Result<u64, StoreError> {
        let at_most = i64::try_from(at_most).unwrap_or(i64::MAX);
        self.db()
            .one::<i64>(
                &format!(
                    "SELECT count(*) FROM (SELECT 1 {} LIMIT ?5) AS n",
                    journal_from("")
                ),
                params![publisher, access, from, until, at_most],
            )
            .map(|n| n.max(0).unsigned_abs())
            .map_err(sql("counting changes"))
    }

    /// How many files [`Catalog::current_files`] lists, counted up to `at_most`.
    pub fn count_current_files(
        &self,
        publisher: &str,
        access: Access,
        at_most: u64,
    ) -> Result<u64, StoreError> {
        let at_most = i64::try_from(at_most).unwrap_or(i64::MAX);
        self.db()
            .one::<i64>(
                &format!(
                    "SELECT count(*) FROM (SELECT 1 {} LIMIT ?3) AS n",
                    current_files_from("")
                ),
                params![publisher, access, at_most],
            )
            .map(|n| n.max(0).unsigned_abs())
            .map_err(sql("counting current files"))
    }

    /// Calls `each` for every file of every change of `publisher` journalled at or after
    /// `from` and before `until` (if given) whose version has access `access`, in
    /// forward chronological order (time, then journal order; a change's files in
    /// order); with a `page`, only `limit` files after its key ([`JournalEntry::key`]
    /// of the last file of the page before; keyset paging).
    pub fn journal(
        &self,
        publisher: &str,
        access: Access,
        from: Timestamp,
        until: Option<Timestamp>,
        page: Option<JournalPage>,
        each: &mut dyn FnMut(&JournalEntry, &PublishedFile) -> std::io::Result<()>,
    ) -> Result<(), StoreError> {
        let ctx = "reading the change journal";
        let limit = page
            .as_ref()
            .map_or(i64::MAX, |p| i64::try_from(p.limit).unwrap_or(i64::MAX));
        let (at, seq, ord) = page
            .and_then(|p| p.after)
            .unwrap_or_else(|| (String::new(), 0, -1));
        // (at, seq, ord) is the order of the index changes(publisher, at) (seq is the
        // rowid) and of files(version_id, ord): no sorting.
        let _ = ctx;
        // A page that starts within a change continues its version.
        journal_rows(
            self.db(),
            (
                &format!(
                    "SELECT c.seq, c.change, c.at, {FILE_COLUMNS} {}
                   AND c.at >= ?6 AND (c.at, c.seq, f.ord) > (?6, ?7, ?8)
                 ORDER BY c.at, c.seq, f.ord LIMIT ?5",
                    journal_from(RECORD_JOIN)
                ),
                params![publisher, access, from, until, limit, at, seq, ord],
            ),
            (ord >= 0).then_some(seq),
            "resourcesync document",
            each,
        )
    }

    /// The last of the next `changes` journalled changes of a set (`publisher`, its
    /// versions of access `access`) after journal position `after`, or of the changes
    /// journalled at the same time as that one (a transaction's changes share one time
    /// and go in one notification): its position and time; `None` when there is none.
    /// With [`Catalog::journal_range`], a change notification's changes (journal order
    /// is forward chronological, and each transaction's time is later than the one
    /// before: [`Catalog::record`]).
    pub fn journal_bound(
        &self,
        publisher: &str,
        access: Access,
        after: i64,
        changes: u64,
    ) -> Result<Option<(i64, Timestamp)>, StoreError> {
        let changes = i64::try_from(changes).unwrap_or(i64::MAX);
        self.db()
            .query_opt(
                "WITH nth AS (SELECT seq, at FROM (SELECT c.seq, c.at FROM changes c
                   JOIN versions v ON v.id = c.version_id
                   WHERE c.seq > ?3 AND c.publisher = ?1 AND v.access = ?2
                   ORDER BY c.seq LIMIT ?4) AS next
                 ORDER BY seq DESC LIMIT 1)
                 SELECT max(c.seq), nth.at FROM nth JOIN changes c ON c.at = nth.at
                   JOIN versions v ON v.id = c.version_id
                 WHERE c.seq >= nth.seq AND c.publisher = ?1 AND v.access = ?2
                 GROUP BY nth.at",
                params![publisher, access, after, changes],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(sql("reading the change journal"))
    }

    /// The journal position a topic of the set (`publisher`, its versions of access
    /// `access`) at position `after` can move to without a notification: the
    /// publisher's last change, when none of its changes after `after` is of the set;
    /// `None` when one is, or there is nothing after `after`. One statement, so one
    /// snapshot: a change of the set committed later comes later in the journal
    /// ([`Catalog::record`] journals under the journal's lock). Without it, the topic of
    /// a set that does not change (a publisher's restricted set, mostly) stays where it
    /// was and each notification pass reads every change of the publisher since.
    pub fn topic_end_past_others(
        &self,
        publisher: &str,
        access: Access,
        after: i64,
    ) -> Result<Option<i64>, StoreError> {
        self.db()
            .query_row(
                "SELECT CASE WHEN EXISTS (SELECT 1 FROM changes c
                   JOIN versions v ON v.id = c.version_id
                   WHERE c.publisher = ?1 AND c.seq > ?3 AND v.access = ?2)
                 THEN NULL ELSE (SELECT max(seq) FROM changes
                   WHERE publisher = ?1 AND seq > ?3) END",
                params![publisher, access, after],
                |r| r.get(0),
            )
            .map_err(sql("reading the change journal"))
    }

    /// Calls `each` for every stored file of the set's changes at journal positions in
    /// (`after`, `upto`], in journal order (a change's files in order).
    pub fn journal_range(
        &self,
        publisher: &str,
        access: Access,
        after: i64,
        upto: i64,
        each: &mut dyn FnMut(&JournalEntry, &PublishedFile) -> std::io::Result<()>,
    ) -> Result<(), StoreError> {
        let ctx = "reading the change journal";
        let _ = ctx;
        journal_rows(
            self.db(),
            (
                &format!(
                    "SELECT c.seq, c.change, c.at, {FILE_COLUMNS}
                 FROM changes c JOIN versions v ON v.id = c.version_id
                 JOIN files f ON f.version_id = v.id {RECORD_JOIN}
                 WHERE c.seq > ?3 AND c.seq <= ?4 AND c.publisher = ?1 AND v.access = ?2
                   AND f.state = {}
                 ORDER BY c.seq, f.ord",
                    lit(FileState::Stored)
                ),
                params![publisher, access, after, upto],
            ),
            None,
            "change notification",
            each,
        )
    }

    /// The journal's last position and its time (`None` when it is empty).
    pub fn journal_end(&self) -> Result<Option<(i64, Timestamp)>, StoreError> {
        self.db()
            .query_opt(
                "SELECT seq, at FROM changes ORDER BY seq DESC LIMIT 1",
                params![],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(sql("reading the change journal"))
    }

    /// A deposited version's stored metadata (JSON), access and deposit time, for its
    /// metadata record; `None` unless it is a deposited version of that deposit of that
    /// publisher.
    pub fn version_metadata(
        &self,
        publisher: &str,
        deposit: i64,
        version: i64,
    ) -> Result<Option<(String, Access, Timestamp)>, StoreError> {
        self.db()
            .query_opt(
                "SELECT v.metadata, v.access, coalesce(v.deposited_at, v.found_at)
                 FROM versions v JOIN deposits d ON d.id = v.deposit_id
                 WHERE v.id = ?3 AND d.id = ?2 AND d.publisher = ?1 AND v.state = ?4",
                params![publisher, deposit, version, VersionState::Deposited],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .map_err(sql("reading a version's metadata"))
    }

    /// The latest deposited version of a deposit, with its access.
    pub fn current_version(
        &self,
        publisher: &str,
        deposit: i64,
    ) -> Result<Option<(i64, Access)>, StoreError> {
        self.db()
            .query_opt(
                &format!(
                    "SELECT v.id, v.access FROM deposits d JOIN versions v ON v.id = ({})
                 WHERE d.publisher = ?1 AND d.id = ?2",
                    current_version()
                ),
                params![publisher, deposit],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(sql("finding a deposit's current version"))
    }

    /// Where every publisher's sets stand, for a publish and its notifications, in one
    /// statement: each publisher's last journalled change (at the end of the index
    /// `changes(publisher, seq)`) and which of its sets have deposited versions (from
    /// its tally). A publisher not in the catalog yet has neither.
    pub fn set_positions(
        &self,
    ) -> Result<std::collections::HashMap<String, SetPositions>, StoreError> {
        Ok(self
            .db()
            .query(
                "SELECT p.id,
                   coalesce((SELECT max(c.seq) FROM changes c WHERE c.publisher = p.id), 0),
                   coalesce(t.versions, 0), coalesce(t.restricted, 0)
                 FROM publishers p LEFT JOIN tallies t ON t.publisher = p.id",
                params![],
                |r| {
                    Ok((
                        r.get(0)?,
                        SetPositions {
                            last_seq: r.get(1)?,
                            versions: r.get(2)?,
                            restricted: r.get(3)?,
                        },
                    ))
                },
            )
            .map_err(sql("reading the change journal"))?
            .into_iter()
            .collect())
    }

    /// The time of the first journalled change of `publisher`.
    pub fn first_change(&self, publisher: &str) -> Result<Option<Timestamp>, StoreError> {
        self.db()
            .query_row(
                "SELECT min(at) FROM changes WHERE publisher = ?1",
                params![publisher],
                |r| r.get(0),
            )
            .map_err(sql("reading the change journal"))
    }

    /// A stamp that changes whenever the catalog may have changed, read without a
    /// lock: SQLite's `PRAGMA data_version` (which changes with every commit of another
    /// connection, in this process or another) with this connection's own changes
    /// ([`Db::total_changes`]). `None` on PostgreSQL, which has no such number. For
    /// what `plikt serve` keeps of the catalog's answers (`server::cache`).
    pub fn change_stamp(&self) -> Result<Option<(i64, u64)>, StoreError> {
        let Some(own) = self.db().total_changes() else {
            return Ok(None);
        };
        let version = self
            .db()
            .one("PRAGMA data_version", params![])
            .map_err(sql("reading the catalog's version"))?;
        Ok(Some((version, own)))
    }

    /// The stored files of a deposited version of a deposit — `version`, or the latest
    /// (for serving a resource or its version-specific URL; the caller checks their
    /// access).
    pub fn deposit_files(
        &self,
        publisher: &str,
        deposit: i64,
        version: Option<i64>,
    ) -> Result<Vec<PublishedFile>, StoreError> {
        // Made once: this query runs for every resource served, and the same text finds
        // its prepared statement in the connection's cache.
        static SQL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        let text = SQL.get_or_init(|| {
            format!(
                "SELECT {FILE_COLUMNS} FROM deposits d
                 JOIN versions v ON v.deposit_id = d.id AND v.state = {deposited}
                   AND v.id = coalesce(?3, ({current}))
                 JOIN files f ON f.version_id = v.id {RECORD_JOIN}
                 WHERE d.publisher = ?1 AND d.id = ?2 AND f.state = {stored}
                 ORDER BY f.ord",
                deposited = lit(VersionState::Deposited),
                current = current_version(),
                stored = lit(FileState::Stored),
            )
        });
        let mut files = self
            .db()
            .query(text, params![publisher, deposit, version], file)
            .map_err(sql("finding a resource"))?;
        if let Some(first) = files.first_mut() {
            first.first_of_version = true;
        }
        Ok(files)
    }

    /// Records the length and digests of every deposited version's metadata record
    /// that has none made with `mapping` (an identifier of the record mapping);
    /// `digest` builds a record from a version's metadata (JSON) and digests it. Works
    /// in batches of [`RECORD_BATCH`] versions, one transaction each, so memory stays
    /// flat and an interrupted fill resumes. Returns how many records were digested.
    ///
    /// Every deposited version is journalled, in commit order, so the journal position
    /// up to which records are digested (`record_digest_mark`, migration 13) is where the
    /// next fill starts: a publish after a run reads the run's new versions, not the
    /// collection (it walked every version and every digest before, each publish, which
    /// `plikt run` makes after every run). Only a new mapping starts again from the
    /// beginning.
    pub fn fill_record_digests(
        &mut self,
        mapping: &str,
        digest: &dyn Fn(&str) -> Result<Digests, String>,
    ) -> Result<u64, StoreError> {
        let ctx = "digesting metadata records";
        let mark: Option<(String, i64)> = self
            .db()
            .query_opt(
                "SELECT mapping, seq FROM record_digest_mark",
                params![],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(sql(ctx))?;
        let mut after = match mark {
            Some((m, seq)) if m == mapping => seq,
            _ => {
                let tx = self.db_mut().transaction().map_err(sql(ctx))?;
                tx.execute(
                    "DELETE FROM record_digests WHERE mapping != ?1",
                    params![mapping],
                )
                .map_err(sql(ctx))?;
                tx.batch("DELETE FROM record_digest_mark")
                    .map_err(sql(ctx))?;
                tx.execute(
                    "INSERT INTO record_digest_mark (id, mapping, seq) VALUES (1, ?1, 0)",
                    params![mapping],
                )
                .map_err(sql(ctx))?;
                tx.commit().map_err(sql(ctx))?;
                0
            }
        };
        let mut filled = 0u64;
        loop {
            // Each version looked up by key: no join to plan on the statistics.
            let batch: Vec<(i64, i64, String)> = self
                .db()
                .query(
                    "SELECT c.seq, c.version_id,
                       (SELECT v.metadata FROM versions v WHERE v.id = c.version_id)
                     FROM changes c WHERE c.seq > ?1 ORDER BY c.seq LIMIT ?2",
                    params![after, RECORD_BATCH],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .map_err(sql(ctx))?;
            let Some(last) = batch.last() else { break };
            after = last.0;
            let mut rows = Vec::with_capacity(batch.len());
            for (_, version, metadata) in &batch {
                let d = digest(metadata).map_err(|reason| StoreError::Metadata {
                    version: *version,
                    reason,
                })?;
                rows.push((*version, i64::try_from(d.length).unwrap_or(i64::MAX), d));
            }
            let tx = self.db_mut().transaction().map_err(sql(ctx))?;
            // Multi-row statements (issue 17 §6: on PostgreSQL a round trip per version
            // made a publish after a 10,000-item harvest take minutes).
            for piece in chunks(&rows) {
                let mut p: Vec<&dyn Param> = vec![&mapping];
                for (version, length, d) in piece {
                    p.extend([version as &dyn Param, length, &d.md5, &d.sha256]);
                }
                let values = value_rows_sharing(piece.len(), 4, 2, "?1");
                tx.execute(
                    &format!(
                        "INSERT INTO record_digests (version_id, length, md5, sha256, mapping)
                         VALUES {values}
                         ON CONFLICT (version_id) DO UPDATE SET mapping = excluded.mapping,
                           length = excluded.length, md5 = excluded.md5, sha256 = excluded.sha256"
                    ),
                    &p,
                )
                .map_err(sql(ctx))?;
            }
            tx.execute("UPDATE record_digest_mark SET seq = ?1", params![after])
                .map_err(sql(ctx))?;
            tx.commit().map_err(sql(ctx))?;
            filled += batch.len() as u64;
        }
        Ok(filled)
    }
}

/// Versions per batch of [`Catalog::fill_record_digests`].
pub const RECORD_BATCH: i64 = 10_000;
