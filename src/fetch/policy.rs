//! The HTTP policy: one struct for every request plikt makes, and one documented
//! layering of where its values come from.
//!
//! ```text
//! built-in defaults      Policy::default()            the one place with the defaults
//!   → [http]             Policy::with_http            the configuration file
//!   → [[publisher]]      Policy::with_publisher       its [publisher.http], https_only,
//!                                                     allow_private
//!   → command line       cli::validate (http_policy)  --max-bytes, --allow-private
//! ```
//!
//! Each layer replaces only the values it names. A harvest uses the first three (the
//! harvester keeps the first two for the whole process: they set its connection
//! limits). `plikt validate URL` reads no configuration: it is the built-in defaults
//! under its command line. The hub's client ([`crate::notify::client`]) is the built-in
//! defaults under `[notification]` ([`Policy::notification`]): callbacks are not
//! harvests, so `[http]` does not apply to them.
//!
//! The TOML tables stay an input shape in `config` ([`HttpTable`]: every key optional),
//! which sits above this module and cannot name the policy; the policy is what
//! requests follow.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::FetchError;
use crate::config::{HttpTable, NotificationConfig, PublisherConfig};

/// What every request of one use (a publisher's harvest, `validate URL`, the hub)
/// follows: timeouts, limits, retries, redirects and which targets may be reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// Time to establish a connection (TCP + TLS). `connect_timeout_secs`.
    pub connect_timeout: Duration,
    /// Longest wait for the next bytes. `read_timeout_secs`.
    pub read_timeout: Duration,
    /// Longest time for one whole request, redirects and body included.
    /// `total_timeout_secs`.
    pub total_timeout: Duration,
    /// Largest deposit file, counted while streaming (Content-Length is not trusted).
    /// `max_file_bytes`.
    pub max_file_bytes: u64,
    /// Largest feed, after decoding a gzip-coded response. `max_feed_bytes`.
    pub max_feed_bytes: u64,
    /// Retries after a connection error, timeout, 5xx or 429 ([`super::Client::retry`]:
    /// the harvester's loops ask it; `validate URL` makes one attempt, as a person is
    /// waiting). `retries`.
    pub retries: u32,
    /// First retry delay; doubled each time, with jitter. `retry_base_ms`.
    pub retry_base: Duration,
    /// A `Retry-After` longer than this postpones the item to a later run.
    /// `max_retry_after_secs`.
    pub max_retry_after: Duration,
    /// Minimum throughput: a transfer slower than this over `min_speed_window` is
    /// abandoned (a read timeout alone does not stop a server dripping bytes); 0 = off.
    /// `min_bytes_per_sec`.
    pub min_bytes_per_sec: u64,
    /// The window the minimum throughput is measured over. `min_speed_window_secs`.
    pub min_speed_window: Duration,
    /// Redirect hops followed (by hand, each re-checked) before giving up; a bare
    /// [`Policy::reqwest_client`] follows none. `max_redirects`.
    pub max_redirects: u32,
    /// Concurrent requests in all, per process ([`super::Limits`]). `max_connections`.
    pub max_connections: usize,
    /// Concurrent requests to one host. `max_connections_per_host`.
    pub max_connections_per_host: usize,
    /// PEM files trusted in addition to the built-in roots (verification is never
    /// turned off). `extra_root_certificates`.
    pub extra_root_certificates: Vec<PathBuf>,
    /// Refuse http targets and redirects to http. A publisher's `https_only`.
    pub https_only: bool,
    /// Allow loopback, private and link-local targets (SSRF guard: refused by default,
    /// before each hop and again when a name is resolved). `allow_private`.
    pub allow_private: bool,
    /// Where the private-target rule was set, named when a target is refused so the
    /// message says what to change.
    pub private_rule: PrivateRule,
}

/// Where the rule against loopback, private and link-local targets was set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PrivateRule {
    /// A publisher's `allow_private` (and the default of any configured use).
    Publisher,
    /// `[notification] allow_private`.
    Notification,
    /// `--allow-private` on the command line.
    CommandLine,
    /// `[web] allow_private`: URLs that visitors of the validation page give.
    Web,
}

impl std::fmt::Display for PrivateRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Publisher => "allow_private = false",
            Self::Notification => "[notification] allow_private = false",
            Self::CommandLine => "--allow-private not given",
            Self::Web => "this service fetches only public addresses",
        })
    }
}

impl Default for Policy {
    /// The built-in defaults: the only place they are written (`plikt.example.toml`
    /// shows the same values, and a test checks that they agree).
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(30),
            total_timeout: Duration::from_secs(600),
            max_file_bytes: 4 << 30,
            max_feed_bytes: 256 << 20,
            retries: 3,
            retry_base: Duration::from_millis(1000),
            max_retry_after: Duration::from_secs(60),
            min_bytes_per_sec: 1024,
            min_speed_window: Duration::from_secs(30),
            max_redirects: 10,
            max_connections: 16,
            max_connections_per_host: 4,
            extra_root_certificates: Vec::new(),
            https_only: true,
            allow_private: false,
            private_rule: PrivateRule::Publisher,
        }
    }
}

