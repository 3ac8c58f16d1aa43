//! `[blobs]`: where harvested files are kept (issue 17 §2). Absent, or without
//! `s3_endpoint`: the local folder `data_dir/blobs` (the embedded default, unchanged).
//! With `s3_endpoint`: an S3-compatible object store (Garage, MinIO, Ceph RGW, AWS S3),
//! reached with path-style addressing. The key names are a contract outside tools rely
//! on (issue 17): `s3_endpoint`, `bucket`, `region`, `prefix`, `access_key_id_env` /
//! `access_key_id_file`, `secret_access_key_env` / `secret_access_key_file`; the tuning
//! keys after them are plikt's own.

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use url::Url;

use super::{Secret, load_secret};

/// `[blobs]` as written in the file.
#[derive(Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlobsConfig {
    /// The object store's S3 endpoint, e.g. `https://s3.kb.example` (absent: the local
    /// folder under `data_dir`). Plain `http` only for a loopback address.
    #[serde(default, deserialize_with = "endpoint")]
    pub s3_endpoint: Option<Url>,
    /// The bucket (must exist).
    pub bucket: Option<String>,
    /// The region the object store expects in signatures (Garage: its `s3_region`).
    pub region: Option<String>,
    /// Prepended to every object name, ending with `/` (e.g. `kb/`); default none.
    pub prefix: Option<String>,
    /// Environment variable holding the access key id.
    pub access_key_id_env: Option<String>,
    /// File holding the access key id (first line).
    pub access_key_id_file: Option<PathBuf>,
    /// Environment variable holding the secret access key.
    pub secret_access_key_env: Option<String>,
    /// File holding the secret access key (first line).
    pub secret_access_key_file: Option<PathBuf>,
    /// Size of the parts a large file is uploaded in while it streams (MiB, 5 to
    /// 5120: S3's limits). A file smaller than one part is sent in one request. Each
    /// file in flight holds at most two parts in memory: one being filled, one being
    /// sent.
    pub part_size_mib: Option<u64>,
    /// Longest time for one request to the object store (seconds).
    pub timeout_secs: Option<u64>,
    /// How long one operation is retried through connection errors and 5xx answers
    /// before it fails (seconds); the file then stays pending and a later run retries
    /// it.
    pub retry_timeout_secs: Option<u64>,
    /// Another process's temporary objects and unfinished multipart uploads older than
    /// this (seconds) are removed as a crash's leftovers when a harvest starts; set it
    /// longer than any one file's upload takes. A process's own are never touched.
    pub stale_upload_secs: Option<u64>,
    /// PEM files of authorities trusted for an `https` endpoint besides the system's
    /// (a deposit's own authority), as `[http] extra_root_certificates` for feeds;
    /// relative to the configuration's folder. Verification is never turned off.
    pub extra_root_certificates: Option<Vec<PathBuf>>,
    /// The loaded settings of an object store, or why they could not be loaded (the
    /// error names a variable or a file, never a value).
    #[serde(skip)]
    pub s3: Option<Result<S3Settings, String>>,
}

impl std::fmt::Debug for BlobsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlobsConfig")
            .field("s3_endpoint", &self.s3_endpoint.as_ref().map(Url::as_str))
            .field("bucket", &self.bucket)
            .field("prefix", &self.prefix)
            .field("s3", &self.s3)
            .finish_non_exhaustive()
    }
}

/// An object store's settings, checked, with its credentials loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S3Settings {
    /// The endpoint (`http` only on loopback).
    pub endpoint: Url,
    /// The bucket.
    pub bucket: String,
    /// The signing region.
    pub region: String,
    /// Empty, or ending with `/`.
    pub prefix: String,
    /// Access key id.
    pub access_key_id: Secret,
    /// Secret access key.
    pub secret_access_key: Secret,
    /// Multipart part size in bytes.
    pub part_size: usize,
    /// Longest single request.
    pub timeout: std::time::Duration,
    /// How long transient failures of one operation are retried.
    pub retry_timeout: std::time::Duration,
    /// Age after which another process's temporary objects count as a crash's.
    pub stale_after: std::time::Duration,
    /// PEM files of authorities trusted besides the system's.
    pub extra_root_certificates: Vec<PathBuf>,
}

