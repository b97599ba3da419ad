//! The one authorization decision: every refusal's status and code, and the allowed cases.
#![allow(clippy::unwrap_used)]

use rcip_platform::{
    Access, Agents, Collection, Denial, Grant, Member, MemberRole, PlatformError, Visibility,
    Workspace, WorkspaceAccess, authorize_call, authorize_collection, authorize_operation,
    collection_access, effective_scopes, operation, operations, parse_call, readable_collections,
};
use rcip_records::{Actor, Caller, DelegatedScope as S};
use serde_json::{Value, json};

fn collection(id: &str, visibility: Visibility, grants: &[(&str, Access)]) -> Collection {
    Collection {
        workspace_id: "acme".into(),
        collection_id: id.into(),
        name: id.into(),
        visibility,
        grants: grants
            .iter()
            .map(|(p, a)| Grant {
                principal_id: (*p).into(),
                access: *a,
            })
            .collect(),
        created_at: 0,
    }
}

/// ada owns acme; bea is a member; bot is an agent with a broad delegation, weak and power
/// are agents bot may or may not manage.
fn acme() -> WorkspaceAccess {
    WorkspaceAccess {
        workspace: Workspace {
            workspace_id: "acme".into(),
            name: "Acme".into(),
            created_at: 0,
        },
        members: vec![
            Member::human("ada", MemberRole::Owner),
            Member::human("bea", MemberRole::Member),
            Member::agent(
                "bot",
                [
                    S::RecordsRead,
                    S::RecordsWrite,
                    S::MembersManage,
                    S::CollectionsManage,
                ],
            ),
            Member::agent("power", [S::RecordsRead, S::ProgramsActivate]),
            Member::agent("weak", [S::RecordsRead]),
        ],
        collections: vec![
            collection("inbox", Visibility::Workspace, &[]),
            collection("secret", Visibility::Restricted, &[]),
            collection(
                "vault",
                Visibility::Restricted,
                &[("bea", Access::Read), ("bot", Access::Read)],
            ),
        ],
    }
}

fn human(id: &str) -> Caller {
    Caller::human(Actor::new(id))
}

fn agent(id: &str, scopes: impl IntoIterator<Item = S>) -> Caller {
    Caller::agent(Actor::new(id).via("tests"), scopes)
}

/// The bot with every scope in its credential (its membership is what limits it).
fn bot() -> Caller {
    agent("bot", S::ALL)
}

fn refused(result: Result<(), Denial>) -> (u16, &'static str) {
    let denial = result.unwrap_err();
    (denial.status().as_u16(), denial.code())
}

/// `authorize_call` for one operation and its arguments, as the platform runs it.
fn call(
    caller: &Caller,
    name: &str,
    arguments: Value,
    access: Option<&WorkspaceAccess>,
) -> Result<(), Denial> {
    let (spec, call) = parse_call(name, &arguments).unwrap();
    authorize_call(caller, spec, &call, access)
}

#[test]
fn console_only_operations_refuse_agents_whatever_their_scopes() {
    let create = operation("workspace.create").unwrap();
    assert_eq!(create.agents, Agents::ConsoleOnly);
    let all_powerful = agent("root-bot", S::ALL);
    assert_eq!(
        refused(authorize_operation(&all_powerful, create, None)),
        (403, "CONSOLE_ONLY")
    );
    assert!(authorize_operation(&human("ada"), create, None).is_ok());
    let denial = authorize_operation(&all_powerful, create, None).unwrap_err();
    assert!(denial.to_string().contains("workspace.create"), "{denial}");
    // Only workspace.create is console-only as a whole.
    let console: Vec<&str> = operations()
        .iter()
        .filter(|s| s.agents == Agents::ConsoleOnly)
        .map(|s| s.name)
        .collect();
    assert_eq!(console, ["workspace.create"]);
}

#[test]
fn adding_a_human_is_console_only_before_the_workspace_is_even_looked_at() {
    let add_human = json!({"workspace_id": "acme", "principal_id": "cy", "kind": "human", "idempotency_key": "k"});
    // Step 2 comes before step 3: an unknown workspace still answers CONSOLE_ONLY.
    assert_eq!(
        refused(call(&bot(), "member.add", add_human.clone(), None)),
        (403, "CONSOLE_ONLY")
    );
    assert_eq!(
        refused(call(&bot(), "member.add", add_human.clone(), Some(&acme()))),
        (403, "CONSOLE_ONLY")
    );
    assert!(call(&human("ada"), "member.add", add_human, Some(&acme())).is_ok());
}

