//! The configuration file (`plikt.toml`): one TOML document, unknown keys refused with
//! their name and line. The key names are a contract outside tools rely on (issue 3);
//! `plikt.example.toml` documents each one and a test loads it.
//!
//! Secrets never live here: a publisher's password comes from an environment variable
//! (`password_env`) or a file (`password_file`), is read when the configuration is
//! loaded, and is kept in a [`Secret`] whose `Debug` and `Display` print `***`.
//!
//! One struct per table of the file, each beside the checks that refuse its bad values,
//! so that a key, its default and its error message are read together; the larger
//! tables (`[catalog]`, `[[publisher]]`, `[blobs]`) and secrets have modules of their own.

mod blobs;
mod catalog;
mod publisher;
mod secret;
mod server;

/// Whether `a` and `b` name the same place (as written, or once both are resolved).
pub fn same_path(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(a), Ok(b)) if a == b
        )
}

use std::collections::HashSet;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use url::Url;

pub use blobs::{BlobsConfig, S3Settings};
pub(crate) use catalog::DECRYPT_KEY;
pub use catalog::{CatalogConfig, CatalogRoots, CatalogTls, ClientCertificate};
use publisher::unloaded;
pub use publisher::{AuthConfig, PublisherConfig};
pub use secret::Secret;
pub use server::{MIN_SECRET_CHARS, ServerConfig};

/// Why the configuration cannot be used. Messages name the file, key and line, and
/// never quote a secret.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read the configuration {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// TOML syntax, a wrong type, or an unknown key.
    #[error("{path}:{line}:{column}: {message}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// 1-based line (0 when unknown).
        line: usize,
        /// 1-based column (0 when unknown).
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A value is well-typed but unusable.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong and what to write instead.
        message: String,
    },
}

/// The whole configuration file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// SQLite catalog and blob store live here (relative paths are relative to the
    /// configuration file's folder).
    #[serde(default = "default_data_dir")]
    pub data_dir: PathBuf,
    /// Public URL the collection is republished under.
    #[serde(default = "default_base_url")]
    pub base_url: Url,
    /// Address `plikt run` and `plikt serve` listen on.
    #[serde(default = "default_listen")]
    pub listen: SocketAddr,
    /// Contact URL (or `mailto:`) of the deposit team, sent in every `User-Agent`.
    #[serde(default)]
    pub contact: Option<String>,
    /// `[http]`: the HTTP policy of every harvest, over the built-in defaults;
    /// publishers may override it (see [`crate::fetch::Policy`]).
    #[serde(default)]
    pub http: HttpTable,
    /// Harvest policy.
    #[serde(default)]
    pub harvest: HarvestConfig,
    /// Republishing.
    #[serde(default)]
    pub resourcesync: ResourceSyncConfig,
    /// `[blobs]`: the local folder (default) or an S3-compatible object store.
    #[serde(default)]
    pub blobs: BlobsConfig,
    /// Change notification: the hub and deliveries.
    #[serde(default)]
    pub notification: NotificationConfig,
    /// The validation page and API of `plikt serve` and `plikt run`.
    #[serde(default)]
    pub web: WebConfig,
    /// `[server]`: limits of the HTTP service's other doors.
    #[serde(default)]
    pub server: ServerConfig,
    /// The publishers, `[[publisher]]`.
    #[serde(default, rename = "publisher")]
    pub publishers: Vec<PublisherConfig>,
    /// Destinations allowed to see the restricted sets, `[[destination]]`.
    #[serde(default, rename = "destination")]
    pub destinations: Vec<DestinationConfig>,
    /// The deposit team: who may see the dashboard, `/status` and `/metrics`,
    /// `[[operator]]`.
    #[serde(default, rename = "operator")]
    pub operators: Vec<OperatorConfig>,
    /// Where the catalog is: `[catalog]` (absent: SQLite under `data_dir`).
    #[serde(default)]
    pub catalog: CatalogConfig,
}

/// `[[operator]]`: a member (or a monitoring system) of the deposit team, with a bearer
/// token or HTTP Basic credentials from the environment or a file, as for Destinations.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OperatorConfig {
    /// Short name, for logs.
    pub id: String,
    /// Environment variable holding a bearer token.
    #[serde(default)]
    pub token_env: Option<String>,
    /// File holding a bearer token (first line).
    #[serde(default)]
    pub token_file: Option<PathBuf>,
    /// HTTP Basic user name (with `password_env` or `password_file`).
    #[serde(default)]
    pub username: Option<String>,
    /// Environment variable holding the Basic password.
    #[serde(default)]
    pub password_env: Option<String>,
    /// File holding the Basic password (first line).
    #[serde(default)]
    pub password_file: Option<PathBuf>,
    /// The token or password, once loaded, or why it could not be.
    #[serde(skip, default = "unloaded")]
    pub secret: Result<Secret, String>,
}

