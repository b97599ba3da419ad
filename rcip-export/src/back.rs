//! The way back: the side table a transform leaves, and the walk that applies it to a
//! provider's arguments. It never validates; the runtime validates the result against the
//! capability's own schema.

use serde_json::{Map, Value};

/// What to undo at one schema node (empty parts do nothing).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Back {
    /// Properties with something to undo.
    pub(crate) props: Vec<PropBack>,
    /// What to undo in every array item.
    pub(crate) items: Option<Box<Back>>,
    /// `anyOf` branches, each with what identifies a value of it.
    pub(crate) union: Vec<Branch>,
    /// Enum values sent as strings, and the original values.
    pub(crate) enum_values: Vec<(String, Value)>,
    /// A map sent as a list of `{"key", "value"}` entries, and what to undo in each value.
    pub(crate) entries: Option<Box<Back>>,
    /// A tuple sent as an object of its items: the item names, in order.
    pub(crate) tuple: Option<Vec<String>>,
}

/// One property's way back.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PropBack {
    /// The name the profile uses.
    pub(crate) wire: String,
    /// The capability's own name.
    pub(crate) original: String,
    /// The property is optional in the capability's schema and the profile made it required
    /// (OpenAI): a `null` stands for absent.
    pub(crate) null_is_absent: bool,
    /// What to undo in its value.
    pub(crate) inner: Back,
}

/// One `anyOf` branch of the profile's schema.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Branch {
    pub(crate) matcher: Matcher,
    pub(crate) back: Back,
}

/// What a value of a branch looks like, read off the branch's profile schema: its JSON
/// types, its enum values, and for closed objects the property names, the required ones and
/// the single-valued (tag) properties.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Matcher {
    types: Option<Vec<String>>,
    nullable: bool,
    values: Option<Vec<Value>>,
    keys: Option<Vec<String>>,
    required: Vec<String>,
    tags: Vec<(String, Value)>,
}

impl Back {
    pub(crate) fn is_same(&self) -> bool {
        self.props.is_empty()
            && self.items.is_none()
            && self.union.is_empty()
            && self.enum_values.is_empty()
            && self.entries.is_none()
            && self.tuple.is_none()
    }

    /// Applies the side table to `value`.
    pub(crate) fn restore(&self, value: Value) -> Value {
        if self.is_same() {
            return value;
        }
        let value = match value {
            Value::String(s) if !self.enum_values.is_empty() => {
                match self.enum_values.iter().find(|(wire, _)| *wire == s) {
                    Some((_, original)) => original.clone(),
                    None => Value::String(s),
                }
            }
            Value::Object(map) if self.tuple.is_some() => {
                let map = self.restore_object(map);
                object_to_tuple(map, self.tuple.as_deref().unwrap_or_default())
            }
            Value::Object(map) if !self.props.is_empty() => Value::Object(self.restore_object(map)),
            Value::Array(items) if self.entries.is_some() => {
                entries_to_map(items, self.entries.as_deref())
            }
            Value::Array(items) => match &self.items {
                Some(back) => {
                    Value::Array(items.into_iter().map(|item| back.restore(item)).collect())
                }
                None => Value::Array(items),
            },
            other => other,
        };
        match self
            .union
            .iter()
            .find(|branch| branch.matcher.matches(&value))
        {
            Some(branch) => branch.back.restore(value),
            None => value,
        }
    }

    fn restore_object(&self, mut map: Map<String, Value>) -> Map<String, Value> {
        let mut restored = Map::new();
        for prop in &self.props {
            let Some(value) = map.remove(&prop.wire) else {
                continue;
            };
            if value.is_null() && prop.null_is_absent {
                continue;
            }
            restored.insert(prop.original.clone(), prop.inner.restore(value));
        }
        for (key, value) in map {
            restored.entry(key).or_insert(value);
        }
        restored
    }
}

/// An object of a tuple's items as the array of them in `names` order; anything else (an
/// item missing, another member) stays the object it was, for the runtime to refuse.
fn object_to_tuple(mut map: Map<String, Value>, names: &[String]) -> Value {
    if map.len() != names.len() || !names.iter().all(|name| map.contains_key(name)) {
        return Value::Object(map);
    }
    Value::Array(names.iter().filter_map(|name| map.remove(name)).collect())
}

/// A list of `{"key": k, "value": v}` entries as the map `{k: v}`; anything else (an entry of
/// another shape, a key twice) stays the array it was, for the runtime to refuse.
fn entries_to_map(items: Vec<Value>, back: Option<&Back>) -> Value {
    let mut map = Map::new();
    for item in &items {
        let Value::Object(entry) = item else {
            return Value::Array(items);
        };
        let (Some(Value::String(key)), Some(value), 2) =
            (entry.get("key"), entry.get("value"), entry.len())
        else {
            return Value::Array(items);
        };
        if map.contains_key(key) {
            return Value::Array(items);
        }
        let value = match back {
            Some(back) => back.restore(value.clone()),
            None => value.clone(),
        };
        map.insert(key.clone(), value);
    }
    Value::Object(map)
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

impl Matcher {
    /// The matcher of a branch's profile schema.
    pub(crate) fn of(schema: &Value) -> Matcher {
        let mut matcher = Matcher::default();
        let Value::Object(node) = schema else {
            return matcher;
        };
        matcher.types = match node.get("type") {
            Some(Value::String(t)) => Some(vec![t.to_ascii_lowercase()]),
            Some(Value::Array(ts)) => Some(
                ts.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_ascii_lowercase)
                    .collect(),
            ),
            _ => None,
        };
        if node.get("format") == Some(&Value::String("enum".to_owned())) {
            // Gemini's integer enums travel as strings: the values decide.
            matcher.types = None;
        }
        matcher.nullable = node.get("nullable") == Some(&Value::Bool(true));
        matcher.values = match (node.get("enum"), node.get("const")) {
            (Some(Value::Array(values)), _) => Some(values.clone()),
            (_, Some(value)) => Some(vec![value.clone()]),
            _ => None,
        };
        if let Some(Value::Object(props)) = node.get("properties") {
            let open = matches!(
                node.get("additionalProperties"),
                Some(Value::Object(_) | Value::Bool(true))
            );
            if !open {
                matcher.keys = Some(props.keys().cloned().collect());
            }
            for (name, prop) in props {
                let single = match (prop.get("enum"), prop.get("const")) {
                    (Some(Value::Array(values)), _) if values.len() == 1 => values.first(),
                    (_, Some(value)) => Some(value),
                    _ => None,
                };
                if let Some(tag) = single {
                    matcher.tags.push((name.clone(), tag.clone()));
                }
            }
        }
        if let Some(Value::Array(required)) = node.get("required") {
            matcher.required = required
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect();
        }
        matcher
    }

    fn matches(&self, value: &Value) -> bool {
        if value.is_null() && self.nullable {
            return true;
        }
        if let Some(types) = &self.types {
            let t = json_type(value);
            let ok = types
                .iter()
                .any(|allowed| allowed == t || (allowed == "number" && t == "integer"));
            if !ok {
                return false;
            }
        }
        if let Some(values) = &self.values
            && !values.contains(value)
        {
            return false;
        }
        if let Value::Object(map) = value {
            if let Some(keys) = &self.keys
                && map.keys().any(|key| !keys.contains(key))
            {
                return false;
            }
            if self.required.iter().any(|key| !map.contains_key(key)) {
                return false;
            }
            for (name, tag) in &self.tags {
                if map.get(name).is_some_and(|value| value != tag) {
                    return false;
                }
            }
        }
        true
    }
}
