//! A package's content identity: its normalized JSON form and the digest of its RFC 8785
//! canonical form. `namespace/version` pins content: two packages with one namespace and
//! version are the same program exactly when their digests are equal.

use serde_json::{Map, Value, json};

use super::model::{Command, Package, TypeDef, View};
use super::rule::{Constant, Expr, Path};
use rcip_core::jcs::{canonical_json, digest_of_canonical};

impl Package {
    /// The package as `relationship/v1` JSON, normalized: what the validator understood
    /// (schemas with their defaults written out, roles' types as `namespace/type`, rules in
    /// their one spelling). Parsing it again gives the same package.
    ///
    /// ```
    /// use rcip_relationship::parse_package;
    /// let text = r#"{"protocol": "relationship/v1", "namespace": "notes", "version": 2,
    ///   "types": {"note": {"kind": "entity", "schema": {"type": "object",
    ///   "properties": {"text": {"type": "string"}}, "required": ["text"],
    ///   "additionalProperties": false}}}}"#;
    /// let package = parse_package(text).unwrap();
    /// let again = parse_package(&package.to_json().to_string()).unwrap();
    /// assert_eq!(again, package);
    /// ```
    #[must_use]
    pub fn to_json(&self) -> Value {
        let mut package = Map::new();
        package.insert("protocol".into(), json!(crate::RELATIONSHIP_PROTOCOL));
        package.insert("namespace".into(), json!(self.namespace));
        package.insert("version".into(), json!(self.version));
        if let Some(description) = &self.description {
            package.insert("description".into(), json!(description));
        }
        let types: Map<String, Value> = self
            .types
            .iter()
            .map(|t| (t.name.to_string(), type_json(t)))
            .collect();
        package.insert("types".into(), Value::Object(types));
        if !self.views.is_empty() {
            let views: Map<String, Value> = self
                .views
                .iter()
                .map(|v| (v.name.to_string(), view_json(v)))
                .collect();
            package.insert("views".into(), Value::Object(views));
        }
        Value::Object(package)
    }

    /// `sha256:` and the unpadded base64url SHA-256 of the RFC 8785 canonical form of
    /// [`to_json`](Self::to_json): equal digests, equal programs.
    ///
    /// ```
    /// use rcip_relationship::parse_package;
    /// let package = |description: &str| parse_package(&format!(r#"{{"protocol": "relationship/v1",
    ///   "namespace": "notes", "version": 1, "description": "{description}", "types": {{"note":
    ///   {{"kind": "entity", "schema": {{"type": "object", "properties": {{}}, "required": [],
    ///   "additionalProperties": false}}}}}}}}"#)).unwrap();
    /// assert_eq!(package("a").digest(), package("a").digest());
    /// assert_ne!(package("a").digest(), package("b").digest());
    /// assert!(package("a").digest().starts_with("sha256:"));
    /// ```
    #[must_use]
    pub fn digest(&self) -> String {
        let value = self.to_json();
        // A valid package nests far less than the canonical form's limit; should one not,
        // its compact text still names its content.
        let canonical = canonical_json(&value).unwrap_or_else(|_| value.to_string());
        digest_of_canonical(&canonical)
    }
}

fn type_json(type_def: &TypeDef) -> Value {
    let mut map = Map::new();
    map.insert("kind".into(), json!(type_def.kind.as_str()));
    if let Some(description) = &type_def.description {
        map.insert("description".into(), json!(description));
    }
    map.insert("schema".into(), schema_json(&type_def.schema.json));
    if !type_def.roles.is_empty() {
        let roles: Map<String, Value> = type_def
            .roles
            .iter()
            .map(|role| {
                let types: Vec<String> = role
                    .types
                    .iter()
                    .map(|t| format!("{}/{}", t.namespace, t.name))
                    .collect();
                let role_json = json!({"min": role.min, "max": role.max, "types": types});
                (role.name.to_string(), role_json)
            })
            .collect();
        map.insert("roles".into(), Value::Object(roles));
    }
    if let Some(lifecycle) = &type_def.lifecycle {
        map.insert(
            "lifecycle".into(),
            json!({"initial": lifecycle.initial, "states": lifecycle.states}),
        );
    }
    if !type_def.commands.is_empty() {
        let commands: Map<String, Value> = type_def
            .commands
            .iter()
            .map(|c| (c.name.to_string(), command_json(c)))
            .collect();
        map.insert("commands".into(), Value::Object(commands));
    }
    Value::Object(map)
}

fn command_json(command: &Command) -> Value {
    let mut map = Map::new();
    if let Some(description) = &command.description {
        map.insert("description".into(), json!(description));
    }
    map.insert("input".into(), schema_json(&command.input.json));
    if let Some(guard) = &command.guard {
        map.insert("guard".into(), expr_json(guard));
    }
    if !command.from.is_empty() {
        map.insert("from".into(), json!(command.from));
    }
    if let Some(to) = &command.to {
        map.insert("to".into(), json!(to));
    }
    if !command.set_data.is_empty() {
        let set: Map<String, Value> = command
            .set_data
            .iter()
            .map(|(field, expr)| (field.to_string(), expr_json(expr)))
            .collect();
        map.insert("set_data".into(), Value::Object(set));
    }
    if !command.emit.is_empty() {
        let emit: Vec<Value> = command
            .emit
            .iter()
            .map(|e| json!({"kind": crate::WORK_REQUESTED, "task": e.task}))
            .collect();
        map.insert("emit".into(), Value::Array(emit));
    }
    Value::Object(map)
}

fn view_json(view: &View) -> Value {
    let mut map = Map::new();
    map.insert("type".into(), json!(view.type_name));
    if let Some(filter) = &view.filter {
        map.insert("where".into(), expr_json(filter));
    }
    map.insert("fields".into(), json!(view.fields));
    Value::Object(map)
}

/// A normalized schema is compact JSON the validator wrote; should it not parse, its text
/// stands for it (the digest still changes with it).
fn schema_json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

fn path_text(path: &Path) -> String {
    let mut text = path.root.as_str().to_owned();
    for segment in path.segments.iter() {
        text.push('.');
        text.push_str(segment);
    }
    text
}

fn expr_json(expr: &Expr) -> Value {
    let list = |items: &[Expr]| Value::Array(items.iter().map(expr_json).collect());
    match expr {
        Expr::Path(path) => json!({"path": path_text(path)}),
        Expr::Present(path) => json!({"present": path_text(path)}),
        Expr::All(items) => json!({"all": list(items)}),
        Expr::Any(items) => json!({"any": list(items)}),
        Expr::Not(items) => json!({"not": items.first().map_or(Value::Null, expr_json)}),
        Expr::Compare(comparison, items) => {
            let mut map = Map::new();
            map.insert(comparison.as_str().to_owned(), list(items));
            Value::Object(map)
        }
        Expr::Const(constant) => constant_json(constant),
    }
}

fn constant_json(constant: &Constant) -> Value {
    match constant {
        Constant::Null => Value::Null,
        Constant::Bool(b) => Value::Bool(*b),
        Constant::Int(i) => json!(i),
        Constant::UInt(u) => json!(u),
        Constant::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
        Constant::Str(s) => json!(s),
        Constant::Array(items) => Value::Array(items.iter().map(constant_json).collect()),
    }
}
