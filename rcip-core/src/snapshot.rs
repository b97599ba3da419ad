//! The live application snapshot and its parts, field for field the reference's JSON.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::{
    ApplicationMetadata, CapabilityDefinition, CapabilityList, Effect, Schema, ScopeDefinition,
    UsageGuidance,
};

/// The active semantic context: which scopes are active, and optionally which is primary.
///
/// Equality is order-sensitive, as in the reference: re-ordering the same active scopes is a
/// change of context (and invalidates pending approvals).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SemanticContext {
    /// Active scope ids, without duplicates, in first-occurrence order.
    pub active_scope_ids: Vec<String>,
    /// The primary scope; when set it is also active.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary_scope_id: Option<String>,
}

impl SemanticContext {
    /// A context with these active scopes and no primary.
    #[must_use]
    pub fn active<I, S>(scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        SemanticContext {
            active_scope_ids: scopes.into_iter().map(Into::into).collect(),
            primary_scope_id: None,
        }
    }

    /// Sets the primary scope.
    #[must_use]
    pub fn primary(mut self, scope_id: impl Into<String>) -> Self {
        self.primary_scope_id = Some(scope_id.into());
        self
    }

    /// Whether a capability with these scopes is relevant here: it is global (no scopes)
    /// or one of its scopes is active. Primary and parents play no part.
    #[must_use]
    pub fn relevance_of(&self, scope_ids: &[String]) -> Relevance {
        if scope_ids.is_empty() || scope_ids.iter().any(|s| self.active_scope_ids.contains(s)) {
            Relevance::Current
        } else {
            Relevance::Other
        }
    }
}

/// Whether a bound capability may run now, as its host says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Availability {
    /// Eligible to run.
    pub available: bool,
    /// A host-chosen machine code (free string).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<String>,
    /// A host-chosen human reason; it is published verbatim, so keep it free of secrets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Availability {
    /// The reason code used when an availability check fails (throws or panics).
    pub const CHECK_FAILED_CODE: &'static str = "AVAILABILITY_CHECK_FAILED";

    /// Available, with no reason.
    #[must_use]
    pub const fn available() -> Self {
        Availability {
            available: true,
            reason_code: None,
            reason: None,
        }
    }

    /// Unavailable, with a code and a reason.
    #[must_use]
    pub fn unavailable(reason_code: impl Into<String>, reason: impl Into<String>) -> Self {
        Availability {
            available: false,
            reason_code: Some(reason_code.into()),
            reason: Some(reason.into()),
        }
    }

    /// What a failed availability check publishes.
    #[must_use]
    pub fn check_failed() -> Self {
        Availability::unavailable(
            Self::CHECK_FAILED_CODE,
            "The application could not determine current availability.",
        )
    }
}

/// Contextual relevance (not execution state). Exhaustive: relevance is two-valued by
/// definition (a capability is current or it is not).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Relevance {
    /// Global, or a scope of it is active.
    Current,
    /// None of its scopes is active.
    Other,
}

/// The declared part of a capability as discovery publishes it: fixed when the catalog is
/// compiled, and shared (one `Arc`) by every snapshot entry and policy context built from it.
///
/// Non-exhaustive: made from a definition (`From<CapabilityDefinition>`, which moves its
/// texts, or `From<&CapabilityDefinition>`, which copies them; the schemas are shared either
/// way) or deserialized.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CapabilityContract {
    /// The capability id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its description.
    pub description: String,
    /// Its scopes.
    pub scope_ids: Vec<String>,
    /// Its effect.
    pub effect: Effect,
    /// Whether it is declared idempotent; written only when `true` (absent = `false`).
    #[serde(default, skip_serializing_if = "crate::definition::is_false")]
    pub idempotent: bool,
    /// Whether it may run as a task; written only when declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long_running: Option<crate::LongRunning>,
    /// Its input schema, shared with the definition it came from (and, after compiling, with
    /// every capability of the catalog that has the same schema).
    pub input_schema: Schema,
    /// Its output schema, shared likewise.
    pub output_schema: Schema,
    /// Its tags (`[]` when none were declared).
    pub tags: Vec<String>,
    /// Its usage guidance.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::usage"
    )]
    pub usage: Option<UsageGuidance>,
}

