//! `GET /`: the explorer, a read-only page of the operation registry and the program
//! versions every workspace sees, rendered on the server from the same data the transports
//! are generated from.
//!
//! It is public, as the OpenAPI document is: it shows the registry, the installed versions
//! and the bundled examples, never anything of a workspace (its own versions, records or
//! members), so it asks for no credential. It has no form and runs no script, and its
//! `Content-Security-Policy` forbids both (and any other fetch), so nothing can be written
//! from it even if some text escaped the escaping; every text on it is HTML-escaped, since a
//! package's descriptions and names are anyone's who may install one.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::response::Response;
use http::{HeaderValue, StatusCode, header};
use rcip_platform::{Agents, OperationSpec, ProgramVersion, example_packages, operations};
use serde_json::Value;

use crate::shared::Shared;

/// The page's policy: no script, no fetch, no frame, no form target, no plugin; the inline
/// `<style>` only.
pub(crate) const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; \
     base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// How deep nested properties are listed in a schema's table (deeper ones are in the raw
/// schema below it).
const TABLE_DEPTH: usize = 3;

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:72rem;\
padding:0 1rem;line-height:1.4;color:#1a1a1a}code,pre{font-family:ui-monospace,monospace;\
font-size:.9em}pre{background:#f4f4f4;padding:.75rem;overflow:auto;max-height:30rem}\
table{border-collapse:collapse;margin:.5rem 0 1rem;width:100%}th,td{border:1px solid #ccc;\
padding:.25rem .5rem;text-align:left;vertical-align:top}th{background:#eee}\
section.operation,section.program{border-top:1px solid #bbb;padding-top:.5rem;margin-top:1.5rem}\
.tag{display:inline-block;border:1px solid #888;border-radius:3px;padding:0 .3rem;\
margin-right:.3rem;font-size:.85em}";

/// `GET /`.
pub(crate) async fn page(State(shared): State<Arc<Shared>>) -> Response {
    let installed = shared.directory.installed_versions().await;
    let status = if installed.is_ok() {
        StatusCode::OK
    } else {
        StatusCode::INTERNAL_SERVER_ERROR
    };
    if let Err(error) = &installed {
        tracing::error!(target: "rcip::server", %error, "the explorer could not read the installed versions");
    }
    let html = render(&shared.base_url, installed.as_deref().ok());
    let mut response = Response::new(Body::from(html));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    // Installed versions change when an instance starts with other packages.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// `text` escaped for HTML text and attribute values (quoted with `"`).
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// The whole page; `installed` is `None` when the directory could not be read.
fn render(base_url: &str, installed: Option<&[ProgramVersion]>) -> String {
    let mut html = String::with_capacity(256 * 1024);
    let base = escape(base_url);
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>rcip explorer</title><style>{STYLE}</style></head><body>\n\
         <h1>rcip Relationship Protocol platform</h1>\n\
         <p>A read-only view of the operations this server answers and the program versions \
         every workspace sees. Every operation is called with <code>POST {base}/v1/operations</code> \
         and <code>{{\"operation\", \"arguments\"}}</code> (a bearer token), or as an MCP tool at \
         <code>{base}/mcp</code>. The OpenAPI document: \
         <a href=\"{base}/v1/openapi.json\">{base}/v1/openapi.json</a>.</p>\n"
    );
    html.push_str("<nav><a href=\"#operations\">Operations</a> · <a href=\"#installed\">Installed versions</a> · <a href=\"#examples\">Bundled examples</a></nav>\n");
    render_operations(&mut html);
    render_programs(&mut html, installed);
    html.push_str("</body></html>\n");
    html
}

fn agents_label(agents: Agents) -> &'static str {
    match agents {
        Agents::Allowed => "agents allowed",
        Agents::ConsoleOnly => "console only",
        Agents::AgentMembersOnly => "agents: agent members only",
    }
}

fn render_operations(html: &mut String) {
    let specs = operations();
    let _ = write!(
        html,
        "<h2 id=\"operations\">Operations ({})</h2>\n<table class=\"operations\"><thead><tr>\
         <th>operation</th><th>summary</th><th>scope an agent needs</th><th>who</th>\
         <th>kind</th></tr></thead><tbody>\n",
        specs.len()
    );
    for spec in specs {
        let name = escape(spec.name);
        let _ = writeln!(
            html,
            "<tr><td><a href=\"#op-{name}\"><code>{name}</code></a></td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td></tr>",
            escape(spec.summary),
            scope_label(spec),
            agents_label(spec.agents),
            kind_label(spec),
        );
    }
    html.push_str("</tbody></table>\n");
    for spec in specs {
        render_operation(html, spec);
    }
}

fn scope_label(spec: &OperationSpec) -> String {
    spec.scope.map_or_else(
        || "none (membership)".to_owned(),
        |scope| format!("<code>{}</code>", escape(scope.as_str())),
    )
}

fn kind_label(spec: &OperationSpec) -> String {
    if spec.is_mutation() {
        format!("mutation ({})", escape(spec.effect.as_str()))
    } else {
        "read".to_owned()
    }
}

fn render_operation(html: &mut String, spec: &OperationSpec) {
    let name = escape(spec.name);
    let _ = write!(
        html,
        "<section class=\"operation\" id=\"op-{name}\" data-operation=\"{name}\">\
         <h3><code>{name}</code></h3>\n<p>{}</p>\n<p><span class=\"tag\">{}</span>\
         <span class=\"tag\">{}</span><span class=\"tag\">scope: {}</span>\
         <span class=\"tag\">MCP tool <code>{}</code></span>{}</p>\n",
        escape(spec.summary),
        kind_label(spec),
        agents_label(spec.agents),
        scope_label(spec),
        escape(&spec.tool_name()),
        if spec.in_workspace {
            "<span class=\"tag\">in a workspace (members only)</span>"
        } else {
            ""
        },
    );
    render_schema(html, "Input", &spec.input);
    render_schema(html, "Output", &spec.output);
    html.push_str("</section>\n");
}

/// A schema as a table of its properties (nested ones as `parent.child`, array items as
/// `parent[]`), then the raw schema.
fn render_schema(html: &mut String, title: &str, schema: &Value) {
    let _ = writeln!(html, "<h4>{}</h4>", escape(title));
    let mut rows = String::new();
    property_rows(&mut rows, "", schema, 0);
    if rows.is_empty() {
        let _ = writeln!(html, "<p>{}</p>", escape(&type_label(schema)));
    } else {
        html.push_str(
            "<table class=\"schema\"><thead><tr><th>property</th><th>type</th>\
             <th>required</th><th>description</th></tr></thead><tbody>\n",
        );
        html.push_str(&rows);
        html.push_str("</tbody></table>\n");
    }
    let raw = serde_json::to_string_pretty(schema).unwrap_or_default();
    let _ = writeln!(
        html,
        "<details><summary>{} schema (JSON)</summary><pre>{}</pre></details>",
        escape(title),
        escape(&raw)
    );
}

fn property_rows(rows: &mut String, prefix: &str, schema: &Value, depth: usize) {
    if depth >= TABLE_DEPTH {
        return;
    }
    if let Some(items) = schema.get("items")
        && schema.get("properties").is_none()
        && depth > 0
    {
        property_rows(rows, &format!("{prefix}[]"), items, depth);
        return;
    }
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for (name, property) in properties {
        let path = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}.{name}")
        };
        let _ = writeln!(
            rows,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&path),
            escape(&type_label(property)),
            if required.contains(&name.as_str()) {
                "yes"
            } else {
                "no"
            },
            escape(
                property
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or("")
            ),
        );
        property_rows(rows, &path, property, depth + 1);
    }
}

/// What a schema accepts, in a few words: its type(s), format, constant or values, items,
/// and the bounds that matter to a caller.
fn type_label(schema: &Value) -> String {
    let Some(object) = schema.as_object() else {
        return if schema == &Value::Bool(true) {
            "anything".to_owned()
        } else {
            "nothing".to_owned()
        };
    };
    if let Some(constant) = object.get("const") {
        return format!("= {constant}");
    }
    if let Some(values) = object.get("enum").and_then(Value::as_array) {
        let values: Vec<String> = values.iter().map(Value::to_string).collect();
        return format!("one of {}", values.join(", "));
    }
    if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
        return format!("see {reference}");
    }
    for keyword in ["oneOf", "anyOf"] {
        if let Some(branches) = object.get(keyword).and_then(Value::as_array) {
            let labels: Vec<String> = branches.iter().map(type_label).collect();
            return labels.join(" | ");
        }
    }
    let mut label = match object.get("type") {
        Some(Value::String(kind)) => kind.clone(),
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" | "),
        _ => "any".to_owned(),
    };
    if let Some(format) = object.get("format").and_then(Value::as_str) {
        let _ = write!(label, " ({format})");
    }
    if let Some(items) = object.get("items") {
        let _ = write!(label, " of {}", type_label(items));
    }
    if let Some(values) = object.get("additionalProperties").filter(|v| v.is_object()) {
        let _ = write!(label, " of {} by key", type_label(values));
    }
    let bounds: Vec<String> = [
        ("minLength", "length ≥"),
        ("maxLength", "length ≤"),
        ("minimum", "≥"),
        ("maximum", "≤"),
        ("maxItems", "items ≤"),
        ("pattern", "matching"),
    ]
    .iter()
    .filter_map(|(keyword, words)| {
        object.get(*keyword).map(|bound| match bound {
            Value::String(text) => format!("{words} {text}"),
            other => format!("{words} {other}"),
        })
    })
    .collect();
    if !bounds.is_empty() {
        let _ = write!(label, "; {}", bounds.join(", "));
    }
    label
}

