use rcip_runtime::{InvocationContext, capability};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Input {
    name: String,
}

/// Greet: after the input, `u8` is neither state nor input nor an extractor.
#[capability(effect = "read")]
fn greet(input: Input, _context: InvocationContext, count: u8) -> String {
    let _ = count;
    input.name
}

fn main() {}
