//! The typed fast path against the `Value` path: the same capability, once with an input
//! schema the fast path applies to (derived from the type) and once with the same schema
//! plus a keyword that changes nothing but that the fast path does not know (so every input
//! goes the `Value` way, as before the fast path existed). For JSON near the type, as text
//! and as a value, both give the same outcome (issues included), the same events, and the
//! policy sees the same input.
#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use rcip_core::SchemaRole;
use rcip_core::schema::strict_schema_for;
use rcip_runtime::testing::EventRecorder;
use rcip_runtime::*;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[path = "common/near_json.rs"]
mod near_json;
use near_json::{Loose, Note, near, texts};

/// One runtime of the pair, with what it records.
struct Side {
    client: Arc<dyn RcipClient>,
    events: EventRecorder,
    seen: Arc<Mutex<Vec<Value>>>,
    _runtime: Runtime,
}

impl Side {
    fn new<T: DeserializeOwned + Serialize + JsonSchema + Send + 'static>(
        input_schema: Value,
    ) -> Side {
        let output = strict_schema_for::<T>(SchemaRole::Output).unwrap();
        let definition = ApplicationDefinition::new("app", "App", "Differential test.").capability(
            CapabilityDefinition::new("app.echo", Effect::Read, "Echo", "Echoes its input.")
                .input_schema(input_schema)
                .output_schema(output),
        );
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = seen.clone();
        let events = EventRecorder::default();
        let options = RuntimeOptions::new()
            .policy(policy_fn(move |ctx| {
                record.lock().unwrap().push(Value::clone(ctx.input()));
                PolicyDecision::Allow
            }))
            .on_event(events.observer());
        let runtime = Runtime::new(definition, options).unwrap();
        let binding = Binding::typed(|input: T, _ctx: InvocationContext| async move {
            Ok::<_, HandlerError>(input)
        });
        runtime.host().bind("app.echo", binding).unwrap().keep();
        Side {
            client: runtime.client(),
            events,
            seen,
            _runtime: runtime,
        }
    }

    /// The outcome (as JSON), the events and what the policy saw, for one input.
    fn run(&self, rt: &tokio::runtime::Runtime, input: Input) -> (Value, Vec<String>, Vec<Value>) {
        self.events.clear();
        self.seen.lock().unwrap().clear();
        let request = InvocationRequest::new("app.echo", input).with_id("inv-1");
        let outcome = rt.block_on(self.client.invoke(request));
        let events = self
            .events
            .phases(None)
            .iter()
            .map(|e| format!("{e:?}"))
            .collect();
        let seen = self.seen.lock().unwrap().clone();
        (serde_json::to_value(&outcome).unwrap(), events, seen)
    }
}

/// The pair for `T`: the derived schema, and the same with `minProperties: 0` added.
fn pair<T: DeserializeOwned + Serialize + JsonSchema + Send + 'static>() -> (Side, Side) {
    let schema = strict_schema_for::<T>(SchemaRole::Input).unwrap();
    let mut general = schema.clone();
    general["minProperties"] = json!(0);
    (Side::new::<T>(schema), Side::new::<T>(general))
}

fn differential(fast: &Side, general: &Side, rt: &tokio::runtime::Runtime, value: &Value) {
    for text in texts(value) {
        assert_eq!(
            fast.run(rt, Input::text(text.clone())),
            general.run(rt, Input::text(text.clone())),
            "text {text}"
        );
    }
    assert_eq!(
        fast.run(rt, Input::Value(value.clone())),
        general.run(rt, Input::Value(value.clone())),
        "value {value}"
    );
}

fn tokio() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn typed_and_value_paths_agree_on_a_strict_struct(value in near()) {
        thread_local!(static PAIR: (Side, Side) = pair::<Note>());
        let rt = tokio();
        PAIR.with(|(fast, general)| differential(fast, general, &rt, &value));
    }

    #[test]
    fn typed_and_value_paths_agree_on_a_loose_struct(value in near()) {
        thread_local!(static PAIR: (Side, Side) = pair::<Loose>());
        let rt = tokio();
        PAIR.with(|(fast, general)| differential(fast, general, &rt, &value));
    }
}

#[test]
fn the_cases_that_differ_between_serde_and_the_schema() {
    let rt = tokio();
    let (fast, general) = pair::<Loose>();
    for text in [
        // Valid, and taken by the typed parse.
        r#"{"title":"a","color":"Red","at":{"x":1,"y":2},"labels":{"k":true}}"#,
        // serde takes these; the schema refuses them (issues).
        r#"["a", 1, null, null, null, null, null]"#,
        r#"{"name":"a"}"#,
        r#"{"title":"a","color":{"Red":null}}"#,
        r#"{"title":"a","other":1}"#,
        // The schema takes these; serde refuses them (EXECUTION_FAILED) or keeps the last.
        r#"{"title":"a","small":7.0}"#,
        r#"{"title":"a","title":"b"}"#,
        // Not JSON: INPUT_INVALID, no issues, no events.
        r#"{"title":"a""#,
        "",
    ] {
        let (outcome, events, seen) = fast.run(&rt, Input::text(text));
        assert_eq!(
            (outcome.clone(), events.clone(), seen.clone()),
            general.run(&rt, Input::text(text)),
            "{text}"
        );
        if text.is_empty() {
            assert_eq!(outcome["error"]["code"], "INPUT_INVALID");
            assert!(events.is_empty());
        }
    }
    // The first one succeeded, on the typed path, and the policy saw the input as a value.
    let (outcome, _, seen) = fast.run(&rt, Input::text(r#"{"title":"a","small":3}"#));
    assert_eq!(outcome["status"], "succeeded", "{outcome}");
    assert_eq!(seen, [json!({"title": "a", "small": 3})]);
}

/// Records which deserializer built it: the typed parse's or serde_json's `Value`.
#[derive(Debug, Serialize, JsonSchema)]
struct Probe {
    title: String,
}

static DESERIALIZERS: Mutex<Vec<bool>> = Mutex::new(Vec::new());

/// Held by each test that reads [`DESERIALIZERS`], so tests running in parallel do not mix
/// their records.
static PROBING: Mutex<()> = Mutex::new(());

/// What [`Probe`] and [`Picky`] read before deciding.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Plain {
    title: String,
}

impl<'de> Deserialize<'de> for Probe {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let from_value = std::any::type_name::<D>().contains("Value");
        DESERIALIZERS.lock().unwrap().push(from_value);
        Plain::deserialize(d).map(|p| Probe { title: p.title })
    }
}

