//! Two versions of a `relationship/v1` program package, judged from the side of the records
//! that exist and the clients that create, change and read them.
//!
//! A record written under the old version must stay valid under the new one: a record
//! schema made stricter, a state removed, a role's bounds narrowed can leave records the new
//! version refuses (breaking). A command is a capability: its input schema follows the
//! input rules, and it must still run where it ran (`from`, its guard).
//!
//! Both packages go through the package validator first and are compared in its normalized
//! form (schemas with their defaults written out, rules in their one spelling), so the
//! same program written two ways has no changes. The capabilities a package generates (its
//! commands, the record operations, the views' searches) are then compared by the catalog
//! rules too: a state added is harmless to records but widens the `state` every record read
//! returns, which a reader of the old output schema refuses.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use rcip_relationship::{package_capabilities, validate_package};
use serde_json::{Map, Value, json};

use crate::schema::{Role, compare};
use crate::{Change, DiffError, Report, Severity, diff_catalogs, token};

/// Compares two versions of one namespace's package.
///
/// ```
/// use rcip_diff::{Severity, diff_packages};
/// use serde_json::json;
///
/// let old = json!({"protocol": "relationship/v1", "namespace": "polls", "version": 1,
///     "types": {"poll": {"kind": "entity", "schema": {"type": "object", "properties": {},
///         "required": [], "additionalProperties": false},
///         "lifecycle": {"initial": "open", "states": ["open", "closed"]}}}});
/// let mut new = old.clone();
/// new["version"] = json!(2);
/// new["types"]["poll"]["lifecycle"]["states"] = json!(["open"]);
/// let report = diff_packages(&old, &new).unwrap();
/// assert_eq!(report.changes[1].rule, "package-state-removed");
/// assert_eq!(report.changes[1].pointer, "/types/poll/lifecycle/states");
/// assert!(report.reaches(Severity::Breaking));
/// ```
///
/// # Errors
///
/// [`DiffError::Invalid`] when either document is not a valid package (with the
/// validator's problems), or the two namespaces differ.
pub fn diff_packages(old: &Value, new: &Value) -> Result<Report, DiffError> {
    let parse = |which: &'static str, document: &Value| {
        validate_package(document).map_err(|error| DiffError::Invalid {
            which,
            kind: "package",
            reason: error.to_string(),
        })
    };
    let (old_package, new_package) = (parse("old", old)?, parse("new", new)?);
    if old_package.namespace != new_package.namespace {
        return Err(DiffError::Invalid {
            which: "new",
            kind: "package",
            reason: format!(
                "its namespace is {}, the old package's {}",
                new_package.namespace, old_package.namespace
            ),
        });
    }
    let (old, new) = (&old_package.to_json(), &new_package.to_json());
    let mut report = Report::default();
    let changes = &mut report.changes;
    version(old, new, changes);
    if old.get("description") != new.get("description") {
        push(
            changes,
            Severity::Info,
            "package-text-changed",
            "/description",
            "The package's description changed.".to_owned(),
        );
    }
    let (types_before, types_after) = (members(old, "types"), members(new, "types"));
    for (name, before) in types_before {
        let pointer = format!("/types/{}", token(name));
        match types_after.get(name) {
            None => push(
                changes,
                Severity::Breaking,
                "package-type-removed",
                &pointer,
                format!(
                    "The type {name} was removed: its records, and the clients of its commands, are left without it."
                ),
            ),
            Some(after) => type_def(name, &pointer, before, after, changes),
        }
    }
    for name in types_after
        .keys()
        .filter(|n| !types_before.contains_key(*n))
    {
        push(
            changes,
            Severity::Info,
            "package-type-added",
            &format!("/types/{}", token(name)),
            format!("The type {name} was added."),
        );
    }
    let (views_before, views_after) = (members(old, "views"), members(new, "views"));
    for (name, before) in views_before {
        let pointer = format!("/views/{}", token(name));
        match views_after.get(name) {
            None => push(
                changes,
                Severity::Breaking,
                "package-view-removed",
                &pointer,
                format!("The view {name} was removed."),
            ),
            Some(after) if after != before => push(
                changes,
                Severity::Warning,
                "package-view-changed",
                &pointer,
                format!("The view {name} selects or shows other records or fields."),
            ),
            Some(_) => {}
        }
    }
    for name in views_after
        .keys()
        .filter(|n| !views_before.contains_key(*n))
    {
        push(
            changes,
            Severity::Info,
            "package-view-added",
            &format!("/views/{}", token(name)),
            format!("The view {name} was added."),
        );
    }
    // What the package generates, as a consumer of the catalog sees it. Every record read
    // names the package version (`version: {"enum": [n]}`): the version is judged once,
    // above, so the new package's capabilities are made at the old version.
    let capabilities = |package| json!({"capabilities": package_capabilities(package)});
    let mut at_old_version = new_package;
    at_old_version.version = old_package.version;
    let generated = diff_catalogs(&capabilities(&old_package), &capabilities(&at_old_version))?;
    report.changes.extend(generated.changes);
    Ok(report)
}

