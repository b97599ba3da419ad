use rcip_runtime::capability;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Input {
    name: String,
}

struct Greeter;

impl Greeter {
    /// Greet.
    #[capability(effect = "read")]
    fn greet(&self, input: Input) -> String {
        input.name
    }
}

fn main() {}
