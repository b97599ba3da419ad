//! MCPL capability-path vocabularies compiled into Rust: an enum of paths and the `static`
//! tree the advertisement walk uses.

use std::borrow::Cow;
use std::path::PathBuf;

use proc_macro2::TokenStream;
use quote::quote;
use rcip_mcpl::{MAX_VOCABULARY_PROBLEMS, VocabNode, Vocabulary, parse_vocabulary};

use crate::rust_names::ident;
use crate::string_enum::StringEnum;
use crate::tokens::{doc, render};
use crate::{BuildError, cargo};

/// A vocabulary file to compile (`{"vocabulary": ..., "paths": [...], "advertisedOutside":
/// [...]}`), written to `$OUT_DIR/rcip_vocabulary_<file stem>.rs` and included with
/// `rcip_mcpl::include_vocabulary!("<file stem>")`.
///
/// ```no_run
/// // build.rs: `fn main() { ... }` around this line
/// rcip_build::VocabularyFile::new("vocabularies/acme-1.json").compile_or_fail();
/// ```
///
/// The generated items: `CapabilityPath` (one variant per path, PascalCase of its segments:
/// `contextHooks.beforeInference.observe` is `ContextHooksBeforeInferenceObserve`; `ALL`,
/// `as_str`, `parse`, `FromStr`, `Display`) and `VOCABULARY`, the
/// [`Vocabulary`] tree.
#[derive(Debug, Clone)]
pub struct VocabularyFile {
    file: PathBuf,
    crate_path: String,
    output: Option<PathBuf>,
}

impl VocabularyFile {
    /// The vocabulary at `file` (relative to the crate's manifest folder under Cargo).
    pub fn new(file: impl Into<PathBuf>) -> Self {
        Self {
            file: file.into(),
            crate_path: "::rcip_mcpl".to_owned(),
            output: None,
        }
    }

    /// The path the generated code reaches `rcip-mcpl` by (default `::rcip_mcpl`; `crate`
    /// inside rcip-mcpl itself).
    #[must_use]
    pub fn crate_path(mut self, path: impl Into<String>) -> Self {
        self.crate_path = path.into();
        self
    }

    /// Writes to `path` instead of `$OUT_DIR`.
    #[must_use]
    pub fn output(mut self, path: impl Into<PathBuf>) -> Self {
        self.output = Some(path.into());
        self
    }

    /// Checks the vocabulary and writes the Rust; returns the file written.
    ///
    /// # Errors
    ///
    /// An unreadable file, an invalid vocabulary (every problem, as `file: pointer: message`
    /// lines), or paths whose Rust names collide.
    pub fn compile(&self) -> Result<PathBuf, BuildError> {
        let file = cargo::resolve(&self.file);
        let shown = self.file.display().to_string();
        let text = cargo::read_tracked(&file)?;
        let value: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| BuildError::Vocabulary(vec![format!("{shown}: not JSON: {e}")]))?;
        let in_file = |problems: Vec<String>| {
            BuildError::Vocabulary(
                problems
                    .into_iter()
                    .map(|p| format!("{shown}: {p}"))
                    .collect(),
            )
        };
        let vocabulary = parse_vocabulary(&value)
            .map_err(|problems| in_file(problems.iter().map(ToString::to_string).collect()))?;
        let krate = crate::crate_path(&self.crate_path)?;
        let code = generate(&vocabulary, &krate).map_err(in_file)?;
        let stem = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        cargo::write_output(
            self.output.as_ref(),
            &format!("rcip_vocabulary_{stem}.rs"),
            code,
        )
    }

    /// [`compile`](Self::compile) for a `build.rs`: problems become `cargo::error` lines.
    pub fn compile_or_fail(&self) {
        cargo::report(self.compile());
    }
}

/// `contextHooks.beforeInference.observe` -> `ContextHooksBeforeInferenceObserve`.
fn variant(path: &str) -> String {
    let mut name = String::new();
    for part in path.split(['.', '_', '-']) {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            name.extend(first.to_uppercase());
            name.push_str(chars.as_str());
        }
    }
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert(0, 'P');
    }
    // `Self` is a keyword; `ALL` would shadow the enum's own constant.
    if matches!(name.as_str(), "Self" | "ALL") {
        name.push('_');
    }
    name
}

