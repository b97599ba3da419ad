//! A provider export of the catalog: the catalog's own rules, plus what only the profile's
//! mapping decides. A model calls a tool by the name the profile's rule makes of the
//! capability id, so two different ids can be one tool to it (`notes.list` and `notes_list`
//! are both `notes_list` for OpenAI). A kept id keeps its name: the rule is a function of
//! the id alone, and both catalogs are exported by the same rules.

use rcip_export::{Profile, export_catalog};
use serde_json::Value;

use crate::{Change, DiffError, Report, Severity, diff_catalogs};

/// Compares two catalog exports as `profile`'s consumers see them: [`diff_catalogs`], then,
/// tool by tool, `tool-retargeted` when a tool name now calls another capability, or
/// `tool-export-refused` when the profile cannot export the new catalog at all.
///
/// ```
/// use rcip_diff::diff_exports;
/// use rcip_export::Profile;
/// use serde_json::json;
///
/// let capability = |id: &str| json!({"id": id, "title": "List", "description": "Lists.",
///     "effect": "read", "scopeIds": [],
///     "inputSchema": {"type": "object", "properties": {}, "additionalProperties": false},
///     "outputSchema": {"type": "null"}});
/// let old = json!({"capabilities": [capability("notes.list")]});
/// let new = json!({"capabilities": [capability("notes_list")]});
/// // OpenAI names hold no dot: both ids are the tool notes_list.
/// let report = diff_exports(Profile::OpenAi, &old, &new).unwrap();
/// let rules: Vec<_> = report.changes.iter().map(|c| c.rule).collect();
/// assert_eq!(rules, ["capability-removed", "capability-added", "tool-retargeted"]);
/// ```
///
/// # Errors
///
/// As [`diff_catalogs`].
pub fn diff_exports(profile: Profile, old: &Value, new: &Value) -> Result<Report, DiffError> {
    let mut report = diff_catalogs(old, new)?;
    let name = profile.name();
    // An old catalog the profile refused had no tools there: nothing to lose or rename.
    let Ok(before) = export_catalog(profile, old) else {
        return Ok(report);
    };
    let after = match export_catalog(profile, new) {
        Ok(export) => export,
        Err(error) => {
            report.changes.push(Change {
                severity: Severity::Breaking,
                rule: "tool-export-refused",
                capability: None,
                pointer: String::new(),
                message: format!(
                    "The {name} profile cannot export the new catalog ({}): {error}",
                    error.code()
                ),
            });
            return Ok(report);
        }
    };
    for tool in before.tools() {
        let (id, old_name) = (tool.capability_id(), tool.name());
        if let Some(other) = after.names().capability(old_name)
            && other != id
        {
            report.changes.push(Change {
                severity: Severity::Breaking,
                rule: "tool-retargeted",
                capability: Some(id.to_owned()),
                pointer: String::new(),
                message: format!(
                    "The {name} tool {old_name} now calls {other}, not {id}: a model that calls it reaches another capability."
                ),
            });
        }
    }
    Ok(report)
}
