//! HTTP service of `plikt run` and `plikt serve`: `fn app(state) -> Router`, errors that
//! hide internals from clients, graceful shutdown.
//!
//! Routes:
//! - `GET /.well-known/resourcesync`, `GET /resourcesync/{publisher}/{document}`: the
//!   ResourceSync documents `plikt publish` wrote (see [`crate::resourcesync`]);
//! - `GET /d/{publisher}/{deposit}/{key}`: a resource (its current version), and
//!   `GET /d/{publisher}/{deposit}/v{version}/{key}`: one version of it, streamed from
//!   the blob store with Content-Type, Content-Length, ETag, Last-Modified, single byte
//!   ranges and `Link: <capability list>; rel="resourcesync"` (§6.3.3);
//! - `GET /robots.txt`;
//! - `GET /status` (the JSON of `plikt status --format json`), `GET /healthz`.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

mod hub;

use crate::config::{Config, DestinationConfig};
use crate::resourcesync::layout::SetTarget;
use crate::resourcesync::{self, PUBLIC};
use crate::store::{Blobs, Catalog};
use axum::http::HeaderMap;

/// Shared state of the routes: the catalog and blob store are opened once, not per
/// request.
#[derive(Debug, Clone)]
pub struct AppState {
    /// The configuration.
    pub config: Arc<Config>,
    catalog: Arc<std::sync::Mutex<Catalog>>,
    blobs: Blobs,
    /// The client that verifies subscribers' intent (the hub's target policy).
    hub_client: reqwest::Client,
}

impl AppState {
    /// Opens the data folder of `config` for reading (creating it if needed).
    pub fn open(config: Arc<Config>) -> Result<Self, crate::notify::NotifyError> {
        let store = crate::store::Store::open(&config.data_dir, crate::store::Mode::Read)?;
        Ok(Self {
            hub_client: crate::notify::client(&config)?,
            config,
            catalog: Arc::new(std::sync::Mutex::new(store.catalog)),
            blobs: store.blobs,
        })
    }

    /// Runs `query` on the catalog off the async threads.
    async fn query<T: Send + 'static>(
        &self,
        query: impl FnOnce(&Catalog) -> Result<T, crate::store::StoreError> + Send + 'static,
    ) -> Result<T, AppError> {
        let catalog = self.catalog.clone();
        tokio::task::spawn_blocking(move || {
            let catalog = catalog
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            query(&catalog)
        })
        .await
        .map_err(internal)?
        .map_err(internal)
    }
}

/// The router.
pub fn app(state: AppState) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/status", get(status))
        .route("/robots.txt", get(robots))
        .route("/.well-known/resourcesync", get(source_description))
        .route("/resourcesync/{publisher}/{*rest}", get(set_file))
        .route(
            &format!("/{}", resourcesync::layout::HUB),
            get(hub::about).post(hub::subscription),
        )
        .route("/d/{publisher}/{deposit}/", get(deposit))
        .route("/d/{publisher}/{deposit}/{key}", get(resource))
        .route(
            "/d/{publisher}/{deposit}/{version}/{key}",
            get(resource_version),
        )
        .with_state(state)
}

/// What went wrong, for the client: the cause goes to the log, never to the client.
#[derive(Debug)]
pub enum AppError {
    /// 404.
    NotFound,
    /// 401: restricted, and no (or wrong) credentials.
    Unauthorized,
    /// 500, with the internal cause for the log.
    Internal(String),
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

fn internal(e: impl std::fmt::Display) -> AppError {
    AppError::Internal(e.to_string())
}

async fn status(State(state): State<AppState>) -> Result<Response, AppError> {
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
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)?;
    config.destinations.iter().find(|d| {
        let Ok(secret) = &d.secret else { return false };
        let expected = match &d.username {
            Some(user) => format!("Basic {}", base64(&format!("{user}:{}", secret.expose()))),
            None => format!("Bearer {}", secret.expose()),
        };
        publisher.is_none_or(|p| d.may_see(p))
            && constant_time_eq(given.as_bytes(), expected.as_bytes())
    })
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Standard base64 with padding (HTTP Basic credentials).
pub fn base64(s: &str) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let b = s.as_bytes();
    let mut out = String::with_capacity(b.len().div_ceil(3) * 4);
    for c in b.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            out.push(if i <= c.len() {
                T[(n >> (18 - 6 * i)) as usize & 63] as char
            } else {
                '='
            });
        }
    }
    out
}

async fn source_description(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    let file = if authorised(&state.config, &headers, None) {
        resourcesync::FULL_SOURCE_DESCRIPTION
    } else {
        resourcesync::SOURCE_DESCRIPTION
    };
    static_file(resourcesync::www(&state.config).join(file)).await
}

