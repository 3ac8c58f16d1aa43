//! `[catalog]`: where the catalog is, and the TLS libpq's parameters in its URL ask for.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use url::Url;

use super::Secret;

/// `[catalog]`: a PostgreSQL catalog shared by any number of workers (issue 17), with
/// its password from the environment or a file; absent, the SQLite catalog
/// `data_dir/catalog.sqlite`.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogConfig {
    /// `postgres://user@host:port/database`; never with a password in it.
    #[serde(default)]
    pub url: Option<Url>,
    /// Environment variable holding the password.
    #[serde(default)]
    pub password_env: Option<String>,
    /// File holding the password (first line).
    #[serde(default)]
    pub password_file: Option<PathBuf>,
    /// How far (seconds) the clock of a machine writing to a PostgreSQL catalog may be
    /// from the database server's: further, and plikt does not start, and a worker
    /// claims no runs while it is (`store::clock`).
    #[serde(default = "CatalogConfig::default_max_clock_offset_secs")]
    pub max_clock_offset_secs: u64,
    /// The password, once loaded (`None`: none given, the server needs none), or why
    /// it could not be.
    #[serde(skip)]
    pub password: Option<Result<Secret, String>>,
    /// How the connection is protected: libpq's `sslmode` and `sslrootcert` in `url`,
    /// taken out of it when the configuration is loaded.
    #[serde(skip)]
    pub tls: CatalogTls,
    /// The certificate plikt presents to the server: libpq's `sslcert` and `sslkey` in
    /// `url`, taken out of it when the configuration is loaded.
    #[serde(skip)]
    pub client_certificate: Option<ClientCertificate>,
}

/// What to do with an encrypted client key: plikt reads only unencrypted ones.
pub(crate) const DECRYPT_KEY: &str = "plikt reads only an unencrypted sslkey; decrypt it once (`openssl pkey -in KEY.enc -out KEY`) and keep the file readable by plikt's user only (chmod 600, or 640 owned by root)";

/// A client certificate for a PostgreSQL server that authenticates its clients by
/// certificate (`hostssl … cert` in `pg_hba.conf`, PostgreSQL 15 documentation §21.12,
/// or `clientcert=verify-full` beside a password): libpq's `sslcert` and `sslkey`
/// (§34.19.2), both files relative to the configuration's folder. The key is a secret
/// kept in its file, as the password is: read when plikt connects, never copied
/// elsewhere, and refused when its file is readable by others (as libpq refuses it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCertificate {
    /// `sslcert`: the PEM certificate (and any intermediate authorities after it).
    pub cert: PathBuf,
    /// `sslkey`: its PEM private key, unencrypted (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
}

/// TLS to a PostgreSQL catalog, as libpq's `sslmode` (and `sslrootcert`) in `[catalog]
/// url` ask for it (PostgreSQL 15 documentation §34.19.1, "SSL Mode Descriptions"), so
/// that the URL a DBA gives plikt means what it means to `psql`. The certificate of the
/// server is checked only by the last two; `require` with a `sslrootcert` is
/// `verify-ca`, as in libpq.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum CatalogTls {
    /// `sslmode=disable`: plain TCP.
    Disable,
    /// `sslmode=prefer` (the default, as in libpq): TLS when the server offers it, plain
    /// when it does not; the certificate is not checked.
    #[default]
    Prefer,
    /// `sslmode=require`: TLS or no connection; the certificate is not checked.
    Require,
    /// `sslmode=verify-ca`: TLS, with a certificate signed by an authority in this PEM
    /// file (`sslrootcert`; relative to the configuration's folder).
    VerifyCa(PathBuf),
    /// `sslmode=verify-full`: as `verify-ca`, and the certificate names the host
    /// plikt connects to.
    VerifyFull(CatalogRoots),
}

/// The certificate authorities a catalog's certificate is checked against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CatalogRoots {
    /// `sslrootcert=system`, or none given with `verify-full`: the operating system's.
    System,
    /// `sslrootcert=FILE`: the PEM certificates in FILE (relative to the configuration's
    /// folder).
    File(PathBuf),
}

