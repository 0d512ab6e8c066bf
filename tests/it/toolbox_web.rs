//! fetch_web_page and search_web against local HTTP servers started here (no internet).

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::wait;
use miniclaw::tools::web::{FetchTool, ParseLimits, SearchWebTool, WebSettings};
use miniclaw::tools::{Sandbox, ToolContext, ToolRegistry};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

type Handler = Arc<dyn Fn(&str) -> Vec<u8> + Send + Sync>;

/// A one-response-per-connection HTTP server; `handler` maps the request target to raw bytes.
struct Server {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<String>>>,
    /// How many responses were written in full.
    served: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    async fn start(bind: &str, handler: impl Fn(&str) -> Vec<u8> + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind(bind).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let served = Arc::new(AtomicUsize::new(0));
        let handler: Handler = Arc::new(handler);
        let (rec, done) = (requests.clone(), served.clone());
        let task = tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let handler = handler.clone();
                let (rec, done) = (rec.clone(), done.clone());
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                        match socket.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    let head = String::from_utf8_lossy(&buf).to_string();
                    let target = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                    rec.lock().unwrap().push(target.clone());
                    let _ = socket.write_all(&handler(&target)).await;
                    let _ = socket.shutdown().await;
                    done.fetch_add(1, Ordering::SeqCst);
                });
            }
        });
        Self {
            addr,
            requests,
            served,
            task,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

fn response(status: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    [head.into_bytes(), body.to_vec()].concat()
}

fn html(body: &str) -> Vec<u8> {
    response(
        "200 OK",
        &[("Content-Type", "text/html; charset=utf-8")],
        body.as_bytes(),
    )
}

fn settings(allow_private: bool, exceptions: &[&str]) -> WebSettings {
    WebSettings {
        allow_private_fetch: allow_private,
        private_exceptions: exceptions
            .iter()
            .map(|s| s.parse::<IpAddr>().unwrap())
            .collect(),
        ..WebSettings::default()
    }
}

async fn fetch_with(tool: FetchTool, args: Value) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::standalone(Arc::new(Sandbox::new(dir.path()).unwrap()));
    let mut r = ToolRegistry::new();
    r.register(tool);
    r.execute("fetch_web_page", &args.to_string(), &ctx).await
}

async fn fetch(s: WebSettings, url: &str) -> Value {
    fetch_with(FetchTool::new(s), json!({ "url": url })).await
}

fn error(obs: &Value) -> &str {
    assert_eq!(obs["ok"], false, "expected a failure: {obs}");
    obs["error"].as_str().unwrap()
}

#[tokio::test]
async fn private_addresses_are_refused_without_the_allow_flag() {
    let server = Server::start("127.0.0.1:0", |_| html("<p>private</p>")).await;
    let port = server.addr.port();
    let cases = [
        (server.url("/"), "loopback"),
        (format!("http://localhost:{port}/"), "loopback"),
        (format!("http://[::1]:{port}/"), "loopback"),
        (format!("http://0.0.0.0:{port}/"), "unspecified"),
        (
            "http://169.254.169.254/latest/meta-data/".to_string(),
            "cloud metadata",
        ),
        ("http://[fd00:ec2::254]/".to_string(), "cloud metadata"),
        ("http://10.0.0.1/".to_string(), "private"),
        ("http://192.168.1.1/".to_string(), "private"),
        ("http://172.16.5.4/".to_string(), "private"),
        ("http://100.64.0.1/".to_string(), "CGNAT"),
        ("http://169.254.1.1/".to_string(), "link-local"),
        ("http://[fe80::1]/".to_string(), "link-local"),
        ("http://[fc00::1]/".to_string(), "unique-local"),
        ("http://[::ffff:127.0.0.1]:80/".to_string(), "loopback"),
        ("http://2130706433/".to_string(), "loopback"),
    ];
    for (url, why) in cases {
        let obs = fetch(settings(false, &[]), &url).await;
        let e = error(&obs);
        assert!(e.starts_with("refused: "), "{url}: {e}");
        assert!(e.contains(why), "{url}: expected `{why}` in `{e}`");
        assert!(e.contains("MINICLAW_ALLOW_PRIVATE_FETCH"), "{e}");
    }
    assert!(server.requests().is_empty(), "nothing may reach the server");

    let allowed = fetch(settings(true, &[]), &server.url("/")).await;
    assert_eq!(allowed["ok"], true, "{allowed}");
}

