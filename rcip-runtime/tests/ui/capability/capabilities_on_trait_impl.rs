use rcip_runtime::capabilities;

struct Greeter<T>(T);

trait Greet {
    fn greet(&self) -> String;
}

/// A trait impl cannot declare capabilities.
#[capabilities]
impl Greet for Greeter<u8> {
    fn greet(&self) -> String {
        String::new()
    }
}

/// Nor can a generic impl.
#[capabilities]
impl<T> Greeter<T> {
    /// Greet.
    #[capability(effect = "read")]
    fn hello(&self) -> String {
        String::new()
    }
}

fn main() {}
