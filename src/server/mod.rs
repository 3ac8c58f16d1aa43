//! HTTP service of `plikt run` and `plikt serve`: `fn app(state) -> Router`, errors that
//! hide internals from clients, graceful shutdown.
//!
//! Routes:
//! - `GET /.well-known/resourcesync`, `GET /resourcesync/{publisher}/{document}`: the
//!   ResourceSync documents `plikt publish` wrote (see [`crate::resourcesync`]), with
//!   ETag, Last-Modified and `If-None-Match` (304);
//! - `GET /d/{publisher}/{deposit}/{key}`: a resource (its current version), and
//!   `GET /d/{publisher}/{deposit}/v{version}/{key}`: one version of it, streamed from
//!   the blob store with Content-Type, Content-Length, ETag, Last-Modified, single byte
//!   ranges and `Link: <capability list>; rel="resourcesync"` (§6.3.3);
//! - `GET /robots.txt`;
//! - `GET /status` (the JSON of `plikt status --format json`), `GET /healthz`;
//! - the validation service for publishers ([`web`]): `GET /`, `GET|POST /validate`,
//!   `GET /rules`, `GET /rules/{id}`, `POST /api/validate`.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

mod cache;
mod guard;
mod hub;
mod ops;
mod resource;
pub mod web;

use crate::config::{Config, DestinationConfig, OperatorConfig};
use crate::resourcesync;
use crate::resourcesync::layout::SetTarget;
use crate::store::Access;
use crate::store::{Blobs, Catalog, Fetched};
use axum::http::HeaderMap;

/// Shared state of the routes: the catalog and blob store are opened once, not per
/// request.
#[derive(Debug, Clone)]
pub struct AppState {
    /// The configuration.
    pub config: Arc<Config>,
    catalog: crate::store::Pool,
    blobs: Blobs,
    /// The client that verifies subscribers' intent (the hub's target policy).
    hub_client: reqwest::Client,
    /// The validation service's limits and rate limiter.
    web: web::Web,
    /// The catalog is SQLite and the blobs a local folder: quick lookups are made in
    /// place rather than on a blocking thread, and their answers kept ([`cache`]).
    local: bool,
    /// Deposits' files and small blobs' bytes, as served.
    cache: Arc<cache::Cache>,
    /// Failed authentication per client address.
    throttle: Arc<guard::Throttle>,
    /// The hub's limits on subscription requests and verifications.
    hub_limits: Arc<hub::Limits>,
}

impl AppState {
    /// Opens the data folder of `config` for reading (creating it if needed).
    pub fn open(config: Arc<Config>) -> Result<Self, crate::notify::NotifyError> {
        let store = crate::store::Store::open(&config, crate::store::Mode::Read)?;
        // An object store that refuses plikt's requests, or holds another catalog's
        // collection, would answer every Destination 503 for good, or with documents of
        // another collection: the server does not start. One away now may come back.
        crate::store::check_object_store(&store.blobs, &store.catalog, false)?;
        // A server on a machine whose clock is off still serves: what its hub writes
        // (leases, claims, retry times) is in the catalog's time; its HTTP dates and
        // logs follow its own clock, so it says so.
        match store.catalog.check_clock(config.catalog.max_clock_offset()) {
            Ok(_) => {}
            Err(e @ crate::store::StoreError::ClockOff { .. }) => {
                tracing::warn!(error = %e, "serving with a clock that disagrees with the catalog's");
            }
            Err(e) => tracing::warn!(error = %e, "the catalog's clock could not be read"),
        }
        let location = crate::store::Location::of(&config)?;
        let local =
            store.catalog.backend() == crate::store::Backend::Sqlite && !store.blobs.is_remote();
        Ok(Self {
            local,
            cache: Arc::default(),
            throttle: Arc::new(guard::Throttle::new(
                config.server.auth_failures_per_minute,
                config.server.auth_failure_burst,
            )),
            hub_limits: Arc::new(hub::Limits::new(&config.notification)),
            hub_client: crate::notify::client(&config)?,
            web: web::Web::new(&config.web),
            config,
            // Two connections per core: requests read on every core, and one whose
            // statement waits on the server leaves room for the others.
            catalog: crate::store::Pool::new(location, pool_size()),
            blobs: store.blobs,
        })
    }