#[tokio::test]
async fn other_schemes_are_refused() {
    for url in [
        "file:///etc/passwd",
        "ftp://example.com/x",
        "gopher://example.com/",
    ] {
        let e = fetch(settings(true, &[]), url).await;
        assert!(error(&e).contains("only http and https"), "{url}: {e}");
    }
    let bad = fetch(settings(true, &[]), "not a url").await;
    assert!(error(&bad).contains("not a URL"));
}

#[tokio::test]
async fn redirects_are_checked_hop_by_hop() {
    // 127.0.0.2 is loopback too but not the excepted address: it stands for a private target.
    let inner = Server::start("127.0.0.2:0", |_| html("<p>inner secret</p>")).await;
    let inner_url = inner.url("/secret");
    let outer = Server::start("127.0.0.1:0", move |target| match target {
        "/to-private" => response("302 Found", &[("Location", &inner_url)], b""),
        "/to-metadata" => response(
            "301 Moved",
            &[("Location", "http://169.254.169.254/latest/meta-data/")],
            b"",
        ),
        "/to-page" => response("302 Found", &[("Location", "/page")], b""),
        "/loop" => response("302 Found", &[("Location", "/loop")], b""),
        "/page" => html("<title>Arrived</title><p>made it</p>"),
        _ => response("404 Not Found", &[], b"nope"),
    })
    .await;
    let s = || settings(false, &["127.0.0.1"]);

    let e = fetch(s(), &outer.url("/to-private")).await;
    let msg = error(&e);
    assert!(
        msg.contains("refused: the redirect to") && msg.contains("loopback"),
        "{msg}"
    );
    assert!(
        inner.requests().is_empty(),
        "the private target was never contacted"
    );

    let e = fetch(s(), &outer.url("/to-metadata")).await;
    assert!(error(&e).contains("cloud metadata"), "{e}");

    let ok = fetch(s(), &outer.url("/to-page")).await;
    assert_eq!(ok["ok"], true, "{ok}");
    assert_eq!(ok["title"], "Arrived");
    assert_eq!(ok["url"], outer.url("/page"));

    let e = fetch(s(), &outer.url("/loop")).await;
    assert!(error(&e).contains("too many redirects"), "{e}");

    let e = fetch(s(), &outer.url("/missing")).await;
    assert!(error(&e).contains("HTTP 404"), "{e}");
}

#[tokio::test]
async fn huge_bodies_are_capped() {
    let server = Server::start("127.0.0.1:0", |_| {
        response(
            "200 OK",
            &[("Content-Type", "text/plain")],
            &vec![b'a'; 3 * 1024 * 1024],
        )
    })
    .await;
    let obs = fetch_with(
        FetchTool::new(settings(true, &[])),
        json!({"url": server.url("/big"), "max_chars": 5_000_000}),
    )
    .await;
    assert_eq!(obs["ok"], true, "{}", obs["error"]);
    assert_eq!(obs["truncated"], true);
    assert_eq!(obs["total_chars"], 2 * 1024 * 1024);
    assert!(obs["note"].as_str().unwrap().contains("2048 KB"));

    let small = fetch_with(
        FetchTool::new(settings(true, &[])),
        json!({"url": server.url("/big"), "max_chars": 100}),
    )
    .await;
    assert_eq!(small["text"].as_str().unwrap().len(), 100);
}

/// A keep-alive HTTP/1.1 server answering every request on a connection with `page`; counts the
/// connections it accepted.
async fn keep_alive_server(page: &'static str) -> (SocketAddr, Arc<Mutex<usize>>, Server) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let connections = Arc::new(Mutex::new(0usize));
    let counted = connections.clone();
    let task = tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            *counted.lock().unwrap() += 1;
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                        match socket.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    buf.clear();
                    let answer = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{page}",
                        page.len()
                    );
                    if socket.write_all(answer.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    let server = Server {
        addr,
        requests: Arc::default(),
        served: Arc::default(),
        task,
    };
    (addr, connections, server)
}

