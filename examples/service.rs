//! Capabilities on a service type: `cargo run --example service`.
//!
//! A notebook service keeps its state in itself; `#[capabilities]` on its impl block makes its
//! `#[capability]` `&self` methods capabilities (types `notebook::add`, `notebook::count`,
//! `notebook::list`), `catalog!` lists them, and `NotesApp::runtime` binds them all over one
//! `Arc<Notebook>` before any client exists. The methods take the caller's [`Principal`] and
//! the [`InvocationContext`] as extractors, and one takes no input at all.

use std::sync::{Arc, Mutex};

use rcip_runtime::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// A note to add.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NewNote {
    /// The note's text.
    text: String,
}

/// A note, as added.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
struct Note {
    /// Its number, from 1.
    number: u32,
    /// Who wrote it.
    author: String,
    /// The text.
    text: String,
}

/// The notebook: one list of notes, shared by every call (each capability's state is the
/// `Arc<Notebook>` given to `NotesApp::runtime`).
#[derive(Debug, Default)]
struct Notebook {
    notes: Mutex<Vec<Note>>,
}

impl Notebook {
    fn notes(&self) -> std::sync::MutexGuard<'_, Vec<Note>> {
        // A poisoned list is still a list: a panicking call is contained by the runtime.
        self.notes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[capabilities]
impl Notebook {
    /// Add a note.
    ///
    /// Adds a note in the caller's name; only an authenticated caller may write.
    #[capability(effect = "write", scope = "notes")]
    fn add(&self, input: NewNote, author: Principal) -> Result<Note, HandlerError> {
        if input.text.trim().is_empty() {
            return Err(HandlerError::public(
                "EMPTY_NOTE",
                "a note needs text",
                Vec::new(),
            ));
        }
        let mut notes = self.notes();
        let number = u32::try_from(notes.len() + 1).map_err(HandlerError::failed)?;
        let note = Note {
            number,
            author: author.id().to_owned(),
            text: input.text,
        };
        notes.push(note.clone());
        Ok(note)
    }

    /// Count the notes.
    ///
    /// How many notes the notebook holds.
    #[capability(effect = "read", scope = "notes")]
    fn count(&self) -> u32 {
        u32::try_from(self.notes().len()).unwrap_or(u32::MAX)
    }

    /// List the notes.
    ///
    /// Every note, oldest first, as "number. author: text".
    #[capability(effect = "read", scope = "notes")]
    async fn list(&self, context: InvocationContext) -> Vec<String> {
        let _ = context.invocation_id();
        self.notes()
            .iter()
            .map(|n| format!("{}. {}: {}", n.number, n.author, n.text))
            .collect()
    }
}

catalog! {
    /// The notes application.
    struct NotesApp {
        id = "notes",
        name = "Notes",
        description = "A shared notebook.",
        scopes = [("notes", "Notebook", "The shared notebook.")],
        capabilities = [notebook::add, notebook::count, notebook::list],
    }
}

/// One line of what a tool sees for an outcome.
fn line(outcome: &InvocationOutcome) -> String {
    match (outcome.output(), outcome.error()) {
        (Some(output), _) => format!("<- succeeded {}: {output}", outcome.capability_id()),
        (None, Some(error)) => format!(
            "<- failed {}: {} {}",
            outcome.capability_id(),
            error.code,
            error.message
        ),
        (None, None) => format!("<- {:?} {}", outcome.status(), outcome.capability_id()),
    }
}

/// Builds the app over one notebook, invokes each capability, and returns the transcript.
///
/// # Errors
///
/// A runtime that cannot start (an invalid definition or a capability left unbound).
pub(crate) async fn transcript() -> Result<Vec<String>, Error> {
    let notebook = Arc::new(Notebook::default());
    // Everything bound over the notebook; a forgotten binding would fail here, not later.
    let runtime = NotesApp::runtime(
        // The default policy denies writes; this one lets every call through, so the
        // `Principal` extractor is what refuses an anonymous write.
        RuntimeOptions::default()
            .policy(policy_fn(|_| PolicyDecision::Allow))
            .require_all_bound(true),
        (notebook.clone(),),
    )?;
    let client = runtime.client();
    let mut lines = vec![format!(
        "application {:?}: {}",
        NotesApp::definition()?.application.id,
        NotesApp::CAPABILITY_IDS.join(", ")
    )];
    let ada = Some(Principal::new("ada"));
    let calls = [
        (notebook::add::ID, json!({"text": "Buy milk"}), ada.clone()),
        (notebook::add::ID, json!({"text": "Call Bob"}), ada),
        // No principal: the `Principal` extractor refuses before the method runs.
        (notebook::add::ID, json!({"text": "anonymous"}), None),
        (notebook::count::ID, json!({}), None),
        (notebook::list::ID, json!({}), None),
    ];
    for (id, input, caller) in calls {
        let who = caller
            .as_ref()
            .map_or("anonymous", Principal::id)
            .to_owned();
        lines.push(format!("-> {id} {input} as {who}"));
        let mut request = InvocationRequest::new(id, input);
        if let Some(principal) = caller {
            request = request.with_extension(principal);
        }
        lines.push(line(&client.invoke(request).await));
    }
    // The host still holds the service it handed over.
    lines.push(format!("host sees {} notes", notebook.notes().len()));
    Ok(lines)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    for line in transcript().await? {
        println!("{line}");
    }
    Ok(())
}
