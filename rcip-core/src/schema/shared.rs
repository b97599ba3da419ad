//! [`Schema`]: a JSON Schema held once and shared by every definition, contract and snapshot
//! that carries it.

use std::collections::HashMap;
use std::fmt;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, LazyLock, Mutex, PoisonError, Weak};

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
/// Schemas are shared by content: [`Schema::from`] a value equal to a live schema's gives
/// that schema's value (the new one is dropped), so a catalog whose capabilities each build
/// the same schema holds it once, and so does everything compiled from it.
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

    /// The live schema equal to this one: this one if it was made by [`Schema::from`] (or
    /// nothing equal lives), another holder's value if this one was changed apart by
    /// [`make_mut`](Self::make_mut) into something equal to it. Compiling a catalog keys its
    /// schemas by the value this returns.
    ///
    /// ```
    /// use rcip_core::Schema;
    /// use serde_json::json;
    /// let plain = Schema::from(json!({"type": "string", "maxLength": 80}));
    /// let mut changed = Schema::from(json!({"type": "string"})).clone();
    /// changed.make_mut()["maxLength"] = json!(80);
    /// assert!(!Schema::ptr_eq(&changed, &plain));
    /// assert!(Schema::ptr_eq(&changed.shared(), &plain));
    /// ```
    #[must_use]
    pub fn shared(&self) -> Schema {
        Schema::from(self.0.clone())
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
    /// The schema of `value`, sharing the value of a live schema equal to it (built apart,
    /// read from JSON, derived again): equal schemas are held once however they were built.
    fn from(value: Value) -> Self {
        Schema(LiveSchemas::share(value, Arc::new))
    }
}

/// The live schemas by a hash of their content, so a schema built apart from an equal one
/// shares its value: an application that builds each capability's schema in a loop (or a
/// catalog read from JSON) holds each distinct schema once, as one built from a shared
/// `Schema` does. The table holds `Weak`s only: it keeps no schema alive, and its dead
/// entries are swept as it grows.
static LIVE: LazyLock<Mutex<LiveSchemas>> = LazyLock::new(Mutex::default);

#[derive(Default)]
struct LiveSchemas {
    by_hash: HashMap<u64, Vec<Weak<Value>>>,
    /// Entries added since the last sweep.
    added: usize,
}

impl LiveSchemas {
    /// The live value equal to `value`, or `value` made one (`into_arc`) and registered. A
    /// value deeper than any schema the checks accept is neither hashed nor compared (both
    /// walk it recursively): it is made one alone, and refused where it is checked.
    fn share<V: std::borrow::Borrow<Value>>(
        value: V,
        into_arc: impl FnOnce(V) -> Arc<Value>,
    ) -> Arc<Value> {
        if crate::depth::exceeds_depth(value.borrow(), crate::depth::MAX_VALUE_DEPTH) {
            return into_arc(value);
        }
        let hash = content_hash(value.borrow());
        let mut live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
        let bucket = live.by_hash.entry(hash).or_default();
        for weak in bucket.iter() {
            if let Some(found) = weak.upgrade()
                && *found == *value.borrow()
            {
                return found;
            }
        }
        bucket.retain(|weak| weak.strong_count() > 0);
        let made = into_arc(value);
        bucket.push(Arc::downgrade(&made));
        live.added += 1;
        // Sweeping costs a pass over the table; doing it when the additions since the last
        // sweep reach the table's size keeps it amortized constant per schema.
        if live.added >= live.by_hash.len().max(64) {
            live.by_hash.retain(|_, bucket| {
                bucket.retain(|weak| weak.strong_count() > 0);
                !bucket.is_empty()
            });
            live.added = 0;
        }
        made
    }
}

/// A hash of `value` consistent with its equality: numbers by their stored kind (`1` and
/// `1.0` are unequal values), object members in any order.
fn content_hash(value: &Value) -> u64 {
    let mut hasher = DefaultHasher::new();
    hash_value(value, &mut hasher);
    hasher.finish()
}

fn hash_value(value: &Value, hasher: &mut DefaultHasher) {
    match value {
        Value::Null => 0u8.hash(hasher),
        Value::Bool(b) => (1u8, *b).hash(hasher),
        Value::Number(n) => {
            2u8.hash(hasher);
            if let Some(u) = n.as_u64() {
                (0u8, u).hash(hasher);
            } else if let Some(i) = n.as_i64() {
                (1u8, i).hash(hasher);
            } else {
                (2u8, n.as_f64().map(f64::to_bits)).hash(hasher);
            }
        }
        Value::String(s) => (3u8, s).hash(hasher),
        Value::Array(items) => {
            (4u8, items.len()).hash(hasher);
            for item in items {
                hash_value(item, hasher);
            }
        }
        Value::Object(members) => {
            // Summed member hashes: the same whatever order the map iterates in.
            let sum = members.iter().fold(0u64, |sum, (key, member)| {
                let mut one = DefaultHasher::new();
                key.hash(&mut one);
                hash_value(member, &mut one);
                sum.wrapping_add(one.finish())
            });
            (5u8, members.len(), sum).hash(hasher);
        }
    }
}

impl From<Arc<Value>> for Schema {
    /// As [`From<Value>`](#impl-From<Value>-for-Schema): a live schema equal to `value`'s,
    /// else `value` itself, registered.
    fn from(value: Arc<Value>) -> Self {
        Schema(LiveSchemas::share(value, |value| value))
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
    fn equal_schemas_built_apart_share_one_value() {
        let build = || {
            json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}},
                             "required": ["n"], "additionalProperties": false})
        };
        let a = Schema::from(build());
        let b = Schema::from(build());
        assert!(Schema::ptr_eq(&a, &b));
        // Read from JSON, in another member order: the same value.
        let read: Schema = serde_json::from_str(
            r#"{"additionalProperties": false, "required": ["n"], "type": "object",
                "properties": {"n": {"minimum": 1, "type": "integer"}}}"#,
        )
        .unwrap();
        assert!(Schema::ptr_eq(&a, &read));
        // Unequal values stay apart: 1 and 1.0 are different numbers to `Value`.
        let float = Schema::from(json!({"type": "integer", "minimum": 1.0}));
        let int = Schema::from(json!({"type": "integer", "minimum": 1}));
        assert!(!Schema::ptr_eq(&float, &int));
        // A changed copy leaves the shared value alone, and is not handed out for it.
        let mut changed = a.clone();
        changed.make_mut()["title"] = json!("N");
        assert!(Schema::ptr_eq(&a, &Schema::from(build())));
        assert!(!Schema::ptr_eq(&changed, &a));
    }

    #[test]
    fn the_table_keeps_nothing_alive() {
        let value =
            json!({"type": "string", "description": "only here: the_table_keeps_nothing_alive"});
        let weak = Arc::downgrade(Schema::from(value.clone()).as_arc());
        assert_eq!(weak.strong_count(), 0, "dropped with its last holder");
        // Built again, it is a new value (the dead entry is not revived).
        let again = Schema::from(value);
        assert_eq!(Arc::strong_count(again.as_arc()), 1);
        // Many short-lived schemas: the sweep keeps the table from growing with them.
        for i in 0..1_000 {
            drop(Schema::from(json!({"const": i})));
        }
        let live = LIVE.lock().unwrap();
        assert!(live.by_hash.len() < 1_000, "{} entries", live.by_hash.len());
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
