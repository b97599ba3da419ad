//! `examples/service.rs` ("capabilities on a service type") keeps working: its transcript,
//! run in-process, shows the methods bound over one shared service, the principal extractor
//! refusing an anonymous write, and the input-less `count`.
#![allow(clippy::unwrap_used)]

#[allow(dead_code)] // the example's `main`
#[path = "../service.rs"]
mod service;

#[tokio::test]
async fn the_service_example_binds_its_methods_and_invokes_them() {
    let transcript = service::transcript().await.unwrap();
    assert_eq!(
        transcript,
        [
            "application \"notes\": notes.add, notes.count, notes.list",
            "-> notes.add {\"text\":\"Buy milk\"} as ada",
            "<- succeeded notes.add: {\"author\":\"ada\",\"number\":1,\"text\":\"Buy milk\"}",
            "-> notes.add {\"text\":\"Call Bob\"} as ada",
            "<- succeeded notes.add: {\"author\":\"ada\",\"number\":2,\"text\":\"Call Bob\"}",
            "-> notes.add {\"text\":\"anonymous\"} as anonymous",
            "<- failed notes.add: EXECUTION_FAILED PRINCIPAL_REQUIRED: this capability needs an \
             authenticated caller",
            "-> notes.count {} as anonymous",
            "<- succeeded notes.count: 2",
            "-> notes.list {} as anonymous",
            "<- succeeded notes.list: [\"1. ada: Buy milk\",\"2. ada: Call Bob\"]",
            "host sees 2 notes",
        ]
    );
}