#[test]
fn an_unknown_workspace_and_a_non_member_get_the_same_404() {
    let get = operation("workspace.get").unwrap();
    let unknown = authorize_operation(&human("eve"), get, None).unwrap_err();
    let stranger = authorize_operation(&human("eve"), get, Some(&acme())).unwrap_err();
    assert_eq!(
        (unknown.status().as_u16(), unknown.code()),
        (404, "WORKSPACE_NOT_FOUND")
    );
    assert_eq!(unknown, stranger);
    assert_eq!(unknown.to_string(), stranger.to_string());
    // A non-member agent with every scope learns nothing either, even about scoped operations.
    let search = operation("record.search").unwrap();
    assert_eq!(
        refused(authorize_operation(
            &agent("eve-bot", S::ALL),
            search,
            Some(&acme())
        )),
        (404, "WORKSPACE_NOT_FOUND")
    );
    // Nor does an agent credential for a principal registered as a human.
    assert_eq!(
        refused(authorize_operation(
            &agent("ada", S::ALL),
            get,
            Some(&acme())
        )),
        (404, "WORKSPACE_NOT_FOUND")
    );
    // Members pass.
    assert!(authorize_operation(&human("bea"), get, Some(&acme())).is_ok());
    assert!(authorize_operation(&agent("weak", []), get, Some(&acme())).is_ok());
}

#[test]
fn an_agent_needs_the_scope_in_both_its_membership_and_its_credential() {
    let create = operation("record.create").unwrap();
    let access = acme();
    // Member scope and credential scope: allowed.
    assert!(authorize_operation(&agent("bot", [S::RecordsWrite]), create, Some(&access)).is_ok());
    // The credential lacks it.
    let denial =
        authorize_operation(&agent("bot", [S::RecordsRead]), create, Some(&access)).unwrap_err();
    assert_eq!(
        (denial.status().as_u16(), denial.code()),
        (403, "INSUFFICIENT_SCOPE")
    );
    assert_eq!(
        denial,
        Denial::InsufficientScope {
            scope: S::RecordsWrite
        }
    );
    assert!(
        denial.to_string().contains("records:write"),
        "names the scope: {denial}"
    );
    // The membership lacks it.
    assert_eq!(
        refused(authorize_operation(
            &agent("weak", S::ALL),
            create,
            Some(&access)
        )),
        (403, "INSUFFICIENT_SCOPE")
    );
    assert_eq!(
        effective_scopes(&agent("weak", S::ALL), &access),
        [S::RecordsRead].into()
    );
    assert_eq!(
        effective_scopes(&agent("bot", [S::RecordsRead, S::ProgramsDraft]), &access),
        [S::RecordsRead].into()
    );
    assert!(effective_scopes(&agent("eve-bot", S::ALL), &access).is_empty());
    // Humans need no delegated scopes.
    assert!(authorize_operation(&human("bea"), create, Some(&access)).is_ok());
    assert_eq!(effective_scopes(&human("bea"), &access).len(), S::ALL.len());
}

#[test]
fn every_scoped_operation_needs_exactly_its_scope() {
    let access = acme();
    for spec in operations() {
        let Some(scope) = spec.scope else { continue };
        // An agent member holding every other scope is refused, naming this one.
        let others: Vec<S> = S::ALL.into_iter().filter(|s| *s != scope).collect();
        let mut without = access.clone();
        without.members.push(Member::agent("probe", others.clone()));
        let denial =
            authorize_operation(&agent("probe", S::ALL), spec, Some(&without)).unwrap_err();
        assert_eq!(denial, Denial::InsufficientScope { scope }, "{}", spec.name);
        // Holding only this one is enough for the operation-level decision.
        let mut with = access.clone();
        with.members.push(Member::agent("probe", [scope]));
        assert!(
            authorize_operation(&agent("probe", [scope]), spec, Some(&with)).is_ok(),
            "{}",
            spec.name
        );
    }
}

