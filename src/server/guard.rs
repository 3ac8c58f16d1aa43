//! What every request must pass and every answer carries, whatever the route (the
//! manual's security chapter says why each is there):
//! - [`inert`]: every answer is `nosniff`, and one that sets no policy of its own (a
//!   deposited file, a ResourceSync document, an error) gets a sandboxing CSP, so that
//!   nothing plikt did not write runs as a page on its origin;
//! - [`disposition`]: deposited files of a type a browser would run (HTML, SVG, XML,
//!   script, PDF …) are downloads, never pages;
//! - [`clean_path`]: a control byte in a path, raw or percent-encoded, is a 400;
//! - [`Throttle`]: failed authentication is slowed per client address (429);
//! - [`PerClient`]: the request rate of the validation service and the hub per client
//!   address, the client being the connecting address or, behind a trusted proxy, the
//!   one it forwards ([`client`]).

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use super::AppState;

/// The policy of every answer that sets none: no script, no plugin, no form, no
/// request to anywhere, and a unique opaque origin (`sandbox`) should a browser render
/// it anyway.
const SANDBOX: &str = "default-src 'none'; sandbox; frame-ancestors 'none'";

/// `nosniff` on every answer; [`SANDBOX`] on every answer without a CSP of its own (the
/// web pages keep their stricter-for-them policy: `web::security_headers`).
pub(super) async fn inert(mut response: Response) -> Response {
    let h = response.headers_mut();
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if !h.contains_key(header::CONTENT_SECURITY_POLICY) {
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(SANDBOX),
        );
    }
    response
}

/// `Content-Disposition: attachment` for a deposited file whose type a browser would
/// render as a document that can run script or load more (HTML, SVG, XML and its
/// stylesheets, JavaScript, PDF, anything unknown); `None` for the few types that are
/// shown as inert media or text. The bytes are the deposited bytes either way.
pub(super) fn disposition(content_type: &str) -> Option<HeaderValue> {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let passive = matches!(
        essence.as_str(),
        "text/plain"
            | "image/png"
            | "image/jpeg"
            | "image/gif"
            | "image/webp"
            | "image/avif"
            | "image/bmp"
    ) || essence.starts_with("audio/")
        || essence.starts_with("video/");
    (!passive).then(|| HeaderValue::from_static("attachment"))
}

/// A 400 for a path that holds a control byte (NUL, TAB, DEL …), raw or
/// percent-encoded: no route has such a path, and a file name with one would reach
/// the file system. Logged at DEBUG only: anyone can send it.
pub(super) async fn clean_path(request: Request, next: Next) -> Response {
    let path = request.uri().path();
    // Decoding passes raw bytes through, so one look covers both spellings.
    if percent_encoding::percent_decode_str(path).any(|b| b < 0x20 || b == 0x7f) {
        tracing::debug!(path, "refused: a control character in the path");
        return (
            StatusCode::BAD_REQUEST,
            "the path holds a control character (such as %00 or %09); no URL of plikt's does\n",
        )
            .into_response();
    }
    next.run(request).await
}

/// Requests per client address: a token bucket of `burst`, refilled at `per_minute`
/// (`governor`'s GCRA); `None` when `per_minute` is 0 (no limit).
#[derive(Debug)]
pub struct PerClient {
    limiter: Option<DefaultKeyedRateLimiter<IpAddr>>,
    checks: AtomicU64,
}

impl PerClient {
    /// `burst` requests at once, then `per_minute` (0: no limit).
    pub fn new(per_minute: u32, burst: u32) -> Self {
        Self {
            limiter: NonZeroU32::new(per_minute).map(|per_minute| {
                let burst = NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN);
                RateLimiter::keyed(Quota::per_minute(per_minute).allow_burst(burst))
            }),
            checks: AtomicU64::new(0),
        }
    }

    /// Takes a token of `client`'s bucket, or says how many seconds until one is free.
    pub fn admit(&self, client: IpAddr) -> Result<(), u64> {
        let Some(limiter) = &self.limiter else {
            return Ok(());
        };
        // Forget buckets that are full again now and then, so memory stays bounded by
        // the clients of the last minute or so.
        if self.checks.fetch_add(1, Ordering::Relaxed) % 1024 == 1023 {
            limiter.retain_recent();
            limiter.shrink_to_fit();
        }
        limiter.check_key(&client).map_err(|not_until| {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            wait.as_secs() + u64::from(wait.subsec_nanos() > 0)
        })
    }
}

