//! The configuration file (`plikt.toml`): one TOML document, unknown keys refused with
//! their name and line. The key names are a contract outside tools rely on (issue 3);
//! `plikt.example.toml` documents each one and a test loads it.
//!
//! Secrets never live here: a publisher's password comes from an environment variable
//! (`password_env`) or a file (`password_file`), is read when the configuration is
//! loaded, and is kept in a [`Secret`] whose `Debug` and `Display` print `***`.
//!
//! Past 800 lines with its tests: one struct per table of the file, each beside the
//! checks that refuse its bad values, so that a key, its default and its error message
//! are read together (`[blobs]` and secrets have modules of their own).

mod blobs;
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
use std::str::FromStr;
use std::time::Duration;

use serde::Deserialize;
use url::Url;

pub use blobs::{BlobsConfig, S3Settings};
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

/// `[catalog]`: a PostgreSQL catalog shared by any number of workers (issue 17), with
/// its password from the environment or a file; absent, the SQLite catalog
/// `data_dir/catalog.sqlite`.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogConfig {
    /// `postgres://user@host:port/database`; never with a password in it.
    #[serde(default)]
    pub url: Option<Url>,
    /// Environment variable holding the password.
    #[serde(default)]
    pub password_env: Option<String>,
    /// File holding the password (first line).
    #[serde(default)]
    pub password_file: Option<PathBuf>,
    /// How far (seconds) the clock of a machine writing to a PostgreSQL catalog may be
    /// from the database server's: further, and plikt does not start, and a worker
    /// claims no runs while it is (`store::clock`).
    #[serde(default = "CatalogConfig::default_max_clock_offset_secs")]
    pub max_clock_offset_secs: u64,
    /// The password, once loaded (`None`: none given, the server needs none), or why
    /// it could not be.
    #[serde(skip)]
    pub password: Option<Result<Secret, String>>,
    /// How the connection is protected: libpq's `sslmode` and `sslrootcert` in `url`,
    /// taken out of it when the configuration is loaded.
    #[serde(skip)]
    pub tls: CatalogTls,
    /// The certificate plikt presents to the server: libpq's `sslcert` and `sslkey` in
    /// `url`, taken out of it when the configuration is loaded.
    #[serde(skip)]
    pub client_certificate: Option<ClientCertificate>,
}

/// What to do with an encrypted client key: plikt reads only unencrypted ones.
pub(crate) const DECRYPT_KEY: &str = "plikt reads only an unencrypted sslkey; decrypt it once (`openssl pkey -in KEY.enc -out KEY`) and keep the file readable by plikt's user only (chmod 600, or 640 owned by root)";

/// A client certificate for a PostgreSQL server that authenticates its clients by
/// certificate (`hostssl … cert` in `pg_hba.conf`, PostgreSQL 15 documentation §21.12,
/// or `clientcert=verify-full` beside a password): libpq's `sslcert` and `sslkey`
/// (§34.19.2), both files relative to the configuration's folder. The key is a secret
/// kept in its file, as the password is: read when plikt connects, never copied
/// elsewhere, and refused when its file is readable by others (as libpq refuses it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCertificate {
    /// `sslcert`: the PEM certificate (and any intermediate authorities after it).
    pub cert: PathBuf,
    /// `sslkey`: its PEM private key, unencrypted (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
}

/// TLS to a PostgreSQL catalog, as libpq's `sslmode` (and `sslrootcert`) in `[catalog]
/// url` ask for it (PostgreSQL 15 documentation §34.19.1, "SSL Mode Descriptions"), so
/// that the URL a DBA gives plikt means what it means to `psql`. The certificate of the
/// server is checked only by the last two; `require` with a `sslrootcert` is
/// `verify-ca`, as in libpq.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum CatalogTls {
    /// `sslmode=disable`: plain TCP.
    Disable,
    /// `sslmode=prefer` (the default, as in libpq): TLS when the server offers it, plain
    /// when it does not; the certificate is not checked.
    #[default]
    Prefer,
    /// `sslmode=require`: TLS or no connection; the certificate is not checked.
    Require,
    /// `sslmode=verify-ca`: TLS, with a certificate signed by an authority in this PEM
    /// file (`sslrootcert`; relative to the configuration's folder).
    VerifyCa(PathBuf),
    /// `sslmode=verify-full`: as `verify-ca`, and the certificate names the host
    /// plikt connects to.
    VerifyFull(CatalogRoots),
}

