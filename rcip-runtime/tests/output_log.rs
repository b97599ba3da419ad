//! The whole issues of an `OUTPUT_INVALID` stay on the host's side, in the `rcip::handler`
//! debug log. One test in its binary: the subscriber is this thread's, and another test's
//! thread reaching the log's callsite first could settle tracing's cached interest.
#![allow(clippy::unwrap_used)]

mod output_support;

use output_support::{invoke, issues, runtime};
use serde_json::json;

#[test]
fn the_host_log_keeps_the_whole_issues() {
    let log = rcip_test_support::LogCapture::new("rcip::handler");
    let outcome = tracing::subscriber::with_default(log.clone(), || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async {
            let runtime = self::runtime(json!({
                "type": "object",
                "properties": {},
                "additionalProperties": false
            }));
            invoke(&runtime, json!({"internal_db_row_id": 7})).await
        })
    });
    issues(&outcome);
    let lines = log.lines();
    assert!(
        lines
            .iter()
            .any(|line| line.contains("out.get") && line.contains("internal_db_row_id")),
        "{lines:?}"
    );
}
