//! One validation request, from the page or the API: admission (rate limit, requests in
//! progress), the input spooled to a temporary file under the size limit, the feed
//! validated exactly as `plikt validate` does ([`crate::report::options`],
//! [`profile::validate_file`], [`fetch::download`] under [`Policy::for_validation`]),
//! and the answer: the CLI's JSON or JUnit bytes, or the page's view of the report.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Write};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use serde::Deserialize;
use tokio::sync::OwnedSemaphorePermit;

use super::Web;
use super::i18n::{self, Lang, T};
use crate::fetch::{self, FetchError, Policy, PrivateRule, Spool};
use crate::profile::{self, Finding, Report, RuleId, Severity};
use crate::report::{Json, Junit, Printer, Snippets, Source};
use crate::server::AppState;

/// Findings kept per rule and severity on the page and by default in the API: the
/// CLI's default (`--max-findings`).
pub const MAX_FINDINGS: usize = 1000;
/// Findings shown on one page; the downloads have them all.
pub const MAX_SHOWN: usize = 2000;
/// Item groups unfolded at first.
const OPEN_GROUPS: usize = 12;
/// Largest report offered as a download link on the page (base64 in a `data:` URL).
const MAX_LINKED: usize = 4 << 20;
/// Largest JSON request body (`{"url": …}`).
const MAX_JSON: u64 = 64 << 10;

/// What the client gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The page.
    Html,
    /// `plikt validate --format json`.
    Json,
    /// `plikt validate --format junit`.
    Junit,
}

impl Format {
    /// Parses `html`, `json`, `junit`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "html" => Some(Self::Html),
            "json" => Some(Self::Json),
            "junit" => Some(Self::Junit),
            _ => None,
        }
    }
}

/// The feed to validate.
#[derive(Debug)]
pub enum Input {
    /// A URL to fetch, as the visitor wrote it.
    Url(String),
    /// Bytes already received: an upload (named by its file name) or pasted XML (`-`).
    Spooled {
        /// The report's `source`.
        name: String,
        /// The bytes (deleted when dropped).
        spool: Spool,
    },
}

/// A validation request.
#[derive(Debug)]
pub struct Intake {
    /// The feed.
    pub input: Input,
    /// R112's `dcterms:isPartOf` required (`--require-is-part-of`).
    pub require_is_part_of: bool,
    /// `--max-findings` (the page: the CLI's default).
    pub max_findings: usize,
    /// The language of the findings' messages (`--lang`).
    pub lang: Lang,
}