/// S3's smallest part (all but the last) and largest part.
const MIN_PART_MIB: u64 = 5;
const MAX_PART_MIB: u64 = 5 * 1024;

impl BlobsConfig {
    /// Checks the table and loads the credentials (a relative `…_file` is resolved
    /// against `base`). The outer error is a mistake in the file; a credential that
    /// cannot be read now is kept in [`BlobsConfig::s3`] and reported by the commands
    /// that open the store.
    // Over 100 lines: one check per `[blobs]` key, each with its message.
    pub(super) fn check(
        &mut self,
        base: &Path,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(), String> {
        let Some(endpoint) = self.s3_endpoint.clone() else {
            let set: Vec<&str> = [
                ("bucket", self.bucket.is_some()),
                ("region", self.region.is_some()),
                ("prefix", self.prefix.is_some()),
                ("access_key_id_env", self.access_key_id_env.is_some()),
                ("access_key_id_file", self.access_key_id_file.is_some()),
                (
                    "secret_access_key_env",
                    self.secret_access_key_env.is_some(),
                ),
                (
                    "secret_access_key_file",
                    self.secret_access_key_file.is_some(),
                ),
                ("part_size_mib", self.part_size_mib.is_some()),
                ("timeout_secs", self.timeout_secs.is_some()),
                ("retry_timeout_secs", self.retry_timeout_secs.is_some()),
                ("stale_upload_secs", self.stale_upload_secs.is_some()),
                (
                    "extra_root_certificates",
                    self.extra_root_certificates.is_some(),
                ),
            ]
            .into_iter()
            .filter_map(|(k, set)| set.then_some(k))
            .collect();
            if !set.is_empty() {
                return Err(format!(
                    "[blobs]: {} only apply to an object store; add s3_endpoint (or remove them to keep the files in the local folder under data_dir)",
                    set.join(", ")
                ));
            }
            return Ok(());
        };
        check_endpoint(&endpoint)?;
        let bucket = self.bucket.clone().filter(|b| !b.is_empty()).ok_or(
            "[blobs]: s3_endpoint needs bucket (the name of an existing bucket)".to_string(),
        )?;
        let region = self.region.clone().filter(|r| !r.is_empty()).ok_or(
            "[blobs]: s3_endpoint needs region (the region the object store signs with; Garage: its s3_region, often `garage`)".to_string(),
        )?;
        let prefix = self.prefix.clone().unwrap_or_default();
        // Characters the object store's client percent-encodes in object names (`#`, `*`,
        // `%`, non-ASCII …): the objects would live under another prefix than the one
        // written here, which a bucket policy, lifecycle rule or backup, and plikt's own
        // listing of unfinished uploads, would miss. Others (a space, `+`, `=` …) are
        // kept as written, as an earlier release kept them.
        let segments = prefix.trim_end_matches('/');
        if let Some(c) = prefix.chars().find(|c| {
            let one = c.to_string();
            object_store::path::Path::from(one.as_str()).as_ref() != one && *c != '/'
        }) && object_store::path::Path::from(segments).as_ref() != segments
        {
            return Err(format!(
                "[blobs]: prefix `{prefix}` has `{c}`, which object names would carry encoded; use letters, digits and characters such as / - _ . only"
            ));
        }
        if !prefix.is_empty()
            && (!prefix.ends_with('/')
                || prefix.starts_with('/')
                || prefix.contains("//")
                || prefix.split('/').any(|s| s == "." || s == ".."))
        {
            return Err(format!(
                "[blobs]: prefix `{prefix}` must be path segments ending with `/`, e.g. `kb/`"
            ));
        }
        let part_mib = self.part_size_mib.unwrap_or(8);
        if !(MIN_PART_MIB..=MAX_PART_MIB).contains(&part_mib) {
            return Err(format!(
                "[blobs]: part_size_mib must be from {MIN_PART_MIB} to {MAX_PART_MIB} (S3's part sizes)"
            ));
        }
        let secs = |v: Option<u64>, default: u64, key: &str| match v.unwrap_or(default) {
            0 if key != "stale_upload_secs" => Err(format!("[blobs]: {key} must be at least 1")),
            n => Ok(std::time::Duration::from_secs(n)),
        };
        let (timeout, retry_timeout, stale_after) = (
            secs(self.timeout_secs, 60, "timeout_secs")?,
            secs(self.retry_timeout_secs, 60, "retry_timeout_secs")?,
            secs(self.stale_upload_secs, 86_400, "stale_upload_secs")?,
        );
        let extra_root_certificates = self
            .extra_root_certificates
            .iter()
            .flatten()
            .map(|p| base.join(p))
            .collect();
        let key_id = load_secret(
            "[blobs] access key id",
            &self.access_key_id_env,
            &self.access_key_id_file,
            base,
            env,
        )?;
        let secret = load_secret(
            "[blobs] secret access key",
            &self.secret_access_key_env,
            &self.secret_access_key_file,
            base,
            env,
        )?;
        self.s3 = Some(key_id.and_then(|access_key_id| {
            secret.map(|secret_access_key| S3Settings {
                endpoint,
                bucket,
                region,
                prefix,
                access_key_id,
                secret_access_key,
                part_size: usize::try_from(part_mib << 20).unwrap_or(usize::MAX),
                timeout,
                retry_timeout,
                stale_after,
                extra_root_certificates,
            })
        }));
        Ok(())
    }
}

/// `s3_endpoint` as a URL, refusing an empty port (`http://127.0.0.1:`), which URLs
/// read as the scheme's default port: a port left out by mistake, not port 80.
fn endpoint<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Url>, D::Error> {
    let Some(text) = Option::<String>::deserialize(d)? else {
        return Ok(None);
    };
    let authority = text
        .split_once("://")
        .and_then(|(_, rest)| rest.split(['/', '?', '#']).next());
    if authority.is_some_and(|a| a.ends_with(':')) {
        return Err(serde::de::Error::custom(format!(
            "`{text}` has a colon but no port after it; write the object store's port (e.g. http://127.0.0.1:3900), or no colon for the scheme's default"
        )));
    }
    Url::parse(&text)
        .map(Some)
        .map_err(|e| serde::de::Error::custom(format!("`{text}` is not a URL: {e}")))
}

/// `https`, or `http` to a loopback address (a test server, or an object store on the
/// same machine): credentials and files never cross a network in the clear.
fn check_endpoint(endpoint: &Url) -> Result<(), String> {
    if !endpoint.username().is_empty() || endpoint.password().is_some() {
        return Err(
            "[blobs]: s3_endpoint carries credentials; remove them and use access_key_id_env / secret_access_key_env (or …_file)".into(),
        );
    }
    if endpoint.path() != "/" || endpoint.query().is_some() {
        return Err(format!(
            "[blobs]: s3_endpoint `{endpoint}` must be the server alone (scheme, host, port); the bucket goes in bucket, a folder in prefix"
        ));
    }
    match endpoint.scheme() {
        "https" => Ok(()),
        "http" if is_loopback(endpoint) => Ok(()),
        "http" => Err(format!(
            "[blobs]: s3_endpoint `{endpoint}` is plain http to a host that is not loopback; use https (plain http is allowed only for 127.0.0.1, ::1 or localhost)"
        )),
        other => Err(format!(
            "[blobs]: s3_endpoint must be an https URL (or http on loopback), not `{other}:`"
        )),
    }
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(a)) => IpAddr::V4(a).is_loopback(),
        Some(url::Host::Ipv6(a)) => IpAddr::V6(a).is_loopback(),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, env: &[(&str, &str)]) -> Result<BlobsConfig, String> {
        let mut c: BlobsConfig = toml::from_str(text).map_err(|e| e.to_string())?;
        c.check(Path::new("/etc/plikt"), &|v| {
            env.iter()
                .find(|(k, _)| *k == v)
                .map(|(_, x)| x.to_string())
        })?;
        Ok(c)
    }

    const GARAGE: &str = r#"
