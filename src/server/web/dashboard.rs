//! The operators' dashboard (`/dashboard`, issue 16 §6): every publisher with its last
//! and next run, deposits, failures and open findings (from the same source as
//! `plikt status` and `GET /status`), and charts of deposits and bytes per day and of
//! findings over time, drawn on the server as SVG (no script, nothing from another
//! host), each with its numbers in a table for screen readers. Behind `[[operator]]`
//! credentials, like `/status` and `/metrics`.

use askama::Template;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

use super::i18n::{self, Lang, T};
use super::pages::{render, switch_href};
use crate::profile::Severity;
use crate::server::{AppError, AppState, internal, operator};
use crate::store::{Catalog, DayDeposits, DayFindings, Location, PublisherStatus, Timestamp};

/// Days the charts cover, today included.
const DAYS: i64 = 30;

/// One publisher's row.
struct Row {
    id: String,
    name: String,
    last_run: Option<String>,
    outcome: Option<&'static str>,
    next_run: Option<String>,
    deposits: u64,
    versions: u64,
    pending: u64,
    failed: u64,
    errors: usize,
    warnings: usize,
}

/// A chart: its SVG (made here, every text in it escaped) and its numbers.
struct Chart {
    title: String,
    svg: String,
    rows: Vec<(String, String)>,
}

#[derive(Template)]
#[template(path = "dashboard.html")]
struct DashboardPage {
    t: T,
    nav: &'static str,
    switch: String,
    rows: Vec<Row>,
    /// Deposits, bytes and findings per day.
    charts: Vec<Chart>,
    days: u64,
}

/// `GET /dashboard`.
pub async fn dashboard(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    if operator(&state.config, &headers).is_none() {
        return Err(AppError::OperatorsOnly);
    }
    let t = T {
        lang: i18n::lang(&headers),
    };
    let config = state.config.clone();
    let since = Timestamp::from(
        (chrono::Utc::now() - chrono::Duration::days(DAYS - 1))
            .date_naive()
            .and_hms_opt(0, 0, 0)
            .expect("midnight")
            .and_utc(),
    );
    let (status, deposits, findings) = tokio::task::spawn_blocking(move || {
        let status = crate::schedule::status(&config)?;
        let catalog = Catalog::open(&Location::of(&config)?)?;
        Ok::<_, crate::store::StoreError>((
            status,
            catalog.deposits_per_day(since)?,
            catalog.findings_per_day(since)?,
        ))
    })
    .await
    .map_err(internal)?
    .map_err(internal)?;
    let rows = status.into_iter().map(|s| row(&state, &t, s)).collect();
    let days = day_labels(since);
    let page = DashboardPage {
        charts: vec![
            chart(
                &t.get("dashboard-chart-deposits"),
                &series(&days, &deposits, |d: &DayDeposits| {
                    (d.day.as_str(), d.versions)
                }),
                |n| n.to_string(),
            ),
            chart(
                &t.get("dashboard-chart-bytes"),
                &series(&days, &deposits, |d: &DayDeposits| {
                    (d.day.as_str(), d.bytes)
                }),
                human_bytes,
            ),
            chart(
                &t.get("dashboard-chart-findings"),
                &series(&days, &findings, |d: &DayFindings| {
                    (d.day.as_str(), d.errors + d.warnings + d.infos)
                }),
                |n| n.to_string(),
            ),
        ],
        rows,
        switch: switch_href(&t, "/dashboard"),
        t,
        nav: "dashboard",
        days: DAYS.unsigned_abs(),
    };
    Ok(render(&page, StatusCode::OK))
}

fn row(state: &AppState, t: &T, s: PublisherStatus) -> Row {
    let when = |ts: Timestamp| ts.get().format("%Y-%m-%d %H:%M UTC").to_string();
    let count = |sev: Severity| s.findings.iter().filter(|f| f.severity == sev).count();
    Row {
        name: state
            .config
            .publisher(&s.id)
            .map_or_else(String::new, |p| p.name.clone()),
        last_run: s.last_run.as_ref().map(|r| when(r.started_at)),
        outcome: s.last_run.as_ref().map(|r| r.outcome.as_str()),
        next_run: s.next_run.map(when),
        deposits: s.deposits,
        versions: s.versions,
        pending: s.pending,
        failed: s.failed,
        errors: count(Severity::Error),
        warnings: count(Severity::Warning),
        id: s.id,
    }
    .with_lang(t)
}

