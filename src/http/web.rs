//! The bundled web client: the files of `web/`, embedded in the binary at
//! compile time and served at `/` (the page) and `/web/…` (its styles,
//! scripts and icon). They are not part of the API, so they are registered on
//! the plain actix `App`, outside the OpenAPI document.
//!
//! Every response carries a strong `ETag` (a hash of the file) and
//! `Cache-Control: no-cache`: browsers keep the files but ask again on each
//! load, and get `304 Not Modified` until the server is upgraded. An unknown
//! path under `/web/` is the usual `404` problem.
//!
//! For work on the client, `UTTT_WEB_DIR=web` serves the files from that
//! folder instead, read on every request (`Cache-Control: no-store`), so an
//! edit shows on reload without rebuilding the server. Never set it in
//! production.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, guard, web};
use sha2::{Digest, Sha256};

use super::problem::Problem;

/// Where the client's assets are served.
pub const PREFIX: &str = "/web/";

/// The content security policy of the page: nothing but this server.
const CSP: &str = "default-src 'self'; img-src 'self' data:; style-src 'self'; \
                   script-src 'self'; connect-src 'self'; object-src 'none'; \
                   base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// One embedded file.
struct Asset {
    /// Its path under `web/`.
    path: &'static str,
    body: &'static [u8],
}

macro_rules! assets {
    ($($path:literal),* $(,)?) => {
        &[$(Asset {
            path: $path,
            body: include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/web/", $path)),
        }),*]
    };
}

/// Every file the client needs (a unit test checks that none is missing).
static ASSETS: &[Asset] = assets![
    "index.html",
    "favicon.svg",
    "css/app.css",
    "js/analysis.js",
    "js/api.js",
    "js/app.js",
    "js/auth.js",
    "js/board.js",
    "js/challenges.js",
    "js/chart.js",
    "js/clock.js",
    "js/dom.js",
    "js/lag.js",
    "js/ladders.js",
    "js/live.js",
    "js/lobby.js",
    "js/match-actions.js",
    "js/match.js",
    "js/profile.js",
    "js/queue.js",
    "js/room.js",
    "js/session.js",
    "js/tournament.js",
    "js/tournaments.js",
    "js/tree.js",
];

/// The page's routes: `/` and `/web/{path}`, for `GET` and `HEAD`.
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/")
            .route(web::route().guard(readable()).to(index))
            .default_service(web::to(wrong_method)),
    )
    .service(
        web::resource("/web/{path:.*}")
            .route(web::route().guard(readable()).to(asset))
            .default_service(web::to(wrong_method)),
    );
}

fn readable() -> impl guard::Guard {
    guard::Any(guard::Get()).or(guard::Head())
}

async fn wrong_method() -> Result<HttpResponse, Problem> {
    Err(Problem::method_not_allowed(&["GET", "HEAD"]))
}

async fn index(req: HttpRequest) -> Result<HttpResponse, Problem> {
    serve(&req, "index.html")
}

async fn asset(req: HttpRequest, path: web::Path<String>) -> Result<HttpResponse, Problem> {
    if path.as_str() == "index.html" {
        // One address for the page: `/`.
        return Err(Problem::no_route(req.path()));
    }
    serve(&req, &path)
}

fn serve(req: &HttpRequest, path: &str) -> Result<HttpResponse, Problem> {
    if let Some(dir) = dev_dir() {
        return serve_from_disk(req, dir, path);
    }
    let Some((index, asset)) = ASSETS.iter().enumerate().find(|(_, a)| a.path == path) else {
        return Err(Problem::no_route(req.path()));
    };
    let etag = &etags()[index];
    let unchanged = not_modified(req, etag);
    let mut res = if unchanged {
        HttpResponse::NotModified()
    } else {
        HttpResponse::Ok()
    };
    res.insert_header((header::CONTENT_TYPE, content_type(path)))
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header((header::ETAG, etag.as_str()));
    common_headers(&mut res, path);
    if unchanged {
        return Ok(res.finish());
    }
    Ok(res.body(asset.body))
}

