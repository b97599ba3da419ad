//! Application, scope and capability definitions, with a builder API.
//!
//! Definitions are pure data: they describe a catalog and carry no handlers, credentials or
//! private records. Their JSON form (camelCase) is the reference's definition shape, so a
//! catalog can also be loaded from a file. Validation is a separate step
//! ([`validate_definition`](crate::validate_definition)), run by the runtime at start-up.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{Effect, Schema};

/// The canonical protocol literal, independent of any crate version.
pub const RCIP_PROTOCOL_VERSION: &str = "1.0";

/// A whole application catalog: metadata, scopes and capabilities.
///
/// ```
/// use rcip_core::{ApplicationDefinition, CapabilityDefinition, Effect, ScopeDefinition};
/// use serde_json::json;
///
/// let app = ApplicationDefinition::new("polls", "Polls", "Create and vote on polls.")
///     .scope(ScopeDefinition::new("polls", "Polls", "The poll list."))
///     .capability(
///         CapabilityDefinition::new("polls.list", Effect::Read, "List polls", "Lists every open poll.")
///             .scope("polls")
///             .output_schema(json!({"type": "array", "items": {"type": "string"}})),
///     );
/// assert_eq!(app.capabilities[0].scope_ids, ["polls"]);
/// assert!(rcip_core::validate_definition(&app).is_ok());
/// ```
///
/// Non-exhaustive like [`CapabilityDefinition`]: made with `new` and the builder, or read from
/// JSON; the fields stay public to read and change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct ApplicationDefinition {
    /// The protocol version; must be [`RCIP_PROTOCOL_VERSION`].
    pub protocol_version: String,
    /// Application metadata.
    pub application: ApplicationMetadata,
    /// Semantic scopes, in declaration order.
    #[serde(default)]
    pub scopes: Vec<ScopeDefinition>,
    /// Capabilities, in catalog order.
    #[serde(default)]
    pub capabilities: Vec<CapabilityDefinition>,
}

impl ApplicationDefinition {
    /// Starts a definition for protocol [`RCIP_PROTOCOL_VERSION`] with no scopes or
    /// capabilities.
    #[must_use]
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        ApplicationDefinition {
            protocol_version: RCIP_PROTOCOL_VERSION.to_owned(),
            application: ApplicationMetadata {
                id: id.into(),
                name: name.into(),
                description: description.into(),
                version: None,
            },
            scopes: Vec::new(),
            capabilities: Vec::new(),
        }
    }

    /// Sets the application's own (free-form) version string.
    #[must_use]
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.application.version = Some(version.into());
        self
    }

    /// Adds a scope.
    #[must_use]
    pub fn scope(mut self, scope: ScopeDefinition) -> Self {
        self.scopes.push(scope);
        self
    }

    /// Adds a capability.
    #[must_use]
    pub fn capability(mut self, capability: CapabilityDefinition) -> Self {
        self.capabilities.push(capability);
        self
    }
}

/// Application metadata, published in every snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApplicationMetadata {
    /// The application identifier (identifier grammar).
    pub id: String,
    /// A human-readable name.
    pub name: String,
    /// A human-readable description.
    pub description: String,
    /// The application's own version, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// A semantic scope: a region of the application that can be active.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScopeDefinition {
    /// The scope identifier (identifier grammar, unique among scopes).
    pub id: String,
    /// A human-readable title.
    pub title: String,
    /// A human-readable description.
    pub description: String,
    /// The parent scope, if any. It must be declared, and parents must not form a cycle.
    /// It has no runtime meaning beyond that (relevance does not inherit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
}

impl ScopeDefinition {
    /// A scope with no parent.
    #[must_use]
    pub fn new(
        id: impl Into<String>,
        title: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        ScopeDefinition {
            id: id.into(),
            title: title.into(),
            description: description.into(),
            parent_id: None,
        }
    }

    /// Sets the parent scope.
    #[must_use]
    pub fn parent(mut self, parent_id: impl Into<String>) -> Self {
        self.parent_id = Some(parent_id.into());
        self
    }
}

