//! An Assist fixture: a small notes application (one capability per effect, one that
//! fails), a scripted `decide` that replays queued answers and records every request, and a
//! resolver whose answers the test queues. Included by the Assist test files with
//! `mod common;`.
#![allow(dead_code, unreachable_pub)]

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rcip_assist::*;
use rcip_runtime::*;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use rcip_runtime::testing::EventRecorder;

/// The notes application.
pub struct Notes {
    pub runtime: Runtime,
    pub host: Host,
    pub notes: Arc<Mutex<Vec<String>>>,
    /// Handler runs, over every capability.
    pub handler_calls: Arc<AtomicUsize>,
    pub events: EventRecorder,
}

impl Notes {
    pub fn handler_calls(&self) -> usize {
        self.handler_calls.load(Ordering::SeqCst)
    }
}

/// Reads and writes allowed; destructive operations ask for confirmation.
pub fn notes_app() -> Notes {
    let object = json!({"type": "object", "additionalProperties": false});
    let definition = ApplicationDefinition::new("notes", "Notes", "Keeps notes.")
        .capability(
            CapabilityDefinition::new("notes.list", Effect::Read, "List notes", "Every note.")
                .input_schema(object.clone())
                .output_schema(json!({"type": "array", "items": {"type": "string"}})),
        )
        .capability(
            CapabilityDefinition::new("notes.add", Effect::Write, "Add a note", "Adds a note.")
                .input_schema(json!({
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"],
                    "additionalProperties": false
                }))
                .output_schema(json!({"type": "integer"})),
        )
        .capability(
            CapabilityDefinition::new(
                "notes.clear",
                Effect::Destructive,
                "Clear notes",
                "Deletes every note.",
            )
            .input_schema(object.clone())
            .output_schema(json!({"type": "integer"})),
        )
        .capability(
            CapabilityDefinition::new("notes.broken", Effect::Write, "Broken", "Always fails.")
                .input_schema(object),
        );
    let events = EventRecorder::default();
    let policy = policy_fn(|ctx| match ctx.capability().effect {
        Effect::Read | Effect::Write => PolicyDecision::Allow,
        _ if ctx.confirmed() => PolicyDecision::Allow,
        _ => PolicyDecision::Confirm { reason: None },
    });
    let options = RuntimeOptions::default()
        .policy(policy)
        .on_event(events.observer());
    let runtime = Runtime::new(definition, options).unwrap();
    let host = runtime.host();
    let notes = Arc::new(Mutex::new(Vec::new()));
    let handler_calls = Arc::new(AtomicUsize::new(0));
    let (n, c) = (notes.clone(), handler_calls.clone());
    host.bind(
        "notes.list",
        Binding::new(move |_, _| {
            c.fetch_add(1, Ordering::SeqCst);
            let list = n.lock().unwrap().clone();
            async move { Ok::<_, HandlerError>(json!(list)) }
        }),
    )
    .unwrap()
    .keep();
    let (n, c) = (notes.clone(), handler_calls.clone());
    host.bind(
        "notes.add",
        Binding::new(move |input: Value, _| {
            c.fetch_add(1, Ordering::SeqCst);
            let mut notes = n.lock().unwrap();
            notes.push(input["text"].as_str().unwrap_or_default().to_owned());
            let count = notes.len();
            async move { Ok::<_, HandlerError>(json!(count)) }
        }),
    )
    .unwrap()
    .keep();
    let (n, c) = (notes.clone(), handler_calls.clone());
    host.bind(
        "notes.clear",
        Binding::new(move |_, _| {
            c.fetch_add(1, Ordering::SeqCst);
            let removed = std::mem::take(&mut *n.lock().unwrap()).len();
            async move { Ok::<_, HandlerError>(json!(removed)) }
        }),
    )
    .unwrap()
    .keep();
    let c = handler_calls.clone();
    host.bind(
        "notes.broken",
        Binding::new(move |_, _| {
            c.fetch_add(1, Ordering::SeqCst);
            async {
                Err::<Value, _>(HandlerError::public(
                    "BROKEN",
                    "it always fails",
                    Vec::new(),
                ))
            }
        }),
    )
    .unwrap()
    .keep();
    Notes {
        runtime,
        host,
        notes,
        handler_calls,
        events,
    }
}

