//! MCPL manifests, by the RFC-003 change domains, judged from the host's side: a host reads
//! the capability paths a server advertises and grants its feature sets by name.
//!
//! - **capabilities** (every root member but `version`, `revision` and `featureSets`): the
//!   advertised paths are compared as sets, with the `true` shorthand expanded by the
//!   vocabulary's tree, so `channels: true` and the same leaves spelled out are equal. A
//!   member the vocabulary does not know (a vendor extension) is compared whole.
//! - **featureSets** (without any `tagOntology`): a set removed fails a host's grant of it by
//!   name; a set that uses one more path asks for more than the host consented to.
//! - **tagOntology**: advisory, for presenting and treating tools: a tag removed is a
//!   warning, anything else info.

use std::collections::BTreeSet;

use rcip_mcpl::{VOCABULARY, VocabNode, Vocabulary};
use serde_json::{Map, Value};

use crate::{Change, DiffError, Report, Severity, token};

/// The root members outside the capabilities domain.
const NOT_CAPABILITIES: [&str; 3] = ["version", "revision", "featureSets"];

/// Compares two MCPL manifests (the `experimental.mcpl` object), with the MCPL 0.5
/// vocabulary deciding which capability paths `true` advertises.
///
/// ```
/// use rcip_diff::{Severity, diff_manifests};
/// use serde_json::json;
///
/// let old = json!({"version": "0.5", "channels": true,
///                  "featureSets": {"chat": {"uses": ["channels.publish"]}}});
/// let new = json!({"version": "0.5", "channels": {"publish": true},
///                  "featureSets": {"chat": {"uses": ["channels.publish", "pushEvents"]}}});
/// let report = diff_manifests(&old, &new).unwrap();
/// let rules: Vec<_> = report.changes.iter().map(|c| c.rule).collect();
/// assert!(rules.contains(&"mcpl-capability-withdrawn")); // channels.register, ...
/// assert!(rules.contains(&"mcpl-feature-set-uses-added"));
/// assert!(report.reaches(Severity::Breaking));
/// ```
///
/// # Errors
///
/// [`DiffError::Invalid`] when either document is not a JSON object.
pub fn diff_manifests(old: &Value, new: &Value) -> Result<Report, DiffError> {
    diff_manifests_with(&VOCABULARY, old, new)
}

/// [`diff_manifests`] with an application's own vocabulary (one compiled by
/// `rcip_build::VocabularyFile`).
///
/// # Errors
///
/// [`DiffError::Invalid`] when either document is not a JSON object.
pub fn diff_manifests_with(
    vocabulary: &Vocabulary,
    old: &Value,
    new: &Value,
) -> Result<Report, DiffError> {
    let object = |document: &'static str, value: &Value| {
        value.as_object().cloned().ok_or(DiffError::Invalid {
            which: document,
            kind: "manifest",
            reason: "not a JSON object".to_owned(),
        })
    };
    let (before, after) = (object("old", old)?, object("new", new)?);
    let mut report = Report::default();
    // A revision is server-authored and untrusted (RFC-003): equal revisions mean equal
    // content only when each is the digest of its manifest.
    let digest_is = |manifest: &Value, claimed: Option<&Value>| {
        claimed.and_then(Value::as_str).is_some_and(|claimed| {
            rcip_mcpl::manifest_digest(manifest).is_ok_and(|digest| digest == claimed)
        })
    };
    if before.get("revision") == after.get("revision")
        && digest_is(old, before.get("revision"))
        && digest_is(new, after.get("revision"))
    {
        return Ok(report);
    }
    let changes = &mut report.changes;
    if before.get("version") != after.get("version") {
        changes.push(change(
            Severity::Info,
            "mcpl-version-changed",
            None,
            "/version".to_owned(),
            "The manifest's version changed.".to_owned(),
        ));
    }
    capabilities(vocabulary, old, new, &before, &after, changes);
    feature_sets(
        vocabulary,
        before.get("featureSets"),
        after.get("featureSets"),
        changes,
    );
    Ok(report)
}

fn change(
    severity: Severity,
    rule: &'static str,
    capability: Option<String>,
    pointer: String,
    message: String,
) -> Change {
    Change {
        severity,
        rule,
        capability,
        pointer,
        message,
    }
}

