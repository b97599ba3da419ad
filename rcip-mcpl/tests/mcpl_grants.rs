//! MCPL grants: wildcard matching, `featureSets/update` as Request and Notification,
//! malformed lists, feature-set derivation (`invalid_uses`, disabled, `not_selected`,
//! missing capabilities), receipts and their required fields, error objects.
#![allow(clippy::unwrap_used)]

mod common;

use common::mcpl;
use rcip_mcpl::{
    DisabledReason, FeatureSetsUpdate, GrantState, Receipt, UpdateForm, degradation_receipt,
    feature_set_states, pattern_matches,
};
use serde_json::{Value, json};

fn update(value: Value) -> FeatureSetsUpdate {
    serde_json::from_value(value).unwrap()
}

#[test]
fn wildcards_match_exactly_one_segment() {
    let vocabulary = mcpl();
    let granted = |pattern: &str| -> Vec<String> {
        vocabulary
            .paths
            .iter()
            .filter(|p| pattern_matches(pattern, p))
            .map(|p| p.to_string())
            .collect()
    };
    assert_eq!(granted("channels.*").len(), 7);
    assert!(
        granted("contextHooks.*").is_empty(),
        "none of the 4-segment leaves"
    );
    // Three segments: the observe leaf, never the 4-segment inject leaves.
    assert_eq!(
        granted("contextHooks.*.*"),
        ["contextHooks.beforeInference.observe"]
    );
    assert_eq!(
        granted("contextHooks.beforeInference.*"),
        ["contextHooks.beforeInference.observe"]
    );
    assert_eq!(granted("contextHooks.*.inject.*").len(), 3);
    assert_eq!(
        granted("*"),
        [
            "pushEvents",
            "tools",
            "modelInfo",
            "inferenceRequest",
            "inferenceLifecycle"
        ]
    );
    assert!(
        granted("channels").is_empty(),
        "a bare parent grants nothing beneath"
    );
    assert_eq!(granted("inferenceRequest"), ["inferenceRequest"]);
    assert!(granted("channels.pub*").is_empty());
}

#[test]
fn a_request_replaces_the_grant_and_is_ready_only_after_the_receipt() {
    let initial = GrantState::initial();
    assert!(!initial.grants("pushEvents"));
    let outcome = initial.apply_update(
        &update(json!({"effectiveCapabilities": ["pushEvents", "channels.*"]})),
        UpdateForm::Request,
    );
    assert!(!outcome.malformed());
    let mut state = outcome.state;
    assert!(!state.grants("pushEvents"), "not before the receipt");
    state.mark_ready();
    assert!(state.grants("pushEvents") && state.grants("channels.typing"));
    assert!(!state.grants("modelInfo"));
    // A Request without effectiveCapabilities grants nothing (never "no change").
    let mut emptied = state
        .apply_update(&update(json!({"enabled": ["fs"]})), UpdateForm::Request)
        .state;
    emptied.mark_ready();
    assert!(!emptied.grants("pushEvents"));
    assert_eq!(
        emptied.enabled.unwrap().into_iter().collect::<Vec<_>>(),
        ["fs"]
    );
}

#[test]
fn a_path_in_both_lists_makes_the_request_malformed() {
    let mut ready = GrantState::initial()
        .apply_update(
            &update(json!({"effectiveCapabilities": ["tools"], "disabled": ["old"]})),
            UpdateForm::Request,
        )
        .state;
    ready.mark_ready();
    let outcome = ready.apply_update(
        &update(json!({"effectiveCapabilities": ["pushEvents", "modelInfo"], "deniedCapabilities": ["modelInfo"]})),
        UpdateForm::Request,
    );
    assert!(outcome.malformed());
    assert_eq!(outcome.conflicts, ["modelInfo"]);
    assert!(outcome.state.effective_capabilities.is_empty() && !outcome.state.ready);
    assert!(
        outcome.state.disabled.contains("old"),
        "earlier reductions are kept"
    );
    // deniedCapabilities alone is diagnostics: it takes no part in the decision.
    let mut fine = ready
        .apply_update(
            &update(
                json!({"effectiveCapabilities": ["tools"], "deniedCapabilities": ["pushEvents"]}),
            ),
            UpdateForm::Request,
        )
        .state;
    fine.mark_ready();
    assert!(fine.grants("tools"));
}

