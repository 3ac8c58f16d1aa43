//! plikt's WebSub hub (W3C WebSub §5; Change Notification 1.0.1 §4.2, §4.4): a
//! subscription request is checked at once and answered (202, or 4xx saying what is
//! wrong), then the subscriber's intent is verified by challenge (§5.3) and only then
//! is the subscription kept (or ended) in the catalog, where it outlives restarts until
//! its lease ends.

use std::sync::Arc;

use url::Url;

use super::{check_target, topic_url};
use crate::config::Config;
use crate::store::Access;
use crate::store::{Catalog, Subscription};

/// `hub.mode` of a subscription request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `subscribe`: start or renew.
    Subscribe,
    /// `unsubscribe`.
    Unsubscribe,
}

impl Mode {
    /// The word in `hub.mode`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Subscribe => "subscribe",
            Mode::Unsubscribe => "unsubscribe",
        }
    }
}

/// A checked subscription request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubscriptionRequest {
    /// Subscribe or unsubscribe.
    pub mode: Mode,
    /// The topic's publisher.
    pub publisher: String,
    /// The topic's set.
    pub access: Access,
    /// `hub.topic`.
    pub topic: String,
    /// `hub.callback`.
    pub callback: Url,
    /// The lease granted (`hub.lease_seconds` within the configured bounds).
    pub lease_secs: u64,
    /// `hub.secret`.
    pub secret: Option<String>,
}

/// Why a subscription request is refused (400, the message says what to send).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// A required parameter is missing.
    #[error(
        "`{0}` is missing; a subscription request needs hub.mode, hub.topic and hub.callback (WebSub §5.1)"
    )]
    Missing(&'static str),
    /// `hub.mode` is neither `subscribe` nor `unsubscribe`.
    #[error(
        "hub.mode `{0}` is not `subscribe` or `unsubscribe`; this hub carries only plikt's own topics and takes no publish requests"
    )]
    Mode(String),
    /// `hub.topic` is not one of plikt's topics.
    #[error(
        "hub.topic `{0}` is not a topic of this hub; each set's topic is the `change-notification` entry of its Capability List"
    )]
    Topic(String),
    /// `hub.callback` cannot be used.
    #[error("hub.callback: {0}")]
    Callback(String),
    /// `hub.lease_seconds` is not a number.
    #[error("hub.lease_seconds `{0}` is not a number of seconds")]
    Lease(String),
    /// `hub.secret` is too long.
    #[error("hub.secret must be shorter than 200 bytes (WebSub §5.1)")]
    Secret,
}

impl SubscriptionRequest {
    /// Checks a request's form parameters against the configuration.
    pub fn parse(config: &Config, form: &[(String, String)]) -> Result<Self, RequestError> {
        let get = |name: &'static str| {
            form.iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        };
        let need = |name: &'static str| get(name).ok_or(RequestError::Missing(name));
        let mode = match need("hub.mode")? {
            "subscribe" => Mode::Subscribe,
            "unsubscribe" => Mode::Unsubscribe,
            other => return Err(RequestError::Mode(other.to_string())),
        };
        let topic = need("hub.topic")?;
        let (publisher, access) = config
            .publishers
            .iter()
            .flat_map(|p| [(p, Access::Gratis), (p, Access::Restricted)])
            .find(|(p, access)| topic_url(config, &p.id, *access) == topic)
            .ok_or_else(|| RequestError::Topic(topic.to_string()))?;
        let callback = need("hub.callback")?;
        if callback.len() > 2048 {
            return Err(RequestError::Callback(
                "longer than 2048 characters".to_string(),
            ));
        }
        let callback = Url::parse(callback)
            .map_err(|e| RequestError::Callback(format!("`{callback}` is not a URL ({e})")))?;
        if !callback.username().is_empty() || callback.password().is_some() {
            return Err(RequestError::Callback(
                "carries credentials; put none in the URL (sign deliveries with hub.secret instead)"
                    .to_string(),
            ));
        }
        check_target(config, &callback).map_err(RequestError::Callback)?;
        let n = &config.notification;
        let lease_secs = match get("hub.lease_seconds").filter(|v| !v.is_empty()) {
            None => n.default_lease_secs,
            Some(v) => v
                .trim()
                .parse::<u64>()
                .map_err(|_| RequestError::Lease(v.to_string()))?
                .clamp(n.min_lease_secs, n.max_lease_secs),
        };
        let secret = get("hub.secret").filter(|s| !s.is_empty());
        if secret.is_some_and(|s| s.len() >= 200) {
            return Err(RequestError::Secret);
        }
        Ok(Self {
            mode,
            publisher: publisher.id.clone(),
            access,
            topic: topic.to_string(),
            callback,
            lease_secs,
            secret: secret.map(str::to_string),
        })
    }
}

