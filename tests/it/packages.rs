//! Resource Dump packages and their promised size: "ZIP packages … of at most
//! `[resourcesync] dump_package_bytes`" (README), counted as a Destination downloads
//! them, headers, records and manifest included.

use std::process::Command;
use std::sync::{Arc, OnceLock};

use crate::support::{Env, Response, Server, TestItem, date, feed, locs, noise, text};

const ITEMS: usize = 60;
const FILE: usize = 20_000;
const LIMIT: u64 = 400_000;

/// 60 items of a 20,000-byte file each (1.2 MB in all) in packages of at most
/// 400,000 bytes: every package is at most that, and together they hold every file
/// and record once (before, only the files' bytes were counted: 412–417 kB came out).
#[test]
fn every_dump_package_is_at_most_dump_package_bytes() {
    let base: Arc<OnceLock<String>> = Arc::default();
    let b2 = base.clone();
    let server = Server::with_handler(move |r| {
        let b = b2.get().unwrap();
        if r.path == "/feed.xml" {
            let items: Vec<TestItem> = (0..ITEMS)
                .map(|i| {
                    TestItem::new(
                        &format!("i{i}"),
                        &date(1000 - i as i64),
                        &format!("{b}/{i}.html"),
                    )
                    .content(
                        &format!("{b}/{i}.bin"),
                        "application/octet-stream",
                        &noise(FILE, i as u64),
                    )
                })
                .collect();
            return Response::ok(feed(&items));
        }
        let name = r.path.trim_start_matches('/');
        match name
            .strip_suffix(".bin")
            .and_then(|i| i.parse::<u64>().ok())
        {
            Some(i) => Response::file(noise(FILE, i), "application/octet-stream"),
            None => Response::file(format!("<html>{name}</html>"), "text/html"),
        }
    });
    let _ = base.set(server.url(""));
    let env = Env::plain("packages", &server.url("/feed.xml"), "");
    env.replace_in_config(
        "[harvest]\n",
        &format!("[resourcesync]\ndump_package_bytes = {LIMIT}\n[harvest]\n"),
    );
    assert_eq!(env.harvest().status.code(), Some(0));
    let o = env.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let dir = env.data().join("www/resourcesync/test");
    let dump = std::fs::read_to_string(dir.join("resourcedump.xml")).unwrap();
    let packages = locs(&dump);
    assert!(packages.len() >= 3, "{dump}");
    let mut entries = 0;
    for url in &packages {
        let zip = dir.join(url.split_once("/resourcesync/test/").unwrap().1);
        let size = std::fs::metadata(&zip).unwrap().len();
        assert!(
            size <= LIMIT,
            "{} is {size} bytes, over {LIMIT}",
            zip.display()
        );
        let list = Command::new("unzip")
            .arg("-Z1")
            .arg(&zip)
            .output()
            .expect("unzip: run scripts/setup");
        assert!(list.status.success(), "{}", text(&list));
        entries += String::from_utf8_lossy(&list.stdout)
            .lines()
            .filter(|l| *l != "manifest.xml")
            .count();
    }
    // A file, a page and a record per item.
    assert_eq!(entries, 3 * ITEMS);
}