fn render_programs(html: &mut String, installed: Option<&[ProgramVersion]>) {
    html.push_str("<h2 id=\"installed\">Installed versions</h2>\n<p>Installed when an instance started (compiled in or from its programs folder): every workspace sees them, and can use them without activating anything. A workspace's own activated versions are not shown here.</p>\n");
    match installed {
        None => html.push_str(
            "<p class=\"failure\">The installed versions could not be read (the store failed).</p>\n",
        ),
        Some([]) => html.push_str("<p>None.</p>\n"),
        Some(versions) => {
            for version in versions {
                let by = format!(
                    "installed by {}",
                    escape(&version.activated_by)
                );
                render_package(
                    html,
                    "installed",
                    &version.namespace,
                    version.version,
                    &version.digest,
                    &by,
                    &version.package,
                );
            }
        }
    }
    html.push_str("<h2 id=\"examples\">Bundled examples</h2>\n<p>The packages <code>examples.list</code> answers, ready to activate in a workspace with <code>program.activate</code>.</p>\n");
    for example in example_packages() {
        let note = format!("example <code>{}</code>", escape(example.name));
        render_package(
            html,
            "example",
            &example.namespace,
            example.version,
            &example.digest,
            &note,
            &example.package,
        );
    }
}

/// One package: its identity, then each record type with its kind, states, commands and
/// roles, and the package itself. `note` is HTML already.
fn render_package(
    html: &mut String,
    class: &str,
    namespace: &str,
    version: u64,
    digest: &str,
    note: &str,
    package: &Value,
) {
    let namespace = escape(namespace);
    let _ = write!(
        html,
        "<section class=\"program {class}\" data-program=\"{namespace}/{version}\">\
         <h3><code>{namespace}</code> version {version}</h3>\n<p>{note}; digest \
         <code class=\"digest\">{}</code></p>\n",
        escape(digest)
    );
    if let Some(description) = package.get("description").and_then(Value::as_str) {
        let _ = writeln!(html, "<p>{}</p>", escape(description));
    }
    let types = package.get("types").and_then(Value::as_object);
    if let Some(types) = types.filter(|types| !types.is_empty()) {
        html.push_str(
            "<table class=\"types\"><thead><tr><th>record type</th><th>kind</th>\
             <th>description</th><th>states</th><th>commands</th><th>roles</th></tr></thead><tbody>\n",
        );
        for (name, definition) in types {
            let text = |key: &str| {
                escape(
                    definition
                        .get(key)
                        .and_then(Value::as_str)
                        .unwrap_or_default(),
                )
            };
            let _ = writeln!(
                html,
                "<tr><td><code>{namespace}/{}</code></td><td>{}</td><td>{}</td><td>{}</td>\
                 <td>{}</td><td>{}</td></tr>",
                escape(name),
                text("kind"),
                text("description"),
                states(definition),
                commands(definition),
                roles(definition),
            );
        }
        html.push_str("</tbody></table>\n");
    }
    let raw = serde_json::to_string_pretty(package).unwrap_or_default();
    let _ = writeln!(
        html,
        "<details><summary>Package (JSON)</summary><pre>{}</pre></details>\n</section>",
        escape(&raw)
    );
}