/// A random `hub.challenge`: 32 hex digits from the operating system's generator.
fn challenge() -> String {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).unwrap_or_else(|_| {
        // No generator: still unpredictable enough to prove intent (a subscriber
        // cannot guess the time in nanoseconds and the hasher's random keys).
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(t);
        b[..8].copy_from_slice(&h.finish().to_le_bytes());
    });
    hex::encode(b)
}

/// Verifies the subscriber's intent (WebSub §5.3): a GET of the callback with
/// `hub.mode`, `hub.topic`, `hub.challenge` and (to subscribe) `hub.lease_seconds`,
/// answered 2xx with the challenge as the body. Returns why not, if not.
pub async fn verify_intent(
    client: &reqwest::Client,
    request: &SubscriptionRequest,
) -> Result<(), String> {
    let challenge = challenge();
    let mut url = request.callback.clone();
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("hub.mode", request.mode.as_str())
            .append_pair("hub.topic", &request.topic)
            .append_pair("hub.challenge", &challenge);
        if request.mode == Mode::Subscribe {
            q.append_pair("hub.lease_seconds", &request.lease_secs.to_string());
        }
    }
    let response = client
        .get(url)
        .send()
        .await
        .map_err(|e| crate::fetch::describe(&e))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("the callback answered HTTP {}", status.as_u16()));
    }
    // The challenge is 32 characters: a longer answer is not it.
    let mut body = Vec::new();
    let mut response = response;
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| crate::fetch::describe(&e))?
    {
        body.extend_from_slice(&chunk);
        if body.len() > 1024 {
            break;
        }
    }
    if body.trim_ascii() != challenge.as_bytes() {
        return Err("the callback did not echo hub.challenge".to_string());
    }
    Ok(())
}

