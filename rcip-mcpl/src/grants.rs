//! MCPL grants and feature sets (SPEC §5.3, §5.4, §6): the effective-capabilities allowlist,
//! wildcard patterns, `featureSets/update` as a Request or a Notification, feature-set
//! derivation with its disabled reasons, the degradation receipt and the error codes.

use std::collections::{BTreeMap, BTreeSet};

use monostate::MustBeBool;
use rcip_core::depth::exceeds_depth;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::MAX_MANIFEST_DEPTH;

use super::vocabulary::Vocabulary;

/// Whether the grant pattern `pattern` matches `path`: same number of `.`-separated
/// segments, each equal or `*` (one whole segment). `channels.*` grants `channels.publish`,
/// never a deeper path; a bare parent grants only itself.
///
/// ```
/// use rcip_mcpl::pattern_matches;
/// assert!(pattern_matches("channels.*", "channels.publish"));
/// assert!(!pattern_matches("contextHooks.*", "contextHooks.beforeInference.inject.system"));
/// assert!(!pattern_matches("channels", "channels.publish"));
/// assert!(pattern_matches("*", "tools") && !pattern_matches("*", "channels.publish"));
/// assert!(!pattern_matches("chan*.publish", "channels.publish"));
/// ```
#[must_use]
pub fn pattern_matches(pattern: &str, path: &str) -> bool {
    let (mut pattern, mut path) = (pattern.split('.'), path.split('.'));
    loop {
        match (pattern.next(), path.next()) {
            (None, None) => return true,
            (Some(p), Some(s)) if p == "*" || p == s => {}
            _ => return false,
        }
    }
}

/// `featureSets/update` params (the grant fields; anything else is ignored).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeatureSetsUpdate {
    /// The sole allowlist: patterns of granted capability paths.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effective_capabilities: Option<Vec<String>>,
    /// Diagnostic only: never part of a decision (but a path in both lists is malformed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub denied_capabilities: Option<Vec<String>>,
    /// When present, an allowlist of feature sets (others are `not_selected`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<Vec<String>>,
    /// Feature sets to disable: always subtracts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disabled: Option<Vec<String>>,
}

/// How a `featureSets/update` arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateForm {
    /// A Request: the only carrier of grant changes; ready once its receipt is sent.
    Request,
    /// A Notification: applies only a narrowing `disabled`, discards the rest.
    Notification,
}

/// The grant a host and server agree on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GrantState {
    /// The granted patterns (empty: nothing).
    pub effective_capabilities: Vec<String>,
    /// `None`: feature-set selection unconstrained; `Some`: the allowlist.
    pub enabled: Option<BTreeSet<String>>,
    /// Disabled feature sets.
    pub disabled: BTreeSet<String>,
    /// Whether the grant is in force: only after a Request's receipt.
    pub ready: bool,
}

/// What applying a `featureSets/update` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpdateOutcome {
    /// The new state (a Request's is not ready until [`GrantState::mark_ready`]).
    pub state: GrantState,
    /// Paths in both `effectiveCapabilities` and `deniedCapabilities`: the message is
    /// malformed, the state grants nothing and is not ready.
    pub conflicts: Vec<String>,
    /// Fields a Notification carried and that were discarded (diagnostic).
    pub discarded: Vec<&'static str>,
}

impl UpdateOutcome {
    /// Whether the message was malformed.
    #[must_use]
    pub fn malformed(&self) -> bool {
        !self.conflicts.is_empty()
    }
}

impl GrantState {
    /// Before the initial policy Request: nothing granted, not ready.
    #[must_use]
    pub fn initial() -> Self {
        Self::default()
    }

    /// Whether `path` is granted (and the grant is ready): some pattern matches it.
    #[must_use]
    pub fn grants(&self, path: &str) -> bool {
        self.ready
            && self
                .effective_capabilities
                .iter()
                .any(|p| pattern_matches(p, path))
    }

    /// The grant is in force: the server answered the Request with its receipt.
    pub fn mark_ready(&mut self) {
        self.ready = true;
    }

