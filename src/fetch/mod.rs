//! HTTP: every request plikt makes follows one [`Policy`] (timeouts, minimum
//! throughput, size caps while streaming, redirects, SSRF guard, retries, concurrency
//! limits), layered built-in defaults → `[http]` → `[publisher.http]` → command line
//! (see `policy.rs`). reqwest's defaults are unsafe for this job, so no code builds a
//! reqwest client by hand: GETs go through [`Client`] (manual redirects deciding
//! credentials per hop; see `client.rs`), other requests through
//! [`Policy::reqwest_client`].
//!
//! [`download`] serves `plikt validate URL`: one feed GET, no credentials, streamed to
//! a spool file. A gzip-coded feed is decoded while streaming and its decoded size is
//! capped; other codings are refused.

mod address;
mod client;
mod policy;
mod spool;

use std::io::Write;
use std::time::Duration;

use url::Url;

pub use address::is_private;
pub(crate) use client::random;
pub use client::{
    Client, Conditional, Credentials, HostGate, HostSlot, Kind, Limits, Response, Retry,
};
pub use policy::{Policy, PrivateRule, system_roots};
pub use spool::{Spool, Tee};

/// `User-Agent` of every request: plikt and its version (the harvester adds the
/// deposit team's contact URL from its configuration).
pub const USER_AGENT: &str = concat!(
    "plikt/",
    env!("CARGO_PKG_VERSION"),
    " (legal-deposit validator)"
);

/// Why a download failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    /// Only http and https are fetched.
    #[error("{url}: only http and https URLs can be fetched")]
    Scheme {
        /// The URL.
        url: Url,
    },
    /// Connecting, TLS, or reading failed.
    #[error("{url}: {reason}")]
    Transport {
        /// The URL.
        url: Url,
        /// What failed, in words.
        reason: String,
    },
    /// The server answered with a status other than 2xx.
    #[error("{url}: the server answered HTTP {status}{}", retry_after.map(|d| format!(" (Retry-After: {} s)", d.as_secs())).unwrap_or_default())]
    Status {
        /// The URL.
        url: Url,
        /// The status code.
        status: u16,
        /// `Retry-After`, if sent.
        retry_after: Option<Duration>,
    },
    /// The whole transfer took longer than the total timeout.
    #[error("{url}: the transfer took longer than the limit of {} s (total_timeout_secs)", limit.as_secs())]
    Timeout {
        /// The URL.
        url: Url,
        /// The limit.
        limit: Duration,
    },
    /// The server sends too slowly.
    #[error(
        "{url}: the server sends {bytes_per_sec} bytes/s, below the minimum of {min} bytes/s (min_bytes_per_sec); abandoned"
    )]
    TooSlow {
        /// The URL.
        url: Url,
        /// Measured speed.
        bytes_per_sec: u64,
        /// Configured minimum.
        min: u64,
    },
    /// A redirect could not be followed.
    #[error("{url}: {reason}")]
    Redirect {
        /// The URL that redirected (or the one the loop returns to).
        url: Url,
        /// Why.
        reason: String,
    },
    /// An http URL for a publisher that is `https_only`.
    #[error(
        "{url}: not https, and this publisher is https_only; ask the publisher for the https URL"
    )]
    Insecure {
        /// The URL.
        url: Url,
    },
    /// The target is not a globally reachable address. Says the host as given, never
    /// what it resolved to: a public validator must not map anyone's internal names.
    #[error(
        "{url}: refused: `{host}` is not a public address (a loopback, private or link-local address, or another that is not globally reachable) ({rule})"
    )]
    PrivateTarget {
        /// The URL.
        url: Url,
        /// The host, as the URL gives it.
        host: String,
        /// Where the rule that refuses it was set.
        rule: PrivateRule,
    },
    /// The client could not be set up (certificates, TLS).
    #[error("{reason}")]
    Setup {
        /// What failed.
        reason: String,
    },
    /// The body is larger than the limit.
    #[error("{url}: the response is larger than the limit of {limit} bytes")]
    TooLarge {
        /// The URL.
        url: Url,
        /// The limit.
        limit: u64,
    },
    /// The server applied a content coding plikt did not ask for.
    #[error(
        "{url}: the server sent `Content-Encoding: {coding}`, which plikt did not offer (only gzip is decoded for feeds)"
    )]
    ContentCoding {
        /// The URL.
        url: Url,
        /// The coding.
        coding: String,
    },
    /// Writing the spool file failed.
    #[error("writing the downloaded feed to a temporary file failed: {0}")]
    Spool(#[from] std::io::Error),
}

impl FetchError {
    /// Why, in one word (the `reason` of `plikt_file_failures_total`).
    pub fn reason(&self) -> &'static str {
        match self {
            FetchError::Timeout { .. } => "timeout",
            FetchError::Transport { reason, .. } if reason.starts_with("timed out") => "timeout",
            FetchError::Transport { .. } => "connect",
            FetchError::Status { .. } => "http-status",
            FetchError::TooSlow { .. } => "too-slow",
            FetchError::TooLarge { .. } => "too-large",
            FetchError::Redirect { .. } => "redirect",
            FetchError::Insecure { .. } | FetchError::PrivateTarget { .. } => "refused",
            _ => "other",
        }
    }
}

pub(crate) fn transport(url: &Url, e: &reqwest::Error) -> FetchError {
    FetchError::Transport {
        url: url.clone(),
        reason: describe(e),
    }
}

/// What went wrong with a request, in words: a time-out, a failed connection (with its
/// cause), or the error's root cause.
pub fn describe(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        "timed out".to_string()
    } else if e.is_connect() {
        format!("could not connect ({})", root_cause(e))
    } else {
        root_cause(e)
    }
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// Downloads the feed at `url` into a new [`Spool`] file under `policy`, for `plikt
/// validate URL`: one attempt (a person is waiting), no credentials.
pub async fn download(url: &Url, policy: &Policy) -> Result<Spool, FetchError> {
    let client = Client::new(policy.clone(), USER_AGENT, None, Limits::new(policy))?;
    let mut response = client.get(url, Kind::Feed, None).await?;
    spool(&mut response).await
}

/// Streams a response body into a new [`Spool`] file (under the response's limits).
pub async fn spool(response: &mut Response) -> Result<Spool, FetchError> {
    let mut spool = Spool::new()?;
    while let Some(chunk) = response.chunk().await? {
        spool.file_mut().write_all(&chunk)?;
    }
    spool.file_mut().flush()?;
    Ok(spool)
}