/// Everything below `resourcesync/<publisher>/`: the documents and packages of the
/// publisher's sets, where [`resourcesync::layout`] says the publisher writes them (404
/// for anything else, without touching the disk), and the sets' topics; 401 for a
/// restricted set without the right credentials.
async fn set_file(
    State(state): State<AppState>,
    Path((publisher, rest)): Path<(String, String)>,
    method: axum::http::Method,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    let Some(request) = resourcesync::layout::parse_set_request(&rest) else {
        return Err(AppError::NotFound);
    };
    if state.config.publisher(&publisher).is_none() {
        return Err(AppError::NotFound);
    }
    if request.access != PUBLIC && !authorised(&state.config, &headers, Some(&publisher)) {
        return Err(AppError::Unauthorized);
    }
    match request.target {
        SetTarget::File(file) => {
            let path = resourcesync::www(&state.config)
                .join(resourcesync::set_path(&publisher, request.access))
                .join(file);
            static_file(path).await
        }
        SetTarget::Topic => hub::topic(&state, &publisher, request.access, &method).await,
    }
}

/// A published file, streamed (dump packages can be large), typed by its extension.
async fn static_file(path: std::path::PathBuf) -> Result<Response, AppError> {
    let file = match tokio::fs::File::open(&path).await {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(AppError::NotFound),
        Err(e) => return Err(internal(format!("{}: {e}", path.display()))),
    };
    let len = file
        .metadata()
        .await
        .map_err(|e| internal(format!("{}: {e}", path.display())))?
        .len();
    let mime = if path.extension().is_some_and(|e| e == "zip") {
        "application/zip"
    } else {
        "application/xml; charset=utf-8"
    };
    let body = Body::from_stream(tokio_util::io::ReaderStream::new(file));
    Ok((
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(mime)),
            (header::CONTENT_LENGTH, HeaderValue::from(len)),
        ],
        body,
    )
        .into_response())
}

async fn resource(
    State(state): State<AppState>,
    Path((publisher, deposit, key)): Path<(String, i64, String)>,
    request: HeaderMap,
) -> Result<Response, AppError> {
    send_file(state, publisher, deposit, None, key, request).await
}

/// A version-specific URL (`v<version>`, §14.6): the bytes of that version, for ever.
async fn resource_version(
    State(state): State<AppState>,
    Path((publisher, deposit, version, key)): Path<(String, i64, String, String)>,
    request: HeaderMap,
) -> Result<Response, AppError> {
    let Some(version) = version.strip_prefix('v').and_then(|v| v.parse().ok()) else {
        return Err(AppError::NotFound);
    };
    send_file(state, publisher, deposit, Some(version), key, request).await
}

async fn send_file(
    state: AppState,
    publisher: String,
    deposit: i64,
    version: Option<i64>,
    key: String,
    request: HeaderMap,
) -> Result<Response, AppError> {
    if state.config.publisher(&publisher).is_none() {
        return Err(AppError::NotFound);
    }
    if key == "metadata.xml" {
        return send_record(state, publisher, deposit, version, request).await;
    }
    let p = publisher.clone();
    let files = state
        .query(move |catalog| catalog.deposit_files(&p, deposit, version))
        .await?;
    let Some(f) = files
        .into_iter()
        .find(|f| resourcesync::url_key(&f.url) == key)
    else {
        return Err(AppError::NotFound);
    };
    // A resource of a restricted set is served only to Destinations allowed to see it.
    if f.access != PUBLIC && !authorised(&state.config, &request, Some(&publisher)) {
        return Err(AppError::Unauthorized);
    }
    let base = state.config.base_url.as_str();
    let link = format!(
        "<{base}{}>; rel=\"resourcesync\"",
        resourcesync::capability_list_path(&publisher, &f.access)
    );
    let etag = format!("\"{}\"", f.sha256);
    let value = |s: &str| HeaderValue::from_str(s).map_err(internal);
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        value(
            f.content_type
                .as_deref()
                .unwrap_or("application/octet-stream"),
        )?,
    );
    headers.insert(header::ETAG, value(&etag)?);
    headers.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(&f.stored_at) {
        let http_date = t
            .with_timezone(&chrono::Utc)
            .format("%a, %d %b %Y %H:%M:%S GMT");
        headers.insert(header::LAST_MODIFIED, value(&http_date.to_string())?);
    }
    headers.insert(header::LINK, value(&link)?);
    let header_text = |name| {
        request
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
    };
    if header_text(header::IF_NONE_MATCH)
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"))
    {
        return Ok((StatusCode::NOT_MODIFIED, headers).into_response());
    }
    // One byte range (RFC 9110 §14): `bytes=a-b`, `bytes=a-`, `bytes=-n`.
    // Several ranges, or another unit, are answered with the whole resource (allowed).
    let range = match header_text(header::RANGE)
        .filter(|r| r.trim().starts_with("bytes=") && !r.contains(','))
    {
        None => None,
        Some(r) => match byte_range(r, f.length) {
            Some(range) => Some(range),
            None => {
                headers.insert(
                    header::CONTENT_RANGE,
                    value(&format!("bytes */{}", f.length))?,
                );
                return Ok((StatusCode::RANGE_NOT_SATISFIABLE, headers).into_response());
            }
        },
    };
    let mut file = tokio::fs::File::open(state.blobs.path(&f.sha256))
        .await
        .map_err(|e| internal(format!("blob {}: {e}", f.sha256)))?;
    let (status, start, len) = match range {
        Some((a, b)) => {
            headers.insert(
                header::CONTENT_RANGE,
                value(&format!("bytes {a}-{b}/{}", f.length))?,
            );
            (StatusCode::PARTIAL_CONTENT, a, b - a + 1)
        }
        None => (StatusCode::OK, 0, f.length),
    };
    headers.insert(header::CONTENT_LENGTH, value(&len.to_string())?);
    use tokio::io::{AsyncReadExt, AsyncSeekExt};
    if start > 0 {
        file.seek(std::io::SeekFrom::Start(start))
            .await
            .map_err(internal)?;
    }
    let body = Body::from_stream(tokio_util::io::ReaderStream::new(file.take(len)));
    Ok((status, headers, body).into_response())
}

