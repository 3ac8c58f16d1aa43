//! A sample publisher on loopback for trying plikt without the internet: serves the
//! bundled publishers in `fixtures/publishers/` (see its README), replacing `{{base}}`
//! in each `feed.xml` with the publisher's base URL. `bokforlaget` is behind HTTP Basic
//! auth (user `kb-harvest`, password from `PLIKT_SAMPLE_PASSWORD`).
//!
//! ```sh
//! PLIKT_SAMPLE_PASSWORD=… plikt-sample-publisher --listen 127.0.0.1:8081 --dir fixtures/publishers
//! ```

use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use clap::Parser;

/// Serves the bundled sample publishers on loopback.
#[derive(Debug, Parser)]
#[command(name = "plikt-sample-publisher", version)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8081")]
    listen: std::net::SocketAddr,
    /// Folder with one subfolder per publisher.
    #[arg(long, default_value = "fixtures/publishers")]
    dir: PathBuf,
}

#[derive(Debug)]
struct Sample {
    dir: PathBuf,
    base: String,
    password: Option<String>,
}

/// Publishers served behind Basic auth.
const PROTECTED: &[&str] = &["bokforlaget"];
const USER: &str = "kb-harvest";

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("plikt-sample-publisher: error: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    rt.block_on(async {
        let listener = match tokio::net::TcpListener::bind(args.listen).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!(
                    "plikt-sample-publisher: error: cannot listen on {}: {e}",
                    args.listen
                );
                return std::process::ExitCode::from(2);
            }
        };
        let addr = listener.local_addr().unwrap_or(args.listen);
        let state = Arc::new(Sample {
            dir: args.dir,
            base: format!("http://{addr}"),
            password: std::env::var("PLIKT_SAMPLE_PASSWORD").ok(),
        });
        let app = Router::new()
            .route("/{publisher}/feed.xml", get(feed))
            .route("/{publisher}/files/{name}", get(file))
            .with_state(state);
        eprintln!(
            "plikt-sample-publisher: serving on http://{addr}/ (dagbladet, bokforlaget, podden)"
        );
        let shutdown = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        match axum::serve(listener, app)
            .with_graceful_shutdown(shutdown)
            .await
        {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("plikt-sample-publisher: error: {e}");
                std::process::ExitCode::from(2)
            }
        }
    })
}

fn safe(name: &str) -> bool {
    !name.is_empty() && !name.starts_with('.') && !name.contains(['/', '\\'])
}

fn authorised(s: &Sample, publisher: &str, headers: &HeaderMap) -> bool {
    if !PROTECTED.contains(&publisher) {
        return true;
    }
    let Some(password) = &s.password else {
        return false;
    };
    let expected = plikt::server::basic_auth(USER, password);
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == expected)
}

fn unauthorised() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, "Basic realm=\"sample\"")],
        "authentication required\n",
    )
        .into_response()
}

async fn feed(
    State(s): State<Arc<Sample>>,
    Path(publisher): Path<String>,
    headers: HeaderMap,
) -> Response {
    if !safe(&publisher) {
        return StatusCode::NOT_FOUND.into_response();
    }
    if !authorised(&s, &publisher, &headers) {
        return unauthorised();
    }
    let Ok(text) = std::fs::read_to_string(s.dir.join(&publisher).join("feed.xml")) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let body = text.replace("{{base}}", &format!("{}/{publisher}", s.base));
    respond(
        &headers,
        body.into_bytes(),
        "application/rss+xml; charset=utf-8",
    )
}

async fn file(
    State(s): State<Arc<Sample>>,
    Path((publisher, name)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    if !safe(&publisher) || !safe(&name) {
        return StatusCode::NOT_FOUND.into_response();
    }
    if !authorised(&s, &publisher, &headers) {
        return unauthorised();
    }
    let Ok(bytes) = std::fs::read(s.dir.join(&publisher).join("files").join(&name)) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let mime = match name.rsplit('.').next().unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "pdf" => "application/pdf",
        "epub" => "application/epub+zip",
        "mp3" => "audio/mpeg",
        "xml" => "application/xml",
        _ => "application/octet-stream",
    };
    respond(&headers, bytes, mime)
}

/// 200 with an ETag, or 304 when the client already has these bytes.
fn respond(headers: &HeaderMap, body: Vec<u8>, mime: &str) -> Response {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    body.hash(&mut h);
    let etag = format!("\"{:016x}\"", h.finish());
    if headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == etag)
    {
        return (StatusCode::NOT_MODIFIED, [(header::ETAG, etag)]).into_response();
    }
    (
        [
            (header::CONTENT_TYPE, mime.to_string()),
            (header::ETAG, etag),
        ],
        body,
    )
        .into_response()
}