impl From<&CapabilityDefinition> for CapabilityContract {
    fn from(definition: &CapabilityDefinition) -> Self {
        definition.clone().into()
    }
}

impl From<CapabilityDefinition> for CapabilityContract {
    fn from(definition: CapabilityDefinition) -> Self {
        CapabilityContract {
            id: definition.id,
            title: definition.title,
            description: definition.description,
            scope_ids: definition.scope_ids,
            effect: definition.effect,
            idempotent: definition.idempotent,
            long_running: definition.long_running,
            input_schema: definition.input_schema,
            output_schema: definition.output_schema,
            tags: definition.tags.unwrap_or_default(),
            usage: definition.usage,
        }
    }
}

/// One capability as discovery sees it: its shared contract plus three independent live
/// facts (`bound`, `available`, `relevance`). Contract fields read through `Deref`
/// (`entry.id`, `entry.effect`, ...); cloning an entry or building a new snapshot never
/// copies schemas. On the wire the contract's fields come first, flattened, as in the
/// reference.
///
/// Non-exhaustive: outside rcip-core it is read, deserialized, or made with
/// [`new`](Self::new), which derives `available`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CapabilitySnapshot {
    /// The declared contract.
    #[serde(flatten)]
    pub contract: Arc<CapabilityContract>,
    /// A live handler is bound.
    pub bound: bool,
    /// Bound and its availability says available.
    pub available: bool,
    /// The host's availability answer; absent when unbound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub availability: Option<Availability>,
    /// Relevance to the current semantic context.
    pub relevance: Relevance,
}

impl CapabilitySnapshot {
    /// An entry: `available` is `bound` and the availability's `available` (so an unbound
    /// entry is never available).
    #[must_use]
    pub fn new(
        contract: Arc<CapabilityContract>,
        bound: bool,
        availability: Option<Availability>,
        relevance: Relevance,
    ) -> Self {
        CapabilitySnapshot {
            contract,
            bound,
            available: bound && availability.as_ref().is_some_and(|a| a.available),
            availability,
            relevance,
        }
    }
}

impl std::ops::Deref for CapabilitySnapshot {
    type Target = CapabilityContract;

    fn deref(&self) -> &CapabilityContract {
        &self.contract
    }
}

/// The whole discovery picture at one revision.
///
/// Read leniently, like every report type: members this version does not know (at the top,
/// in the application, a scope, a capability, its availability or usage) are ignored and
/// not written back, so a Rust service can read what a newer peer wrote.
///
/// Non-exhaustive (a later protocol version may add members): outside rcip-core it is read,
/// deserialized, or made with `new`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ApplicationSnapshot {
    /// Always [`RCIP_PROTOCOL_VERSION`](crate::RCIP_PROTOCOL_VERSION).
    pub protocol_version: Arc<str>,
    /// The revision: starts at 0 and grows by one at every refresh.
    pub revision: u64,
    /// Application metadata.
    #[serde(deserialize_with = "lenient::application")]
    pub application: Arc<ApplicationMetadata>,
    /// Declared scopes.
    #[serde(deserialize_with = "lenient::scopes")]
    pub scopes: Arc<[ScopeDefinition]>,
    /// The semantic context.
    pub context: Arc<SemanticContext>,
    /// Every declared capability, in catalog order, in chunks shared with the snapshots of
    /// other revisions where nothing in them changed.
    pub capabilities: CapabilityList,
}

impl ApplicationSnapshot {
    /// A snapshot of protocol [`RCIP_PROTOCOL_VERSION`](crate::RCIP_PROTOCOL_VERSION);
    /// `capabilities` is a [`CapabilityList`] or anything that converts into one (a `Vec`).
    #[must_use]
    pub fn new(
        revision: u64,
        application: Arc<ApplicationMetadata>,
        scopes: Arc<[ScopeDefinition]>,
        context: Arc<SemanticContext>,
        capabilities: impl Into<CapabilityList>,
    ) -> Self {
        ApplicationSnapshot {
            protocol_version: Arc::from(crate::RCIP_PROTOCOL_VERSION),
            revision,
            application,
            scopes,
            context,
            capabilities: capabilities.into(),
        }
    }
}

