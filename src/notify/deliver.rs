//! Deliveries (WebSub §7, Change Notification 1.0.1 §4.3): a loop that claims due
//! deliveries from the catalog's outbox and POSTs each on a task of its own, at most
//! `max_concurrent_deliveries` at once. Each subscriber gets its notifications one at a
//! time, oldest first (the claim takes only a subscriber's oldest pending one), so a
//! dead or slow callback holds up only itself; failures are retried with exponential
//! backoff and jitter, and given up after `max_attempts`. A claim is a lease: if this
//! process dies, another (or this one, restarted) takes the delivery over when it ends.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hmac::{Hmac, Mac};
use sha2::Sha256;
use tokio::sync::{Notify, Semaphore, watch};

use super::{NotifyError, check_target, link_header};
use crate::config::Config;
use crate::store::Access;
use crate::store::{Catalog, ClaimedDelivery, Connection, DeliveryResult};

/// How often the loop asks whether another process committed to the catalog (a
/// `plikt publish` beside `plikt serve`): `PRAGMA data_version`, which takes no lock.
const WATCH: Duration = Duration::from_millis(50);

/// How often the outbox is looked at anyway (retries falling due).
const POLL: Duration = Duration::from_millis(500);

/// The `X-Hub-Signature` value of a delivery (WebSub §8): `sha256=` and the lowercase
/// hex HMAC-SHA256 of the body under the subscriber's secret.
pub fn signature(secret: &str, body: &[u8]) -> String {
    let mut mac =
        Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes keys of any length");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// Delivers until `shutdown` turns true; `wake` makes it look at the outbox at once
/// (after a publish in this process).
pub async fn run(
    config: Arc<Config>,
    mut shutdown: watch::Receiver<bool>,
    wake: Arc<Notify>,
) -> Result<(), NotifyError> {
    let location = crate::store::Location::of(&config)?;
    let mut catalog = Connection::new(location).prepared(Catalog::for_deliveries);
    // The catalog as it is at start: a configuration it refuses stops the deliveries
    // now; one away (PostgreSQL starting or restarting) is waited for, as later.
    let mut patience = crate::store::Patience::default();
    let catalog = loop {
        let (c, checked) = tokio::task::spawn_blocking(move || {
            let checked = catalog.with(|c| c.data_version());
            (catalog, checked)
        })
        .await
        .map_err(|e| NotifyError::Client(e.to_string()))?;
        catalog = c;
        match checked {
            Ok(_) => break catalog,
            Err(e) if e.is_disconnect() => {
                tracing::warn!(error = %e, retry_in_secs = patience.next_secs(), "deliveries: the catalog does not answer; waiting for it");
            }
            Err(e) => return Err(e.into()),
        }
        if !patience.wait(&mut shutdown).await {
            return Ok(());
        }
    };
    let max = config.notification.max_concurrent_deliveries;
    let mut l = Loop {
        client: super::client(&config)?,
        catalog: Arc::new(Mutex::new(catalog)),
        slots: Arc::new(Semaphore::new(max)),
        retrying: Arc::new(AtomicUsize::new(0)),
        // A claim outlives the longest attempt with room to record it.
        hold: chrono::Duration::from_std(config.notification.timeout() * 3)
            .unwrap_or_else(|_| chrono::Duration::seconds(60))
            + chrono::Duration::seconds(30),
        in_flight: tokio::task::JoinSet::new(),
        seen_version: None,
        last_claim: tokio::time::Instant::now(),
        failing: false,
        wake,
        config,
    };
    while !*shutdown.borrow() {
        while l.in_flight.try_join_next().is_some() {}
        l.claim().await;
        l.wait(&mut shutdown).await;
    }
    // Deliveries in flight end (each within the time limit) and are recorded, so a
    // restart sends none of them twice.
    let drain = async { while l.in_flight.join_next().await.is_some() {} };
    let limit = l.config.notification.timeout() + Duration::from_secs(5);
    if tokio::time::timeout(limit, drain).await.is_err() {
        tracing::warn!(
            "deliveries still in flight at shutdown: their claims lapse and they are sent again"
        );
    }
    Ok(())
}

/// The delivery loop's state.
#[derive(Debug)]
struct Loop {
    config: Arc<Config>,
    client: reqwest::Client,
    catalog: Arc<Mutex<Connection>>,
    /// One permit per delivery in flight (`max_concurrent_deliveries`).
    slots: Arc<Semaphore>,
    /// Retries in flight: at most half the slots, so callbacks that keep failing (dead,
    /// or slow past the time limit) leave room for the first attempts of the others.
    retrying: Arc<AtomicUsize>,
    /// How long a claim lasts.
    hold: chrono::Duration,
    in_flight: tokio::task::JoinSet<()>,
    /// The catalog's `data_version` when last looked at.
    seen_version: Option<i64>,
    last_claim: tokio::time::Instant,
    /// The last claim failed (the catalog away): the next failures are not logged
    /// again, twice a second, until one succeeds.
    failing: bool,
    wake: Arc<Notify>,
}

impl Loop {
    /// Claims what is due, as far as slots are free, and starts each delivery.
    async fn claim(&mut self) {
        let free = self.slots.available_permits();
        if free == 0 {
            return;
        }
        let max = self.config.notification.max_concurrent_deliveries;
        let retries = (max / 2)
            .max(1)
            .saturating_sub(self.retrying.load(Ordering::SeqCst));
        let hold = self.hold;
        let c = self.catalog.clone();
        self.last_claim = tokio::time::Instant::now();
        let claimed = tokio::task::spawn_blocking(move || {
            c.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .with(|c| {
                    // Claims are times of the catalog's clock, as run leases are
                    // (`store::clock`): a loop on a machine whose clock runs ahead
                    // would take deliveries other loops are making.
                    let now = c.read_clock()?.catalog_now;
                    c.claim_deliveries(now, now.plus(hold), free, retries)
                })
        })
        .await;
        let claimed = match claimed {
            Ok(Ok(claimed)) => claimed,
            Ok(Err(e)) => {
                if !std::mem::replace(&mut self.failing, true) {
                    tracing::error!(error = %e, "claiming deliveries failed; trying again on a new connection (logged again when it works)");
                }
                return;
            }
            Err(e) => return tracing::error!(error = %e, "claiming deliveries panicked"),
        };
        if std::mem::replace(&mut self.failing, false) {
            tracing::info!("claiming deliveries works again");
        }
        for d in claimed {
            let permit = self
                .slots
                .clone()
                .acquire_owned()
                .await
                .expect("the semaphore is never closed");
            let (config, client, catalog, wake) = (
                self.config.clone(),
                self.client.clone(),
                self.catalog.clone(),
                self.wake.clone(),
            );
            let retry = (d.attempts > 0).then(|| {
                self.retrying.fetch_add(1, Ordering::SeqCst);
                self.retrying.clone()
            });
            self.in_flight.spawn(async move {
                deliver(&config, &client, &catalog, d).await;
                if let Some(r) = retry {
                    r.fetch_sub(1, Ordering::SeqCst);
                }
                drop(permit);
                // The subscriber's next notification may be due now.
                wake.notify_one();
            });
        }
    }

    /// Waits for a wake-up (a publish, or a delivery ended, in this process), a commit
    /// of another process, the poll, or shutdown.
    async fn wait(&mut self, shutdown: &mut watch::Receiver<bool>) {
        loop {
            tokio::select! {
                () = self.wake.notified() => return,
                () = tokio::time::sleep(WATCH) => {}
                _ = shutdown.changed() => return,
            }
            if self.last_claim.elapsed() >= POLL {
                return;
            }
            let c = self.catalog.clone();
            let version = tokio::task::spawn_blocking(move || {
                c.lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .again(|c| c.data_version())
            })
            .await
            .ok()
            .and_then(Result::ok);
            if version != self.seen_version {
                self.seen_version = version;
                return;
            }
        }
    }
}

/// One attempt of one delivery, and its record.
async fn deliver(
    config: &Config,
    client: &reqwest::Client,
    catalog: &Arc<Mutex<Connection>>,
    d: ClaimedDelivery,
) {
    let s = &d.subscription;
    let result = match still_allowed(config, &d) {
        Err(why) => DeliveryResult::GiveUp { error: why },
        Ok(()) => attempt(config, client, &d).await,
    };
    match &result {
        DeliveryResult::Delivered => {
            tracing::info!(publisher = %s.publisher, access = %s.access, callback = %s.callback, notification = d.notification_id, "notification delivered");
        }
        DeliveryResult::Retry { error, after } => {
            tracing::warn!(publisher = %s.publisher, access = %s.access, callback = %s.callback, notification = d.notification_id, attempt = d.attempts + 1, error = %error, retry_in_secs = after.num_seconds(), "notification not delivered; will retry");
        }
        DeliveryResult::GiveUp { error } => {
            tracing::error!(publisher = %s.publisher, access = %s.access, callback = %s.callback, notification = d.notification_id, attempts = d.attempts + 1, error = %error, "notification given up");
        }
    }
    let m = crate::metrics::get();
    crate::metrics::Metrics::outcome(
        &m.deliveries,
        match &result {
            DeliveryResult::Delivered => "delivered",
            DeliveryResult::Retry { .. } => "retry",
            DeliveryResult::GiveUp { .. } => "given-up",
        },
    );
    let gone = matches!(&result, DeliveryResult::GiveUp { error } if error.starts_with(GONE));
    let catalog = catalog.clone();
    let recorded = tokio::task::spawn_blocking(move || {
        // Recorded again on a new connection if the held one turns out to be gone:
        // an attempt recorded once more changes nothing (a delivered one is no longer
        // pending) or counts one attempt more, where not recording it would send the
        // notification again.
        catalog
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .again(|c| {
                // The catalog's time, as the claims' (`store::clock`).
                let now = c.read_clock()?.catalog_now;
                c.delivery_attempted(d.subscription_id, d.notification_id, &result, now)?;
                if gone {
                    // WebSub §7: a 410 ends the subscription.
                    let s = &d.subscription;
                    c.unsubscribe(&s.publisher, s.access, &s.callback)?;
                }
                Ok(())
            })
    })
    .await;
    match recorded {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            tracing::error!(error = %e, "recording a delivery failed; its claim ends and it is tried again")
        }
        Err(e) => tracing::error!(error = %e, "recording a delivery panicked"),
    }
}

