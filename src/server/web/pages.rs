//! The pages: askama templates (`templates/`, checked at compile time, HTML-escaped
//! by default) filled from the report views and the rule data, with texts from the
//! catalogue of the visitor's language.

use askama::Template;
use axum::extract::{FromRequest, Multipart, Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use serde::Deserialize;

use super::check::{
    self, FindingView, Format, Input, Intake, Outcome, Refusal, ReportView, RuleRow,
};
use super::i18n::{self, COOKIE, Lang, T};
use super::rules::{self, RuleDoc};
use crate::profile::{RuleId, Severity};
use crate::server::AppState;

/// Largest value of a small form field (the URL, the options).
const MAX_FIELD: u64 = 8 << 10;

pub(super) fn render(template: &impl Template, status: StatusCode) -> Response {
    match template.render() {
        Ok(html) => (status, Html(html)).into_response(),
        Err(e) => {
            tracing::error!(error = %e, "rendering a page failed");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal error; see plikt's log\n",
            )
                .into_response()
        }
    }
}

/// `href` of the language switch from `here`.
pub(super) fn switch_href(t: &T, here: &str) -> String {
    let next: String =
        percent_encoding::utf8_percent_encode(here, percent_encoding::NON_ALPHANUMERIC).to_string();
    format!("/lang/{}?next={next}", t.other().code())
}

#[derive(Template)]
#[template(path = "index.html")]
struct IndexPage {
    t: T,
    nav: &'static str,
    switch: String,
    rules: usize,
}

/// `GET /`.
pub async fn index(headers: HeaderMap) -> Response {
    let t = T {
        lang: i18n::lang(&headers),
    };
    render(
        &IndexPage {
            switch: switch_href(&t, "/"),
            t,
            nav: "home",
            rules: RuleId::ALL.len(),
        },
        StatusCode::OK,
    )
}

#[derive(Template)]
#[template(path = "validate.html")]
struct ValidatePage {
    t: T,
    nav: &'static str,
    switch: String,
    report: Option<Box<ReportView>>,
    error: Option<String>,
    url: String,
    max_size: String,
    limit_secs: u64,
}

impl ValidatePage {
    fn new(t: T, state: &AppState) -> Self {
        Self {
            switch: switch_href(&t, "/validate"),
            t,
            nav: "validate",
            report: None,
            error: None,
            url: String::new(),
            max_size: check::size(state.config.web.max_bytes),
            limit_secs: state.config.web.timeout().as_secs(),
        }
    }
}

/// Text with `backticks` split into plain (`false`) and code (`true`) runs, as finding
/// messages and rule texts quote feed values: the page shows the code runs as `<code>`
/// (each run escaped by the template).
pub fn ticks(text: &str) -> Vec<Run<'_>> {
    if text.matches('`').count() % 2 == 1 {
        return vec![Run { code: false, text }];
    }
    text.split('`')
        .enumerate()
        .filter(|(_, s)| !s.is_empty())
        .map(|(i, text)| Run {
            code: i % 2 == 1,
            text,
        })
        .collect()
}

/// A run of text ([`ticks`]).
#[derive(Debug, Clone, Copy)]
pub struct Run<'a> {
    code: bool,
    text: &'a str,
}

impl Run<'_> {
    /// Quoted between backticks.
    pub fn is_code(&self) -> bool {
        self.code
    }
}

impl FindingView {
    /// The message in runs ([`ticks`]).
    pub fn message_runs(&self) -> Vec<Run<'_>> {
        ticks(&self.message)
    }
    /// The rule's text in runs.
    pub fn hint_runs(&self) -> Vec<Run<'_>> {
        ticks(&self.hint)
    }
    /// The catalogue ID of the severity's name.
    pub fn sev_id(&self) -> &'static str {
        check::severity_id(self.severity)
    }
    /// The severity's CSS class.
    pub fn sev(&self) -> &'static str {
        self.severity.as_str()
    }
}

