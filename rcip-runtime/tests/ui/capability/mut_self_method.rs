use rcip_runtime::capabilities;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Input {
    name: String,
}

struct Greeter {
    count: u32,
}

#[capabilities]
impl Greeter {
    /// Greet.
    #[capability(effect = "write")]
    fn greet(&mut self, input: Input) -> String {
        self.count += 1;
        input.name
    }

    /// Consume.
    #[capability(effect = "write")]
    fn consume(self, input: Input) -> String {
        input.name
    }
}

fn main() {}
