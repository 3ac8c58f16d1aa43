//! The deposit team's endpoints, behind `[[operator]]` credentials: `GET /metrics`
//! (Prometheus text exposition: this process's counters from [`crate::metrics`], and
//! the catalog's numbers read at the scrape).

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};

use super::{AppError, AppState, operator};

/// `GET /metrics`.
pub(super) async fn metrics(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    if operator(&state.config, &headers).is_none() {
        return Err(AppError::OperatorsOnly);
    }
    let numbers = state.query(|catalog| catalog.gauges()).await?;
    let mut text = crate::metrics::get().encode();
    text.push_str(&exposition(&numbers));
    text.push_str("# EOF\n");
    Ok((
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
        )],
        text,
    )
        .into_response())
}

/// The catalog's numbers as gauges.
fn exposition(g: &crate::store::Gauges) -> String {
    use prometheus_client::metrics::family::Family;
    use prometheus_client::metrics::gauge::Gauge;
    use prometheus_client::registry::{Registry, Unit};

    use crate::metrics::{OutcomeLabel, PublisherLabel};
    let mut r = Registry::default();
    let per_publisher = |name: &str,
                         help: &str,
                         pick: fn(&crate::store::PublisherGauges) -> u64,
                         r: &mut Registry| {
        let f = Family::<PublisherLabel, Gauge>::default();
        for p in &g.publishers {
            f.get_or_create(&PublisherLabel {
                publisher: p.id.clone(),
            })
            .set(i64::try_from(pick(p)).unwrap_or(i64::MAX));
        }
        r.register(name, help, f);
    };
    per_publisher(
        "plikt_deposits",
        "Items with a deposited version",
        |p| p.deposits,
        &mut r,
    );
    per_publisher(
        "plikt_versions",
        "Deposited versions",
        |p| p.versions,
        &mut r,
    );
    per_publisher(
        "plikt_versions_pending",
        "Versions waiting for files",
        |p| p.pending,
        &mut r,
    );
    per_publisher(
        "plikt_versions_failed",
        "Versions given up",
        |p| p.failed,
        &mut r,
    );
    per_publisher(
        "plikt_files",
        "Files of deposited versions",
        |p| p.files,
        &mut r,
    );
    let gauge = |v: u64| {
        let g = Gauge::<i64>::default();
        g.set(i64::try_from(v).unwrap_or(i64::MAX));
        g
    };
    r.register(
        "plikt_store_blobs",
        "Blobs in the store (identical bytes once)",
        gauge(g.blobs),
    );
    r.register_with_unit(
        "plikt_store",
        "Bytes in the blob store",
        Unit::Bytes,
        gauge(g.blob_bytes),
    );
    let deliveries = Family::<OutcomeLabel, Gauge>::default();
    deliveries
        .get_or_create(&OutcomeLabel {
            outcome: "pending".into(),
        })
        .set(i64::try_from(g.deliveries_pending).unwrap_or(i64::MAX));
    r.register(
        "plikt_notification_deliveries_waiting",
        "Notification deliveries waiting",
        deliveries,
    );
    r.register(
        "plikt_subscriptions",
        "WebSub subscriptions whose lease has not ended",
        gauge(g.subscriptions),
    );
    let mut out = String::new();
    let _ = prometheus_client::encoding::text::encode_registry(&mut out, &r);
    out
}
