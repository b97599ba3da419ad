//! The benches' workload: one small read capability (title string, count integer, up to 10
//! tags -> id and title; a trivial typed handler), repeated to make catalogs of any size.
//!
//! Shared by the benches and by `examples/memory_10000.rs` (through `#[path]`), so every
//! figure in `docs/performance.md` is of the same capability.

// Each bench and the example use a different part of it.
#![allow(dead_code)]

use std::hint::black_box;
use std::sync::Arc;

use rcip_runtime::*;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The input every arm uses, as JSON text.
pub(crate) const INPUT: &str =
    r#"{"title":"Weekly sync","count":7,"tags":["team","sync","weekly"]}"#;

/// The handler's typed input.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoteInput {
    pub(crate) title: String,
    #[allow(dead_code)]
    pub(crate) count: Option<u32>,
    #[allow(dead_code)]
    pub(crate) tags: Option<Vec<String>>,
}

/// The handler's typed output.
#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct NoteOutput {
    pub(crate) id: &'static str,
    pub(crate) title: String,
}

/// The trivial handler.
pub(crate) async fn handler(input: NoteInput) -> Result<NoteOutput, HandlerError> {
    Ok(NoteOutput {
        id: "n1",
        title: input.title,
    })
}

/// [`INPUT`] as a JSON value.
pub(crate) fn input_value() -> Value {
    serde_json::from_str(INPUT).unwrap()
}

/// The input schema.
pub(crate) fn input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "title": {"type": "string", "minLength": 1, "maxLength": 80},
            "count": {"type": "integer", "minimum": 0, "maximum": 1000},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 10}
        },
        "required": ["title"],
        "additionalProperties": false
    })
}

/// The input schema derived from [`NoteInput`], as `#[capability]` derives it: no lengths or
/// bounds beyond the types' (`count` is a `u32`).
pub(crate) fn derived_input_schema() -> Value {
    rcip_core::schema::strict_schema_for::<NoteInput>(rcip_core::SchemaRole::Input).unwrap()
}

/// The output schema.
pub(crate) fn output_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"id": {"type": "string"}, "title": {"type": "string"}},
        "required": ["id", "title"],
        "additionalProperties": false
    })
}

/// The id of capability `i`.
pub(crate) fn id(i: usize) -> String {
    format!("notes.read{i}")
}

/// A catalog of `size` capabilities, all with the same input and the same output schema,
/// each built once and shared (a [`Schema`] clone is a reference count), as an application
/// that declares many capabilities over one schema does.
pub(crate) fn definition(size: usize) -> ApplicationDefinition {
    definition_with(size, input_schema())
}

/// [`definition`] with the given input schema.
pub(crate) fn definition_with(size: usize, input: impl Into<Schema>) -> ApplicationDefinition {
    let input = input.into();
    let output = Schema::from(output_schema());
    catalog(size, || (input.clone(), output.clone()))
}

/// A catalog of `size` note readers, each given the (input, output) schemas `schemas` makes.
fn catalog(size: usize, mut schemas: impl FnMut() -> (Schema, Schema)) -> ApplicationDefinition {
    let mut app = ApplicationDefinition::new("bench", "Bench", "Benchmark catalog.")
        .scope(ScopeDefinition::new("notes", "Notes", "Notes."));
    for i in 0..size {
        let (input, output) = schemas();
        app = app.capability(
            CapabilityDefinition::new(id(i), Effect::Read, "Read a note", "Reads a note.")
                .scope("notes")
                .input_schema(input)
                .output_schema(output),
        );
    }
    app
}

/// [`definition`] as an application that builds each capability's schemas in a loop writes
/// it (issue 39's copy-built workload): every capability's input and output schema a value
/// of its own, equal by content to the others'.
#[allow(dead_code)] // The memory example's arm; the benches share one schema.
pub(crate) fn definition_built_apart(size: usize) -> ApplicationDefinition {
    catalog(size, || (input_schema().into(), output_schema().into()))
}

/// The typed binding of the handler.
pub(crate) fn binding() -> Binding {
    Binding::typed(|input: NoteInput, _ctx| handler(input))
}

/// Binds every capability of a runtime over [`definition`]`(size)`, keeping the bindings.
pub(crate) fn bind_all(runtime: &Runtime, size: usize) {
    let host = runtime.host();
    for i in 0..size {
        host.bind(&id(i), binding()).unwrap().keep();
    }
}

/// The allow-everything options the invoke arms use.
pub(crate) fn allow_options() -> RuntimeOptions {
    RuntimeOptions::default().policy(policy_fn(|_| PolicyDecision::Allow))
}