/// Why a request gets no report. Each says what to do, in the visitor's language;
/// none shows internals.
#[derive(Debug)]
pub enum Refusal {
    /// 429: too many requests from this client; retry after so many seconds.
    RateLimited(u64),
    /// 503: too many validations in progress.
    Busy,
    /// 413: larger than `[web] max_bytes`.
    TooLarge(u64),
    /// 503: the validation took longer than `[web] timeout_secs`.
    Timeout(u64),
    /// 422: the URL could not be fetched (the reason, naming the URL).
    Fetch(String),
    /// 400: the request is wrong (text ID, detail).
    Bad(&'static str, String),
    /// 415: neither a feed nor `{"url": …}`.
    Unsupported,
    /// 500: the cause goes to the log.
    Internal(String),
}

impl Refusal {
    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        match self {
            Refusal::RateLimited(_) => StatusCode::TOO_MANY_REQUESTS,
            Refusal::Busy | Refusal::Timeout(_) => StatusCode::SERVICE_UNAVAILABLE,
            Refusal::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Refusal::Fetch(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Refusal::Bad(..) => StatusCode::BAD_REQUEST,
            Refusal::Unsupported => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Refusal::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// `Retry-After`, in seconds.
    pub fn retry_after(&self) -> Option<u64> {
        match self {
            Refusal::RateLimited(s) => Some((*s).max(1)),
            Refusal::Busy | Refusal::Timeout(_) => Some(10),
            _ => None,
        }
    }

    /// What to tell the visitor.
    pub fn message(&self, t: T) -> String {
        match self {
            Refusal::RateLimited(s) => t.n("error-rate-limited", (*s).max(1)),
            Refusal::Busy => t.get("error-busy"),
            Refusal::TooLarge(limit) => t.arg("error-too-large", "size", &size(*limit)),
            Refusal::Timeout(limit) => t.n("error-timeout", *limit),
            Refusal::Fetch(reason) => format!("{} {reason}", t.get("error-fetch")),
            Refusal::Bad(id, detail) if detail.is_empty() => t.get(id),
            Refusal::Bad(id, detail) => format!("{} {detail}", t.get(id)),
            Refusal::Unsupported => t.get("error-unsupported"),
            Refusal::Internal(cause) => {
                tracing::error!(error = %cause, "validation request failed");
                t.get("error-internal")
            }
        }
    }

    fn from_fetch(e: FetchError) -> Self {
        match e {
            FetchError::TooLarge { limit, .. } => Refusal::TooLarge(limit),
            FetchError::Spool(e) => Refusal::Internal(format!("spool: {e}")),
            FetchError::Setup { reason } => Refusal::Internal(reason),
            other => Refusal::Fetch(other.to_string()),
        }
    }
}

/// `67108864` → `64 MiB`.
pub fn size(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes.is_multiple_of(1 << 10) {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} bytes")
    }
}

/// A request let in: it holds one of the slots of requests in progress.
#[derive(Debug)]
pub struct Admitted {
    _slot: OwnedSemaphorePermit,
}

/// Lets a request in, or refuses it: the client's rate first (429), then a free slot of
/// requests in progress (503 at once: a queue would only hold connections open).
pub fn admit(
    web: &Web,
    headers: &HeaderMap,
    peer: Option<std::net::SocketAddr>,
) -> Result<Admitted, Refusal> {
    let client = crate::server::guard::client(headers, peer, &web.config.trusted_proxies);
    web.admit(client).map_err(Refusal::RateLimited)?;
    let slot = web
        .requests
        .clone()
        .try_acquire_owned()
        .map_err(|_| Refusal::Busy)?;
    Ok(Admitted { _slot: slot })
}

/// Streams `body` into a new spool file, refusing it past `max` bytes.
pub async fn spool_stream<S, E>(mut body: S, max: u64, spool: &mut Spool) -> Result<(), Refusal>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    let mut received = 0u64;
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| Refusal::Bad("error-upload", e.to_string()))?;
        received += chunk.len() as u64;
        if received > max {
            return Err(Refusal::TooLarge(max));
        }
        spool
            .file_mut()
            .write_all(&chunk)
            .map_err(|e| Refusal::Internal(format!("spool: {e}")))?;
    }
    Ok(())
}

/// A new spool file.
pub fn new_spool() -> Result<Spool, Refusal> {
    Spool::new().map_err(|e| Refusal::Internal(format!("spool: {e}")))
}

/// What a validation gives.
#[derive(Debug)]
pub enum Outcome {
    /// The JSON or JUnit report, byte for byte as the CLI writes it.
    Bytes(Vec<u8>),
    /// The page's view.
    View(Box<ReportView>),
}

/// Validates `intake` for `format`: fetches a URL under the web's HTTP policy, waits
/// for a validation slot, and validates on a blocking thread. The caller puts a time
/// limit around it; a validation that outlives it keeps its slot until it ends, so
/// the bound on validations at once holds.
pub async fn run(web: &Web, intake: Intake, format: Format) -> Result<Outcome, Refusal> {
    let (name, spool) = match intake.input {
        Input::Spooled { name, spool } => (name, spool),
        Input::Url(raw) => {
            let url = parse_url(&raw)?;
            let policy = Policy {
                total_timeout: web.config.timeout(),
                ..Policy::for_validation(
                    web.config.max_bytes,
                    web.config.allow_private,
                    PrivateRule::Web,
                )
            };
            let spool = fetch::download(&url, &policy)
                .await
                .map_err(Refusal::from_fetch)?;
            (raw, spool)
        }
    };
    let permit = web
        .validations
        .clone()
        .acquire_owned()
        .await
        .map_err(|e| Refusal::Internal(e.to_string()))?;
    let max_bytes = web.config.max_bytes;
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        validate(
            &spool,
            name,
            format,
            max_bytes,
            intake.require_is_part_of,
            intake.max_findings,
            intake.lang,
        )
        // The spool file is deleted here, when the validation ends.
    })
    .await
    .map_err(|e| Refusal::Internal(format!("validation task: {e}")))?
    .map_err(|e| Refusal::Internal(format!("validation: {e}")))
}

