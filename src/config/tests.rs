use super::*;

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::parse(text, Path::new("p.toml"), Path::new("/etc/plikt"), &|v| {
        (v == "PW").then(|| "s3cret".to_string())
    })
}

const PUBLISHER: &str = r#"
[[publisher]]
id = "a"
name = "A"
feed = "https://a.example/feed.xml"
schedule = "0 */30 * * * *"
"#;

/// libpq's TLS parameters (PostgreSQL 15 §34.19.1) leave `[catalog] url` for
/// `catalog.tls`; the driver's own parameters stay in the URL; a relative
/// `sslrootcert` is the configuration folder's, as `password_file` is.
#[test]
fn catalog_tls_is_taken_out_of_the_url_with_libpq_meanings() {
    let catalog = |query: &str| {
        let c = parse(&format!(
            "[catalog]\nurl = \"postgres://plikt@db.kb.example/plikt{query}\"\n"
        ))
        .unwrap()
        .catalog;
        (c.url.unwrap().to_string(), c.tls, c.client_certificate)
    };
    let file = |f: &str| CatalogRoots::File(PathBuf::from(f));
    assert_eq!(
        catalog(""),
        (
            "postgres://plikt@db.kb.example/plikt".into(),
            CatalogTls::Prefer,
            None
        )
    );
    assert_eq!(
        catalog("?connect_timeout=3&sslmode=verify-full&sslrootcert=pg-ca.pem"),
        (
            "postgres://plikt@db.kb.example/plikt?connect_timeout=3".into(),
            CatalogTls::VerifyFull(file("/etc/plikt/pg-ca.pem")),
            None
        )
    );
    // A client certificate (libpq's sslcert, sslkey), relative to the
    // configuration's folder as sslrootcert is.
    assert_eq!(
        catalog(
            "?sslmode=verify-full&sslrootcert=pg-ca.pem&sslcert=pg/plikt.crt&sslkey=/etc/plikt/private/plikt.key&connect_timeout=3"
        ),
        (
            "postgres://plikt@db.kb.example/plikt?connect_timeout=3".into(),
            CatalogTls::VerifyFull(file("/etc/plikt/pg-ca.pem")),
            Some(ClientCertificate {
                cert: PathBuf::from("/etc/plikt/pg/plikt.crt"),
                key: PathBuf::from("/etc/plikt/private/plikt.key"),
            })
        )
    );
    assert_eq!(
        catalog("?sslmode=require&sslrootcert=/srv/ca.pem").1,
        CatalogTls::VerifyCa(PathBuf::from("/srv/ca.pem"))
    );
    // As libpq 16: the system's authorities only with the name checked.
    assert_eq!(
        catalog("?sslrootcert=system").1,
        CatalogTls::VerifyFull(CatalogRoots::System)
    );
    // Other parameters stay as written, spaces too.
    assert_eq!(
        catalog("?options=-c%20search_path%3Dkb&sslmode=require").0,
        "postgres://plikt@db.kb.example/plikt?options=-c%20search_path%3Dkb"
    );
    assert_eq!(
        catalog("?sslmode=verify-full").1,
        CatalogTls::VerifyFull(CatalogRoots::System)
    );
    assert_eq!(catalog("?sslmode=require").1, CatalogTls::Require);
    assert_eq!(catalog("?sslmode=disable").1, CatalogTls::Disable);
    let refused = |query: &str| {
        parse(&format!(
            "[catalog]\nurl = \"postgres://plikt@db.kb.example/plikt{query}\"\n"
        ))
        .unwrap_err()
        .to_string()
    };
    assert!(refused("?sslmode=allow").contains("sslmode `allow` is not one of"));
    assert!(refused("?sslmode=prefer&sslrootcert=ca.pem").contains("never checks"));
    assert!(refused("?sslkey=k.pem").contains("sslkey needs sslcert"));
    assert!(refused("?sslcert=c.pem").contains("sslcert needs sslkey"));
    assert!(
        refused("?sslmode=disable&sslcert=c.pem&sslkey=k.pem")
            .contains("sslmode=disable never uses TLS")
    );
    assert!(refused("?sslpassword=x").contains("only an unencrypted sslkey"));
    assert!(refused("?sslcrl=crl.pem").contains("`sslcrl` is not supported"));
    assert!(refused("?sslmode=verify-ca").contains("needs sslrootcert=FILE"));
    assert!(
        refused("?sslmode=verify-ca&sslrootcert=system")
            .contains("sslrootcert=system needs sslmode=verify-full")
    );
    assert!(refused("?password=hunter2").contains("carries a password"));
    assert!(!refused("?password=hunter2").contains("hunter2"));
}