#[test]
fn text_goes_straight_into_the_type_when_the_schema_has_a_shape() {
    let _probing = PROBING.lock().unwrap_or_else(|e| e.into_inner());
    let rt = tokio();
    let (fast, general) = pair::<Probe>();
    let taken = |side: &Side, input: Input| {
        DESERIALIZERS.lock().unwrap().clear();
        let (outcome, _, seen) = side.run(&rt, input);
        assert_eq!(outcome["status"], "succeeded", "{outcome}");
        assert_eq!(seen, [json!({"title": "a"})]);
        DESERIALIZERS.lock().unwrap().clone()
    };
    let text = || Input::text(r#"{"title":"a"}"#);
    assert_eq!(taken(&fast, text()), [false], "typed, no Value");
    assert_eq!(taken(&general, text()), [true], "no shape: the Value path");
    assert_eq!(taken(&fast, Input::Value(json!({"title": "a"}))), [true]);
}

/// Echoes the title.
///
/// Reads the probe's title back.
#[capability(effect = "read", scope = "probes")]
fn probe_title(input: Probe) -> String {
    input.title
}

/// A title serde refuses when it is "no", though the schema takes any string: schema and
/// type disagree, a host defect.
#[derive(Debug, Serialize, JsonSchema)]
struct Picky {
    title: String,
}

impl<'de> Deserialize<'de> for Picky {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let plain = Plain::deserialize(d)?;
        if plain.title == "no" {
            return Err(serde::de::Error::custom("no"));
        }
        Ok(Picky { title: plain.title })
    }
}

/// Echoes a picky title.
///
/// Reads the title back, if serde takes it.
#[capability(effect = "read", scope = "probes")]
fn picky_title(input: Picky) -> String {
    input.title
}

rcip_runtime::catalog! {
    /// An application over [`Probe`] and [`Picky`].
    struct Probes {
        id = "probes",
        name = "Probes",
        description = "Probes.",
        scopes = [("probes", "Probes", "Probes.")],
        capabilities = [probe_title, picky_title],
    }
}

/// A macro capability's input that the schema accepts and serde refuses fails the
/// invocation (`EXECUTION_FAILED`), never the process, whether it came as a value or as
/// text (which the typed parse refuses, so it goes the `Value` way).
#[test]
fn a_macro_capability_whose_type_refuses_a_valid_input_fails_it() {
    let rt = tokio();
    let options = RuntimeOptions::default().policy(policy_fn(|_| PolicyDecision::Allow));
    let runtime = Probes::runtime(options, ()).unwrap();
    let client = runtime.client();
    let invoke =
        |input: Input| rt.block_on(client.invoke(InvocationRequest::new(picky_title::ID, input)));
    for input in [
        Input::Value(json!({"title": "no"})),
        Input::text(r#"{"title":"no"}"#),
    ] {
        let outcome = invoke(input);
        assert_eq!(
            outcome.error_code(),
            Some(ErrorCode::ExecutionFailed),
            "{outcome:?}"
        );
    }
    for input in [
        Input::Value(json!({"title": "yes"})),
        Input::text(r#"{"title":"yes"}"#),
    ] {
        assert_eq!(invoke(input).output(), Some(&json!("yes")));
    }
}

#[test]
fn a_macro_capability_takes_the_typed_path_too() {
    let _probing = PROBING.lock().unwrap_or_else(|e| e.into_inner());
    let rt = tokio();
    let options = RuntimeOptions::default().policy(policy_fn(|_| PolicyDecision::Allow));
    let runtime = Probes::runtime(options, ()).unwrap();
    let client = runtime.client();
    let invoke = |input: Input| {
        DESERIALIZERS.lock().unwrap().clear();
        let outcome = rt.block_on(client.invoke(InvocationRequest::new(probe_title::ID, input)));
        assert_eq!(outcome.output(), Some(&json!("a")), "{outcome:?}");
        DESERIALIZERS.lock().unwrap().clone()
    };
    assert_eq!(
        invoke(Input::text(r#"{"title":"a"}"#)),
        [false],
        "typed, no Value"
    );
    assert_eq!(invoke(Input::Value(json!({"title": "a"}))), [true]);
}