impl std::fmt::Debug for OperatorConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OperatorConfig")
            .field("id", &self.id)
            .field("username", &self.username)
            .field("secret", &self.secret)
            .finish()
    }
}

/// `[[destination]]`: a Destination (another library, an aggregator) that may sync the
/// restricted sets, with a bearer token or HTTP Basic credentials. Secrets come from
/// the environment or a file, as for publishers.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DestinationConfig {
    /// Short name, for logs.
    pub id: String,
    /// Environment variable holding a bearer token (`Authorization: Bearer …`).
    #[serde(default)]
    pub token_env: Option<String>,
    /// File holding a bearer token (first line).
    #[serde(default)]
    pub token_file: Option<PathBuf>,
    /// HTTP Basic user name (with `password_env` or `password_file`).
    #[serde(default)]
    pub username: Option<String>,
    /// Environment variable holding the Basic password.
    #[serde(default)]
    pub password_env: Option<String>,
    /// File holding the Basic password (first line).
    #[serde(default)]
    pub password_file: Option<PathBuf>,
    /// Publishers whose restricted sets it may see (empty: all).
    #[serde(default)]
    pub publishers: Vec<String>,
    /// The token or password, once loaded, or why it could not be.
    #[serde(skip, default = "unloaded")]
    pub secret: Result<Secret, String>,
}

impl std::fmt::Debug for DestinationConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DestinationConfig")
            .field("id", &self.id)
            .field("username", &self.username)
            .field("publishers", &self.publishers)
            .field("secret", &self.secret)
            .finish()
    }
}

impl DestinationConfig {
    /// May it see `publisher`'s restricted set?
    pub fn may_see(&self, publisher: &str) -> bool {
        self.publishers.is_empty() || self.publishers.iter().any(|p| p == publisher)
    }
}

fn default_data_dir() -> PathBuf {
    PathBuf::from("plikt-data")
}

fn default_base_url() -> Url {
    Url::parse("http://127.0.0.1:8080/").expect("constant URL")
}

fn default_listen() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 8080))
}

/// `[http]` and `[publisher.http]` as written in the file: every key optional, each a
/// contract name (issue 3 §5).
///
/// This is only the *input* shape. The policy requests follow is
/// [`crate::fetch::Policy`] (`Duration`s, and the one place with the built-in defaults),
/// which applies these tables as layers: built-in defaults → `[http]` →
/// `[publisher.http]` → command line. A serde struct stays here because the file needs
/// one that keeps an absent key absent — so that `[publisher.http]` overrides only what
/// it names — and refuses unknown keys with their line; `config` sits above `fetch` and
/// cannot name the policy itself.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpTable {
    /// Time to establish a connection (TCP + TLS).
    pub connect_timeout_secs: Option<u64>,
    /// Longest wait for the next bytes.
    pub read_timeout_secs: Option<u64>,
    /// Longest time for one whole file, redirects included.
    pub total_timeout_secs: Option<u64>,
    /// Largest file accepted, counted while streaming.
    pub max_file_bytes: Option<u64>,
    /// Largest feed accepted, after decoding a compressed response.
    pub max_feed_bytes: Option<u64>,
    /// Retries of one request after a connection error, timeout, 5xx or 429.
    pub retries: Option<u32>,
    /// First retry delay; doubled each time, with jitter.
    pub retry_base_ms: Option<u64>,
    /// A `Retry-After` longer than this postpones the item to a later run.
    pub max_retry_after_secs: Option<u64>,
    /// Minimum throughput over `min_speed_window_secs` (0 = off).
    pub min_bytes_per_sec: Option<u64>,
    /// The window the minimum throughput is measured over.
    pub min_speed_window_secs: Option<u64>,
    /// Redirect hops followed before giving up.
    pub max_redirects: Option<u32>,
    /// Concurrent requests in all (`[http]` only: one process-wide limit).
    pub max_connections: Option<usize>,
    /// Concurrent requests to one host.
    pub max_connections_per_host: Option<usize>,
    /// PEM files with extra trusted root certificates, added to the built-in roots
    /// (`[http]` only; verification is never disabled).
    pub extra_root_certificates: Option<Vec<PathBuf>>,
}