/// A runtime over [`definition`]`(size)` with every capability bound and an allow policy.
pub(crate) fn bound_runtime(size: usize) -> Runtime {
    let runtime = Runtime::new(definition(size), allow_options()).unwrap();
    bind_all(&runtime, size);
    runtime
}

/// [`bound_runtime`] over [`derived_input_schema`].
pub(crate) fn derived_runtime(size: usize) -> Runtime {
    let definition = definition_with(size, derived_input_schema());
    let runtime = Runtime::new(definition, allow_options()).unwrap();
    bind_all(&runtime, size);
    runtime
}

/// Ten `#[capability]` functions calling [`handler`], ids `notes.read0` to `notes.read9`: the
/// catalog of [`macro_runtime`], as an application declares its capabilities.
macro_rules! note_capabilities {
    ($($name:ident = $id:literal),* $(,)?) => {$(
        /// Read a note
        ///
        /// Reads a note.
        #[capability(effect = "read", scope = "notes", id = $id)]
        pub(crate) async fn $name(input: NoteInput) -> Result<NoteOutput, HandlerError> {
            handler(input).await
        }
    )*};
}

note_capabilities!(
    read0 = "notes.read0",
    read1 = "notes.read1",
    read2 = "notes.read2",
    read3 = "notes.read3",
    read4 = "notes.read4",
    read5 = "notes.read5",
    read6 = "notes.read6",
    read7 = "notes.read7",
    read8 = "notes.read8",
    read9 = "notes.read9",
);

catalog! {
    /// The ten capabilities of [`note_capabilities`].
    pub(crate) struct NoteCatalog {
        id = "bench",
        name = "Bench",
        description = "Benchmark catalog.",
        scopes = [("notes", "Notes", "Notes.")],
        capabilities = [read0, read1, read2, read3, read4, read5, read6, read7, read8, read9],
    }
}

/// A runtime of [`NoteCatalog`] (catalog 10, every capability bound by `catalog!`, schemas
/// derived from the types by `#[capability]`) with the allow policy: what an application
/// that declares its capabilities with the macros runs.
pub(crate) fn macro_runtime() -> Runtime {
    NoteCatalog::runtime(allow_options(), ()).unwrap()
}

/// The value floor: what a typed handler costs with a value input and no runtime.
pub(crate) async fn value_floor(input: &Value) -> Value {
    let input = NoteInput::deserialize(black_box(input).clone()).unwrap();
    serde_json::to_value(handler(input).await.unwrap()).unwrap()
}

/// The typed floor: what a typed handler costs with a text input and no runtime.
pub(crate) async fn text_floor() -> Value {
    let input: NoteInput = serde_json::from_str(black_box(INPUT)).unwrap();
    serde_json::to_value(handler(input).await.unwrap()).unwrap()
}

/// A batch of 16 proposals over a catalog of 10, each with its own copy of the input.
pub(crate) fn batch16(input: &Value) -> PreflightBatch {
    PreflightBatch::new(
        (0..16)
            .map(|i| PreflightProposal::new(id(i % 10), Input::Value(input.clone())))
            .collect(),
    )
}

/// The ids of [`batch16`]'s proposals.
pub(crate) fn batch16_ids() -> Vec<String> {
    (0..16).map(|i| id(i % 10)).collect()
}

/// [`batch16`] over one input the caller shares with every proposal ([`Input::Shared`]), as
/// a client checking a plan it is about to run holds its inputs: the batch costs the ids'
/// copies and reference counts, so the ratio is the runtime's own work per proposal.
pub(crate) fn batch16_shared(ids: &[String], input: &Arc<Value>) -> PreflightBatch {
    PreflightBatch::new(
        ids.iter()
            .map(|id| PreflightProposal::new(id.clone(), Input::Shared(input.clone())))
            .collect(),
    )
}

/// [`batch16`] over 16 inputs built apart, each an `Arc` the caller keeps (to invoke the
/// ready proposals next) and shares with its proposal: the batch and the inputs.
pub(crate) fn batch16_held(ids: &[String]) -> (PreflightBatch, Vec<Arc<Value>>) {
    let inputs: Vec<Arc<Value>> = ids.iter().map(|_| Arc::new(input_value())).collect();
    let batch = PreflightBatch::new(
        ids.iter()
            .zip(&inputs)
            .map(|(id, input)| PreflightProposal::new(id.clone(), Input::Shared(input.clone())))
            .collect(),
    );
    (batch, inputs)
}
