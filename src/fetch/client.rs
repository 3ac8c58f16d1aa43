//! The HTTP client of harvests and `validate URL` (issue 3 §5). reqwest's defaults are
//! unsafe for this job (no timeouts, no size limit, credentials forwarded on
//! redirects), so the [`Policy`] is applied here, deliberately:
//!
//! - redirects are followed by hand, hop by hop: credentials go only to the origin
//!   (scheme, host, port) they were configured for; `https_only` refuses a hop to
//!   http; other schemes, loops and too many hops fail clearly;
//! - targets are checked before each hop and again by the DNS resolver: with
//!   `allow_private = false` loopback, private and link-local addresses are refused;
//! - connect, read and total timeouts, and a minimum throughput over a window;
//! - the size limit is counted while streaming (Content-Length is not trusted);
//! - files are requested without content coding and kept exactly as sent; only a feed
//!   may be decoded (gzip), and its decoded size is capped;
//! - global and per-host concurrency limits;
//! - retries with exponential backoff and jitter, honouring `Retry-After`.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::header::{self, HeaderMap, HeaderValue};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;
use url::Url;

use super::FetchError;
use super::Policy;
use crate::config::Secret;

/// HTTP Basic credentials and the one origin they may be sent to.
#[derive(Debug, Clone)]
pub struct Credentials {
    /// User name.
    pub username: String,
    /// Password.
    pub password: Secret,
    /// The origin of the publisher's feed.
    pub origin: url::Origin,
}

/// What is being fetched: decides content coding and size limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A feed: gzip accepted and decoded (capped), conditional GET.
    Feed,
    /// A deposit file: no content coding requested, bytes kept exactly as sent.
    File,
}

/// Validators of a previous response, for a conditional GET.
#[derive(Debug, Clone, Default)]
pub struct Conditional {
    /// `ETag` to send as `If-None-Match`.
    pub etag: Option<String>,
    /// `Last-Modified` to send as `If-Modified-Since`.
    pub last_modified: Option<String>,
}

/// Concurrency limits shared by every client of one process.
#[derive(Debug)]
pub struct Limits {
    global: Arc<Semaphore>,
    per_host_max: usize,
    hosts: Mutex<HashMap<String, Arc<Semaphore>>>,
    /// The per-host limit shared with other processes (the workers of one catalog).
    shared: Option<Arc<dyn HostGate>>,
}

/// A guard of a slot of [`HostGate`]: the slot is given back when it is dropped.
pub type HostSlot = Box<dyn Send + Sync>;

/// A per-host limit shared with other processes: the workers of one PostgreSQL catalog
/// keep `max_connections_per_host` together, not each on its own (issue 17 §3).
pub trait HostGate: Send + Sync + std::fmt::Debug {
    /// Waits for one of `max` slots of `host`.
    fn enter<'a>(
        &'a self,
        host: &'a str,
        max: usize,
    ) -> std::pin::Pin<Box<dyn Future<Output = HostSlot> + Send + 'a>>;
}

impl Limits {
    /// At most `max_connections` requests at once, at most `max_connections_per_host`
    /// to one host (the process-wide policy: built-in defaults → `[http]`).
    pub fn new(policy: &Policy) -> Arc<Self> {
        Arc::new(Self {
            global: Arc::new(Semaphore::new(policy.max_connections.max(1))),
            per_host_max: policy.max_connections_per_host.max(1),
            hosts: Mutex::new(HashMap::new()),
            shared: None,
        })
    }

    /// [`Limits::new`], the per-host limit kept together with other processes through
    /// `gate`.
    pub fn shared(policy: &Policy, gate: Arc<dyn HostGate>) -> Arc<Self> {
        let mut limits = Arc::into_inner(Self::new(policy)).expect("just made");
        limits.shared = Some(gate);
        Arc::new(limits)
    }

    async fn acquire(&self, host: &str, per_host: usize) -> Permits {
        let sem = {
            let mut hosts = self.hosts.lock().unwrap_or_else(|e| e.into_inner());
            hosts
                .entry(host.to_string())
                .or_insert_with(|| Arc::new(Semaphore::new(per_host.min(self.per_host_max).max(1))))
                .clone()
        };
        let max = per_host.min(self.per_host_max).max(1);
        let permit = sem
            .acquire_owned()
            .await
            .expect("semaphores are never closed");
        // Then a slot among all workers (this process's own limit first: its waiters
        // queue here, not at the shared gate).
        let shared = match &self.shared {
            Some(gate) => Some(gate.enter(host, max).await),
            None => None,
        };
        let global = self
            .global
            .clone()
            .acquire_owned()
            .await
            .expect("semaphores are never closed");
        Permits {
            _host: permit,
            _shared: shared,
            _global: global,
        }
    }
}

