//! The validation service end to end: `plikt serve` on loopback, a loopback publisher,
//! the CLI beside it, and the pages in a real browser (Debian's chromium through
//! chromium-driver, driven by selenium from `.venv`; axe-core from `.venv/npm`, both
//! installed by `scripts/setup`). A missing tool fails the test and says what to run.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use crate::support::{
    Env, Response, Server, Serving, fixture, free_port, plikt, post, python, root,
};

/// `plikt serve` with the validation service, allowed to fetch from loopback (the
/// publisher of the test), on a free port.
/// The deposit team's token in the servers these tests start (`[[operator]]`).
const OPERATOR_TOKEN: &str = "ops-token-for-the-dashboard-01234567";

fn serving(name: &str, web: &str) -> (Env, Serving) {
    let env = Env::new(name, "feed = \"https://unused.example/f.xml\"", "")
        .with_env("PLIKT_TEST_OPERATOR_TOKEN", OPERATOR_TOKEN);
    let port = free_port();
    let text = std::fs::read_to_string(&env.config).unwrap();
    let text = format!(
        "listen = \"127.0.0.1:{port}\"\nbase_url = \"http://127.0.0.1:{port}/\"\n{text}\n[web]\nallow_private = true\n{web}\n[[operator]]\nid = \"ops\"\ntoken_env = \"PLIKT_TEST_OPERATOR_TOKEN\"\n"
    );
    std::fs::write(&env.config, text).unwrap();
    let serving = Serving::start(&env, &format!("http://127.0.0.1:{port}/"));
    (env, serving)
}

/// `plikt validate ARGS` run in `dir`: its standard output.
fn cli(dir: &std::path::Path, args: &[&str]) -> Vec<u8> {
    let o = plikt().current_dir(dir).args(args).output().unwrap();
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{}",
        crate::support::text(&o)
    );
    o.stdout
}

#[test]
fn the_api_answers_the_clis_bytes_for_a_body_and_a_url() {
    let feed = fixture("sample-typical-mistakes.xml");
    let publisher = Server::start(vec![("/eplikt.xml", Response::ok(feed.clone()))]);
    let (_env, serving) = serving("web-api", "");
    let api = format!("{}api/validate", serving.base);
    let url = publisher.url("/eplikt.xml");
    let dir = root().join("fixtures/feeds");
    for format in ["json", "junit"] {
        // The body, as `plikt validate -` reads standard input.
        let (status, head, body) = post(
            &format!("{api}?format={format}"),
            "application/rss+xml",
            &feed,
        );
        assert_eq!(status, 200, "{head}");
        let o = plikt()
            .args(["validate", "--format", format, "-"])
            .stdin(std::fs::File::open(dir.join("sample-typical-mistakes.xml")).unwrap())
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&body),
            String::from_utf8_lossy(&o.stdout),
            "{format}, body"
        );
        // A URL, as `plikt validate URL` fetches it.
        let (status, head, body) = post(
            &format!("{api}?format={format}"),
            "application/json",
            format!("{{\"url\": \"{url}\"}}").as_bytes(),
        );
        assert_eq!(status, 200, "{head}");
        let want = cli(
            &dir,
            &["validate", "--allow-private", "--format", format, &url],
        );
        assert_eq!(
            String::from_utf8_lossy(&body),
            String::from_utf8_lossy(&want),
            "{format}, URL"
        );
    }
    // The publisher's feed was fetched by the service as by the CLI.
    assert_eq!(publisher.hits("/eplikt.xml").len(), 4);
}

#[test]
fn a_private_target_is_refused_unless_the_web_allows_it() {
    let publisher = Server::start(vec![(
        "/eplikt.xml",
        Response::ok(fixture("sample-typical-mistakes.xml")),
    )]);
    let env = Env::new("web-private", "feed = \"https://unused.example/f.xml\"", "");
    let port = free_port();
    let text = std::fs::read_to_string(&env.config).unwrap();
    std::fs::write(
        &env.config,
        format!("listen = \"127.0.0.1:{port}\"\nbase_url = \"http://127.0.0.1:{port}/\"\n{text}"),
    )
    .unwrap();
    let serving = Serving::start(&env, &format!("http://127.0.0.1:{port}/"));
    // A redirect from a public-looking hop is re-checked too: here every hop is private.
    let (status, _, body) = post(
        &format!("{}api/validate", serving.base),
        "application/json",
        format!("{{\"url\": \"{}\"}}", publisher.url("/eplikt.xml")).as_bytes(),
    );
    assert_eq!(status, 422, "{}", String::from_utf8_lossy(&body));
    assert!(
        String::from_utf8_lossy(&body).contains("loopback, private or link-local"),
        "{}",
        String::from_utf8_lossy(&body)
    );
    assert!(publisher.received().is_empty());
}