/// Failed authentication per client address: a token bucket of `burst` failures,
/// refilled at `per_minute`. A client whose bucket is empty is answered 429 with
/// `Retry-After` for every request that carries credentials, right or wrong, so that
/// guessing goes no faster than the bucket refills. A request without credentials
/// (the public sets, the validation page) is never throttled here.
///
/// Written here rather than with `governor` (which the validation page uses): a
/// throttled client must be refused before its credentials are compared, and
/// `governor` cannot look at a bucket without taking from it.
#[derive(Debug)]
pub struct Throttle {
    per_minute: u32,
    burst: u32,
    buckets: Mutex<HashMap<IpAddr, Bucket>>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// Buckets kept at most; beyond, the full ones are forgotten.
const MAX_BUCKETS: usize = 65_536;

impl Throttle {
    /// `burst` failures at once, then `per_minute` (0: no limit).
    pub fn new(per_minute: u32, burst: u32) -> Self {
        Self {
            per_minute,
            burst: burst.max(1),
            buckets: Mutex::default(),
        }
    }

    fn refilled(&self, b: Bucket, now: Instant) -> Bucket {
        let rate = f64::from(self.per_minute) / 60.0;
        let tokens =
            (b.tokens + now.duration_since(b.at).as_secs_f64() * rate).min(f64::from(self.burst));
        Bucket { tokens, at: now }
    }

    /// `Err(seconds)` while `client` may not try credentials.
    pub fn check(&self, client: IpAddr) -> Result<(), u64> {
        if self.per_minute == 0 {
            return Ok(());
        }
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        let Some(b) = buckets.get_mut(&client) else {
            return Ok(());
        };
        *b = self.refilled(*b, now);
        if b.tokens >= 1.0 {
            return Ok(());
        }
        let wait = (1.0 - b.tokens) * 60.0 / f64::from(self.per_minute);
        Err(Duration::from_secs_f64(wait).as_secs() + 1)
    }

    /// Counts a failure of `client`'s.
    pub fn failed(&self, client: IpAddr) {
        if self.per_minute == 0 {
            return;
        }
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if buckets.len() >= MAX_BUCKETS {
            let full = f64::from(self.burst);
            let refilled: Vec<(IpAddr, Bucket)> = buckets
                .iter()
                .map(|(ip, b)| (*ip, self.refilled(*b, now)))
                .collect();
            buckets.clear();
            buckets.extend(refilled.into_iter().filter(|(_, b)| b.tokens < full));
        }
        let full = Bucket {
            tokens: f64::from(self.burst),
            at: now,
        };
        let b = buckets.entry(client).or_insert(full);
        *b = self.refilled(*b, now);
        b.tokens = (b.tokens - 1.0).max(0.0);
    }
}

/// Throttles failed authentication ([`Throttle`]): a request that carries
/// `Authorization` from a client out of tries is a 429; one whose credentials are no
/// operator's or Destination's counts as a failure.
pub(super) async fn throttle_auth(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    if !request.headers().contains_key(header::AUTHORIZATION) {
        return next.run(request).await;
    }
    let client = client(
        request.headers(),
        peer(&request),
        &state.config.web.trusted_proxies,
    );
    if let Err(wait) = state.throttle.check(client) {
        return too_many(wait, "too many failed attempts to authenticate");
    }
    let known = super::operator(&state.config, request.headers()).is_some()
        || super::destination(&state.config, request.headers(), None).is_some();
    if !known {
        state.throttle.failed(client);
    }
    next.run(request).await
}

/// The client of a request, for the rate limit: the connecting address, or — when
/// that is one of `[web] trusted_proxies` — the last address in `X-Forwarded-For`
/// that is not a trusted proxy. IPv6 clients are counted per /64, which one
/// subscriber usually has whole. Requests without a connection (in-process tests)
/// count as one client.
pub(super) fn client(headers: &HeaderMap, peer: Option<SocketAddr>, trusted: &[IpAddr]) -> IpAddr {
    let peer = peer.map_or(IpAddr::from([0, 0, 0, 0]), |p| p.ip());
    let ip = if trusted.contains(&peer) {
        forwarded(headers, trusted).unwrap_or(peer)
    } else {
        peer
    };
    match ip {
        IpAddr::V6(v6) if v6.to_ipv4_mapped().is_none() => {
            let s = v6.segments();
            IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
        }
        IpAddr::V6(v6) => IpAddr::V4(
            v6.to_ipv4_mapped()
                .unwrap_or(std::net::Ipv4Addr::UNSPECIFIED),
        ),
        v4 => v4,
    }
}

fn forwarded(headers: &HeaderMap, trusted: &[IpAddr]) -> Option<IpAddr> {
    let hops: Vec<IpAddr> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|s| s.trim().parse::<IpAddr>().ok())
        .collect::<Option<Vec<_>>>()?;
    hops.into_iter().rev().find(|ip| !trusted.contains(ip))
}