/// One queued `decide` answer.
pub enum Answer {
    /// Return this JSON.
    Json(Value),
    /// Return an error.
    Fail(&'static str),
    /// Panic.
    Panic,
    /// Never answer (ignores the token).
    Hang,
}

/// Replays queued answers (a message "ok" once the queue is empty) and records requests.
#[derive(Clone, Default)]
pub struct Script {
    answers: Arc<Mutex<VecDeque<Answer>>>,
    pub requests: Arc<Mutex<Vec<AssistRequest>>>,
    pub tokens: Arc<Mutex<Vec<CancellationToken>>>,
}

impl Script {
    pub fn new(answers: impl IntoIterator<Item = Answer>) -> Self {
        let script = Script::default();
        script.answers.lock().unwrap().extend(answers);
        script
    }

    pub fn push(&self, answer: Answer) {
        self.answers.lock().unwrap().push_back(answer);
    }

    pub fn requests(&self) -> Vec<AssistRequest> {
        self.requests.lock().unwrap().clone()
    }

    pub fn decide(&self) -> impl Decide + 'static {
        let script = self.clone();
        move |request: AssistRequest, token: CancellationToken| {
            script.requests.lock().unwrap().push(request);
            script.tokens.lock().unwrap().push(token);
            let answer = script.answers.lock().unwrap().pop_front();
            async move {
                match answer {
                    None => Ok(message_response("ok")),
                    Some(Answer::Json(value)) => Ok(value),
                    Some(Answer::Fail(text)) => Err(BoxError::from(text)),
                    Some(Answer::Panic) => panic!("decide panicked"),
                    Some(Answer::Hang) => std::future::pending().await,
                }
            }
        }
    }
}

/// Queued answers to confirmation prompts; records what it was shown.
#[derive(Clone, Default)]
pub struct Prompts {
    answers: Arc<Mutex<VecDeque<Option<bool>>>>,
    pub shown: Arc<Mutex<Vec<PendingConfirmation>>>,
}

impl Prompts {
    /// `Some(answer)`, or `None` for a prompt that fails.
    pub fn new(answers: impl IntoIterator<Item = Option<bool>>) -> Self {
        let prompts = Prompts::default();
        prompts.answers.lock().unwrap().extend(answers);
        prompts
    }

    /// A prompt that never answers (waits for cancellation).
    pub fn hanging() -> Self {
        Prompts::default()
    }

    pub fn resolver(&self, host: Host) -> ConfirmationResolver {
        let prompts = self.clone();
        ConfirmationResolver::new(host, move |pending: PendingConfirmation, _| {
            prompts.shown.lock().unwrap().push(pending);
            let answer = prompts.answers.lock().unwrap().pop_front();
            async move {
                match answer {
                    Some(Some(approved)) => Ok(approved),
                    Some(None) => Err(BoxError::from("the dialog crashed")),
                    None => std::future::pending().await,
                }
            }
        })
    }
}

/// A builder over the notes application with `script` deciding and a prompt that never
/// answers.
pub fn builder(app: &Notes, script: &Script) -> AssistBuilder {
    Assist::builder(
        app.runtime.client(),
        script.decide(),
        Prompts::default().resolver(app.host.clone()),
    )
}

/// An interactive Assist over the notes application.
pub fn interactive(app: &Notes, script: &Script, prompts: &Prompts) -> Assist {
    Assist::builder(
        app.runtime.client(),
        script.decide(),
        prompts.resolver(app.host.clone()),
    )
    .mode(AssistMode::Interactive)
    .build()
}

/// An action as JSON.
pub fn act(capability: &str, delay: &str, input: Value) -> Value {
    json!({"capabilityId": capability, "delayAfter": delay, "input": input})
}

/// `{"type": "actions", "actions": [...]}`.
pub fn batch(actions: Vec<Value>) -> Answer {
    Answer::Json(json!({"type": "actions", "actions": actions}))
}

/// `{"type": "message", "message": text}`.
pub fn say(text: &str) -> Answer {
    Answer::Json(message_response(text))
}

/// The turn of a submission.
pub fn turn(submission: Submission) -> TurnReport {
    match submission {
        Submission::Turn(report) => report,
        other => panic!("expected a turn, got {other:?}"),
    }
}