/// Where the browser tests' tools are; panics with what to run when one is missing.
fn tools() -> (PathBuf, PathBuf) {
    for tool in ["/usr/bin/chromium", "/usr/bin/chromedriver"] {
        assert!(
            std::path::Path::new(tool).exists(),
            "{tool} is missing: run scripts/setup (it installs Debian's chromium and chromium-driver)"
        );
    }
    let axe = root().join(".venv/npm/node_modules/axe-core/axe.min.js");
    assert!(
        axe.exists(),
        "{} is missing: run scripts/setup (it installs axe-core from npm)",
        axe.display()
    );
    let py = python();
    let selenium = Command::new(&py)
        .args(["-c", "import selenium"])
        .status()
        .unwrap();
    assert!(
        selenium.success(),
        "selenium is missing from .venv: run scripts/setup"
    );
    (py, axe)
}

#[test]
fn the_pages_work_in_a_real_browser_with_no_serious_accessibility_violation() {
    let (py, axe) = tools();
    let name = "sample-typical-mistakes.xml";
    let feed = fixture(name);
    let publisher = Server::start(vec![("/eplikt.xml", Response::ok(feed))]);
    let (_env, serving) = serving("web-browser", "");
    let shots = root().join("target/web-screenshots");
    let _ = std::fs::remove_dir_all(&shots);
    let feed_file = root().join("fixtures/feeds").join(name);
    let o = Command::new(py)
        .arg(root().join("tests/web/browser.py"))
        .args(["--base", &serving.base])
        .args(["--feed-url", &publisher.url("/eplikt.xml")])
        .arg("--feed-file")
        .arg(&feed_file)
        .arg("--axe")
        .arg(&axe)
        .arg("--screenshots")
        .arg(&shots)
        // The operators' dashboard, behind the operator's token.
        .args(["--dashboard", "/dashboard"])
        .args(["--operator-token", OPERATOR_TOKEN])
        .output()
        .unwrap();
    let out: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "browser.py printed no JSON ({e}):\n{}",
            crate::support::text(&o)
        )
    });
    assert!(
        out.get("failure").is_none(),
        "the browser test stopped: {out:#}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );

    // Swedish from Accept-Language, the skip link first, the switch to English and back.
    let checks = &out["checks"];
    assert_eq!(checks["start_lang"], "sv", "{checks}");
    assert_eq!(checks["start_links_validate"], true);
    assert_eq!(checks["first_tab"], "skip");
    assert_eq!(checks["switched_lang"], "en");
    assert_eq!(checks["switched_h1"], "Validate a feed");
    assert!(
        checks["switched_url"]
            .as_str()
            .unwrap()
            .ends_with("/validate"),
        "{checks}"
    );
    assert_eq!(checks["switched_back"], "sv");

    // Each of the three forms gives the CLI's verdict, findings grouped by item.
    let json = String::from_utf8(cli(
        &root().join("fixtures/feeds"),
        &["validate", "--format", "json", name],
    ))
    .unwrap();
    let want: Value = serde_json::from_str(&json).unwrap();
    let want_rules: Vec<&str> = want["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    for form in ["url", "file", "xml"] {
        let r = &out[form];
        assert_eq!(
            r["verdict"], "The feed is not valid for KB profile 2.4",
            "{form}"
        );
        assert!(
            r["counts"].as_str().unwrap().contains("6 errors"),
            "{form}: {r}"
        );
        let mut rules: Vec<&str> = r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["rule"].as_str().unwrap())
            .collect();
        let mut sorted = want_rules.clone();
        rules.sort_unstable();
        sorted.sort_unstable();
        assert_eq!(rules, sorted, "{form}");
        assert_eq!(
            r["groups"],
            serde_json::json!([
                "The feed and its channel",
                "Kulturhuset i Växjö får ny scen",
                "Isen släpper på Helgasjön"
            ]),
            "{form}"
        );
        // Every finding with a position marks the spot in its source line.
        for f in r["findings"].as_array().unwrap() {
            assert_eq!(f["marked"], serde_json::json!(["<"]), "{form}: {f}");
            assert!(f["href"].as_str().unwrap().contains("/rules/"), "{f}");
        }
    }
    // The downloads are the CLI's bytes: the upload is named as the file, like
    // `plikt validate NAME` in its folder.
    assert_eq!(out["file"]["source"], name);
    assert_eq!(out["file"]["downloads"]["json"].as_str().unwrap(), json);
    let junit = String::from_utf8(cli(
        &root().join("fixtures/feeds"),
        &["validate", "--format", "junit", name],
    ))
    .unwrap();
    assert_eq!(out["file"]["downloads"]["junit"].as_str().unwrap(), junit);
    assert_eq!(out["xml"]["source"], "-");
    // Issue 16 §3: back in Swedish, the same findings with their messages in Swedish.
    let (en, sv) = (&out["xml"]["findings"], &out["xml_sv"]["findings"]);
    assert_eq!(
        out["xml_sv"]["verdict"],
        "Flödet är inte giltigt enligt KB:s profil 2.4"
    );
    let pairs: Vec<(&Value, &Value)> = en
        .as_array()
        .unwrap()
        .iter()
        .zip(sv.as_array().unwrap())
        .collect();
    assert_eq!(pairs.len(), en.as_array().unwrap().len());
    for (e, s) in pairs {
        assert_eq!(e["rule"], s["rule"]);
        assert_ne!(e["message"], s["message"], "{e} / {s}");
    }
    assert!(
        sv.as_array()
            .unwrap()
            .iter()
            .any(|f| f["message"].as_str().unwrap().contains(" ska ")),
        "{sv}"
    );

    // The rule link leads to the rule's page with its clause and examples.
    let rule = &out["rule_page"];
    assert!(
        rule["url"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/rules/{}", rule["rule"].as_str().unwrap())),
        "{rule}"
    );
    assert_eq!(rule["h1"], rule["rule"]);
    assert!(!rule["clause"].as_str().unwrap().is_empty(), "{rule}");
    assert!(!rule["incorrect"].as_str().unwrap().is_empty(), "{rule}");
    assert_eq!(
        out["rules_listed"].as_array().unwrap().len(),
        plikt::profile::RuleId::ALL.len()
    );
    assert!(
        out["error"]
            .as_str()
            .unwrap()
            .contains("could not be fetched"),
        "{}",
        out["error"]
    );

    // axe-core on every page: no serious or critical violation.
    let mut serious = Vec::new();
    for (page, violations) in out["axe"].as_object().unwrap() {
        for v in violations.as_array().unwrap() {
            if matches!(v["impact"].as_str(), Some("serious" | "critical")) {
                serious.push(format!("{page}: {v}"));
            }
        }
    }
    assert!(serious.is_empty(), "{}", serious.join("\n"));
    let pages: Vec<&str> = out["pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    for want in [
        "start-sv",
        "validate-en",
        "report-url",
        "rule",
        "rules",
        "report-file",
        "report-xml",
        "error",
    ] {
        assert!(pages.contains(&want), "{want} not visited: {pages:?}");
        assert!(
            shots.join(format!("{want}.png")).exists(),
            "no screenshot of {want}"
        );
    }
    // The operators' dashboard: refused without the token, loaded with it (the
    // browser sends it), checked by axe like the others, every publisher listed.
    assert_eq!(out["dashboard"], "/dashboard", "{out:#}");
    assert!(pages.contains(&"dashboard"), "{pages:?}");
    assert_eq!(out["checks"]["dashboard_without_token"], 401, "{out:#}");
    assert!(
        out["checks"]["dashboard_h1"]
            .as_str()
            .is_some_and(|h| h == "Insamlingsöversikt"),
        "{out:#}"
    );
    assert_eq!(
        out["checks"]["dashboard_publishers"],
        serde_json::json!(["test"])
    );
    assert!(
        shots.join("dashboard.png").exists(),
        "no screenshot of the dashboard"
    );
}
