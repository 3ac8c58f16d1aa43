//! Whom plikt trusts over https: the system's certificate authorities (read once per
//! process, `fetch::system_roots`) and those of `extra_root_certificates`.

use crate::support::{Env, Response, Server, TestItem, date, feed, root, text};

/// An authority in the system's store (here `SSL_CERT_FILE`, which the system store
/// reader honours as OpenSSL does) is trusted without `extra_root_certificates`.
#[test]
fn an_authority_in_the_system_store_is_trusted() {
    let base: std::sync::Arc<std::sync::OnceLock<String>> = Default::default();
    let b2 = base.clone();
    let tls = Server::https(move |r| {
        let b = b2.get().unwrap();
        match r.path.as_str() {
            "/feed.xml" => Response::ok(feed(&[TestItem::new(
                "a",
                &date(1),
                &format!("{b}/a.html"),
            )
            .content(&format!("{b}/a.bin"), "application/octet-stream", b"bytes")])),
            "/a.bin" => Response::file(&b"bytes"[..], "application/octet-stream"),
            _ => Response::file("<html>a</html>", "text/html"),
        }
    });
    let _ = base.set(tls.url(""));
    let env = Env::new(
        "trust-system",
        &format!("feed = \"{}\"\nallow_private = true", tls.url("/feed.xml")),
        "retries = 0",
    )
    .with_env(
        "SSL_CERT_FILE",
        root().join("fixtures/tls/ca.pem").to_str().unwrap(),
    );
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(
        env.one("SELECT count(*) FROM files WHERE state = 'stored'"),
        "2",
        "{}",
        text(&o)
    );
}