#[test]
fn directory_reads_need_membership_only() {
    let access = acme();
    let reads = [
        "capabilities.list",
        "workspace.get",
        "member.list",
        "collection.list",
        "program.versions",
        "program.get",
    ];
    for name in reads {
        let spec = operation(name).unwrap();
        assert_eq!(spec.scope, None, "{name}");
        assert!(
            authorize_operation(&agent("weak", []), spec, Some(&access)).is_ok(),
            "{name}"
        );
        assert_eq!(
            refused(authorize_operation(
                &agent("eve-bot", S::ALL),
                spec,
                Some(&access)
            )),
            (404, "WORKSPACE_NOT_FOUND"),
            "{name}"
        );
    }
    // Outside any workspace: no membership to check.
    for name in ["workspace.list", "examples.list"] {
        assert!(
            authorize_operation(&agent("eve-bot", []), operation(name).unwrap(), None).is_ok(),
            "{name}"
        );
    }
}

#[test]
fn collection_access_follows_visibility_ownership_and_grants() {
    let access = acme();
    let of = |caller: &Caller, id: &str| collection_access(caller, &access, id);
    // Owners write everything.
    for id in ["inbox", "secret", "vault"] {
        assert_eq!(of(&human("ada"), id), Some(Access::Write), "{id}");
    }
    // A workspace collection: every member writes.
    assert_eq!(of(&human("bea"), "inbox"), Some(Access::Write));
    assert_eq!(of(&agent("weak", []), "inbox"), Some(Access::Write));
    // Restricted: what was granted, else nothing.
    assert_eq!(of(&human("bea"), "vault"), Some(Access::Read));
    assert_eq!(of(&bot(), "vault"), Some(Access::Read));
    assert_eq!(of(&human("bea"), "secret"), None);
    assert_eq!(of(&agent("weak", []), "vault"), None);
    // Unknown collection, non-member.
    assert_eq!(of(&human("ada"), "nope"), None);
    assert_eq!(of(&human("eve"), "inbox"), None);
}

#[test]
fn collection_list_shows_only_readable_collections() {
    let access = acme();
    let ids = |caller: &Caller| -> Vec<String> {
        readable_collections(caller, &access)
            .into_iter()
            .map(|c| c.collection_id.clone())
            .collect()
    };
    assert_eq!(ids(&human("ada")), ["inbox", "secret", "vault"]);
    assert_eq!(ids(&human("bea")), ["inbox", "vault"]);
    assert_eq!(ids(&agent("weak", [])), ["inbox"]);
    assert!(ids(&human("eve")).is_empty());
}

#[test]
fn an_unreadable_collection_is_404_and_a_read_only_one_403_for_writes() {
    let access = acme();
    let bea = human("bea");
    assert_eq!(
        authorize_collection(&bea, &access, "vault", Access::Read).unwrap(),
        Access::Read
    );
    let denial = authorize_collection(&bea, &access, "vault", Access::Write).unwrap_err();
    assert_eq!(
        (denial.status().as_u16(), denial.code()),
        (403, "FORBIDDEN")
    );
    assert_eq!(
        refused(authorize_collection(&bea, &access, "secret", Access::Read).map(drop)),
        (404, "COLLECTION_NOT_FOUND")
    );
    // Unknown and unreadable read the same.
    assert_eq!(
        authorize_collection(&bea, &access, "secret", Access::Read).unwrap_err(),
        authorize_collection(&bea, &access, "no-such", Access::Read).unwrap_err()
    );
    assert_eq!(
        authorize_collection(&bea, &access, "inbox", Access::Write).unwrap(),
        Access::Write
    );
}