fn common_headers(res: &mut actix_web::HttpResponseBuilder, path: &str) {
    res.insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::REFERRER_POLICY, "same-origin"));
    if path.ends_with(".html") {
        res.insert_header((header::CONTENT_SECURITY_POLICY, CSP))
            .insert_header((header::X_FRAME_OPTIONS, "DENY"));
    }
}

/// The strong entity tag of each embedded file, in the order of [`ASSETS`].
fn etags() -> &'static [String] {
    static TAGS: OnceLock<Vec<String>> = OnceLock::new();
    TAGS.get_or_init(|| ASSETS.iter().map(|a| etag_of(a.body)).collect())
}

fn etag_of(body: &[u8]) -> String {
    let digest = Sha256::digest(body);
    let hex: String = digest.iter().take(12).map(|b| format!("{b:02x}")).collect();
    format!("\"{hex}\"")
}

/// Whether the request's `If-None-Match` names `etag` (weak comparison, as RFC 9110 asks).
fn not_modified(req: &HttpRequest, etag: &str) -> bool {
    let Some(value) = req
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    value
        .split(',')
        .map(str::trim)
        .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == etag)
}

/// The `Content-Type` of a file, by its extension.
fn content_type(path: &str) -> HeaderValue {
    let ext = Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("");
    HeaderValue::from_static(match ext {
        "html" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    })
}

/// The folder of `UTTT_WEB_DIR`, when set (development only).
fn dev_dir() -> Option<&'static Path> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::var_os("UTTT_WEB_DIR").filter(|v| !v.is_empty())?;
        let dir = PathBuf::from(dir);
        tracing::warn!(
            web.dir = %dir.display(),
            "UTTT_WEB_DIR is set: serving the web client from disk, not the embedded copy"
        );
        Some(dir)
    })
    .as_deref()
}

/// Whether `path` may be served from the development folder: a client file,
/// not the tests, the Node modules or anything outside the folder.
fn servable_from_disk(path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    let safe = parts
        .iter()
        .all(|p| !p.is_empty() && !p.starts_with('.') && !p.contains('\\'));
    let own =
        !matches!(parts.first(), Some(&("tests" | "node_modules"))) && !path.starts_with("package");
    let known = content_type(path) != "application/octet-stream";
    safe && own && known
}

