//! The catalog's own rules: capabilities added and removed, effects, scopes, idempotency,
//! texts, the application's metadata; each kept capability's schemas go to `schema.rs`.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::schema::{Role, compare};
use crate::{Change, DiffError, Report, Severity};

/// Compares two catalog exports.
///
/// # Errors
///
/// [`DiffError::Invalid`] when either document lacks the `capabilities` list, or a
/// capability lacks its `id`.
pub fn diff_catalogs(old: &Value, new: &Value) -> Result<Report, DiffError> {
    let old_capabilities = capabilities(old, "old")?;
    let new_capabilities = capabilities(new, "new")?;
    let mut report = Report::default();
    if old.get("revision").is_some() && old.get("revision") == new.get("revision") {
        return Ok(report);
    }
    let changes = &mut report.changes;
    application(old, new, changes);
    // Looked up by id: a catalog of thousands stays linear.
    let old_ids: HashSet<&str> = old_capabilities.iter().map(|(id, _)| *id).collect();
    let new_by_id: HashMap<&str, &Value> = new_capabilities.iter().copied().collect();
    for (id, before) in &old_capabilities {
        match new_by_id.get(id).map(|after| (id, after)) {
            None => changes.push(Change {
                severity: Severity::Breaking,
                rule: "capability-removed",
                capability: Some((*id).to_owned()),
                pointer: String::new(),
                message: format!(
                    "The capability {id} was removed (a rename is a removal and an addition)."
                ),
            }),
            Some((_, after)) => capability(id, before, after, changes),
        }
    }
    for (id, _) in &new_capabilities {
        if !old_ids.contains(id) {
            changes.push(Change {
                severity: Severity::Info,
                rule: "capability-added",
                capability: Some((*id).to_owned()),
                pointer: String::new(),
                message: format!("The capability {id} was added."),
            });
        }
    }
    Ok(report)
}

/// The capabilities of an export, by id, in order.
fn capabilities<'a>(
    document: &'a Value,
    which: &'static str,
) -> Result<Vec<(&'a str, &'a Value)>, DiffError> {
    let not_a_catalog = |reason: &str| DiffError::Invalid {
        which,
        kind: "catalog",
        reason: reason.to_owned(),
    };
    let list = document
        .get("capabilities")
        .and_then(Value::as_array)
        .ok_or_else(|| not_a_catalog("no \"capabilities\" list"))?;
    list.iter()
        .enumerate()
        .map(|(index, capability)| {
            capability
                .get("id")
                .and_then(Value::as_str)
                .map(|id| (id, capability))
                .ok_or_else(|| not_a_catalog(&format!("capability {index} has no \"id\"")))
        })
        .collect()
}

/// The application's metadata and declared scopes: every change is info.
fn application(old: &Value, new: &Value, changes: &mut Vec<Change>) {
    if old.get("application") != new.get("application") {
        changes.push(Change {
            severity: Severity::Info,
            rule: "application-changed",
            capability: None,
            pointer: "/application".to_owned(),
            message: "The application's metadata changed.".to_owned(),
        });
    }
    let ids = |document: &Value| -> Vec<String> {
        document
            .get("scopes")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|s| s.get("id").and_then(Value::as_str).map(str::to_owned))
            .collect()
    };
    let (before, after) = (ids(old), ids(new));
    for scope in after.iter().filter(|s| !before.contains(s)) {
        changes.push(Change {
            severity: Severity::Info,
            rule: "scope-declared",
            capability: None,
            pointer: "/scopes".to_owned(),
            message: format!("The application declares the scope {scope}."),
        });
    }
    for scope in before.iter().filter(|s| !after.contains(s)) {
        changes.push(Change {
            severity: Severity::Info,
            rule: "scope-withdrawn",
            capability: None,
            pointer: "/scopes".to_owned(),
            message: format!("The application no longer declares the scope {scope}."),
        });
    }
}

/// How far an effect reaches: a move up is an escalation.
fn rank(effect: &str) -> u8 {
    match effect {
        "read" => 0,
        "write" | "external" => 1,
        _ => 2,
    }
}

/// One capability kept in both catalogs.
fn capability(id: &str, before: &Value, after: &Value, changes: &mut Vec<Change>) {
    let mut push = |severity, rule, pointer: &str, message: String| {
        changes.push(Change {
            severity,
            rule,
            capability: Some(id.to_owned()),
            pointer: pointer.to_owned(),
            message,
        });
    };
    let text = |value: &Value, key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    // Effect.
    if let (Some(from), Some(to)) = (text(before, "effect"), text(after, "effect"))
        && from != to
    {
        let (severity, rule) = if rank(&to) < rank(&from) {
            (Severity::Warning, "effect-de-escalated")
        } else {
            (Severity::Breaking, "effect-escalated")
        };
        push(
            severity,
            rule,
            "/effect",
            format!("The effect changed from {from} to {to}."),
        );
    }
    // Scopes.
    let scopes = |value: &Value| -> Vec<String> {
        value
            .get("scopeIds")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_owned))
            .collect()
    };
    let (from, to) = (scopes(before), scopes(after));
    for scope in to.iter().filter(|s| !from.contains(s)) {
        push(
            Severity::Breaking,
            "scope-added",
            "/scopeIds",
            format!("The capability is now in the scope {scope}."),
        );
    }
    for scope in from.iter().filter(|s| !to.contains(s)) {
        push(
            Severity::Breaking,
            "scope-removed",
            "/scopeIds",
            format!("The capability is no longer in the scope {scope}."),
        );
    }
    // Idempotency (absent: not idempotent).
    let idempotent = |value: &Value| value.get("idempotent").and_then(Value::as_bool) == Some(true);
    match (idempotent(before), idempotent(after)) {
        (true, false) => push(
            Severity::Breaking,
            "idempotent-dropped",
            "/idempotent",
            "The capability is no longer idempotent: a retry may act twice.".to_owned(),
        ),
        (false, true) => push(
            Severity::Warning,
            "idempotent-added",
            "/idempotent",
            "The capability is now idempotent.".to_owned(),
        ),
        _ => {}
    }
    // Everything else a consumer reads but does not rely on.
    let known = [
        "id",
        "effect",
        "scopeIds",
        "idempotent",
        "inputSchema",
        "outputSchema",
    ];
    let mut members: Vec<&String> = before
        .as_object()
        .into_iter()
        .chain(after.as_object())
        .flat_map(|object| object.keys())
        .filter(|key| !known.contains(&key.as_str()))
        .collect();
    members.sort();
    members.dedup();
    for member in members {
        if before.get(member) != after.get(member) {
            push(
                Severity::Info,
                "member-changed",
                &format!("/{}", crate::token(member)),
                format!("The capability's {member} changed."),
            );
        }
    }
    // Schemas.
    let null = Value::Null;
    for (key, role) in [("inputSchema", Role::Input), ("outputSchema", Role::Output)] {
        let (from, to) = (
            before.get(key).unwrap_or(&null),
            after.get(key).unwrap_or(&null),
        );
        compare(
            from,
            to,
            role,
            &format!("/{key}"),
            &mut |severity, rule, pointer, message| {
                push(severity, rule, pointer, message);
            },
        );
    }
}