#[test]
fn a_notification_only_narrows() {
    let mut state = GrantState::initial()
        .apply_update(
            &update(json!({"effectiveCapabilities": ["tools"]})),
            UpdateForm::Request,
        )
        .state;
    state.mark_ready();
    let outcome = state.apply_update(
        &update(json!({"effectiveCapabilities": ["pushEvents"], "deniedCapabilities": [], "enabled": ["x"], "disabled": ["fs"]})),
        UpdateForm::Notification,
    );
    assert_eq!(
        outcome.discarded,
        ["effectiveCapabilities", "deniedCapabilities", "enabled"]
    );
    assert!(
        outcome.state.grants("tools") && !outcome.state.grants("pushEvents"),
        "the grant is unchanged"
    );
    assert!(
        outcome.state.disabled.contains("fs"),
        "the reduction applies"
    );
    assert_eq!(outcome.state.enabled, None);
    // A Notification never makes a grant ready.
    let pending = GrantState::initial().apply_update(
        &update(json!({"effectiveCapabilities": ["tools"]})),
        UpdateForm::Notification,
    );
    assert!(!pending.state.ready && !pending.state.grants("tools"));
}

#[test]
fn feature_sets_are_derived_from_uses_selection_and_grant() {
    let vocabulary = mcpl();
    let sets = json!({
        "ok": {"description": "", "uses": ["channels.publish", "pushEvents"]},
        "hooks": {"description": "", "uses": ["contextHooks.beforeInference"]},
        "wild": {"description": "", "uses": ["channels.*"]},
        "empty": {"description": "", "uses": []},
        "absent": {"description": ""},
        "scalar": {"description": "", "uses": "tools"},
        "short": {"description": "", "uses": ["channels.publish", "modelInfo"]},
        "off": {"description": "", "uses": ["pushEvents"]},
        "other": {"description": "", "uses": ["pushEvents"]}
    });
    let mut grant = GrantState::initial()
        .apply_update(
            &update(
                json!({"effectiveCapabilities": ["channels.*", "pushEvents"], "disabled": ["off"]}),
            ),
            UpdateForm::Request,
        )
        .state;
    grant.mark_ready();
    let states = feature_set_states(&sets, &vocabulary, &grant);
    assert_eq!(
        serde_json::to_value(states["short"].clone().unwrap_err()).unwrap(),
        json!({"reason": "missing_capabilities", "missingCapabilities": ["modelInfo"]})
    );
    let invalid = |unrecognized: &[&str]| {
        Err(DisabledReason::InvalidUses {
            unrecognized: unrecognized.iter().map(|s| s.to_string()).collect(),
        })
    };
    assert_eq!(states["ok"], Ok(()));
    assert_eq!(
        serde_json::to_value(states["short"].clone().unwrap_err()).unwrap(),
        json!({"reason": "missing_capabilities", "missingCapabilities": ["modelInfo"]})
    );
    assert_eq!(states["hooks"], invalid(&["contextHooks.beforeInference"]));
    assert_eq!(states["wild"], invalid(&["channels.*"]));
    assert_eq!(states["empty"], invalid(&[]));
    assert_eq!(states["absent"], invalid(&[]));
    assert_eq!(states["scalar"], invalid(&[]));
    assert_eq!(
        states["short"],
        Err(DisabledReason::MissingCapabilities {
            missing_capabilities: vec!["modelInfo".into()]
        })
    );
    assert_eq!(states["off"], Err(DisabledReason::Disabled));
    assert_eq!(states["other"], Ok(()));
    // enabled as an allowlist.
    let mut selected = grant
        .apply_update(
            &update(
                json!({"effectiveCapabilities": ["channels.*", "pushEvents"], "enabled": ["ok"]}),
            ),
            UpdateForm::Request,
        )
        .state;
    selected.mark_ready();
    let states = feature_set_states(&sets, &vocabulary, &selected);
    assert_eq!(states["other"], Err(DisabledReason::NotSelected));
    assert_eq!(states["ok"], Ok(()));
    assert_eq!(
        states["short"],
        Err(DisabledReason::NotSelected),
        "selection is checked before the grant"
    );
    assert_eq!(
        serde_json::to_value(DisabledReason::NotSelected).unwrap(),
        json!({"reason": "not_selected"})
    );
}

