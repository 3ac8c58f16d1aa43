//! The catalog on a PostgreSQL server of its own, as a deposit team configures it
//! (issue 17 §1): TLS as libpq's `sslmode` and `sslrootcert` in `[catalog] url` ask for
//! it (PostgreSQL 15 documentation §34.19.1), against a real server that takes TCP
//! connections only over TLS and with a password (`scripts/postgres start --tls`).

use std::sync::{Arc, OnceLock};

use crate::support::{Env, OwnPostgres, Response, Server, TestItem, date, feed, text};

/// `env`'s configuration without its `[catalog]` (the one the test run gives it).
fn without_catalog(env: &Env) -> String {
    let cfg = std::fs::read_to_string(&env.config).unwrap();
    match &env.postgres {
        Some(url) => cfg.replace(&format!("[catalog]\nurl = \"{url}\"\n"), ""),
        None => cfg,
    }
}

/// The port of `pg`'s URL.
fn port_of(pg: &OwnPostgres) -> String {
    pg.url
        .rsplit_once(':')
        .and_then(|(_, p)| p.split('/').next())
        .unwrap()
        .to_string()
}

/// A publisher on loopback with one item, `guid`, whose file holds `bytes`.
fn one_file_publisher(guid: &'static str, bytes: &'static [u8]) -> Server {
    let base: Arc<OnceLock<String>> = Default::default();
    let b2 = base.clone();
    let server = Server::with_handler(move |r| match r.path.as_str() {
        "/feed.xml" => {
            let b = b2.get().unwrap();
            Response::ok(feed(&[TestItem::new(
                guid,
                &date(0),
                &format!("{b}/page/1.html"),
            )
            .content(
                &format!("{b}/file/1.bin"),
                "application/octet-stream",
                bytes,
            )]))
        }
        "/file/1.bin" => Response::file(bytes, "application/octet-stream"),
        _ => Response::file(b"<html><body>page</body></html>", "text/html"),
    });
    let _ = base.set(server.url(""));
    server
}