/// The certificate authorities a catalog's certificate is checked against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CatalogRoots {
    /// `sslrootcert=system`, or none given with `verify-full`: the operating system's.
    System,
    /// `sslrootcert=FILE`: the PEM certificates in FILE (relative to the configuration's
    /// folder).
    File(PathBuf),
}

impl CatalogTls {
    /// Takes libpq's TLS parameters out of `url` and says what they ask for: the mode,
    /// and the client certificate if one is named. Parameters libpq has and plikt does
    /// not (an encrypted key's password, CRLs) are refused by name rather than left for
    /// the driver's "unknown option".
    fn take(url: &mut Url, base: &Path) -> Result<(Self, Option<ClientCertificate>), String> {
        let mut mode = None;
        let mut roots = None;
        let (mut cert, mut cert_key) = (None, None);
        // The other parameters are kept as written (re-encoding them would turn a
        // space's `%20` into `+`, which rust-postgres does not decode).
        let mut rest: Vec<String> = Vec::new();
        for raw in url
            .query()
            .unwrap_or("")
            .split('&')
            .filter(|p| !p.is_empty())
        {
            let (key, value) = url::form_urlencoded::parse(raw.as_bytes())
                .next()
                .unwrap_or_default();
            match &*key {
                "sslmode" => mode = Some(value.into_owned()),
                "sslrootcert" => roots = Some(value.into_owned()),
                "sslcert" => cert = Some(base.join(&*value)),
                "sslkey" => cert_key = Some(base.join(&*value)),
                "password" => {
                    return Err(
                        "[catalog] url carries a password; remove it from the URL and use password_env or password_file".into(),
                    );
                }
                "sslpassword" => {
                    return Err(format!(
                        "[catalog] url: `sslpassword` is not supported: {DECRYPT_KEY}"
                    ));
                }
                "sslcrl" | "sslcrldir" | "sslcertmode" => {
                    return Err(format!(
                        "[catalog] url: `{key}` is not supported: plikt does not read CRLs, and presents its client certificate (sslcert, sslkey) whenever one is named"
                    ));
                }
                _ => rest.push(raw.to_string()),
            }
        }
        let client = match (cert, cert_key) {
            (Some(cert), Some(key)) => Some(ClientCertificate { cert, key }),
            (None, None) => None,
            (Some(_), None) => {
                return Err(
                    "[catalog] url: sslcert needs sslkey, the file of its private key".into(),
                );
            }
            (None, Some(_)) => {
                return Err(
                    "[catalog] url: sslkey needs sslcert, the file of the certificate it is the key of".into(),
                );
            }
        };
        if mode.as_deref() == Some("disable") && client.is_some() {
            return Err(
                "[catalog] url: sslcert is given but sslmode=disable never uses TLS; write sslmode=verify-full".into(),
            );
        }
        if mode.is_some() || roots.is_some() || client.is_some() {
            let kept = rest.join("&");
            url.set_query((!kept.is_empty()).then_some(kept.as_str()));
        }
        // As libpq 16: `sslrootcert=system` means verify-full (any public authority
        // signs a certificate for a name its holder controls, so only the name check
        // keeps an attacker out), and a weaker mode with it is an error.
        let roots = roots.map(|r| match r.as_str() {
            "system" => CatalogRoots::System,
            file => CatalogRoots::File(base.join(file)),
        });
        let mode = match (&mode, &roots) {
            (None, Some(CatalogRoots::System)) => "verify-full",
            (None, _) => "prefer",
            (Some(m), _) => m.as_str(),
        };
        let tls = match (mode, roots) {
            ("disable", None) => CatalogTls::Disable,
            ("prefer", None) => CatalogTls::Prefer,
            ("require", None) => CatalogTls::Require,
            ("verify-full", r) => CatalogTls::VerifyFull(r.unwrap_or(CatalogRoots::System)),
            ("require" | "verify-ca", Some(CatalogRoots::File(f))) => CatalogTls::VerifyCa(f),
            ("verify-ca", None) => {
                return Err(
                    "[catalog] url: sslmode=verify-ca needs sslrootcert=FILE, the authority that signed the server's certificate (with the system's authorities, write sslmode=verify-full: only the name check keeps others out)".into(),
                );
            }
            (m @ ("require" | "verify-ca"), Some(CatalogRoots::System)) => {
                return Err(format!(
                    "[catalog] url: sslrootcert=system needs sslmode=verify-full, not {m} (any public authority signs a certificate for a name its holder controls)"
                ));
            }
            (m @ ("disable" | "prefer"), Some(_)) => {
                return Err(format!(
                    "[catalog] url: sslrootcert is given but sslmode={m} never checks the server's certificate; write sslmode=verify-full (or verify-ca)"
                ));
            }
            (other, _) => {
                return Err(format!(
                    "[catalog] url: sslmode `{other}` is not one of disable, prefer, require, verify-ca, verify-full"
                ));
            }
        };
        Ok((tls, client))
    }
}

