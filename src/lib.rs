//! # plikt
//!
//! Legal deposit ("e-plikt") of publishers' RSS feeds for national libraries: validate
//! feeds against the National Library of Sweden's delivery profile 2.4, harvest what
//! they point at, and republish the collection through ResourceSync.
//!
//! ## Architecture
//!
//! Data flows one way — fetch → validate → diff → download → store → publish → serve —
//! and each module depends only on those above it (`cli` aside):
//!
//! ```text
//! config    plikt.toml: serde structs, unknown keys refused, secrets from env/file
//! i18n      Swedish and English: Fluent catalogues (pages, findings, rules); a
//!           Finding's Message (and a G-XML error's) is an ID + arguments,
//!           rendered in the reader's language only at the edges
//! xml       decoding (UTF-8, ISO-8859-1, windows-1252, UTF-16) to text scanned in
//!           place: G-XML = XML 1.0 + namespaces well-formedness, exactly (DOCTYPE and
//!           internal subset; internal entities expanded under a bound; nothing
//!           fetched), limits, line:column positions
//! feed      RSS 2.0 + MediaRSS + DCMI Terms model; pulls one Item at a time
//! profile   KB profile 2.4 rules → Findings (no I/O); Validator (streaming) and
//!           validate() → Report; validate_file() reads a large UTF-8 file on two
//!           threads (split: a helper checks stretches of items, the main thread
//!           takes them only at a verified boundary) with the same Report
//! report    printers of a Report: text (source line + caret), JSON, JUnit, in the
//!           reader's language
//! fetch     HTTP: one Policy (built-in defaults → [http] → [publisher.http] →
//!           command line) of timeouts, minimum speed, size caps while streaming,
//!           redirects, SSRF guard, retries, limits; Client follows it (manual
//!           redirects, credentials per origin; a HostGate shares per-host limits
//!           with other workers)
//! store     content-addressed blobs behind one API ([blobs]: the local folder, tmp →
//!           batch sync → rename → sync; or an S3-compatible object store, parts
//!           streamed to a temporary object → server-side copy, files ≤ 1 MiB in packs
//!           (the catalog records pack and offset), identical bytes once as the
//!           catalog decides) + the catalog on SQLite (WAL, synchronous=FULL) or
//!           PostgreSQL ([catalog] url; TLS as its libpq sslmode says, a client
//!           certificate as its sslcert and sslkey, `store::tls`):
//!           `store::sql` is the one SQL layer over both,
//!           migrations per backend, an append-only change journal, run leases and
//!           the hub's claims and leases (times of the catalog's clock,
//!           `store::clock`; a writer whose clock is further from it than
//!           max_clock_offset_secs does not start),
//!           each publisher's tally and the blobs' (kept where versions are
//!           deposited and blobs recorded; `plikt audit` checks them), the journal
//!           position up to which records are digested;
//!           `store::check_object_store`: a writer or server starts only if the object
//!           store takes its requests and its prefix names this catalog
//!           (`<prefix>catalog-id`, the catalog's identity);
//!           `store::Connection` is a long-lived loop's connection, made again after
//!           PostgreSQL went away; `store::moving` copies a catalog and its blobs to
//!           another backend (`plikt migrate`); the only module with SQL
//!           (the catalog's `impl` split by concern: runs, lease, stage, deposit,
//!           published, notify, query, audit; `docs/design.md` draws the modules)
//! harvest   one run of one publisher: fetch → validate (two passes: verdict, then
//!           diff in one transaction) → download + verify (H-*) → deposit; a file the
//!           blob store could not keep is no attempt of the publisher's, and once the
//!           store takes no file (the object store does not answer; the folder full,
//!           read-only or not plikt's) the run starts no more downloads; `refetch`
//!           brings back blobs `plikt audit` found lost, from their publishers
//! schedule  cron → runs shared by any number of workers through run leases in the
//!           catalog (claim due runs, renew, release with the next slot; a dead
//!           worker's runs are taken over), per-host limits kept together (advisory
//!           locks, checked every second still held); status
//! resourcesync  streaming Sitemap/ResourceSync writer; `publish` writes, from the
//!           catalog, where `layout` says (the one list the server serves from): the
//!           Source Description, Capability Lists, Resource and Change Lists (the two
//!           kinds at once, each through its own catalog connection), Resource and
//!           Change Dumps, the four Archives (a part per year once they span more
//!           than one; dated snapshots of Resource Lists and Dumps, dump packages
//!           named by content and shared, one lost written again byte for byte, all
//!           read again by `plikt audit`), and change
//!           notification payloads; metadata records are made by the `mappings/` record
//!           mapping when listed, served or packed; a set is written again only
//!           when its state (`.published`: journal position, day, settings) moved,
//!           and a document whose bytes did not change is left in place (its ETag
//!           holds); with an object store the documents are shared through it
//!           (`mirror`: a manifest per set, its dated documents in a shard per year;
//!           pull what changed before a publish, push the sets
//!           written after, leaves first, each write fenced by the publish lock among
//!           workers still held; dump packages kept there only, a stub in
//!           the folder), and served from it;
//!           `publish_until` stops
//!           between sets and dump packages (SIGTERM), and the next publish goes on
//! notify    Change Notification over WebSub: `enqueue` (after a publish) stores each
//!           topic's notifications with a delivery per subscriber (an outbox in the
//!           catalog); the hub (subscription requests, verification of intent); the
//!           delivery loop (claims with a lease, signed POSTs, backoff)
//! server    axum routes of `plikt run` / `plikt serve` (`fn app(state) -> Router`):
//!           documents, resources from the blob store (with SQLite + the local folder,
//!           kept in memory by `server::cache`, emptied when the catalog changes),
//!           topics, the hub, status; the
//!           validation service for publishers (`server::web`: /validate, /rules,
//!           POST /api/validate; askama templates, Fluent texts per language, limits)
//!           and the operators' dashboard (/dashboard: publishers, SVG charts);
//!           every answer through `server::guard` (nosniff and a sandboxing CSP,
//!           downloads for active types, 400 for control bytes, failed logins
//!           throttled) on plikt's own accept loop (header timeout)
//! metrics   Prometheus/OpenMetrics counters and gauges (runs, deposits, bytes,
//!           findings, deliveries; catalog gauges from the tallies), served on /metrics
//! cli       clap arguments, one file per command, fatal errors → exit codes
//!           (`cli::Error`); nothing depends on it
//! ```
//!
//! Validation streams: memory depends on the largest item, not on the feed (plus 8
//! bytes per item for guid uniqueness). Findings carry positions resolved while the
//! bytes pass; the text report reads the source lines back from the file afterwards.
//! Downloads stream too: each file goes to a temporary blob while MD5 and SHA-256 are
//! computed (on two threads once a file passes 1 MiB) — on an object store in parts as
//! they fill, at most three parts per file in memory, or held for a pack when small (a
//! batch at most 16 MiB of them) — and blobs are made durable in
//! batches before the catalog records them. Publishing streams as well: documents and
//! dump manifests are written entry by entry, so memory does not grow with the
//! collection.
//!
//! Exactly once: a version is `deposited` (with the access it keeps: an H-DRM finding
//! makes it `restricted` in the same transaction), and its change journalled, in one
//! catalog transaction guarded by its state; a crash at any instant leaves staged versions
//! `pending` and the next run fetches what they miss. Each such transaction's time is
//! later than the last one's, so journal order is forward chronological; a topic's
//! notifications are stored in the transaction that moves its place in the journal.
//!
//! The library API for other callers (harvester, web page) is
//! [`profile::validate`] (bytes in, [`profile::Report`] out; [`profile::validate_file`]
//! for a file, faster on two cores) and
//! [`profile::Validator`] (items with their findings as they end);
//! [`harvest::Harvester::run`] harvests one publisher.

pub mod cli;
pub mod config;
pub mod feed;
pub mod fetch;
pub mod harvest;
pub mod i18n;
pub mod metrics;
pub mod notify;
pub mod profile;
pub mod report;
pub mod resourcesync;
pub mod schedule;
pub mod server;
pub mod store;
pub mod xml;
