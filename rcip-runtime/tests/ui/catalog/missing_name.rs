use rcip_runtime::capability;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Input {
    name: String,
}

/// Greet.
#[capability(effect = "read", scope = "people")]
fn greet(input: Input) -> String {
    input.name
}

/// Wave.
#[capability(effect = "read", scope = "people")]
fn wave(input: Input) -> String {
    input.name
}

rcip_runtime::catalog! {
    struct App {
        id = "app", description = "An app.",
        scopes = [("people", "People", "Everyone.")],
        capabilities = [greet, wave],
    }
}

fn main() {}
