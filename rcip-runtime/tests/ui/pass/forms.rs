//! The forms `#[capability]` tells apart by trait: no input, extractors only, a `Result`
//! through an alias, `&self` methods (with `Self` in their types), and `bind_all` with a
//! single-state tuple.
use std::sync::Arc;

use rcip_runtime::{
    CancellationSignal, HandlerError, InvocationContext, Runtime, RuntimeOptions, capabilities,
    capability, catalog,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Deserialize, JsonSchema)]
struct Input {
    name: String,
}

#[derive(Clone)]
struct Store;

type Res<T> = std::result::Result<T, HandlerError>;

/// No parameters at all.
#[capability(effect = "read", scope = "app")]
fn bare() {}

/// Only extractors.
#[capability(effect = "read", scope = "app")]
async fn extractors(_cancel: CancellationSignal, _context: InvocationContext) -> Res<u8> {
    Ok(1)
}

/// State and input, then an extractor.
#[capability(effect = "write", scope = "app")]
fn stateful(_store: Store, input: Input, _context: InvocationContext) -> Res<String> {
    Ok(input.name)
}

/// State without input: the input is spelled `NoInput`.
#[capability(effect = "read", scope = "app")]
fn state_only(_store: Store, _input: rcip_runtime::NoInput) -> u8 {
    0
}

/// A `pub` method needs a `pub` type: its capability type is as visible as the method.
#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Counter {
    value: u32,
}

#[capabilities(module = counters)]
impl Counter {
    /// Read the counter.
    #[capability(effect = "read", scope = "app")]
    pub fn read(&self) -> Self {
        Counter { value: self.value }
    }

    /// Compare with another counter.
    #[capability(effect = "read", scope = "app")]
    async fn compare(&self, other: Self, _cancel: CancellationSignal) -> bool {
        other.value == self.value
    }
}

catalog! {
    struct App {
        id = "app",
        name = "App",
        description = "Forms.",
        scopes = [("app", "App", "Everything.")],
        capabilities = [bare, extractors, stateful, state_only, counters::read, counters::compare],
    }
}

fn main() {
    assert_eq!(bare::ID, "app.bare");
    assert_eq!(counters::read::ID, "app.read");
    let runtime = Runtime::new(App::definition().unwrap(), RuntimeOptions::default()).unwrap();
    let guards = App::bind_all(&runtime.host(), (Store, Arc::new(Counter { value: 1 }))).unwrap();
    assert_eq!(guards.len(), 6);
}
