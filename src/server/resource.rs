//! Resources and metadata records (`d/<publisher>/<deposit>/…`), streamed from the blob
//! store or made from the catalog, with Content-Type, Content-Length, ETag,
//! Last-Modified and `Link: <capability list>; rel="resourcesync"` (§6.3.3); a
//! restricted set's only to its Destinations. Conditional requests (`If-None-Match`,
//! RFC 9110 §13.1.2, by `headers`) and single byte ranges (§14, by
//! `http-range-header`: several ranges are answered with the whole resource, as the RFC
//! allows) for resources.

use std::ops::RangeInclusive;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use headers::HeaderMapExt;

use super::cache::{DepositFiles, Headers};
use super::{AppError, AppState, authorised, internal, store_failed};
use crate::resourcesync;
use crate::store::Access;

/// Resources up to this size are read whole (and, with a local blob folder, kept in
/// memory: [`super::cache`]); larger ones are streamed.
pub(super) const SMALL: u64 = 256 << 10;

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
fn common_headers(h: &Headers) -> HeaderMap {
    let mut headers = HeaderMap::with_capacity(8);
    headers.insert(header::CONTENT_TYPE, h.content_type.clone());
    headers.insert(header::ETAG, h.etag.clone());
    if let Some(date) = &h.last_modified {
        headers.insert(header::LAST_MODIFIED, date.clone());
    }
    headers.insert(header::LINK, h.link.clone());
    if let Some(d) = &h.disposition {
        headers.insert(header::CONTENT_DISPOSITION, d.clone());
    }
    headers
}

/// Whether the request's `If-None-Match` matches `etag` (weak comparison, `*` too).
pub(super) fn not_modified(request: &HeaderMap, etag: &HeaderValue) -> bool {
    if !request.contains_key(header::IF_NONE_MATCH) {
        return false;
    }
    let (Some(given), Some(tag)) = (
        request.typed_get::<headers::IfNoneMatch>(),
        etag.to_str()
            .ok()
            .and_then(|e| e.parse::<headers::ETag>().ok()),
    ) else {
        return false;
    };
    !given.precondition_passes(&tag)
}

// Over 100 lines: the conditional, range and header rules of one answer, read top to bottom.
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
    let (files, bytes) = if state.local {
        // With SQLite, the files of the deposit as served, kept from an earlier request
        // while the catalog has not changed ([`super::cache`]); a lookup made now takes
        // microseconds (a prepared query, the page cache): done in place, it costs less
        // than the trip to a blocking thread (BENCHMARKS.md, `plikt serve`). The bytes
        // come below.
        let lookup = |c: &crate::store::Catalog| {
            state.cache.deposit_files(
                c,
                state.config.base_url.as_str(),
                &publisher,
                deposit,
                version,
            )
        };
        // On a free connection in place; when every one is busy, on a blocking thread
        // that waits for one.
        let files = match state.catalog.try_again(lookup) {
            Some(files) => files,
            None => {
                let (s, p) = (state.clone(), publisher.clone());
                tokio::task::spawn_blocking(move || {
                    s.catalog.again(|c| {
                        s.cache
                            .deposit_files(c, s.config.base_url.as_str(), &p, deposit, version)
                    })
                })
                .await
                .map_err(internal)?
            }
        }
        .map_err(store_failed)?;
        (files, None)
    } else {
        // PostgreSQL or an object store: the catalog's answer, and a small resource's
        // bytes when it is a local file that the request may read whole, in one trip to
        // a blocking thread.
        let (p, k, blobs, catalog, base) = (
            publisher.clone(),
            key.clone(),
            state.blobs.clone(),
            state.catalog.clone(),
            state.config.base_url.clone(),
        );
        let whole_ok =
            request.get(header::RANGE).is_none() && request.get(header::IF_NONE_MATCH).is_none();
        tokio::task::spawn_blocking(move || {
            let files = Arc::new(
                catalog.again(|c| DepositFiles::read(c, base.as_str(), &p, deposit, version))?,
            );
            let bytes = match files.find(&k) {
                Some(f) if whole_ok && f.length <= SMALL && f.access == Access::Gratis => blobs
                    .read_local(&f.sha256, 0, f.length as usize)
                    .transpose()
                    .map_err(|source| crate::store::StoreError::Io {
                        path: blobs.location(&f.sha256).into(),
                        source,
                    })?,
                _ => None,
            };
            Ok::<_, crate::store::StoreError>((files, bytes))
        })
        .await
        .map_err(internal)?
        .map_err(store_failed)?
    };
    let Some(f) = files.find(&key) else {
        return Err(AppError::NotFound);
    };
    // A resource of a restricted set is served only to Destinations allowed to see it;
    // to anyone else it is not there at all (no oracle for guessed URLs).
    if f.access != Access::Gratis && !authorised(&state.config, &request, Some(&publisher)) {
        return Err(AppError::NotFound);
    }
    let h = f.headers.as_ref().map_err(internal)?;
    let mut headers = common_headers(h);
    headers.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    if not_modified(&request, &h.etag) {
        return Ok((StatusCode::NOT_MODIFIED, headers).into_response());
    }
    let value = |s: String| HeaderValue::from_str(&s).map_err(internal);
    let range = match byte_range(&request, f.length, h) {
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
    // A small local file: its bytes kept from an earlier request, or read now (in
    // place, like the lookup) and kept.
    if state.local && f.length <= SMALL {
        let whole = match state.cache.blob(&f.sha256) {
            Some(b) => Some(b),
            None => state
                .blobs
                .read_local(&f.sha256, 0, f.length as usize)
                .transpose()
                .map_err(|e| internal(format!("{}: {e}", state.blobs.location(&f.sha256))))?
                .map(|b| {
                    let b = Bytes::from(b);
                    state.cache.keep_blob(&f.sha256, b.clone());
                    b
                }),
        };
        if let Some(whole) = whole {
            // Within the blob: `byte_range` keeps ranges inside the length.
            let part = whole.slice(start as usize..(start + len) as usize);
            return Ok((status, headers, Body::from(part)).into_response());
        }
    }
    // The range of the file, or a ranged GET of the object (issue 17 §2).
    let bytes = state
        .blobs
        .stream(&f.sha256, f.pack.as_ref(), start, len)
        .await
        .map_err(|e| super::blob_failed(format_args!("blob {}", f.sha256), e))?;
    Ok((status, headers, Body::from_stream(bytes)).into_response())
}

