//! [`Schema`]: a JSON Schema held once and shared by every definition, contract and snapshot
//! that carries it.

use std::fmt;
use std::sync::{Arc, LazyLock};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Value, json};

/// An immutable, shared JSON Schema: an `Arc<Value>` that reads as the [`Value`] it holds.
///
/// A catalog of many capabilities typically repeats a few schemas, and schemas are the
/// heaviest part of a capability (a `Value` allocates per object member). Cloning a `Schema`
/// is one reference count, so a definition built from one schema for 10,000 capabilities
/// holds it once, and compiling it (rcip-runtime's `CompiledCatalog`) keeps one copy per
/// distinct schema however many capabilities (and snapshots) hold it.
///
/// It behaves like the value it holds:
/// - it dereferences to [`Value`] (`schema["properties"]`, `schema.get("type")`, `&*schema`);
/// - equality is by content (two schemas built apart are equal when their values are), and a
///   `Schema` compares with a `Value` too;
/// - its JSON (serde, `Display`) and `Debug` are the value's own, so wire formats and digests
///   do not change.
///
/// To change one, [`make_mut`](Self::make_mut) copies it first if it is shared.
///
/// ```
/// use rcip_core::{CapabilityDefinition, Effect, Schema};
/// use serde_json::json;
///
/// let input = Schema::from(json!({"type": "object", "properties": {}, "additionalProperties": false}));
/// let a = CapabilityDefinition::new("notes.a", Effect::Read, "A", "Reads a.").input_schema(input.clone());
/// let b = CapabilityDefinition::new("notes.b", Effect::Read, "B", "Reads b.").input_schema(input.clone());
/// // One value, three holders.
/// assert!(Schema::ptr_eq(&a.input_schema, &b.input_schema));
/// assert_eq!(a.input_schema["type"], "object");
/// assert_eq!(a.input_schema, json!({"type": "object", "properties": {}, "additionalProperties": false}));
/// ```
#[derive(Clone)]
pub struct Schema(Arc<Value>);

impl Schema {
    /// The held value.
    #[must_use]
    pub fn as_value(&self) -> &Value {
        &self.0
    }

    /// The shared handle, e.g. to keep the value beyond the schema.
    #[must_use]
    pub fn as_arc(&self) -> &Arc<Value> {
        &self.0
    }

    /// The value, moved out when this is its only holder and copied otherwise.
    #[must_use]
    pub fn into_value(self) -> Value {
        Arc::unwrap_or_clone(self.0)
    }

    /// The value to change: copied first when it is shared, so no other holder sees the
    /// change (as with [`Arc::make_mut`]).
    ///
    /// ```
    /// use rcip_core::Schema;
    /// use serde_json::json;
    /// let shared = Schema::from(json!({"type": "string"}));
    /// let mut changed = shared.clone();
    /// changed.make_mut()["maxLength"] = json!(80);
    /// assert_eq!(shared, json!({"type": "string"}));
    /// assert_eq!(changed, json!({"type": "string", "maxLength": 80}));
    /// ```
    pub fn make_mut(&mut self) -> &mut Value {
        Arc::make_mut(&mut self.0)
    }

    /// Whether both hold the very same value (not merely an equal one): then comparing them
    /// costs nothing.
    #[must_use]
    pub fn ptr_eq(a: &Schema, b: &Schema) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }

    /// `{"type": "object", "properties": {}, "additionalProperties": false}`: only the empty
    /// object, the input schema a new capability starts with. One value, shared by every
    /// capability that keeps it.
    #[must_use]
    pub(crate) fn empty_object() -> Schema {
        static EMPTY_OBJECT: LazyLock<Schema> = LazyLock::new(|| {
            Schema::from(json!({"type": "object", "properties": {}, "additionalProperties": false}))
        });
        EMPTY_OBJECT.clone()
    }

    /// `{"type": "null"}`, the output schema a new capability starts with; shared like
    /// [`empty_object`](Self::empty_object).
    #[must_use]
    pub(crate) fn null() -> Schema {
        static NULL: LazyLock<Schema> = LazyLock::new(|| Schema::from(json!({"type": "null"})));
        NULL.clone()
    }
}

impl std::ops::Deref for Schema {
    type Target = Value;

    fn deref(&self) -> &Value {
        &self.0
    }
}

impl AsRef<Value> for Schema {
    fn as_ref(&self) -> &Value {
        &self.0
    }
}

impl From<Value> for Schema {
    fn from(value: Value) -> Self {
        Schema(Arc::new(value))
    }
}

impl From<Arc<Value>> for Schema {
    fn from(value: Arc<Value>) -> Self {
        Schema(value)
    }
}

impl From<Schema> for Arc<Value> {
    fn from(schema: Schema) -> Self {
        schema.0
    }
}

impl From<Schema> for Value {
    fn from(schema: Schema) -> Self {
        schema.into_value()
    }
}

impl PartialEq for Schema {
    fn eq(&self, other: &Schema) -> bool {
        Schema::ptr_eq(self, other) || *self.0 == *other.0
    }
}

impl Eq for Schema {}

impl PartialEq<Value> for Schema {
    fn eq(&self, other: &Value) -> bool {
        *self.0 == *other
    }
}

impl PartialEq<Schema> for Value {
    fn eq(&self, other: &Schema) -> bool {
        *self == *other.0
    }
}

// The value's own forms, so a `Schema` field prints, serializes and hashes (export digests)
// exactly as the `Value` field it replaced.
impl fmt::Debug for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl Serialize for Schema {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Schema {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(Schema::from)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn equality_is_by_content() {
        let a = Schema::from(json!({"type": "string"}));
        let b = Schema::from(json!({"type": "string"}));
        assert!(!Schema::ptr_eq(&a, &b));
        assert_eq!(a, b);
        assert_ne!(a, Schema::from(json!({"type": "integer"})));
        assert_eq!(a, json!({"type": "string"}));
        assert_eq!(json!({"type": "string"}), a);
        assert_ne!(a, json!({"type": "integer"}));
    }

    #[test]
    fn forms_are_the_values() {
        let value = json!({"type": "object", "properties": {"a": {"type": "number"}}});
        let schema = Schema::from(value.clone());
        assert_eq!(format!("{schema:?}"), format!("{value:?}"));
        assert_eq!(schema.to_string(), value.to_string());
        assert_eq!(
            serde_json::to_string(&schema).unwrap(),
            serde_json::to_string(&value).unwrap()
        );
        let read: Schema = serde_json::from_str(&value.to_string()).unwrap();
        assert_eq!(read, value);
    }

    #[test]
    fn make_mut_leaves_other_holders_alone() {
        let shared = Schema::from(json!({"type": "string"}));
        let mut own = shared.clone();
        own.make_mut()["minLength"] = json!(1);
        assert_eq!(shared, json!({"type": "string"}));
        assert_eq!(own["minLength"], 1);
        // Alone, it changes in place.
        let before = Arc::as_ptr(own.as_arc());
        own.make_mut()["maxLength"] = json!(2);
        assert_eq!(Arc::as_ptr(own.as_arc()), before);
        assert_eq!(own.into_value()["maxLength"], 2);
    }

    #[test]
    fn the_defaults_are_shared() {
        assert!(Schema::ptr_eq(&Schema::null(), &Schema::null()));
        assert!(Schema::ptr_eq(
            &Schema::empty_object(),
            &Schema::empty_object()
        ));
        assert_eq!(Schema::null(), json!({"type": "null"}));
    }
}