/// The connecting address of a request, when served over a socket.
pub(super) fn peer(request: &Request) -> Option<SocketAddr> {
    request
        .extensions()
        .get::<axum::extract::ConnectInfo<SocketAddr>>()
        .map(|c| c.0)
}

/// A 429 with `Retry-After: wait` that says why.
pub(super) fn too_many(wait: u64, why: &str) -> Response {
    let mut r = (
        StatusCode::TOO_MANY_REQUESTS,
        format!("{why}: try again in {wait} s\n"),
    )
        .into_response();
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(wait));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_inert_media_and_text_are_shown_inline() {
        for t in [
            "text/html",
            "TEXT/HTML; charset=utf-8",
            "image/svg+xml",
            "application/xhtml+xml",
            "application/xml",
            "text/xml",
            "text/javascript",
            "application/pdf",
            "application/octet-stream",
            "text/xsl",
            "",
        ] {
            assert!(disposition(t).is_some(), "{t}");
        }
        for t in [
            "text/plain; charset=utf-8",
            "image/jpeg",
            "audio/mpeg",
            "video/mp4",
        ] {
            assert!(disposition(t).is_none(), "{t}");
        }
    }

    #[test]
    fn the_throttle_lets_a_burst_through_then_refuses_until_it_refills() {
        let t = Throttle::new(60, 3);
        let ip: IpAddr = [192, 0, 2, 1].into();
        let other: IpAddr = [192, 0, 2, 2].into();
        for _ in 0..3 {
            assert!(t.check(ip).is_ok());
            t.failed(ip);
        }
        let wait = t.check(ip).expect_err("out of tries");
        assert!((1..=2).contains(&wait), "{wait}");
        assert!(t.check(other).is_ok(), "another client is not slowed");
        assert!(Throttle::new(0, 1).check(ip).is_ok());
    }

    #[test]
    fn the_client_is_the_connecting_address_unless_it_is_a_trusted_proxy() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        let peer = |s: &str| Some(SocketAddr::new(ip(s), 40000));
        let mut h = HeaderMap::new();
        h.insert(
            "x-forwarded-for",
            "203.0.113.7, 198.51.100.2, 10.0.0.5".parse().unwrap(),
        );
        let trusted = [ip("10.0.0.5"), ip("10.0.0.9")];
        // Not a trusted proxy: X-Forwarded-For is the client's own claim, ignored.
        assert_eq!(client(&h, peer("192.0.2.1"), &trusted), ip("192.0.2.1"));
        // Through trusted proxies: the last address they did not add.
        assert_eq!(client(&h, peer("10.0.0.9"), &trusted), ip("198.51.100.2"));
        // A trusted proxy without the header: the proxy itself.
        assert_eq!(
            client(&HeaderMap::new(), peer("10.0.0.9"), &trusted),
            ip("10.0.0.9")
        );
        // IPv6 by /64; IPv4-mapped as IPv4.
        assert_eq!(
            client(&h, peer("2001:db8:1:2:aaaa::1"), &[]),
            ip("2001:db8:1:2::")
        );
        assert_eq!(client(&h, peer("::ffff:192.0.2.1"), &[]), ip("192.0.2.1"));
    }
}
