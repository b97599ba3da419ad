use rcip_runtime::capabilities;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Input {
    name: String,
}

#[derive(Deserialize, JsonSchema)]
struct Other {
    age: u32,
}

struct Greeter;

#[capabilities]
impl Greeter {
    /// Greet: a method's state is `self`, so it has one input at most.
    #[capability(effect = "read")]
    fn greet(&self, input: Input, other: Other) -> String {
        let _ = other.age;
        input.name
    }
}

fn main() {}
