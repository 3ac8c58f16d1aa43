//! Change Notification (ResourceSync Change Notification 1.0.1) over WebSub (W3C
//! Recommendation, 2018): one topic per set, plikt's own hub, and deliveries.
//!
//! - **Topics** (`<set>/change/`, advertised in each Capability List with
//!   `capability="change-notification"` and `rel="hub"`): GET answers the topic's latest
//!   notification with `Link: <topic>; rel="self", <hub>; rel="hub"` (WebSub §4).
//! - **Enqueue** ([`enqueue`], after each publish): each topic's changes since its last
//!   notification become notifications of at most `max_changes` changes (payload:
//!   [`crate::resourcesync::write_notification`]), stored with a delivery per
//!   subscriber in the transaction that moves the topic on (the catalog's outbox), so
//!   consecutive notifications cover consecutive intervals across restarts and
//!   crashes: a change is notified once, or twice only when a crash came between a
//!   delivery and its record.
//! - **Hub** ([`hub`]): subscription requests are checked at once (topic, callback,
//!   lease, secret; a restricted topic only for its `[[destination]]`s), answered 202,
//!   and verified by challenge (WebSub §5.3) before they are kept in the catalog.
//! - **Delivery** ([`deliver`]): a loop in `plikt run` and `plikt serve` claims due
//!   deliveries (a lease, so several processes can share them) and POSTs each on a task
//!   of its own, with `X-Hub-Signature: sha256=…` when the subscriber gave a secret;
//!   retries with backoff; each subscriber's notifications in order, so a dead or slow
//!   callback delays only itself. Callbacks follow the harvest's target policy: no
//!   loopback, private or link-local address, also after DNS resolution, and no
//!   redirects, unless `[notification] allow_private = true`.
//! - **External hubs** (`[notification] external_hubs`): pinged with
//!   `hub.mode=publish` for each public topic that has a new notification.

pub mod deliver;
pub mod hub;

use crate::config::Config;
use crate::fetch::{Policy, PrivateRule};
use crate::resourcesync::{self, PublishError};
use crate::store::{Access, Catalog, NewNotification, StoreError};

/// Why notifying failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NotifyError {
    /// The catalog failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A payload could not be written.
    #[error(transparent)]
    Payload(#[from] PublishError),
    /// The HTTP client could not be built.
    #[error("cannot build the notification HTTP client: {0}")]
    Client(String),
}

/// What [`enqueue`] stored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Enqueued {
    /// Notifications stored.
    pub notifications: u64,
    /// Public topics with a new notification (for external hubs).
    pub public_topics: Vec<String>,
}

/// The URL of the Source's hub.
pub fn hub_url(config: &Config) -> String {
    format!("{}{}", config.base_url, resourcesync::layout::HUB)
}

/// The URL of a set's topic.
pub fn topic_url(config: &Config, publisher: &str, access: Access) -> String {
    format!(
        "{}{}",
        config.base_url,
        resourcesync::topic_path(publisher, access)
    )
}

/// The `Link` header of a topic's answers and of its deliveries (Change Notification
/// §4.1): the topic, the hub, and the set's Capability List.
pub fn link_header(config: &Config, publisher: &str, access: Access) -> String {
    format!(
        "<{}>; rel=\"self\", <{}>; rel=\"hub\", <{}{}>; rel=\"resourcesync\"",
        topic_url(config, publisher, access),
        hub_url(config),
        config.base_url,
        resourcesync::capability_list_path(publisher, access)
    )
}