/// The start of the error of a delivery the subscriber answered 410.
const GONE: &str = "the callback answered 410 Gone";

/// A restricted topic's subscription holds only while its `[[destination]]` is
/// configured and may see the publisher.
fn still_allowed(config: &Config, d: &ClaimedDelivery) -> Result<(), String> {
    let s = &d.subscription;
    if s.access == Access::Gratis {
        return Ok(());
    }
    let allowed = s.destination.as_deref().is_some_and(|id| {
        config
            .destinations
            .iter()
            .any(|dest| dest.id == id && dest.may_see(&s.publisher))
    });
    if allowed {
        Ok(())
    } else {
        Err(format!(
            "the restricted topic's subscriber (destination `{}`) is no longer allowed to see `{}` in the configuration",
            s.destination.as_deref().unwrap_or("?"),
            s.publisher
        ))
    }
}

/// POSTs the notification to the callback.
async fn attempt(config: &Config, client: &reqwest::Client, d: &ClaimedDelivery) -> DeliveryResult {
    let s = &d.subscription;
    let failed = |error: String| retry(config, d.attempts, error);
    let url = match url::Url::parse(&s.callback) {
        Ok(u) => u,
        Err(e) => {
            return DeliveryResult::GiveUp {
                error: format!("the callback is not a URL ({e})"),
            };
        }
    };
    if let Err(e) = check_target(config, &url) {
        return DeliveryResult::GiveUp { error: e };
    }
    let mut request = client
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/xml")
        .header(
            reqwest::header::LINK,
            link_header(config, &s.publisher, s.access),
        );
    if let Some(secret) = &s.secret {
        request = request.header("X-Hub-Signature", signature(secret, &d.body));
    }
    match request.body(d.body.clone()).send().await {
        Ok(r) if r.status().is_success() => DeliveryResult::Delivered,
        Ok(r) if r.status() == reqwest::StatusCode::GONE => DeliveryResult::GiveUp {
            error: format!("{GONE}: the subscription is ended"),
        },
        Ok(r) if r.status().is_redirection() => failed(format!(
            "the callback answered HTTP {} (a redirect, which this hub does not follow)",
            r.status().as_u16()
        )),
        Ok(r) => failed(format!(
            "the callback answered HTTP {}",
            r.status().as_u16()
        )),
        Err(e) => failed(crate::fetch::describe(&e)),
    }
}

/// A failed attempt: retried after an exponential backoff with jitter, or given up
/// after `max_attempts`.
fn retry(config: &Config, attempts: u32, error: String) -> DeliveryResult {
    let n = &config.notification;
    if attempts + 1 >= n.max_attempts {
        return DeliveryResult::GiveUp { error };
    }
    let base = n
        .retry_base_secs
        .max(1)
        .saturating_mul(1u64 << attempts.min(30))
        .min(n.max_retry_secs.max(1))
        * 1000;
    // Full jitter between half and the whole delay.
    let ms = base / 2 + crate::fetch::random() % (base / 2 + 1);
    let after = chrono::Duration::milliseconds(i64::try_from(ms).unwrap_or(i64::MAX / 1000));
    DeliveryResult::Retry { error, after }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_are_hmac_sha256_in_lowercase_hex() {
        // RFC 4231 test case 2.
        assert_eq!(
            signature("Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
