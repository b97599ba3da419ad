//! What the package validator reports: a JSON Pointer, a stable code and a message.

use std::fmt;
use std::path::PathBuf;

/// One problem found in a package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// JSON Pointer (RFC 6901) to the offending value; `""` is the whole document.
    pub pointer: String,
    /// What kind of problem it is.
    pub code: ProblemCode,
    /// What was found and what was expected.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pointer.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.pointer, self.message)
        }
    }
}

/// Every problem of one package file.
///
/// Its `Display` is one line per problem, `file: pointer: message`, as `rcip check` and a
/// failing `cargo build` print them:
///
/// ```text
/// programs/polls.json: /types/poll/commands/close/to: unknown state "archived" (declared: open, closed)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct PackageError {
    /// The file, when the package came from one.
    pub file: Option<PathBuf>,
    /// The problems, in document order (at least one).
    pub problems: Vec<Problem>,
}

impl fmt::Display for PackageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, problem) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            if let Some(file) = &self.file {
                write!(f, "{}: ", file.display())?;
            }
            write!(f, "{problem}")?;
        }
        Ok(())
    }
}

impl PackageError {
    /// The same problems, attributed to `file`.
    #[must_use]
    pub fn in_file(mut self, file: impl Into<PathBuf>) -> Self {
        self.file = Some(file.into());
        self
    }
}

macro_rules! codes {
    ($($(#[$doc:meta])* $variant:ident = $code:literal,)*) => {
        /// The stable code of a [`Problem`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ProblemCode {
            $($(#[$doc])* $variant,)*
        }

        impl ProblemCode {
            /// Every code.
            pub const ALL: &'static [Self] = &[$(Self::$variant,)*];

            /// The code's stable SCREAMING_SNAKE_CASE spelling.
            #[must_use]
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $code,)*
                }
            }
        }
    };
}

codes! {
    /// The text is not JSON.
    InvalidJson = "INVALID_JSON",
    /// The file is larger than a package may be.
    PackageTooLarge = "PACKAGE_TOO_LARGE",
    /// A package value (built in memory) nests more than `MAX_PACKAGE_DEPTH` arrays and
    /// objects.
    PackageTooDeep = "PACKAGE_TOO_DEEP",
    /// The last problem of a list cut at `MAX_PACKAGE_PROBLEMS`: there were more.
    TooManyProblems = "TOO_MANY_PROBLEMS",
    /// A value has the wrong JSON type (an object expected, a string, an integer...).
    WrongType = "WRONG_TYPE",
    /// A key the form does not define.
    UnknownKey = "UNKNOWN_KEY",
    /// A required key is missing.
    MissingKey = "MISSING_KEY",
    /// `protocol` is not `"relationship/v1"`.
    WrongProtocol = "WRONG_PROTOCOL",
    /// A name breaks `[a-z][a-z0-9_]*` or is longer than 64 bytes.
    InvalidName = "INVALID_NAME",
    /// A name has no RCIP identifier form (`a__b`, a trailing `_`).
    UnmappableName = "UNMAPPABLE_NAME",
    /// Two names map to the same generated identifier.
    NameCollision = "NAME_COLLISION",
    /// A command named like a record operation (`get`, `create`...), whose capability id
    /// every type already has, or a view named `changes` (the package's feed).
    ReservedName = "RESERVED_NAME",
    /// `version` is not a positive integer.
    InvalidVersion = "INVALID_VERSION",
    /// A list or map that must not be empty is.
    Empty = "EMPTY",
    /// A list holds the same name twice; or two packages of a set take one namespace form.
    Duplicate = "DUPLICATE",
    /// Two packages of a set give one `namespace/version` different contents.
    VersionConflict = "VERSION_CONFLICT",
    /// A list holds more entries than allowed.
    TooMany = "TOO_MANY",
    /// `kind` is neither `entity` nor `relationship`.
    InvalidKind = "INVALID_KIND",
    /// A relationship without roles.
    RolesRequired = "ROLES_REQUIRED",
    /// An entity with roles.
    RolesNotAllowed = "ROLES_NOT_ALLOWED",
    /// A role's `min`/`max` are out of bounds.
    RoleBounds = "ROLE_BOUNDS",
    /// A role target is not `namespace/type`.
    InvalidTarget = "INVALID_TARGET",
    /// A type name that the package does not declare.
    UnknownType = "UNKNOWN_TYPE",
    /// A state name that the lifecycle does not declare.
    UnknownState = "UNKNOWN_STATE",
    /// `from`/`to` on a type without a lifecycle.
    LifecycleRequired = "LIFECYCLE_REQUIRED",
    /// A field that the type's schema does not declare.
    UnknownField = "UNKNOWN_FIELD",
    /// An emit entry of another kind than `work.requested`.
    UnknownEmitKind = "UNKNOWN_EMIT_KIND",
    /// A schema keyword outside the subset.
    SchemaKeyword = "SCHEMA_KEYWORD",
    /// A schema's `type` is missing, a list, or not one of the seven.
    SchemaType = "SCHEMA_TYPE",
    /// A keyword that does not apply to the schema's type (e.g. `minLength` on an integer).
    SchemaKeywordForType = "SCHEMA_KEYWORD_FOR_TYPE",
    /// An object schema without `properties`, `required` or `additionalProperties: false`,
    /// or an array schema without `items`.
    SchemaIncomplete = "SCHEMA_INCOMPLETE",
    /// A `required` name that `properties` does not declare.
    SchemaRequiredUndeclared = "SCHEMA_REQUIRED_UNDECLARED",
    /// A `format` other than `date-time`.
    SchemaFormat = "SCHEMA_FORMAT",
    /// A bound that is negative, not an integer, or below its lower bound.
    SchemaBound = "SCHEMA_BOUND",
    /// An `enum` value that does not match the schema's type.
    SchemaEnum = "SCHEMA_ENUM",
    /// Schemas nested deeper than 10 levels.
    SchemaTooDeep = "SCHEMA_TOO_DEEP",
    /// A type's or an input's schema is not an object schema.
    SchemaNotObject = "SCHEMA_NOT_OBJECT",
    /// An expression map without exactly one operator, or with an unknown one.
    RuleOperator = "RULE_OPERATOR",
    /// An operator with the wrong number of operands.
    RuleArity = "RULE_ARITY",
    /// A path that is not `data`/`input`/`state` plus at most 7 components.
    RulePath = "RULE_PATH",
    /// A path root that is not available here (`input` in a view).
    RuleRoot = "RULE_ROOT",
    /// An object used as a constant.
    RuleObjectConstant = "RULE_OBJECT_CONSTANT",
    /// Expressions nested deeper than 10 levels.
    RuleTooDeep = "RULE_TOO_DEEP",
}

impl fmt::Display for ProblemCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
