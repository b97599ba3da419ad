//! The metrics a Prometheus exporter renders after a few calls: requests by door and
//! status, operations by name and outcome, refusals by limit, the latency histograms and
//! the connection gauge. The recorder is the process's (this file is its own test binary).
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use common::start;
use metrics_exporter_prometheus::PrometheusBuilder;
use rcip_server::Limits;
use rcip_test_support::prometheus_sample;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scrape_after_a_few_calls_finds_the_counters() {
    let recorder = PrometheusBuilder::new()
        .set_buckets(&[0.001, 0.01, 0.1, 1.0])
        .unwrap()
        .build_recorder();
    let handle = recorder.handle();
    metrics::set_global_recorder(recorder).unwrap();

    let s = start(Limits {
        max_body_bytes: 64 * 1024,
        ..Limits::default()
    })
    .await;
    s.world().await;
    s.note("bot", "r1").await;
    s.note("bot", "r2").await;
    assert_eq!(
        s.refused(
            "bot",
            "record.get",
            json!({"workspace_id": "acme", "record_id": "00000000-0000-4000-8000-000000000000"})
        )
        .await,
        (404, "RECORD_NOT_FOUND".into())
    );
    // One body over the limit, and a probe.
    let big = json!({"operation": "workspace.list", "arguments": {"pad": "x".repeat(70_000)}});
    assert_eq!(s.post(Some("bot"), &big).await.status, 413);
    assert_eq!(s.get("/healthz").await.status, 200);

    let rendered = handle.render();
    let series = |name: &str| {
        prometheus_sample(&rendered, name).unwrap_or_else(|| panic!("no {name} in\n{rendered}"))
    };
    // world(): 6 calls, two notes, one refused get, and start's GET of the document.
    assert!(series(r#"rcip_http_requests_total{door="rest",status="200"}"#) >= 8.0);
    assert_eq!(
        series(r#"rcip_http_requests_total{door="rest",status="404"}"#),
        1.0
    );
    assert_eq!(
        series(r#"rcip_http_requests_total{door="rest",status="413"}"#),
        1.0
    );
    assert!(series(r#"rcip_http_requests_total{door="public",status="200"}"#) >= 2.0);
    assert_eq!(
        series(
            r#"rcip_operations_total{door="rest",operation="record.create",status="200",code="OK"}"#
        ),
        2.0
    );
    assert_eq!(
        series(
            r#"rcip_operations_total{door="rest",operation="record.get",status="404",code="RECORD_NOT_FOUND"}"#
        ),
        1.0
    );
    assert_eq!(
        series(r#"rcip_requests_refused_total{limit="body_size"}"#),
        1.0
    );
    assert!(
        series(r#"rcip_operation_duration_seconds_count{door="rest",operation="record.create"}"#)
            >= 2.0
    );
    assert!(series(r#"rcip_http_request_duration_seconds_bucket{door="rest",le="+Inf"}"#) >= 10.0);
    assert_eq!(series(r#"rcip_http_requests_in_flight{door="rest"}"#), 0.0);
    // reqwest's pooled connection is still open.
    assert!(series("rcip_http_connections_open") >= 1.0);

    // An MCP session is counted while it is open.
    let sessions = || prometheus_sample(&handle.render(), "rcip_mcp_sessions");
    let opened = s
        .client
        .post(s.url("/mcp"))
        .bearer_auth("bot")
        .header("accept", "application/json, text/event-stream")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "metrics", "version": "1"}}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(opened.status(), 200);
    let session = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(sessions(), Some(1.0));
    let ended = s
        .client
        .delete(s.url("/mcp"))
        .bearer_auth("bot")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert!(ended.status().is_success(), "{}", ended.status());
    assert_eq!(sessions(), Some(0.0));
}