#[test]
fn receipts_carry_their_required_fields() {
    let vocabulary = mcpl();
    let sets = json!({"short": {"description": "", "uses": ["modelInfo"]}, "fine": {"description": "", "uses": ["tools"]}});
    let mut grant = GrantState::initial()
        .apply_update(
            &update(json!({"effectiveCapabilities": ["tools"]})),
            UpdateForm::Request,
        )
        .state;
    grant.mark_ready();
    let receipt = degradation_receipt(&feature_set_states(&sets, &vocabulary, &grant));
    assert_eq!(
        serde_json::to_value(&receipt).unwrap(),
        json!({"accepted": true, "mode": "degraded", "notes": [],
               "unavailableFeatures": [{"featureSet": "short", "missingCapabilities": ["modelInfo"], "effect": "disabled"}]})
    );
    // Nothing degraded: no mode.
    let all_fine = degradation_receipt(&feature_set_states(
        &json!({"fine": {"uses": ["tools"]}}),
        &vocabulary,
        &grant,
    ));
    assert!(
        serde_json::to_value(&all_fine)
            .unwrap()
            .get("mode")
            .is_none()
    );
    // Reading receipts: effect and fallback are required; accepted must match the shape.
    let parse = |value: Value| serde_json::from_value::<Receipt>(value);
    assert!(parse(json!({"accepted": true, "unavailableFeatures": [{"featureSet": "a", "missingCapabilities": []}]})).is_err());
    assert!(parse(json!({"accepted": false, "missingCapabilities": ["tools"]})).is_err());
    let refused = parse(json!({"accepted": false, "fallback": "mcp-only"})).unwrap();
    assert!(matches!(refused, Receipt::Refused(_)));
    // The marker writes its one value back.
    assert_eq!(
        serde_json::to_value(&refused).unwrap(),
        json!({"accepted": false, "fallback": "mcp-only", "missingCapabilities": []})
    );
    assert!(parse(json!({"accepted": false, "fallback": "later"})).is_err());
    assert!(matches!(
        parse(json!({"accepted": true})).unwrap(),
        Receipt::Accepted(_)
    ));
}

#[test]
fn error_objects() {
    use rcip_mcpl::McplErrorCode as E;
    assert_eq!(
        E::FeatureSetNotEnabled.error_object(Some("fs")),
        json!({"code": -32001, "message": "Feature set not enabled", "data": {"featureSet": "fs"}})
    );
    assert_eq!(
        E::UnknownFeatureSet.error_object(Some("fs")),
        json!({"code": -32003, "message": "Unknown feature set"})
    );
    assert_eq!(
        E::CheckpointNotFound.error_object(Some("c1"))["data"],
        json!({"checkpoint": "c1"})
    );
    let codes = [
        E::FeatureSetNotEnabled,
        E::CapabilityDenied,
        E::UnknownFeatureSet,
        E::CheckpointNotFound,
        E::ChannelNotPermitted,
        E::UnknownChannel,
        E::ChannelOpenFailed,
    ]
    .map(E::code);
    assert_eq!(
        codes,
        [-32001, -32002, -32003, -32005, -32017, -32023, -32024]
    );
}
