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
/// Build the definition with `<name as Capability>::definition()` (strict schemas derived
/// from the input and output types) and bind it with `host.bind_capability::<name>(state)`.
///
/// | key | meaning | example |
/// | --- | --- | --- |
/// | `effect` | required: `read`, `write`, `external` or `destructive` | `effect = "write"` |
/// | `scope` / `scopes` | the semantic scope(s); none means globally relevant | `scope = "polls"`, `scopes = ["polls", "poll"]` |
/// | `id` | the capability id; when absent, derived from the first scope and the function name in lower camel case (`polls` + `prepare_create` = `polls.prepareCreate`) | `id = "polls.create"` |
/// | `title` | the title; else the doc comment's first paragraph (without a final period) | `title = "Create a poll"` |
/// | `description` | the description; else the doc comment after its first paragraph (the whole comment when it has one paragraph) | `description = "..."` |
/// | `when_to_use` | usage guidance | `when_to_use = "When the user asks ..."` |
/// | `example` | a usage example; its input is JSON, checked at compile time and against the input schema at start-up | `example(description = "Lunch", input = r#"{"q": "Where?"}"#)` |
/// | `tags` | discovery tags | `tags = ["authoring"]` |
/// | `crate` | the path of `rcip_runtime`, when renamed | `crate = "::my_rcip"` |
///
/// Supported signatures: `[state: S,] input: T [, ctx: InvocationContext]`, `fn` or
/// `async fn`, returning `Output` or `Result<Output, E>` where `E` converts into
/// `Box<dyn Error + Send + Sync>` (a `HandlerError` keeps its kind). `S: Clone + Send + Sync`
/// is cloned for each call; `T: Deserialize + JsonSchema`, `Output: Serialize + JsonSchema`.
///
/// ```ignore
/// use rcip_runtime::{capability, HandlerError};
///
/// /// Create a poll.
/// ///
/// /// Creates a poll with a question and its options.
/// #[capability(effect = "write", scope = "polls")]
/// async fn create_poll(store: Store, input: CreatePoll) -> Result<PollRef, HandlerError> {
///     store.create(input)
/// }
/// // `create_poll` is now also a type: `<create_poll as Capability>::ID == "polls.createPoll"`.
/// ```
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
/// capabilities of its type.
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
/// ```ignore
/// rcip_runtime::catalog! {
///     /// The polls application.
///     pub struct PollsApp {
///         id = "polls",
///         name = "Polls",
///         description = "Create polls, vote, and read results.",
///         version = "1.0.0",
///         scopes = [
///             ("polls", "Poll list", "Every poll of the group."),
///             ("poll", "Open poll", "The poll on screen.", parent = "polls"),
///         ],
///         capabilities = [list_polls, create_poll, vote],
///     }
/// }
/// let runtime = Runtime::new(PollsApp::definition()?, RuntimeOptions::default())?;
/// host.bind_capability::<create_poll>(store.clone())?;
/// ```
///
/// | key | meaning |
/// | --- | --- |
/// | `id`, `name`, `description` | required application metadata (`id` follows the identifier grammar) |
/// | `version` | the application's own version, optional |
/// | `scopes` | `("id", "Title", "Description")`, optionally `parent = "id"`, in order |
/// | `capabilities` | paths of `#[capability]` functions, in catalog order |
/// | `capability_sets` | paths of `CapabilitySet` types, e.g. `rcip-build`'s `programs::polls::Capabilities` (one capability per relationship command), after the functions |
/// | `crate` | the path of `rcip_runtime`, when renamed |
///
/// Checked at compile time: the application and scope ids' grammar, duplicate scope ids,
/// undeclared parent scopes, non-empty texts (as the macro expands); duplicate capability
/// ids (across functions and sets) and capabilities or sets naming undeclared scopes (by
/// constant evaluation, at the capability's or the set's path).
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
/// Takes the keys of [`macro@capability`] plus `output = Type` (required); `id` is required
/// too. The title and description come from the type's doc comment when not given.
///
/// Write `#[derive(Capability)]` *before* `#[capability(...)]`: after the derive, the
/// attribute is the derive's helper. Written before it while the `capability` attribute
/// macro is imported, Rust cannot tell the two apart (error E0659, "ambiguous").
///
/// ```ignore
/// /// Create a poll.
/// ///
/// /// Creates a poll with a question and its options.
/// #[derive(Deserialize, Serialize, JsonSchema, Capability)]
/// #[capability(id = "polls.create", effect = "write", scope = "polls", output = PollRef)]
/// #[serde(deny_unknown_fields)]
/// struct CreatePoll { question: String, options: Vec<String> }
/// ```
#[proc_macro_derive(Capability, attributes(rcip))]
pub fn derive_capability(input: TokenStream) -> TokenStream {
    match syn::parse::<syn::DeriveInput>(input) {
        Ok(parsed) => derive::derive(parsed).into(),
        Err(error) => error.to_compile_error().into(),
    }
}