/// A declared capability: a stable semantic operation with strict input and output schemas.
///
/// [`CapabilityDefinition::new`] takes everything a valid definition cannot do without (id,
/// effect, title, description) and starts with the schemas of an operation that takes an
/// empty object and returns `null`; set real ones with [`input_schema`](Self::input_schema)
/// and [`output_schema`](Self::output_schema).
///
/// Non-exhaustive: outside this crate a definition is made with `new` and the builder (or
/// read from JSON), never with a struct literal, so a field the protocol adds later is not a
/// breaking change. The fields stay public to read (the runtime, the relationship crate and
/// tools read them everywhere) and to change; whether a definition is valid is decided by
/// [`validate_definition`](crate::validate_definition), not by its type, because JSON can
/// hold any shape anyway.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct CapabilityDefinition {
    /// The capability identifier (identifier grammar, unique among capabilities).
    pub id: String,
    /// A human-readable title.
    pub title: String,
    /// A human-readable description; also the default confirmation reason.
    pub description: String,
    /// Semantic scopes; empty means globally relevant.
    #[serde(default)]
    pub scope_ids: Vec<String>,
    /// What invoking it does.
    pub effect: Effect,
    /// Whether invoking it again with the same input has no further effect. The reference
    /// has no such member: rcip writes `"idempotent": true` only when it is declared, so a
    /// definition without it reads and writes as the reference's shape (absent = `false`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub idempotent: bool,
    /// Whether a call may run in the background, as a task its caller polls (MCP's tasks
    /// extension). The reference has no such member: written only when declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long_running: Option<LongRunning>,
    /// The strict JSON Schema (2020-12) of its input; shared, so capabilities with the same
    /// schema can hold one value (see [`Schema`]).
    pub input_schema: Schema,
    /// The strict JSON Schema (2020-12) of its output; shared like the input schema.
    pub output_schema: Schema,
    /// Optional discovery tags (free strings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// Optional provider-neutral usage guidance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<UsageGuidance>,
}

impl CapabilityDefinition {
    /// Starts a capability with its id, effect, title and description (blank texts are
    /// refused by validation), no scopes, the input schema
    /// `{"type": "object", "properties": {}, "additionalProperties": false}` (only the empty
    /// object) and the output schema `{"type": "null"}`.
    ///
    /// ```
    /// use rcip_core::{CapabilityDefinition, Effect};
    /// let capability = CapabilityDefinition::new("polls.close", Effect::Write, "Close a poll", "Stops voting.");
    /// assert_eq!(capability.title, "Close a poll");
    /// ```
    #[must_use]
    pub fn new(
        id: impl Into<String>,
        effect: Effect,
        title: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        CapabilityDefinition {
            id: id.into(),
            title: title.into(),
            description: description.into(),
            scope_ids: Vec::new(),
            effect,
            idempotent: false,
            long_running: None,
            // Shared defaults: a capability that replaces them costs no copy of its own.
            input_schema: Schema::empty_object(),
            output_schema: Schema::null(),
            tags: None,
            usage: None,
        }
    }

