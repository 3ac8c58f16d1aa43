//! The validation service in-process (`tower::ServiceExt::oneshot`): answers, limits,
//! escaping and the language switch, without a socket. The browser tests
//! (`tests/it/web.rs`) drive the same pages in Chromium.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use tower::ServiceExt;

use crate::config::Config;
use crate::profile::RuleId;
use crate::server::{AppState, app};

fn service(name: &str, web: &str) -> (Router, tempfile::TempDir) {
    let tmp = tempfile::Builder::new()
        .prefix(&format!("plikt-web-{name}-"))
        .tempdir()
        .unwrap();
    let dir = tmp.path();
    let text = format!("data_dir = \"{}\"\n[web]\n{web}\n", dir.display());
    let config = Config::parse(&text, std::path::Path::new("t.toml"), dir, &|_| None).unwrap();
    let state = AppState::open(Arc::new(config)).unwrap();
    (app(state), tmp)
}

async fn send(app: &Router, req: Request<Body>) -> (StatusCode, http::HeaderMap, String) {
    let r = app.clone().oneshot(req).await.unwrap();
    let (parts, body) = r.into_parts();
    let bytes = body.collect().await.unwrap().to_bytes();
    (
        parts.status,
        parts.headers,
        String::from_utf8_lossy(&bytes).into_owned(),
    )
}

fn get(uri: &str) -> Request<Body> {
    Request::get(uri).body(Body::empty()).unwrap()
}

const BOUNDARY: &str = "plikt-test-boundary";

/// A multipart/form-data POST of `/validate`: (name, file name, value).
fn form(fields: &[(&str, Option<&str>, &[u8])]) -> Request<Body> {
    let mut body = Vec::new();
    for (name, file, value) in fields {
        body.extend_from_slice(format!("--{BOUNDARY}\r\n").as_bytes());
        match file {
            Some(f) => body.extend_from_slice(
                format!("Content-Disposition: form-data; name=\"{name}\"; filename=\"{f}\"\r\nContent-Type: application/xml\r\n\r\n").as_bytes(),
            ),
            None => body.extend_from_slice(
                format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n").as_bytes(),
            ),
        }
        body.extend_from_slice(value);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    Request::post("/validate")
        .header(
            header::CONTENT_TYPE,
            format!("multipart/form-data; boundary={BOUNDARY}"),
        )
        .header(header::ACCEPT_LANGUAGE, "en")
        .body(Body::from(body))
        .unwrap()
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/feeds")
            .join(name),
    )
    .unwrap()
}

