//! The metrics a Prometheus exporter renders after a few calls: requests by door and
//! status, operations by name and outcome, refusals by limit, the latency histograms and
//! the connection gauge. The recorder is the process's (this file is its own test binary).
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use common::start;
use metrics_exporter_prometheus::PrometheusBuilder;
use rcip_server::Limits;
use serde_json::json;

/// The value of the sample whose name and labels are `series` exactly.
fn sample(rendered: &str, series: &str) -> Option<f64> {
    rendered.lines().find_map(|line| {
        let value = line.strip_prefix(series)?.strip_prefix(' ')?;
        value.parse().ok()
    })
}

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
    let series =
        |name: &str| sample(&rendered, name).unwrap_or_else(|| panic!("no {name} in\n{rendered}"));
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
}
