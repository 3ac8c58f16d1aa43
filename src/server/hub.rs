//! The hub and the topics over HTTP (Change Notification 1.0.1 §4, WebSub §4–§5); what
//! they do is [`crate::notify`].

use axum::Form;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::{AppError, AppState, destination, internal};
use crate::notify::{self, hub::SubscriptionRequest};
use crate::store::Access;

/// `GET /hub`: what the hub is for (it answers POSTs).
pub(super) async fn about() -> Response {
    (
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        "plikt's WebSub hub for ResourceSync Change Notification 1.0.1.\n\
         Subscribe: POST application/x-www-form-urlencoded with hub.mode=subscribe (or \
         unsubscribe), hub.topic (the `change-notification` entry of a Capability List), \
         hub.callback, and optionally hub.lease_seconds and hub.secret.\n",
    )
        .into_response()
}

/// `POST /hub`: a subscription request, checked at once (400 says what is wrong; a
/// restricted topic needs its Destination's credentials: 401), answered 202, then
/// verified at the callback.
pub(super) async fn subscription(
    State(state): State<AppState>,
    headers: HeaderMap,
    Form(form): Form<Vec<(String, String)>>,
) -> Result<Response, AppError> {
    let request = match SubscriptionRequest::parse(&state.config, &form) {
        Ok(r) => r,
        Err(e) => {
            return Ok((
                StatusCode::BAD_REQUEST,
                [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
                format!("{e}\n"),
            )
                .into_response());
        }
    };
    let dest = if request.access == Access::Gratis {
        None
    } else {
        match destination(&state.config, &headers, Some(&request.publisher)) {
            Some(d) => Some(d.id.clone()),
            None => return Err(AppError::Unauthorized),
        }
    };
    tokio::spawn(notify::hub::complete(
        state.config.clone(),
        state.hub_client.clone(),
        request,
        dest,
    ));
    Ok((
        StatusCode::ACCEPTED,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        "accepted: verifying intent at the callback (WebSub §5.3)\n",
    )
        .into_response())
}

/// `GET`/`HEAD` of a set's topic (the caller checked access): the latest notification,
/// with the topic and hub in `Link` (WebSub §4).
pub(super) async fn topic(
    state: &AppState,
    publisher: &str,
    access: Access,
    method: &Method,
) -> Result<Response, AppError> {
    let link = HeaderValue::from_str(&notify::link_header(&state.config, publisher, access))
        .map_err(internal)?;
    let p = publisher.to_string();
    let latest = state
        .query(move |catalog| catalog.latest_notification(&p, access))
        .await?;
    let body = latest.unwrap_or_else(|| {
        crate::resourcesync::empty_notification(&state.config, publisher, access)
    });
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/xml; charset=utf-8"),
    );
    headers.insert(header::LINK, link);
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
    if method == Method::HEAD {
        return Ok((headers, ()).into_response());
    }
    Ok((headers, body).into_response())
}