/// Which relevance to keep in [`CapabilityFilter::context`]. Non-exhaustive: filters can
/// grow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ContextFilter {
    /// No filter.
    #[default]
    All,
    /// Only `relevance == current`.
    Current,
}

/// A discovery filter; all given criteria must hold.
///
/// ```
/// use rcip_core::{CapabilityFilter, ContextFilter, Effect};
/// let filter = CapabilityFilter {
///     context: Some(ContextFilter::Current),
///     available_only: true,
///     effect: Some(Effect::Read),
///     ..CapabilityFilter::default()
/// };
/// # let _ = filter;
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CapabilityFilter {
    /// `current` keeps only currently relevant capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<ContextFilter>,
    /// Keeps only `available` capabilities (so never unbound ones).
    #[serde(default)]
    pub available_only: bool,
    /// Keeps capabilities whose scopes contain this one (global ones are excluded). An empty
    /// string means no filter, as in the reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope_id: Option<String>,
    /// Keeps capabilities with this effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<Effect>,
}

impl CapabilityFilter {
    /// Whether an entry passes the filter.
    #[must_use]
    pub fn matches(&self, capability: &CapabilitySnapshot) -> bool {
        if self.context == Some(ContextFilter::Current)
            && capability.relevance != Relevance::Current
        {
            return false;
        }
        if self.available_only && !capability.available {
            return false;
        }
        if let Some(scope) = self.scope_id.as_deref().filter(|s| !s.is_empty())
            && !capability.scope_ids.iter().any(|s| s == scope)
        {
            return false;
        }
        if let Some(effect) = self.effect
            && capability.effect != effect
        {
            return false;
        }
        true
    }
}

/// Lenient readers for the definition parts a snapshot repeats. The definition types refuse
/// unknown keys, because there a typo changes what is declared; in a snapshot they are a
/// report, which a newer peer may have extended, so their copies here ignore them.
mod lenient {
    use std::sync::Arc;

    use serde::{Deserialize, Deserializer};
    use serde_json::Value;

    use crate::{ApplicationMetadata, ScopeDefinition, UsageExample, UsageGuidance};

    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Application {
        id: String,
        name: String,
        description: String,
        #[serde(default)]
        version: Option<String>,
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Scope {
        id: String,
        title: String,
        description: String,
        #[serde(default)]
        parent_id: Option<String>,
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Usage {
        when_to_use: String,
        #[serde(default)]
        examples: Option<Vec<Example>>,
    }

    #[derive(Deserialize)]
    struct Example {
        description: String,
        input: Value,
    }

    pub(super) fn application<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Arc<ApplicationMetadata>, D::Error> {
        let a = Application::deserialize(deserializer)?;
        Ok(Arc::new(ApplicationMetadata {
            id: a.id,
            name: a.name,
            description: a.description,
            version: a.version,
        }))
    }

    pub(super) fn scopes<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Arc<[ScopeDefinition]>, D::Error> {
        let scopes = Vec::<Scope>::deserialize(deserializer)?;
        Ok(scopes
            .into_iter()
            .map(|s| ScopeDefinition {
                id: s.id,
                title: s.title,
                description: s.description,
                parent_id: s.parent_id,
            })
            .collect())
    }

    pub(super) fn usage<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<UsageGuidance>, D::Error> {
        let usage = Option::<Usage>::deserialize(deserializer)?;
        Ok(usage.map(|u| UsageGuidance {
            when_to_use: u.when_to_use,
            examples: u.examples.map(|examples| {
                examples
                    .into_iter()
                    .map(|e| UsageExample {
                        description: e.description,
                        input: e.input,
                    })
                    .collect()
            }),
        }))
    }
}