impl RuleRow {
    /// The rule's text in runs ([`ticks`]).
    pub fn summary_runs(&self) -> Vec<Run<'_>> {
        ticks(&self.summary)
    }
    /// The catalogue ID of the severity's name.
    pub fn sev_id(&self) -> &'static str {
        check::severity_id(self.severity)
    }
    /// The severity's CSS class.
    pub fn sev(&self) -> &'static str {
        self.severity.as_str()
    }
}

/// `GET /validate`.
pub async fn validate_form(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let t = T {
        lang: i18n::lang(&headers),
    };
    render(&ValidatePage::new(t, &state), StatusCode::OK)
}

/// What the page's forms send.
struct Form {
    intake: Intake,
    format: Format,
    url: String,
}

async fn small_text(field: axum::extract::multipart::Field<'_>) -> Result<String, Refusal> {
    let mut spool = check::new_spool()?;
    check::spool_stream(field, MAX_FIELD, &mut spool)
        .await
        .map_err(|e| match e {
            Refusal::TooLarge(_) => Refusal::Bad("error-field", String::new()),
            e => e,
        })?;
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut spool
            .reader()
            .map_err(|e| Refusal::Internal(e.to_string()))?,
        &mut text,
    )
    .map_err(|_| Refusal::Bad("error-field", String::new()))?;
    Ok(text)
}

/// Reads the multipart form: the feed goes to a spool file while it arrives (capped),
/// the other fields are small.
async fn read_form(mut form: Multipart, max_bytes: u64, lang: Lang) -> Result<Form, Refusal> {
    let bad =
        |e: axum::extract::multipart::MultipartError| Refusal::Bad("error-upload", e.body_text());
    let mut url = String::new();
    let mut spooled: Option<Input> = None;
    let mut format = Format::Html;
    let mut require_is_part_of = false;
    while let Some(field) = form.next_field().await.map_err(bad)? {
        let name = field.name().unwrap_or("").to_string();
        match name.as_str() {
            "url" => url = small_text(field).await?.trim().to_string(),
            "format" => {
                let f = small_text(field).await?;
                format = Format::parse(f.trim())
                    .ok_or_else(|| Refusal::Bad("error-format", f.trim().to_string()))?;
            }
            "require_is_part_of" => {
                require_is_part_of = !small_text(field).await?.is_empty();
            }
            "file" | "xml" => {
                let source = match field.file_name() {
                    Some(f) if name == "file" && !f.is_empty() => f.to_string(),
                    _ => "-".to_string(),
                };
                let mut spool = check::new_spool()?;
                check::spool_stream(field, max_bytes, &mut spool).await?;
                let empty = spool
                    .file_mut()
                    .metadata()
                    .map(|m| m.len() == 0)
                    .unwrap_or(true);
                if !empty {
                    if spooled.is_some() {
                        return Err(Refusal::Bad("error-two-inputs", String::new()));
                    }
                    spooled = Some(Input::Spooled {
                        name: source,
                        spool,
                    });
                }
            }
            _ => {
                small_text(field).await?;
            }
        }
    }
    let input = match (spooled, url.is_empty()) {
        (Some(_), false) => return Err(Refusal::Bad("error-two-inputs", String::new())),
        (Some(input), true) => input,
        (None, false) => Input::Url(url.clone()),
        (None, true) => return Err(Refusal::Bad("error-no-input", String::new())),
    };
    Ok(Form {
        intake: Intake {
            input,
            require_is_part_of,
            max_findings: check::MAX_FINDINGS,
            lang,
        },
        format,
        url,
    })
}