fn serve_from_disk(req: &HttpRequest, dir: &Path, path: &str) -> Result<HttpResponse, Problem> {
    if !servable_from_disk(path) {
        return Err(Problem::no_route(req.path()));
    }
    let Ok(body) = std::fs::read(dir.join(path)) else {
        return Err(Problem::no_route(req.path()));
    };
    let mut res = HttpResponse::Ok();
    res.insert_header((header::CONTENT_TYPE, content_type(path)))
        .insert_header((header::CACHE_CONTROL, "no-store"));
    common_headers(&mut res, path);
    Ok(res.body(body))
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::App;
    use actix_web::http::StatusCode;
    use actix_web::test::{TestRequest, call_service, init_service, read_body, read_body_json};

    async fn get(path: &str, headers: &[(&str, &str)]) -> actix_web::dev::ServiceResponse {
        let app = init_service(App::new().configure(routes)).await;
        let mut req = TestRequest::get().uri(path);
        for (k, v) in headers {
            req = req.insert_header((*k, *v));
        }
        call_service(&app, req.to_request()).await
    }

    fn header<'a>(res: &'a actix_web::dev::ServiceResponse, name: &str) -> &'a str {
        res.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    #[actix_web::test]
    async fn the_page_is_served_at_the_root_as_html() {
        let res = get("/", &[]).await;
        assert_eq!(res.status(), StatusCode::OK);
        assert_eq!(header(&res, "content-type"), "text/html; charset=utf-8");
        assert_eq!(header(&res, "cache-control"), "no-cache");
        assert!(header(&res, "content-security-policy").contains("default-src 'self'"));
        let body = read_body(res).await;
        let text = String::from_utf8_lossy(&body);
        assert!(text.contains("<!doctype html>"), "{text}");
        assert!(text.contains("/web/js/app.js"), "{text}");
    }

    #[actix_web::test]
    async fn assets_have_their_content_types() {
        for (path, expected) in [
            ("/web/css/app.css", "text/css; charset=utf-8"),
            ("/web/js/app.js", "text/javascript; charset=utf-8"),
            ("/web/js/board.js", "text/javascript; charset=utf-8"),
            ("/web/favicon.svg", "image/svg+xml"),
        ] {
            let res = get(path, &[]).await;
            assert_eq!(res.status(), StatusCode::OK, "{path}");
            assert_eq!(header(&res, "content-type"), expected, "{path}");
            assert_eq!(header(&res, "x-content-type-options"), "nosniff", "{path}");
            assert!(header(&res, "etag").starts_with('"'), "{path}");
        }
    }

    #[actix_web::test]
    async fn a_known_etag_answers_304_without_a_body() {
        let first = get("/web/js/api.js", &[]).await;
        let etag = header(&first, "etag").to_owned();
        let res = get("/web/js/api.js", &[("If-None-Match", &etag)]).await;
        assert_eq!(res.status(), StatusCode::NOT_MODIFIED);
        assert_eq!(header(&res, "etag"), etag);
        assert!(read_body(res).await.is_empty());
        let weak = format!("\"other\", W/{etag}");
        let res = get("/web/js/api.js", &[("If-None-Match", &weak)]).await;
        assert_eq!(res.status(), StatusCode::NOT_MODIFIED);
        let res = get("/web/js/api.js", &[("If-None-Match", "\"other\"")]).await;
        assert_eq!(res.status(), StatusCode::OK);
    }

    #[actix_web::test]
    async fn unknown_assets_are_404_problems() {
        for path in [
            "/web/",
            "/web/nope.js",
            "/web/js/../index.html",
            "/web/index.html",
            "/web/tests/play.mjs",
            "/web/package.json",
        ] {
            let res = get(path, &[]).await;
            assert_eq!(res.status(), StatusCode::NOT_FOUND, "{path}");
            assert_eq!(
                header(&res, "content-type"),
                "application/problem+json",
                "{path}"
            );
            let body: serde_json::Value = read_body_json(res).await;
            assert_eq!(body["code"], "not_found", "{path}");
        }
    }

    #[actix_web::test]
    async fn other_methods_are_405_with_allow() {
        let app = init_service(App::new().configure(routes)).await;
        for path in ["/", "/web/js/app.js"] {
            let req = TestRequest::post().uri(path).to_request();
            let res = call_service(&app, req).await;
            assert_eq!(res.status(), StatusCode::METHOD_NOT_ALLOWED, "{path}");
            assert_eq!(header(&res, "allow"), "GET, HEAD", "{path}");
        }
        let req = TestRequest::default()
            .method(actix_web::http::Method::HEAD)
            .uri("/")
            .to_request();
        assert_eq!(call_service(&app, req).await.status(), StatusCode::OK);
    }

    /// Every client file in `web/` is embedded, and nothing else is.
    #[test]
    fn every_client_file_is_embedded() {
        fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let rel = path
                    .strip_prefix(base)
                    .map(|p| p.to_string_lossy().replace('\\', "/"))
                    .unwrap_or_default();
                if path.is_dir() {
                    if rel != "tests" && rel != "node_modules" {
                        walk(&path, base, out);
                    }
                } else if servable_from_disk(&rel) {
                    out.push(rel);
                }
            }
        }
        let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("web");
        let mut on_disk = Vec::new();
        walk(&base, &base, &mut on_disk);
        on_disk.sort();
        let mut embedded: Vec<String> = ASSETS.iter().map(|a| a.path.to_owned()).collect();
        embedded.sort();
        assert_eq!(on_disk, embedded, "update ASSETS in src/http/web.rs");
    }

    #[test]
    fn the_development_folder_serves_only_client_files() {
        assert!(servable_from_disk("js/app.js"));
        assert!(servable_from_disk("index.html"));
        for bad in [
            "../Cargo.toml",
            "js/../../secret.js",
            ".env",
            "tests/play.mjs",
            "node_modules/x/index.js",
            "package.json",
            "js//app.js",
            "bin/tool",
        ] {
            assert!(!servable_from_disk(bad), "{bad}");
        }
    }
}
