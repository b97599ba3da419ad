//! How package names become identifiers: RCIP capability ids and Rust names.
//!
//! Package names follow `[a-z][a-z0-9_]*`. A command's capability id is its namespace, type
//! and command names, each in lower camel case, joined by dots: command `mark_won` of type
//! `deal_stage` in namespace `crm` is `crm.dealStage.markWon`. A name with `__` or a trailing
//! `_` has no camel-case form, and two names with the same form (`poll_2`, `poll2`) would
//! share an id; the validator refuses both.

use rcip_core::derive_capability_id;

/// `snake_case` as lower camel case (`mark_won` -> `markWon`); `None` for names with `__`
/// or a trailing `_`, or whose result is not an RCIP identifier.
///
/// ```
/// use rcip_relationship::lower_camel;
/// assert_eq!(lower_camel("mark_won").as_deref(), Some("markWon"));
/// assert_eq!(lower_camel("poll_2").as_deref(), Some("poll2"));
/// assert_eq!(lower_camel("a__b"), None);
/// ```
#[must_use]
pub fn lower_camel(name: &str) -> Option<String> {
    derive_capability_id(None, name)
}

/// The capability id of a command: `namespace.type.command`, each in lower camel case.
///
/// ```
/// use rcip_relationship::command_capability_id;
/// assert_eq!(
///     command_capability_id("crm", "deal_stage", "mark_won").as_deref(),
///     Some("crm.dealStage.markWon"),
/// );
/// ```
#[must_use]
pub fn command_capability_id(namespace: &str, type_name: &str, command: &str) -> Option<String> {
    Some(format!(
        "{}.{}.{}",
        lower_camel(namespace)?,
        lower_camel(type_name)?,
        lower_camel(command)?
    ))
}

/// `snake_case` as `PascalCase`, for Rust type and variant names (`in_review` -> `InReview`).
///
/// ```
/// use rcip_relationship::pascal_case;
/// assert_eq!(pascal_case("in_review"), "InReview");
/// assert_eq!(pascal_case("v2"), "V2");
/// ```
#[must_use]
pub fn pascal_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for part in name.split('_') {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(chars.as_str());
        }
    }
    out
}