    /// Runs `query` on the catalog off the async threads (again on a new connection
    /// if the held one turns out to be gone: [`Connection::again`]).
    async fn query<T: Send + 'static>(
        &self,
        query: impl Fn(&Catalog) -> Result<T, crate::store::StoreError> + Send + 'static,
    ) -> Result<T, AppError> {
        let catalog = self.catalog.clone();
        tokio::task::spawn_blocking(move || catalog.again(|c| query(c)))
            .await
            .map_err(internal)?
            .map_err(store_failed)
    }
}

/// Connections in `plikt serve`'s catalog pool: two per core.
fn pool_size() -> u32 {
    std::thread::available_parallelism().map_or(2, |n| n.get() as u32) * 2
}

/// The router.
pub fn app(state: AppState) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/status", get(status))
        .route("/metrics", get(ops::metrics))
        .route("/robots.txt", get(robots))
        .route("/.well-known/resourcesync", get(source_description))
        .route("/resourcesync/{publisher}/{*rest}", get(set_file))
        .route(
            &format!("/{}", resourcesync::layout::HUB),
            get(hub::about).post(hub::subscription),
        )
        .route("/d/{publisher}/{deposit}/", get(resource::deposit))
        .route("/d/{publisher}/{deposit}/{key}", get(resource::resource))
        .route(
            "/d/{publisher}/{deposit}/{version}/{key}",
            get(resource::resource_version),
        )
        .merge(web::routes())
        .fallback(|| async { AppError::NotFound })
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::throttle_auth,
        ))
        .layer(axum::middleware::from_fn(guard::clean_path))
        .layer(axum::middleware::map_response(guard::inert))
        .with_state(state)
}

/// What went wrong, for the client: the cause goes to the log, never to the client.
#[derive(Debug)]
pub enum AppError {
    /// 404.
    NotFound,
    /// 401: restricted, and no (or wrong) credentials.
    Unauthorized,
    /// 401: a page of the deposit team's, and no (or wrong) operator credentials.
    OperatorsOnly,
    /// 500, with the internal cause for the log.
    Internal(String),
    /// 503: the catalog or the object store cannot be reached just now (PostgreSQL
    /// restarting or failing over, the object store away or failing); the cause is
    /// logged, the client told when to try again.
    Unavailable {
        /// Which: "catalog" or "object store".
        what: &'static str,
        /// The cause, for the log.
        cause: String,
    },
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        match self {
            AppError::NotFound => (StatusCode::NOT_FOUND, "not found\n").into_response(),
            AppError::Unauthorized => {
                let mut r = (
                    StatusCode::UNAUTHORIZED,
                    "this set is restricted: authenticate with the bearer token or Basic credentials configured for your Destination\n",
                )
                    .into_response();
                let h = r.headers_mut();
                h.append(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer realm=\"plikt\""),
                );
                h.append(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Basic realm=\"plikt\""),
                );
                r
            }
            AppError::OperatorsOnly => {
                let mut r = (
                    StatusCode::UNAUTHORIZED,
                    "this page is for the deposit team: authenticate with the bearer token or Basic credentials of an [[operator]] in the configuration\n",
                )
                    .into_response();
                let h = r.headers_mut();
                h.append(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer realm=\"plikt operators\""),
                );
                h.append(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Basic realm=\"plikt operators\""),
                );
                r
            }
            AppError::Unavailable { what, cause } => {
                tracing::warn!(error = %cause, "request failed: the {what} cannot be reached");
                let mut r = (
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!("the {what} cannot be reached just now; try again shortly\n"),
                )
                    .into_response();
                r.headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
                r
            }
            AppError::Internal(cause) => {
                tracing::error!(error = %cause, "request failed");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal error; see plikt's log\n",
                )
                    .into_response()
            }
        }
    }
}