#[tokio::test]
async fn calls_share_one_pooled_client() {
    let (addr, connections, _server) = keep_alive_server("<title>Pooled</title><p>x</p>").await;
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::standalone(Arc::new(Sandbox::new(dir.path()).unwrap()));
    let mut r = ToolRegistry::new();
    r.register(FetchTool::new(settings(false, &["127.0.0.1"])));
    for _ in 0..3 {
        let args = json!({"url": format!("http://{addr}/")});
        let obs = r.execute("fetch_web_page", &args.to_string(), &ctx).await;
        assert_eq!(obs["title"], "Pooled", "{obs}");
    }
    assert_eq!(
        *connections.lock().unwrap(),
        1,
        "three calls, one kept-alive connection"
    );
}

/// A page that makes the HTML parser re-open `n` distinct formatting elements in each of
/// 100,000 paragraphs (`n` x 100,000 nodes if parsed in full).
fn reopened_formatting_page(n: usize) -> String {
    let mut page = String::from("<html><body><p>start ");
    for i in 0..n {
        page.push_str(&format!("<b id={i}>"));
    }
    page.push_str(&"</p><p>x".repeat(100_000));
    page
}

/// 100,000 nested `<div>`s (parse time grows about 4x per doubling of the depth).
fn deep_page() -> String {
    format!("<html><body><p>start</p>{}deep", "<div>".repeat(100_000))
}

/// The process's peak resident memory in KB (Linux), to bound what a parse may take.
fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[tokio::test]
async fn hostile_html_is_parsed_within_caps_and_says_it_was_cut() {
    // 1,000 formatting elements also nest deeper than the depth cap; 400 do not.
    let formatting = reopened_formatting_page(1000);
    let formatting_shallow = reopened_formatting_page(400);
    let deep = deep_page();
    let server = Server::start("127.0.0.1:0", move |target| match target {
        "/formatting" => html(&formatting),
        "/formatting-shallow" => html(&formatting_shallow),
        _ => html(&deep),
    })
    .await;
    let before = peak_rss_kb();
    // The caps under test, without the parse's time budget: on a loaded machine the clock
    // could otherwise stop the parse first. (Before the caps, the first page aborted the
    // process at 4 GB and the second took 29 s+; the budget has its own test.)
    let limits = miniclaw::tools::web::ParseLimits {
        budget: Duration::from_secs(600),
        ..Default::default()
    };
    for (path, why) in [
        ("/formatting", "nests elements more than 512 deep"),
        ("/formatting-shallow", "more than 200000 HTML nodes"),
        ("/deep", "nests elements more than 512 deep"),
    ] {
        let tool = FetchTool::new(settings(true, &[])).with_parse_limits(limits);
        let obs = fetch_with(tool, json!({ "url": server.url(path) })).await;
        assert_eq!(obs["ok"], true, "{path}: {}", obs["error"]);
        assert_eq!(obs["truncated"], true, "{path}");
        assert!(obs["text"].as_str().unwrap().starts_with("start"), "{path}");
        let note = obs["note"].as_str().unwrap();
        assert!(
            note.contains("the page was cut") && note.contains(why),
            "{note}"
        );
    }
    if let (Some(before), Some(after)) = (before, peak_rss_kb()) {
        let grown_mb = after.saturating_sub(before) / 1024;
        assert!(grown_mb < 512, "the peak memory grew by {grown_mb} MB");
    }
}