impl CatalogConfig {
    fn default_max_clock_offset_secs() -> u64 {
        2
    }

    /// [`CatalogConfig::max_clock_offset_secs`] as a duration (at most 2^40 s: "any").
    pub fn max_clock_offset(&self) -> chrono::Duration {
        chrono::Duration::seconds(
            i64::try_from(self.max_clock_offset_secs.min(1 << 40)).unwrap_or(1 << 40),
        )
    }
}

impl Default for CatalogConfig {
    fn default() -> Self {
        Self {
            url: None,
            password_env: None,
            password_file: None,
            max_clock_offset_secs: Self::default_max_clock_offset_secs(),
            password: None,
            tls: CatalogTls::default(),
            client_certificate: None,
        }
    }
}

impl std::fmt::Debug for CatalogConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CatalogConfig")
            .field("url", &self.url.as_ref().map(Url::as_str))
            .field("password", &self.password)
            .field("max_clock_offset_secs", &self.max_clock_offset_secs)
            .finish()
    }
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

/// `[[publisher]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublisherConfig {
    /// Short stable identifier (letters, digits, `-`, `_`), used in URLs and the catalog.
    pub id: String,
    /// Display name.
    pub name: String,
    /// The feed's URL.
    pub feed: Url,
    /// R104 values agreed with this publisher (H-PUBLISHER): `SE` + 10 digits with an
    /// optional `-suffix`, or the whole `http://id.kb.se/organisations/…` URI.
    #[serde(default)]
    pub organisations: Vec<String>,
    /// Cron expression (the `cron` crate's syntax: seconds first).
    pub schedule: String,
    /// Refuse http URLs and redirects to http.
    #[serde(default = "yes")]
    pub https_only: bool,
    /// Allow loopback, private and link-local targets (default: refused, SSRF).
    #[serde(default)]
    pub allow_private: bool,
    /// HTTP Basic credentials, sent only to the feed's origin.
    #[serde(default)]
    pub auth: Option<AuthConfig>,
    /// `[publisher.http]`: overrides of `[http]` for this publisher.
    #[serde(default, deserialize_with = "publisher_http")]
    pub http: HttpTable,
    /// §7.13: the host publication is deposit-liable, so R112 (isPartOf) is mandatory.
    #[serde(default)]
    pub require_is_part_of: bool,
}

fn yes() -> bool {
    true
}

fn unloaded() -> Result<Secret, String> {
    Err("the password was not loaded".into())
}

