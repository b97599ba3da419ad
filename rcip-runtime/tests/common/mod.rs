//! Shared fixtures for the runtime's integration tests. Each test file includes this with
//! `mod common;`; not every file uses every item.
#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rcip_runtime::*;
use serde_json::{Value, json};

#[allow(unused_imports)] // not every test file uses both
pub use rcip_runtime::testing::{EventRecorder, ManualClock};

/// `{"title": string (1..=80), "count": integer 0..=100, "tags": up to 10 strings}`.
pub fn note_input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "title": {"type": "string", "minLength": 1, "maxLength": 80},
            "count": {"type": "integer", "minimum": 0, "maximum": 100},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 10}
        },
        "required": ["title"],
        "additionalProperties": false
    })
}

/// `{"id": string, "title": string}`.
pub fn note_output_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"id": {"type": "string"}, "title": {"type": "string"}},
        "required": ["id", "title"],
        "additionalProperties": false
    })
}

/// A catalog with two scopes (`notes`, `archive`) and one capability per effect plus a
/// global read:
/// - `notes.read` (read, scope notes)
/// - `notes.create` (write, scope notes)
/// - `notes.share` (external, scope notes)
/// - `notes.purge` (destructive, scope archive)
/// - `app.ping` (read, global: no scopes)
///
/// All but `app.ping` take [`note_input_schema`] and return [`note_output_schema`];
/// `app.ping` takes `{}` and returns `"pong"`-like strings (`{"type": "string"}`).
pub fn definition() -> ApplicationDefinition {
    let note = |id: &str, effect: Effect, scope: &str| {
        CapabilityDefinition::new(
            id,
            effect,
            format!("Title of {id}"),
            format!("Description of {id}."),
        )
        .scope(scope)
        .input_schema(note_input_schema())
        .output_schema(note_output_schema())
    };
    ApplicationDefinition::new("notes", "Notes", "A notebook for tests.")
        .scope(ScopeDefinition::new("notes", "Notes", "The note list."))
        .scope(ScopeDefinition::new("archive", "Archive", "Archived notes.").parent("notes"))
        .capability(note("notes.read", Effect::Read, "notes").tag("query"))
        .capability(note("notes.create", Effect::Write, "notes"))
        .capability(note("notes.share", Effect::External, "notes"))
        .capability(note("notes.purge", Effect::Destructive, "archive"))
        .capability(
            CapabilityDefinition::new("app.ping", Effect::Read, "Ping", "Answers pong.")
                .output_schema(json!({"type": "string"})),
        )
}

/// A handler returning `{"id": "n1", "title": <input title>}` and counting its calls.
pub fn echo_binding(calls: Arc<AtomicU64>) -> Binding {
    Binding::new(move |input: Value, _ctx: InvocationContext| {
        calls.fetch_add(1, Ordering::SeqCst);
        async move {
            let title = input.get("title").cloned().unwrap_or(Value::Null);
            Ok::<_, HandlerError>(json!({"id": "n1", "title": title}))
        }
    })
}

/// A valid [`note_input_schema`] input.
pub fn note(title: &str) -> Value {
    json!({"title": title, "count": 1, "tags": ["a"]})
}

/// An "allow everything; confirmation-free" policy.
pub fn allow_all() -> Arc<dyn Policy> {
    policy_fn(|_| PolicyDecision::Allow)
}

/// "Allow reads; confirm everything else unless confirmed" (the pilot's policy).
pub fn confirm_writes() -> Arc<dyn Policy> {
    policy_fn(|ctx| match ctx.capability().effect {
        Effect::Read => PolicyDecision::Allow,
        _ if ctx.confirmed() => PolicyDecision::Allow,
        _ => PolicyDecision::Confirm { reason: None },
    })
}