/// `[publisher.http]`: an [`HttpTable`] without the process-wide keys, refused there
/// with their name (and the table's line) as before the tables shared one shape.
fn publisher_http<'de, D: serde::Deserializer<'de>>(d: D) -> Result<HttpTable, D::Error> {
    let table = HttpTable::deserialize(d)?;
    for (key, set) in [
        ("max_connections", table.max_connections.is_some()),
        (
            "extra_root_certificates",
            table.extra_root_certificates.is_some(),
        ),
    ] {
        if set {
            return Err(serde::de::Error::custom(format!(
                "unknown field `{key}` in [publisher.http]: it applies to the whole process; set it in [http]"
            )));
        }
    }
    Ok(table)
}

/// `[harvest]`: what happens to items that fail.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HarvestConfig {
    /// After this many failed runs a version stays failed (visible in `plikt status`)
    /// instead of being retried.
    pub max_failed_runs: u32,
    /// Delay before retrying a failed version; doubled after each failed run.
    pub retry_backoff_secs: u64,
    /// Longest delay between retries of a failed version.
    pub max_retry_backoff_secs: u64,
    /// How long in-flight files may take to finish on shutdown before they are
    /// abandoned (and retried by the next run).
    pub shutdown_grace_secs: u64,
    /// Run findings are kept for this many feed reads per publisher (0 = all); each
    /// version keeps its own findings for ever.
    pub findings_retention_runs: u32,
    /// A worker's claim on a run (its lease) lasts this long unless renewed; a worker
    /// renews it every third of this while it works. A dead worker's runs are taken
    /// over by another worker this long after it stopped (issue 17 §3).
    pub lease_secs: u64,
    /// How often `plikt run` looks for runs that are due (its own next slot wakes it
    /// at once; this is for runs another worker left or released).
    pub poll_secs: u64,
    /// Runs one worker carries out at once; the rest stay due for other workers.
    /// `plikt harvest` starts no more at once either.
    pub runs_per_worker: u32,
}

impl Default for HarvestConfig {
    fn default() -> Self {
        Self {
            max_failed_runs: 5,
            retry_backoff_secs: 600,
            max_retry_backoff_secs: 86_400,
            shutdown_grace_secs: 20,
            findings_retention_runs: 100,
            lease_secs: 60,
            poll_secs: 10,
            runs_per_worker: 16,
        }
    }
}

/// `[resourcesync]`: republishing.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ResourceSyncConfig {
    /// Largest Resource Dump package: the whole ZIP, headers, records and manifest
    /// included; a single larger file gets a package of its own.
    pub dump_package_bytes: u64,
    /// Days a snapshot of a Resource List or Resource Dump stays in its archive
    /// (Archives 0.9.1); 0 keeps every snapshot for ever. An expired snapshot leaves
    /// the archive before its files are removed.
    pub snapshot_retention_days: u32,
}

impl Default for ResourceSyncConfig {
    fn default() -> Self {
        Self {
            dump_package_bytes: 100 << 20,
            snapshot_retention_days: 0,
        }
    }
}

/// `[notification]`: Change Notification 1.0.1 over WebSub: plikt's own hub, its
/// subscriptions and its deliveries.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NotificationConfig {
    /// Allow callbacks (and external hubs) on loopback, private and link-local
    /// addresses (default: refused, also after DNS resolution). A contract name that
    /// outside tools rely on; tests on loopback set it.
    pub allow_private: bool,
    /// Lease granted when a subscriber asks for none (WebSub §5.1).
    pub default_lease_secs: u64,
    /// Shortest lease granted.
    pub min_lease_secs: u64,
    /// Longest lease granted.
    pub max_lease_secs: u64,
    /// Changes per notification; a larger burst is split into several.
    pub max_changes: u64,
    /// Delivery attempts of one notification to one subscriber before it is given up.
    pub max_attempts: u32,
    /// First retry delay of a failed delivery; doubled each time, with jitter.
    pub retry_base_secs: u64,
    /// Longest retry delay.
    pub max_retry_secs: u64,
    /// Time for one delivery or verification request, connection included.
    pub timeout_secs: u64,
    /// Deliveries in flight at once (each subscriber gets its notifications in order,
    /// one at a time). Retries take at most half of them, so callbacks that never
    /// answer delay the others only when more than half this many hang at once.
    pub max_concurrent_deliveries: usize,
    /// External WebSub hubs to ping (`hub.mode=publish`) after each notification,
    /// for a library that runs its own hub.
    pub external_hubs: Vec<Url>,
    /// Notifications kept in the catalog after every subscriber has them.
    pub keep_days: u32,
    /// Subscription requests a client address may make per minute once its burst is
    /// spent (0: no limit); more are answered 429.
    pub subscriptions_per_minute: u32,
    /// Subscription requests a client address may make at once.
    pub subscription_burst: u32,
    /// Verifications of intent (GETs to callbacks) in flight at once; a request beyond
    /// is answered 503 and not verified.
    pub max_verifications: usize,
    /// Verifications in flight to one callback host at once; beyond, 503.
    pub max_verifications_per_host: usize,
}