impl Policy {
    /// The layer of `[http]`: each key it names replaces the value below.
    pub fn with_http(self, http: &HttpTable) -> Self {
        self.with_table(http)
    }

    /// The layer of one `[[publisher]]`: its `[publisher.http]` (which cannot name the
    /// process-wide keys: the configuration refuses them there), `https_only` and
    /// `allow_private`.
    pub fn with_publisher(self, p: &PublisherConfig) -> Self {
        Self {
            https_only: p.https_only,
            allow_private: p.allow_private,
            ..self.with_table(&p.http)
        }
    }

    /// The policy of the hub's requests (verifications, deliveries, pings of external
    /// hubs): built-in defaults → `[notification]`. One `timeout_secs` for connecting
    /// and for the whole request, no redirects (a callback that redirects is not
    /// followed), http allowed (WebSub callbacks may be http; a secret signs the body),
    /// and the private-target rule of `[notification] allow_private`.
    pub fn notification(n: &NotificationConfig) -> Self {
        let timeout = n.timeout();
        Self {
            connect_timeout: timeout,
            read_timeout: timeout,
            total_timeout: timeout,
            max_redirects: 0,
            https_only: false,
            allow_private: n.allow_private,
            private_rule: PrivateRule::Notification,
            ..Self::default()
        }
    }

    /// The policy of validating a feed at a URL (`plikt validate URL` and the web
    /// service): the built-in defaults with the feed capped at `max_feed_bytes` while it
    /// streams, the private-target rule of `rule` (lifted by `allow_private`), and http
    /// allowed (no credentials are ever sent).
    pub fn for_validation(max_feed_bytes: u64, allow_private: bool, rule: PrivateRule) -> Self {
        Self {
            max_feed_bytes,
            allow_private,
            private_rule: rule,
            https_only: false,
            ..Self::default()
        }
    }

    fn with_table(self, t: &HttpTable) -> Self {
        let secs = |v: Option<u64>, d: Duration| v.map_or(d, Duration::from_secs);
        Self {
            connect_timeout: secs(t.connect_timeout_secs, self.connect_timeout),
            read_timeout: secs(t.read_timeout_secs, self.read_timeout),
            total_timeout: secs(t.total_timeout_secs, self.total_timeout),
            max_file_bytes: t.max_file_bytes.unwrap_or(self.max_file_bytes),
            max_feed_bytes: t.max_feed_bytes.unwrap_or(self.max_feed_bytes),
            retries: t.retries.unwrap_or(self.retries),
            retry_base: t
                .retry_base_ms
                .map_or(self.retry_base, Duration::from_millis),
            max_retry_after: secs(t.max_retry_after_secs, self.max_retry_after),
            min_bytes_per_sec: t.min_bytes_per_sec.unwrap_or(self.min_bytes_per_sec),
            min_speed_window: secs(t.min_speed_window_secs, self.min_speed_window),
            max_redirects: t.max_redirects.unwrap_or(self.max_redirects),
            max_connections: t.max_connections.unwrap_or(self.max_connections),
            max_connections_per_host: t
                .max_connections_per_host
                .unwrap_or(self.max_connections_per_host),
            extra_root_certificates: t
                .extra_root_certificates
                .clone()
                .unwrap_or(self.extra_root_certificates),
            ..self
        }
    }

    /// A reqwest builder with this policy's connection rules: connect and read
    /// timeouts, redirects never followed by reqwest (only [`super::Client`] follows
    /// them, by hand, re-checking each hop), no `Referer`, no proxy, `https_only`, the
    /// guarded DNS resolver, and `roots` ([`Policy::roots`]) besides the built-in ones.
    /// `gzip`: offer and decode gzip.
    pub(super) fn builder(
        &self,
        user_agent: &str,
        gzip: bool,
        roots: &[reqwest::Certificate],
    ) -> reqwest::ClientBuilder {
        let mut b = reqwest::Client::builder()
            .user_agent(user_agent)
            .connect_timeout(self.connect_timeout)
            .read_timeout(self.read_timeout)
            .redirect(reqwest::redirect::Policy::none())
            .referer(false)
            .no_proxy()
            .https_only(self.https_only)
            .gzip(gzip)
            .pool_max_idle_per_host(self.max_connections_per_host.max(1))
            .dns_resolver(Arc::new(GuardedResolver {
                allow_private: self.allow_private,
                rule: self.private_rule,
            }));
        // The system's authorities as read once ([`system_roots`]), not by reqwest again.
        b = b.tls_built_in_native_certs(false);
        for c in system_roots() {
            if let Ok(c) = reqwest::Certificate::from_der(c) {
                b = b.add_root_certificate(c);
            }
        }
        for c in roots {
            b = b.add_root_certificate(c.clone());
        }
        b
    }

