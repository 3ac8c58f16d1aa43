//! The catalog's schema, as the migrations that make it: applied in order by
//! [`Catalog::open`](super::Catalog::open), each in a transaction of its own, the
//! version kept in `PRAGMA user_version` (SQLite) or the table `plikt_schema`
//! (PostgreSQL). A migration is never changed once released: a new version of the
//! schema is a new entry at the end of both lists, which stay the same length, so a
//! version number means the same schema on both backends.

use super::StoreError;
use super::sql::sql;
use super::sql::{Backend, Db, Lock, params};

/// Brings the catalog's schema up to this plikt's. Each step in a transaction of its
/// own that reads the version again: another process opening the same catalog at the
/// same moment (`plikt serve` starting beside `plikt run`, two workers) may have taken
/// the step already.
pub(super) fn migrate(db: &mut Db) -> Result<(), StoreError> {
    migrate_upto(db, usize::MAX)
}

/// [`migrate`], to schema version `upto` at most (the tests make catalogs of an older
/// plikt with it).
fn migrate_upto(db: &mut Db, upto: usize) -> Result<(), StoreError> {
    let all = match db.backend() {
        Backend::Sqlite => SQLITE,
        Backend::Postgres => POSTGRES,
    };
    let version = |db: &Db| -> Result<usize, StoreError> {
        match db.backend() {
            Backend::Sqlite => db.one("PRAGMA user_version", params![]),
            Backend::Postgres => db.one(
                "SELECT COALESCE(max(version), 0) FROM plikt_schema",
                params![],
            ),
        }
        .map_err(sql("reading the schema version"))
    };
    if db.backend() == Backend::Postgres {
        db.batch("CREATE TABLE IF NOT EXISTS plikt_schema (version BIGINT NOT NULL)")
            .or_else(|e| {
                // Two processes creating it at once: one wins, the other's CREATE fails
                // on the type's unique name; the table is there either way.
                if e.to_string().contains("already exists") {
                    Ok(())
                } else {
                    Err(e)
                }
            })
            .map_err(sql("creating the schema version table"))?;
    }
    let steps = &all[..upto.min(all.len())];
    if version(db)? == steps.len() {
        return Ok(());
    }
    loop {
        let tx = db.transaction().map_err(sql("migrating"))?;
        tx.lock(Lock::Schema).map_err(sql("migrating"))?;
        let found = version(&tx)?;
        if found > all.len() {
            return Err(StoreError::Schema {
                found,
                known: all.len(),
            });
        }
        let Some(step) = steps.get(found) else {
            return Ok(());
        };
        if !step.is_empty() {
            tx.batch(step).map_err(sql("migrating the schema"))?;
        }
        match tx.backend() {
            Backend::Sqlite => tx.batch(&format!("PRAGMA user_version = {}", found + 1)),
            Backend::Postgres => tx.batch("DELETE FROM plikt_schema").and_then(|()| {
                tx.execute(
                    "INSERT INTO plikt_schema (version) VALUES (?1)",
                    params![found + 1],
                )
                .map(drop)
            }),
        }
        .map_err(sql("migrating"))?;
        tx.commit().map_err(sql("migrating"))?;
    }
}

/// Migration 11: each publisher's deposits, deposited versions and their files, counted
/// where versions are deposited ([`Catalog::record`](super::Catalog::record)) instead of
/// at every `/metrics` scrape, `plikt status` and dashboard (which counted the whole
/// catalog: 3.5 s and 5.5 s at 1,000,000 files on either backend, ten times that in a year
/// of the deposit issue 17 §7 plans for), filled here from the rows already there; and the
/// failed versions by deposit, so that they and the pending ones (migration 10) are
/// counted as the few they are. The argument is PostgreSQL's `COLLATE "C"` for the key.
macro_rules! tallies {
    ($collate:literal) => {
        concat!(
            "CREATE TABLE tallies (
    publisher TEXT ",
            $collate,
            " NOT NULL PRIMARY KEY,
    deposits  BIGINT NOT NULL,
    versions  BIGINT NOT NULL,
    files     BIGINT NOT NULL
);
INSERT INTO tallies (publisher, deposits, versions, files)
SELECT d.publisher, count(DISTINCT d.id), count(DISTINCT v.id), count(f.id)
FROM deposits d JOIN versions v ON v.deposit_id = d.id LEFT JOIN files f ON f.version_id = v.id
WHERE v.state = 'deposited' GROUP BY d.publisher;
CREATE INDEX versions_failed ON versions(deposit_id) WHERE state = 'failed';"
        )
    };
}