/// `[publisher.auth]`: HTTP Basic. The password itself never appears in the file.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthConfig {
    /// User name.
    pub username: String,
    /// Environment variable holding the password.
    #[serde(default)]
    pub password_env: Option<String>,
    /// File holding the password (first line; relative to the configuration file).
    #[serde(default)]
    pub password_file: Option<PathBuf>,
    /// The password, once loaded, or why it could not be (names the variable or file,
    /// never a value).
    #[serde(skip, default = "unloaded")]
    pub password: Result<Secret, String>,
}

impl std::fmt::Debug for AuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthConfig")
            .field("username", &self.username)
            .field("password_env", &self.password_env)
            .field("password_file", &self.password_file)
            .field("password", &self.password)
            .finish()
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

impl PublisherConfig {
    /// Checks what serde cannot (id, schedule, feed URL, limits) and loads the
    /// password (a relative `password_file` is resolved against `base`).
    fn check(&mut self, base: &Path, env: &dyn Fn(&str) -> Option<String>) -> Result<(), String> {
        let at = format!("[[publisher]] `{}`", self.id);
        if self.id.is_empty()
            || !self
                .id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(format!("{at}: id must be letters, digits, `-` or `_`"));
        }
        if let Err(e) = cron::Schedule::from_str(&self.schedule) {
            return Err(format!(
                "{at}: schedule `{}` is not a cron expression ({e}); write seconds first, e.g. `0 */30 * * * *`",
                self.schedule
            ));
        }
        if !matches!(self.feed.scheme(), "http" | "https") {
            return Err(format!("{at}: feed must be an http(s) URL"));
        }
        if !self.feed.username().is_empty() || self.feed.password().is_some() {
            return Err(format!(
                "{at}: the feed URL carries credentials; remove them from the URL and use [publisher.auth] with password_env or password_file"
            ));
        }
        if self.https_only && self.feed.scheme() != "https" {
            return Err(format!(
                "{at}: feed `{}` is not https but https_only = true; use the https URL or set https_only = false",
                self.feed
            ));
        }
        if self.http.max_connections_per_host == Some(0) {
            return Err(format!("{at}: max_connections_per_host must be at least 1"));
        }
        if let Some(auth) = &mut self.auth {
            // A missing secret is an error only for the commands that send it
            // (`harvest`, `run`: see `AuthConfig::password`), not for `status`,
            // `publish`, `serve` or `audit`.
            auth.password = load_secret(&at, &auth.password_env, &auth.password_file, base, env)?;
        }
        Ok(())
    }

    /// The parsed schedule (checked when the configuration was loaded).
    pub fn cron(&self) -> cron::Schedule {
        cron::Schedule::from_str(&self.schedule).expect("checked when the configuration loaded")
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
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, Path::new("p.toml"), Path::new("/etc/plikt"), &|v| {
            (v == "PW").then(|| "s3cret".to_string())
        })
    }

    const PUBLISHER: &str = r#"