fn parse_url(raw: &str) -> Result<url::Url, Refusal> {
    let url = url::Url::parse(raw.trim()).map_err(|e| Refusal::Bad("error-url", e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Refusal::Bad("error-url-scheme", String::new()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Refusal::Bad("error-url-credentials", String::new()));
    }
    Ok(url)
}

fn print(printer: &dyn Printer, report: &Report, name: &str) -> io::Result<Vec<u8>> {
    let source = Source {
        name: name.to_string(),
        copy: None,
    };
    let mut out = Vec::new();
    printer.print(report, &source, &mut out)?;
    Ok(out)
}

/// The blocking part: validation as the CLI does it, and what `format` needs of it.
fn validate(
    spool: &Spool,
    name: String,
    format: Format,
    max_bytes: u64,
    require_is_part_of: bool,
    max_findings: usize,
    lang: Lang,
) -> io::Result<Outcome> {
    let options =
        |junit| crate::report::options(max_bytes, require_is_part_of, max_findings, junit);
    let run = |junit| profile::validate_file(&spool.reader()?, &options(junit));
    let (json_printer, junit_printer) = (Json { lang }, Junit { lang });
    match format {
        Format::Json => Ok(Outcome::Bytes(print(&json_printer, &run(false)?, &name)?)),
        Format::Junit => Ok(Outcome::Bytes(print(&junit_printer, &run(true)?, &name)?)),
        Format::Html => {
            let report = run(false)?;
            let json = print(&json_printer, &report, &name)?;
            // JUnit keeps every finding: the same report unless some were left out.
            let junit = if report.omitted.is_empty() {
                print(&junit_printer, &report, &name)?
            } else {
                print(&junit_printer, &run(true)?, &name)?
            };
            Ok(Outcome::View(Box::new(view(
                spool, name, &report, &json, &junit, lang,
            )?)))
        }
    }
}

/// The report as the page shows it: summary first, then findings grouped by item.
#[derive(Debug)]
pub struct ReportView {
    /// The report's `source`.
    pub source: String,
    /// No errors.
    pub valid: bool,
    /// Counts (all findings, also those not kept).
    pub errors: u64,
    /// Warnings.
    pub warnings: u64,
    /// Infos.
    pub infos: u64,
    /// Items in the feed.
    pub items: u32,
    /// Findings per rule and severity, errors first.
    pub rules: Vec<RuleRow>,
    /// Findings by item, the feed and channel first.
    pub groups: Vec<Group>,
    /// Findings kept but not shown on the page.
    pub hidden: u64,
    /// Findings counted but not kept (more than [`MAX_FINDINGS`] of one rule).
    pub omitted: u64,
    /// The JSON report as a `data:` URL, unless too large.
    pub json: Option<String>,
    /// The JUnit report as a `data:` URL, unless too large.
    pub junit: Option<String>,
}

/// One row of the summary by rule.
#[derive(Debug)]
pub struct RuleRow {
    /// Rule ID.
    pub rule: &'static str,
    /// Severity.
    pub severity: Severity,
    /// Findings.
    pub count: u64,
    /// What the rule requires.
    pub summary: String,
}

/// The findings of one item (or of the feed and channel).
#[derive(Debug)]
pub struct Group {
    /// Index of the item; `None` for the feed and channel.
    pub item: Option<u32>,
    /// The item's title, if it has one.
    pub title: Option<String>,
    /// The item's guid, if it has one.
    pub guid: Option<String>,
    /// Counts of the findings shown.
    pub errors: u64,
    /// Warnings shown.
    pub warnings: u64,
    /// Infos shown.
    pub infos: u64,
    /// Unfolded at first.
    pub open: bool,
    /// The findings.
    pub findings: Vec<FindingView>,
}

/// One finding on the page.
#[derive(Debug)]
pub struct FindingView {
    /// Rule ID.
    pub rule: &'static str,
    /// Severity.
    pub severity: Severity,
    /// Line, if known.
    pub line: Option<u32>,
    /// Column, if known.
    pub column: Option<u32>,
    /// What is wrong and what to write instead.
    pub message: String,
    /// What the rule requires (the CLI's help line).
    pub hint: String,
    /// The source line with the spot marked.
    pub source: Option<SourceLine>,
}

/// A stretch of the source line, split at the spot.
#[derive(Debug)]
pub struct SourceLine {
    /// Line number.
    pub line: u32,
    /// Text before the spot (with `…` when cut).
    pub before: String,
    /// The character at the spot.
    pub at: String,
    /// Text after it (with `…` when cut).
    pub after: String,
}

/// The catalogue ID of a severity's name.
pub fn severity_id(s: Severity) -> &'static str {
    match s {
        Severity::Error => "severity-error",
        Severity::Warning => "severity-warning",
        Severity::Info => "severity-info",
    }
}

fn data_url(mime: &str, bytes: &[u8]) -> Option<String> {
    use base64::Engine as _;
    (bytes.len() <= MAX_LINKED).then(|| {
        format!(
            "data:{mime};base64,{}",
            base64::engine::general_purpose::STANDARD.encode(bytes)
        )
    })
}