/// Step 5 for record operations is the decision's too: the collection a `record.create`
/// writes to, and the one a `record.search` is restricted to, before the engine runs.
#[test]
fn the_collection_a_record_call_names_is_decided_with_the_call() {
    let access = acme();
    let create = |collection: &str| {
        json!({"workspace_id": "acme", "collection_id": collection, "namespace": "polls",
               "type": "poll", "data": {}, "idempotency_key": "k"})
    };
    let search = |collection: &str| json!({"workspace_id": "acme", "collection_id": collection});
    let bea = human("bea");
    assert!(call(&bea, "record.create", create("inbox"), Some(&access)).is_ok());
    assert_eq!(
        refused(call(&bea, "record.create", create("vault"), Some(&access))),
        (403, "FORBIDDEN")
    );
    for unreadable in ["secret", "no-such"] {
        assert_eq!(
            refused(call(
                &bea,
                "record.create",
                create(unreadable),
                Some(&access)
            )),
            (404, "COLLECTION_NOT_FOUND")
        );
        assert_eq!(
            refused(call(
                &bea,
                "record.search",
                search(unreadable),
                Some(&access)
            )),
            (404, "COLLECTION_NOT_FOUND")
        );
    }
    assert!(call(&bea, "record.search", search("vault"), Some(&access)).is_ok());
    // Without a collection, a search is judged record by record (step 6).
    assert!(
        call(
            &bea,
            "record.search",
            json!({"workspace_id": "acme"}),
            Some(&access)
        )
        .is_ok()
    );
    // The scope comes first: an agent without records:write learns nothing of collections.
    assert_eq!(
        refused(call(
            &agent("weak", S::ALL),
            "record.create",
            create("secret"),
            Some(&access)
        )),
        (403, "INSUFFICIENT_SCOPE")
    );
}

#[test]
fn collection_grants_need_write_access_to_the_collection() {
    let access = acme();
    let grant = |collection: &str| {
        json!({"workspace_id": "acme", "collection_id": collection,
        "principal_id": "weak", "access": "read", "idempotency_key": "k"})
    };
    assert!(call(&bot(), "collection.grant", grant("inbox"), Some(&access)).is_ok());
    assert_eq!(
        refused(call(
            &bot(),
            "collection.grant",
            grant("vault"),
            Some(&access)
        )),
        (403, "FORBIDDEN")
    );
    assert_eq!(
        refused(call(
            &bot(),
            "collection.grant",
            grant("secret"),
            Some(&access)
        )),
        (404, "COLLECTION_NOT_FOUND")
    );
    assert!(
        call(
            &human("ada"),
            "collection.grant",
            grant("secret"),
            Some(&access)
        )
        .is_ok()
    );
    let revoke = json!({"workspace_id": "acme", "collection_id": "vault", "principal_id": "bea", "idempotency_key": "k"});
    assert_eq!(
        refused(call(
            &human("bea"),
            "collection.revoke",
            revoke.clone(),
            Some(&access)
        )),
        (403, "FORBIDDEN")
    );
    assert!(call(&human("ada"), "collection.revoke", revoke, Some(&access)).is_ok());
    // Without collections:manage, an agent is refused before the collection is looked at.
    assert_eq!(
        refused(call(
            &agent("weak", S::ALL),
            "collection.grant",
            grant("inbox"),
            Some(&access)
        )),
        (403, "INSUFFICIENT_SCOPE")
    );
}

#[test]
fn an_agent_adds_only_agents_within_its_own_scopes() {
    let access = acme();
    let add = |scopes: &[&str]| {
        json!({"workspace_id": "acme", "principal_id": "new-bot", "kind": "agent",
        "scopes": scopes, "idempotency_key": "k"})
    };
    assert!(
        call(
            &bot(),
            "member.add",
            add(&["records:read", "records:write"]),
            Some(&access)
        )
        .is_ok()
    );
    assert!(call(&bot(), "member.add", add(&[]), Some(&access)).is_ok());
    let denial = call(
        &bot(),
        "member.add",
        add(&["records:read", "programs:activate"]),
        Some(&access),
    )
    .unwrap_err();
    assert_eq!(
        (denial.status().as_u16(), denial.code()),
        (403, "FORBIDDEN")
    );
    assert!(denial.to_string().contains("programs:activate"), "{denial}");
    assert!(!denial.to_string().contains("records:read"), "{denial}");
    // Its effective scopes count, not its membership alone: a credential without
    // records:write cannot delegate it.
    let narrow = agent("bot", [S::MembersManage, S::RecordsRead]);
    assert_eq!(
        refused(call(
            &narrow,
            "member.add",
            add(&["records:write"]),
            Some(&access)
        )),
        (403, "FORBIDDEN")
    );
    // Without members:manage.
    assert_eq!(
        refused(call(
            &agent("weak", S::ALL),
            "member.add",
            add(&[]),
            Some(&access)
        )),
        (403, "INSUFFICIENT_SCOPE")
    );
    // Turning a human member into an agent is a change of human membership.
    let as_agent = json!({"workspace_id": "acme", "principal_id": "bea", "kind": "agent", "idempotency_key": "k"});
    assert_eq!(
        refused(call(&bot(), "member.add", as_agent, Some(&access))),
        (403, "CONSOLE_ONLY")
    );
    // Raising an agent beyond the caller's scopes, or touching a stronger agent.
    let raise = json!({"workspace_id": "acme", "principal_id": "power", "kind": "agent", "scopes": ["records:read"], "idempotency_key": "k"});
    assert_eq!(
        refused(call(&bot(), "member.add", raise, Some(&access))),
        (403, "FORBIDDEN")
    );
}

