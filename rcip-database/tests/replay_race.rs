//! The same call under the same key, finishing elsewhere between this call's key lookup and
//! its read of the record (another instance, a client's concurrent retry): this call is a
//! replay of it, never a stale-revision conflict. The store below runs the other call at
//! exactly that point, so the race is played every time.
#![allow(clippy::unwrap_used)]

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use rcip_records::{Actor, Caller, CreateRecord, Engine, GetRecord, MemoryStore, UpdateRecord};
use rcip_relationship::{Package, parse_package};
use serde_json::json;
use uuid::Uuid;

mod store_support;
use store_support::{Step, Tap, Tapped};

type Hook = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The tap of a store over a shared one that, at its next `get`, first runs a hook to
/// completion.
#[derive(Debug, Default)]
struct Interleave {
    hook: Mutex<Option<HookCell>>,
}

struct HookCell(Hook);

impl std::fmt::Debug for HookCell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HookCell")
    }
}

impl Tap for Interleave {
    fn before_get(&self, _workspace_id: &str, _id: Uuid) -> Option<Step<'_>> {
        let HookCell(hook) = self.hook.lock().unwrap().take()?;
        Some(Box::pin(async move {
            hook.await;
            Ok(())
        }))
    }
}

fn notes() -> Package {
    parse_package(
        &json!({"protocol": "relationship/v1", "namespace": "notes", "version": 1,
            "types": {"note": {"kind": "entity", "schema": {"type": "object",
                "properties": {"text": {"type": "string"}}, "required": ["text"],
                "additionalProperties": false},
                "lifecycle": {"initial": "open", "states": ["open", "done"]},
                "commands": {"finish": {"input": {"type": "object", "properties": {},
                    "required": [], "additionalProperties": false},
                    "from": ["open"], "to": "done"}}}}})
        .to_string(),
    )
    .unwrap()
}

/// Two engines on one store: `here` reads through the interleaving store, `there` does not.
type Here = Tapped<Arc<MemoryStore>, Interleave>;

fn engines() -> (Engine<Here>, Arc<Engine<Arc<MemoryStore>>>, Caller) {
    let inner = Arc::new(MemoryStore::new());
    let here = Engine::new(Tapped {
        inner: Arc::clone(&inner),
        tap: Interleave::default(),
    })
    .with_program(notes())
    .unwrap();
    let there = Arc::new(Engine::new(inner).with_program(notes()).unwrap());
    (here, there, Caller::human(Actor::new("ada")))
}

async fn a_note(there: &Engine<Arc<MemoryStore>>, ada: &Caller) -> rcip_records::RecordView {
    let note = CreateRecord::new("w", "c", "notes", "note", [("text", json!("a"))], "n1");
    there.create(ada, note).await.unwrap()
}

#[tokio::test]
async fn an_update_finished_elsewhere_meanwhile_is_replayed() {
    let (here, there, ada) = engines();
    let note = a_note(&there, &ada).await;
    let update = UpdateRecord::new("w", note.id, 1, "u1").with_set("text", json!("b"));
    let (elsewhere, args, caller) = (Arc::clone(&there), update.clone(), ada.clone());
    *here.store().hook.lock().unwrap() = Some(HookCell(Box::pin(async move {
        elsewhere.update(&caller, args).await.unwrap();
    })));
    let replayed = here.update(&ada, update).await.unwrap();
    assert_eq!(replayed.revision, 2);
    assert_eq!(replayed.data["text"], "b");
    // One change, not two.
    let now = there.get(&ada, GetRecord::new("w", note.id)).await.unwrap();
    assert_eq!(now.revision, 2);
}

#[tokio::test]
async fn a_command_executed_elsewhere_meanwhile_is_replayed() {
    let (here, there, ada) = engines();
    let note = a_note(&there, &ada).await;
    let finish = rcip_records::ExecuteCommand::new("w", note.id, "finish", 1, "f1");
    let (elsewhere, args, caller) = (Arc::clone(&there), finish.clone(), ada.clone());
    *here.store().hook.lock().unwrap() = Some(HookCell(Box::pin(async move {
        elsewhere.execute(&caller, args).await.unwrap();
    })));
    let replayed = here.execute(&ada, finish).await.unwrap();
    assert_eq!(replayed.revision, 2);
    // Other arguments under a new key still meet the real conflict.
    let stale = rcip_records::ExecuteCommand::new("w", note.id, "finish", 1, "f2");
    let error = here.execute(&ada, stale).await.unwrap_err();
    assert_eq!(error.code(), "STALE_REVISION");
}