    /// Replaces the title.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = title.into();
        self
    }

    /// Replaces the description.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// Adds a scope.
    #[must_use]
    pub fn scope(mut self, scope_id: impl Into<String>) -> Self {
        self.scope_ids.push(scope_id.into());
        self
    }

    /// Declares whether the capability is idempotent: invoking it again with the same input
    /// has no further effect (MCP's `idempotentHint`). Not declared, it is not idempotent.
    ///
    /// ```
    /// use rcip_core::{CapabilityDefinition, Effect};
    /// let close = CapabilityDefinition::new("polls.close", Effect::Write, "Close a poll", "Stops voting.")
    ///     .idempotent(true);
    /// assert!(close.idempotent);
    /// assert_eq!(serde_json::to_value(&close).unwrap()["idempotent"], true);
    /// ```
    #[must_use]
    pub fn idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = idempotent;
        self
    }

    /// Declares the capability long-running: a caller that can wait in the background (an
    /// MCP client with the tasks extension) gets a task to poll rather than holding the call
    /// open; [`LongRunning::Required`] refuses callers that cannot. In process, and for
    /// callers without tasks, a call runs as any other.
    ///
    /// ```
    /// use rcip_core::{CapabilityDefinition, Effect, LongRunning};
    /// let export = CapabilityDefinition::new("reports.build", Effect::Write, "Build a report", "Builds it.")
    ///     .long_running(LongRunning::Optional);
    /// assert_eq!(serde_json::to_value(&export).unwrap()["longRunning"], "optional");
    /// ```
    #[must_use]
    pub fn long_running(mut self, long_running: LongRunning) -> Self {
        self.long_running = Some(long_running);
        self
    }

    /// Sets the input schema: a [`Value`], or a [`Schema`] (or `Arc<Value>`) to share one
    /// value between capabilities.
    ///
    /// ```
    /// use rcip_core::{CapabilityDefinition, Effect, Schema};
    /// use serde_json::json;
    /// let by_id = Schema::from(json!({
    ///     "type": "object",
    ///     "properties": {"id": {"type": "string"}},
    ///     "required": ["id"],
    ///     "additionalProperties": false
    /// }));
    /// let open = CapabilityDefinition::new("polls.open", Effect::Write, "Open a poll", "Starts voting.")
    ///     .input_schema(by_id.clone());
    /// let close = CapabilityDefinition::new("polls.close", Effect::Write, "Close a poll", "Stops voting.")
    ///     .input_schema(by_id);
    /// assert!(Schema::ptr_eq(&open.input_schema, &close.input_schema));
    /// ```
    #[must_use]
    pub fn input_schema(mut self, schema: impl Into<Schema>) -> Self {
        self.input_schema = schema.into();
        self
    }

    /// Sets the output schema: a [`Value`], or a [`Schema`] (or `Arc<Value>`) to share one.
    #[must_use]
    pub fn output_schema(mut self, schema: impl Into<Schema>) -> Self {
        self.output_schema = schema.into();
        self
    }

    /// Adds a discovery tag.
    #[must_use]
    pub fn tag(mut self, tag: impl Into<String>) -> Self {
        self.tags.get_or_insert_with(Vec::new).push(tag.into());
        self
    }

    /// Sets the usage guidance.
    #[must_use]
    pub fn usage(mut self, usage: UsageGuidance) -> Self {
        self.usage = Some(usage);
        self
    }
}

/// Provider-neutral guidance on when to use a capability, with schema-valid examples.
/// It is public discovery metadata: keep it non-sensitive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UsageGuidance {
    /// When a consumer should pick this capability; must not be blank.
    pub when_to_use: String,
    /// Examples; each input must be valid against the capability's input schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub examples: Option<Vec<UsageExample>>,
}

impl UsageGuidance {
    /// Guidance with no examples.
    #[must_use]
    pub fn new(when_to_use: impl Into<String>) -> Self {
        UsageGuidance {
            when_to_use: when_to_use.into(),
            examples: None,
        }
    }

    /// Adds an example.
    #[must_use]
    pub fn example(mut self, description: impl Into<String>, input: Value) -> Self {
        self.examples
            .get_or_insert_with(Vec::new)
            .push(UsageExample {
                description: description.into(),
                input,
            });
        self
    }
}

/// One usage example.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UsageExample {
    /// What the example does; must not be blank.
    pub description: String,
    /// A schema-valid input.
    pub input: Value,
}

/// `skip_serializing_if` for members rcip writes only when `true`.
#[allow(clippy::trivially_copy_pass_by_ref)] // serde passes a reference
pub(crate) fn is_false(value: &bool) -> bool {
    !*value
}

/// How a long-running capability may be called (see
/// [`CapabilityDefinition::long_running`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum LongRunning {
    /// As a task by callers that can wait in the background; inline by the others.
    Optional,
    /// Only as a task: a caller that cannot wait in the background is refused (MCP: the
    /// missing client capability error).
    Required,
}