/// The capabilities domain.
fn capabilities(
    vocabulary: &Vocabulary,
    old: &Value,
    new: &Value,
    before: &Map<String, Value>,
    after: &Map<String, Value>,
    changes: &mut Vec<Change>,
) {
    let (from, to) = (
        vocabulary.advertised(old, None),
        vocabulary.advertised(new, None),
    );
    for path in from.difference(&to) {
        changes.push(change(
            Severity::Breaking,
            "mcpl-capability-withdrawn",
            Some(path.clone()),
            existing_pointer(old, path),
            format!("The server no longer advertises {path}."),
        ));
    }
    for path in to.difference(&from) {
        changes.push(change(
            Severity::Info,
            "mcpl-capability-advertised",
            Some(path.clone()),
            existing_pointer(new, path),
            format!("The server now advertises {path}."),
        ));
    }
    let root = |member: &str| vocabulary.roots.iter().find(|r| r.segment == member);
    let members: BTreeSet<&String> = before
        .keys()
        .chain(after.keys())
        .filter(|m| !NOT_CAPABILITIES.contains(&m.as_str()))
        .collect();
    for member in members {
        if before.get(member) == after.get(member) {
            continue;
        }
        let pointer = format!("/{}", token(member));
        let (was, now) = (before.get(member), after.get(member));
        let extension_changed = match root(member) {
            None => true,
            Some(node) => {
                was.and_then(|v| unknown_members(node, v))
                    != now.and_then(|v| unknown_members(node, v))
            }
        };
        if extension_changed {
            changes.push(change(
                Severity::Warning,
                "mcpl-extension-changed",
                Some(member.clone()),
                pointer,
                format!("In {member}, what the vocabulary does not know changed."),
            ));
        } else if !from
            .symmetric_difference(&to)
            .any(|path| path == member || path.starts_with(&format!("{member}.")))
        {
            // Spelled another way, advertising the same paths (`true` against every leaf).
            changes.push(change(
                Severity::Info,
                "mcpl-capabilities-rewritten",
                Some(member.clone()),
                pointer,
                format!(
                    "The member {member} is written another way; it advertises the same paths."
                ),
            ));
        }
    }
}

/// The members of `value` that the vocabulary's tree under `node` does not know (a vendor's
/// `{"publish": {"maxBytes": 1000}}` under `channels`), at any depth; `None` when there are
/// none. The recursion follows the vocabulary's tree, so its depth is the tree's.
fn unknown_members(node: &VocabNode, value: &Value) -> Option<Value> {
    let Value::Object(members) = value else {
        return None;
    };
    let mut rest = Map::new();
    for (key, value) in members {
        match node.children.iter().find(|c| c.segment == key.as_str()) {
            Some(child) => {
                if let Some(inner) = unknown_members(child, value) {
                    rest.insert(key.clone(), inner);
                }
            }
            None => {
                rest.insert(key.clone(), value.clone());
            }
        }
    }
    (!rest.is_empty()).then_some(Value::Object(rest))
}

/// A pointer to the deepest member of `manifest` on `path`: `channels.register`, advertised
/// by `"channels": true`, points at `/channels`.
fn existing_pointer(manifest: &Value, path: &str) -> String {
    let mut pointer = String::new();
    let mut at = manifest;
    for segment in path.split('.') {
        match at.get(segment) {
            Some(next) => {
                pointer.push('/');
                pointer.push_str(&token(segment));
                at = next;
            }
            None => break,
        }
    }
    pointer
}

