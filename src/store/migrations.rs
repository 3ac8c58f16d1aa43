//! The catalog's schema, as the migrations that make it: applied in order by
//! [`Catalog::open`](super::Catalog::open), each in a transaction of its own, the
//! version kept in `PRAGMA user_version`. A migration is never changed once released:
//! a new version of the schema is a new entry at the end.

/// Schema versions, applied in order; index + 1 is the `user_version` after each.
pub(super) const MIGRATIONS: &[&str] = &[
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
    super::notify::MIGRATION,
];