s3_endpoint = "http://127.0.0.1:3900"
bucket = "plikt"
region = "garage"
prefix = "kb/"
access_key_id_env = "KEY"
secret_access_key_env = "SECRET"
"#;

    #[test]
    fn an_object_store_is_checked_and_its_credentials_are_loaded_and_redacted() {
        let c = check(GARAGE, &[("KEY", "GKid"), ("SECRET", "hunter2")]).unwrap();
        let s = c.s3.clone().unwrap().unwrap();
        assert_eq!(s.prefix, "kb/");
        assert_eq!(s.part_size, 8 << 20);
        assert_eq!(s.secret_access_key.expose(), "hunter2");
        assert!(s.extra_root_certificates.is_empty());
        // The deposit's own authorities, relative to the configuration's folder.
        let roots = check(
            &format!("{GARAGE}extra_root_certificates = [\"ca.pem\", \"/srv/b.pem\"]\n"),
            &[("KEY", "GKid"), ("SECRET", "hunter2")],
        )
        .unwrap();
        assert_eq!(
            roots.s3.unwrap().unwrap().extra_root_certificates,
            vec![
                PathBuf::from("/etc/plikt/ca.pem"),
                PathBuf::from("/srv/b.pem")
            ]
        );
        let debug = format!("{c:?}");
        assert!(
            !debug.contains("hunter2") && !debug.contains("GKid"),
            "{debug}"
        );
        // A missing secret is kept for the commands that open the store.
        let c = check(GARAGE, &[("KEY", "GKid")]).unwrap();
        let e = c.s3.unwrap().unwrap_err();
        assert!(e.contains("`SECRET` is not set"), "{e}");
    }

    #[test]
    fn mistakes_are_refused_with_what_to_write() {
        let env = [("KEY", "k"), ("SECRET", "s")];
        for (text, want) in [
            (
                GARAGE.replace("http://127.0.0.1", "http://10.0.0.5"),
                "use https",
            ),
            (GARAGE.replace(":3900", ":3900/plikt"), "the server alone"),
            (GARAGE.replace(":3900", ":"), "no port after it"),
            (GARAGE.replace("kb/", "kb"), "ending with `/`"),
            (GARAGE.replace("kb/", "kö/"), "has `ö`, which object names"),
            (GARAGE.replace("kb/", "k#b/"), "has `#`"),
            (GARAGE.replace("kb/", "k*b/"), "has `*`"),
            (GARAGE.replace("bucket = \"plikt\"", ""), "needs bucket"),
            (GARAGE.replace("region = \"garage\"", ""), "needs region"),
            (
                format!("{GARAGE}secret_access_key_file = \"s\"\n"),
                "exactly one",
            ),
            (format!("{GARAGE}part_size_mib = 1\n"), "from 5 to 5120"),
            ("bucket = \"plikt\"\n".to_string(), "add s3_endpoint"),
            (
                "extra_root_certificates = [\"ca.pem\"]\n".to_string(),
                "add s3_endpoint",
            ),
        ] {
            let e = check(&text, &env).unwrap_err();
            assert!(e.contains(want), "{text}: {e}");
        }
        assert!(
            check(
                &GARAGE.replace("http://127.0.0.1", "https://s3.kb.example"),
                &env
            )
            .is_ok()
        );
        assert!(check(&GARAGE.replace("127.0.0.1", "localhost"), &env).is_ok());
        // Kept as written in object names (an earlier release accepted them).
        assert!(check(&GARAGE.replace("kb/", "k b+c=d/"), &env).is_ok());
        // Unknown keys are refused by name (serde).
        let e = check(&format!("{GARAGE}endpoint = \"x\"\n"), &env).unwrap_err();
        assert!(e.contains("unknown field `endpoint`"), "{e}");
    }

    #[test]
    fn no_table_is_the_local_folder() {
        let c = check("", &[]).unwrap();
        assert!(c.s3.is_none());
    }
}