/// What a publisher's tally (migrations 11 and 15) counts, from the rows themselves:
/// `publisher, deposits, versions, files, restricted`, one row per publisher with a
/// deposited version. `plikt audit` compares the tallies with it and `plikt audit
/// --recount` sets them from it. It defines the tallies.
pub(super) const TALLY_RECOUNT: &str =
    "SELECT d.publisher, count(DISTINCT d.id), count(DISTINCT v.id), count(f.id),
  count(DISTINCT CASE WHEN v.access = 'restricted' THEN v.id END)
FROM deposits d JOIN versions v ON v.deposit_id = d.id LEFT JOIN files f ON f.version_id = v.id
WHERE v.state = 'deposited' GROUP BY d.publisher";

/// The store's blobs and their bytes counted from the rows, as the row `blob_tally`
/// (migration 12) keeps them, `id, blobs, bytes`; no row while there are no blobs.
macro_rules! blob_recount {
    () => {
        "SELECT 1, count(*), CAST(coalesce(sum(length), 0) AS BIGINT) FROM blobs HAVING count(*) > 0"
    };
}

/// The blob tally counted from the rows ([`blob_recount!`]).
pub(super) const BLOB_RECOUNT: &str = blob_recount!();

/// Migration 12, the same on both backends: the store's blobs and bytes, one row added
/// to where blobs are recorded ([`Catalog::record`](super::Catalog::record)) instead of
/// counted at every `/metrics` scrape (0.2 s at 1,000,000 blobs on PostgreSQL, linear in
/// the collection, and read from disk once the table no longer fits in memory). The row
/// is absent while there are no blobs, so that `plikt migrate` copies the source's row
/// into a new catalog instead of finding one there.
const BLOB_TALLY: &str = concat!(
    "CREATE TABLE blob_tally (
    id    BIGINT NOT NULL PRIMARY KEY CHECK (id = 1),
    blobs BIGINT NOT NULL,
    bytes BIGINT NOT NULL
);
INSERT INTO blob_tally (id, blobs, bytes) ",
    blob_recount!(),
    ";"
);

/// Migration 13, the same on both backends: the journal position up to which every
/// deposited version's record has its digests made with `mapping`
/// ([`Catalog::fill_record_digests`](super::Catalog::fill_record_digests)), so that a
/// publish digests the versions deposited since the last one instead of looking for
/// them among all versions. Set here from the digests there are (of their most used
/// mapping): the journal position before the first change without one, or the end of the
/// journal; absent when there are none, and then the first fill starts from the
/// beginning.
const RECORD_DIGEST_MARK: &str = "CREATE TABLE record_digest_mark (
    id      BIGINT NOT NULL PRIMARY KEY CHECK (id = 1),
    mapping TEXT NOT NULL,
    seq     BIGINT NOT NULL
);
INSERT INTO record_digest_mark (id, mapping, seq)
SELECT 1, m.mapping, coalesce(
    (SELECT min(c.seq) - 1 FROM changes c WHERE NOT EXISTS (SELECT 1 FROM record_digests rd
        WHERE rd.version_id = c.version_id AND rd.mapping = m.mapping)),
    (SELECT coalesce(max(seq), 0) FROM changes))
FROM (SELECT mapping FROM record_digests GROUP BY mapping ORDER BY count(*) DESC LIMIT 1) m;";

/// Migration 14, the same on both backends: a publisher's runs by outcome, so that its
/// last successful run, its last run that read the feed and a run left `running` are
/// found at the end of an index instead of among all its runs (2,000 publishers on a
/// 30-minute schedule make 35 million runs a year, which are kept); and the rejected
/// items by run, which `plikt status`, `/status` and the dashboard read for each
/// publisher's last feed (without it, each read went through every rejection).
const RUN_HISTORY: &str = "CREATE INDEX runs_outcome ON runs(publisher, outcome, id);
CREATE INDEX rejections_run ON rejections(run_id);";