/// The strings of a set-valued array (a non-string member is left out: such an array is not
/// a set, and validation refuses it).
fn set(value: Option<&Value>) -> BTreeSet<&str> {
    value
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// The featureSets and tagOntology domains.
fn feature_sets(
    vocabulary: &Vocabulary,
    old: Option<&Value>,
    new: Option<&Value>,
    changes: &mut Vec<Change>,
) {
    if old == new {
        return;
    }
    // A featureSets that is not an object (invalid) offers no set a host can grant.
    let empty = Map::new();
    let (before, after) = (
        old.and_then(Value::as_object).unwrap_or(&empty),
        new.and_then(Value::as_object).unwrap_or(&empty),
    );
    let shaped = |v: Option<&Value>| v.is_none_or(Value::is_object);
    if !shaped(old) || !shaped(new) {
        changes.push(change(
            Severity::Info,
            "mcpl-feature-set-changed",
            None,
            "/featureSets".to_owned(),
            "The featureSets member, not an object on one side, changed.".to_owned(),
        ));
    }
    for (name, set_before) in before {
        let pointer = format!("/featureSets/{}", token(name));
        let Some(set_after) = after.get(name) else {
            changes.push(change(
                Severity::Breaking,
                "mcpl-feature-set-removed",
                None,
                pointer,
                format!("The feature set {name} was removed: a host's grant of it fails."),
            ));
            continue;
        };
        feature_set(vocabulary, name, &pointer, set_before, set_after, changes);
    }
    for name in after.keys().filter(|n| !before.contains_key(*n)) {
        changes.push(change(
            Severity::Info,
            "mcpl-feature-set-added",
            None,
            format!("/featureSets/{}", token(name)),
            format!("The feature set {name} was added."),
        ));
    }
}

/// One feature set kept in both manifests.
fn feature_set(
    vocabulary: &Vocabulary,
    name: &str,
    pointer: &str,
    old: &Value,
    new: &Value,
    changes: &mut Vec<Change>,
) {
    // A set whose `uses` is absent, empty, not an array, or names what is not a path of the
    // vocabulary is disabled (`InvalidUses`): to a host, as good as gone.
    let usable = |set: &Value| {
        set.get("uses")
            .and_then(Value::as_array)
            .is_some_and(|uses| {
                !uses.is_empty()
                    && uses
                        .iter()
                        .all(|u| u.as_str().is_some_and(|p| vocabulary.contains(p)))
            })
    };
    match (usable(old), usable(new)) {
        (true, false) => {
            return changes.push(change(
                Severity::Breaking,
                "mcpl-feature-set-disabled",
                None,
                format!("{pointer}/uses"),
                format!(
                    "The feature set {name} is disabled now (its uses is empty, missing or names no capability path): a host's grant of it fails."
                ),
            ));
        }
        (false, true) => changes.push(change(
            Severity::Info,
            "mcpl-feature-set-changed",
            None,
            format!("{pointer}/uses"),
            format!("The feature set {name}, disabled before, can be granted now."),
        )),
        _ => {}
    }
    let (uses_before, uses_after) = (set(old.get("uses")), set(new.get("uses")));
    for path in uses_after.difference(&uses_before) {
        changes.push(change(
            Severity::Breaking,
            "mcpl-feature-set-uses-added",
            Some((*path).to_owned()),
            format!("{pointer}/uses"),
            format!(
                "The feature set {name} now uses {path}: a grant given for the old set did not consent to it."
            ),
        ));
    }
    for path in uses_before.difference(&uses_after) {
        changes.push(change(
            Severity::Warning,
            "mcpl-feature-set-uses-removed",
            Some((*path).to_owned()),
            format!("{pointer}/uses"),
            format!("The feature set {name} no longer uses {path}."),
        ));
    }
    // Its other members (description, vendor members), without uses and the ontology.
    let rest = |value: &Value| -> Option<Map<String, Value>> {
        value.as_object().map(|o| {
            o.iter()
                .filter(|(k, _)| *k != "uses" && *k != "tagOntology")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
    };
    // A `uses` that is not a set of strings is compared as it is.
    let uses_other = |value: &Value| {
        value
            .get("uses")
            .filter(|u| set_of_strings(u).is_none())
            .cloned()
    };
    if rest(old) != rest(new) || uses_other(old) != uses_other(new) {
        changes.push(change(
            Severity::Info,
            "mcpl-feature-set-changed",
            None,
            pointer.to_owned(),
            format!("The feature set {name} changed."),
        ));
    }
    tag_ontology(
        name,
        &format!("{pointer}/tagOntology"),
        old.get("tagOntology"),
        new.get("tagOntology"),
        changes,
    );
}

/// `Some` when `value` is an array of strings only (a set).
fn set_of_strings(value: &Value) -> Option<()> {
    value
        .as_array()
        .filter(|a| a.iter().all(Value::is_string))
        .map(|_| ())
}

/// The tagOntology domain of one feature set.
fn tag_ontology(
    name: &str,
    pointer: &str,
    old: Option<&Value>,
    new: Option<&Value>,
    changes: &mut Vec<Change>,
) {
    if old == new {
        return;
    }
    let tags = |value: Option<&Value>| -> BTreeSet<String> {
        let declared = value
            .and_then(|o| o.get("tags"))
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|t| t.keys().cloned());
        let core = set(value.and_then(|o| o.get("coreTags")))
            .into_iter()
            .map(str::to_owned);
        declared.chain(core).collect()
    };
    let (before, after) = (tags(old), tags(new));
    for tag in before.difference(&after) {
        changes.push(change(
            Severity::Warning,
            "mcpl-tag-removed",
            None,
            pointer.to_owned(),
            format!("The feature set {name} no longer has the tag {tag}."),
        ));
    }
    for tag in after.difference(&before) {
        changes.push(change(
            Severity::Info,
            "mcpl-tag-added",
            None,
            pointer.to_owned(),
            format!("The feature set {name} has the new tag {tag}."),
        ));
    }
    // What else changed, with the tags on one side only left out and the sets sorted.
    let common: BTreeSet<&str> = before.intersection(&after).map(String::as_str).collect();
    if normalized(old, &common) != normalized(new, &common) {
        changes.push(change(
            Severity::Info,
            "mcpl-tag-ontology-changed",
            None,
            pointer.to_owned(),
            format!("The tag ontology of the feature set {name} changed."),
        ));
    }
}

/// A tag ontology keeping only the tags in `common`, its set-valued arrays (`coreTags`,
/// `tags.*.implies`) sorted and deduplicated, as the digest normalizes them.
fn normalized(ontology: Option<&Value>, common: &BTreeSet<&str>) -> Option<Value> {
    let mut ontology = ontology?.clone();
    let sorted = |value: &mut Value| {
        if let Some(array) = value.as_array_mut()
            && array.iter().all(Value::is_string)
        {
            array.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
            array.dedup();
        }
    };
    if let Some(core) = ontology.get_mut("coreTags") {
        sorted(core);
        if let Some(array) = core.as_array_mut() {
            array.retain(|t| t.as_str().is_none_or(|t| common.contains(t)));
        }
    }
    if let Some(Value::Object(tags)) = ontology.get_mut("tags") {
        tags.retain(|name, _| common.contains(name.as_str()));
        for tag in tags.values_mut() {
            if let Some(implies) = tag.get_mut("implies") {
                sorted(implies);
            }
        }
    }
    Some(ontology)
}