pub(crate) fn generate(vocabulary: &Vocabulary, krate: &syn::Path) -> Result<String, Vec<String>> {
    let paths: Vec<&str> = vocabulary.paths.iter().map(AsRef::as_ref).collect();
    let variants: Vec<String> = paths.iter().map(|p| variant(p)).collect();
    let mut problems = Vec::new();
    for (i, name) in variants.iter().enumerate() {
        // As `parse_vocabulary`'s own list: the first problems, then one line for the rest.
        if problems.len() == MAX_VOCABULARY_PROBLEMS {
            problems.push(format!(
                ": more problems were found; only the first {MAX_VOCABULARY_PROBLEMS} are listed"
            ));
            break;
        }
        if name.is_empty() {
            problems.push(format!(
                "/paths/{i}: path {:?} has no letters or digits to name it in Rust",
                paths[i]
            ));
            continue;
        }
        if let Some(j) = variants[..i].iter().position(|v| v == name) {
            problems.push(format!(
                "/paths/{i}: paths {:?} and {:?} both become `{name}`",
                paths[i], paths[j]
            ));
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let name = &vocabulary.name;
    // The name is `[A-Za-z0-9._/-]` (parse_vocabulary); braces would still be format syntax.
    let message = format!(
        "{{text:?}} is not a path of {}",
        name.replace('{', "{{").replace('}', "}}")
    );
    let path_enum = StringEnum {
        name: ident("CapabilityPath"),
        doc: format!("A capability path of vocabulary `{name}`."),
        variants: paths
            .iter()
            .zip(variants)
            // Each variant is non-empty ASCII alphanumerics, not a keyword (checked above).
            .map(|(path, variant)| (ident(&variant), *path, format!("`{path}`.")))
            .collect(),
        item_docs: [
            "Every path, in the vocabulary's order.",
            "The dotted path.",
            "The path spelled `text`, if the vocabulary has it.",
        ],
        extra: Vec::new(),
        error: (
            quote!(::std::string::String),
            quote!(::std::format!(#message)),
        ),
    }
    .tokens();
    let tree_doc = doc(&format!(
        "The tree of vocabulary `{name}`, for advertisement walks."
    ));
    let name_text = text(name);
    let roots = nodes(&vocabulary.roots, krate);
    let paths = texts(&vocabulary.paths);
    let advertised_outside = texts(&vocabulary.advertised_outside);
    Ok(render(
        &format!("// @generated by rcip-build from vocabulary `{name}`. Do not edit."),
        quote! {
            #path_enum

            #tree_doc
            pub static VOCABULARY: #krate::Vocabulary = #krate::Vocabulary {
                name: #name_text,
                roots: #roots,
                paths: #paths,
                advertised_outside: #advertised_outside,
            };
        },
    ))
}

fn text(value: &str) -> TokenStream {
    quote!(::std::borrow::Cow::Borrowed(#value))
}

fn texts(items: &[Cow<'static, str>]) -> TokenStream {
    let items = items.iter().map(|t| text(t));
    quote!(::std::borrow::Cow::Borrowed(&[#(#items),*]))
}

fn nodes(nodes: &[VocabNode], krate: &syn::Path) -> TokenStream {
    let items = nodes.iter().map(|node| {
        let segment = text(&node.segment);
        let path = match &node.path {
            Some(p) => {
                let p = text(p);
                quote!(::core::option::Option::Some(#p))
            }
            None => quote!(::core::option::Option::None),
        };
        let children = self::nodes(&node.children, krate);
        quote!(#krate::VocabNode { segment: #segment, path: #path, children: #children })
    });
    quote!(::std::borrow::Cow::Borrowed(&[#(#items),*]))
}

#[cfg(test)]
mod tests {
    use rcip_mcpl::parse_vocabulary;
    use serde_json::json;

    use super::{generate, variant};

    fn krate() -> syn::Path {
        syn::parse_str("::rcip_mcpl").expect("a path")
    }

    #[test]
    fn many_collisions_are_cut_at_the_limit() {
        // `a_b`, `a__b`, ...: 300 paths, all `AB`, 299 collisions.
        let paths: Vec<String> = (1..=300).map(|n| format!("a{}b", "_".repeat(n))).collect();
        let vocabulary = parse_vocabulary(&json!({"vocabulary": "x", "paths": paths}))
            .expect("valid vocabulary");
        let problems = generate(&vocabulary, &krate()).expect_err("names collide");
        assert_eq!(problems.len(), rcip_mcpl::MAX_VOCABULARY_PROBLEMS + 1);
        assert_eq!(
            problems.last().map(String::as_str),
            Some(": more problems were found; only the first 100 are listed")
        );
        // Exactly the limit: no marker.
        let vocabulary = parse_vocabulary(&json!({"vocabulary": "x", "paths": paths[..101]}))
            .expect("valid vocabulary");
        let problems = generate(&vocabulary, &krate()).expect_err("names collide");
        assert_eq!(problems.len(), 100);
        assert!(problems.iter().all(|p| p.contains("both become `AB`")));
    }

    #[test]
    fn variants_are_pascal_case_and_collisions_are_refused() {
        assert_eq!(
            variant("contextHooks.beforeInference.observe"),
            "ContextHooksBeforeInferenceObserve"
        );
        assert_eq!(variant("a_b-c.2d"), "ABC2d");
        assert_eq!(variant("2fa"), "P2fa");
        assert_eq!(variant("self"), "Self_");
        // `ALL` is the enum's constant.
        assert_eq!(variant("ALL"), "ALL_");
        assert_eq!(variant("a.l.l"), "ALL_");
        let odd = parse_vocabulary(&json!({"vocabulary": "x", "paths": ["_", "ok"]}))
            .expect("valid vocabulary");
        assert_eq!(
            generate(&odd, &krate()).expect_err("no name for `_`"),
            ["/paths/0: path \"_\" has no letters or digits to name it in Rust"]
        );
        assert!(parse_vocabulary(&json!({"vocabulary": "x\n}", "paths": ["a"]})).is_err());
        let vocabulary =
            parse_vocabulary(&json!({"vocabulary": "x", "paths": ["a.b", "a_b", "aB"]}))
                .expect("valid vocabulary");
        let problems = generate(&vocabulary, &krate()).expect_err("names collide");
        assert_eq!(
            problems,
            [
                "/paths/1: paths \"a_b\" and \"a.b\" both become `AB`",
                "/paths/2: paths \"aB\" and \"a.b\" both become `AB`",
            ]
        );
    }
}
