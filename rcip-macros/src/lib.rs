//! Procedural macros of rcip. Use them through `rcip_runtime` (feature `macros`, on by
//! default), which re-exports them; generated code reaches the runtime only through
//! `::rcip_runtime::__private` and `::rcip_runtime::Capability`.
#![deny(missing_docs)]

mod attr;
mod catalog;
mod derive;
mod expand;
mod methods;

use proc_macro::TokenStream;

/// Declares a typed function as an RCIP capability.
///
/// The function stays as written. Beside it, a type of the same name (in the type
/// namespace, so both coexist) implements `rcip_runtime::Capability`: its id, effect,
/// scopes, title, description, usage guidance, and a typed handler that calls the function.
/// List it in `catalog!` (whose `bind_all` binds it), or build its definition with
/// `<name as CapabilitySpec>::definition()` (strict schemas derived from the input and output
/// types) and bind it with `host.bind_capability::<name>(state)`. On a method, see
/// [`macro@capabilities`].
///
/// | key | meaning | example |
/// | --- | --- | --- |
/// | `effect` | required: `read`, `write`, `external` or `destructive` | `effect = "write"` |
/// | `idempotent` | declares that invoking it again with the same input has no further effect (the definition's `idempotent`, MCP's `idempotentHint`); absent means not idempotent, whatever the effect | `idempotent`, `idempotent = true` |
/// | `scope` / `scopes` | the semantic scope(s); none means globally relevant | `scope = "polls"`, `scopes = ["polls", "poll"]` |
/// | `id` | the capability id; when absent, derived from the first scope and the function name in lower camel case (`polls` + `prepare_create` = `polls.prepareCreate`) | `id = "polls.create"` |
/// | `title` | the title; else the doc comment's first paragraph (without a final period) | `title = "Create a poll"` |
/// | `description` | the description; else the doc comment after its first paragraph (the whole comment when it has one paragraph) | `description = "..."` |
/// | `when_to_use` | usage guidance | `when_to_use = "When the user asks ..."` |
/// | `example` | a usage example; its input is JSON, checked at compile time and against the input schema at start-up | `example(description = "Lunch", input = r#"{"q": "Where?"}"#)` |
/// | `tags` | discovery tags | `tags = ["authoring"]` |
/// | `crate` | the path of `rcip_runtime`, when renamed | `crate = "::my_rcip"` |
///
/// The examples below are compiled as rcip-runtime's doctests (`MacroDoctests`): a proc-macro
/// crate cannot run doctests that use the runtime, so each macro's examples live in a file
/// under `rcip-macros/doc/` that both crates include.
#[cfg_attr(not(doctest), doc = include_str!("../doc/capability.md"))]
#[proc_macro_attribute]
pub fn capability(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = attr::Errors::default();
    let mut parsed = attr::CapabilityArgs::default();
    let parser = syn::meta::parser(|meta| {
        parsed.parse_key(&meta, &mut errors);
        Ok(())
    });
    if let Err(error) = syn::parse::Parser::parse(parser, args) {
        errors.push(error);
    }
    let function = match syn::parse::<syn::ItemFn>(item) {
        Ok(function) => function,
        Err(error) => {
            errors.push(syn::Error::new(
                error.span(),
                "#[capability] goes on a free `fn` or `async fn`, or on a `&self` method in an \
                 impl block marked `#[capabilities]`; a contract on a type is \
                 `#[derive(Capability)]` with `#[rcip(...)]`",
            ));
            return errors
                .into_result()
                .err()
                .map(|e| e.to_compile_error())
                .unwrap_or_default()
                .into();
        }
    };
    expand::capability(parsed, function, errors).into()
}

/// Declares the `#[capability(...)]` `&self` methods of an inherent impl block as
/// capabilities of its type (the keys of [`macro@capability`] on each method).
///
/// | argument | meaning |
/// | --- | --- |
/// | `module` | the module of the capability types; the type's name in snake case when absent |
/// | `crate` | the path of `rcip_runtime`, when renamed |
#[cfg_attr(not(doctest), doc = include_str!("../doc/capabilities.md"))]
#[proc_macro_attribute]
pub fn capabilities(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = attr::Errors::default();
    let mut parsed = methods::BlockArgs::default();
    let parser = syn::meta::parser(|meta| {
        parsed.parse_key(&meta, &mut errors);
        Ok(())
    });
    if let Err(error) = syn::parse::Parser::parse(parser, args) {
        errors.push(error);
    }
    match syn::parse::<syn::ItemImpl>(item) {
        Ok(block) => methods::capabilities(parsed, block, errors).into(),
        Err(error) => syn::Error::new(
            error.span(),
            "#[capabilities] goes on an inherent impl block: `impl Type { ... }`",
        )
        .to_compile_error()
        .into(),
    }
}

/// Assembles an application catalog from metadata, scopes and `#[capability]` functions.
///
/// | key | meaning |
/// | --- | --- |
/// | `id`, `name`, `description` | required application metadata (`id` follows the identifier grammar) |
/// | `version` | the application's own version, optional |
/// | `scopes` | `("id", "Title", "Description")`, optionally `parent = "id"`, in order |
/// | `capabilities` | paths of `#[capability]` functions (and methods, `service::method`) or `#[derive(Capability)]` contracts, in catalog order |
/// | `capability_sets` | paths of `CapabilitySet` types, e.g. `rcip-build`'s `programs::polls::Capabilities` (one capability per relationship command), after the functions |
/// | `crate` | the path of `rcip_runtime`, when renamed |
///
/// Checked at compile time: the application and scope ids' grammar, duplicate scope ids,
/// undeclared parent scopes, non-empty texts (as the macro expands); duplicate capability
/// ids (across functions and sets) and capabilities or sets naming undeclared scopes (by
/// constant evaluation, at the capability's or the set's path).
#[cfg_attr(not(doctest), doc = include_str!("../doc/catalog.md"))]
#[proc_macro]
pub fn catalog(input: TokenStream) -> TokenStream {
    match syn::parse::<catalog::Catalog>(input) {
        Ok(parsed) => catalog::catalog(parsed).into(),
        Err(error) => error.to_compile_error().into(),
    }
}

/// Declares a capability contract on its input type, without a handler: for crates that
/// share contracts between a host (which binds a handler later with
/// `Host::bind_typed::<Type>(handler)`) and tools (which invoke it with `invoke_typed`).
///
/// Takes the keys of [`macro@capability`] in `#[rcip(...)]`, plus `output = Type`
/// (required); `id` is required too. The title and description come from the type's doc
/// comment when not given.
///
#[cfg_attr(not(doctest), doc = include_str!("../doc/derive.md"))]
#[proc_macro_derive(Capability, attributes(rcip))]
pub fn derive_capability(input: TokenStream) -> TokenStream {
    match syn::parse::<syn::DeriveInput>(input) {
        Ok(parsed) => derive::derive(parsed).into(),
        Err(error) => error.to_compile_error().into(),
    }
}
