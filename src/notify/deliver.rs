//! Deliveries (WebSub §7, Change Notification 1.0.1 §4.3): a loop that claims due
//! deliveries from the catalog's outbox and POSTs each on a task of its own, at most
//! `max_concurrent_deliveries` at once. Each subscriber gets its notifications one at a
//! time, oldest first (the claim takes only a subscriber's oldest pending one), so a
//! dead or slow callback holds up only itself; failures are retried with exponential
//! backoff and jitter, and given up after `max_attempts`. A claim is a lease: if this
//! process dies, another (or this one, restarted) takes the delivery over when it ends.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hmac::{Hmac, Mac};
use sha2::Sha256;
use tokio::sync::{Notify, Semaphore, watch};

use super::{NotifyError, check_target, link_header};
use crate::config::Config;
use crate::store::Access;
use crate::store::{Catalog, ClaimedDelivery, DeliveryResult};

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
    let client = super::client(&config)?;
    let path = config.data_dir.join("catalog.sqlite");
    let catalog = Arc::new(Mutex::new(
        tokio::task::spawn_blocking(move || {
            let c = Catalog::open(&path)?;
            c.for_deliveries()?;
            Ok::<_, crate::store::StoreError>(c)
        })
        .await
        .map_err(|e| NotifyError::Client(e.to_string()))??,
    ));
    let max = config.notification.max_concurrent_deliveries;
    let slots = Arc::new(Semaphore::new(max));
    // Retries in flight: at most half the slots, so callbacks that keep failing (dead,
    // or slow past the time limit) leave room for the first attempts of the others.
    let retrying = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut seen_version = None;
    let mut last_claim = tokio::time::Instant::now();
    // A claim outlives the longest attempt with room to record it.
    let hold = chrono::Duration::from_std(config.notification.timeout() * 3)
        .unwrap_or_else(|_| chrono::Duration::seconds(60))
        + chrono::Duration::seconds(30);
    let mut in_flight = tokio::task::JoinSet::new();
    loop {
        if *shutdown.borrow() {
            // Deliveries in flight end (each within the time limit) and are recorded,
            // so a restart sends none of them twice.
            let drain = async { while in_flight.join_next().await.is_some() {} };
            let limit = config.notification.timeout() + Duration::from_secs(5);
            if tokio::time::timeout(limit, drain).await.is_err() {
                tracing::warn!(
                    "deliveries still in flight at shutdown: their claims lapse and they are sent again"
                );
            }
            return Ok(());
        }
        while in_flight.try_join_next().is_some() {}
        let free = slots.available_permits();
        if free > 0 {
            let stamp = crate::store::now();
            let until = stamp.plus(hold);
            let c = catalog.clone();
            let retries = (max / 2)
                .max(1)
                .saturating_sub(retrying.load(Ordering::SeqCst));
            last_claim = tokio::time::Instant::now();
            let claimed = tokio::task::spawn_blocking(move || {
                c.lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .claim_deliveries(stamp, until, free, retries)
            })
            .await;
            match claimed {
                Ok(Ok(claimed)) => {
                    for d in claimed {
                        let permit = slots
                            .clone()
                            .acquire_owned()
                            .await
                            .expect("the semaphore is never closed");
                        let (config, client, catalog, wake) = (
                            config.clone(),
                            client.clone(),
                            catalog.clone(),
                            wake.clone(),
                        );
                        let retry = (d.attempts > 0).then(|| {
                            retrying.fetch_add(1, Ordering::SeqCst);
                            retrying.clone()
                        });
                        in_flight.spawn(async move {
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
                Ok(Err(e)) => tracing::error!(error = %e, "claiming deliveries failed"),
                Err(e) => tracing::error!(error = %e, "claiming deliveries panicked"),
            }
        }
        // Wait for a wake-up (a publish or a delivery ended in this process), a commit
        // of another process, the poll, or shutdown.
        loop {
            tokio::select! {
                () = wake.notified() => break,
                () = tokio::time::sleep(WATCH) => {}
                _ = shutdown.changed() => break,
            }
            if last_claim.elapsed() >= POLL {
                break;
            }
            let c = catalog.clone();
            let version = tokio::task::spawn_blocking(move || {
                c.lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .data_version()
            })
            .await
            .ok()
            .and_then(Result::ok);
            if version != seen_version {
                seen_version = version;
                break;
            }
        }
    }
}

/// One attempt of one delivery, and its record.
async fn deliver(
    config: &Config,
    client: &reqwest::Client,
    catalog: &Arc<Mutex<Catalog>>,
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
        DeliveryResult::Retry { error, at } => {
            tracing::warn!(publisher = %s.publisher, access = %s.access, callback = %s.callback, notification = d.notification_id, attempt = d.attempts + 1, error = %error, retry_at = %at, "notification not delivered; will retry");
        }
        DeliveryResult::GiveUp { error } => {
            tracing::error!(publisher = %s.publisher, access = %s.access, callback = %s.callback, notification = d.notification_id, attempts = d.attempts + 1, error = %error, "notification given up");
        }
    }
    let gone = matches!(&result, DeliveryResult::GiveUp { error } if error.starts_with(GONE));
    let catalog = catalog.clone();
    let recorded = tokio::task::spawn_blocking(move || {
        let c = catalog
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = crate::store::now();
        c.delivery_attempted(d.subscription_id, d.notification_id, &result, now)?;
        if gone {
            // WebSub §7: a 410 ends the subscription.
            let s = &d.subscription;
            c.unsubscribe(&s.publisher, s.access, &s.callback)?;
        }
        Ok::<_, crate::store::StoreError>(())
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
    let at = crate::store::now().plus(chrono::Duration::milliseconds(
        i64::try_from(ms).unwrap_or(i64::MAX),
    ));
    DeliveryResult::Retry { error, at }
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