    /// The extra root certificates, read from their files.
    pub(super) fn roots(&self) -> Result<Vec<reqwest::Certificate>, FetchError> {
        let mut roots = Vec::new();
        for path in &self.extra_root_certificates {
            let pem = std::fs::read(path).map_err(|e| FetchError::Setup {
                reason: format!("cannot read extra root certificate {}: {e}", path.display()),
            })?;
            let certs =
                reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| FetchError::Setup {
                    reason: format!("{} holds no usable PEM certificate: {e}", path.display()),
                })?;
            roots.extend(certs);
        }
        Ok(roots)
    }

    /// A bare reqwest client under this policy, for requests that do not stream
    /// through [`super::Client`] (the hub's POSTs and verifications): the rules of
    /// [`Policy::builder`], no content coding, and `total_timeout` for each whole
    /// request. It follows no redirect, whatever `max_redirects` says.
    pub fn reqwest_client(&self, user_agent: &str) -> Result<reqwest::Client, FetchError> {
        self.builder(user_agent, false, &self.roots()?)
            .timeout(self.total_timeout)
            .build()
            .map_err(|e| FetchError::Setup {
                reason: format!("cannot build the HTTP client: {e}"),
            })
    }
}

/// The system's certificate authorities that rustls can use, read once per process
/// (those it cannot are skipped, as every TLS client does): the HTTP clients' and the
/// catalog's over TLS. Reading and decoding every file of the system store for each
/// client was a sixth of a worker's time in runs that end at a 304 (issue 35 §6).
pub fn system_roots() -> &'static [rustls::pki_types::CertificateDer<'static>] {
    static ROOTS: OnceLock<Vec<rustls::pki_types::CertificateDer<'static>>> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let mut usable = rustls::RootCertStore::empty();
        rustls_native_certs::load_native_certs()
            .certs
            .into_iter()
            .filter(|c| usable.add(c.clone()).is_ok())
            .collect()
    })
}

/// The DNS resolver of every client plikt builds ([`Policy::builder`]): a name that
/// resolves only to loopback, private or link-local addresses is refused unless
/// `allow_private`, since the check in `Client::check_target` cannot stop a name that
/// resolves differently a moment later. Names that resolve to both keep only their
/// public addresses.
#[derive(Debug)]
struct GuardedResolver {
    allow_private: bool,
    /// Where the rule was set (for the message).
    rule: PrivateRule,
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let allow = self.allow_private;
        let rule = self.rule;
        Box::pin(async move {
            let host = name.as_str().to_string();
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await?
                .filter(|a| allow || !super::address::is_private(a.ip()))
                .collect();
            if addrs.is_empty() {
                let e: Box<dyn std::error::Error + Send + Sync> = format!(
                    "{host} resolves only to private addresses, which are refused ({rule})"
                )
                .into();
                return Err(e);
            }
            Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::config::Config;

    fn config(text: &str) -> Config {
        Config::parse(text, Path::new("p.toml"), Path::new("/etc/plikt"), &|_| {
            None
        })
        .expect("configuration")
    }

    const PUBLISHER: &str = "[[publisher]]\nid = \"a\"\nname = \"A\"\nfeed = \"https://a.example/f.xml\"\nschedule = \"0 0 * * * *\"\n";

    #[test]
    fn each_layer_replaces_only_what_it_names() {
        let c = config(&format!(
            "[http]\nread_timeout_secs = 5\nretries = 1\nmax_connections = 8\n\
             extra_root_certificates = [\"ca.pem\"]\n{PUBLISHER}allow_private = true\n\
             [publisher.http]\nretries = 7\nretry_base_ms = 250\n"
        ));
        let p = Policy::default()
            .with_http(&c.http)
            .with_publisher(&c.publishers[0]);
        let want = Policy {
            read_timeout: Duration::from_secs(5),
            retries: 7,
            retry_base: Duration::from_millis(250),
            max_connections: 8,
            extra_root_certificates: vec![PathBuf::from("/etc/plikt/ca.pem")],
            allow_private: true,
            ..Policy::default()
        };
        assert_eq!(p, want);
        // Without tables: the built-in defaults, and a publisher's own defaults.
        let c = config(PUBLISHER);
        let p = Policy::default()
            .with_http(&c.http)
            .with_publisher(&c.publishers[0]);
        assert_eq!(p, Policy::default());
    }

    #[test]
    fn the_hub_follows_its_own_table() {
        let c = config("[notification]\ntimeout_secs = 3\nallow_private = true\n");
        let p = Policy::notification(&c.notification);
        assert_eq!(p.connect_timeout, Duration::from_secs(3));
        assert_eq!(p.total_timeout, Duration::from_secs(3));
        assert_eq!(
            (p.max_redirects, p.https_only, p.allow_private),
            (0, false, true)
        );
        assert_eq!(p.private_rule, PrivateRule::Notification);
    }
}
