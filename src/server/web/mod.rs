//! The validation service for publishers (issue 16): the validation page, the rule
//! pages and the API, served by `plikt serve` and `plikt run` beside the ResourceSync
//! routes.
//!
//! Routes:
//! - `GET /`: the start page; `GET /validate`: the three forms (a feed URL, a file, pasted
//!   XML); `POST /validate` (multipart/form-data): the verdict as a page, or the JSON or
//!   JUnit report as a download;
//! - `GET /rules`, `GET /rules/{id}`: every rule of the catalogue;
//! - `POST /api/validate`: the feed as the body, or `{"url": "…"}`; answers the JSON
//!   document of `plikt validate --format json` (`?format=junit` the JUnit XML);
//! - `GET /lang/{sv|en}?next=/path`: the language switch (a cookie), then back;
//! - `GET /assets/plikt.css`: the one stylesheet, compiled into the binary.
//!
//! Pages are server-rendered askama templates (checked at compile time, escaping by
//! default) with their texts from one Fluent catalogue per language ([`i18n`]); they
//! work without JavaScript and load nothing from another host.
//!
//! Safe for the open internet ([`WebConfig`]): a per-client token bucket (429 with
//! `Retry-After`), a bound on validation requests in progress (503) and on validations
//! running at once (the rest wait), a time limit over each whole request, a size limit
//! counted while an upload or a fetched URL streams, and URLs fetched under the
//! harvester's HTTP policy ([`crate::fetch::Policy`]: no loopback, private or link-local
//! targets unless `[web] allow_private`, redirects re-checked). Nothing a visitor sends
//! is kept: an upload or a fetched feed goes to a temporary file ([`crate::fetch::Spool`])
//! that is deleted when its validation ends, and no request is logged with its content.

mod check;
mod dashboard;
pub mod i18n;
mod pages;
pub mod rules;

use std::net::IpAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderValue, header};
use axum::response::Response;
use axum::routing::{get, post};
use tokio::sync::Semaphore;

use super::AppState;
use super::guard::PerClient;
use crate::config::WebConfig;

/// The service's shared state: limits and the rate limiter.
#[derive(Debug, Clone)]
pub struct Web {
    config: Arc<WebConfig>,
    rate: Arc<PerClient>,
    /// Validation requests in progress (uploads still arriving included).
    requests: Arc<Semaphore>,
    /// Validations running.
    validations: Arc<Semaphore>,
}

impl Web {
    /// The service under `config`.
    pub fn new(config: &WebConfig) -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let concurrent = if config.max_concurrent == 0 {
            cores
        } else {
            config.max_concurrent
        };
        Self {
            config: Arc::new(config.clone()),
            rate: Arc::new(PerClient::new(config.rate_per_minute, config.rate_burst)),
            requests: Arc::new(Semaphore::new(config.max_requests.max(1))),
            validations: Arc::new(Semaphore::new(concurrent.max(1))),
        }
    }

    /// Takes a token of `client`'s bucket, or says how many seconds until one is free.
    fn admit(&self, client: IpAddr) -> Result<(), u64> {
        self.rate.admit(client)
    }
}

/// The routes of the service, merged into [`super::app`].
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/", get(pages::index))
        .route(
            "/validate",
            get(pages::validate_form).post(pages::validate_submit),
        )
        .route("/rules", get(pages::rules))
        .route("/dashboard", get(dashboard::dashboard))
        .route("/rules/{id}", get(pages::rule))
        .route("/lang/{code}", get(pages::switch_language))
        .route("/assets/plikt.css", get(pages::stylesheet))
        .route("/api/validate", post(check::api))
        // Uploads are capped by `[web] max_bytes` while they stream, not buffered.
        .layer(DefaultBodyLimit::disable())
        .layer(axum::middleware::map_response(security_headers))
}

/// Headers of every page and answer of the service: nothing from another host, no
/// inline script or style, no framing, no referrer to the feeds' hosts.
async fn security_headers(mut response: Response) -> Response {
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
        ),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

#[cfg(test)]
mod tests;