fn names(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_str).map(escape).collect())
        .unwrap_or_default()
}

fn states(definition: &Value) -> String {
    let Some(lifecycle) = definition.get("lifecycle") else {
        return String::new();
    };
    let initial = lifecycle.get("initial").and_then(Value::as_str);
    names(lifecycle.get("states"))
        .into_iter()
        .map(|state| {
            if initial.is_some_and(|initial| escape(initial) == state) {
                format!("<code>{state}</code> (initial)")
            } else {
                format!("<code>{state}</code>")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn commands(definition: &Value) -> String {
    let Some(commands) = definition.get("commands").and_then(Value::as_object) else {
        return String::new();
    };
    commands
        .iter()
        .map(|(name, command)| {
            let from = names(command.get("from")).join(", ");
            let to = command.get("to").and_then(Value::as_str).map(escape);
            let mut line = format!("<code>{}</code>", escape(name));
            match (from.is_empty(), to) {
                (false, Some(to)) => {
                    let _ = write!(line, ": {from} → {to}");
                }
                (false, None) => {
                    let _ = write!(line, ": from {from}");
                }
                (true, Some(to)) => {
                    let _ = write!(line, ": → {to}");
                }
                (true, None) => {}
            }
            if let Some(description) = command.get("description").and_then(Value::as_str) {
                let _ = write!(line, " ({})", escape(description));
            }
            line
        })
        .collect::<Vec<_>>()
        .join("<br>")
}

fn roles(definition: &Value) -> String {
    let Some(roles) = definition.get("roles").and_then(Value::as_object) else {
        return String::new();
    };
    roles
        .iter()
        .map(|(name, role)| {
            let types = names(role.get("types")).join(", ");
            format!("<code>{}</code>: {types}", escape(name))
        })
        .collect::<Vec<_>>()
        .join("<br>")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn escapes_every_special_character() {
        assert_eq!(
            escape(r#"<a href="x" title='y'>&amp;</a>"#),
            "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;"
        );
    }

    #[test]
    fn labels_say_what_a_schema_takes() {
        assert_eq!(
            type_label(&json!({"type": "string", "format": "uuid"})),
            "string (uuid)"
        );
        assert_eq!(
            type_label(&json!({"type": "integer", "minimum": 1, "maximum": 200})),
            "integer; ≥ 1, ≤ 200"
        );
        assert_eq!(
            type_label(&json!({"type": "array", "items": {"enum": ["a", "b"]}})),
            "array of one of \"a\", \"b\""
        );
        assert_eq!(type_label(&json!({"const": "x"})), "= \"x\"");
        assert_eq!(
            type_label(&json!({"anyOf": [{"type": "string"}, {"type": "null"}]})),
            "string | null"
        );
    }

    #[test]
    fn nested_properties_are_rows() {
        let mut rows = String::new();
        property_rows(
            &mut rows,
            "",
            &json!({"type": "object", "required": ["items"], "properties": {
                "items": {"type": "array", "items": {"type": "object",
                    "properties": {"id": {"type": "string"}}}}}}),
            0,
        );
        assert!(rows.contains("<code>items</code>"), "{rows}");
        assert!(rows.contains("<code>items[].id</code>"), "{rows}");
        assert!(rows.contains("<td>yes</td>"), "{rows}");
    }
}