impl Default for NotificationConfig {
    fn default() -> Self {
        Self {
            allow_private: false,
            default_lease_secs: 10 * 86_400,
            min_lease_secs: 60,
            max_lease_secs: 30 * 86_400,
            max_changes: 1000,
            max_attempts: 12,
            retry_base_secs: 10,
            max_retry_secs: 6 * 3600,
            timeout_secs: 10,
            max_concurrent_deliveries: 128,
            external_hubs: Vec::new(),
            keep_days: 30,
            subscriptions_per_minute: 60,
            subscription_burst: 60,
            max_verifications: 64,
            max_verifications_per_host: 16,
        }
    }
}

impl NotificationConfig {
    /// The time limit of one request.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_secs.max(1))
    }
}

/// `[web]`: the validation page (`/validate`) and API (`POST /api/validate`) for
/// publishers, open to the internet: every limit below applies to each request, and
/// nothing a visitor sends is kept.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WebConfig {
    /// Fetch feed URLs also from loopback, private and link-local addresses (default:
    /// refused, before the first request, at every redirect and after DNS resolution,
    /// as for harvests). Only for a service on a closed network, and for tests.
    pub allow_private: bool,
    /// Largest feed accepted, counted while an upload or a fetched URL streams.
    pub max_bytes: u64,
    /// Time for one whole validation: reading the upload or fetching the URL, and
    /// validating.
    pub timeout_secs: u64,
    /// Validations running at once (0: one per core); more wait, up to `timeout_secs`.
    pub max_concurrent: usize,
    /// Validation requests in progress at once (uploads still arriving included);
    /// more are answered 503 at once.
    pub max_requests: usize,
    /// Validation requests per client and minute (a token bucket; 0: no limit).
    pub rate_per_minute: u32,
    /// Requests a client may make at once before the per-minute rate applies.
    pub rate_burst: u32,
    /// Addresses of reverse proxies in front of plikt: for a request from one of them
    /// the client is the last address in `X-Forwarded-For` that is not a trusted proxy.
    /// Empty (the default): the client is the connecting address.
    pub trusted_proxies: Vec<std::net::IpAddr>,
}

impl Default for WebConfig {
    fn default() -> Self {
        Self {
            allow_private: false,
            max_bytes: 64 << 20,
            timeout_secs: 60,
            max_concurrent: 0,
            max_requests: 64,
            rate_per_minute: 30,
            rate_burst: 10,
            trusted_proxies: Vec::new(),
        }
    }
}

impl WebConfig {
    /// The time limit of one validation.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_secs.max(1))
    }
}