impl Row {
    /// The outcome in the page's words.
    fn with_lang(mut self, t: &T) -> Self {
        self.outcome = self.outcome.map(|o| match (t.lang, o) {
            (Lang::Sv, "ok") => "klar",
            (Lang::Sv, "not_modified") => "oförändrat flöde",
            (Lang::Sv, "failed") => "misslyckad",
            (Lang::Sv, "interrupted") => "avbruten",
            (Lang::Sv, "running") => "pågår",
            (_, o) => o,
        });
        self
    }
}

/// The days of the charts, `YYYY-MM-DD`, from `since` to today.
fn day_labels(since: Timestamp) -> Vec<String> {
    (0..DAYS)
        .map(|i| {
            (since.get() + chrono::Duration::days(i))
                .format("%Y-%m-%d")
                .to_string()
        })
        .collect()
}

/// A value for every day, 0 where the catalog has none.
fn series<D>(days: &[String], data: &[D], f: impl Fn(&D) -> (&str, u64)) -> Vec<(String, u64)> {
    days.iter()
        .map(|day| {
            let n = data
                .iter()
                .map(&f)
                .find(|(d, _)| *d == day)
                .map_or(0, |(_, n)| n);
            (day.clone(), n)
        })
        .collect()
}

fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1000.0 && u < UNITS.len() - 1 {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// A bar chart of `values` (one bar a day) as SVG: `role="img"` with a title, the
/// largest value on the axis, the first and last day under it.
fn chart(title: &str, values: &[(String, u64)], label: impl Fn(u64) -> String) -> Chart {
    let esc = |s: &str| crate::xml::escape(s).into_owned();
    let (w, h, left, bottom) = (620.0_f64, 180.0_f64, 64.0_f64, 24.0_f64);
    let max = values.iter().map(|(_, n)| *n).max().unwrap_or(0).max(1);
    let slot = (w - left) / values.len().max(1) as f64;
    let mut svg = format!(
        r##"<svg class="chart" viewBox="0 0 {w} {h}" role="img" aria-labelledby="c-{id}" xmlns="http://www.w3.org/2000/svg"><title id="c-{id}">{t}</title>"##,
        id = esc(&title.to_lowercase().replace(' ', "-")),
        t = esc(title)
    );
    let plot = h - bottom - 8.0;
    svg.push_str(&format!(
        r##"<line x1="{left}" y1="8" x2="{left}" y2="{y}" stroke="#4a4a55"/><line x1="{left}" y1="{y}" x2="{w}" y2="{y}" stroke="#4a4a55"/><text x="{x}" y="16" text-anchor="end" font-size="12" fill="#1b1b1f">{m}</text><text x="{x}" y="{y}" text-anchor="end" font-size="12" fill="#1b1b1f">0</text>"##,
        y = h - bottom,
        x = left - 6.0,
        m = esc(&label(max))
    ));
    for (i, (_, n)) in values.iter().enumerate() {
        let bh = plot * (*n as f64) / (max as f64);
        svg.push_str(&format!(
            r##"<rect x="{x:.1}" y="{y:.1}" width="{bw:.1}" height="{bh:.1}" fill="#003d6b"/>"##,
            x = left + i as f64 * slot + 1.0,
            y = h - bottom - bh,
            bw = (slot - 2.0).max(1.0),
        ));
    }
    if let (Some((first, _)), Some((last, _))) = (values.first(), values.last()) {
        svg.push_str(&format!(
            r##"<text x="{left}" y="{h2}" font-size="12" fill="#1b1b1f">{a}</text><text x="{w}" y="{h2}" text-anchor="end" font-size="12" fill="#1b1b1f">{b}</text>"##,
            h2 = h - 6.0,
            a = esc(first),
            b = esc(last)
        ));
    }
    svg.push_str("</svg>");
    Chart {
        title: title.to_owned(),
        svg,
        rows: values.iter().map(|(d, n)| (d.clone(), label(*n))).collect(),
    }
}
