use rcip_runtime::{CapabilityDefinition, CapabilitySet, Effect, capability};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Input {
    name: String,
}

/// Close.
#[capability(effect = "write", scope = "polls", id = "polls.poll.close")]
fn close(input: Input) -> String {
    input.name
}

struct Commands;

impl CapabilitySet for Commands {
    const IDS: &'static [&'static str] = &["polls.poll.open", "polls.poll.close"];
    const SCOPES: &'static [&'static str] = &["polls"];
    fn definitions() -> Vec<CapabilityDefinition> {
        Self::IDS.iter().map(|id| CapabilityDefinition::new(*id, Effect::Write, "T", "D.")).collect()
    }
}

rcip_runtime::catalog! {
    struct App {
        id = "app", name = "App", description = "An app.",
        scopes = [("polls", "Polls", "Every poll.")],
        capabilities = [close],
        capability_sets = [Commands],
    }
}

fn main() {}
