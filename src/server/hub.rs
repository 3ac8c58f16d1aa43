//! The hub and the topics over HTTP (Change Notification 1.0.1 §4, WebSub §4–§5); what
//! they do is [`crate::notify`].

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Extension;
use axum::Form;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::guard::PerClient;
use super::{AppError, AppState, destination, internal};
use crate::config::NotificationConfig;
use crate::notify::{self, hub::SubscriptionRequest};
use crate::store::Access;

/// The hub's limits (`[notification]`): each subscription request makes plikt send a
/// GET to a URL the requester chose, so neither their rate nor the verifications in
/// flight may be unbounded.
#[derive(Debug)]
pub(super) struct Limits {
    /// Subscription requests per client address.
    rate: PerClient,
    /// Verifications in flight in all.
    in_flight: Arc<Semaphore>,
    /// Verifications in flight per callback host.
    per_host: Arc<Mutex<HashMap<String, usize>>>,
    max_per_host: usize,
}

/// A verification's place in the limits, given back when it is dropped.
#[derive(Debug)]
pub(super) struct Slot {
    _permit: OwnedSemaphorePermit,
    host: String,
    per_host: Arc<Mutex<HashMap<String, usize>>>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut m = self.per_host.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = m.get_mut(&self.host) {
            *n -= 1;
            if *n == 0 {
                m.remove(&self.host);
            }
        }
    }
}

impl Limits {
    pub(super) fn new(n: &NotificationConfig) -> Self {
        Self {
            rate: PerClient::new(n.subscriptions_per_minute, n.subscription_burst),
            in_flight: Arc::new(Semaphore::new(n.max_verifications.max(1))),
            per_host: Arc::default(),
            max_per_host: n.max_verifications_per_host.max(1),
        }
    }

    /// A place for one more verification to `host`, if the limits leave one.
    fn slot(&self, host: &str) -> Option<Slot> {
        let permit = self.in_flight.clone().try_acquire_owned().ok()?;
        let mut m = self.per_host.lock().unwrap_or_else(|e| e.into_inner());
        let n = m.entry(host.to_string()).or_insert(0);
        if *n >= self.max_per_host {
            return None;
        }
        *n += 1;
        Some(Slot {
            _permit: permit,
            host: host.to_string(),
            per_host: self.per_host.clone(),
        })
    }
}

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
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    Form(form): Form<Vec<(String, String)>>,
) -> Result<Response, AppError> {
    let client = super::guard::client(
        &headers,
        peer.map(|Extension(ConnectInfo(p))| p),
        &state.config.web.trusted_proxies,
    );
    if let Err(wait) = state.hub_limits.rate.admit(client) {
        return Ok(super::guard::too_many(
            wait,
            "too many subscription requests from your address",
        ));
    }
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
    let host = request
        .callback
        .host_str()
        .unwrap_or("")
        .to_ascii_lowercase();
    let Some(slot) = state.hub_limits.slot(&host) else {
        let mut r = (
            StatusCode::SERVICE_UNAVAILABLE,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            "the hub is verifying as many subscriptions as it takes at once (or to this callback's host); try again shortly\n",
        )
            .into_response();
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("10"));
        return Ok(r);
    };
    let (config, client) = (state.config.clone(), state.hub_client.clone());
    tokio::spawn(async move {
        notify::hub::complete(config, client, request, dest).await;
        drop(slot);
    });
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