#[test]
fn a_catalog_over_tls_is_encrypted_and_its_certificate_checked_as_sslmode_asks() {
    let pg = OwnPostgres::start_tls();
    let port = port_of(&pg);
    let password = std::fs::read_to_string(format!("{}/password", pg.dir)).unwrap();
    let password = password.trim();
    let ca = format!("{}/ca.pem", pg.dir);
    let other_ca = format!("{}/other-ca.pem", pg.dir);

    let server = one_file_publisher("tls-1", b"over TLS");
    let env = Env::plain("catalog-tls", &server.url("/feed.xml"), "");
    let plain = without_catalog(&env);
    let with_catalog = |env: &Env, catalog: &str| {
        std::fs::write(&env.config, format!("{plain}\n[catalog]\n{catalog}\n")).unwrap();
    };
    let catalog = |host: &str, query: &str| {
        format!(
            "url = \"postgres://postgres@{host}:{port}/postgres{query}\"\npassword_file = \"{}/password\"",
            pg.dir
        )
    };

    // What a deposit team writes for a catalog on another machine: the authority that
    // signed the server's certificate, and its name checked. The server refuses TCP
    // without TLS (`hostnossl … reject`), so a harvest that deposits proves plikt spoke
    // TLS to it.
    with_catalog(
        &env,
        &catalog(
            "localhost",
            &format!("?sslmode=verify-full&sslrootcert={ca}"),
        ),
    );
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(env.status()["deposits"].as_u64(), Some(1));

    // Each mode against the same server: what connects, and what each refusal says.
    let cases: Vec<(&str, String, Result<(), &str>)> = vec![
        // libpq's default, `prefer`: TLS when offered (unverified).
        ("localhost", String::new(), Ok(())),
        ("localhost", "?sslmode=require".into(), Ok(())),
        // verify-ca checks who signed it, not the name (127.0.0.1 is not in it);
        // `require` with a root certificate is verify-ca, as in libpq.
        (
            "127.0.0.1",
            format!("?sslmode=verify-ca&sslrootcert={ca}"),
            Ok(()),
        ),
        (
            "127.0.0.1",
            format!("?sslmode=require&sslrootcert={ca}"),
            Ok(()),
        ),
        (
            "127.0.0.1",
            format!("?sslmode=verify-full&sslrootcert={ca}"),
            Err("does not name the host in [catalog] url"),
        ),
        (
            "localhost",
            format!("?sslmode=verify-full&sslrootcert={other_ca}"),
            Err("not signed by an authority in sslrootcert"),
        ),
        // No sslrootcert: the system's authorities, which never signed this one.
        (
            "localhost",
            "?sslmode=verify-full".into(),
            Err("not signed by an authority this system trusts"),
        ),
        // Plain TCP: the server's own refusal reaches the operator.
        ("localhost", "?sslmode=disable".into(), Err("no encryption")),
        (
            "localhost",
            "?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem".into(),
            Err("sslrootcert /nonexistent/ca.pem"),
        ),
        (
            "localhost",
            "?sslmode=verify-all".into(),
            Err(
                "sslmode `verify-all` is not one of disable, prefer, require, verify-ca, verify-full",
            ),
        ),
        (
            "localhost",
            format!("?sslmode=verify-full&sslrootcert={ca}&sslcert=client.pem"),
            Err("sslcert needs sslkey"),
        ),
        (
            "localhost",
            "?sslmode=disable&sslrootcert=system".into(),
            Err("sslmode=disable never checks the server's certificate"),
        ),
        // As libpq 16: the system's authorities only where the name is checked too.
        (
            "localhost",
            "?sslmode=verify-ca&sslrootcert=system".into(),
            Err("sslrootcert=system needs sslmode=verify-full"),
        ),
    ];
    // Over the cluster's Unix-domain socket libpq speaks no TLS, whatever sslmode says,
    // and neither does plikt (the socket takes no password here: `local … trust`).
    for query in ["", "&sslmode=verify-full"] {
        with_catalog(
            &env,
            &format!(
                "url = \"postgres:///postgres?host={}&port={port}&user=postgres{query}\"",
                pg.dir
            ),
        );
        let o = env.cmd(&["status", "--format", "json"]);
        assert_eq!(o.status.code(), Some(0), "socket {query}: {}", text(&o));
    }
    for (host, query, expected) in cases {
        with_catalog(&env, &catalog(host, &query));
        let o = env.cmd(&["status", "--format", "json"]);
        let out = text(&o);
        assert!(
            !out.contains(password),
            "the password appears in what plikt said: {out}"
        );
        match expected {
            Ok(()) => {
                assert_eq!(o.status.code(), Some(0), "{host} {query}: {out}");
                let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
                assert_eq!(v["publishers"][0]["deposits"].as_u64(), Some(1), "{out}");
            }
            Err(said) => {
                assert_ne!(o.status.code(), Some(0), "{host} {query}: {out}");
                let stderr = String::from_utf8_lossy(&o.stderr);
                assert!(
                    stderr.contains(said),
                    "{host} {query}: wanted `{said}`: {out}"
                );
            }
        }
    }
    // The server's refusals of the settings: who plikt connected as, where, and what
    // to change.
    let wrong = env.dir.join("wrong-password");
    crate::support::private_file(&wrong, "not-the-password\n");
    let tls = format!("sslmode=verify-full&sslrootcert={ca}");
    for (database, setting, said) in [
        (
            "postgres",
            format!("password_file = \"{}\"", wrong.display()),
            "check the password [catalog] password_env or password_file gives",
        ),
        (
            "postgres",
            String::new(),
            "the server asks for a password and [catalog] gives none: set password_env or password_file",
        ),
        (
            "nosuch",
            format!("password_file = \"{}/password\"", pg.dir),
            "`createdb --owner plikt plikt`",
        ),
    ] {
        with_catalog(
            &env,
            &format!("url = \"postgres://postgres@localhost:{port}/{database}?{tls}\"\n{setting}"),
        );
        let o = env.cmd(&["status"]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{said}: {}", text(&o));
        assert!(
            stderr.contains(&format!(
                "PostgreSQL refused user `postgres`, database `{database}` at localhost:{port}"
            )) && stderr.contains(said),
            "wanted `{said}`: {stderr}"
        );
        assert!(!stderr.contains(password), "{stderr}");
    }
}

/// A catalog whose server authenticates plikt by its client certificate (`hostssl …
/// cert` in pg_hba.conf, PostgreSQL 15 documentation §21.12), as libpq's `sslcert` and
/// `sslkey` in `[catalog] url` name it (§34.19.2): plikt harvests into it with no
/// password, and each way a certificate or key can be wrong is said before or by the
/// server, with what to change; the key is never quoted. A role that needs its password
/// and a certificate of its name (`clientcert=verify-full`, §21.12) harvests with both,
/// and another user's certificate gets advice naming that cause too.
#[test]
fn a_catalog_that_takes_client_certificates_lets_plikt_in_by_its_certificate_alone() {
    let pg = OwnPostgres::start_tls();
    let port = port_of(&pg);
    let dir = std::path::PathBuf::from(&pg.dir);
    let server = one_file_publisher("cert-1", b"by certificate");
    let env = Env::plain("catalog-cert", &server.url("/feed.xml"), "");
    let plain = without_catalog(&env);
    // The role `plikt_cert` may log in only by certificate; no password is given.
    let with_certificate = |cert: &std::path::Path, key: &std::path::Path| {
        std::fs::write(
            &env.config,
            format!(
                "{plain}\n[catalog]\nurl = \"postgres://plikt_cert@localhost:{port}/certs?sslmode=verify-full&sslrootcert={}&sslcert={}&sslkey={}\"\n",
                dir.join("ca.pem").display(),
                cert.display(),
                key.display()
            ),
        )
        .unwrap();
    };
    let (cert, key) = (dir.join("client.crt"), dir.join("client.key"));
    with_certificate(&cert, &key);
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(env.status()["deposits"].as_u64(), Some(1));

    // Keys as a deposit team might get them wrong, made here from the right one.
    let mode = |path: &std::path::Path, mode: u32| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    let readable = env.dir.join("readable.key");
    std::fs::copy(&key, &readable).unwrap();
    mode(&readable, 0o644);
    let not_a_key = env.dir.join("not-a.key");
    std::fs::copy(&cert, &not_a_key).unwrap();
    mode(&not_a_key, 0o600);
    let encrypted = env.dir.join("encrypted.key");
    let o = std::process::Command::new("openssl")
        .args(["pkey", "-aes256", "-passout", "pass:secret", "-in"])
        .arg(&key)
        .arg("-out")
        .arg(&encrypted)
        .output()
        .unwrap();
    assert!(o.status.success(), "openssl pkey: {}", text(&o));
    mode(&encrypted, 0o600);
    // A key rustls does not take (libpq does): ECDSA on P-521.
    let (p521_cert, p521_key) = (env.dir.join("p521.crt"), env.dir.join("p521.key"));
    let o = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:secp521r1",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=plikt_cert",
            "-keyout",
        ])
        .arg(&p521_key)
        .arg("-out")
        .arg(&p521_cert)
        .output()
        .unwrap();
    assert!(o.status.success(), "openssl req: {}", text(&o));
    mode(&p521_key, 0o600);
    let key_text = std::fs::read_to_string(&key).unwrap();
    let key_line = key_text.lines().nth(1).unwrap().to_string();
    let c = |name: &str| dir.join(name);
    let cases: Vec<(std::path::PathBuf, std::path::PathBuf, &str)> = vec![
        // Signed by an authority the server does not trust: its TLS alert.
        (
            c("client-other.crt"),
            c("client-other.key"),
            "did not accept the client certificate of sslcert",
        ),
        // Signed by the server's authority, for another user.
        (
            c("client-postgres.crt"),
            c("client-postgres.key"),
            "its common name (CN) must be the user in [catalog] url",
        ),
        // Said before any connection.
        (
            cert.clone(),
            readable.clone(),
            "the private key's file may be read by others (mode 0644)",
        ),
        (cert.clone(), not_a_key.clone(), "holds no PEM private key"),
        (
            cert.clone(),
            encrypted.clone(),
            "the private key is encrypted",
        ),
        (cert.clone(), env.dir.clone(), "is not a regular file"),
        (
            p521_cert.clone(),
            p521_key.clone(),
            "plikt's TLS takes RSA keys of 2048 to 8192 bits, ECDSA keys on P-256 or P-384",
        ),
        (
            cert.clone(),
            c("client-postgres.key"),
            "is not the key of the certificate in sslcert",
        ),
    ];
    for (cert, key, said) in cases {
        with_certificate(&cert, &key);
        let o = env.cmd(&["status"]);
        let out = text(&o);
        assert_eq!(o.status.code(), Some(2), "{said}: {out}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(said),
            "wanted `{said}`: {out}"
        );
        assert!(!out.contains(&key_line), "the key appears in: {out}");
    }
    // No certificate for a role that may log in only by one: the server's refusal, and
    // what to write.
    std::fs::write(
        &env.config,
        format!(
            "{plain}\n[catalog]\nurl = \"postgres://plikt_cert@localhost:{port}/certs?sslmode=verify-full&sslrootcert={}\"\n",
            dir.join("ca.pem").display()
        ),
    )
    .unwrap();
    let o = env.cmd(&["status"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(
            "the PostgreSQL server asks for a client certificate: name it and its key with sslcert="
        ),
        "{}",
        text(&o)
    );

    // The role `plikt_full` needs its password and a certificate of its own name
    // (`scram-sha-256 clientcert=verify-full`). Another user's certificate gets the
    // refusal of a wrong password (PostgreSQL names the mismatch only in its log): the
    // advice says so; with its own certificate, plikt harvests.
    let verified = |name: &str| {
        std::fs::write(
            &env.config,
            format!(
                "{plain}\n[catalog]\nurl = \"postgres://plikt_full@localhost:{port}/verified?sslmode=verify-full&sslrootcert={}&sslcert={}&sslkey={}\"\npassword_file = \"{}\"\n",
                dir.join("ca.pem").display(),
                dir.join(format!("{name}.crt")).display(),
                dir.join(format!("{name}.key")).display(),
                dir.join("password").display()
            ),
        )
        .unwrap();
    };
    verified("client");
    let o = env.cmd(&["status"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("PostgreSQL says the same when the client certificate of sslcert is not the user's (its common name (CN) must be the user"),
        "{}",
        text(&o)
    );
    verified("client-full");
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(env.status()["deposits"].as_u64(), Some(1));
}

/// A catalog that cannot be reached: the error names the cause the driver found (its
/// own message is only "error connecting to server") and where to look.
#[test]
fn a_catalog_nobody_listens_for_is_reported_with_its_cause_and_where_to_look() {
    let env = Env::plain("catalog-refused", "http://127.0.0.1:9/feed.xml", "");
    let plain = without_catalog(&env);
    let port = crate::support::free_port();
    std::fs::write(
        &env.config,
        format!("{plain}\n[catalog]\nurl = \"postgres://plikt@127.0.0.1:{port}/plikt\"\n"),
    )
    .unwrap();
    let o = env.cmd(&["status"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("Connection refused")
            && stderr
                .contains("is it running, and listening at the host and port of [catalog] url?"),
        "{stderr}"
    );
}