[[publisher]]
id = "a"
name = "A"
feed = "https://a.example/feed.xml"
schedule = "0 */30 * * * *"
"#;

    /// libpq's TLS parameters (PostgreSQL 15 §34.19.1) leave `[catalog] url` for
    /// `catalog.tls`; the driver's own parameters stay in the URL; a relative
    /// `sslrootcert` is the configuration folder's, as `password_file` is.
    #[test]
    fn catalog_tls_is_taken_out_of_the_url_with_libpq_meanings() {
        let catalog = |query: &str| {
            let c = parse(&format!(
                "[catalog]\nurl = \"postgres://plikt@db.kb.example/plikt{query}\"\n"
            ))
            .unwrap()
            .catalog;
            (c.url.unwrap().to_string(), c.tls, c.client_certificate)
        };
        let file = |f: &str| CatalogRoots::File(PathBuf::from(f));
        assert_eq!(
            catalog(""),
            (
                "postgres://plikt@db.kb.example/plikt".into(),
                CatalogTls::Prefer,
                None
            )
        );
        assert_eq!(
            catalog("?connect_timeout=3&sslmode=verify-full&sslrootcert=pg-ca.pem"),
            (
                "postgres://plikt@db.kb.example/plikt?connect_timeout=3".into(),
                CatalogTls::VerifyFull(file("/etc/plikt/pg-ca.pem")),
                None
            )
        );
        // A client certificate (libpq's sslcert, sslkey), relative to the
        // configuration's folder as sslrootcert is.
        assert_eq!(
            catalog(
                "?sslmode=verify-full&sslrootcert=pg-ca.pem&sslcert=pg/plikt.crt&sslkey=/etc/plikt/private/plikt.key&connect_timeout=3"
            ),
            (
                "postgres://plikt@db.kb.example/plikt?connect_timeout=3".into(),
                CatalogTls::VerifyFull(file("/etc/plikt/pg-ca.pem")),
                Some(ClientCertificate {
                    cert: PathBuf::from("/etc/plikt/pg/plikt.crt"),
                    key: PathBuf::from("/etc/plikt/private/plikt.key"),
                })
            )
        );
        assert_eq!(
            catalog("?sslmode=require&sslrootcert=/srv/ca.pem").1,
            CatalogTls::VerifyCa(PathBuf::from("/srv/ca.pem"))
        );
        // As libpq 16: the system's authorities only with the name checked.
        assert_eq!(
            catalog("?sslrootcert=system").1,
            CatalogTls::VerifyFull(CatalogRoots::System)
        );
        // Other parameters stay as written, spaces too.
        assert_eq!(
            catalog("?options=-c%20search_path%3Dkb&sslmode=require").0,
            "postgres://plikt@db.kb.example/plikt?options=-c%20search_path%3Dkb"
        );
        assert_eq!(
            catalog("?sslmode=verify-full").1,
            CatalogTls::VerifyFull(CatalogRoots::System)
        );
        assert_eq!(catalog("?sslmode=require").1, CatalogTls::Require);
        assert_eq!(catalog("?sslmode=disable").1, CatalogTls::Disable);
        let refused = |query: &str| {
            parse(&format!(
                "[catalog]\nurl = \"postgres://plikt@db.kb.example/plikt{query}\"\n"
            ))
            .unwrap_err()
            .to_string()
        };
        assert!(refused("?sslmode=allow").contains("sslmode `allow` is not one of"));
        assert!(refused("?sslmode=prefer&sslrootcert=ca.pem").contains("never checks"));
        assert!(refused("?sslkey=k.pem").contains("sslkey needs sslcert"));
        assert!(refused("?sslcert=c.pem").contains("sslcert needs sslkey"));
        assert!(
            refused("?sslmode=disable&sslcert=c.pem&sslkey=k.pem")
                .contains("sslmode=disable never uses TLS")
        );
        assert!(refused("?sslpassword=x").contains("only an unencrypted sslkey"));
        assert!(refused("?sslcrl=crl.pem").contains("`sslcrl` is not supported"));
        assert!(refused("?sslmode=verify-ca").contains("needs sslrootcert=FILE"));
        assert!(
            refused("?sslmode=verify-ca&sslrootcert=system")
                .contains("sslrootcert=system needs sslmode=verify-full")
        );
        assert!(refused("?password=hunter2").contains("carries a password"));
        assert!(!refused("?password=hunter2").contains("hunter2"));
    }

    #[test]
    fn unknown_key_is_refused_with_name_and_line() {
        let e = parse(&format!("{PUBLISHER}colour = \"red\"\n")).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("colour"), "{msg}");
        assert!(msg.starts_with("p.toml:7:"), "{msg}");
    }

    #[test]
    fn process_wide_http_keys_are_refused_in_a_publisher_with_name_and_line() {
        for key in ["max_connections = 2", "extra_root_certificates = []"] {
            let text = format!("{PUBLISHER}[publisher.http]\nretries = 1\n{key}\n");
            let msg = parse(&text).unwrap_err().to_string();
            let name = key.split(' ').next().unwrap();
            assert!(msg.contains(name) && msg.contains("[http]"), "{msg}");
            assert!(msg.starts_with("p.toml:7:"), "{msg}");
        }
        let c = parse(&format!("{PUBLISHER}[publisher.http]\nretries = 1\n")).unwrap();
        assert_eq!(c.publishers[0].http.retries, Some(1));
    }

    #[test]
    fn password_in_config_is_refused_without_quoting_it() {
        let text =
            format!("{PUBLISHER}[publisher.auth]\nusername = \"u\"\npassword = \"hunter2\"\n");
        let msg = parse(&text).unwrap_err().to_string();
        assert!(msg.contains("password_env"), "{msg}");
        assert!(!msg.contains("hunter2"), "{msg}");
    }

    #[test]
    fn password_comes_from_the_environment_and_is_redacted() {
        let text =
            format!("{PUBLISHER}[publisher.auth]\nusername = \"u\"\npassword_env = \"PW\"\n");
        let c = parse(&text).unwrap();
        let auth = c.publishers[0].auth.as_ref().unwrap();
        assert_eq!(auth.password.as_ref().unwrap().expose(), "s3cret");
        assert!(!format!("{c:?}").contains("s3cret"));
        // A missing secret does not stop `status` or `serve` from loading the file; the
        // harvester reports it.
        let missing = parse(&text.replace("\"PW\"", "\"NOPE\"")).unwrap();
        let msg = missing.publishers[0]
            .auth
            .as_ref()
            .unwrap()
            .password
            .clone()
            .unwrap_err();
        assert!(msg.contains("NOPE") && msg.contains("not set"), "{msg}");
    }

    #[test]
    fn defaults_and_relative_paths() {
        let c = parse(PUBLISHER).unwrap();
        assert_eq!(c.data_dir, Path::new("/etc/plikt/plikt-data"));
        assert!(c.publishers[0].https_only);
        assert!(!c.publishers[0].allow_private);
        assert!(c.http.retries.is_none() && c.publishers[0].http.retries.is_none());
    }

    #[test]
    fn a_password_typed_into_a_url_is_never_quoted_back() {
        for (section, written) in [
            // Does not parse (port out of range): toml quotes the value back.
            (
                "[catalog]\nurl",
                "postgres://plikt:hunter2@127.0.0.1:99999/plikt",
            ),
            // Parses, but is not PostgreSQL.
            ("[catalog]\nurl", "mysql://plikt:hunter2@127.0.0.1/plikt"),
            // A password with a `/`: the URL parses as a host and a bad port.
            (
                "[catalog]\nurl",
                "postgres://plikt:hunter2/x@127.0.0.1/plikt",
            ),
            ("[blobs]\ns3_endpoint", "http://key:hunter2@127.0.0.1:99999"),
            ("base_url", "http://u:hunter2@127.0.0.1:8080/x"),
        ] {
            let text = if section == "base_url" {
                format!("base_url = \"{written}\"\n{PUBLISHER}")
            } else {
                format!("{PUBLISHER}{section} = \"{written}\"\n")
            };
            let msg = parse(&text).unwrap_err().to_string();
            assert!(!msg.contains("hunter2"), "{msg}");
            assert!(
                msg.contains(":***@") || msg.contains("credentials") || msg.contains("password"),
                "{msg}"
            );
        }
    }

    #[test]
    fn credentials_in_the_feed_url_are_refused_without_quoting_them() {
        let msg = parse(&PUBLISHER.replace("https://a.example", "https://u:hunter2@a.example"))
            .unwrap_err()
            .to_string();
        assert!(msg.contains("[publisher.auth]"), "{msg}");
        assert!(!msg.contains("hunter2"), "{msg}");
    }

    #[test]
    fn bad_schedule_and_http_feed_are_refused() {
        let msg = parse(&PUBLISHER.replace("0 */30 * * * *", "every hour"))
            .unwrap_err()
            .to_string();
        assert!(msg.contains("cron"), "{msg}");
        let msg = parse(&PUBLISHER.replace("https://", "http://"))
            .unwrap_err()
            .to_string();
        assert!(msg.contains("https_only"), "{msg}");
    }
}