    /// Applies a `featureSets/update`.
    ///
    /// - Request: absent `effectiveCapabilities` grants nothing (never "no change"); absent
    ///   `enabled` constrains nothing, present `enabled` is an allowlist; `disabled`
    ///   subtracts; not ready until [`mark_ready`](Self::mark_ready). A path in both lists
    ///   makes it malformed: nothing granted, not ready, earlier reductions kept.
    /// - Notification: only `disabled` applies (added to the disabled sets); the grant and
    ///   its readiness are kept; `effectiveCapabilities`, `deniedCapabilities` and `enabled`
    ///   are discarded (listed in `discarded`).
    #[must_use]
    pub fn apply_update(&self, update: &FeatureSetsUpdate, form: UpdateForm) -> UpdateOutcome {
        let mut disabled = self.disabled.clone();
        disabled.extend(update.disabled.iter().flatten().cloned());
        if form == UpdateForm::Notification {
            let discarded = [
                (
                    "effectiveCapabilities",
                    update.effective_capabilities.is_some(),
                ),
                ("deniedCapabilities", update.denied_capabilities.is_some()),
                ("enabled", update.enabled.is_some()),
            ]
            .into_iter()
            .filter_map(|(field, present)| present.then_some(field))
            .collect();
            return UpdateOutcome {
                state: GrantState {
                    disabled,
                    ..self.clone()
                },
                conflicts: Vec::new(),
                discarded,
            };
        }
        let effective = update.effective_capabilities.clone().unwrap_or_default();
        let denied: BTreeSet<&String> = update.denied_capabilities.iter().flatten().collect();
        let conflicts: Vec<String> = effective
            .iter()
            .filter(|p| denied.contains(p))
            .cloned()
            .collect();
        if !conflicts.is_empty() {
            return UpdateOutcome {
                state: GrantState {
                    effective_capabilities: Vec::new(),
                    enabled: self.enabled.clone(),
                    disabled: self.disabled.clone(),
                    ready: false,
                },
                conflicts,
                discarded: Vec::new(),
            };
        }
        UpdateOutcome {
            state: GrantState {
                effective_capabilities: effective,
                enabled: update.enabled.as_ref().map(|e| e.iter().cloned().collect()),
                disabled: update.disabled.iter().flatten().cloned().collect(),
                ready: false,
            },
            conflicts: Vec::new(),
            discarded: Vec::new(),
        }
    }
}

/// Why a feature set is disabled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum DisabledReason {
    /// Absent, empty, non-array or unrecognized `uses` (entries not exactly a vocabulary
    /// path; no wildcards).
    InvalidUses {
        /// The entries that are not paths.
        unrecognized: Vec<String>,
    },
    /// In the `disabled` list.
    Disabled,
    /// Not in a present `enabled` allowlist.
    NotSelected,
    /// Its `uses` needs capabilities the grant does not give.
    MissingCapabilities {
        /// The paths not granted.
        #[serde(rename = "missingCapabilities")]
        missing_capabilities: Vec<String>,
    },
}

/// Each declared feature set of a manifest's `featureSets` (an object keyed by name):
/// `Ok(())` when enabled, else why not. Checked in order: `uses` valid, not disabled,
/// selected, every used capability granted.
#[must_use]
pub fn feature_set_states(
    feature_sets: &Value,
    vocabulary: &Vocabulary,
    grant: &GrantState,
) -> BTreeMap<String, Result<(), DisabledReason>> {
    let Value::Object(sets) = feature_sets else {
        return BTreeMap::new();
    };
    sets.iter()
        .map(|(name, declaration)| {
            (
                name.clone(),
                feature_set_state(name, declaration, vocabulary, grant),
            )
        })
        .collect()
}

fn feature_set_state(
    name: &str,
    declaration: &Value,
    vocabulary: &Vocabulary,
    grant: &GrantState,
) -> Result<(), DisabledReason> {
    let uses: Vec<&str> = match declaration.get("uses").and_then(Value::as_array) {
        Some(items) if !items.is_empty() => {
            let mut uses = Vec::with_capacity(items.len());
            let mut unrecognized = Vec::new();
            for item in items {
                match item.as_str() {
                    Some(path) if vocabulary.contains(path) => uses.push(path),
                    Some(other) => unrecognized.push(other.to_owned()),
                    // Written as JSON, which recurses: a value built in memory past the
                    // manifest depth is named instead.
                    None if exceeds_depth(item, MAX_MANIFEST_DEPTH) => {
                        unrecognized.push(format!(
                            "(a value nesting more than {MAX_MANIFEST_DEPTH} arrays and objects)"
                        ));
                    }
                    None => unrecognized.push(item.to_string()),
                }
            }
            if !unrecognized.is_empty() {
                return Err(DisabledReason::InvalidUses { unrecognized });
            }
            uses
        }
        _ => {
            return Err(DisabledReason::InvalidUses {
                unrecognized: Vec::new(),
            });
        }
    };
    if grant.disabled.contains(name) {
        return Err(DisabledReason::Disabled);
    }
    if grant
        .enabled
        .as_ref()
        .is_some_and(|enabled| !enabled.contains(name))
    {
        return Err(DisabledReason::NotSelected);
    }
    let missing: Vec<String> = uses
        .into_iter()
        .filter(|path| !grant.grants(path))
        .map(str::to_owned)
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(DisabledReason::MissingCapabilities {
            missing_capabilities: missing,
        })
    }
}

