//! `[server]`: the limits of `plikt serve`'s and `plikt run`'s HTTP doors that are not
//! the validation page's (`[web]`) or the hub's (`[notification]`).

use std::time::Duration;

use serde::Deserialize;

/// `[server]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerConfig {
    /// Time a client has to send a request's headers once it connects (or once its
    /// previous request ended); a connection still sending them is closed.
    pub header_timeout_secs: u64,
    /// Failed authentications a client address may make per minute once its burst is
    /// spent; beyond, every request of it with credentials is answered 429 (0: no
    /// limit).
    pub auth_failures_per_minute: u32,
    /// Failed authentications a client address may make at once.
    pub auth_failure_burst: u32,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            header_timeout_secs: 10,
            auth_failures_per_minute: 10,
            auth_failure_burst: 10,
        }
    }
}

impl ServerConfig {
    /// The header timeout.
    pub fn header_timeout(&self) -> Duration {
        Duration::from_secs(self.header_timeout_secs)
    }

    /// Refuses values that would leave a door open.
    pub(super) fn check(&self) -> Result<(), String> {
        if self.header_timeout_secs == 0 {
            return Err("[server] header_timeout_secs must be at least 1".into());
        }
        if self.auth_failures_per_minute > 0 && self.auth_failure_burst == 0 {
            return Err(
                "[server] auth_failure_burst must be at least 1 when auth_failures_per_minute is set"
                    .into(),
            );
        }
        Ok(())
    }
}

/// Shortest secret plikt accepts from a client (operators' and Destinations' tokens
/// and passwords): 32 characters, about 190 bits when made as [`HOW_TO_MAKE`] says.
pub const MIN_SECRET_CHARS: usize = 32;

/// How to make a secret that passes.
pub const HOW_TO_MAKE: &str =
    "make one with `openssl rand -base64 32` (or `head -c 32 /dev/urandom | base64`)";