/// `POST /validate` (multipart/form-data: `url`, `file` or `xml`; `format`,
/// `require_is_part_of`): the verdict as a page, or the report as a download.
pub async fn validate_submit(State(state): State<AppState>, request: Request) -> Response {
    let t = T {
        lang: i18n::lang(request.headers()),
    };
    let web = state.web.clone();
    let peer = crate::server::guard::peer(&request);
    let headers = request.headers().clone();
    let mut url = String::new();
    let result: Result<(Format, Outcome), Refusal> = async {
        let _admitted = check::admit(&web, &headers, peer)?;
        let form = Multipart::from_request(request, &())
            .await
            .map_err(|_| Refusal::Unsupported)?;
        let limit = check::limit(&web);
        tokio::time::timeout(limit, async {
            let form = read_form(form, web.config.max_bytes, t.lang).await?;
            url.clone_from(&form.url);
            let outcome = check::run(&web, form.intake, form.format).await?;
            Ok((form.format, outcome))
        })
        .await
        .map_err(|_| Refusal::Timeout(limit.as_secs()))?
    }
    .await;
    let mut page = ValidatePage::new(t, &state);
    page.url = url;
    match result {
        Ok((_, Outcome::View(view))) => {
            page.report = Some(view);
            render(&page, StatusCode::OK)
        }
        Ok((format, Outcome::Bytes(bytes))) => check::download(format, bytes),
        Err(refusal) => {
            page.error = Some(refusal.message(t));
            let mut response = render(&page, refusal.status());
            check::with_retry_after(&mut response, &refusal);
            response
        }
    }
}

/// One row of `/rules`.
struct RuleItem {
    id: &'static str,
    clause: &'static str,
    summary: String,
    severities: Vec<SevLine>,
}

impl RuleItem {
    /// The summary in runs ([`ticks`]).
    fn summary_runs(&self) -> Vec<Run<'_>> {
        ticks(&self.summary)
    }
}

/// A severity of a rule and when it is given.
struct SevLine {
    class: &'static str,
    id: &'static str,
    when: String,
}

impl SevLine {
    /// When, in runs ([`ticks`]).
    fn when_runs(&self) -> Vec<Run<'_>> {
        ticks(&self.when)
    }
}

fn severities(rule: RuleId, doc: &'static RuleDoc, lang: Lang) -> Vec<SevLine> {
    // Errors first, as in reports.
    let mut v: Vec<Severity> = doc
        .severities
        .iter()
        .filter_map(|s| Severity::parse(s))
        .collect();
    v.sort();
    v.into_iter()
        .map(|s| SevLine {
            class: s.as_str(),
            id: check::severity_id(s),
            when: rule.when(s, lang),
        })
        .collect()
}

#[derive(Template)]
#[template(path = "rules.html")]
struct RulesPage {
    t: T,
    nav: &'static str,
    switch: String,
    feed: Vec<RuleItem>,
    harvest: Vec<RuleItem>,
}

/// `GET /rules`: every rule of the catalogue.
pub async fn rules(headers: HeaderMap) -> Response {
    let t = T {
        lang: i18n::lang(&headers),
    };
    let (mut feed, mut harvest) = (Vec::new(), Vec::new());
    for rule in RuleId::ALL.iter().copied() {
        let Some(doc) = rules::doc(rule) else {
            continue;
        };
        let item = RuleItem {
            id: rule.as_str(),
            clause: doc.clause.as_str(),
            summary: rule.summary(t.lang),
            severities: severities(rule, doc, t.lang),
        };
        if rule.is_harvest_time() {
            harvest.push(item);
        } else {
            feed.push(item);
        }
    }
    render(
        &RulesPage {
            switch: switch_href(&t, "/rules"),
            t,
            nav: "rules",
            feed,
            harvest,
        },
        StatusCode::OK,
    )
}

/// A finding the incorrect example gives.
struct Reported {
    rule: &'static str,
    sev: &'static str,
    sev_id: &'static str,
    at: String,
    message: String,
}

impl Reported {
    /// The message in runs ([`ticks`]).
    fn message_runs(&self) -> Vec<Run<'_>> {
        ticks(&self.message)
    }
}

