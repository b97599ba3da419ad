//! The package model: what a valid `relationship/v1` package says, as plain data.
//!
//! Every text and list is a [`Cow<'static, _>`](std::borrow::Cow): the validator builds owned values from a
//! file, and `rcip-build` writes the same structures as borrowed `static` tables, so the
//! runtime reads a compiled package without parsing anything.

use super::rule::Expr;
pub use super::rule::{List, Text};

/// The protocol identifier a package names in its `protocol` key.
pub const RELATIONSHIP_PROTOCOL: &str = "relationship/v1";

/// A validated `relationship/v1` program package.
#[derive(Debug, Clone, PartialEq)]
pub struct Package {
    /// The namespace (`[a-z][a-z0-9_]*`).
    pub namespace: Text,
    /// The package version (positive).
    pub version: u64,
    /// An optional description.
    pub description: Option<Text>,
    /// The types, sorted by name.
    pub types: List<TypeDef>,
    /// The views, sorted by name.
    pub views: List<View>,
}

impl Package {
    /// The type named `name`.
    #[must_use]
    pub fn type_def(&self, name: &str) -> Option<&TypeDef> {
        self.types.iter().find(|t| t.name == name)
    }

    /// The view named `name`.
    #[must_use]
    pub fn view(&self, name: &str) -> Option<&View> {
        self.views.iter().find(|v| v.name == name)
    }
}

/// Whether a type describes things or links between things.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A record that stands alone (no roles).
    Entity,
    /// A record linking participants through named roles.
    Relationship,
}

impl Kind {
    /// The JSON spelling: `"entity"` or `"relationship"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Entity => "entity",
            Self::Relationship => "relationship",
        }
    }
}

/// A record type.
#[derive(Debug, Clone, PartialEq)]
pub struct TypeDef {
    /// The type name.
    pub name: Text,
    /// Entity or relationship.
    pub kind: Kind,
    /// An optional description.
    pub description: Option<Text>,
    /// The schema of the record's `data`.
    pub schema: DataSchema,
    /// The roles (relationships only), sorted by name.
    pub roles: List<Role>,
    /// The lifecycle, when the type has one.
    pub lifecycle: Option<Lifecycle>,
    /// The commands, sorted by name.
    pub commands: List<Command>,
}

impl TypeDef {
    /// The command named `name`.
    #[must_use]
    pub fn command(&self, name: &str) -> Option<&Command> {
        self.commands.iter().find(|c| c.name == name)
    }

    /// The role named `name`.
    #[must_use]
    pub fn role(&self, name: &str) -> Option<&Role> {
        self.roles.iter().find(|r| r.name == name)
    }
}

/// A schema of the package subset, as normalized JSON text.
///
/// Normalized means: the author's schema with the subset's defaults written out (`maxLength:
/// 4000` on strings and `maxItems: 100` on arrays that did not bound themselves), so whoever
/// validates against it enforces the defaults without knowing them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataSchema {
    /// The normalized schema, compact JSON.
    pub json: Text,
    /// The top-level property names, sorted.
    pub properties: List<Text>,
}

impl DataSchema {
    /// Whether `name` is a declared top-level property.
    #[must_use]
    pub fn declares(&self, name: &str) -> bool {
        self.properties
            .binary_search_by(|p| p.as_ref().cmp(name))
            .is_ok()
    }
}

/// A relationship's role: who may take part, and how many.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Role {
    /// The role name.
    pub name: Text,
    /// The fewest participants.
    pub min: u32,
    /// The most participants (at least 1, at most 100).
    pub max: u32,
    /// The types a participant may have.
    pub types: List<TypeRef>,
}

/// A `namespace/type` reference.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TypeRef {
    /// The namespace.
    pub namespace: Text,
    /// The type name.
    pub name: Text,
}

/// A type's lifecycle: its states and where records start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lifecycle {
    /// The state of a new record.
    pub initial: Text,
    /// Every state, in the package's order.
    pub states: List<Text>,
}

/// A command: a named, guarded change of one record.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    /// The command name.
    pub name: Text,
    /// An optional description.
    pub description: Option<Text>,
    /// The schema of the command's input.
    pub input: DataSchema,
    /// A rule that must evaluate to `true` for the command to run.
    pub guard: Option<Expr>,
    /// The states the command may run in; empty means any.
    pub from: List<Text>,
    /// The state the command moves the record to.
    pub to: Option<Text>,
    /// Fields of `data` to set, each to the value of an expression, sorted by field.
    pub set_data: List<(Text, Expr)>,
    /// Work intents recorded when the command runs.
    pub emit: List<Emit>,
}

/// A `{"kind": "work.requested", "task": ...}` entry: a durable intent, not an execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Emit {
    /// The task name.
    pub task: Text,
}

/// The only emit kind `relationship/v1` defines.
pub const WORK_REQUESTED: &str = "work.requested";

/// A named projection of one type's records.
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    /// The view name.
    pub name: Text,
    /// The type it projects.
    pub type_name: Text,
    /// Which records it shows (`data` and `state` paths only).
    pub filter: Option<Expr>,
    /// The `data` fields it shows.
    pub fields: List<Text>,
}

/// A name that is not a state of a type's lifecycle (the error of a generated state enum's
/// `FromStr`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name:?} is not a state of type `{type_name}`")]
pub struct UnknownState {
    /// The type.
    pub type_name: &'static str,
    /// The name that was given.
    pub name: String,
}

impl UnknownState {
    /// The error for `name` on `type_name`.
    #[must_use]
    pub fn new(type_name: &'static str, name: &str) -> Self {
        Self {
            type_name,
            name: name.to_owned(),
        }
    }
}
