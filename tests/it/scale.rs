//! Many publishers (issue 35 §6): what a publisher costs is its own work, not its place
//! behind the others.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::support::{Env, Response, Server, TestItem, date, feed, text};

/// A host with `n` publishers: `/<p>/feed.xml` has one item whose link is
/// `/<p>/page.html` and whose file is `/<p>/file.bin`; every answer `delay` late.
fn one_host(n: usize, delay: Duration) -> Server {
    let base: Arc<OnceLock<String>> = Arc::default();
    let b2 = base.clone();
    let server = Server::with_handler(move |r| {
        std::thread::sleep(delay);
        let mut parts = r.path.trim_start_matches('/').splitn(2, '/');
        let (Some(Ok(p)), Some(name)) = (parts.next().map(str::parse::<usize>), parts.next())
        else {
            return Response::status(404);
        };
        let base = b2.get().unwrap();
        match name {
            "feed.xml" if p < n => Response::ok(feed(&[TestItem::new(
                &format!("p{p}-0"),
                &date(1000),
                &format!("{base}/{p}/page.html"),
            )
            .content(
                &format!("{base}/{p}/file.bin"),
                "application/octet-stream",
                format!("file of publisher {p}").as_bytes(),
            )])),
            "page.html" => Response::file(format!("<html><body>{p}</body></html>"), "text/html"),
            "file.bin" => {
                Response::file(format!("file of publisher {p}"), "application/octet-stream")
            }
            _ => Response::status(404),
        }
    });
    let _ = base.set(server.url(""));
    server
}

/// 200 publishers on one host, one connection to it at a time, 2 s for each transfer,
/// every run started at once: 600 requests of 10 ms queue for 6 s behind plikt's own
/// per-host limit. The time limit starts when a request is sent, so every run
/// succeeds (before, the runs at the back of the queue failed with "the transfer took
/// longer than the limit of 2 s").
#[test]
fn many_publishers_on_one_host_never_time_out_waiting_for_plikts_own_slots() {
    const N: usize = 200;
    let server = one_host(N, Duration::from_millis(10));
    let env = Env::plain(
        "scale-one-host",
        &server.url("/0/feed.xml"),
        "max_connections = 8\nmax_connections_per_host = 1\ntotal_timeout_secs = 2",
    )
    // 200 runs at once would take more PostgreSQL connections than the shared test
    // cluster has; what is tested is the HTTP side.
    .on_sqlite();
    env.replace_in_config(
        "[harvest]\n",
        &format!("[harvest]\nruns_per_worker = {N}\n"),
    );
    let mut publishers = String::new();
    for p in 1..N {
        publishers.push_str(&format!(
            "\n[[publisher]]\nid = \"p{p}\"\nname = \"Förlag {p}\"\nschedule = \"0 0 3 * * *\"\nfeed = \"{}\"\nhttps_only = false\nallow_private = true\n",
            server.url(&format!("/{p}/feed.xml"))
        ));
    }
    let env = env.with_config(&publishers);
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(
        env.one("SELECT count(*) FROM versions WHERE state = 'deposited'"),
        N.to_string(),
        "{}",
        text(&o)
    );
}
