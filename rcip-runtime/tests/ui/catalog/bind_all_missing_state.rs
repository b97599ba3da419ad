use rcip_runtime::{Runtime, RuntimeOptions, capability, catalog};

#[derive(Clone)]
struct Store;

#[derive(Clone)]
struct Mailer;

/// Save.
#[capability(effect = "write", scope = "app")]
fn save(_store: Store, _input: rcip_runtime::NoInput) {}

/// Send.
#[capability(effect = "external", scope = "app")]
fn send(_mailer: Mailer, _input: rcip_runtime::NoInput) {}

catalog! {
    struct App {
        id = "app",
        name = "App",
        description = "App.",
        scopes = [("app", "App", "App.")],
        capabilities = [save, send],
    }
}

fn main() {
    let runtime = Runtime::new(App::definition().unwrap(), RuntimeOptions::default()).unwrap();
    // The `Mailer` is missing.
    let _ = App::bind_all(&runtime.host(), (Store,));
}