struct Permits {
    _host: OwnedSemaphorePermit,
    _shared: Option<HostSlot>,
    _global: OwnedSemaphorePermit,
}

impl std::fmt::Debug for Permits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Permits").finish_non_exhaustive()
    }
}

/// What a retry decision is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// Try again after this delay.
    After(Duration),
    /// The server asked for a longer pause than a run should wait: try in a later run.
    Postpone(Duration),
    /// Not worth retrying.
    No,
}

/// An HTTP client under one [`Policy`] (one publisher's, or `validate URL`'s): GETs
/// only, redirects followed by hand.
#[derive(Debug, Clone)]
pub struct Client {
    plain: reqwest::Client,
    decoding: reqwest::Client,
    policy: Policy,
    credentials: Option<Credentials>,
    limits: Arc<Limits>,
}

impl Client {
    /// A client that follows `policy`, sends `user_agent`, sends `credentials` only to
    /// their origin, and shares `limits` with the process's other clients.
    pub fn new(
        policy: Policy,
        user_agent: &str,
        credentials: Option<Credentials>,
        limits: Arc<Limits>,
    ) -> Result<Self, FetchError> {
        let roots = policy.roots()?;
        let build = |gzip: bool| {
            policy
                .builder(user_agent, gzip, &roots)
                .build()
                .map_err(|e| FetchError::Setup {
                    reason: format!("cannot build the HTTP client: {e}"),
                })
        };
        Ok(Self {
            plain: build(false)?,
            decoding: build(true)?,
            policy,
            credentials,
            limits,
        })
    }

    /// The policy this client follows.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// One GET of `url`, following redirects by hand. Returns 2xx responses and, for a
    /// conditional request, 304; anything else is an error.
    pub async fn get(
        &self,
        url: &Url,
        kind: Kind,
        conditional: Option<&Conditional>,
    ) -> Result<Response, FetchError> {
        let mut deadline = Instant::now() + self.policy.total_timeout;
        let mut visited: Vec<Url> = Vec::new();
        let mut current = url.clone();
        loop {
            self.check_target(&current).await?;
            let host = current.host_str().unwrap_or("").to_string();
            let queued = Instant::now();
            let permits = self
                .limits
                .acquire(&host, self.policy.max_connections_per_host)
                .await;
            // Time queued behind plikt's own connection limits is not the publisher's
            // (issue 35 §6: 2,000 publishers on one host timed out waiting for slots).
            deadline += queued.elapsed();
            let response = self.send(&current, kind, conditional, deadline).await?;
            let status = response.status();
            if status.is_redirection() && status != reqwest::StatusCode::NOT_MODIFIED {
                drop(permits);
                current = self.redirect(current, &response, &mut visited)?;
                continue;
            }
            return self.accept(
                current,
                response,
                kind,
                conditional.is_some(),
                deadline,
                permits,
            );
        }
    }

    /// Sends one request to `url` (one hop), before `deadline`.
    async fn send(
        &self,
        url: &Url,
        kind: Kind,
        conditional: Option<&Conditional>,
        deadline: Instant,
    ) -> Result<reqwest::Response, FetchError> {
        let mut req = match kind {
            Kind::Feed => self.decoding.get(url.clone()).header(
                header::ACCEPT,
                "application/rss+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.1",
            ),
            Kind::File => self
                .plain
                .get(url.clone())
                .header(header::ACCEPT_ENCODING, "identity"),
        };
        if let Some(c) = conditional {
            if let Some(etag) = &c.etag {
                req = req.header(header::IF_NONE_MATCH, etag);
            }
            if let Some(lm) = &c.last_modified {
                req = req.header(header::IF_MODIFIED_SINCE, lm);
            }
        }
        if let Some(cred) = &self.credentials
            && url.origin() == cred.origin
        {
            req = req.basic_auth(&cred.username, Some(cred.password.expose()));
        }
        match tokio::time::timeout_at(deadline, req.send()).await {
            Err(_) => Err(FetchError::Timeout {
                url: url.clone(),
                limit: self.policy.total_timeout,
            }),
            Ok(Err(e)) => Err(super::transport(url, &e)),
            Ok(Ok(r)) => Ok(r),
        }
    }