fn view(
    spool: &Spool,
    source: String,
    report: &Report,
    json: &[u8],
    junit: &[u8],
    lang: Lang,
) -> io::Result<ReportView> {
    let shown = &report.findings[..report.findings.len().min(MAX_SHOWN)];
    let snippets = Snippets::read(
        spool.reader()?,
        shown
            .iter()
            .filter_map(|f| f.pos)
            .map(|p| (p.line, p.column)),
    )
    .unwrap_or_default();
    let wanted: BTreeSet<u32> = shown.iter().filter_map(|f| f.item).collect();
    let titles = titles(spool, &wanted);

    let mut counts: BTreeMap<(Severity, RuleId), u64> = BTreeMap::new();
    for f in &report.findings {
        *counts.entry((f.severity, f.rule)).or_default() += 1;
    }
    for ((rule, severity), n) in &report.omitted {
        *counts.entry((*severity, *rule)).or_default() += n;
    }
    let rules = counts
        .into_iter()
        .map(|((severity, rule), count)| RuleRow {
            rule: rule.as_str(),
            severity,
            count,
            summary: rule.summary(lang),
        })
        .collect();

    let mut groups: BTreeMap<Option<u32>, Group> = BTreeMap::new();
    for f in shown {
        let g = groups.entry(f.item).or_insert_with(|| Group {
            item: f.item,
            title: f.item.and_then(|i| titles.get(&i).cloned()),
            guid: None,
            errors: 0,
            warnings: 0,
            infos: 0,
            open: false,
            findings: Vec::new(),
        });
        if g.guid.is_none() {
            g.guid.clone_from(&f.guid);
        }
        match f.severity {
            Severity::Error => g.errors += 1,
            Severity::Warning => g.warnings += 1,
            Severity::Info => g.infos += 1,
        }
        g.findings.push(finding(f, &snippets, lang));
    }
    let mut groups: Vec<Group> = groups.into_values().collect();
    for g in groups.iter_mut().take(OPEN_GROUPS) {
        g.open = true;
    }
    Ok(ReportView {
        source,
        valid: report.valid(),
        errors: report.errors,
        warnings: report.warnings,
        infos: report.infos,
        items: report.items,
        rules,
        groups,
        hidden: (report.findings.len() - shown.len()) as u64,
        omitted: report.omitted.values().sum(),
        json: data_url("application/json", json),
        junit: data_url("application/xml", junit),
    })
}

fn finding(f: &Finding, snippets: &Snippets, lang: Lang) -> FindingView {
    let source = f.pos.and_then(|p| {
        let s = snippets.line(p.line)?;
        let chars: Vec<char> = s.text.chars().collect();
        let at = (p.column.saturating_sub(s.first_column) as usize).min(chars.len());
        let mut before: String = chars[..at].iter().collect();
        if s.cut_before {
            before.insert(0, '…');
        }
        let mark: String = chars.get(at).map_or(" ".to_string(), |c| c.to_string());
        let mut after: String = chars.get(at + 1..).unwrap_or(&[]).iter().collect();
        if s.cut_after {
            after.push('…');
        }
        Some(SourceLine {
            line: p.line,
            before,
            at: mark,
            after,
        })
    });
    FindingView {
        rule: f.rule.as_str(),
        severity: f.severity,
        line: f.pos.map(|p| p.line),
        column: f.pos.map(|p| p.column),
        message: f.message.render(lang),
        hint: f.rule.summary(lang),
        source,
    }
}

/// The titles of the `wanted` items, read back from the feed (as the source lines are:
/// a reading pass, not a second validation); stops after the last one wanted or at the
/// first error.
fn titles(spool: &Spool, wanted: &BTreeSet<u32>) -> BTreeMap<u32, String> {
    let mut out = BTreeMap::new();
    let Some(&last) = wanted.last() else {
        return out;
    };
    let Ok(file) = spool.reader() else {
        return out;
    };
    let xml = crate::xml::XmlReader::new(io::BufReader::new(file), Default::default());
    let mut feed = crate::feed::FeedReader::new(xml);
    while let Ok(Some(event)) = feed.read_event() {
        if let crate::feed::FeedEvent::Item(item) = event {
            if wanted.contains(&item.index)
                && let Some(t) = item.titles.first()
            {
                let t = t.raw.trim();
                if !t.is_empty() {
                    out.insert(item.index, t.chars().take(300).collect());
                }
            }
            if item.index >= last {
                break;
            }
        }
    }
    out
}