#[test]
fn an_agent_removes_only_agents_within_its_own_scopes() {
    let access = acme();
    let remove = |principal: &str| json!({"workspace_id": "acme", "principal_id": principal, "idempotency_key": "k"});
    assert!(call(&bot(), "member.remove", remove("weak"), Some(&access)).is_ok());
    assert_eq!(
        refused(call(&bot(), "member.remove", remove("bea"), Some(&access))),
        (403, "CONSOLE_ONLY")
    );
    assert_eq!(
        refused(call(&bot(), "member.remove", remove("ada"), Some(&access))),
        (403, "CONSOLE_ONLY")
    );
    assert_eq!(
        refused(call(
            &bot(),
            "member.remove",
            remove("power"),
            Some(&access)
        )),
        (403, "FORBIDDEN")
    );
    assert_eq!(
        refused(call(
            &bot(),
            "member.remove",
            remove("nobody"),
            Some(&access)
        )),
        (404, "MEMBER_NOT_FOUND")
    );
    // A non-member learns nothing about who is a member.
    assert_eq!(
        refused(call(
            &agent("eve-bot", S::ALL),
            "member.remove",
            remove("bea"),
            Some(&access)
        )),
        (404, "WORKSPACE_NOT_FOUND")
    );
    assert_eq!(
        refused(call(
            &agent("eve-bot", S::ALL),
            "member.remove",
            remove("bea"),
            None
        )),
        (404, "WORKSPACE_NOT_FOUND")
    );
}

#[test]
fn human_membership_is_changed_by_owners() {
    let access = acme();
    let add_human = json!({"workspace_id": "acme", "principal_id": "cy", "kind": "human", "role": "owner", "idempotency_key": "k"});
    let add_agent = json!({"workspace_id": "acme", "principal_id": "cy-bot", "kind": "agent", "scopes": ["programs:draft"], "idempotency_key": "k"});
    let remove_bea = json!({"workspace_id": "acme", "principal_id": "bea", "idempotency_key": "k"});
    assert!(
        call(
            &human("ada"),
            "member.add",
            add_human.clone(),
            Some(&access)
        )
        .is_ok()
    );
    assert!(
        call(
            &human("ada"),
            "member.remove",
            remove_bea.clone(),
            Some(&access)
        )
        .is_ok()
    );
    assert_eq!(
        refused(call(&human("bea"), "member.add", add_human, Some(&access))),
        (403, "FORBIDDEN")
    );
    assert_eq!(
        refused(call(
            &human("bea"),
            "member.remove",
            remove_bea,
            Some(&access)
        )),
        (403, "FORBIDDEN")
    );
    // A human member manages agents, with any scope (humans hold them all).
    assert!(call(&human("bea"), "member.add", add_agent, Some(&access)).is_ok());
    let remove_power =
        json!({"workspace_id": "acme", "principal_id": "power", "idempotency_key": "k"});
    assert!(call(&human("bea"), "member.remove", remove_power, Some(&access)).is_ok());
}

#[test]
fn a_denial_becomes_the_platform_error_with_its_code_and_status() {
    for denial in [
        Denial::ConsoleOnly {
            operation: "workspace.create",
        },
        Denial::WorkspaceNotFound,
        Denial::InsufficientScope {
            scope: S::ProgramsDraft,
        },
        Denial::CollectionNotFound,
        Denial::MemberNotFound,
        Denial::Forbidden {
            reason: "no".into(),
        },
    ] {
        let error = PlatformError::from(denial.clone());
        assert_eq!((error.code, error.status), (denial.code(), denial.status()));
        assert_eq!(error.message, denial.to_string());
        assert!(error.issues.is_empty());
    }
}