#[test]
fn unknown_key_is_refused_with_name_and_line() {
    let e = parse(&format!("{PUBLISHER}colour = \"red\"\n")).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("colour"), "{msg}");
    assert!(msg.starts_with("p.toml:7:"), "{msg}");
}

#[test]
fn process_wide_http_keys_are_refused_in_a_publisher_with_name_and_line() {
    for key in ["max_connections = 2", "extra_root_certificates = []"] {
        let text = format!("{PUBLISHER}[publisher.http]\nretries = 1\n{key}\n");
        let msg = parse(&text).unwrap_err().to_string();
        let name = key.split(' ').next().unwrap();
        assert!(msg.contains(name) && msg.contains("[http]"), "{msg}");
        assert!(msg.starts_with("p.toml:7:"), "{msg}");
    }
    let c = parse(&format!("{PUBLISHER}[publisher.http]\nretries = 1\n")).unwrap();
    assert_eq!(c.publishers[0].http.retries, Some(1));
}

#[test]
fn password_in_config_is_refused_without_quoting_it() {
    let text = format!("{PUBLISHER}[publisher.auth]\nusername = \"u\"\npassword = \"hunter2\"\n");
    let msg = parse(&text).unwrap_err().to_string();
    assert!(msg.contains("password_env"), "{msg}");
    assert!(!msg.contains("hunter2"), "{msg}");
}

#[test]
fn password_comes_from_the_environment_and_is_redacted() {
    let text = format!("{PUBLISHER}[publisher.auth]\nusername = \"u\"\npassword_env = \"PW\"\n");
    let c = parse(&text).unwrap();
    let auth = c.publishers[0].auth.as_ref().unwrap();
    assert_eq!(auth.password.as_ref().unwrap().expose(), "s3cret");
    assert!(!format!("{c:?}").contains("s3cret"));
    // A missing secret does not stop `status` or `serve` from loading the file; the
    // harvester reports it.
    let missing = parse(&text.replace("\"PW\"", "\"NOPE\"")).unwrap();
    let msg = missing.publishers[0]
        .auth
        .as_ref()
        .unwrap()
        .password
        .clone()
        .unwrap_err();
    assert!(msg.contains("NOPE") && msg.contains("not set"), "{msg}");
}

#[test]
fn defaults_and_relative_paths() {
    let c = parse(PUBLISHER).unwrap();
    assert_eq!(c.data_dir, Path::new("/etc/plikt/plikt-data"));
    assert!(c.publishers[0].https_only);
    assert!(!c.publishers[0].allow_private);
    assert!(c.http.retries.is_none() && c.publishers[0].http.retries.is_none());
}

#[test]
fn a_password_typed_into_a_url_is_never_quoted_back() {
    for (section, written) in [
        // Does not parse (port out of range): toml quotes the value back.
        (
            "[catalog]\nurl",
            "postgres://plikt:hunter2@127.0.0.1:99999/plikt",
        ),
        // Parses, but is not PostgreSQL.
        ("[catalog]\nurl", "mysql://plikt:hunter2@127.0.0.1/plikt"),
        // A password with a `/`: the URL parses as a host and a bad port.
        (
            "[catalog]\nurl",
            "postgres://plikt:hunter2/x@127.0.0.1/plikt",
        ),
        ("[blobs]\ns3_endpoint", "http://key:hunter2@127.0.0.1:99999"),
        ("base_url", "http://u:hunter2@127.0.0.1:8080/x"),
    ] {
        let text = if section == "base_url" {
            format!("base_url = \"{written}\"\n{PUBLISHER}")
        } else {
            format!("{PUBLISHER}{section} = \"{written}\"\n")
        };
        let msg = parse(&text).unwrap_err().to_string();
        assert!(!msg.contains("hunter2"), "{msg}");
        assert!(
            msg.contains(":***@") || msg.contains("credentials") || msg.contains("password"),
            "{msg}"
        );
    }
}

#[test]
fn credentials_in_the_feed_url_are_refused_without_quoting_them() {
    let msg = parse(&PUBLISHER.replace("https://a.example", "https://u:hunter2@a.example"))
        .unwrap_err()
        .to_string();
    assert!(msg.contains("[publisher.auth]"), "{msg}");
    assert!(!msg.contains("hunter2"), "{msg}");
}

#[test]
fn bad_schedule_and_http_feed_are_refused() {
    let msg = parse(&PUBLISHER.replace("0 */30 * * * *", "every hour"))
        .unwrap_err()
        .to_string();
    assert!(msg.contains("cron"), "{msg}");
    let msg = parse(&PUBLISHER.replace("https://", "http://"))
        .unwrap_err()
        .to_string();
    assert!(msg.contains("https_only"), "{msg}");
}
