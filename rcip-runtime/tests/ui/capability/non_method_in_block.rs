use rcip_runtime::capabilities;

struct Greeter;

#[capabilities]
impl Greeter {
    /// No receiver: not a method.
    #[capability(effect = "read")]
    fn make() -> String {
        String::new()
    }

    /// A constant.
    #[capability(effect = "read")]
    const NAME: &'static str = "greeter";
}

fn main() {}