pub(crate) fn internal(e: impl std::fmt::Display) -> AppError {
    AppError::Internal(e.to_string())
}

/// A store error for the client: 503 while the catalog cannot be reached, else 500.
pub(crate) fn store_failed(e: crate::store::StoreError) -> AppError {
    if e.is_disconnect() {
        AppError::Unavailable {
            what: "catalog",
            cause: e.to_string(),
        }
    } else {
        internal(e)
    }
}

/// A blob store error for the client, about `what` (a document, a blob): 503 while the
/// object store fails a request (away, or answering errors after the client's retries:
/// a Destination is to try again later, as for the catalog), else 500.
pub(crate) fn blob_failed(what: impl std::fmt::Display, e: crate::store::BlobError) -> AppError {
    match e {
        crate::store::BlobError::ObjectStore(o) if o.failure != crate::store::Failure::NotFound => {
            AppError::Unavailable {
                what: "object store",
                cause: format!("{what}: {o}"),
            }
        }
        e => internal(format!("{what}: {e}")),
    }
}

async fn status(State(state): State<AppState>, headers: HeaderMap) -> Result<Response, AppError> {
    if operator(&state.config, &headers).is_none() {
        return Err(AppError::OperatorsOnly);
    }
    let config = state.config.clone();
    let publishers = tokio::task::spawn_blocking(move || crate::schedule::status(&config))
        .await
        .map_err(internal)?
        .map_err(internal)?;
    Ok(axum::Json(serde_json::json!({ "publishers": publishers })).into_response())
}

/// `robots.txt` with a `Sitemap:` line per public Resource List.
async fn robots(State(state): State<AppState>) -> Response {
    let base = state.config.base_url.as_str();
    let mut text = String::from("User-agent: *\nAllow: /\n");
    for p in &state.config.publishers {
        text.push_str(&format!(
            "Sitemap: {base}resourcesync/{}/resourcelist.xml\n",
            p.id
        ));
    }
    ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text).into_response()
}

/// True when the request carries credentials of a `[[destination]]` that may see
/// `publisher`'s restricted set (any publisher when `None`).
pub fn authorised(config: &Config, headers: &HeaderMap, publisher: Option<&str>) -> bool {
    destination(config, headers, publisher).is_some()
}

/// The `[[destination]]` whose credentials the request carries, if it may see
/// `publisher`'s restricted set (any publisher when `None`).
pub fn destination<'c>(
    config: &'c Config,
    headers: &HeaderMap,
    publisher: Option<&str>,
) -> Option<&'c DestinationConfig> {
    config.destinations.iter().find(|d| {
        publisher.is_none_or(|p| d.may_see(p))
            && credentials_match(headers, d.username.as_deref(), &d.secret)
    })
}

/// Whether the request's `Authorization` is the bearer token `secret` (no `username`)
/// or the Basic credentials `username`:`secret`, compared in constant time.
fn credentials_match(
    headers: &HeaderMap,
    username: Option<&str>,
    secret: &Result<crate::config::Secret, String>,
) -> bool {
    let (Some(given), Ok(secret)) = (
        headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .map(str::trim),
        secret,
    ) else {
        return false;
    };
    // The scheme in any case (RFC 9110 §11.1), then its credentials exactly.
    let Some((scheme, given)) = given.split_once(' ') else {
        return false;
    };
    let expected = match username {
        Some(user) if scheme.eq_ignore_ascii_case("basic") => {
            basic_credentials(user, secret.expose())
        }
        None if scheme.eq_ignore_ascii_case("bearer") => secret.expose().to_string(),
        _ => return false,
    };
    constant_time_eq(given.trim_start().as_bytes(), expected.as_bytes())
}

/// The `[[operator]]` whose credentials the request carries.
pub fn operator<'c>(config: &'c Config, headers: &HeaderMap) -> Option<&'c OperatorConfig> {
    config
        .operators
        .iter()
        .find(|o| credentials_match(headers, o.username.as_deref(), &o.secret))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The `Authorization` value of HTTP Basic credentials (RFC 7617).