impl Config {
    /// Reads, parses and checks `path`, and loads the publishers' secrets.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        Self::parse(&text, path, base, &|name| std::env::var(name).ok())
    }

    /// Parses `text` (named `path` in messages); relative paths are resolved against
    /// `base`; `env` looks up environment variables.
    // Over 100 lines: one check per table, in the file's order, each with its message.
    pub fn parse(
        text: &str,
        path: &Path,
        base: &Path,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        let mut config: Config = toml::from_str(text).map_err(|e| {
            // Build the message from the span, never from toml's rendering: that quotes
            // the source line, which could hold a password someone typed by mistake.
            let (line, column) = e
                .span()
                .map(|s| line_col(text, s.start))
                .unwrap_or((0, 0));
            let mut message = e.message().trim().to_string();
            if message.contains("unknown field `password`") {
                message.push_str(
                    "; never write a password in the configuration: use `password_env` (an environment variable) or `password_file`",
                );
            }
            ConfigError::Syntax {
                path: path.to_path_buf(),
                line,
                column,
                // A value quoted back (a URL that does not parse) could hold a
                // password typed into it.
                message: secret::redact_urls(&message),
            }
        })?;
        let invalid = |message: String| ConfigError::Invalid {
            path: path.to_path_buf(),
            message: secret::redact_urls(&message),
        };
        if config.data_dir.is_relative() {
            config.data_dir = base.join(&config.data_dir);
        }
        for p in config.http.extra_root_certificates.iter_mut().flatten() {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        }
        if !config.base_url.path().ends_with('/') {
            return Err(invalid(format!(
                "base_url `{}` must end with `/`",
                config.base_url
            )));
        }
        let n = &config.notification;
        if n.min_lease_secs == 0
            || n.min_lease_secs > n.max_lease_secs
            || !(n.min_lease_secs..=n.max_lease_secs).contains(&n.default_lease_secs)
        {
            return Err(invalid(
                "[notification] leases must satisfy 1 <= min_lease_secs <= default_lease_secs <= max_lease_secs".into(),
            ));
        }
        if n.max_verifications == 0 || n.max_verifications_per_host == 0 {
            return Err(invalid(
                "[notification] max_verifications and max_verifications_per_host must be at least 1".into(),
            ));
        }
        if n.subscriptions_per_minute > 0 && n.subscription_burst == 0 {
            return Err(invalid(
                "[notification] subscription_burst must be at least 1 when subscriptions_per_minute is set".into(),
            ));
        }
        config.server.check().map_err(&invalid)?;
        if n.max_changes == 0 || n.max_attempts == 0 || n.max_concurrent_deliveries == 0 {
            return Err(invalid(
                "[notification] max_changes, max_attempts and max_concurrent_deliveries must be at least 1".into(),
            ));
        }
        for hub in &n.external_hubs {
            if !matches!(hub.scheme(), "http" | "https") {
                return Err(invalid(format!(
                    "[notification] external hub `{hub}` must be an http(s) URL"
                )));
            }
        }
        if config.catalog.max_clock_offset_secs == 0 {
            return Err(invalid(
                "[catalog] max_clock_offset_secs must be at least 1: the clocks of two machines never agree to the millisecond".into(),
            ));
        }
        let h = &config.harvest;
        if h.lease_secs < 3 || h.poll_secs == 0 || h.runs_per_worker == 0 {
            return Err(invalid(
                "[harvest] lease_secs must be at least 3 (a worker renews every third of it), poll_secs and runs_per_worker at least 1".into(),
            ));
        }
        let w = &config.web;
        if w.max_bytes == 0 || w.max_requests == 0 || w.timeout_secs == 0 {
            return Err(invalid(
                "[web] max_bytes, max_requests and timeout_secs must be at least 1".into(),
            ));
        }
        if w.rate_per_minute > 0 && w.rate_burst == 0 {
            return Err(invalid(
                "[web] rate_burst must be at least 1 when rate_per_minute is set".into(),
            ));
        }
        if config.http.max_connections == Some(0) || config.http.max_connections_per_host == Some(0)
        {
            return Err(invalid(
                "[http] max_connections and max_connections_per_host must be at least 1".into(),
            ));
        }
        config.blobs.check(base, env).map_err(&invalid)?;
        let mut ids = HashSet::new();
        for p in &mut config.publishers {
            p.check(base, env).map_err(&invalid)?;
            if !ids.insert(p.id.clone()) {
                return Err(invalid(format!(
                    "[[publisher]] `{}`: the id is used twice",
                    p.id
                )));
            }
        }
        let c = &mut config.catalog;
        if let Some(url) = &c.url {
            if !matches!(url.scheme(), "postgres" | "postgresql") {
                return Err(invalid(format!(
                    "[catalog] url `{url}` is not a PostgreSQL URL; write postgres://user@host:port/database (leave [catalog] out for the SQLite catalog under data_dir)"
                )));
            }
            if url.password().is_some() {
                return Err(invalid(
                    "[catalog] url carries a password; remove it from the URL and use password_env or password_file".into(),
                ));
            }
            let mut url = url.clone();
            (c.tls, c.client_certificate) = CatalogTls::take(&mut url, base).map_err(&invalid)?;
            c.url = Some(url);
            if c.password_env.is_some() || c.password_file.is_some() {
                c.password = Some(
                    load_secret("[catalog]", &c.password_env, &c.password_file, base, env)
                        .map_err(&invalid)?,
                );
            }
        } else if c.password_env.is_some() || c.password_file.is_some() {
            return Err(invalid(
                "[catalog] has a password but no url; give the PostgreSQL url, or leave [catalog] out for SQLite".into(),
            ));
        }
        for o in &mut config.operators {
            let at = format!("[[operator]] `{}`", o.id);
            let keys = credential_keys(
                &at,
                &o.username,
                [&o.token_env, &o.password_env],
                [&o.token_file, &o.password_file],
            )
            .map_err(&invalid)?;
            o.secret = load_secret(&at, keys.0, keys.1, base, env).map_err(&invalid)?;
            long_enough(&at, &o.secret).map_err(&invalid)?;
        }
        for d in &mut config.destinations {
            let at = format!("[[destination]] `{}`", d.id);
            let keys = credential_keys(
                &at,
                &d.username,
                [&d.token_env, &d.password_env],
                [&d.token_file, &d.password_file],
            )
            .map_err(&invalid)?;
            d.secret = load_secret(&at, keys.0, keys.1, base, env).map_err(&invalid)?;
            long_enough(&at, &d.secret).map_err(&invalid)?;
            for p in &d.publishers {
                if !config.publishers.iter().any(|q| &q.id == p) {
                    return Err(invalid(format!("{at}: no publisher `{p}`")));
                }
            }
        }
        Ok(config)
    }

    /// The publisher with this id.
    pub fn publisher(&self, id: &str) -> Option<&PublisherConfig> {
        self.publishers.iter().find(|p| p.id == id)
    }
}

