//! One file of a version: fetched under the client's policy, streamed to a blob while
//! MD5 and SHA-256 are computed, and verified (H-MD5, H-SIZE, H-MIME, H-DRM). The
//! verified blob goes back to the download loop, which commits blobs in batches
//! ([`Blobs::commit`]) before recording them.

use std::time::Duration;

use tokio::sync::watch;

use super::item::harvest_finding;
use crate::fetch::{Client, FetchError, Kind, Retry};
use crate::profile::{RuleId, Severity};
use crate::store::{BlobError, Blobs, FileResult, NewFile, StoredFile, StoredFinding, Written};

/// A file to fetch.
#[derive(Debug, Clone)]
pub struct FileJob {
    /// Version row.
    pub version: i64,
    /// File row.
    pub file_id: i64,
    /// The item's guid.
    pub guid: String,
    /// URL and declared facts.
    pub file: NewFile,
}

/// What became of it.
#[derive(Debug)]
pub struct FileOutcome {
    /// The job.
    pub job: FileJob,
    /// Stored, or failed with the reason.
    pub result: FileResult,
    /// The verified blob of a stored file, to commit before the result is recorded.
    pub blob: Option<Written>,
    /// The server asked to come back later than this run should wait.
    pub postpone: Option<Duration>,
    /// H-* findings.
    pub findings: Vec<StoredFinding>,
    /// Why it failed, if it did.
    pub failure: Option<FileFailure>,
    /// When it ended.
    pub at: crate::store::Timestamp,
}

/// Why a file failed: what the run does next depends on whose failure it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFailure {
    /// Fetching it failed (the publisher's server or the network), for this reason
    /// ([`FetchError::reason`]).
    Fetch(&'static str),
    /// Its bytes are not those `media:hash` names (H-MD5).
    Md5,
    /// The blob store could not keep it: the deposit's failure, not the publisher's
    /// (not an attempt of its version's). `down`: because the store takes no file now
    /// (the object store does not answer, or the disk is full), so the run downloads
    /// nothing more.
    Store {
        /// The blob store takes no file now ([`BlobError::takes_nothing_now`]).
        down: bool,
    },
}

/// Why a file stays pending after the blob store refused it (`url`: the file's).
pub(super) fn not_stored(url: &str, source: BlobError) -> String {
    FileError::Store {
        url: url.to_string(),
        source,
    }
    .to_string()
}

impl FileFailure {
    /// In one word, as `plikt_file_failures_total` labels it.
    pub fn label(self) -> &'static str {
        match self {
            FileFailure::Fetch(reason) => reason,
            FileFailure::Md5 => "md5",
            FileFailure::Store { .. } => "store",
        }
    }
}

#[derive(Debug, thiserror::Error)]
enum FileError {
    #[error(transparent)]
    Fetch(#[from] FetchError),
    #[error("{url}: storing the file failed: {source}; it stays pending for a later run")]
    Store { url: String, source: BlobError },
    #[error(
        "{url}: MD5 of the downloaded bytes is {actual}, but media:hash says {expected} (H-MD5); the file is corrupt or the feed's hash is wrong"
    )]
    Md5 {
        url: String,
        expected: String,
        actual: String,
    },
}

/// Fetches, verifies and stores one file, retrying as the client's policy says.
pub async fn fetch_file(
    client: &Client,
    blobs: &Blobs,
    job: FileJob,
    mut shutdown: watch::Receiver<bool>,
    bytes: &(dyn Fn(u64) + Sync),
) -> FileOutcome {
    let mut findings = Vec::new();
    let mut attempt = 0;
    let mut blob = None;
    let mut failure = None;
    let (result, postpone) = loop {
        match fetch_once(client, blobs, &job, &mut findings, bytes).await {
            Ok((stored, written)) => {
                blob = Some(written);
                break (FileResult::Stored(Box::new(stored)), None);
            }
            Err(FileError::Fetch(e)) => match client.retry(&e, attempt) {
                Retry::After(delay) if !*shutdown.borrow() => {
                    tracing::info!(guid = %job.guid, url = %job.file.url, error = %e, retry_in_ms = delay.as_millis() as u64, "retrying");
                    crate::metrics::get().retried("file");
                    attempt += 1;
                    tokio::select! {
                        () = tokio::time::sleep(delay) => {}
                        _ = shutdown.changed() => {}
                    }
                }
                Retry::Postpone(d) => {
                    failure = Some(FileFailure::Fetch(e.reason()));
                    break (
                        FileResult::Failed(format!(
                            "{e}; postponed to a later run (Retry-After longer than max_retry_after_secs)"
                        )),
                        Some(d),
                    );
                }
                _ => {
                    findings.push(harvest_finding(
                        RuleId::HFetch,
                        Severity::Error,
                        Some(&job.guid),
                        Some(&job.file.url),
                        e.to_string(),
                    ));
                    failure = Some(FileFailure::Fetch(e.reason()));
                    break (FileResult::Failed(e.to_string()), None);
                }
            },
            Err(e @ FileError::Md5 { .. }) => {
                failure = Some(FileFailure::Md5);
                findings.push(harvest_finding(
                    RuleId::HMd5,
                    Severity::Error,
                    Some(&job.guid),
                    Some(&job.file.url),
                    e.to_string(),
                ));
                break (FileResult::Failed(e.to_string()), None);
            }
            Err(FileError::Store { url, source }) => {
                failure = Some(FileFailure::Store {
                    down: source.takes_nothing_now(),
                });
                let e = FileError::Store { url, source };
                break (FileResult::Failed(e.to_string()), None);
            }
        }
    };
    FileOutcome {
        job,
        result,
        blob,
        postpone,
        findings,
        failure,
        at: crate::store::now(),
    }
}

