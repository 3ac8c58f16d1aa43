//! HTTP client policy. Every request plikt makes goes through here, with deliberate
//! settings: reqwest's defaults have no timeouts and no size limit.
//!
//! For now this serves `plikt validate URL`: one GET, no credentials, streamed to a
//! spool file with a size cap. Responses are requested without content coding and a
//! coded response is refused rather than decoded (no decompression bombs).

mod spool;

use std::io::Write;
use std::time::Duration;

use url::Url;

pub use spool::{Spool, Tee};

/// Timeouts and limits of one download.
#[derive(Debug, Clone)]
pub struct FetchOptions {
    /// Time to establish the connection (TCP + TLS).
    pub connect_timeout: Duration,
    /// Longest wait for the next bytes of the response.
    pub read_timeout: Duration,
    /// Longest time for the whole download.
    pub total_timeout: Duration,
    /// Largest body accepted, counted while streaming (Content-Length is not trusted).
    pub max_bytes: u64,
}

impl Default for FetchOptions {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(30),
            total_timeout: Duration::from_secs(600),
            max_bytes: 1 << 30,
        }
    }
}

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
    #[error("{url}: the server answered HTTP {status}")]
    Status {
        /// The URL.
        url: Url,
        /// The status code.
        status: u16,
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
    #[error("{url}: the server sent `Content-Encoding: {coding}` although plikt asked for none")]
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

fn transport(url: &Url, e: &reqwest::Error) -> FetchError {
    let reason = if e.is_timeout() {
        "timed out".to_string()
    } else if e.is_connect() {
        format!("could not connect ({})", root_cause(e))
    } else {
        root_cause(e)
    };
    FetchError::Transport {
        url: url.clone(),
        reason,
    }
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// Downloads `url` into a new [`Spool`] file.
pub async fn download(url: &Url, options: &FetchOptions) -> Result<Spool, FetchError> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(FetchError::Scheme { url: url.clone() });
    }
    let client = reqwest::Client::builder()
        .user_agent(USER_AGENT)
        .connect_timeout(options.connect_timeout)
        .read_timeout(options.read_timeout)
        .timeout(options.total_timeout)
        .redirect(reqwest::redirect::Policy::limited(10))
        .no_proxy()
        .build()
        .map_err(|e| transport(url, &e))?;
    let mut response = client
        .get(url.clone())
        .header(reqwest::header::ACCEPT_ENCODING, "identity")
        .header(
            reqwest::header::ACCEPT,
            "application/rss+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.1",
        )
        .send()
        .await
        .map_err(|e| transport(url, &e))?;
    let status = response.status();
    if !status.is_success() {
        return Err(FetchError::Status {
            url: url.clone(),
            status: status.as_u16(),
        });
    }
    if let Some(coding) = response.headers().get(reqwest::header::CONTENT_ENCODING) {
        let coding = coding.to_str().unwrap_or("?").trim().to_ascii_lowercase();
        if coding != "identity" {
            return Err(FetchError::ContentCoding {
                url: url.clone(),
                coding,
            });
        }
    }
    let mut spool = Spool::new()?;
    let mut total: u64 = 0;
    while let Some(chunk) = response.chunk().await.map_err(|e| transport(url, &e))? {
        total += chunk.len() as u64;
        if total > options.max_bytes {
            return Err(FetchError::TooLarge {
                url: url.clone(),
                limit: options.max_bytes,
            });
        }
        spool.file_mut().write_all(&chunk)?;
    }
    spool.file_mut().flush()?;
    Ok(spool)
}
