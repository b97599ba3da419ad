//! The directory store conformance suite on the in-memory directory, and the directory
//! model's wire form.
#![allow(clippy::unwrap_used)]

mod directory_conformance;

directory_conformance!(memory, rcip_platform::MemoryDirectory::new());

use rcip_platform::{Collection, Member, MemberRole, ProgramVersion, Visibility, Workspace};
use rcip_records::DelegatedScope;
use serde_json::json;

#[test]
fn the_model_reads_and_writes_its_wire_form() {
    let workspace = Workspace {
        workspace_id: "acme".into(),
        name: "Acme".into(),
        created_at: 1_700_000_000_123,
    };
    let wire = serde_json::to_value(&workspace).unwrap();
    assert_eq!(
        wire,
        json!({"workspace_id": "acme", "name": "Acme", "created_at": "2023-11-14T22:13:20.123Z"})
    );
    assert_eq!(
        serde_json::from_value::<Workspace>(wire).unwrap(),
        workspace
    );

    let bot = Member::agent(
        "bot",
        [DelegatedScope::RecordsRead, DelegatedScope::CommandsExecute],
    );
    assert_eq!(
        serde_json::to_value(&bot).unwrap(),
        json!({"principal_id": "bot", "kind": "agent", "role": "agent",
               "scopes": ["records:read", "commands:execute"]})
    );
    let ada = Member::human("ada", MemberRole::Owner);
    assert_eq!(
        serde_json::to_value(&ada).unwrap(),
        json!({"principal_id": "ada", "kind": "human", "role": "owner"})
    );
    assert!(
        serde_json::from_value::<Member>(
            json!({"principal_id": "x", "kind": "robot", "role": "agent"})
        )
        .is_err()
    );

    let collection: Collection = serde_json::from_value(json!({
        "workspace_id": "acme", "collection_id": "vault", "name": "Vault",
        "visibility": "restricted", "grants": [{"principal_id": "bea", "access": "read"}],
        "created_at": "2023-11-14T22:13:20Z"}))
    .unwrap();
    assert_eq!(collection.visibility, Visibility::Restricted);
    assert_eq!(collection.created_at, 1_700_000_000_000);

    let installed = ProgramVersion {
        workspace_id: None,
        namespace: "polls".into(),
        version: 1,
        digest: "sha256:x".into(),
        package: json!({}),
        activated_at: 0,
        activated_by: "host".into(),
    };
    let wire = serde_json::to_value(&installed).unwrap();
    assert!(
        wire.get("workspace_id").is_none(),
        "installed versions have no workspace"
    );
    assert_eq!(wire["activated_at"], "1970-01-01T00:00:00.000Z");
}