    /// The next hop of a redirect from `current`, if the policy lets it be followed:
    /// http(s) only, not from https to http under `https_only`, no loop, at most
    /// `max_redirects` hops. `visited` collects the chain.
    fn redirect(
        &self,
        current: Url,
        response: &reqwest::Response,
        visited: &mut Vec<Url>,
    ) -> Result<Url, FetchError> {
        let status = response.status().as_u16();
        let Some(location) = response
            .headers()
            .get(header::LOCATION)
            .and_then(|v| v.to_str().ok())
        else {
            return Err(FetchError::Redirect {
                url: current,
                reason: format!("HTTP {status} without a usable Location header"),
            });
        };
        let next = match current.join(location) {
            Ok(next) => next,
            Err(e) => {
                return Err(FetchError::Redirect {
                    url: current,
                    reason: format!("Location `{location}` is not a URL ({e})"),
                });
            }
        };
        let refused = if !matches!(next.scheme(), "http" | "https") {
            Some(format!(
                "redirect to `{next}`: only http and https are followed"
            ))
        } else if self.policy.https_only && next.scheme() != "https" {
            Some(format!(
                "redirect to `{next}` leaves https, and this publisher is https_only"
            ))
        } else {
            None
        };
        if let Some(reason) = refused {
            return Err(FetchError::Redirect {
                url: current,
                reason,
            });
        }
        visited.push(current);
        if visited.contains(&next) {
            return Err(FetchError::Redirect {
                reason: format!(
                    "redirect loop after {} hops (the chain comes back to this URL)",
                    visited.len()
                ),
                url: next,
            });
        }
        if visited.len() > self.policy.max_redirects as usize {
            return Err(FetchError::Redirect {
                url: next,
                reason: format!("more than {} redirects", self.policy.max_redirects),
            });
        }
        Ok(next)
    }

    /// The final hop's answer as a [`Response`], or why it is not one: a status other
    /// than 2xx (or 304 to a conditional request), or a feed in a coding plikt did not
    /// offer.
    fn accept(
        &self,
        url: Url,
        response: reqwest::Response,
        kind: Kind,
        conditional: bool,
        deadline: Instant,
        permits: Permits,
    ) -> Result<Response, FetchError> {
        let status = response.status().as_u16();
        let headers = response.headers();
        if !(response.status().is_success() || (status == 304 && conditional)) {
            return Err(FetchError::Status {
                url,
                status,
                retry_after: retry_after(headers),
            });
        }
        let get = |h: header::HeaderName| {
            headers
                .get(h)
                .and_then(|v| v.to_str().ok())
                .map(|s| s.trim().to_string())
        };
        let content_encoding =
            get(header::CONTENT_ENCODING).filter(|c| !c.eq_ignore_ascii_case("identity"));
        if kind == Kind::Feed
            && let Some(coding) = content_encoding
        {
            // gzip was decoded by the client (and the header removed); anything left
            // is a coding plikt did not offer.
            return Err(FetchError::ContentCoding { url, coding });
        }
        let max_bytes = match kind {
            Kind::Feed => self.policy.max_feed_bytes,
            Kind::File => self.policy.max_file_bytes,
        };
        Ok(Response {
            status,
            content_type: get(header::CONTENT_TYPE),
            etag: get(header::ETAG),
            last_modified: get(header::LAST_MODIFIED),
            content_disposition: get(header::CONTENT_DISPOSITION),
            content_encoding,
            url,
            body: response,
            deadline,
            max_bytes,
            received: 0,
            read_timeout: self.policy.read_timeout,
            total_timeout: self.policy.total_timeout,
            min_bytes_per_sec: self.policy.min_bytes_per_sec,
            window: self.policy.min_speed_window.max(Duration::from_secs(1)),
            window_start: Instant::now(),
            window_bytes: 0,
            _permits: permits,
        })
    }

    /// Refuses a target the policy forbids: a scheme other than http(s), http under
    /// `https_only`, and private addresses (also after DNS resolution) unless allowed.
    async fn check_target(&self, url: &Url) -> Result<(), FetchError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(FetchError::Scheme { url: url.clone() });
        }
        if self.policy.https_only && url.scheme() != "https" {
            return Err(FetchError::Insecure { url: url.clone() });
        }
        if self.policy.allow_private {
            return Ok(());
        }
        let port = url.port_or_known_default().unwrap_or(443);
        let addrs: Vec<IpAddr> = match url.host() {
            Some(url::Host::Ipv4(ip)) => vec![IpAddr::V4(ip)],
            Some(url::Host::Ipv6(ip)) => vec![IpAddr::V6(ip)],
            Some(url::Host::Domain(d)) => match tokio::net::lookup_host((d, port)).await {
                Ok(a) => a.map(|a| a.ip()).collect(),
                Err(e) => {
                    return Err(FetchError::Transport {
                        url: url.clone(),
                        reason: format!("cannot resolve the host name ({e})"),
                    });
                }
            },
            None => return Err(FetchError::Scheme { url: url.clone() }),
        };
        if addrs.into_iter().any(super::address::is_private) {
            return Err(FetchError::PrivateTarget {
                url: url.clone(),
                host: url.host_str().unwrap_or_default().to_string(),
                rule: self.policy.private_rule,
            });
        }
        Ok(())
    }

    /// What to do after `error` on attempt `attempt` (0-based).
    pub fn retry(&self, error: &FetchError, attempt: u32) -> Retry {
        if attempt >= self.policy.retries {
            return Retry::No;
        }
        let backoff = || {
            let base_ms = u64::try_from(self.policy.retry_base.as_millis()).unwrap_or(u64::MAX);
            let base = base_ms.saturating_mul(1 << attempt.min(16));
            // Full jitter between half and the whole delay.
            let jitter = random() % (base / 2 + 1);
            Duration::from_millis(base / 2 + jitter)
        };
        match error {
            FetchError::Transport { .. }
            | FetchError::Timeout { .. }
            | FetchError::TooSlow { .. } => Retry::After(backoff()),
            FetchError::Status {
                status,
                retry_after,
                ..
            } if *status >= 500 || *status == 429 => match retry_after {
                Some(d) if *d > self.policy.max_retry_after => Retry::Postpone(*d),
                Some(d) => Retry::After(*d),
                None => Retry::After(backoff()),
            },
            _ => Retry::No,
        }
    }
}