/// Verifies a request's intent and, when verified, keeps (or ends) the subscription in
/// the catalog at `catalog_path`. Run after the request was answered 202.
pub async fn complete(
    config: Arc<Config>,
    client: reqwest::Client,
    request: SubscriptionRequest,
    destination: Option<String>,
) {
    let callback = request.callback.to_string();
    if let Err(why) = verify_intent(&client, &request).await {
        tracing::warn!(topic = %request.topic, callback = %callback, mode = request.mode.as_str(), reason = %why, "subscription request not verified");
        return;
    }
    let location = match crate::store::Location::of(&config) {
        Ok(l) => l,
        Err(e) => {
            tracing::error!(topic = %request.topic, error = %e, "subscription not stored");
            return;
        }
    };
    let topic = request.topic.clone();
    let mode = request.mode;
    let stored = tokio::task::spawn_blocking(move || {
        let mut catalog = Catalog::open(&location)?;
        // The catalog's time: the lease is compared with the delivery loops' claims on
        // every machine (`store::clock`).
        let stamp = catalog.read_clock()?.catalog_now;
        match request.mode {
            Mode::Subscribe => {
                // A topic notifies from the moment it has its first subscriber, at the
                // latest.
                catalog.start_topic(&request.publisher, request.access, stamp)?;
                let lease = i64::try_from(request.lease_secs)
                    .ok()
                    .and_then(chrono::Duration::try_seconds)
                    .unwrap_or(chrono::Duration::MAX);
                catalog.subscribe(
                    &Subscription {
                        publisher: request.publisher,
                        access: request.access,
                        callback: request.callback.to_string(),
                        secret: request.secret,
                        destination,
                        lease_expires_at: stamp.plus(lease),
                    },
                    stamp,
                )
            }
            Mode::Unsubscribe => catalog
                .unsubscribe(
                    &request.publisher,
                    request.access,
                    request.callback.as_str(),
                )
                .map(drop),
        }
    })
    .await;
    match stored {
        Ok(Ok(())) => {
            tracing::info!(topic = %topic, callback = %callback, mode = mode.as_str(), "subscription verified")
        }
        Ok(Err(e)) => {
            tracing::error!(topic = %topic, callback = %callback, error = %e, "a verified subscription could not be recorded")
        }
        Err(e) => tracing::error!(error = %e, "recording a subscription panicked"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(allow_private: bool) -> Config {
        let text = format!(
            "base_url = \"https://kb.example/plikt/\"\n[notification]\nallow_private = {allow_private}\nmin_lease_secs = 60\ndefault_lease_secs = 3600\nmax_lease_secs = 86400\n[[publisher]]\nid = \"a\"\nname = \"A\"\nfeed = \"https://a.example/f.xml\"\nschedule = \"0 0 * * * *\"\n"
        );
        Config::parse(
            &text,
            std::path::Path::new("t.toml"),
            std::path::Path::new("."),
            &|_| None,
        )
        .unwrap()
    }

    fn form(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    const TOPIC: &str = "https://kb.example/plikt/resourcesync/a/change/";

    #[test]
    fn a_subscription_request_is_checked_and_its_lease_bounded() {
        let c = config(false);
        let r = SubscriptionRequest::parse(
            &c,
            &form(&[
                ("hub.mode", "subscribe"),
                ("hub.topic", TOPIC),
                ("hub.callback", "https://dest.example/cb?x=1"),
                ("hub.lease_seconds", "999999999"),
                ("hub.secret", "s"),
            ]),
        )
        .unwrap();
        assert_eq!(r.mode, Mode::Subscribe);
        assert_eq!((r.publisher.as_str(), r.access), ("a", Access::Gratis));
        assert_eq!(r.lease_secs, 86400);
        assert_eq!(r.secret.as_deref(), Some("s"));
        let restricted = SubscriptionRequest::parse(
            &c,
            &form(&[
                ("hub.mode", "unsubscribe"),
                (
                    "hub.topic",
                    "https://kb.example/plikt/resourcesync/a/restricted/change/",
                ),
                ("hub.callback", "https://dest.example/cb"),
            ]),
        )
        .unwrap();
        assert_eq!(restricted.access, Access::Restricted);
        assert_eq!(restricted.lease_secs, 3600);
    }

    #[test]
    fn bad_requests_say_what_is_wrong() {
        let c = config(false);
        let err =
            |pairs: &[(&str, &str)]| SubscriptionRequest::parse(&c, &form(pairs)).unwrap_err();
        let ok = [
            ("hub.mode", "subscribe"),
            ("hub.topic", TOPIC),
            ("hub.callback", "https://dest.example/cb"),
        ];
        assert_eq!(err(&ok[1..]), RequestError::Missing("hub.mode"));
        assert!(matches!(
            err(&[("hub.mode", "publish"), ok[1], ok[2]]),
            RequestError::Mode(_)
        ));
        assert!(matches!(
            err(&[
                ok[0],
                (
                    "hub.topic",
                    "https://kb.example/plikt/resourcesync/b/change/"
                ),
                ok[2]
            ]),
            RequestError::Topic(_)
        ));
        for callback in [
            "ftp://dest.example/cb",
            "not a url",
            "http://127.0.0.1:9/cb",
            "http://[::1]/cb",
            "http://10.1.2.3/cb",
            "http://169.254.169.254/latest/meta-data",
            "https://user:pw@dest.example/cb",
        ] {
            assert!(
                matches!(
                    err(&[ok[0], ok[1], ("hub.callback", callback)]),
                    RequestError::Callback(_)
                ),
                "{callback}"
            );
        }
        assert!(matches!(
            err(&[ok[0], ok[1], ok[2], ("hub.lease_seconds", "soon")]),
            RequestError::Lease(_)
        ));
        let long = "x".repeat(200);
        assert_eq!(
            err(&[ok[0], ok[1], ok[2], ("hub.secret", long.as_str())]),
            RequestError::Secret
        );
        // Loopback callbacks only where the configuration allows them.
        let lo = config(true);
        assert!(
            SubscriptionRequest::parse(
                &lo,
                &form(&[ok[0], ok[1], ("hub.callback", "http://127.0.0.1:9/cb")])
            )
            .is_ok()
        );
    }

    #[test]
    fn challenges_differ() {
        let (a, b) = (challenge(), challenge());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }
}
