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

use crate::config::Config;
use crate::resourcesync::{self, PUBLIC};
use crate::store::{Blobs, Catalog};

/// Shared state of the routes.
#[derive(Debug, Clone)]
pub struct AppState {
    /// The configuration.
    pub config: Arc<Config>,
}

/// The router.
pub fn app(state: AppState) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/status", get(status))
        .route("/robots.txt", get(robots))
        .route("/.well-known/resourcesync", get(source_description))
        .route("/resourcesync/{publisher}/{document}", get(document))
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
    /// 500, with the internal cause for the log.
    Internal(String),
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        match self {
            AppError::NotFound => (StatusCode::NOT_FOUND, "not found\n").into_response(),
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

async fn source_description(State(state): State<AppState>) -> Result<Response, AppError> {
    xml_file(resourcesync::www(&state.config).join(".well-known/resourcesync")).await
}

async fn document(
    State(state): State<AppState>,
    Path((publisher, document)): Path<(String, String)>,
) -> Result<Response, AppError> {
    if state.config.publisher(&publisher).is_none()
        || !document.ends_with(".xml")
        || document.contains(['/', '\\'])
        || document.starts_with('.')
    {
        return Err(AppError::NotFound);
    }
    xml_file(
        resourcesync::www(&state.config)
            .join("resourcesync")
            .join(&publisher)
            .join(&document),
    )
    .await
}

async fn xml_file(path: std::path::PathBuf) -> Result<Response, AppError> {
    match tokio::fs::read(&path).await {
        Ok(bytes) => Ok((
            [(header::CONTENT_TYPE, "application/xml; charset=utf-8")],
            bytes,
        )
            .into_response()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(AppError::NotFound),
        Err(e) => Err(internal(format!("{}: {e}", path.display()))),
    }
}

async fn resource(
    State(state): State<AppState>,
    Path((publisher, deposit, key)): Path<(String, i64, String)>,
    request: axum::http::HeaderMap,
) -> Result<Response, AppError> {
    send_file(state, publisher, deposit, None, key, request).await
}

/// A version-specific URL (`v<version>`, §14.6): the bytes of that version, for ever.
async fn resource_version(
    State(state): State<AppState>,
    Path((publisher, deposit, version, key)): Path<(String, i64, String, String)>,
    request: axum::http::HeaderMap,
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
    request: axum::http::HeaderMap,
) -> Result<Response, AppError> {
    if state.config.publisher(&publisher).is_none() {
        return Err(AppError::NotFound);
    }
    let config = state.config.clone();
    let p = publisher.clone();
    let files = tokio::task::spawn_blocking(move || {
        let catalog = Catalog::open(&config.data_dir.join("catalog.sqlite"))?;
        match version {
            None => catalog.deposit_files(&p, deposit, PUBLIC),
            Some(v) => catalog.version_files(&p, deposit, v, PUBLIC),
        }
    })
    .await
    .map_err(internal)?
    .map_err(internal)?;
    let Some(f) = files
        .into_iter()
        .find(|f| resourcesync::url_key(&f.url) == key)
    else {
        return Err(AppError::NotFound);
    };
    let blobs = Blobs::open(&state.config.data_dir).map_err(internal)?;
    let base = state.config.base_url.as_str();
    let link = format!(
        "<{base}{}>; rel=\"resourcesync\"",
        resourcesync::capability_list_path(&publisher)
    );
    let etag = format!("\"{}\"", f.sha256);
    let value = |s: &str| HeaderValue::from_str(s).map_err(internal);
    let mut headers = axum::http::HeaderMap::new();
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
    let mut file = tokio::fs::File::open(blobs.path(&f.sha256))
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