/// A response whose body is read chunk by chunk under the client's limits.
#[derive(Debug)]
pub struct Response {
    /// The final URL, after redirects.
    pub url: Url,
    /// HTTP status (2xx, or 304).
    pub status: u16,
    /// `Content-Type`.
    pub content_type: Option<String>,
    /// `ETag`.
    pub etag: Option<String>,
    /// `Last-Modified`.
    pub last_modified: Option<String>,
    /// `Content-Disposition`, as sent (untrusted).
    pub content_disposition: Option<String>,
    /// A content coding the server applied although plikt asked for none (files only;
    /// the bytes are kept as sent).
    pub content_encoding: Option<String>,
    body: reqwest::Response,
    deadline: Instant,
    max_bytes: u64,
    received: u64,
    read_timeout: Duration,
    total_timeout: Duration,
    min_bytes_per_sec: u64,
    window: Duration,
    window_start: Instant,
    window_bytes: u64,
    _permits: Permits,
}

impl Response {
    /// The next piece of the body, or `None` at its end.
    pub async fn chunk(&mut self) -> Result<Option<bytes::Bytes>, FetchError> {
        let now = Instant::now();
        let wait = (now + self.read_timeout).min(self.deadline);
        let next = tokio::time::timeout_at(wait, self.body.chunk()).await;
        let chunk = match next {
            Err(_) if Instant::now() >= self.deadline => {
                return Err(FetchError::Timeout {
                    url: self.url.clone(),
                    limit: self.total_timeout,
                });
            }
            Err(_) => {
                return Err(FetchError::Transport {
                    url: self.url.clone(),
                    reason: format!(
                        "no data for {} s after {} bytes (read timeout)",
                        self.read_timeout.as_secs(),
                        self.received
                    ),
                });
            }
            Ok(Err(e)) => {
                let mut err = super::transport(&self.url, &e);
                if let FetchError::Transport { reason, .. } = &mut err {
                    *reason = format!(
                        "the body broke off after {} bytes ({reason}); the response is truncated",
                        self.received
                    );
                }
                return Err(err);
            }
            Ok(Ok(None)) => return Ok(None),
            Ok(Ok(Some(c))) => c,
        };
        self.received += chunk.len() as u64;
        if self.received > self.max_bytes {
            return Err(FetchError::TooLarge {
                url: self.url.clone(),
                limit: self.max_bytes,
            });
        }
        self.window_bytes += chunk.len() as u64;
        let elapsed = self.window_start.elapsed();
        if elapsed >= self.window {
            let min = self
                .min_bytes_per_sec
                .saturating_mul(elapsed.as_secs().max(1));
            if self.min_bytes_per_sec > 0 && self.window_bytes < min {
                return Err(FetchError::TooSlow {
                    url: self.url.clone(),
                    bytes_per_sec: self.window_bytes / elapsed.as_secs().max(1),
                    min: self.min_bytes_per_sec,
                });
            }
            self.window_start = Instant::now();
            self.window_bytes = 0;
        }
        Ok(Some(chunk))
    }

    /// Bytes received so far.
    pub fn received(&self) -> u64 {
        self.received
    }
}

/// `Retry-After` as seconds or an HTTP date.
fn retry_after(headers: &HeaderMap<HeaderValue>) -> Option<Duration> {
    let v = headers.get(header::RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = chrono::DateTime::parse_from_rfc2822(v).ok()?;
    let secs = (at.timestamp() - chrono::Utc::now().timestamp()).max(0);
    Some(Duration::from_secs(secs.unsigned_abs()))
}

/// A random number for jitter (no RNG dependency: std's hasher keys are random).
pub(crate) fn random() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(u64::from(std::process::id()));
    h.finish()
}