#[tokio::test]
async fn an_interrupt_during_a_slow_parse_returns_at_once() {
    let deep = deep_page();
    let server = Server::start("127.0.0.1:0", move |_| html(&deep)).await;
    // No caps and a long budget: the parse would run for minutes.
    let tool = FetchTool::new(settings(true, &[])).with_parse_limits(ParseLimits {
        max_nodes: usize::MAX,
        max_depth: usize::MAX,
        max_attribute_bytes: usize::MAX,
        budget: Duration::from_secs(600),
    });
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::standalone(Arc::new(Sandbox::new(dir.path()).unwrap()));
    let mut r = ToolRegistry::new();
    r.register(tool);
    // Fired from another thread once the page is sent in full (the tool is then reading its
    // last bytes or, for minutes, parsing it): a parse on this (single-threaded) runtime would
    // hold up a task of its own.
    let cancel = ctx.cancel.clone();
    let served = server.served.clone();
    std::thread::spawn(move || {
        wait::until("the page sent in full", || {
            served.load(Ordering::SeqCst) > 0
        });
        cancel.cancel();
    });
    let started = Instant::now();
    let args = json!({ "url": server.url("/deep") }).to_string();
    let obs = r.execute("fetch_web_page", &args, &ctx).await;
    assert_eq!(
        error(&obs),
        miniclaw::tools::registry::INTERRUPTED_SILENT,
        "{obs}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn text_json_and_unreadable_types() {
    let server = Server::start("127.0.0.1:0", |target| match target {
        "/t" => response(
            "200 OK",
            &[("Content-Type", "text/plain; charset=utf-8")],
            "line 1\n  line 2\n".as_bytes(),
        ),
        "/j" => response(
            "200 OK",
            &[("Content-Type", "application/json")],
            br#"{"a": [1, 2]}"#,
        ),
        "/png" => response("200 OK", &[("Content-Type", "image/png")], b"\x89PNG\r\n"),
        _ => response("200 OK", &[], b"no type at all"),
    })
    .await;
    let s = || settings(true, &[]);
    let t = fetch(s(), &server.url("/t")).await;
    assert_eq!(t["text"], "line 1\n  line 2\n");
    assert!(t.get("links").is_none());
    let j = fetch(s(), &server.url("/j")).await;
    assert_eq!(j["text"], r#"{"a": [1, 2]}"#);
    let p = fetch(s(), &server.url("/png")).await;
    assert!(error(&p).contains("image/png"), "{p}");
    let n = fetch(s(), &server.url("/none")).await;
    assert_eq!(n["text"], "no type at all");
}

#[tokio::test]
async fn charsets_are_decoded() {
    let (gbk, _, _) = encoding_rs::GBK
        .encode("<html><head><title>中文标题</title></head><body><p>你好，世界</p></body></html>");
    let gbk = gbk.into_owned();
    let latin1: Vec<u8> = b"<html><head><meta charset=\"iso-8859-1\"><title>Caf\xe9</title></head><body><p>cr\xe8me br\xfbl\xe9e</p></body></html>".to_vec();
    let server = Server::start("127.0.0.1:0", move |target| match target {
        "/gbk" => response(
            "200 OK",
            &[("Content-Type", "text/html; charset=GBK")],
            &gbk,
        ),
        _ => response("200 OK", &[("Content-Type", "text/html")], &latin1),
    })
    .await;
    let g = fetch(settings(true, &[]), &server.url("/gbk")).await;
    assert_eq!(g["title"], "中文标题", "{g}");
    assert_eq!(g["text"], "你好，世界");
    assert_eq!(g["charset"], "GBK");
    let l = fetch(settings(true, &[]), &server.url("/latin1")).await;
    assert_eq!(l["title"], "Café", "{l}");
    assert_eq!(l["text"], "crème brûlée");
}

#[tokio::test]
async fn title_readable_text_and_links_are_extracted() {
    let mut many_links = String::new();
    for i in 0..30 {
        many_links.push_str(&format!("<a href=\"/item/{i}\">Item {i}</a> "));
    }
    let page = format!(
        r#"<!doctype html><html><head><title>  The   Page </title>
        <style>body {{ color: red }}</style><script>var secret = "script text";</script></head>
        <body><header>Site header</header><nav><a href="/nav">Nav link</a></nav>
        <main><h1>Main   heading</h1><p>First    paragraph
        spans lines.</p><p>See <a href="docs/intro.html">the   intro</a> and
        <a href="https://example.org/x">elsewhere</a> and <a href="javascript:alert(1)">js</a>.</p>
        <noscript>enable js</noscript><svg><text>svg text</text></svg>
        <div>{many_links}</div></main><footer>Footer text</footer></body></html>"#
    );
    let server = Server::start("127.0.0.1:0", move |_| html(&page)).await;
    let obs = fetch(settings(true, &[]), &server.url("/dir/page.html")).await;
    assert_eq!(obs["ok"], true, "{obs}");
    assert_eq!(obs["title"], "The Page");
    let text = obs["text"].as_str().unwrap();
    assert!(
        text.starts_with(
            "Main heading\nFirst paragraph spans lines.\nSee the intro and elsewhere and js."
        ),
        "{text}"
    );
    for dropped in [
        "script text",
        "color: red",
        "Site header",
        "Nav link",
        "Footer text",
        "enable js",
        "svg text",
    ] {
        assert!(
            !text.contains(dropped),
            "`{dropped}` should be dropped: {text}"
        );
    }
    let links = obs["links"].as_array().unwrap();
    assert_eq!(links.len(), 20);
    assert_eq!(
        links[0],
        json!({"text": "the intro", "url": server.url("/dir/docs/intro.html")})
    );
    assert_eq!(
        links[1],
        json!({"text": "elsewhere", "url": "https://example.org/x"})
    );
    assert_eq!(
        links[2],
        json!({"text": "Item 0", "url": server.url("/item/0")})
    );
    assert!(
        links
            .iter()
            .all(|l| !l["url"].as_str().unwrap().starts_with("javascript"))
    );

    let short = fetch_with(
        FetchTool::new(settings(true, &[])),
        json!({"url": server.url("/"), "max_chars": 12}),
    )
    .await;
    assert_eq!(short["text"], "Main heading");
    assert_eq!(short["truncated"], true);
}

// ---- search_web ----

const KEY: &str = "sekret-KEY-123";

fn search_settings(base_url: String, key: Option<&str>) -> WebSettings {
    WebSettings {
        serpapi_key: key.map(str::to_string),
        base_url,
        ..WebSettings::default()
    }
}

async fn search(s: WebSettings, args: Value) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::standalone(Arc::new(Sandbox::new(dir.path()).unwrap()));
    let mut r = ToolRegistry::new();
    r.register(SearchWebTool::new(s));
    r.execute("search_web", &args.to_string(), &ctx).await
}

fn query_of(target: &str) -> Vec<(String, String)> {
    let url = url::Url::parse(&format!("http://x{target}")).unwrap();
    url.query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

#[tokio::test]
async fn search_sends_the_settings_and_returns_results_and_the_answer_box() {
    let results: Vec<Value> = (1..=6)
        .map(|i| json!({"position": i, "title": format!("T{i}"), "link": format!("https://docs.rs/{i}"), "snippet": format!("S{i}"), "extra": "dropped"}))
        .collect();
    let body = json!({
        "search_metadata": {"status": "Success"},
        "answer_box": {"type": "organic_result", "answer": "42", "title": "The answer"},
        "organic_results": results,
    })
    .to_string();
    let server = Server::start("127.0.0.1:0", move |_| {
        response(
            "200 OK",
            &[("Content-Type", "application/json")],
            body.as_bytes(),
        )
    })
    .await;
    let obs = search(
        search_settings(server.url(""), Some(KEY)),
        json!({"query": "tokio spawn", "max_results": 3, "site": "docs.rs"}),
    )
    .await;
    assert_eq!(obs["ok"], true, "{obs}");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert!(requests[0].starts_with("/search.json?"));
    let q = query_of(&requests[0]);
    let get = |k: &str| q.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    assert_eq!(get("engine"), Some("google"));
    assert_eq!(get("q"), Some("tokio spawn site:docs.rs"));
    assert_eq!(get("num"), Some("3"));
    assert_eq!(get("location"), Some("Austin, Texas, United States"));
    assert_eq!(get("hl"), Some("en"));
    assert_eq!(get("gl"), Some("us"));
    assert_eq!(get("google_domain"), Some("google.com"));
    assert_eq!(get("api_key"), Some(KEY));

    let items = obs["results"].as_array().unwrap();
    assert_eq!(items.len(), 3);
    assert_eq!(
        items[0],
        json!({"position": 1, "title": "T1", "link": "https://docs.rs/1", "snippet": "S1"})
    );
    assert_eq!(obs["answer_box"]["answer"], "42");
    assert!(!obs.to_string().contains(KEY));
}

#[tokio::test]
async fn search_without_a_key_says_how_to_set_it() {
    let obs = search(
        search_settings("http://127.0.0.1:9".into(), None),
        json!({"query": "x"}),
    )
    .await;
    assert!(error(&obs).contains("SERPAPI_KEY"), "{obs}");
}

#[tokio::test]
async fn search_errors_are_plain_and_never_show_the_key() {
    let server = Server::start("127.0.0.1:0", |target| {
        if target.contains("q=bad") {
            let body =
                json!({"error": format!("Invalid API key. Your key {KEY} is wrong.")}).to_string();
            response(
                "401 Unauthorized",
                &[("Content-Type", "application/json")],
                body.as_bytes(),
            )
        } else if target.contains("q=empty") {
            let body =
                json!({"error": "Google hasn't returned any results for this query."}).to_string();
            response(
                "200 OK",
                &[("Content-Type", "application/json")],
                body.as_bytes(),
            )
        } else {
            // An error page that echoes the request, key and all.
            response(
                "500 Internal Server Error",
                &[("Content-Type", "text/plain")],
                target.as_bytes(),
            )
        }
    })
    .await;
    let s = || search_settings(server.url(""), Some(KEY));
    let bad = search(s(), json!({"query": "bad"})).await;
    let e = error(&bad);
    assert!(e.contains("Invalid API key") && e.contains("401"), "{e}");
    assert!(!bad.to_string().contains(KEY), "{bad}");

    let empty = search(s(), json!({"query": "empty"})).await;
    assert!(error(&empty).contains("hasn't returned any results"));

    let boom = search(s(), json!({"query": "boom"})).await;
    assert!(error(&boom).contains("HTTP 500"), "{boom}");
    assert!(!boom.to_string().contains(KEY), "{boom}");

    // A query whose length puts the 300-character cut inside the echoed key: no piece of the
    // key may survive (it is scrubbed before the cut).
    for n in 60..200 {
        let q = format!("boom{}", "a".repeat(n));
        let cut = search(s(), json!({"query": q})).await;
        let text = cut.to_string();
        for piece in KEY.as_bytes().windows(8) {
            let piece = std::str::from_utf8(piece).unwrap();
            assert!(
                !text.contains(piece),
                "a piece of the key leaked at n={n}: {text}"
            );
        }
    }
    assert!(
        !format!("{:?}", s()).contains(KEY),
        "Debug never shows the key"
    );

    // A port nothing listens on: a connection error.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let down = search(
        search_settings(format!("http://{closed}"), Some(KEY)),
        json!({"query": "x"}),
    )
    .await;
    assert!(error(&down).contains("request failed"), "{down}");
    assert!(!down.to_string().contains(KEY), "{down}");
}

#[test]
fn settings_come_from_the_environment_with_defaults() {
    let d = WebSettings::from_lookup(|_| None);
    assert_eq!(d.serpapi_key, None);
    assert_eq!(d.location, "Austin, Texas, United States");
    assert_eq!(
        (d.hl.as_str(), d.gl.as_str(), d.google_domain.as_str()),
        ("en", "us", "google.com")
    );
    assert_eq!(d.base_url, "https://serpapi.com");
    assert!(!d.allow_private_fetch);
    let s = WebSettings::from_lookup(|k| match k {
        "SERPAPI_KEY" => Some(" k ".into()),
        "SERPAPI_HL" => Some("zh-cn".into()),
        "MINICLAW_ALLOW_PRIVATE_FETCH" => Some("1".into()),
        _ => None,
    });
    assert_eq!(s.serpapi_key.as_deref(), Some("k"));
    assert_eq!(s.hl, "zh-cn");
    assert!(s.allow_private_fetch);
}