async fn fetch_once(
    client: &Client,
    blobs: &Blobs,
    job: &FileJob,
    findings: &mut Vec<StoredFinding>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(StoredFile, Written), FileError> {
    let url_text = job.file.url.clone();
    let url = url::Url::parse(&url_text).map_err(|e| FetchError::Transport {
        url: url::Url::parse("http://invalid/").expect("constant"),
        reason: format!("`{url_text}` is not a URL ({e})"),
    })?;
    let store = |source| FileError::Store {
        url: url_text.clone(),
        source,
    };
    let started = std::time::Instant::now();
    let mut response = client.get(&url, Kind::File, None).await?;
    let mut writer = blobs.writer().map_err(store)?;
    let mut drm = super::drm::DrmScan::default();
    while let Some(chunk) = response.chunk().await? {
        writer.write(&chunk).await.map_err(store)?;
        drm.update(&chunk);
        progress(chunk.len() as u64);
    }
    crate::metrics::get().fetched("file", started.elapsed());
    let at_once = writer.finishes_at_once() && !drm.reads_file();
    // Finish the digests (and the object store's upload), verify and look for DRM. A
    // small file (in the local folder, or held for an object store's pack) has its
    // digests finished in place (no threads to join, nothing to send) and its DRM check
    // reads nothing back, so it stays on this thread; otherwise one hop to a blocking
    // thread.
    let declared_md5 = job.file.declared_md5.clone();
    let verify = move || {
        let written = writer.finish()?;
        if let Some(expected) = declared_md5
            && expected != written.digests.md5
        {
            // Dropping `written` removes the temporary blob: wrong bytes are not stored.
            return Ok(Err((expected, written.digests.md5.clone())));
        }
        let drm = drm.finish(|| written.reader().ok());
        Ok(Ok((written, drm)))
    };
    let verified: Result<Result<_, (String, String)>, BlobError> = if at_once {
        verify()
    } else {
        match tokio::task::spawn_blocking(verify).await {
            Ok(r) => r,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    };
    let (written, drm) = verified
        .map_err(store)?
        .map_err(|(expected, actual)| FileError::Md5 {
            url: url_text.clone(),
            expected,
            actual,
        })?;
    file_findings(job, &response, &written.digests, drm, findings);
    let stored = StoredFile {
        digests: written.digests.clone(),
        final_url: response.url.to_string(),
        status: response.status,
        content_type: response.content_type.clone(),
        content_encoding: response.content_encoding.clone(),
        last_modified: response.last_modified.clone(),
        etag: response.etag.clone(),
        filename: response
            .content_disposition
            .as_deref()
            .and_then(safe_filename),
        pack: None,
    };
    Ok((stored, written))
}

/// The harvest-time findings of a stored file: H-SIZE (`fileSize` differs), H-MIME (the
/// declared type differs from `Content-Type`) and H-DRM (`drm`: what the scan found).
fn file_findings(
    job: &FileJob,
    response: &crate::fetch::Response,
    digests: &crate::store::Digests,
    drm: Option<String>,
    findings: &mut Vec<StoredFinding>,
) {
    let url = job.file.url.as_str();
    let guid = Some(job.guid.as_str());
    if let Some(size) = job.file.declared_size
        && size != digests.length
    {
        findings.push(harvest_finding(
            RuleId::HSize,
            Severity::Warning,
            guid,
            Some(url),
            format!(
                "{url}: fileSize says {size} bytes, the server sent {} (H-SIZE); correct fileSize",
                digests.length
            ),
        ));
    }
    if let (Some(declared), Some(sent)) = (&job.file.declared_type, &response.content_type)
        && !same_mime(declared, sent)
    {
        findings.push(harvest_finding(
            RuleId::HMime,
            Severity::Warning,
            guid,
            Some(url),
            format!(
                "{url}: the feed declares type `{declared}`, the server sends `Content-Type: {sent}` (H-MIME); make them agree"
            ),
        ));
    }
    if let Some(reason) = drm {
        findings.push(harvest_finding(
            RuleId::HDrm,
            Severity::Error,
            guid,
            Some(url),
            format!("{url}: {reason} (H-DRM)"),
        ));
    }
}

/// MIME types equal, ignoring parameters and case (H-MIME, §7.12).
fn same_mime(a: &str, b: &str) -> bool {
    let base = |s: &str| {
        s.split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    };
    base(a) == base(b)
}

/// A file name from an (untrusted) `Content-Disposition`, made safe to show or to use
/// as a download name: the last path component, no control characters, no leading
/// dots, at most 200 characters. plikt never uses it as a path: blobs are named by
/// their SHA-256.
pub fn safe_filename(header: &str) -> Option<String> {
    let mut name: Option<String> = None;
    for part in header.split(';').skip(1) {
        let (k, v) = part.split_once('=')?;
        let k = k.trim().to_ascii_lowercase();
        let v = v.trim();
        if k == "filename*" {
            name = Some(ext_value(v));
            break;
        }
        if k == "filename" {
            name = Some(v.trim_matches('"').to_string());
        }
    }
    let name = name?;
    let last = name.rsplit(['/', '\\']).next().unwrap_or("");
    let clean: String = last
        .chars()
        .filter(|c| !c.is_control())
        .collect::<String>()
        .trim()
        .trim_start_matches('.')
        .chars()
        .take(200)
        .collect();
    (!clean.is_empty()).then_some(clean)
}

/// An RFC 5987 `ext-value` (`charset'language'percent-encoded`): ISO-8859-1 or, as
/// for any other charset, UTF-8 with invalid sequences replaced. Malformed escapes
/// (`%a`, `%aé`) stay as written.
fn ext_value(v: &str) -> String {
    let mut parts = v.splitn(3, '\'');
    let (charset, encoded) = match (parts.next(), parts.next(), parts.next()) {
        (Some(charset), Some(_), Some(encoded)) => (charset, encoded),
        _ => ("UTF-8", v),
    };
    let bytes = percent_encoding::percent_decode_str(encoded);
    if charset.eq_ignore_ascii_case("ISO-8859-1") {
        bytes.map(char::from).collect()
    } else {
        bytes.decode_utf8_lossy().into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_file_names_are_made_safe() {
        let cases = [
            (
                "attachment; filename=\"../../../etc/passwd\"",
                Some("passwd"),
            ),
            (
                "attachment; filename=\"..\\\\..\\\\boot.ini\"",
                Some("boot.ini"),
            ),
            ("attachment; filename=\".bashrc\"", Some("bashrc")),
            ("attachment; filename=\"a\u{7}b\r\n.pdf\"", Some("ab.pdf")),
            (
                "attachment; filename*=UTF-8''%2E%2E%2Fbok%C3%B6.pdf",
                Some("bokö.pdf"),
            ),
            ("attachment; filename=\"..\"", None),
            ("inline", None),
        ];
        for (h, want) in cases {
            assert_eq!(safe_filename(h).as_deref(), want, "{h}");
        }
    }

    /// Issue 15: a malformed escape before a multi-byte character (`%aé`) made the
    /// hand-written decoder slice inside the character and panic.
    #[test]
    fn issue_15_a_malformed_escape_before_a_multibyte_character_does_not_panic() {
        for (h, want) in [
            ("attachment; filename*=UTF-8''%aé.pdf", "%aé.pdf"),
            ("attachment; filename*=UTF-8''bok%aé", "bok%aé"),
            ("attachment; filename*=UTF-8''%", "%"),
            ("attachment; filename*=ISO-8859-1''bok%F6.pdf", "bokö.pdf"),
            ("attachment; filename*=UTF-8''bok%F6.pdf", "bok\u{fffd}.pdf"),
        ] {
            assert_eq!(safe_filename(h).as_deref(), Some(want), "{h}");
        }
    }

    #[test]
    fn mime_comparison_ignores_parameters_and_case() {
        assert!(same_mime("text/html", "Text/HTML; charset=utf-8"));
        assert!(!same_mime("application/pdf", "text/html"));
    }
}
