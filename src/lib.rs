//! # plikt
//!
//! Legal deposit ("e-plikt") of publishers' RSS feeds for national libraries: validate
//! feeds against the National Library of Sweden's delivery profile 2.4, harvest what
//! they point at, and republish the collection through ResourceSync.
//!
//! ## Architecture
//!
//! Data flows one way, and each module depends only on those above it:
//!
//! ```text
//! xml      the only user of quick-xml: decoding (UTF-8, ISO-8859-1, windows-1252,
//!          UTF-16), G-XML well-formedness + namespaces, limits, line:column positions
//! feed     RSS 2.0 + MediaRSS + DCMI Terms model; pulls one Item at a time
//! profile  KB profile 2.4 rules → Findings (no I/O); Validator (streaming) and
//!          validate() → Report
//! report   printers of a Report: text (source line + caret), JSON, JUnit
//! fetch    HTTP client policy (timeouts, size caps, no content coding) and spool files
//! error    fatal errors and exit codes
//! cli      clap arguments, one file per command; nothing depends on it
//! ```
//!
//! Validation streams: memory depends on the largest item, not on the feed (plus 8
//! bytes per item for guid uniqueness). Findings carry positions resolved while the
//! bytes pass; the text report reads the source lines back from the file afterwards.
//!
//! The library API for other callers (harvester, web page) is
//! [`profile::validate`] (bytes in, [`profile::Report`] out) and
//! [`profile::Validator`] (items with their findings as they end).

pub mod cli;
pub mod config;
pub mod error;
pub mod feed;
pub mod fetch;
pub mod harvest;
pub mod profile;
pub mod report;
pub mod schedule;
pub mod server;
pub mod store;
pub mod xml;