/// The one range of a `Range: bytes=…` header, if there is one (`Ok(None)`: the whole
/// resource, also for several ranges or another unit, or an `If-Range` that no longer
/// matches); `Err` when it cannot be satisfied (416).
fn byte_range(
    request: &HeaderMap,
    length: u64,
    h: &Headers,
) -> Result<Option<RangeInclusive<u64>>, ()> {
    let Some(text) = request.get(header::RANGE).and_then(|v| v.to_str().ok()) else {
        return Ok(None);
    };
    if !if_range_matches(request, h) {
        return Ok(None);
    }
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

/// Whether a request's `If-Range` (if any) still names this representation (RFC 9110
/// §13.1.5): an entity tag by strong comparison, or a date exactly the
/// `Last-Modified`. Otherwise the range is ignored and the whole resource sent, so that
/// a client never stitches parts of two versions together.
fn if_range_matches(request: &HeaderMap, h: &Headers) -> bool {
    let Some(given) = request.get(header::IF_RANGE) else {
        return true;
    };
    let Ok(given) = given.to_str().map(str::trim) else {
        return false;
    };
    if given.starts_with('"') {
        // Strong comparison: both strong and the same (a weak `W/"…"` never matches).
        return h.etag.to_str().is_ok_and(|e| e == given);
    }
    match (&h.last_modified, httpdate::parse_http_date(given)) {
        (Some(lm), Ok(date)) => lm
            .to_str()
            .ok()
            .and_then(|lm| httpdate::parse_http_date(lm).ok())
            .is_some_and(|lm| lm == date),
        _ => false,
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
        return Err(AppError::NotFound);
    }
    // Records are made from the catalog when asked for (the same bytes each time).
    let bytes = resourcesync::record_bytes(&metadata).map_err(internal)?;
    use sha2::Digest;
    let etag = format!("\"{}\"", hex::encode(sha2::Sha256::digest(&bytes)));
    let h = Headers::new(
        state.config.base_url.as_str(),
        &publisher,
        access,
        "application/xml; charset=utf-8",
        &etag,
        Some(at),
    )
    .map_err(internal)?;
    let headers = common_headers(&h);
    if not_modified(&request, &h.etag) {
        return Ok((StatusCode::NOT_MODIFIED, headers).into_response());
    }
    Ok((headers, bytes).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn served() -> Headers {
        Headers::new(
            "http://kb.example/",
            "p",
            Access::Gratis,
            "text/plain",
            "\"abc\"",
            crate::store::Timestamp::parse("2026-01-02T03:04:05Z"),
        )
        .unwrap()
    }

    fn range(h: Option<&str>, length: u64) -> Result<Option<RangeInclusive<u64>>, ()> {
        let mut m = HeaderMap::new();
        if let Some(h) = h {
            m.insert(header::RANGE, HeaderValue::from_str(h).unwrap());
        }
        byte_range(&m, length, &served())
    }

    #[test]
    fn a_range_whose_if_range_no_longer_matches_is_the_whole_resource() {
        let h = served();
        let lm = h.last_modified.clone().unwrap();
        let with = |if_range: &HeaderValue| {
            let mut m = HeaderMap::new();
            m.insert(header::RANGE, HeaderValue::from_static("bytes=0-9"));
            m.insert(header::IF_RANGE, if_range.clone());
            byte_range(&m, 100, &h)
        };
        assert_eq!(with(&HeaderValue::from_static("\"abc\"")), Ok(Some(0..=9)));
        assert_eq!(with(&lm), Ok(Some(0..=9)));
        for other in [
            "\"abd\"",
            "W/\"abc\"",
            "Sat, 01 Jan 2000 00:00:00 GMT",
            "junk",
        ] {
            assert_eq!(with(&HeaderValue::from_static(other)), Ok(None), "{other}");
        }
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
        let (b, c) = (
            HeaderValue::from_static("\"b\""),
            HeaderValue::from_static("\"c\""),
        );
        assert!(not_modified(&m, &b));
        assert!(!not_modified(&m, &c));
        m.insert(header::IF_NONE_MATCH, HeaderValue::from_static("*"));
        assert!(not_modified(&m, &c));
        m.insert(header::IF_NONE_MATCH, HeaderValue::from_static("W/\"c\""));
        assert!(not_modified(&m, &c));
        assert!(!not_modified(&HeaderMap::new(), &c));
    }
}
