//! The output checks' runtime and outcome readers (`mod output_support;`), shared by
//! tests/output_issues.rs and tests/output_log.rs.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::panic)]

use rcip_runtime::*;
use serde_json::{Value, json};

/// Strings of the host's output that must not reach the consumer.
pub const SECRETS: [&str; 3] = ["internal_db_row_id", "xsecret", "hunter2-token"];

pub fn runtime(output_schema: Value) -> Runtime {
    let definition = ApplicationDefinition::new("out", "Out", "Output checks.").capability(
        CapabilityDefinition::new("out.get", Effect::Read, "Get", "Gets it.")
            .output_schema(output_schema),
    );
    Runtime::new(definition, RuntimeOptions::default()).unwrap()
}

pub async fn invoke(runtime: &Runtime, output: Value) -> InvocationOutcome {
    let _binding = runtime
        .host()
        .bind(
            "out.get",
            Binding::new(move |_input, _ctx| {
                let output = output.clone();
                async move { Ok::<_, HandlerError>(output) }
            }),
        )
        .unwrap();
    runtime
        .client()
        .invoke(InvocationRequest::new("out.get", json!({})))
        .await
}

/// The outcome's issues as (instancePath, keyword, message), after checking that none has
/// params and that the serialized outcome names none of [`SECRETS`].
pub fn issues(outcome: &InvocationOutcome) -> Vec<(String, String, String)> {
    let wire = serde_json::to_string(outcome).unwrap();
    for secret in SECRETS {
        assert!(!wire.contains(secret), "{secret} crossed: {wire}");
    }
    let InvocationOutcome::Failed { error, .. } = outcome else {
        panic!("not failed: {outcome:?}")
    };
    assert_eq!(error.code, ErrorCode::OutputInvalid);
    assert_eq!(
        error.message,
        "The capability output does not match its declared schema."
    );
    error
        .validation_issues
        .as_deref()
        .unwrap_or_default()
        .iter()
        .map(|issue| {
            assert!(issue.params.is_empty(), "{issue:?}");
            (
                issue.instance_path.clone(),
                issue.keyword.clone(),
                issue.message.clone(),
            )
        })
        .collect()
}

pub fn triple(path: &str, keyword: &str, message: &str) -> (String, String, String) {
    (path.to_owned(), keyword.to_owned(), message.to_owned())
}
