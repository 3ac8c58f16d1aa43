//! Prometheus metrics of this process (`GET /metrics`, in the text exposition format,
//! through the Prometheus project's own `prometheus-client`): what harvests, deliveries
//! and validations did since the process started. Names follow Prometheus conventions:
//! `plikt_…_total` for counters, `_seconds` and `_bytes` units.
//!
//! The counts that outlive a process (deposits, versions, the store's size, deliveries
//! waiting) are read from the catalog when `/metrics` is scraped (`server`), so
//! `plikt serve` reports a collection that `plikt harvest` filled.
//!
//! One registry per process ([`get`]), as `tracing` has one subscriber: the parts of
//! plikt count where the events happen, without threading a handle through every call.

use std::sync::OnceLock;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};

/// A publisher.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PublisherLabel {
    /// Its id.
    pub publisher: String,
}

/// A publisher and an outcome or reason.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PublisherOutcome {
    /// The publisher's id.
    pub publisher: String,
    /// How it ended, or why it failed.
    pub outcome: String,
}

/// What was fetched: `feed` or `file`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabel {
    /// `feed` or `file`.
    pub kind: String,
}

/// An outcome.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OutcomeLabel {
    /// How it ended.
    pub outcome: String,
}

type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

/// The metrics of this process.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    /// Runs by publisher and outcome (`ok`, `not-modified`, `failed`, `interrupted`).
    pub runs: Family<PublisherOutcome, Counter>,
    /// Items read from feeds.
    pub items: Family<PublisherLabel, Counter>,
    /// Versions deposited (every file stored, the change journalled).
    pub versions: Family<PublisherLabel, Counter>,
    /// Files stored.
    pub files: Family<PublisherLabel, Counter>,
    /// Bytes of files stored.
    pub bytes: Family<PublisherLabel, Counter>,
    /// Files that failed, by reason (`timeout`, `connect`, `http-status`, `too-large`,
    /// `too-slow`, `redirect`, `refused`, `md5`, `store`, `other`).
    pub failures: Family<PublisherOutcome, Counter>,
    /// Requests retried, by what was fetched.
    pub retries: Family<KindLabel, Counter>,
    /// How long a fetch took, from the request to the last byte, by what was fetched
    /// (a feed answered 304 is not counted; retries are counted apart).
    pub fetch_seconds: Histograms<KindLabel>,
    /// Change notification deliveries by outcome (`delivered`, `retry`, `given-up`).
    pub deliveries: Family<OutcomeLabel, Counter>,
    /// Validations served by the web page and the API, by verdict (`valid`, `invalid`,
    /// `unreadable`).
    pub validations: Family<OutcomeLabel, Counter>,
    /// How long a served validation took.
    pub validation_seconds: Histograms<OutcomeLabel>,
    /// The catalog's clock minus this machine's at a worker's last claim (PostgreSQL:
    /// `store::clock`; 0 with SQLite), so that a drift is seen before the worker stops
    /// claiming runs at `[catalog] max_clock_offset_secs`.
    pub clock_offset: Gauge<f64, std::sync::atomic::AtomicU64>,
}

fn seconds() -> Histogram {
    // 10 ms … about 11 minutes.
    Histogram::new(exponential_buckets(0.01, 2.0, 17))
}

impl Metrics {
    fn new() -> Self {
        let mut registry = Registry::default();
        let m = Self {
            runs: Family::default(),
            items: Family::default(),
            versions: Family::default(),
            files: Family::default(),
            bytes: Family::default(),
            failures: Family::default(),
            retries: Family::default(),
            fetch_seconds: Family::new_with_constructor(seconds),
            deliveries: Family::default(),
            validations: Family::default(),
            validation_seconds: Family::new_with_constructor(seconds),
            clock_offset: Gauge::default(),
            registry: Registry::default(),
        };
        let r = &mut registry;
        r.register(
            "plikt_runs",
            "Harvest runs, by publisher and outcome",
            m.runs.clone(),
        );
        r.register("plikt_feed_items", "Items read from feeds", m.items.clone());
        r.register(
            "plikt_versions_deposited",
            "Versions deposited",
            m.versions.clone(),
        );
        r.register("plikt_files_stored", "Files stored", m.files.clone());
        r.register_with_unit(
            "plikt_stored",
            "Bytes of files stored",
            Unit::Bytes,
            m.bytes.clone(),
        );
        r.register(
            "plikt_file_failures",
            "Files that failed, by publisher and reason",
            m.failures.clone(),
        );
        r.register(
            "plikt_fetch_retries",
            "Requests retried, by what was fetched",
            m.retries.clone(),
        );
        r.register_with_unit(
            "plikt_fetch_duration",
            "Time to fetch a feed or a file",
            Unit::Seconds,
            m.fetch_seconds.clone(),
        );
        r.register(
            "plikt_notification_deliveries",
            "Change notification deliveries, by outcome",
            m.deliveries.clone(),
        );
        r.register(
            "plikt_validations",
            "Validations served by the web page and the API, by verdict",
            m.validations.clone(),
        );
        r.register_with_unit(
            "plikt_validation_duration",
            "Time to serve a validation",
            Unit::Seconds,
            m.validation_seconds.clone(),
        );
        r.register_with_unit(
            "plikt_clock_offset",
            "The catalog's clock minus this machine's, at the last claim of runs",
            Unit::Seconds,
            m.clock_offset.clone(),
        );
        Self { registry, ..m }
    }

    /// The metrics in the text exposition format, without the closing `# EOF` (the
    /// caller appends the catalog's and ends the text).
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode_registry(&mut out, &self.registry);
        out
    }

    /// Counts a publisher's metric.
    pub fn add(family: &Family<PublisherLabel, Counter>, publisher: &str, n: u64) {
        family
            .get_or_create(&PublisherLabel {
                publisher: publisher.to_string(),
            })
            .inc_by(n);
    }

    /// Counts a publisher's metric with an outcome.
    pub fn count(family: &Family<PublisherOutcome, Counter>, publisher: &str, outcome: &str) {
        family
            .get_or_create(&PublisherOutcome {
                publisher: publisher.to_string(),
                outcome: outcome.to_string(),
            })
            .inc();
    }

    /// Counts an outcome.
    pub fn outcome(family: &Family<OutcomeLabel, Counter>, outcome: &str) {
        family
            .get_or_create(&OutcomeLabel {
                outcome: outcome.to_string(),
            })
            .inc();
    }

    /// Records how long a fetch of `kind` took.
    pub fn fetched(&self, kind: &str, took: Duration) {
        self.fetch_seconds
            .get_or_create(&KindLabel {
                kind: kind.to_string(),
            })
            .observe(took.as_secs_f64());
    }

    /// Counts a retry of a fetch of `kind`.
    pub fn retried(&self, kind: &str) {
        self.retries
            .get_or_create(&KindLabel {
                kind: kind.to_string(),
            })
            .inc();
    }
}

/// The metrics of this process.
pub fn get() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(Metrics::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_conventions() {
        let m = Metrics::new();
        Metrics::count(&m.runs, "a", "ok");
        Metrics::add(&m.bytes, "a", 7);
        m.fetched("file", Duration::from_millis(30));
        let text = m.encode();
        assert!(
            text.contains("plikt_runs_total{publisher=\"a\",outcome=\"ok\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("plikt_stored_bytes_total{publisher=\"a\"} 7"),
            "{text}"
        );
        assert!(
            text.contains("plikt_fetch_duration_seconds_bucket{le=\"0.04\",kind=\"file\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("# TYPE plikt_fetch_duration_seconds histogram"),
            "{text}"
        );
    }
}
