//! `[[publisher]]`: a publisher's feed, schedule, access, HTTP settings and credentials.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::Deserialize;
use url::Url;

use super::{HttpTable, Secret, load_secret, publisher_http};

/// `[[publisher]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublisherConfig {
    /// Short stable identifier (letters, digits, `-`, `_`), used in URLs and the catalog.
    pub id: String,
    /// Display name.
    pub name: String,
    /// The feed's URL.
    pub feed: Url,
    /// R104 values agreed with this publisher (H-PUBLISHER): `SE` + 10 digits with an
    /// optional `-suffix`, or the whole `http://id.kb.se/organisations/…` URI.
    #[serde(default)]
    pub organisations: Vec<String>,
    /// Cron expression (the `cron` crate's syntax: seconds first).
    pub schedule: String,
    /// Refuse http URLs and redirects to http.
    #[serde(default = "yes")]
    pub https_only: bool,
    /// Allow loopback, private and link-local targets (default: refused, SSRF).
    #[serde(default)]
    pub allow_private: bool,
    /// HTTP Basic credentials, sent only to the feed's origin.
    #[serde(default)]
    pub auth: Option<AuthConfig>,
    /// `[publisher.http]`: overrides of `[http]` for this publisher.
    #[serde(default, deserialize_with = "publisher_http")]
    pub http: HttpTable,
    /// §7.13: the host publication is deposit-liable, so R112 (isPartOf) is mandatory.
    #[serde(default)]
    pub require_is_part_of: bool,
}

fn yes() -> bool {
    true
}

pub(super) fn unloaded() -> Result<Secret, String> {
    Err("the password was not loaded".into())
}

/// `[publisher.auth]`: HTTP Basic. The password itself never appears in the file.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthConfig {
    /// User name.
    pub username: String,
    /// Environment variable holding the password.
    #[serde(default)]
    pub password_env: Option<String>,
    /// File holding the password (first line; relative to the configuration file).
    #[serde(default)]
    pub password_file: Option<PathBuf>,
    /// The password, once loaded, or why it could not be (names the variable or file,
    /// never a value).
    #[serde(skip, default = "unloaded")]
    pub password: Result<Secret, String>,
}

impl std::fmt::Debug for AuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthConfig")
            .field("username", &self.username)
            .field("password_env", &self.password_env)
            .field("password_file", &self.password_file)
            .field("password", &self.password)
            .finish()
    }
}

impl PublisherConfig {
    /// Checks what serde cannot (id, schedule, feed URL, limits) and loads the
    /// password (a relative `password_file` is resolved against `base`).
    pub(super) fn check(
        &mut self,
        base: &Path,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(), String> {
        let at = format!("[[publisher]] `{}`", self.id);
        if self.id.is_empty()
            || !self
                .id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(format!("{at}: id must be letters, digits, `-` or `_`"));
        }
        if let Err(e) = cron::Schedule::from_str(&self.schedule) {
            return Err(format!(
                "{at}: schedule `{}` is not a cron expression ({e}); write seconds first, e.g. `0 */30 * * * *`",
                self.schedule
            ));
        }
        if !matches!(self.feed.scheme(), "http" | "https") {
            return Err(format!("{at}: feed must be an http(s) URL"));
        }
        if !self.feed.username().is_empty() || self.feed.password().is_some() {
            return Err(format!(
                "{at}: the feed URL carries credentials; remove them from the URL and use [publisher.auth] with password_env or password_file"
            ));
        }
        if self.https_only && self.feed.scheme() != "https" {
            return Err(format!(
                "{at}: feed `{}` is not https but https_only = true; use the https URL or set https_only = false",
                self.feed
            ));
        }
        if self.http.max_connections_per_host == Some(0) {
            return Err(format!("{at}: max_connections_per_host must be at least 1"));
        }
        if let Some(auth) = &mut self.auth {
            // A missing secret is an error only for the commands that send it
            // (`harvest`, `run`: see `AuthConfig::password`), not for `status`,
            // `publish`, `serve` or `audit`.
            auth.password = load_secret(&at, &auth.password_env, &auth.password_file, base, env)?;
        }
        Ok(())
    }

    /// The parsed schedule (checked when the configuration was loaded).
    pub fn cron(&self) -> cron::Schedule {
        cron::Schedule::from_str(&self.schedule).expect("checked when the configuration loaded")
    }
}