/// Stores a notification of each topic's changes since its last one (several, of at
/// most `max_changes` changes each, for a large burst), with a delivery to each of its
/// subscribers. A topic seen for the first time starts at the journal's end. Also
/// prunes what is no longer needed.
pub fn enqueue(config: &Config) -> Result<Enqueued, NotifyError> {
    let mut catalog = Catalog::open(&crate::store::Location::of(config)?)?;
    // The catalog's time, as the hub's leases and the deliveries' (`store::clock`).
    let now = catalog.read_clock()?.catalog_now;
    let mut out = Enqueued::default();
    // Every topic's position and every publisher's last change, two statements: a topic
    // at its publisher's last change has nothing to notify, and is not read further.
    let cursors = catalog.topic_cursors()?;
    let positions = catalog.set_positions()?;
    for p in &config.publishers {
        let last_seq = positions.get(&p.id).map_or(0, |s| s.last_seq);
        for access in [Access::Gratis, Access::Restricted] {
            let mut cursor = match cursors.get(&(p.id.clone(), access)) {
                Some(c) if c.last_seq >= last_seq => continue,
                Some(c) => c.clone(),
                None => {
                    catalog.start_topic(&p.id, access, now)?;
                    continue;
                }
            };
            let mut stored = 0;
            while let Some(n) = resourcesync::write_notification(
                config,
                &catalog,
                &p.id,
                access,
                cursor.last_seq,
                cursor.until,
                config.notification.max_changes,
            )? {
                let new = NewNotification {
                    publisher: &p.id,
                    access,
                    after_seq: cursor.last_seq,
                    last_seq: n.last_seq,
                    from: n.from,
                    until: n.until,
                    changes: n.changes,
                    body: &n.body,
                };
                if catalog.add_notification(&new, now)?.is_some() {
                    stored += 1;
                    tracing::info!(publisher = %p.id, access = %access, changes = n.changes, from = %n.from, until = %n.until, "change notification stored");
                }
                // Moved on, by this notification or by another process's.
                cursor = catalog
                    .topic_cursor(&p.id, access)?
                    .expect("a topic keeps its position");
            }
            // Past the publisher's changes of the other set, so that the next pass does
            // not read them again.
            if let Some(to) = catalog.topic_end_past_others(&p.id, access, cursor.last_seq)? {
                catalog.move_topic(&p.id, access, cursor.last_seq, to)?;
            }
            out.notifications += stored;
            if stored > 0 && access == Access::Gratis {
                out.public_topics.push(topic_url(config, &p.id, access));
            }
        }
    }
    let keep = now.plus(chrono::Duration::days(-i64::from(
        config.notification.keep_days,
    )));
    catalog.prune_notifications(now, keep)?;
    Ok(out)
}

/// The HTTP client of callbacks and external hubs, under the policy of
/// `[notification]` ([`Policy::notification`]: its `timeout_secs` for connecting and
/// for each whole request, no redirects, no proxy, no content coding, and the target
/// rule of its `allow_private`).
pub fn client(config: &Config) -> Result<reqwest::Client, NotifyError> {
    let mut agent = format!("{} hub", crate::fetch::USER_AGENT);
    if let Some(contact) = &config.contact {
        agent = format!("{agent} +{contact}");
    }
    Policy::notification(&config.notification)
        .reqwest_client(&agent)
        .map_err(|e| NotifyError::Client(e.to_string()))
}

/// Why a callback or hub URL is refused before any request: not http(s), or a
/// loopback, private or link-local address given literally (names are checked when
/// they are resolved).
pub fn check_target(config: &Config, url: &url::Url) -> Result<(), String> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("`{url}` is not an http(s) URL"));
    }
    let ip = match url.host() {
        Some(url::Host::Ipv4(ip)) => Some(std::net::IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => Some(std::net::IpAddr::V6(ip)),
        Some(url::Host::Domain(_)) => None,
        None => return Err(format!("`{url}` has no host")),
    };
    if !config.notification.allow_private && ip.is_some_and(crate::fetch::is_private) {
        return Err(format!(
            "`{url}` is a loopback, private or link-local address, which this hub does not call ({})",
            PrivateRule::Notification
        ));
    }
    Ok(())
}

/// Pings each external hub with `hub.mode=publish` for each of `topics` (WebSub leaves
/// the publish request to hubs: `hub.topic` and `hub.url` are both sent, as hubs
/// differ). Failures are logged, never fatal.
pub async fn ping_external_hubs(config: &Config, client: &reqwest::Client, topics: &[String]) {
    for hub in &config.notification.external_hubs {
        if let Err(e) = check_target(config, hub) {
            tracing::warn!(hub = %hub, error = %e, "external hub not pinged");
            continue;
        }
        for topic in topics {
            let form = [
                ("hub.mode", "publish"),
                ("hub.topic", topic.as_str()),
                ("hub.url", topic.as_str()),
            ];
            match client.post(hub.clone()).form(&form).send().await {
                Ok(r) if r.status().is_success() => {
                    tracing::info!(hub = %hub, topic, "external hub pinged");
                }
                Ok(r) => {
                    tracing::warn!(hub = %hub, topic, status = r.status().as_u16(), "external hub refused the publish ping");
                }
                Err(e) => {
                    tracing::warn!(hub = %hub, topic, error = %crate::fetch::describe(&e), "external hub unreachable");
                }
            }
        }
    }
}