/// Query of `POST /api/validate`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiQuery {
    /// `json` (default) or `junit`.
    format: Option<String>,
    /// `--max-findings` (default 1000; 0 keeps all).
    max_findings: Option<usize>,
    /// `--require-is-part-of`.
    require_is_part_of: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UrlBody {
    url: String,
}

/// `POST /api/validate`: the feed as the body (any type but JSON), or `{"url": "…"}`
/// with `Content-Type: application/json`. Answers the CLI's JSON document (200, also
/// for a feed that is not valid: the verdict is `valid`), or `?format=junit` its
/// JUnit XML; refusals are `{"error": "…"}` with their status.
pub async fn api(
    State(state): State<AppState>,
    query: Result<Query<ApiQuery>, axum::extract::rejection::QueryRejection>,
    request: Request,
) -> Response {
    let peer = crate::server::guard::peer(&request);
    let (parts, body) = request.into_parts();
    let lang = i18n::lang(&parts.headers);
    let t = T { lang };
    let web = state.web.clone();
    let answer = async {
        let Query(q) = query.map_err(|e| Refusal::Bad("error-query", e.body_text()))?;
        let format = match q.format.as_deref() {
            None => Format::Json,
            Some(f) => match Format::parse(f) {
                Some(Format::Html) | None => {
                    return Err(Refusal::Bad("error-format", f.to_string()));
                }
                Some(f) => f,
            },
        };
        let _admitted = admit(&web, &parts.headers, peer)?;
        let limit = web.config.timeout();
        let work = async {
            let json = parts
                .headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| {
                    let v = v.trim().to_ascii_lowercase();
                    v.starts_with("application/json") || v.contains("+json")
                });
            let input = if json {
                let mut spool = new_spool()?;
                spool_stream(body.into_data_stream(), MAX_JSON, &mut spool).await?;
                let mut text = String::new();
                io::Read::read_to_string(
                    &mut spool
                        .reader()
                        .map_err(|e| Refusal::Internal(e.to_string()))?,
                    &mut text,
                )
                .map_err(|_| Refusal::Bad("error-json", String::new()))?;
                let body: UrlBody = serde_json::from_str(&text)
                    .map_err(|e| Refusal::Bad("error-json", e.to_string()))?;
                Input::Url(body.url)
            } else {
                let mut spool = new_spool()?;
                spool_stream(body.into_data_stream(), web.config.max_bytes, &mut spool).await?;
                Input::Spooled {
                    name: "-".to_string(),
                    spool,
                }
            };
            let intake = Intake {
                input,
                require_is_part_of: q.require_is_part_of.unwrap_or(false),
                max_findings: q.max_findings.unwrap_or(MAX_FINDINGS),
                // The JSON of machines: English unless the client asks for Swedish.
                lang: i18n::lang_or(&parts.headers, Lang::En),
            };
            run(&web, intake, format).await
        };
        let outcome = tokio::time::timeout(limit, work)
            .await
            .map_err(|_| Refusal::Timeout(limit.as_secs()))??;
        Ok((format, outcome))
    };
    match answer.await {
        Ok((format, Outcome::Bytes(bytes))) => {
            let mime = if format == Format::Junit {
                "application/xml; charset=utf-8"
            } else {
                "application/json"
            };
            ([(header::CONTENT_TYPE, mime)], bytes).into_response()
        }
        Ok((_, Outcome::View(_))) => {
            refusal_json(&Refusal::Internal("a view for the API".into()), t)
        }
        Err(refusal) => refusal_json(&refusal, t),
    }
}

fn refusal_json(refusal: &Refusal, t: T) -> Response {
    let body = serde_json::json!({
        "error": refusal.message(t),
        "status": refusal.status().as_u16(),
    });
    let mut response = (refusal.status(), axum::Json(body)).into_response();
    with_retry_after(&mut response, refusal);
    response
}

/// Adds `Retry-After` when the refusal has one.
pub fn with_retry_after(response: &mut Response, refusal: &Refusal) {
    if let Some(secs) = refusal.retry_after() {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
}

/// A download of the report: `plikt-report.json` or `plikt-report.xml`.
pub fn download(format: Format, bytes: Vec<u8>) -> Response {
    let (mime, name) = if format == Format::Junit {
        ("application/xml; charset=utf-8", "plikt-report.xml")
    } else {
        ("application/json", "plikt-report.json")
    };
    (
        [
            (header::CONTENT_TYPE, mime.to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{name}\""),
            ),
        ],
        Body::from(bytes),
    )
        .into_response()
}

/// The time limit as a duration (for the page's handler).
pub fn limit(web: &Web) -> Duration {
    web.config.timeout()
}