#[derive(Template)]
#[template(path = "rule.html")]
struct RulePage {
    t: T,
    nav: &'static str,
    switch: String,
    id: &'static str,
    summary: String,
    doc: &'static RuleDoc,
    harvest: bool,
    severities: Vec<SevLine>,
    place: &'static str,
    reported: Vec<Reported>,
    prev: Option<&'static str>,
    next: Option<&'static str>,
}

impl RulePage {
    /// The summary in runs ([`ticks`]).
    fn summary_runs(&self) -> Vec<Run<'_>> {
        ticks(&self.summary)
    }
}

#[derive(Template)]
#[template(path = "not_found.html")]
struct NotFoundPage {
    t: T,
    nav: &'static str,
    switch: String,
}

/// `GET /rules/{id}`.
pub async fn rule(Path(id): Path<String>, headers: HeaderMap) -> Response {
    let t = T {
        lang: i18n::lang(&headers),
    };
    let found = RuleId::parse(&id).and_then(|r| Some((r, rules::doc(r)?)));
    let Some((rule, doc)) = found else {
        return render(
            &NotFoundPage {
                switch: switch_href(&t, "/rules"),
                t,
                nav: "rules",
            },
            StatusCode::NOT_FOUND,
        );
    };
    let harvest = rule.is_harvest_time();
    let reported = if harvest {
        Vec::new()
    } else {
        rules::findings(doc, &doc.incorrect)
            .into_iter()
            .map(|f| Reported {
                rule: f.rule.as_str(),
                sev: f.severity.as_str(),
                sev_id: check::severity_id(f.severity),
                at: f
                    .pos
                    .map(|p| format!("{}:{}", p.line, p.column))
                    .unwrap_or_default(),
                message: f.message.render(t.lang),
            })
            .collect()
    };
    let i = RuleId::ALL.iter().position(|r| *r == rule).unwrap_or(0);
    render(
        &RulePage {
            switch: switch_href(&t, &format!("/rules/{}", rule.as_str())),
            t,
            nav: "rules",
            id: rule.as_str(),
            summary: rule.summary(t.lang),
            doc,
            harvest,
            severities: severities(rule, doc, t.lang),
            place: doc.place.text_id(),
            reported,
            prev: i.checked_sub(1).map(|j| RuleId::ALL[j].as_str()),
            next: RuleId::ALL.get(i + 1).map(|r| r.as_str()),
        },
        StatusCode::OK,
    )
}

/// Query of the language switch.
#[derive(Debug, Deserialize)]
pub struct Next {
    next: Option<String>,
}

/// `GET /lang/{code}?next=/path`: sets the language cookie and goes back to `next` (a
/// path on this site only).
pub async fn switch_language(Path(code): Path<String>, Query(q): Query<Next>) -> Response {
    let Some(lang) = Lang::parse(&code) else {
        return (StatusCode::NOT_FOUND, "not found\n").into_response();
    };
    let next = q
        .next
        .filter(|n| own_path(n))
        .unwrap_or_else(|| "/".to_string());
    let mut response = (StatusCode::SEE_OTHER, ()).into_response();
    let h = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&next) {
        h.insert(header::LOCATION, v);
    }
    h.insert(
        header::SET_COOKIE,
        HeaderValue::from_str(&format!(
            "{COOKIE}={}; Path=/; Max-Age=31536000; SameSite=Lax; HttpOnly",
            lang.code()
        ))
        .expect("constant cookie"),
    );
    response
}

/// Whether `next` is a path of this site and nothing a browser could read as another
/// host: one `/`, then only visible ASCII other than `\` (browsers drop tabs and
/// newlines and read `\` as `/`, so `/\t/evil.example` or `/\\evil.example` would
/// leave the site).
fn own_path(next: &str) -> bool {
    let rest = next.strip_prefix('/');
    rest.is_some_and(|r| !r.starts_with('/'))
        && next.bytes().all(|b| b.is_ascii_graphic() && b != b'\\')
}

/// `GET /assets/plikt.css`.
pub async fn stylesheet() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        include_str!("assets/plikt.css"),
    )
        .into_response()
}