/// The object member `key` of `value` (none: empty).
fn members<'a>(value: &'a Value, key: &str) -> &'a Map<String, Value> {
    static EMPTY: LazyLock<Map<String, Value>> = LazyLock::new(Map::new);
    value.get(key).and_then(Value::as_object).unwrap_or(&EMPTY)
}

fn push(
    changes: &mut Vec<Change>,
    severity: Severity,
    rule: &'static str,
    pointer: &str,
    message: String,
) {
    changes.push(Change {
        severity,
        rule,
        capability: None,
        pointer: pointer.to_owned(),
        message,
    });
}

/// A changed package should carry a higher version: one `namespace/version` with two
/// contents is a conflict wherever both versions meet (`VERSION_CONFLICT`).
fn version(old: &Value, new: &Value, changes: &mut Vec<Change>) {
    let number = |package: &Value| package.get("version").and_then(Value::as_u64);
    let (from, to) = (number(old), number(new));
    let content = |package: &Value| -> Option<Map<String, Value>> {
        package.as_object().map(|o| {
            o.iter()
                .filter(|(k, _)| *k != "version")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
    };
    let shown = |v: Option<u64>| v.map_or_else(|| "none".to_owned(), |v| v.to_string());
    let raised = matches!((from, to), (Some(a), Some(b)) if b > a);
    let lowered = matches!((from, to), (Some(a), Some(b)) if b < a);
    if (content(old) != content(new) && !raised) || lowered {
        push(
            changes,
            Severity::Warning,
            "package-version-not-raised",
            "/version",
            format!(
                "The version went from {} to {} for this content: one namespace/version with two contents is a VERSION_CONFLICT, and a lower version meets the one before.",
                shown(from),
                shown(to)
            ),
        );
    } else if from != to {
        push(
            changes,
            Severity::Info,
            "package-version-changed",
            "/version",
            format!("The version went from {} to {}.", shown(from), shown(to)),
        );
    }
}

/// One type kept in both versions.
fn type_def(name: &str, pointer: &str, old: &Value, new: &Value, changes: &mut Vec<Change>) {
    if old.get("kind") != new.get("kind") {
        push(
            changes,
            Severity::Breaking,
            "package-type-kind-changed",
            &format!("{pointer}/kind"),
            format!("The type {name} changed its kind: its records do not change with it."),
        );
    }
    if old.get("description") != new.get("description") {
        push(
            changes,
            Severity::Info,
            "package-text-changed",
            &format!("{pointer}/description"),
            format!("The type {name}'s description changed."),
        );
    }
    let null = Value::Null;
    compare(
        old.get("schema").unwrap_or(&null),
        new.get("schema").unwrap_or(&null),
        Role::Record,
        &format!("{pointer}/schema"),
        &mut |severity, rule, pointer, message| push(changes, severity, rule, pointer, message),
    );
    lifecycle(
        name,
        &format!("{pointer}/lifecycle"),
        old.get("lifecycle"),
        new.get("lifecycle"),
        changes,
    );
    roles(name, pointer, old, new, changes);
    commands(name, pointer, old, new, changes);
}

/// The states a lifecycle lists.
fn states(lifecycle: &Value) -> Vec<&str> {
    lifecycle
        .get("states")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

fn lifecycle(
    name: &str,
    pointer: &str,
    old: Option<&Value>,
    new: Option<&Value>,
    changes: &mut Vec<Change>,
) {
    let (before, after) = match (old, new) {
        (Some(before), Some(after)) => (before, after),
        (None, None) => return,
        // Records made without states would need one, or records in states lose them.
        _ => {
            let message = if old.is_some() {
                format!("The type {name} no longer has a lifecycle: its records' states are gone.")
            } else {
                format!("The type {name} now has a lifecycle: its records have no state in it.")
            };
            return push(
                changes,
                Severity::Breaking,
                "package-lifecycle-changed",
                pointer,
                message,
            );
        }
    };
    let (from, to) = (states(before), states(after));
    for state in from.iter().filter(|s| !to.contains(s)) {
        push(
            changes,
            Severity::Breaking,
            "package-state-removed",
            &format!("{pointer}/states"),
            format!("The state {state} of {name} was removed: records can be in it."),
        );
    }
    for state in to.iter().filter(|s| !from.contains(s)) {
        push(
            changes,
            Severity::Info,
            "package-state-added",
            &format!("{pointer}/states"),
            format!("The type {name} has the new state {state}."),
        );
    }
    if before.get("initial") != after.get("initial") {
        push(
            changes,
            Severity::Warning,
            "package-initial-state-changed",
            &format!("{pointer}/initial"),
            format!("New records of {name} start in another state."),
        );
    }
}

/// The roles of a relationship type.
fn roles(name: &str, pointer: &str, old: &Value, new: &Value, changes: &mut Vec<Change>) {
    let bound = |role: &Value, key: &str| role.get(key).and_then(Value::as_u64);
    let types = |role: &Value| -> BTreeSet<String> {
        role.get("types")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|t| t.as_str().map(str::to_owned))
            .collect()
    };
    let (before, after) = (members(old, "roles"), members(new, "roles"));
    for (role, was) in before {
        let at = format!("{pointer}/roles/{}", token(role));
        let Some(now) = after.get(role) else {
            push(
                changes,
                Severity::Breaking,
                "package-role-removed",
                &at,
                format!(
                    "The role {role} of {name} was removed: its participants are left without it."
                ),
            );
            continue;
        };
        let (min_from, min_to) = (bound(was, "min"), bound(now, "min"));
        let (max_from, max_to) = (bound(was, "max"), bound(now, "max"));
        let narrowed = min_to > min_from || max_to < max_from;
        let widened = min_to < min_from || max_to > max_from;
        if narrowed {
            push(
                changes,
                Severity::Breaking,
                "package-role-bounds-narrowed",
                &at,
                format!(
                    "The role {role} of {name} now takes {} to {} participants (was {} to {}): records can be outside.",
                    shown(min_to),
                    shown(max_to),
                    shown(min_from),
                    shown(max_from)
                ),
            );
        } else if widened {
            push(
                changes,
                Severity::Info,
                "package-role-bounds-widened",
                &at,
                format!(
                    "The role {role} of {name} now takes {} to {} participants.",
                    shown(min_to),
                    shown(max_to)
                ),
            );
        }
        let (from, to) = (types(was), types(now));
        for gone in from.difference(&to) {
            push(
                changes,
                Severity::Breaking,
                "package-role-types-narrowed",
                &format!("{at}/types"),
                format!("The role {role} of {name} no longer takes a {gone}."),
            );
        }
        for added in to.difference(&from) {
            push(
                changes,
                Severity::Info,
                "package-role-types-widened",
                &format!("{at}/types"),
                format!("The role {role} of {name} also takes a {added}."),
            );
        }
    }
    for (role, now) in after.iter().filter(|(r, _)| !before.contains_key(*r)) {
        let at = format!("{pointer}/roles/{}", token(role));
        if bound(now, "min").unwrap_or(0) > 0 {
            push(
                changes,
                Severity::Breaking,
                "package-role-required-added",
                &at,
                format!(
                    "The role {role} of {name} is new and needs a participant: records that exist have none."
                ),
            );
        } else {
            push(
                changes,
                Severity::Info,
                "package-role-added",
                &at,
                format!("The type {name} has the new optional role {role}."),
            );
        }
    }
}

fn shown(value: Option<u64>) -> String {
    value.map_or_else(|| "none".to_owned(), |v| v.to_string())
}

/// The commands of a type.
fn commands(name: &str, pointer: &str, old: &Value, new: &Value, changes: &mut Vec<Change>) {
    let (before, after) = (members(old, "commands"), members(new, "commands"));
    for (command, was) in before {
        let at = format!("{pointer}/commands/{}", token(command));
        let Some(now) = after.get(command) else {
            push(
                changes,
                Severity::Breaking,
                "package-command-removed",
                &at,
                format!("The command {name}.{command} was removed: its callers fail."),
            );
            continue;
        };
        command_def(&format!("{name}.{command}"), &at, was, now, changes);
    }
    for command in after.keys().filter(|c| !before.contains_key(*c)) {
        push(
            changes,
            Severity::Info,
            "package-command-added",
            &format!("{pointer}/commands/{}", token(command)),
            format!("The command {name}.{command} was added."),
        );
    }
}

/// One command kept in both versions.
fn command_def(name: &str, at: &str, old: &Value, new: &Value, changes: &mut Vec<Change>) {
    let null = Value::Null;
    compare(
        old.get("input").unwrap_or(&null),
        new.get("input").unwrap_or(&null),
        Role::Input,
        &format!("{at}/input"),
        &mut |severity, rule, pointer, message| push(changes, severity, rule, pointer, message),
    );
    // `from`: the states it runs in (empty: any).
    let from = |value: &Value| -> Option<BTreeSet<String>> {
        let states: BTreeSet<String> = value
            .get("from")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_owned))
            .collect();
        (!states.is_empty()).then_some(states)
    };
    let (was, now) = (from(old), from(new));
    if was != now {
        let narrowed = match (&was, &now) {
            (None, Some(_)) => true,
            (Some(was), Some(now)) => !was.is_subset(now),
            _ => false,
        };
        if narrowed {
            push(
                changes,
                Severity::Breaking,
                "package-command-from-narrowed",
                &format!("{at}/from"),
                format!("The command {name} no longer runs in every state it ran in."),
            );
        }
        if !narrowed
            || now
                .as_ref()
                .zip(was.as_ref())
                .is_some_and(|(n, w)| !n.is_subset(w))
        {
            push(
                changes,
                Severity::Info,
                "package-command-from-widened",
                &format!("{at}/from"),
                format!("The command {name} runs in more states."),
            );
        }
    }
    if old.get("to") != new.get("to") {
        push(
            changes,
            Severity::Warning,
            "package-command-to-changed",
            &format!("{at}/to"),
            format!("The command {name} leaves the record in another state."),
        );
    }
    match (old.get("guard"), new.get("guard")) {
        (was, now) if was == now => {}
        (Some(_), None) => push(
            changes,
            Severity::Info,
            "package-command-guard-removed",
            &format!("{at}/guard"),
            format!("The command {name} has no guard now."),
        ),
        // A guard added or rewritten: whether it refuses more cannot be told in general.
        _ => push(
            changes,
            Severity::Breaking,
            "package-command-guard-added",
            &format!("{at}/guard"),
            format!("The command {name} has a new guard: calls that ran may be refused."),
        ),
    }
    for key in ["set_data", "emit"] {
        if old.get(key) != new.get(key) {
            push(
                changes,
                Severity::Warning,
                "package-command-effects-changed",
                &format!("{at}/{key}"),
                format!("What the command {name} writes or emits ({key}) changed."),
            );
        }
    }
    if old.get("description") != new.get("description") {
        push(
            changes,
            Severity::Info,
            "package-text-changed",
            &format!("{at}/description"),
            format!("The command {name}'s description changed."),
        );
    }
}