pub fn basic_auth(user: &str, password: &str) -> String {
    format!("Basic {}", basic_credentials(user, password))
}

/// The credentials of HTTP Basic (RFC 7617): `user:password` in base64.
fn basic_credentials(user: &str, password: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
}

async fn source_description(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    // Two kinds of document at one URL, chosen by the credentials: a cache must keep
    // them apart (RFC 9110 §12.5.5).
    let vary = |mut r: Response| {
        r.headers_mut()
            .insert(header::VARY, HeaderValue::from_static("authorization"));
        r
    };
    let Some(d) = destination(&state.config, &headers, None) else {
        return static_file(&state, resourcesync::SOURCE_DESCRIPTION, &headers)
            .await
            .map(vary);
    };
    // A Destination sees only the restricted sets it may read: made from the
    // configuration for each request (a list of the publishers' Capability Lists).
    let body = resourcesync::source_description(&state.config, &|p| d.may_see(p));
    use sha2::Digest;
    let etag = HeaderValue::from_str(&format!("\"{}\"", hex::encode(sha2::Sha256::digest(&body))))
        .map_err(internal)?;
    let mut h = HeaderMap::with_capacity(3);
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/xml; charset=utf-8"),
    );
    if resource::not_modified(&headers, &etag) {
        h.insert(header::ETAG, etag);
        return Ok(vary((StatusCode::NOT_MODIFIED, h).into_response()));
    }
    h.insert(header::ETAG, etag);
    Ok(vary((h, body).into_response()))
}

/// Everything below `resourcesync/<publisher>/`: the documents and packages of the
/// publisher's sets, where [`resourcesync::layout`] says the publisher writes them (404
/// for anything else, without touching the disk), and the sets' topics; 401 for a
/// restricted set without the right credentials.
async fn set_file(
    State(state): State<AppState>,
    Path((publisher, rest)): Path<(String, String)>,
    method: http::Method,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    let Some(request) = resourcesync::layout::parse_set_request(&rest) else {
        return Err(AppError::NotFound);
    };
    if state.config.publisher(&publisher).is_none() {
        return Err(AppError::NotFound);
    }
    if request.access != Access::Gratis && !authorised(&state.config, &headers, Some(&publisher)) {
        return Err(AppError::Unauthorized);
    }
    match request.target {
        SetTarget::File(file) => {
            let path = format!(
                "{}/{file}",
                resourcesync::set_path(&publisher, request.access)
            );
            static_file(&state, &path, &headers).await
        }
        SetTarget::Topic => hub::topic(&state, &publisher, request.access, &method).await,
    }
}

