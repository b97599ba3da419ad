//! The mistakes a new application makes are explained in the host's log (`rcip::host`),
//! while the consumer keeps the reference's messages. One test in its binary: the
//! subscriber is this thread's, and another test's thread reaching a callsite first could
//! settle tracing's cached interest.
#![allow(clippy::unwrap_used)]

use rcip_runtime::*;
use serde_json::json;

fn definition() -> ApplicationDefinition {
    ApplicationDefinition::new("notes", "Notes", "A notebook.")
        .scope(ScopeDefinition::new("notes", "Notes", "The notes."))
        .capability(
            CapabilityDefinition::new("notes.add", Effect::Write, "Add", "Adds a note.")
                .scope("notes"),
        )
}

#[test]
fn host_mistakes_are_explained_in_the_host_log() {
    let log = rcip_test_support::LogCapture::new("rcip::host");
    let (bind_error, first, second) = tracing::subscriber::with_default(log.clone(), || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async {
            let runtime = Runtime::new(definition(), RuntimeOptions::default()).unwrap();
            let host = runtime.host();
            let bind_error = host
                .bind(
                    "notes.ping",
                    Binding::new(|_, _| async { Ok::<_, HandlerError>(json!(null)) }),
                )
                .unwrap_err();
            let _add = host
                .bind(
                    "notes.add",
                    Binding::new(|_, _| async { Ok::<_, HandlerError>(json!("added")) }),
                )
                .unwrap();
            let client = runtime.client();
            // Preflight is advisory: its denial is not the one the log tells of.
            let report = client
                .preflight(PreflightBatch::new(vec![PreflightProposal::new(
                    "notes.add",
                    json!({}),
                )]))
                .await
                .unwrap();
            assert_eq!(report.outcomes.len(), 1);
            let first = client
                .invoke(InvocationRequest::new("notes.add", json!({})))
                .await;
            let second = client
                .invoke(InvocationRequest::new("notes.add", json!({})))
                .await;
            (bind_error, first, second)
        })
    });
    // The consumer's and the error's messages are the reference's.
    assert_eq!(
        bind_error.to_string(),
        "Capability notes.ping is not the registered catalog definition."
    );
    for outcome in [&first, &second] {
        let error = outcome.error().unwrap();
        assert_eq!(error.code, ErrorCode::PolicyDenied);
        assert_eq!(error.message, "The host application denied this operation.");
    }
    let lines = log.lines();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(
        lines[0].starts_with("WARN ")
            && lines[0].contains("notes.ping")
            && lines[0].contains("capabilities = [...]")
            && lines[0].contains("catalog!"),
        "{lines:?}"
    );
    // The default policy's denial: once at warn with what to set, then at debug.
    assert!(
        lines[1].starts_with("WARN ")
            && lines[1].contains("capability=\"notes.add\"")
            && lines[1].contains("RuntimeOptions::policy"),
        "{lines:?}"
    );
    assert!(lines[2].starts_with("DEBUG "), "{lines:?}");
}
