//! HTTP service of `plikt run` (and, with the ResourceSync issue, `plikt serve`):
//! `fn app(state) -> Router`, errors that hide internals, graceful shutdown.
//!
//! For now it serves `GET /status` (the JSON of `plikt status --format json`) and
//! `GET /healthz`.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::config::Config;

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
        .with_state(state)
}

/// An error shown to clients without internals; the cause goes to the log.
#[derive(Debug)]
pub struct AppError(String);

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        tracing::error!(error = %self.0, "request failed");
        (
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal error; see plikt's log\n",
        )
            .into_response()
    }
}

async fn status(State(state): State<AppState>) -> Result<Response, AppError> {
    let config = state.config.clone();
    let publishers = tokio::task::spawn_blocking(move || crate::schedule::status(&config))
        .await
        .map_err(|e| AppError(e.to_string()))?
        .map_err(|e| AppError(e.to_string()))?;
    Ok(axum::Json(serde_json::json!({ "publishers": publishers })).into_response())
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