/// Migration 15, the same on both backends: each publisher's tally also counts its
/// deposited `restricted` versions, so that a publish knows which of a publisher's two
/// sets is empty from the tally ([`Catalog::set_positions`](super::Catalog::set_positions))
/// instead of going through the publisher's versions (every publish went through all
/// the versions of every publisher without a restricted one: most of them).
const RESTRICTED_TALLY: &str =
    "ALTER TABLE tallies ADD COLUMN restricted BIGINT NOT NULL DEFAULT 0;
UPDATE tallies SET restricted = r.n FROM (
    SELECT d.publisher, count(*) AS n FROM versions v JOIN deposits d ON d.id = v.deposit_id
    WHERE v.state = 'deposited' AND v.access = 'restricted' GROUP BY d.publisher
) r WHERE r.publisher = tallies.publisher;";

/// Migration 16, the same on both backends: a publisher's changes in journal order. Every
/// publish reads each publisher's last journal position (its sets' fingerprint,
/// [`Catalog::set_positions`](super::Catalog::set_positions)), which went through
/// all of the publisher's changes (0.17–0.79 s at 1,000,000 on SQLite) for every
/// publisher: the whole journal per publish. The change notifications read a set's
/// changes after a position through it too.
const CHANGES_BY_PUBLISHER: &str = "CREATE INDEX changes_publisher_seq ON changes(publisher, seq);";

/// Migration 17: the catalog's identity, one row made once with a random id. The object
/// store keeps it under `<prefix>catalog-id` ([`crate::store::Store::open`]): a second
/// catalog given the same bucket and prefix (a staging deployment pointed at
/// production's) is refused instead of overwriting the other's published documents.
macro_rules! catalog_identity {
    ($collate:literal, $random:literal) => {
        concat!(
            "CREATE TABLE catalog_identity (one INTEGER PRIMARY KEY CHECK (one = 1), id TEXT ",
            $collate,
            " NOT NULL); INSERT INTO catalog_identity (one, id) VALUES (1, ",
            $random,
            ");"
        )
    };
}

/// Migration 18, the same on both backends: a version's failures to store a file its
/// publisher served (the blob store's, not the publisher's: they never give the version
/// up, `max_failed_runs`), counted so that its retries back off as the publisher's do: a
/// file the store refuses for good (above AWS S3's 5 GiB CopyObject) is not downloaded
/// again every `retry_backoff_secs`.
const STORE_FAILURES: &str =
    "ALTER TABLE versions ADD COLUMN store_failures BIGINT NOT NULL DEFAULT 0;";