/// A published file (`path` under `data_dir/www`), streamed (dump packages can be
/// large), typed by its extension: from the object store when the blobs are there
/// (any node serves what the last publish wrote, issue 17 §2), else from the folder.
/// With an `ETag` and `Last-Modified` (RFC 9110 §8.8), so that a Destination polling a
/// Change List gets `304 Not Modified` until a publish changes it: the object store's
/// entity tag (the same on every node), or the file's length and modification time
/// (a publish replaces a document by renaming a new file over it).
async fn static_file(
    state: &AppState,
    path: &str,
    request: &HeaderMap,
) -> Result<Response, AppError> {
    let (len, etag, modified, body) = match state.blobs.documents() {
        // The Destination's If-None-Match goes on to the object store, whose entity tags
        // these are: an unchanged Change List is not fetched from it to be dropped here.
        Some(documents) => match documents.stream(path, if_none_match(request)).await {
            Ok(Some(Fetched::NotModified)) => {
                // The one tag asked about is the document's (RFC 9110 §15.4.5).
                let mut headers = HeaderMap::with_capacity(1);
                if let Some(etag) = request.get(header::IF_NONE_MATCH) {
                    headers.insert(header::ETAG, etag.clone());
                }
                return Ok((StatusCode::NOT_MODIFIED, headers).into_response());
            }
            Ok(Some(Fetched::Document(d))) => {
                (d.length, d.etag, d.modified, Body::from_stream(d.stream))
            }
            Ok(None) => return Err(AppError::NotFound),
            Err(e) => return Err(blob_failed(format_args!("document {path}"), e)),
        },
        None => {
            let www = resourcesync::www(&state.config);
            let file = match crate::store::open_beneath(&www, std::path::Path::new(path)) {
                Ok(f) => tokio::fs::File::from_std(f),
                // Not there, or only through a symlink out of the folder: a 404.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(AppError::NotFound);
                }
                Err(e) => return Err(internal(format!("{}/{path}: {e}", www.display()))),
            };
            let path = www.join(path);
            let meta = file
                .metadata()
                .await
                .map_err(|e| internal(format!("{}: {e}", path.display())))?;
            let modified = meta.modified().unwrap_or(std::time::UNIX_EPOCH);
            let nanos = modified
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            (
                meta.len(),
                Some(format!("\"{:x}-{nanos:x}\"", meta.len())),
                modified,
                Body::from_stream(tokio_util::io::ReaderStream::new(file)),
            )
        }
    };
    let mime = if path.ends_with(".zip") {
        "application/zip"
    } else {
        "application/xml; charset=utf-8"
    };
    let mut headers = HeaderMap::with_capacity(4);
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(mime));
    if let Ok(date) = HeaderValue::from_str(&httpdate::fmt_http_date(modified)) {
        headers.insert(header::LAST_MODIFIED, date);
    }
    if let Some(etag) = etag.and_then(|e| HeaderValue::from_str(&e).ok()) {
        if resource::not_modified(request, &etag) {
            headers.insert(header::ETAG, etag);
            return Ok((StatusCode::NOT_MODIFIED, headers).into_response());
        }
        headers.insert(header::ETAG, etag);
    }
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    Ok((headers, body).into_response())
}

/// A request's `If-None-Match` when it names one strong entity tag, which the object
/// store can compare with its own; a list of tags, `*` or a weak tag is compared here,
/// after the document is fetched ([`resource::not_modified`]).
fn if_none_match(request: &HeaderMap) -> Option<String> {
    let tag = request.get(header::IF_NONE_MATCH)?.to_str().ok()?.trim();
    let inner = tag.strip_prefix('"')?.strip_suffix('"')?;
    (!inner.contains('"')).then(|| tag.to_string())
}

/// Serves `app` on `listener` until `shutdown` turns true, then finishes the requests
/// in progress. A connection that has not sent a request's headers within
/// `[server] header_timeout_secs` is closed (hyper's timer, which `axum::serve` does
/// not set).
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) -> std::io::Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(state.config.server.header_timeout());
    let app = app(state);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let stop = async move {
        let _ = shutdown.wait_for(|s| *s).await;
    };
    tokio::pin!(stop);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors, say: wait rather than spin (as axum::serve).
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        // The connecting address is the rate limits' key (`guard::client`).
        let service = tower::ServiceExt::map_request(
            app.clone(),
            move |mut r: http::Request<hyper::body::Incoming>| {
                r.extensions_mut().insert(axum::extract::ConnectInfo(peer));
                r
            },
        );
        let connection = http.serve_connection(
            TokioIo::new(stream),
            hyper_util::service::TowerToHyperService::new(service),
        );
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, %peer, "connection ended with an error");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

#[cfg(test)]
mod tests {
    //! The router in-process (`tower::ServiceExt::oneshot`), over a data folder with a
    //! published set: what it answers, and what it refuses, without a socket.

    use axum::body::Body;
    use axum::http::{Request, StatusCode, header};
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    use super::*;

