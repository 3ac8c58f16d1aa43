//! Resources and metadata records (`d/<publisher>/<deposit>/…`), streamed from the blob
//! store or made from the catalog, with Content-Type, Content-Length, ETag,
//! Last-Modified and `Link: <capability list>; rel="resourcesync"` (§6.3.3); a
//! restricted set's only to its Destinations. Conditional requests (`If-None-Match`,
//! RFC 9110 §13.1.2, by `headers`) and single byte ranges (§14, by
//! `http-range-header`: several ranges are answered with the whole resource, as the RFC
//! allows) for resources.

use std::ops::RangeInclusive;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use headers::HeaderMapExt;

use super::{AppError, AppState, authorised, internal};
use crate::resourcesync;
use crate::store::{Access, Timestamp};

/// Resources up to this size are read whole with their catalog lookup, in one trip to
/// a blocking thread; larger ones are streamed.
const SMALL: u64 = 256 << 10;

/// A resource (its current version).
pub(super) async fn resource(
    State(state): State<AppState>,
    Path((publisher, deposit, key)): Path<(String, i64, String)>,
    request: HeaderMap,
) -> Result<Response, AppError> {
    send_file(state, publisher, deposit, None, key, request).await
}

/// A version-specific URL (`v<version>`, §14.6): the bytes of that version, for ever.
pub(super) async fn resource_version(
    State(state): State<AppState>,
    Path((publisher, deposit, version, key)): Path<(String, i64, String, String)>,
    request: HeaderMap,
) -> Result<Response, AppError> {
    let Some(version) = version.strip_prefix('v').and_then(|v| v.parse().ok()) else {
        return Err(AppError::NotFound);
    };
    send_file(state, publisher, deposit, Some(version), key, request).await
}

/// The URI of a deposit (`d/{publisher}/{deposit}/`): its current metadata record.
pub(super) async fn deposit(
    State(state): State<AppState>,
    Path((publisher, deposit)): Path<(String, i64)>,
    request: HeaderMap,
) -> Result<Response, AppError> {
    if state.config.publisher(&publisher).is_none() {
        return Err(AppError::NotFound);
    }
    send_record(state, publisher, deposit, None, request).await
}

/// The headers every answer about a resource or record carries.
fn common_headers(
    state: &AppState,
    publisher: &str,
    access: Access,
    content_type: &str,
    etag: &str,
    modified: Option<Timestamp>,
) -> Result<HeaderMap, AppError> {
    let value = |s: &str| HeaderValue::from_str(s).map_err(internal);
    let mut headers = HeaderMap::new();
    headers.insert(header::CONTENT_TYPE, value(content_type)?);
    headers.insert(header::ETAG, value(etag)?);
    if let Some(t) = modified {
        let date = httpdate::fmt_http_date(std::time::SystemTime::from(t.get()));
        headers.insert(header::LAST_MODIFIED, value(&date)?);
    }
    let link = format!(
        "<{}{}>; rel=\"resourcesync\"",
        state.config.base_url,
        resourcesync::capability_list_path(publisher, access)
    );
    headers.insert(header::LINK, value(&link)?);
    Ok(headers)
}

/// Whether the request's `If-None-Match` matches `etag` (weak comparison, `*` too).
fn not_modified(request: &HeaderMap, etag: &str) -> bool {
    let (Some(given), Ok(tag)) = (
        request.typed_get::<headers::IfNoneMatch>(),
        etag.parse::<headers::ETag>(),
    ) else {
        return false;
    };
    !given.precondition_passes(&tag)
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
    // The catalog's answer, and a small resource's bytes when it is a local file that
    // the request may read whole (the common case), in one step.
    let (p, blobs, catalog) = (
        publisher.clone(),
        state.blobs.clone(),
        state.catalog.clone(),
    );
    let whole_ok =
        request.get(header::RANGE).is_none() && request.get(header::IF_NONE_MATCH).is_none();
    let lookup = move || {
        let files = catalog
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .deposit_files(&p, deposit, version)?;
        let Some(f) = files
            .into_iter()
            .find(|f| resourcesync::url_key(&f.url) == key)
        else {
            return Ok((None, None));
        };
        let small = whole_ok && f.length <= SMALL && (f.access == Access::Gratis);
        let bytes = if small {
            blobs
                .read_local(&f.sha256, 0, f.length as usize)
                .transpose()
                .map_err(|source| crate::store::StoreError::Io {
                    path: blobs.location(&f.sha256).into(),
                    source,
                })?
        } else {
            None
        };
        Ok::<_, crate::store::StoreError>((Some(f), bytes))
    };
    // A SQLite lookup and a small local read take microseconds (a prepared query, the
    // page cache): done in place, they cost less than the trip to a blocking thread
    // (BENCHMARKS.md, `plikt serve`); PostgreSQL and object stores take the trip.
    let (found, bytes) = if state.local {
        lookup()
    } else {
        tokio::task::spawn_blocking(lookup)
            .await
            .map_err(internal)?
    }
    .map_err(internal)?;
    let Some(f) = found else {
        return Err(AppError::NotFound);
    };
    // A resource of a restricted set is served only to Destinations allowed to see it.
    if f.access != Access::Gratis && !authorised(&state.config, &request, Some(&publisher)) {
        return Err(AppError::Unauthorized);
    }
    let etag = format!("\"{}\"", f.sha256);
    let content_type = f
        .content_type
        .as_deref()
        .unwrap_or("application/octet-stream");
    let mut headers = common_headers(
        &state,
        &publisher,
        f.access,
        content_type,
        &etag,
        Timestamp::parse(&f.stored_at),
    )?;
    headers.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    if not_modified(&request, &etag) {
        return Ok((StatusCode::NOT_MODIFIED, headers).into_response());
    }
    let value = |s: String| HeaderValue::from_str(&s).map_err(internal);
    let range = match byte_range(&request, f.length) {
        Ok(r) => r,
        Err(()) => {
            headers.insert(
                header::CONTENT_RANGE,
                value(format!("bytes */{}", f.length))?,
            );
            return Ok((StatusCode::RANGE_NOT_SATISFIABLE, headers).into_response());
        }
    };
    let (status, start, len) = match range {
        Some(r) => {
            let (a, b) = (*r.start(), *r.end());
            headers.insert(
                header::CONTENT_RANGE,
                value(format!("bytes {a}-{b}/{}", f.length))?,
            );
            (StatusCode::PARTIAL_CONTENT, a, b - a + 1)
        }
        None => (StatusCode::OK, 0, f.length),
    };
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    if let Some(bytes) = bytes {
        return Ok((status, headers, Body::from(bytes)).into_response());
    }
    // The range of the file, or a ranged GET of the object (issue 17 §2).
    let bytes = state
        .blobs
        .stream(&f.sha256, start, len)
        .await
        .map_err(|e| internal(format!("blob {}: {e}", f.sha256)))?;
    Ok((status, headers, Body::from_stream(bytes)).into_response())
}