/// The URI of a deposit (`d/{publisher}/{deposit}/`): its current metadata record.
async fn deposit(
    State(state): State<AppState>,
    Path((publisher, deposit)): Path<(String, i64)>,
    request: HeaderMap,
) -> Result<Response, AppError> {
    if state.config.publisher(&publisher).is_none() {
        return Err(AppError::NotFound);
    }
    send_record(state, publisher, deposit, None, request).await
}

/// A version's metadata record (§14.5), under the same access rule as its files.
async fn send_record(
    state: AppState,
    publisher: String,
    deposit: i64,
    version: Option<i64>,
    request: HeaderMap,
) -> Result<Response, AppError> {
    let p = publisher.clone();
    let found = state
        .query(move |catalog| {
            let v = match version {
                None => catalog.current_version(&p, deposit)?.map(|(v, _)| v),
                Some(v) => Some(v),
            };
            Ok(match v {
                None => None,
                // Only a version of this deposit of this publisher.
                Some(v) => catalog.version_metadata(&p, deposit, v)?,
            })
        })
        .await?;
    let Some((metadata, access, at)) = found else {
        return Err(AppError::NotFound);
    };
    if access != PUBLIC && !authorised(&state.config, &request, Some(&publisher)) {
        return Err(AppError::Unauthorized);
    }
    // Records are made from the catalog when asked for (the same bytes each time).
    let bytes = resourcesync::record_bytes(&metadata);
    let link = format!(
        "<{}{}>; rel=\"resourcesync\"",
        state.config.base_url,
        resourcesync::capability_list_path(&publisher, &access)
    );
    use sha2::Digest;
    let etag = format!("\"{}\"", crate::store::hex(&sha2::Sha256::digest(&bytes)));
    let mut headers = HeaderMap::new();
    let value = |s: &str| HeaderValue::from_str(s).map_err(internal);
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/xml; charset=utf-8"),
    );
    headers.insert(header::ETAG, value(&etag)?);
    headers.insert(header::LINK, value(&link)?);
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(&at) {
        let http_date = t
            .with_timezone(&chrono::Utc)
            .format("%a, %d %b %Y %H:%M:%S GMT");
        headers.insert(header::LAST_MODIFIED, value(&http_date.to_string())?);
    }
    Ok((headers, bytes).into_response())
}

/// A single satisfiable byte range of a `length`-byte resource, inclusive, or `None`.
fn byte_range(header: &str, length: u64) -> Option<(u64, u64)> {
    let spec = header.trim().strip_prefix("bytes=")?;
    if spec.contains(',') || length == 0 {
        return None;
    }
    let (a, b) = spec.split_once('-')?;
    let (a, b) = (a.trim(), b.trim());
    let (start, end) = if a.is_empty() {
        let n: u64 = b.parse().ok()?;
        if n == 0 {
            return None;
        }
        (length.saturating_sub(n), length - 1)
    } else {
        let start: u64 = a.parse().ok()?;
        let end = if b.is_empty() {
            length - 1
        } else {
            b.parse::<u64>().ok()?.min(length - 1)
        };
        (start, end)
    };
    (start <= end && start < length).then_some((start, end))
}

/// Serves `app` on `listener` until `shutdown` turns true, then finishes the requests
/// in progress.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) -> std::io::Result<()> {
    axum::serve(listener, app(state))
        .with_graceful_shutdown(async move {
            let _ = shutdown.wait_for(|s| *s).await;
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::byte_range;

    #[test]
    fn byte_ranges() {
        assert_eq!(byte_range("bytes=0-9", 100), Some((0, 9)));
        assert_eq!(byte_range("bytes=90-", 100), Some((90, 99)));
        assert_eq!(byte_range("bytes=-10", 100), Some((90, 99)));
        assert_eq!(byte_range("bytes=95-200", 100), Some((95, 99)));
        assert_eq!(byte_range("bytes=100-", 100), None);
        assert_eq!(byte_range("bytes=5-2", 100), None);
        assert_eq!(byte_range("bytes=0-1,5-6", 100), None);
        assert_eq!(byte_range("items=0-1", 100), None);
    }
}
