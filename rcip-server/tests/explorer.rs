//! The explorer (`GET /`) over real HTTP: every registry operation with its scope, who may
//! call it and its schemas; the installed versions and the bundled examples; no form, no
//! script, no credential; hostile package text escaped; the security headers.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use rcip_platform::{Agents, example_packages, operations};
use rcip_server::Limits;
use serde_json::{Value, json};

/// Text a package author controls, made to break out of text, attributes and `<pre>`.
const HOSTILE: &str =
    r#"</pre></td>"'><script>alert(1)</script><form action="/v1/operations">&amp;"#;

/// Every character the page must not carry raw: each escaped form is asserted too.
fn escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// A valid package whose every free text is [`HOSTILE`].
fn hostile_package() -> Value {
    let mut package = common::notes(7);
    package["namespace"] = json!("hostile");
    package["description"] = json!(HOSTILE);
    package["types"]["note"]["description"] = json!(HOSTILE);
    package["types"]["note"]["commands"]["close"]["description"] = json!(HOSTILE);
    package["types"]["note"]["schema"]["properties"]["text"]["description"] = json!(HOSTILE);
    package["types"]["link"]["roles"]["target"]["types"] = json!(["hostile/note"]);
    package
}

struct Page {
    status: u16,
    headers: reqwest::header::HeaderMap,
    html: String,
}

async fn page(server: &common::TestServer) -> Page {
    // No credential, no Origin: what a browser's address bar sends.
    let response = server.client.get(server.url("/")).send().await.unwrap();
    Page {
        status: response.status().as_u16(),
        headers: response.headers().clone(),
        html: response.text().await.unwrap(),
    }
}

/// The HTML of the section whose opening tag carries `attribute`.
fn section<'a>(html: &'a str, attribute: &str) -> &'a str {
    let start = html
        .find(attribute)
        .unwrap_or_else(|| panic!("no section {attribute}"));
    let end = html[start..].find("</section>").unwrap() + start;
    &html[start..end]
}