/// A feed with `<script>` in every field that reaches a report: the file name (source),
/// title, guid, the values quoted in messages, and the source lines.
const HOSTILE: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:dcterms="http://purl.org/dc/terms/">
  <channel>
    <title>&lt;script&gt;alert(1)&lt;/script&gt;</title>
    <link>javascript:alert(1)</link>
    <description>Twice</description>
    <description><![CDATA[<script>alert(2)</script>]]></description>
    <item>
      <title><![CDATA[<script>alert(3)</script>]]></title>
      <guid><![CDATA[<script>alert(4)</script>]]></guid>
      <link><![CDATA[<script>alert(5)</script>]]></link>
      <pubDate><![CDATA[<script>alert(6)</script>]]></pubDate>
      <dcterms:publisher><![CDATA[<script>alert(7)</script>]]></dcterms:publisher>
      <dcterms:accessRights><![CDATA["><script>alert(8)</script>]]></dcterms:accessRights>
      <dcterms:format><![CDATA['><img src=x onerror=alert(9)>]]></dcterms:format>
    </item>
  </channel>
</rss>
"#;

#[tokio::test]
async fn script_in_every_field_of_a_report_is_escaped() {
    let (app, _dir) = service("escape", "");
    let (status, headers, body) = send(
        &app,
        form(&[
            (
                "file",
                Some("<script>alert(0)</script>.xml"),
                HOSTILE.as_bytes(),
            ),
            ("format", None, b"html"),
        ]),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains("The feed is not valid"), "{body}");
    // Every value came through, escaped; nothing became markup.
    // (The channel's title and link are in no finding, so in no report.)
    for n in [0, 2, 3, 4, 5, 6, 7, 8, 9] {
        assert!(
            body.contains(&format!("alert({n})")),
            "alert({n}) missing:\n{body}"
        );
    }
    assert!(!body.to_lowercase().contains("<script"), "{body}");
    assert!(!body.contains("<img"), "{body}");
    assert!(body.contains("&#60;script&#62;alert(0)"), "{body}");
    let csp = headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
    assert!(csp.contains("default-src 'none'"), "{csp}");
    // The API: JSON is the CLI's bytes (strings hold `<` as it is), served as
    // application/json with nosniff, never as HTML; JUnit escapes it as XML.
    for format in ["json", "junit"] {
        let (status, headers, body) = send(
            &app,
            Request::post(format!("/api/validate?format={format}"))
                .body(Body::from(HOSTILE))
                .unwrap(),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        if format == "json" {
            assert_eq!(headers[header::CONTENT_TYPE], "application/json");
            let doc: serde_json::Value = serde_json::from_str(&body).unwrap();
            assert!(
                doc["findings"].to_string().contains("<script>alert(4)"),
                "{body}"
            );
        } else {
            assert!(!body.contains("<script"), "{format}: {body}");
        }
    }
}

#[tokio::test]
async fn the_api_answers_the_cli_document_and_the_page_groups_by_item() {
    let (app, _dir) = service("api", "");
    let feed = fixture("sample-typical-mistakes.xml");
    let (status, headers, body) = send(
        &app,
        Request::post("/api/validate")
            .header(header::CONTENT_TYPE, "application/rss+xml")
            .body(Body::from(feed.clone()))
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(headers[header::CONTENT_TYPE], "application/json");
    let doc: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(doc["source"], "-");
    assert_eq!(doc["valid"], false);
    assert_eq!(doc["errors"], 6);
    // The page: verdict, counts, the item's title and guid, the marked source line, a
    // link to the rule, and both downloads.
    let (status, _, page) = send(&app, form(&[("xml", None, &feed)])).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    for want in [
        "The feed is not valid for KB profile 2.4",
        "6 errors",
        "1 warning",
        "in 2 items",
        "Kulturhuset",
        "https://www.smalandsbladet.se/kultur/2025/03/14/kulturhuset-ny-scen",
        "<mark>&#60;</mark>pubDate&#62;Fri, 14 Mar 2025 09:12:00 CET",
        "href=\"/rules/R103\"",
        "line 15, column 7",
        "id=\"download-json\"",
        "id=\"download-junit\"",
    ] {
        assert!(page.contains(want), "`{want}` missing:\n{page}");
    }
    // The JSON download is the API's document, byte for byte.
    let start = page.find("data:application/json;base64,").unwrap() + 29;
    let end = start + page[start..].find('"').unwrap();
    use base64::Engine as _;
    let json = base64::engine::general_purpose::STANDARD
        .decode(&page[start..end])
        .unwrap();
    assert_eq!(String::from_utf8(json).unwrap(), body);
    // The form's JSON format is a download of the same bytes.
    let (status, headers, download) = send(
        &app,
        form(&[("xml", None, &feed), ("format", None, b"json")]),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        headers[header::CONTENT_DISPOSITION]
            .to_str()
            .unwrap()
            .starts_with("attachment"),
    );
    assert_eq!(download, body);
}

/// Issue 16 §3: the page shows finding messages and rule texts in its language; the
/// API answers English unless `Accept-Language` asks for Swedish.
#[tokio::test]
async fn finding_messages_follow_the_language_of_the_page_and_the_api() {
    let (app, _dir) = service("languages", "");
    let feed = fixture("r107-free.xml");
    let sv_message = "accessRights ska vara exakt <code>gratis</code> eller <code>restricted</code>; här står <code>free</code>";
    let en_message = "accessRights must be exactly <code>gratis</code> or <code>restricted</code>; found <code>free</code>";
    let page = |lang: Option<&'static str>| {
        let mut r = form(&[("xml", None, &feed)]);
        if let Some(l) = lang {
            r.headers_mut()
                .insert(header::ACCEPT_LANGUAGE, l.parse().unwrap());
        }
        send(&app, r)
    };
    let (status, _, sv) = page(Some("sv-SE,sv;q=0.9")).await;
    assert_eq!(status, StatusCode::OK, "{sv}");
    assert!(sv.contains(sv_message), "{sv}");
    assert!(
        sv.contains("obligatoriskt, en gång"),
        "the rule's text in Swedish: {sv}"
    );
    assert!(!sv.contains(en_message));
    let (_, _, en) = page(Some("en-GB,en;q=0.9")).await;
    assert!(en.contains(en_message), "{en}");
    assert!(en.contains("mandatory, once"), "{en}");
    let api = |lang: Option<&'static str>| {
        let mut r = Request::post("/api/validate")
            .body(Body::from(feed.clone()))
            .unwrap();
        if let Some(l) = lang {
            r.headers_mut()
                .insert(header::ACCEPT_LANGUAGE, l.parse().unwrap());
        }
        send(&app, r)
    };
    let message = |body: &str| {
        let doc: serde_json::Value = serde_json::from_str(body).unwrap();
        doc["findings"][0]["message"].as_str().unwrap().to_string()
    };
    let (_, _, default) = api(None).await;
    assert_eq!(
        message(&default),
        "accessRights must be exactly `gratis` or `restricted`; found `free` (`gratis`: free to read when published)"
    );
    let (_, _, swedish) = api(Some("sv")).await;
    assert_eq!(
        message(&swedish),
        "accessRights ska vara exakt `gratis` eller `restricted`; här står `free` (`gratis`: fritt att läsa vid publiceringen)"
    );
    // The rule pages in both languages.
    let (_, _, rule_sv) = send(&app, get("/rules/R107")).await;
    assert!(rule_sv.contains("obligatoriskt, en gång"), "{rule_sv}");
    let mut r = get("/rules/R107");
    r.headers_mut()
        .insert(header::ACCEPT_LANGUAGE, "en".parse().unwrap());
    let (_, _, rule_en) = send(&app, r).await;
    assert!(rule_en.contains("mandatory, once"), "{rule_en}");
}

#[tokio::test]
async fn bombs_and_hostile_feeds_get_a_finding() {
    let (app, _dir) = service("bombs", "");
    // A billion laughs: ten levels of ten references each, 10^10 "lol"s when
    // expanded. A small internal entity is well-formed XML and expands; this one
    // must stop at the amplification limit with a G-XML finding.
    let mut entities = String::from("<!ENTITY lol0 \"lol\">");
    for level in 1..=10 {
        let refs = format!("&lol{};", level - 1).repeat(10);
        entities.push_str(&format!("<!ENTITY lol{level} \"{refs}\">"));
    }
    let laughs = format!(
        "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [{entities}]>\n\
         <rss version=\"2.0\"><channel><title>&lol10;</title></channel></rss>"
    );
    let deep = format!("<rss version=\"2.0\">{}", "<a>".repeat(100_000));
    let binary: Vec<u8> = (0..=255u8).cycle().take(100_000).collect();
    for feed in [laughs.into_bytes(), deep.into_bytes(), binary, Vec::new()] {
        let (status, _, body) = send(
            &app,
            Request::post("/api/validate")
                .body(Body::from(feed))
                .unwrap(),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let doc: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(doc["findings"][0]["rule"], "G-XML", "{body}");
    }
}

#[tokio::test]
async fn limits_answer_with_a_status_that_says_what_to_do() {
    let (app, _dir) = service(
        "limits",
        "max_bytes = 1000\nrate_per_minute = 1\nrate_burst = 2",
    );
    // Larger than max_bytes, counted while streaming: 413.
    let (status, _, body) = send(
        &app,
        Request::post("/api/validate")
            .header(header::ACCEPT_LANGUAGE, "en")
            .body(Body::from(vec![b' '; 5000]))
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert!(body.contains("larger than 1000 bytes"), "{body}");
    // A private target is refused through the harvester's policy: 422.
    let (status, _, body) = send(
        &app,
        Request::post("/api/validate")
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT_LANGUAGE, "en")
            .body(Body::from(r#"{"url": "http://127.0.0.1:9/feed.xml"}"#))
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body.contains("only public addresses"), "{body}");
    // The bucket held 2: the third request is 429 with Retry-After, in Swedish too.
    let (status, headers, body) = send(&app, form(&[("url", None, b"http://[::1]/")])).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    let after: u64 = headers[header::RETRY_AFTER]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&after), "{after}");
    assert!(body.contains("Try again in"), "{body}");
    assert!(body.contains("role=\"alert\""), "{body}");
    let (status, _, body) = send(
        &app,
        Request::post("/api/validate")
            .header(header::ACCEPT_LANGUAGE, "sv")
            .body(Body::from("x"))
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert!(body.contains("Försök igen om"), "{body}");
    // Pages are not rate limited.
    assert_eq!(send(&app, get("/validate")).await.0, StatusCode::OK);
}

#[tokio::test]
async fn wrong_requests_are_400_or_415() {
    let (app, _dir) = service("wrong", "");
    let (status, _, body) = send(&app, form(&[("url", None, b"")])).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body.contains("Give a feed"), "{body}");
    let (status, _, body) = send(&app, form(&[("url", None, b"ftp://x.example/f.xml")])).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, _, _) = send(
        &app,
        Request::post("/validate")
            .header(header::CONTENT_TYPE, "text/plain")
            .body(Body::from("x"))
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let (status, _, body) = send(
        &app,
        Request::post("/api/validate?format=pdf")
            .body(Body::from("x"))
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, _, body) = send(
        &app,
        Request::post("/api/validate")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(r#"{"uri": "https://x.example/"}"#))
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}

#[tokio::test]
async fn every_rule_has_a_page_and_the_list_links_them_all() {
    let (app, _dir) = service("rules", "");
    let (status, _, list) = send(&app, get("/rules")).await;
    assert_eq!(status, StatusCode::OK);
    for rule in RuleId::ALL {
        let href = format!("href=\"/rules/{}\"", rule.as_str());
        assert!(list.contains(&href), "{href}");
        let (status, _, page) = send(&app, get(&format!("/rules/{}", rule.as_str()))).await;
        assert_eq!(status, StatusCode::OK, "{rule}");
        // The rule's text (the CLI's help line), its quoted parts as code.
        for (i, run) in rule.summary(crate::i18n::Lang::Sv).split('`').enumerate() {
            let want = if i % 2 == 1 {
                format!("<code>{}</code>", escape(run))
            } else {
                escape(run)
            };
            assert!(page.contains(&want), "{rule}: `{want}` missing: {page}");
        }
        if !rule.is_harvest_time() {
            assert!(page.contains("class=\"reported\""), "{rule}: {page}");
        }
    }
    assert_eq!(
        send(&app, get("/rules/R999")).await.0,
        StatusCode::NOT_FOUND
    );
}

fn escape(s: &str) -> String {
    s.replace('&', "&#38;")
        .replace('<', "&#60;")
        .replace('>', "&#62;")
        .replace('"', "&#34;")
        .replace('\'', "&#39;")
}

#[tokio::test]
async fn the_language_switch_sets_a_cookie_and_goes_back_only_to_this_site() {
    let (app, _dir) = service("lang", "");
    let (_, _, sv) = send(&app, get("/validate")).await;
    assert!(sv.contains("<html lang=\"sv\">") && sv.contains("Validera ett flöde"));
    assert!(sv.contains("href=\"/lang/en?next=%2Fvalidate\""), "{sv}");
    let (status, headers, _) = send(&app, get("/lang/en?next=%2Fvalidate")).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(headers[header::LOCATION], "/validate");
    let cookie = headers[header::SET_COOKIE].to_str().unwrap();
    assert!(cookie.starts_with("plikt-lang=en;"), "{cookie}");
    let (_, _, en) = send(
        &app,
        Request::get("/validate")
            .header(header::COOKIE, "plikt-lang=en")
            .header(header::ACCEPT_LANGUAGE, "sv")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert!(en.contains("<html lang=\"en\">") && en.contains("Validate a feed"));
    for next in ["//evil.example/", "https://evil.example/", "/\\evil"] {
        let uri = format!(
            "/lang/sv?next={}",
            percent_encoding::utf8_percent_encode(next, percent_encoding::NON_ALPHANUMERIC)
        );
        let (_, headers, _) = send(&app, get(&uri)).await;
        assert_eq!(headers[header::LOCATION], "/", "{next}");
    }
}

#[tokio::test]
async fn an_upload_that_never_ends_is_stopped_at_the_time_limit() {
    let (app, _dir) = service("slow", "timeout_secs = 1");
    let endless = futures_util::stream::unfold((), |()| async {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        Some((Ok::<_, std::io::Error>(bytes::Bytes::from_static(b" ")), ()))
    });
    let started = std::time::Instant::now();
    let (status, headers, body) = send(
        &app,
        Request::post("/api/validate")
            .header(header::ACCEPT_LANGUAGE, "en")
            .body(Body::from_stream(endless))
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert!(body.contains("longer than one second"), "{body}");
    assert!(headers.contains_key(header::RETRY_AFTER));
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}

#[tokio::test]
async fn a_report_of_thousands_of_findings_is_summarised_grouped_and_folded() {
    let (app, _dir) = service("large", "");
    let mut feed = String::from(
        "<?xml version=\"1.0\"?>\n<rss version=\"2.0\" xmlns:dcterms=\"http://purl.org/dc/terms/\"><channel><title>T</title><link>https://t.example/</link><description>D</description>\n",
    );
    for i in 0..3000 {
        feed.push_str(&format!(
            "<item><title>Artikel {i}</title><link>https://t.example/{i}</link><guid>g{i}</guid><pubDate>Fri, 14 Mar 2025 09:12:00 +0100</pubDate><dcterms:publisher>SE556</dcterms:publisher><dcterms:accessRights>gratis</dcterms:accessRights><dcterms:format>text/html</dcterms:format></item>\n"
        ));
    }
    feed.push_str("</channel></rss>\n");
    let (status, _, page) = send(&app, form(&[("xml", None, feed.as_bytes())])).await;
    assert_eq!(status, StatusCode::OK);
    // The summary first: 3000 R104 errors (and 3000 R101a, R108 warnings), by rule.
    let summary = page.find("id=\"counts\"").unwrap();
    let groups = page.find("id=\"by-item\"").unwrap();
    assert!(summary < page.find("id=\"by-rule\"").unwrap() && summary < groups);
    assert!(
        page.contains("3000 errors"),
        "{}",
        &page[summary..summary + 400]
    );
    // Kept as the CLI keeps them (1,000 per rule and severity), at most 2,000 shown,
    // the first groups unfolded and the rest folded.
    assert_eq!(page.matches("<li class=\"finding ").count(), 2000);
    assert_eq!(page.matches("<details class=\"group\" open>").count(), 12);
    assert!(
        page.contains("more findings are not shown on this page"),
        "notes"
    );
    assert!(
        page.contains("more findings were counted but not kept"),
        "notes"
    );
    assert!(page.contains("Artikel 0") && page.contains("Artikel 499"));
}

#[tokio::test]
async fn requests_beyond_max_requests_are_503_at_once() {
    let (app, _dir) = service("busy", "max_requests = 1\ntimeout_secs = 30");
    // One upload in progress that takes its time.
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let slow = futures_util::stream::once(async move {
        let _ = rx.await;
        Ok::<_, std::io::Error>(bytes::Bytes::from_static(b"<rss/>"))
    });
    let app2 = app.clone();
    let first = tokio::spawn(async move {
        send(
            &app2,
            Request::post("/api/validate")
                .body(Body::from_stream(slow))
                .unwrap(),
        )
        .await
    });
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let (status, headers, body) = send(
        &app,
        Request::post("/api/validate")
            .header(header::ACCEPT_LANGUAGE, "en")
            .body(Body::from("<rss/>"))
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert!(
        body.contains("Too many validations are in progress"),
        "{body}"
    );
    assert!(headers.contains_key(header::RETRY_AFTER));
    tx.send(()).unwrap();
    let (status, _, body) = first.await.unwrap();
    assert_eq!(status, StatusCode::OK, "{body}");
    // The slot is free again.
    let (status, _, _) = send(
        &app,
        Request::post("/api/validate")
            .body(Body::from("<rss/>"))
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn the_dashboard_is_for_operators_and_escapes_what_it_shows() {
    let tmp = tempfile::Builder::new()
        .prefix("plikt-web-dash-")
        .tempdir()
        .unwrap();
    let dir = tmp.path();
    let text = format!(
        "data_dir = \"{}\"\n[[operator]]\nid = \"ops\"\ntoken_env = \"OPS\"\n[[publisher]]\nid = \"x\"\nname = \"<script>alert(1)</script>\"\nfeed = \"https://x.example/f.xml\"\nschedule = \"0 0 3 * * *\"\n",
        dir.display()
    );
    let env = |v: &str| (v == "OPS").then(|| "tok-0123456789abcdef0123456789abcdef".to_string());
    let config = Config::parse(&text, std::path::Path::new("t.toml"), dir, &env).unwrap();
    let app = app(AppState::open(Arc::new(config)).unwrap());
    let (status, headers, _) = send(&app, get("/dashboard")).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(
        headers
            .get_all(header::WWW_AUTHENTICATE)
            .iter()
            .any(|v| v.to_str().unwrap().starts_with("Basic")),
        "{headers:?}"
    );
    let req = Request::get("/dashboard")
        .header(
            header::AUTHORIZATION,
            "Bearer tok-0123456789abcdef0123456789abcdef",
        )
        .header(header::ACCEPT_LANGUAGE, "en")
        .body(Body::empty())
        .unwrap();
    let (status, _, page) = send(&app, req).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(!page.contains("<script>"), "{page}");
    assert!(
        page.contains("&#60;script&#62;alert(1)&#60;/script&#62;"),
        "{page}"
    );
    assert!(
        page.contains("Harvest dashboard") && page.contains("not yet run"),
        "{page}"
    );
    // Three charts, each an image with a title, each with its 30 days in a table.
    assert_eq!(page.matches("<svg class=\"chart\"").count(), 3, "{page}");
    assert_eq!(page.matches("role=\"img\"").count(), 3, "{page}");
    assert_eq!(page.matches("<tr><td>").count(), 90, "{page}");
}
