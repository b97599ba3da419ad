//! A request refused for its `Host` or `Origin` is logged with the option that allows it;
//! the client's answer stays rmcp's 403. One test in its binary, on a current-thread runtime:
//! the log subscriber is this thread's, and the server's tasks run on it.
#![allow(clippy::unwrap_used)]

mod common;
mod duplex;

use common::App;
use rcip_mcp::HttpOptions;

/// `POST /mcp` with these `Host` and `Origin` headers: status and body.
async fn post(addr: std::net::SocketAddr, host: &str, origin: Option<&str>) -> (u16, String) {
    let mut request = reqwest::Client::new()
        .post(format!("http://{addr}/mcp"))
        .header("host", host)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
        );
    if let Some(origin) = origin {
        request = request.header("origin", origin);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

#[test]
fn refused_host_and_origin_name_the_option_in_the_log() {
    let log = rcip_test_support::LogCapture::new("rcip::mcp");
    let answers = tracing::subscriber::with_default(log.clone(), || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let app = App::new();
            let router = rcip_mcp::http_router(app.bridge.clone(), HttpOptions::new());
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            tokio::spawn(async move {
                let _ = axum::serve(listener, router).await;
            });
            vec![
                post(addr, "203.0.113.7:8001", None).await,
                post(addr, "127.0.0.1", Some("http://evil.example")).await,
                post(addr, "localhost", None).await,
            ]
        })
    });
    // The clients' answers are rmcp's, untouched.
    assert_eq!(
        answers[0],
        (403, "Forbidden: Host header is not allowed".to_owned())
    );
    assert_eq!(answers[1].0, 403, "{answers:?}");
    assert!(answers[1].1.contains("Origin"), "{answers:?}");
    assert_eq!(answers[2].0, 200, "{answers:?}");
    let lines = log.lines();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].contains("host=203.0.113.7:8001")
            && lines[0].contains("HttpOptions::allowed_hosts"),
        "{lines:?}"
    );
    assert!(
        lines[1].contains("origin=http://evil.example")
            && lines[1].contains("HttpOptions::allowed_origins"),
        "{lines:?}"
    );
}