/// The schema of the hub's tables (a migration of the catalog).
const HUB: &str = r#"
CREATE TABLE topics (
    publisher TEXT NOT NULL,
    access    TEXT NOT NULL CHECK (access IN ('gratis', 'restricted')),
    last_seq  INTEGER NOT NULL,   -- the journal position the last notification ended at
    until_at  TEXT NOT NULL,      -- and its `until`: the next one's `from`
    PRIMARY KEY (publisher, access)
);
CREATE TABLE subscriptions (
    id               INTEGER PRIMARY KEY,
    publisher        TEXT NOT NULL,
    access           TEXT NOT NULL CHECK (access IN ('gratis', 'restricted')),
    callback         TEXT NOT NULL,
    secret           TEXT,        -- hub.secret: signs deliveries; never shown
    destination      TEXT,        -- the [[destination]] of a restricted topic
    lease_expires_at TEXT NOT NULL,
    created_at       TEXT NOT NULL,
    UNIQUE (publisher, access, callback)
);
CREATE TABLE notifications (
    id         INTEGER PRIMARY KEY,
    publisher  TEXT NOT NULL,
    access     TEXT NOT NULL,
    after_seq  INTEGER NOT NULL,
    last_seq   INTEGER NOT NULL,
    from_at    TEXT NOT NULL,
    until_at   TEXT NOT NULL,
    changes    INTEGER NOT NULL,
    body       BLOB NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX notifications_topic ON notifications(publisher, access, id);
CREATE TABLE deliveries (
    subscription_id INTEGER NOT NULL REFERENCES subscriptions(id) ON DELETE CASCADE,
    notification_id INTEGER NOT NULL REFERENCES notifications(id) ON DELETE CASCADE,
    state           TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    claimed_until   TEXT,
    last_error      TEXT,
    delivered_at    TEXT,
    PRIMARY KEY (subscription_id, notification_id)
);
CREATE INDEX deliveries_pending ON deliveries(state, subscription_id, notification_id);
CREATE INDEX deliveries_notification ON deliveries(notification_id);
"#;

/// The schema of the leases (a migration of the catalog; the same text serves both
/// backends).
const LEASES: &str = r#"
CREATE TABLE leases (
    publisher    TEXT NOT NULL PRIMARY KEY,
    due_at       TEXT,          -- the next run is due; NULL: not scheduled by any worker
    last_claimed TEXT NOT NULL, -- when the last run was claimed (the schedule's base)
    worker       TEXT,          -- who holds the lease; NULL: nobody
    expires_at   TEXT           -- the holder's lease ends unless renewed
);
CREATE INDEX leases_due ON leases(due_at);
"#;

/// SQLite's schema versions, applied in order; index + 1 is the `user_version` after
/// each.
const SQLITE: &[&str] = &[
    r#"
CREATE TABLE publishers (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    feed          TEXT NOT NULL,
    etag          TEXT,
    last_modified TEXT
);
CREATE TABLE runs (
    id           INTEGER PRIMARY KEY,
    publisher    TEXT NOT NULL REFERENCES publishers(id),
    started_at   TEXT NOT NULL,
    ended_at     TEXT,
    -- running | ok | not-modified | failed | interrupted
    outcome      TEXT NOT NULL DEFAULT 'running',
    message      TEXT,
    items        INTEGER NOT NULL DEFAULT 0,
    new_versions INTEGER NOT NULL DEFAULT 0,
    rejected     INTEGER NOT NULL DEFAULT 0,
    deposited    INTEGER NOT NULL DEFAULT 0,
    files_stored INTEGER NOT NULL DEFAULT 0,
    files_failed INTEGER NOT NULL DEFAULT 0,
    bytes        INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX runs_publisher ON runs(publisher, id);
CREATE TABLE findings (
    id       INTEGER PRIMARY KEY,
    run_id   INTEGER NOT NULL REFERENCES runs(id),
    rule     TEXT NOT NULL,
    severity TEXT NOT NULL,
    line     INTEGER,
    col      INTEGER,
    item     INTEGER,
    guid     TEXT,
    url      TEXT,
    message  TEXT NOT NULL
);
CREATE INDEX findings_run ON findings(run_id);
CREATE TABLE rejections (
    id     INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    item   INTEGER NOT NULL,
    guid   TEXT,
    reason TEXT NOT NULL
);
CREATE TABLE deposits (
    id         INTEGER PRIMARY KEY,
    publisher  TEXT NOT NULL REFERENCES publishers(id),
    guid       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (publisher, guid)
);
CREATE TABLE versions (
    id              INTEGER PRIMARY KEY,
    deposit_id      INTEGER NOT NULL REFERENCES deposits(id),
    pub_date        TEXT NOT NULL,           -- the item's pubDate as a UTC instant
    pub_date_raw    TEXT NOT NULL,
    item_hash       TEXT NOT NULL,           -- SHA-256 of the item's metadata (H-VERSION)
    metadata        TEXT NOT NULL,           -- the item's metadata, JSON
    findings        TEXT NOT NULL,           -- the item's own findings, JSON
    conforming      INTEGER NOT NULL,        -- 0: the item has profile errors
    access          TEXT NOT NULL CHECK (access IN ('gratis', 'restricted')),
    state           TEXT NOT NULL CHECK (state IN ('pending', 'deposited', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT,
    last_error      TEXT,
    found_run       INTEGER NOT NULL REFERENCES runs(id),
    found_at        TEXT NOT NULL,
    deposited_at    TEXT,
    UNIQUE (deposit_id, pub_date)
);
CREATE INDEX versions_state ON versions(state);
CREATE TABLE blobs (
    sha256    TEXT PRIMARY KEY,
    length    INTEGER NOT NULL,
    md5       TEXT NOT NULL,
    stored_at TEXT NOT NULL
);
CREATE TABLE files (
    id               INTEGER PRIMARY KEY,
    version_id       INTEGER NOT NULL REFERENCES versions(id),
    ord              INTEGER NOT NULL,
    role             TEXT NOT NULL CHECK (role IN ('link', 'content')),
    url              TEXT NOT NULL,
    declared_type    TEXT,
    declared_size    INTEGER,
    declared_md5     TEXT,
    state            TEXT NOT NULL CHECK (state IN ('pending', 'stored', 'failed')),
    error            TEXT,
    final_url        TEXT,
    http_status      INTEGER,
    content_type     TEXT,
    content_encoding TEXT,
    last_modified    TEXT,
    etag             TEXT,
    filename         TEXT,
    sha256           TEXT REFERENCES blobs(sha256),
    length           INTEGER,
    md5              TEXT,
    fetched_at       TEXT,
    UNIQUE (version_id, ord),
    CHECK (state != 'stored' OR sha256 IS NOT NULL)
);
CREATE INDEX files_version ON files(version_id);
CREATE TABLE changes (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    version_id INTEGER NOT NULL UNIQUE REFERENCES versions(id),
    deposit_id INTEGER NOT NULL REFERENCES deposits(id),
    publisher  TEXT NOT NULL,
    change     TEXT NOT NULL CHECK (change IN ('created', 'updated')),
    at         TEXT NOT NULL
);
CREATE TRIGGER changes_no_update BEFORE UPDATE ON changes
BEGIN SELECT RAISE(ABORT, 'the change journal is append-only'); END;
CREATE INDEX changes_deposit ON changes(deposit_id);
CREATE TRIGGER changes_no_delete BEFORE DELETE ON changes
BEGIN SELECT RAISE(ABORT, 'the change journal is append-only'); END;
"#,
    // 2: Change Lists are read by publisher and period.
    "CREATE INDEX changes_publisher_at ON changes(publisher, at);",
    // 3: the length and digests of each version's metadata record (made by the
    // ResourceSync publisher from the version's metadata with a record mapping), so that
    // listing a record costs a join, not building it. Rows made with another mapping
    // are replaced.
    r#"
CREATE TABLE record_digests (
    version_id INTEGER PRIMARY KEY,
    mapping TEXT NOT NULL,
    length INTEGER NOT NULL,
    md5 TEXT NOT NULL,
    sha256 TEXT NOT NULL
);
"#,
    // 4: a publisher's deposits in id order (an index on `publisher` is ordered by
    // (publisher, rowid)), so that a page of the Resource List is a range scan instead of
    // a sort of all the publisher's files; files by version come from the UNIQUE
    // (version_id, ord) index, in file order, which makes `files_version` redundant.
    "CREATE INDEX deposits_publisher ON deposits(publisher); DROP INDEX files_version;",
    // 5: the Change Notification hub: topics, subscriptions, the outbox.
    HUB,
    // 6: run leases, for any number of workers (issue 17 §3).
    LEASES,
    // 7: the operators' dashboard reads deposits and runs by day.
    DASHBOARD,
    // 8: small blobs in packs on an object store.
    PACKS,
    // 9: a pack's blobs, in their order in it.
    BLOBS_BY_PACK,
    // 10: pending versions by deposit, instead of every version by state.
    PENDING_VERSIONS,
    // 11: each publisher's tally, kept as versions are deposited.
    tallies!(""),
    // 12: the store's blobs and bytes, kept as blobs are recorded.
    BLOB_TALLY,
    // 13: where the digests of the records stop in the journal.
    RECORD_DIGEST_MARK,
    // 14: a publisher's runs by outcome; an item's rejections by run.
    RUN_HISTORY,
    // 15: each publisher's restricted versions in its tally.
    RESTRICTED_TALLY,
    // 16: a publisher's changes in journal order.
    CHANGES_BY_PUBLISHER,
    // 17: the catalog's identity.
    catalog_identity!("", "lower(hex(randomblob(16)))"),
    // 18: a version's failures to store a file.
    STORE_FAILURES,
];

/// Migration 10, the same on both backends: the index of versions by `state` is
/// replaced by one of the pending versions by deposit. The old index sorted every version
/// under one of three values; a planner without fresh statistics (PostgreSQL in the
/// minute after a large harvest, before autovacuum analyzes the new rows) took it for
/// selective and probed it once per deposit (a `BitmapAnd` with the deposit's versions),
/// reading all N of a state's entries N times: an unchanged re-harvest of 10,000 items
/// took 5–7 s instead of 0.3 s, and the first publish after it 15–18 s instead of 3
/// (BENCHMARKS.md, "The planner's statistics"). The new index holds only the work left
/// to do, and only the query written for it
/// ([`Catalog::due_versions`](super::Catalog::due_versions)) can use it: it names both
/// terms of the predicate as literals. The second term says nothing new (a pending version
/// has never been deposited); it is there so that a statement which settles a batch of
/// versions by key with `state = 'pending'` as a guard is never planned through this index
/// instead of the keys, which on the same stale statistics read every pending version once
/// per batch.
/// The predicate of `versions_pending` (migration 10) for `versions` aliased `v`: the
/// index is used only by a query that states it exactly. The run's due versions, the
/// tallies and the status page's unsettled versions name pending versions with it.
pub(super) const PENDING_VERSION: &str = "v.state = 'pending' AND v.deposited_at IS NULL";

/// The predicate of `versions_failed` (migration 11) for `versions` aliased `v`.
pub(super) const FAILED_VERSION: &str = "v.state = 'failed'";

const PENDING_VERSIONS: &str = "DROP INDEX versions_state;
CREATE INDEX versions_pending ON versions(deposit_id)
WHERE state = 'pending' AND deposited_at IS NULL;";

/// Migration 9, the same on both backends: blobs by pack and offset, so that `plikt
/// audit` walks the packs a page at a time and reads each pack's blobs in order, and
/// finds whether a listed object is a pack the catalog names, without holding every
/// blob in memory (10 million files a year, issue 17 §7).
const BLOBS_BY_PACK: &str = "CREATE INDEX blobs_pack ON blobs(pack, pack_offset);";

/// Migration 8, the same on both backends (issue 17 §6): a blob stored in a pack on the
/// object store names the pack (its name) and its first byte there; both are NULL for
/// a blob at its own name (every blob of the local folder).
const PACKS: &str =
    "ALTER TABLE blobs ADD COLUMN pack TEXT; ALTER TABLE blobs ADD COLUMN pack_offset BIGINT;";

/// Migration 7, the same on both backends: deposits by the day they were journalled,
/// runs by the day they started (the dashboard's charts, issue 16 §6).
const DASHBOARD: &str =
    "CREATE INDEX changes_at ON changes(at); CREATE INDEX runs_started ON runs(started_at);";

/// PostgreSQL's schema versions, the same schema as [`SQLITE`] at each version: the
/// first holds SQLite's versions 1 to 5 at once (there were no PostgreSQL catalogs
/// before), the next four are empty. Integers are `BIGINT`, text sorts by code point
/// (`COLLATE "C"`, as SQLite does, whatever the database's locale), times are RFC 3339
/// text as on SQLite, so one SQL serves both.
const POSTGRES: &[&str] = &[
    r#"
CREATE TABLE publishers (
    id            TEXT COLLATE "C" PRIMARY KEY,
    name          TEXT COLLATE "C" NOT NULL,
    feed          TEXT COLLATE "C" NOT NULL,
    etag          TEXT COLLATE "C",
    last_modified TEXT COLLATE "C"
);
CREATE TABLE runs (
    id           BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    publisher    TEXT COLLATE "C" NOT NULL REFERENCES publishers(id),
    started_at   TEXT COLLATE "C" NOT NULL,
    ended_at     TEXT COLLATE "C",
    outcome      TEXT COLLATE "C" NOT NULL DEFAULT 'running',
    message      TEXT COLLATE "C",
    items        BIGINT NOT NULL DEFAULT 0,
    new_versions BIGINT NOT NULL DEFAULT 0,
    rejected     BIGINT NOT NULL DEFAULT 0,
    deposited    BIGINT NOT NULL DEFAULT 0,
    files_stored BIGINT NOT NULL DEFAULT 0,
    files_failed BIGINT NOT NULL DEFAULT 0,
    bytes        BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX runs_publisher ON runs(publisher, id);
CREATE TABLE findings (
    id       BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    run_id   BIGINT NOT NULL REFERENCES runs(id),
    rule     TEXT COLLATE "C" NOT NULL,
    severity TEXT COLLATE "C" NOT NULL,
    line     BIGINT,
    col      BIGINT,
    item     BIGINT,
    guid     TEXT COLLATE "C",
    url      TEXT COLLATE "C",
    message  TEXT COLLATE "C" NOT NULL
);
CREATE INDEX findings_run ON findings(run_id);
CREATE TABLE rejections (
    id     BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    run_id BIGINT NOT NULL REFERENCES runs(id),
    item   BIGINT NOT NULL,
    guid   TEXT COLLATE "C",
    reason TEXT COLLATE "C" NOT NULL
);
CREATE TABLE deposits (
    id         BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    publisher  TEXT COLLATE "C" NOT NULL REFERENCES publishers(id),
    guid       TEXT COLLATE "C" NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL,
    UNIQUE (publisher, guid)
);
CREATE INDEX deposits_publisher ON deposits(publisher, id);
CREATE TABLE versions (
    id              BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    deposit_id      BIGINT NOT NULL REFERENCES deposits(id),
    pub_date        TEXT COLLATE "C" NOT NULL,
    pub_date_raw    TEXT COLLATE "C" NOT NULL,
    item_hash       TEXT COLLATE "C" NOT NULL,
    metadata        TEXT COLLATE "C" NOT NULL,
    findings        TEXT COLLATE "C" NOT NULL,
    conforming      BIGINT NOT NULL,
    access          TEXT COLLATE "C" NOT NULL CHECK (access IN ('gratis', 'restricted')),
    state           TEXT COLLATE "C" NOT NULL CHECK (state IN ('pending', 'deposited', 'failed')),
    attempts        BIGINT NOT NULL DEFAULT 0,
    next_attempt_at TEXT COLLATE "C",
    last_error      TEXT COLLATE "C",
    found_run       BIGINT NOT NULL REFERENCES runs(id),
    found_at        TEXT COLLATE "C" NOT NULL,
    deposited_at    TEXT COLLATE "C",
    UNIQUE (deposit_id, pub_date)
);
CREATE INDEX versions_state ON versions(state);
CREATE TABLE blobs (
    sha256    TEXT COLLATE "C" PRIMARY KEY,
    length    BIGINT NOT NULL,
    md5       TEXT COLLATE "C" NOT NULL,
    stored_at TEXT COLLATE "C" NOT NULL
);
CREATE TABLE files (
    id               BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    version_id       BIGINT NOT NULL REFERENCES versions(id),
    ord              BIGINT NOT NULL,
    role             TEXT COLLATE "C" NOT NULL CHECK (role IN ('link', 'content')),
    url              TEXT COLLATE "C" NOT NULL,
    declared_type    TEXT COLLATE "C",
    declared_size    BIGINT,
    declared_md5     TEXT COLLATE "C",
    state            TEXT COLLATE "C" NOT NULL CHECK (state IN ('pending', 'stored', 'failed')),
    error            TEXT COLLATE "C",
    final_url        TEXT COLLATE "C",
    http_status      BIGINT,
    content_type     TEXT COLLATE "C",
    content_encoding TEXT COLLATE "C",
    last_modified    TEXT COLLATE "C",
    etag             TEXT COLLATE "C",
    filename         TEXT COLLATE "C",
    sha256           TEXT COLLATE "C" REFERENCES blobs(sha256),
    length           BIGINT,
    md5              TEXT COLLATE "C",
    fetched_at       TEXT COLLATE "C",
    UNIQUE (version_id, ord),
    CHECK (state != 'stored' OR sha256 IS NOT NULL)
);
CREATE TABLE changes (
    seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    version_id BIGINT NOT NULL UNIQUE REFERENCES versions(id),
    deposit_id BIGINT NOT NULL REFERENCES deposits(id),
    publisher  TEXT COLLATE "C" NOT NULL,
    change     TEXT COLLATE "C" NOT NULL CHECK (change IN ('created', 'updated')),
    at         TEXT COLLATE "C" NOT NULL
);
CREATE INDEX changes_deposit ON changes(deposit_id);
CREATE INDEX changes_publisher_at ON changes(publisher, at);
CREATE FUNCTION plikt_changes_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'the change journal is append-only'; END $$;
CREATE TRIGGER changes_no_update BEFORE UPDATE OR DELETE ON changes
FOR EACH ROW EXECUTE FUNCTION plikt_changes_append_only();
CREATE TABLE record_digests (
    version_id BIGINT PRIMARY KEY,
    mapping    TEXT COLLATE "C" NOT NULL,
    length     BIGINT NOT NULL,
    md5        TEXT COLLATE "C" NOT NULL,
    sha256     TEXT COLLATE "C" NOT NULL
);
CREATE TABLE topics (
    publisher TEXT COLLATE "C" NOT NULL,
    access    TEXT COLLATE "C" NOT NULL CHECK (access IN ('gratis', 'restricted')),
    last_seq  BIGINT NOT NULL,
    until_at  TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (publisher, access)
);
CREATE TABLE subscriptions (
    id               BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    publisher        TEXT COLLATE "C" NOT NULL,
    access           TEXT COLLATE "C" NOT NULL CHECK (access IN ('gratis', 'restricted')),
    callback         TEXT COLLATE "C" NOT NULL,
    secret           TEXT COLLATE "C",
    destination      TEXT COLLATE "C",
    lease_expires_at TEXT COLLATE "C" NOT NULL,
    created_at       TEXT COLLATE "C" NOT NULL,
    UNIQUE (publisher, access, callback)
);
CREATE TABLE notifications (
    id         BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    publisher  TEXT COLLATE "C" NOT NULL,
    access     TEXT COLLATE "C" NOT NULL,
    after_seq  BIGINT NOT NULL,
    last_seq   BIGINT NOT NULL,
    from_at    TEXT COLLATE "C" NOT NULL,
    until_at   TEXT COLLATE "C" NOT NULL,
    changes    BIGINT NOT NULL,
    body       BYTEA NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX notifications_topic ON notifications(publisher, access, id);
CREATE TABLE deliveries (
    subscription_id BIGINT NOT NULL REFERENCES subscriptions(id) ON DELETE CASCADE,
    notification_id BIGINT NOT NULL REFERENCES notifications(id) ON DELETE CASCADE,
    state           TEXT COLLATE "C" NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts        BIGINT NOT NULL DEFAULT 0,
    next_attempt_at TEXT COLLATE "C" NOT NULL,
    claimed_until   TEXT COLLATE "C",
    last_error      TEXT COLLATE "C",
    delivered_at    TEXT COLLATE "C",
    PRIMARY KEY (subscription_id, notification_id)
);
CREATE INDEX deliveries_pending ON deliveries(state, subscription_id, notification_id);
CREATE INDEX deliveries_notification ON deliveries(notification_id);
"#,
    // 2 to 5: in 1.
    "",
    "",
    "",
    "",
    // 6: run leases, for any number of workers (issue 17 §3); text sorts by code point.
    r#"
CREATE TABLE leases (
    publisher    TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    due_at       TEXT COLLATE "C",
    last_claimed TEXT COLLATE "C" NOT NULL,
    worker       TEXT COLLATE "C",
    expires_at   TEXT COLLATE "C"
);
CREATE INDEX leases_due ON leases(due_at);
"#,
    // 7: the operators' dashboard.
    DASHBOARD,
    // 8: small blobs in packs; a file's row is filled in where it was written.
    r#"ALTER TABLE blobs ADD COLUMN pack TEXT; ALTER TABLE blobs ADD COLUMN pack_offset BIGINT;
ALTER TABLE files SET (fillfactor = 50);"#,
    // 9: a pack's blobs, in their order in it.
    BLOBS_BY_PACK,
    // 10: pending versions by deposit, instead of every version by state.
    PENDING_VERSIONS,
    // 11: each publisher's tally, kept as versions are deposited.
    tallies!("COLLATE \"C\""),
    // 12: the store's blobs and bytes, kept as blobs are recorded.
    BLOB_TALLY,
    // 13: where the digests of the records stop in the journal.
    RECORD_DIGEST_MARK,
    // 14: a publisher's runs by outcome; an item's rejections by run.
    RUN_HISTORY,
    // 15: each publisher's restricted versions in its tally.
    RESTRICTED_TALLY,
    // 16: a publisher's changes in journal order.
    CHANGES_BY_PUBLISHER,
    // 17: the catalog's identity.
    catalog_identity!("COLLATE \"C\"", "replace(gen_random_uuid()::text, '-', '')"),
    // 18: a version's failures to store a file.
    STORE_FAILURES,
];

#[cfg(test)]
mod tests;