/// One entry of an accepted receipt's `unavailableFeatures`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnavailableFeature {
    /// The feature set.
    pub feature_set: String,
    /// What it lacks.
    pub missing_capabilities: Vec<String>,
    /// Required: what happened to it (`disabled`).
    pub effect: String,
}

/// What a refused update falls back to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fallback {
    /// Disable MCPL, keep tools, resources and prompts.
    McpOnly,
    /// Close the connection.
    Close,
}

/// The server's answer to a `featureSets/update` Request (the degradation receipt).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Receipt {
    /// Accepted, possibly degraded.
    Accepted(AcceptedReceipt),
    /// Refused: `fallback` is required.
    Refused(RefusedReceipt),
}

/// An accepted receipt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AcceptedReceipt {
    /// Always `true`: (de)serializes as `true` and accepts nothing else, which is what tells
    /// the untagged [`Receipt`]'s variants apart.
    pub accepted: MustBeBool<true>,
    /// `degraded` when something is unavailable; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Feature sets that cannot run.
    #[serde(default)]
    pub unavailable_features: Vec<UnavailableFeature>,
    /// Free notes.
    #[serde(default)]
    pub notes: Vec<String>,
}

/// A refused receipt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RefusedReceipt {
    /// Always `false`, likewise.
    pub accepted: MustBeBool<false>,
    /// Required.
    pub fallback: Fallback,
    /// What the server lacks.
    #[serde(default)]
    pub missing_capabilities: Vec<String>,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The accepted receipt for these feature-set states: every set disabled for missing
/// capabilities is listed with `effect: "disabled"`, and `mode` is `degraded` only then.
#[must_use]
pub fn degradation_receipt(states: &BTreeMap<String, Result<(), DisabledReason>>) -> Receipt {
    let unavailable: Vec<UnavailableFeature> = states
        .iter()
        .filter_map(|(name, state)| match state {
            Err(DisabledReason::MissingCapabilities {
                missing_capabilities,
            }) => Some(UnavailableFeature {
                feature_set: name.clone(),
                missing_capabilities: missing_capabilities.clone(),
                effect: "disabled".to_owned(),
            }),
            _ => None,
        })
        .collect();
    Receipt::Accepted(AcceptedReceipt {
        accepted: MustBeBool,
        mode: (!unavailable.is_empty()).then(|| "degraded".to_owned()),
        unavailable_features: unavailable,
        notes: Vec::new(),
    })
}

/// MCPL's JSON-RPC error codes (SPEC App. A).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum McplErrorCode {
    /// -32001, data `{featureSet}`.
    FeatureSetNotEnabled,
    /// -32002, data `{capability}`.
    CapabilityDenied,
    /// -32003.
    UnknownFeatureSet,
    /// -32005, data `{checkpoint}`.
    CheckpointNotFound,
    /// -32017.
    ChannelNotPermitted,
    /// -32023.
    UnknownChannel,
    /// -32024.
    ChannelOpenFailed,
}

impl McplErrorCode {
    /// The numeric code.
    #[must_use]
    pub const fn code(self) -> i64 {
        match self {
            Self::FeatureSetNotEnabled => -32001,
            Self::CapabilityDenied => -32002,
            Self::UnknownFeatureSet => -32003,
            Self::CheckpointNotFound => -32005,
            Self::ChannelNotPermitted => -32017,
            Self::UnknownChannel => -32023,
            Self::ChannelOpenFailed => -32024,
        }
    }

    /// The message.
    #[must_use]
    pub const fn message(self) -> &'static str {
        match self {
            Self::FeatureSetNotEnabled => "Feature set not enabled",
            Self::CapabilityDenied => "Capability denied",
            Self::UnknownFeatureSet => "Unknown feature set",
            Self::CheckpointNotFound => "Checkpoint not found",
            Self::ChannelNotPermitted => "Channel not permitted",
            Self::UnknownChannel => "Unknown channel",
            Self::ChannelOpenFailed => "Channel open failed",
        }
    }

    /// The JSON-RPC error object, with `data` where the spec names it.
    ///
    /// ```
    /// use rcip_mcpl::McplErrorCode;
    /// use serde_json::json;
    /// assert_eq!(McplErrorCode::CapabilityDenied.error_object(Some("channels.publish")),
    ///            json!({"code": -32002, "message": "Capability denied",
    ///                   "data": {"capability": "channels.publish"}}));
    /// ```
    #[must_use]
    pub fn error_object(self, subject: Option<&str>) -> Value {
        let data_key = match self {
            Self::FeatureSetNotEnabled => Some("featureSet"),
            Self::CapabilityDenied => Some("capability"),
            Self::CheckpointNotFound => Some("checkpoint"),
            _ => None,
        };
        let mut error = json!({"code": self.code(), "message": self.message()});
        if let (Some(key), Some(subject)) = (data_key, subject) {
            error["data"] = json!({ key: subject });
        }
        error
    }
}