#[tokio::test]
async fn the_page_lists_every_operation_with_its_rules_and_schemas() {
    let server = common::start(Limits::default()).await;
    let page = page(&server).await;
    assert_eq!(page.status, 200, "{}", page.html);
    for spec in operations() {
        let html = section(&page.html, &format!("data-operation=\"{}\"", spec.name));
        assert!(html.contains(&format!("<h3><code>{}</code></h3>", spec.name)));
        assert!(html.contains(&escaped(spec.summary)), "{}", spec.name);
        match spec.scope {
            Some(scope) => assert!(
                html.contains(&format!("scope: <code>{}</code>", scope.as_str())),
                "{}",
                spec.name
            ),
            None => assert!(html.contains("scope: none (membership)"), "{}", spec.name),
        }
        let who = match spec.agents {
            Agents::Allowed => "agents allowed",
            Agents::ConsoleOnly => "console only",
            Agents::AgentMembersOnly => "agents: agent members only",
        };
        assert!(html.contains(who), "{}: {who}", spec.name);
        let kind = if spec.is_mutation() {
            format!("mutation ({})", spec.effect.as_str())
        } else {
            "read".to_owned()
        };
        assert!(
            html.contains(&format!("<span class=\"tag\">{kind}</span>")),
            "{}: {kind}",
            spec.name
        );
        assert!(html.contains(&format!("<code>{}</code>", spec.tool_name())));
        // Each input property is a row, marked required or not.
        let required: Vec<&str> = spec.input["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|name| name.as_str().unwrap())
            .collect();
        for name in spec.input["properties"].as_object().unwrap().keys() {
            let flag = if required.contains(&name.as_str()) {
                "yes"
            } else {
                "no"
            };
            let row = format!("<tr><td><code>{name}</code></td>");
            let at = html
                .find(&row)
                .unwrap_or_else(|| panic!("{}: no row {name}", spec.name));
            let rest = &html[at..at + html[at..].find("</tr>").unwrap()];
            assert!(
                rest.contains(&format!("<td>{flag}</td>")),
                "{}: {rest}",
                spec.name
            );
        }
        // Both raw schemas, escaped, each in a <details>.
        for schema in [&spec.input, &spec.output] {
            let raw = escaped(&serde_json::to_string_pretty(schema).unwrap());
            assert!(html.contains(&format!("<pre>{raw}</pre>")), "{}", spec.name);
        }
    }
    // The index table links every operation.
    let rows = page.html.matches("<tr><td><a href=\"#op-").count();
    assert_eq!(rows, operations().len());
}

#[tokio::test]
async fn the_page_shows_installed_versions_and_the_bundled_examples() {
    let server = common::start(Limits::default()).await;
    let before = page(&server).await;
    assert!(!before.html.contains("data-program=\"notes/1\""));
    let installed = server.platform.install(&common::notes(1)).await.unwrap();
    let after = page(&server).await;
    assert!(
        after
            .html
            .contains("<section class=\"program installed\" data-program=\"notes/1\">")
    );
    let html = section(&after.html, "data-program=\"notes/1\"");
    assert!(html.contains(&format!(
        "<code class=\"digest\">{}</code>",
        installed.digest
    )));
    assert!(
        html.contains("<code>notes/note</code></td><td>entity</td>"),
        "{html}"
    );
    assert!(
        html.contains("<code>notes/link</code></td><td>relationship</td>"),
        "{html}"
    );
    assert!(html.contains("<code>close</code>: open → closed"), "{html}");
    assert!(html.contains("<code>open</code> (initial)"), "{html}");
    assert!(html.contains("<code>target</code>: notes/note"), "{html}");
    for example in example_packages() {
        let at = format!("data-program=\"{}/{}\"", example.namespace, example.version);
        assert!(
            after
                .html
                .contains(&format!("<section class=\"program example\" {at}>"))
        );
        let html = section(&after.html, &at);
        assert!(html.contains(&example.digest), "{html}");
        for name in example.package["types"].as_object().unwrap().keys() {
            assert!(html.contains(&format!("<code>{}/{name}</code>", example.namespace)));
        }
    }
}

#[tokio::test]
async fn the_page_is_read_only_escaped_and_locked_down() {
    let server = common::start(Limits::default()).await;
    server.platform.install(&hostile_package()).await.unwrap();
    let page = page(&server).await;
    assert_eq!(page.status, 200);
    let html = section(&page.html, "data-program=\"hostile/7\"");
    // The description, the type's, the command's and the property's (in the raw package).
    let escaped_text = escaped(HOSTILE);
    assert!(
        html.matches(&escaped_text).count() >= 3,
        "hostile text not shown escaped: {html}"
    );
    let lower = page.html.to_ascii_lowercase();
    for tag in [
        "<form",
        "<script",
        "<input",
        "<button",
        "<iframe",
        "<textarea",
        "onclick",
    ] {
        assert!(!lower.contains(tag), "the page carries {tag}");
    }
    // The raw text appears nowhere, not even split by the escaping of one character.
    assert!(!page.html.contains("alert(1)</script>"));
    assert!(!page.html.contains(HOSTILE));

    let header = |name: &str| {
        page.headers
            .get(name)
            .unwrap_or_else(|| panic!("no {name}"))
            .to_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(header("content-type"), "text/html; charset=utf-8");
    assert_eq!(header("x-content-type-options"), "nosniff");
    let policy = header("content-security-policy");
    let directives: Vec<&str> = policy.split(';').map(str::trim).collect();
    assert!(directives.contains(&"default-src 'none'"), "{policy}");
    assert!(directives.contains(&"form-action 'none'"), "{policy}");
    assert!(
        directives
            .iter()
            .all(|d| !d.starts_with("script-src") && !d.contains("'unsafe-eval'")),
        "{policy}"
    );
}

#[tokio::test]
async fn the_page_takes_no_credential_and_no_write() {
    let server = common::start(Limits::default()).await;
    // A bearer token changes nothing: the page is the same for everyone.
    let anonymous = page(&server).await;
    let with_token = server
        .client
        .get(server.url("/"))
        .bearer_auth("ada")
        .send()
        .await
        .unwrap();
    assert_eq!(with_token.status(), 200);
    assert_eq!(with_token.text().await.unwrap(), anonymous.html);
    // A bad token is not refused either: nothing is authenticated here.
    let bad = server
        .client
        .get(server.url("/"))
        .bearer_auth("nobody")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 200);
    // Writes to the page's route are not taken.
    let post = server
        .client
        .post(server.url("/"))
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(post.status(), 405);
    let body: Value = post.json().await.unwrap();
    assert_eq!(body["error"]["code"], "METHOD_NOT_ALLOWED");
}