impl CatalogTls {
    /// Takes libpq's TLS parameters out of `url` and says what they ask for: the mode,
    /// and the client certificate if one is named. Parameters libpq has and plikt does
    /// not (an encrypted key's password, CRLs) are refused by name rather than left for
    /// the driver's "unknown option".
    // Over 100 lines: one arm per libpq parameter, each with its message.
    pub(super) fn take(
        url: &mut Url,
        base: &Path,
    ) -> Result<(Self, Option<ClientCertificate>), String> {
        let mut mode = None;
        let mut roots = None;
        let (mut cert, mut cert_key) = (None, None);
        // The other parameters are kept as written (re-encoding them would turn a
        // space's `%20` into `+`, which rust-postgres does not decode).
        let mut rest: Vec<String> = Vec::new();
        for raw in url
            .query()
            .unwrap_or("")
            .split('&')
            .filter(|p| !p.is_empty())
        {
            let (key, value) = url::form_urlencoded::parse(raw.as_bytes())
                .next()
                .unwrap_or_default();
            match &*key {
                "sslmode" => mode = Some(value.into_owned()),
                "sslrootcert" => roots = Some(value.into_owned()),
                "sslcert" => cert = Some(base.join(&*value)),
                "sslkey" => cert_key = Some(base.join(&*value)),
                "password" => {
                    return Err(
                        "[catalog] url carries a password; remove it from the URL and use password_env or password_file".into(),
                    );
                }
                "sslpassword" => {
                    return Err(format!(
                        "[catalog] url: `sslpassword` is not supported: {DECRYPT_KEY}"
                    ));
                }
                "sslcrl" | "sslcrldir" | "sslcertmode" => {
                    return Err(format!(
                        "[catalog] url: `{key}` is not supported: plikt does not read CRLs, and presents its client certificate (sslcert, sslkey) whenever one is named"
                    ));
                }
                _ => rest.push(raw.to_string()),
            }
        }
        let client = match (cert, cert_key) {
            (Some(cert), Some(key)) => Some(ClientCertificate { cert, key }),
            (None, None) => None,
            (Some(_), None) => {
                return Err(
                    "[catalog] url: sslcert needs sslkey, the file of its private key".into(),
                );
            }
            (None, Some(_)) => {
                return Err(
                    "[catalog] url: sslkey needs sslcert, the file of the certificate it is the key of".into(),
                );
            }
        };
        if mode.as_deref() == Some("disable") && client.is_some() {
            return Err(
                "[catalog] url: sslcert is given but sslmode=disable never uses TLS; write sslmode=verify-full".into(),
            );
        }
        if mode.is_some() || roots.is_some() || client.is_some() {
            let kept = rest.join("&");
            url.set_query((!kept.is_empty()).then_some(kept.as_str()));
        }
        // As libpq 16: `sslrootcert=system` means verify-full (any public authority
        // signs a certificate for a name its holder controls, so only the name check
        // keeps an attacker out), and a weaker mode with it is an error.
        let roots = roots.map(|r| match r.as_str() {
            "system" => CatalogRoots::System,
            file => CatalogRoots::File(base.join(file)),
        });
        let mode = match (&mode, &roots) {
            (None, Some(CatalogRoots::System)) => "verify-full",
            (None, _) => "prefer",
            (Some(m), _) => m.as_str(),
        };
        let tls = match (mode, roots) {
            ("disable", None) => CatalogTls::Disable,
            ("prefer", None) => CatalogTls::Prefer,
            ("require", None) => CatalogTls::Require,
            ("verify-full", r) => CatalogTls::VerifyFull(r.unwrap_or(CatalogRoots::System)),
            ("require" | "verify-ca", Some(CatalogRoots::File(f))) => CatalogTls::VerifyCa(f),
            ("verify-ca", None) => {
                return Err(
                    "[catalog] url: sslmode=verify-ca needs sslrootcert=FILE, the authority that signed the server's certificate (with the system's authorities, write sslmode=verify-full: only the name check keeps others out)".into(),
                );
            }
            (m @ ("require" | "verify-ca"), Some(CatalogRoots::System)) => {
                return Err(format!(
                    "[catalog] url: sslrootcert=system needs sslmode=verify-full, not {m} (any public authority signs a certificate for a name its holder controls)"
                ));
            }
            (m @ ("disable" | "prefer"), Some(_)) => {
                return Err(format!(
                    "[catalog] url: sslrootcert is given but sslmode={m} never checks the server's certificate; write sslmode=verify-full (or verify-ca)"
                ));
            }
            (other, _) => {
                return Err(format!(
                    "[catalog] url: sslmode `{other}` is not one of disable, prefer, require, verify-ca, verify-full"
                ));
            }
        };
        Ok((tls, client))
    }
}

impl CatalogConfig {
    fn default_max_clock_offset_secs() -> u64 {
        2
    }

    /// [`CatalogConfig::max_clock_offset_secs`] as a duration (at most 2^40 s: "any").
    pub fn max_clock_offset(&self) -> chrono::Duration {
        chrono::Duration::seconds(
            i64::try_from(self.max_clock_offset_secs.min(1 << 40)).unwrap_or(1 << 40),
        )
    }
}

impl Default for CatalogConfig {
    fn default() -> Self {
        Self {
            url: None,
            password_env: None,
            password_file: None,
            max_clock_offset_secs: Self::default_max_clock_offset_secs(),
            password: None,
            tls: CatalogTls::default(),
            client_certificate: None,
        }
    }
}

impl std::fmt::Debug for CatalogConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CatalogConfig")
            .field("url", &self.url.as_ref().map(Url::as_str))
            .field("password", &self.password)
            .field("max_clock_offset_secs", &self.max_clock_offset_secs)
            .finish()
    }
}