/// Which keys hold a credential's secret: the token's (no `username`) or the Basic
/// password's (with one); `[env, file]` pairs of (token, password).
fn credential_keys<'a>(
    at: &str,
    username: &Option<String>,
    envs: [&'a Option<String>; 2],
    files: [&'a Option<PathBuf>; 2],
) -> Result<(&'a Option<String>, &'a Option<PathBuf>), String> {
    match (username, envs[0], files[0]) {
        (None, Some(_), None) | (None, None, Some(_)) => Ok((envs[0], files[0])),
        (Some(_), None, None) => Ok((envs[1], files[1])),
        _ => Err(format!(
            "{at}: give a bearer token (token_env or token_file) or Basic credentials (username with password_env or password_file)"
        )),
    }
}

/// Refuses a client's credential that could be guessed: shorter than
/// [`MIN_SECRET_CHARS`].
fn long_enough(at: &str, secret: &Result<Secret, String>) -> Result<(), String> {
    let chars = secret
        .as_ref()
        .map_or(MIN_SECRET_CHARS, |s| s.expose().chars().count());
    if chars < MIN_SECRET_CHARS {
        return Err(format!(
            "{at}: the token or password is {chars} characters; plikt accepts at least {MIN_SECRET_CHARS}: {}",
            server::HOW_TO_MAKE
        ));
    }
    Ok(())
}

/// A secret file that others than its owner may read is refused, as ssh refuses a
/// loose key: whoever can read it can use it.
fn private_file(at: &str, file: &Path) -> Result<(), String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(file) {
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                return Err(format!(
                    "{at}: {} may be read by others than its owner (mode {mode:04o}); run `chmod 600 {}` (and `chown` it to the user plikt runs as)",
                    file.display(),
                    file.display()
                ));
            }
        }
    }
    Ok(())
}

/// Loads a secret from exactly one of an environment variable or a file. The outer
/// error is a configuration mistake (both or neither given); the inner one a secret
/// that cannot be loaded now, which only the commands that need it report.
fn load_secret(
    at: &str,
    env_key: &Option<String>,
    file_key: &Option<PathBuf>,
    base: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Result<Secret, String>, String> {
    Ok(match (env_key, file_key) {
        (Some(var), None) => env(var)
            .map(Secret::new)
            .ok_or_else(|| format!("{at}: the environment variable `{var}` is not set")),
        (None, Some(file)) => {
            let file = if file.is_relative() {
                base.join(file)
            } else {
                file.clone()
            };
            private_file(at, &file)?;
            std::fs::read_to_string(&file)
                .map(|text| Secret::new(text.lines().next().unwrap_or("").to_string()))
                .map_err(|e| format!("{at}: cannot read {}: {e}", file.display()))
        }
        _ => {
            return Err(format!(
                "{at}: give exactly one of an environment variable (`…_env`) or a file (`…_file`) for the secret"
            ));
        }
    })
}

/// 1-based line and column (characters) of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

#[cfg(test)]
mod tests;