/// The one range of a `Range: bytes=…` header, if there is one (`Ok(None)`: the whole
/// resource, also for several ranges or another unit); `Err` when it cannot be
/// satisfied (416).
fn byte_range(request: &HeaderMap, length: u64) -> Result<Option<RangeInclusive<u64>>, ()> {
    let Some(text) = request.get(header::RANGE).and_then(|v| v.to_str().ok()) else {
        return Ok(None);
    };
    match http_range_header::parse_range_header(text) {
        Ok(parsed) => match parsed.validate(length) {
            Ok(ranges) if ranges.len() == 1 => Ok(ranges.into_iter().next()),
            Ok(_) => Ok(None),
            Err(_) => Err(()),
        },
        // Not a byte range this server understands: ignored (RFC 9110 §14.2).
        Err(_) => Ok(None),
    }
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
    if access != Access::Gratis && !authorised(&state.config, &request, Some(&publisher)) {
        return Err(AppError::Unauthorized);
    }
    // Records are made from the catalog when asked for (the same bytes each time).
    let bytes = resourcesync::record_bytes(&metadata).map_err(internal)?;
    use sha2::Digest;
    let etag = format!("\"{}\"", hex::encode(sha2::Sha256::digest(&bytes)));
    let headers = common_headers(
        &state,
        &publisher,
        access,
        "application/xml; charset=utf-8",
        &etag,
        Some(at),
    )?;
    if not_modified(&request, &etag) {
        return Ok((StatusCode::NOT_MODIFIED, headers).into_response());
    }
    Ok((headers, bytes).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(h: Option<&str>, length: u64) -> Result<Option<RangeInclusive<u64>>, ()> {
        let mut m = HeaderMap::new();
        if let Some(h) = h {
            m.insert(header::RANGE, HeaderValue::from_str(h).unwrap());
        }
        byte_range(&m, length)
    }

    #[test]
    fn byte_ranges() {
        assert_eq!(range(None, 100), Ok(None));
        assert_eq!(range(Some("bytes=0-9"), 100), Ok(Some(0..=9)));
        assert_eq!(range(Some("bytes=90-"), 100), Ok(Some(90..=99)));
        assert_eq!(range(Some("bytes=-10"), 100), Ok(Some(90..=99)));
        assert_eq!(range(Some("bytes=100-"), 100), Err(()));
        assert_eq!(range(Some("bytes=5-2"), 100), Err(()));
        // Several ranges, or another unit: the whole resource.
        assert_eq!(range(Some("bytes=0-1,5-6"), 100), Ok(None));
        assert_eq!(range(Some("items=0-1"), 100), Ok(None));
    }

    #[test]
    fn if_none_match() {
        let mut m = HeaderMap::new();
        m.insert(
            header::IF_NONE_MATCH,
            HeaderValue::from_static("\"a\", \"b\""),
        );
        assert!(not_modified(&m, "\"b\""));
        assert!(!not_modified(&m, "\"c\""));
        m.insert(header::IF_NONE_MATCH, HeaderValue::from_static("*"));
        assert!(not_modified(&m, "\"c\""));
        m.insert(header::IF_NONE_MATCH, HeaderValue::from_static("W/\"c\""));
        assert!(not_modified(&m, "\"c\""));
    }
}