    fn state(dir: &std::path::Path) -> AppState {
        let text = format!(
            "data_dir = \"{}\"\nbase_url = \"http://kb.example/\"\n[[publisher]]\nid = \"a\"\nname = \"A\"\nfeed = \"https://a.example/f.xml\"\nschedule = \"0 0 * * * *\"\n[[destination]]\nid = \"d\"\ntoken_env = \"T\"\n",
            dir.display()
        );
        let config = Config::parse(&text, std::path::Path::new("t.toml"), dir, &|v| {
            (v == "T").then(|| "secret-token-0123456789abcdef0123456789".to_string())
        })
        .unwrap();
        let config = Arc::new(config);
        resourcesync::publish(&config, resourcesync::Dumps::Write).unwrap();
        AppState::open(config).unwrap()
    }

    async fn get(app: &Router, uri: &str, auth: Option<&str>) -> (StatusCode, HeaderMap, String) {
        let mut req = Request::get(uri);
        if let Some(a) = auth {
            req = req.header(header::AUTHORIZATION, a);
        }
        let r = app
            .clone()
            .oneshot(req.body(Body::empty()).unwrap())
            .await
            .unwrap();
        let (parts, body) = r.into_parts();
        let bytes = body.collect().await.unwrap().to_bytes();
        (
            parts.status,
            parts.headers,
            String::from_utf8_lossy(&bytes).into_owned(),
        )
    }

    #[tokio::test]
    async fn the_router_answers_what_the_publisher_wrote_and_nothing_else() {
        let tmp = tempfile::Builder::new()
            .prefix("plikt-app-")
            .tempdir()
            .unwrap();
        let app = app(state(tmp.path()));
        let (s, _, body) = get(&app, "/healthz", None).await;
        assert_eq!((s, body.as_str()), (StatusCode::OK, "ok\n"));
        let (s, h, body) = get(&app, "/resourcesync/a/capabilitylist.xml", None).await;
        assert_eq!(s, StatusCode::OK);
        assert_eq!(h[header::CONTENT_TYPE], "application/xml; charset=utf-8");
        assert!(
            body.contains("capability=\"change-notification\""),
            "{body}"
        );
        for (uri, status) in [
            ("/resourcesync/a/resourcelist-archive.xml", StatusCode::OK),
            ("/resourcesync/a/change/", StatusCode::OK),
            ("/resourcesync/b/capabilitylist.xml", StatusCode::NOT_FOUND),
            ("/resourcesync/a/blobs/x.xml", StatusCode::NOT_FOUND),
            (
                "/resourcesync/a/resourcelist/.x.meta",
                StatusCode::NOT_FOUND,
            ),
            (
                "/resourcesync/a/restricted/capabilitylist.xml",
                StatusCode::UNAUTHORIZED,
            ),
            ("/d/a/1/0000000000000000", StatusCode::NOT_FOUND),
            ("/hub", StatusCode::OK),
        ] {
            assert_eq!(get(&app, uri, None).await.0, status, "{uri}");
        }
        let (s, _, body) = get(
            &app,
            "/resourcesync/a/restricted/capabilitylist.xml",
            Some("Bearer secret-token-0123456789abcdef0123456789"),
        )
        .await;
        assert_eq!(s, StatusCode::OK, "{body}");
        // Errors say what is wrong without internals.
        let (s, h, body) = get(&app, "/resourcesync/a/restricted/change/", None).await;
        assert_eq!(s, StatusCode::UNAUTHORIZED);
        assert!(h.get_all(header::WWW_AUTHENTICATE).iter().count() == 2);
        assert!(body.contains("restricted"), "{body}");
    }

    #[tokio::test]
    async fn a_bad_subscription_request_is_a_400_that_says_why() {
        let tmp = tempfile::Builder::new()
            .prefix("plikt-app-hub-")
            .tempdir()
            .unwrap();
        let app = app(state(tmp.path()));
        let r = app
            .oneshot(
                Request::post("/hub")
                    .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                    .body(Body::from("hub.mode=subscribe&hub.topic=x"))
                    .unwrap(),
            )
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::BAD_REQUEST);
        let body = r.into_body().collect().await.unwrap().to_bytes();
        assert!(
            String::from_utf8_lossy(&body).contains("hub.topic `x` is not a topic"),
            "{body:?}"
        );
    }
}
