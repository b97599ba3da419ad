//! What a `#[capability]` function's signature may use, by trait rather than by name: the
//! return type ([`IntoCapabilityOutput`]), the extra parameters ([`FromInvocation`]), and the
//! input of a capability that takes none ([`NoInput`]).

use std::error::Error as StdError;

use schemars::JsonSchema;
use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde::{Serialize, Serializer};

use crate::binding::{CancellationSignal, HandlerError, InvocationContext};
use crate::extensions::Principal;

/// A type a capability function may return: a plain output (`FALLIBLE = false`, any
/// `T: Serialize + JsonSchema`) or a `Result<T, E>` (`FALLIBLE = true`) whose error becomes a
/// handler failure ([`HandlerError`] keeps its kind; anything else that converts into
/// `Box<dyn Error + Send + Sync>`, such as `std::io::Error`, `anyhow::Error` or a boxed
/// error, becomes [`HandlerErrorKind::Failed`](crate::HandlerErrorKind::Failed)).
///
/// The const parameter exists because the two cases overlap for the coherence checker: a
/// blanket impl for every `T: Serialize + JsonSchema` would also cover `Result<T, E>`
/// (serde and schemars implement both traits for `Result`), and Rust has no negative
/// reasoning to exclude it. So each case is its own impl, told apart by `FALLIBLE`, and
/// `#[capability]` computes `FALLIBLE` from the return type's *type* (is it a `Result` once
/// aliases are resolved?) with a probe, never from its spelling: `io::Result<T>`,
/// `anyhow::Result<T>` and `type Res<T> = Result<T, HandlerError>` all work. A `Result` return
/// is therefore always a success or a failure, never an output that serializes as a
/// `Result`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a capability's return type",
    label = "not a capability output",
    note = "return `T: Serialize + JsonSchema`, or `Result<T, E>` whose `E` converts into `Box<dyn Error + Send + Sync>` (e.g. `HandlerError`, `std::io::Error`, `anyhow::Error`)"
)]
pub trait IntoCapabilityOutput<const FALLIBLE: bool> {
    /// The output the capability's output schema is derived from.
    type Output: Serialize + JsonSchema + Send + 'static;

    /// The handler's result.
    ///
    /// # Errors
    ///
    /// The function's own error, as a [`HandlerError`].
    fn into_output(self) -> Result<Self::Output, HandlerError>;
}

impl<T> IntoCapabilityOutput<false> for T
where
    T: Serialize + JsonSchema + Send + 'static,
{
    type Output = T;

    fn into_output(self) -> Result<T, HandlerError> {
        Ok(self)
    }
}

impl<T, E> IntoCapabilityOutput<true> for Result<T, E>
where
    T: Serialize + JsonSchema + Send + 'static,
    E: Into<Box<dyn StdError + Send + Sync>>,
{
    type Output = T;

    fn into_output(self) -> Result<T, HandlerError> {
        // One conversion for every error type: boxing, then a downcast that gives a
        // `HandlerError` back its kind.
        self.map_err(|error| match error.into().downcast::<HandlerError>() {
            Ok(handler_error) => *handler_error,
            Err(other) => HandlerError::failed(other),
        })
    }
}

/// A value a capability function takes from its invocation rather than from its input: an
/// *extractor*. After the state and the input, every parameter of a `#[capability]` function
/// is one, in any order; the macro calls [`from_invocation`](Self::from_invocation) for each.
///
/// | type | what it is | fails |
/// | --- | --- | --- |
/// | [`InvocationContext`] | the whole context | never |
/// | [`CancellationSignal`] | the caller's cancellation | never |
/// | [`Principal`](crate::Principal) | the authenticated caller | when none was set: see [`PRINCIPAL_REQUIRED`] |
/// | `Option<Principal>` | the caller, if any | never |
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an invocation extractor",
    label = "not an extractor",
    note = "a capability takes `[state,] [input,]` first, then only extractors (`FromInvocation`): `InvocationContext`, `CancellationSignal`, `Principal`, `Option<Principal>`"
)]
pub trait FromInvocation: Sized {
    /// The value for one call.
    ///
    /// # Errors
    ///
    /// A [`HandlerError`] that fails the invocation before the function runs.
    fn from_invocation(context: &InvocationContext) -> Result<Self, HandlerError>;
}

impl FromInvocation for InvocationContext {
    fn from_invocation(context: &InvocationContext) -> Result<Self, HandlerError> {
        Ok(context.clone())
    }
}

impl FromInvocation for CancellationSignal {
    fn from_invocation(context: &InvocationContext) -> Result<Self, HandlerError> {
        Ok(context.cancellation().clone())
    }
}

/// Refuses an invocation without a principal, with the public failure
/// [`PRINCIPAL_REQUIRED`]: the consumer learns that it must authenticate, and the function
/// never runs with a caller it cannot name.
impl FromInvocation for Principal {
    fn from_invocation(context: &InvocationContext) -> Result<Self, HandlerError> {
        context.principal().cloned().ok_or_else(|| {
            HandlerError::public(
                PRINCIPAL_REQUIRED,
                "this capability needs an authenticated caller",
                Vec::new(),
            )
        })
    }
}

impl FromInvocation for Option<Principal> {
    fn from_invocation(context: &InvocationContext) -> Result<Self, HandlerError> {
        Ok(context.principal().cloned())
    }
}

/// The public failure code of a capability that takes a
/// [`Principal`](crate::Principal) invoked without one: the outcome is `EXECUTION_FAILED`
/// with the message `"PRINCIPAL_REQUIRED: this capability needs an authenticated caller"`.
pub const PRINCIPAL_REQUIRED: &str = "PRINCIPAL_REQUIRED";

/// The input of a capability that takes none: the empty strict object. It deserializes
/// from `{}` only (any member is refused) and its schema is
/// `{"type": "object", "properties": {}, "additionalProperties": false}`. `#[capability]`
/// uses it for a function without an input parameter; invoke such a capability with `{}`
/// (or `invoke_typed::<C>(&NoInput)`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct NoInput;

impl Serialize for NoInput {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_struct("NoInput", 0).and_then(|s| {
            use serde::ser::SerializeStruct;
            s.end()
        })
    }
}

impl<'de> Deserialize<'de> for NoInput {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Empty;
        impl<'de> Visitor<'de> for Empty {
            type Value = NoInput;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an empty object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<NoInput, A::Error> {
                match map.next_key::<String>()? {
                    None => Ok(NoInput),
                    Some(key) => Err(de::Error::unknown_field(&key, &[])),
                }
            }
        }
        deserializer.deserialize_struct("NoInput", &[], Empty)
    }
}

impl JsonSchema for NoInput {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NoInput".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "object",
            "properties": {},
            "additionalProperties": false
        })
    }
}
