//! Expansion of `#[capability]`: the function is kept as written, and a declaration type of
//! the same name (type namespace only) implements `Capability` for it. Methods of a
//! `#[capabilities]` impl block (`methods.rs`) go through the same [`analyze`] and
//! [`declare`].

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{FnArg, ItemFn, LitStr, ReturnType, Type};

use rcip_core::{Effect, derive_capability_id, is_valid_identifier};

use crate::attr::{CapabilityArgs, Errors};

/// The rule every message repeats.
pub(crate) const SUPPORTED: &str = "a capability takes `[state,] [input,]` and then extractors \
     (`InvocationContext`, `CancellationSignal`, `Principal`, ...), all by value, and returns \
     `T: Serialize + JsonSchema` or `Result<T, E>`";

/// What a capability function's signature gives the expansion. Parameters are kept as
/// written: which is the state, the input or an extractor is decided by trait, in the
/// generated code (see `__private::Layout`), never by the types' names.
pub(crate) struct Shape {
    /// The parameter types, the receiver excluded, with `Self` replaced in a method's.
    pub(crate) params: Vec<TokenStream>,
    /// Their spans, for errors.
    pub(crate) param_spans: Vec<Span>,
    /// The return type (`()` when none).
    pub(crate) returns: TokenStream,
    pub(crate) returns_span: Span,
    pub(crate) is_async: bool,
}

/// Where the function lives.
pub(crate) enum Callee<'a> {
    /// A free function, called by name.
    Free(&'a syn::Ident),
    /// A `&self` method of `self_ty`, whose value is the state (shared in an `Arc`).
    Method {
        self_ty: &'a TokenStream,
        name: &'a syn::Ident,
    },
}

/// Checks the signature; `self_ty` is the impl's type for a method of a `#[capabilities]`
/// block (`None` for a free function).
pub(crate) fn analyze(
    sig: &syn::Signature,
    self_ty: Option<&TokenStream>,
    errors: &mut Errors,
) -> Shape {
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.at(
            sig.generics.span(),
            format!("generic capability functions are not supported: {SUPPORTED}"),
        );
    }
    if sig.constness.is_some() || sig.abi.is_some() || sig.variadic.is_some() {
        errors.at(
            sig.span(),
            format!("unsupported function form: {SUPPORTED}"),
        );
    }
    if matches!(sig.safety, syn::Safety::Unsafe(_)) {
        errors.at(sig.span(), "an `unsafe fn` cannot be a capability");
    }
    let substitute = |ty: &Type| match self_ty {
        Some(self_ty) => replace_self(quote!(#ty), self_ty),
        None => quote!(#ty),
    };
    let mut params = Vec::new();
    let mut param_spans = Vec::new();
    let mut receiver_seen = false;
    for argument in &sig.inputs {
        match argument {
            FnArg::Receiver(receiver) => {
                receiver_seen = true;
                check_receiver(receiver, self_ty.is_some(), errors);
            }
            FnArg::Typed(typed) => {
                match &*typed.ty {
                    Type::Reference(reference) => errors.at(
                        reference.span(),
                        format!("parameters must be owned, not references: {SUPPORTED}"),
                    ),
                    Type::ImplTrait(bound) => errors.at(
                        bound.span(),
                        format!("`impl Trait` parameters are not supported: {SUPPORTED}"),
                    ),
                    _ => {}
                }
                params.push(substitute(&typed.ty));
                param_spans.push(typed.ty.span());
            }
        }
    }
    if self_ty.is_some() && !receiver_seen {
        errors.at(
            sig.ident.span(),
            "in a `#[capabilities]` block, a capability is a `&self` method; \
             for one without state, write a free `fn` with `#[capability]`",
        );
    }
    if params.len() > MAX_PARAMS {
        errors.at(
            sig.inputs.span(),
            format!("too many parameters (at most {MAX_PARAMS}): {SUPPORTED}"),
        );
    }
    let (returns, returns_span) = match &sig.output {
        ReturnType::Default => (quote!(()), sig.paren_token.span.join()),
        ReturnType::Type(_, ty) => {
            if let Type::ImplTrait(bound) = &**ty {
                errors.at(
                    bound.span(),
                    "a capability's return type must be nameable, not `impl Trait`",
                );
            }
            (substitute(ty), ty.span())
        }
    };
    Shape {
        params,
        param_spans,
        returns,
        returns_span,
        is_async: sig.asyncness.is_some(),
    }
}

/// The most parameters `__private::Layout` has impls for.
const MAX_PARAMS: usize = 8;

fn check_receiver(receiver: &syn::Receiver, in_block: bool, errors: &mut Errors) {
    if !in_block {
        errors.at(
            receiver.span(),
            "a method is a capability only inside an impl block marked `#[capabilities]`",
        );
        return;
    }
    let what = match &receiver.kind {
        syn::ReceiverKind::Reference(_, _, None) => return,
        syn::ReceiverKind::Reference(_, _, Some(_)) => {
            "`&mut self`: capabilities may run concurrently, so they get a shared `&self`; \
             keep mutable state behind a lock"
        }
        _ => "a receiver other than `&self`: the state is shared between calls",
    };
    errors.at(
        receiver.span(),
        format!("a capability method takes `&self`, not {what}"),
    );
}

/// `Self` in a method's parameter or return type means the impl's type; in the generated
/// capability type it would mean that type instead.
fn replace_self(tokens: TokenStream, self_ty: &TokenStream) -> TokenStream {
    tokens
        .into_iter()
        .flat_map(|token| match token {
            TokenTree::Ident(ident) if ident == "Self" => self_ty.clone(),
            TokenTree::Group(group) => {
                let mut replaced = proc_macro2::Group::new(
                    group.delimiter(),
                    replace_self(group.stream(), self_ty),
                );
                replaced.set_span(group.span());
                TokenTree::Group(replaced).into()
            }
            other => other.into(),
        })
        .collect()
}

/// The doc comment's lines, trimmed, as one text; paragraphs kept apart.
pub(crate) fn doc_text(attrs: &[syn::Attribute]) -> String {
    let mut lines: Vec<String> = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            continue;
        }
        if let syn::Meta::NameValue(nv) = &attr.meta
            && let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
        {
            lines.push(s.value().trim().to_owned());
        }
    }
    lines.join("\n").trim().to_owned()
}

/// What both macros resolve from the arguments and the doc comment.
pub(crate) struct Resolved {
    pub(crate) id: String,
    pub(crate) effect: Option<Effect>,
    pub(crate) title: String,
    pub(crate) description: String,
}

/// Checks and resolves the id, effect, scopes and texts; `name` is the item's name (for id
/// derivation when `derive_id`, and as the span of item-level errors).
pub(crate) fn resolve(
    args: &CapabilityArgs,
    name: &syn::Ident,
    doc: &str,
    derive_id: bool,
    errors: &mut Errors,
) -> Resolved {
    // Effect.
    let effect = match args.effect {
        Some((effect, _)) => Some(effect),
        None => {
            // An invalid value was already reported where it stands.
            if args.effect_given.is_none() {
                errors.at(
                    Span::call_site(),
                    "missing `effect = \"read\" | \"write\" | \"external\" | \"destructive\"`",
                );
            }
            None
        }
    };
    // Scopes and id: the same grammar as the runtime's.
    for scope in &args.scopes {
        if !is_valid_identifier(&scope.value()) {
            errors.at(
                scope.span(),
                format!("invalid RCIP scope id {:?}", scope.value()),
            );
        }
    }
    let id = match &args.id {
        Some(id) => {
            if !is_valid_identifier(&id.value()) {
                errors.at(
                    id.span(),
                    format!(
                        "invalid RCIP capability id {:?}: ids start with a lowercase ASCII letter; \
                         `.`, `_` and `-` separators must each be followed by a lowercase letter",
                        id.value()
                    ),
                );
            }
            id.value()
        }
        None if !derive_id => {
            errors.at(
                name.span(),
                "missing `id = \"...\"` (a derived contract names its id)",
            );
            String::new()
        }
        None => {
            let scope = args.scopes.first().map(LitStr::value);
            let raw = name.to_string();
            derive_capability_id(scope.as_deref(), &raw).unwrap_or_else(|| {
                errors.at(
                    name.span(),
                    format!("cannot derive a valid capability id from `{raw}`; give one with `id = \"...\"`"),
                );
                String::new()
            })
        }
    };
    // Title and description: attributes, else the doc comment.

    // The doc comment's first paragraph is the title (without a final period); the rest is
    // the description, or the whole text when there is no rest.
    let (first_paragraph, rest) = match doc.split_once("\n\n") {
        Some((first, rest)) => (first.replace('\n', " "), rest.trim().to_owned()),
        None => (doc.replace('\n', " "), String::new()),
    };
    let title = args
        .title
        .as_ref()
        .map(LitStr::value)
        .unwrap_or_else(|| first_paragraph.trim_end_matches('.').to_owned());
    let description = args
        .description
        .as_ref()
        .map(LitStr::value)
        .unwrap_or_else(|| {
            if rest.is_empty() {
                doc.to_owned()
            } else {
                rest.to_owned()
            }
        });
    if rcip_core::is_blank(&title) || rcip_core::is_blank(&description) {
        let span = args
            .title
            .as_ref()
            .or(args.description.as_ref())
            .map_or(name.span(), LitStr::span);
        errors.at(span, "a capability needs a title and a description: write a doc comment, or `title = \"...\"` and `description = \"...\"`");
    }
    if let Some(when) = &args.when_to_use
        && rcip_core::is_blank(&when.value())
    {
        errors.at(when.span(), "`when_to_use` must not be empty");
    }

    Resolved {
        id,
        effect,
        title,
        description,
    }
}

/// The `CapabilitySpec` impl both macros emit.
#[allow(clippy::too_many_arguments)] // one call site per macro; a struct would only rename them
pub(crate) fn spec_impl(
    krate: &TokenStream,
    target: &TokenStream,
    input: &TokenStream,
    output: &TokenStream,
    resolved: &Resolved,
    effect: Effect,
    args: &CapabilityArgs,
    header_span: Span,
) -> TokenStream {
    let header = respan(quote!(impl #krate::CapabilitySpec for #target), header_span);
    let Resolved {
        id,
        title,
        description,
        ..
    } = resolved;
    let effect = effect_variant(effect);
    let scopes = &args.scopes;
    // The optional constants are written only when declared: the trait's defaults are
    // `false` and empty, and every constant left out is one item less per capability for the
    // compiler to check (docs/performance.md, "Fewer items per capability").
    let idempotent = matches!(args.idempotent, Some((true, _))).then(|| {
        quote!(
            const IDEMPOTENT: bool = true;
        )
    });
    let long_running = args.long_running.map(|(variant, span)| {
        let variant = proc_macro2::Ident::new(variant, span);
        quote!(
            const LONG_RUNNING: ::core::option::Option<#krate::LongRunning> =
                ::core::option::Option::Some(#krate::LongRunning::#variant);
        )
    });
    let tags = (!args.tags.is_empty()).then(|| {
        let tags = &args.tags;
        quote!(const TAGS: &'static [&'static str] = &[#(#tags),*];)
    });
    let when_to_use = args.when_to_use.as_ref().map(|when| {
        quote!(
            const WHEN_TO_USE: ::core::option::Option<&'static str> =
                ::core::option::Option::Some(#when);
        )
    });
    let examples = (!args.examples.is_empty()).then(|| {
        let descriptions = args.examples.iter().map(|e| &e.description);
        let inputs = args.examples.iter().map(|e| &e.input);
        quote!(
            const EXAMPLES: &'static [(&'static str, &'static str)] =
                &[#((#descriptions, #inputs)),*];
        )
    });
    let block = args.in_block.then(|| {
        quote!(
            const BLOCK: &'static [(&'static str, &'static str)] = __RCIP_BLOCK;
        )
    });
    quote! {
        #header {
            type Input = #input;
            type Output = #output;
            const ID: &'static str = #id;
            const EFFECT: #krate::Effect = #krate::Effect::#effect;
            #idempotent
            #long_running
            const SCOPES: &'static [&'static str] = &[#(#scopes),*];
            const TITLE: &'static str = #title;
            const DESCRIPTION: &'static str = #description;
            #tags
            #when_to_use
            #examples
            #block
        }
    }
}

pub(crate) fn capability(
    args: CapabilityArgs,
    function: ItemFn,
    mut errors: Errors,
) -> TokenStream {
    let name = &function.sig.ident;
    let shape = analyze(&function.sig, None, &mut errors);
    let doc = doc_text(&function.attrs);
    let resolved = resolve(&args, name, &doc, true, &mut errors);
    check_no_output(&args, &mut errors);
    if let Err(error) = errors.into_result() {
        // The function itself is still emitted, so code that calls it does not cascade.
        let compile_errors = error.to_compile_error();
        return quote! { #function #compile_errors };
    }
    let Some(effect) = resolved.effect else {
        return quote! { #function };
    };
    let doc = format!(
        "The RCIP capability `{}`, declared by the function [`{name}()`]({name}()).",
        resolved.id
    );
    let vis = &function.vis;
    let declaration = declare(
        &Declaration {
            name,
            vis: &quote!(#vis),
            doc: &doc,
            callee: Callee::Free(name),
            shape: &shape,
            resolved: &resolved,
            effect,
        },
        &args,
    );
    quote! {
        #function
        #declaration
    }
}

/// `output` belongs to the derive.
pub(crate) fn check_no_output(args: &CapabilityArgs, errors: &mut Errors) {
    if let Some(output) = &args.output {
        errors.at(
            output.span(),
            "`output` is for `#[derive(Capability)]`; a function's output is its return type",
        );
    }
}

/// One capability type to emit.
pub(crate) struct Declaration<'a> {
    pub(crate) name: &'a syn::Ident,
    pub(crate) vis: &'a TokenStream,
    pub(crate) doc: &'a str,
    pub(crate) callee: Callee<'a>,
    pub(crate) shape: &'a Shape,
    pub(crate) resolved: &'a Resolved,
    pub(crate) effect: Effect,
}

/// The capability type of a function or method: a braced struct (type namespace only, so it
/// sits beside a function of the same name) with inherent constants, `CapabilitySpec` and
/// `Capability`. How each parameter is used is decided by trait: `Probe::IS_EXTRACTOR` per
/// parameter gives how many lead (`leading_values`), and `Layout` splits the call's state,
/// input and context into the arguments; the return type goes through
/// `IntoCapabilityOutput<FALLIBLE>`, with `FALLIBLE` from `Probe::IS_RESULT`.
pub(crate) fn declare(declaration: &Declaration<'_>, args: &CapabilityArgs) -> TokenStream {
    let Declaration {
        name,
        vis,
        doc,
        callee,
        shape,
        resolved,
        effect,
    } = declaration;
    let krate = args
        .krate
        .as_ref()
        .map_or_else(|| quote!(::rcip_runtime), |path| quote!(#path));
    let private = quote!(#krate::__private);
    let params = &shape.params;
    let returns = &shape.returns;
    let returns_span = shape.returns_span;
    // Errors about the parameters (an input without `JsonSchema`, a parameter that is no
    // extractor) are reported on these projections: their first token carries the first
    // parameter's span and their last the last one's, so the error covers the parameters.
    let (first, last) = match (shape.param_spans.first(), shape.param_spans.last()) {
        (Some(first), Some(last)) => (*first, *last),
        _ => (returns_span, returns_span),
    };
    let layout = |item: TokenStream| {
        let open = quote_spanned!(first=> <);
        let rest = respan(quote!(Params as #private::Layout<{ VALUES }>>::#item), last);
        quote!(#open #rest)
    };
    let input_type = layout(quote!(Input));
    let output_type = respan(
        quote!(<#returns as #krate::IntoCapabilityOutput<{ FALLIBLE }>>::Output),
        returns_span,
    );
    let into_output = respan(
        quote!(<#returns as #krate::IntoCapabilityOutput<{ FALLIBLE }>>::into_output),
        returns_span,
    );
    let arguments: Vec<_> = (0..params.len())
        .map(|i| quote::format_ident!("argument{i}"))
        .collect();
    let (max_values, state_type, state_argument) = match callee {
        Callee::Free(_) => (2usize, layout(quote!(State)), quote!(state)),
        Callee::Method { self_ty, .. } => (1, quote!(::std::sync::Arc<#self_ty>), quote!(())),
    };
    let split = layout(quote!(split(#state_argument, input, &context)));
    let call = match callee {
        Callee::Free(function) => quote!(#function(#(#arguments),*)),
        Callee::Method { self_ty, name } => quote!(<#self_ty>::#name(&*state, #(#arguments),*)),
    };
    // At the return type: an output that is no capability output is reported there. A
    // function's own future is boxed once and serializes the output inside (so a call is one
    // allocation, not a second future around the first); a plain function's result goes
    // through `__private::ready`, whose result type (`Result<Value, HandlerError>`) is the
    // same for every capability, so its boxing is compiled once, shared by all of them.
    let run = respan(
        if shape.is_async {
            quote!(::std::boxed::Box::pin(async move {
                #private::output_value(#into_output(#call.await))
            }))
        } else {
            quote!(#private::ready(#private::output_value(#into_output(#call))))
        },
        returns_span,
    );
    let spec = spec_impl(
        &krate,
        &quote!(#name),
        &input_type,
        &output_type,
        resolved,
        *effect,
        args,
        first,
    );
    // Obligations of the impl itself are reported at its header: at the parameters too.
    let capability_header = respan(quote!(impl #krate::Capability for #name), first);
    let id = &resolved.id;
    let effect_variant = effect_variant(*effect);
    let scopes = &args.scopes;
    quote! {
        #[doc = #doc]
        #[allow(non_camel_case_types)]
        #vis struct #name {}

        impl #name {
            /// The capability id.
            pub const ID: &'static str = #id;
            /// The effect.
            pub const EFFECT: #krate::Effect = #krate::Effect::#effect_variant;
            /// The scopes.
            pub const SCOPES: &'static [&'static str] = &[#(#scopes),*];
        }

        const _: () = {
            #[allow(unused_imports)]
            use #private::{NotExtractor as _, NotResult as _};
            type Params = (#(#params,)*);
            const VALUES: usize = #private::leading_values(
                &[#(#private::Probe::<#params>::IS_EXTRACTOR),*],
                #max_values,
            );
            const FALLIBLE: bool = #private::Probe::<#returns>::IS_RESULT;

            #spec

            #capability_header {
                type State = #state_type;

                // `Self::...` rather than the projections again: each `{ VALUES }` is one
                // more anonymous constant for the compiler, per capability.
                fn call(
                    state: Self::State,
                    input: Self::Input,
                    context: #krate::InvocationContext,
                ) -> #private::BoxFuture<::core::result::Result<#private::Value, #krate::HandlerError>> {
                    let (#(#arguments,)*) = match #split {
                        ::core::result::Result::Ok(arguments) => arguments,
                        ::core::result::Result::Err(error) => {
                            return #private::ready(::core::result::Result::Err(error));
                        }
                    };
                    #run
                }
            }
        };
    }
}

/// `tokens` with every span set to `span` (an interpolated path keeps its own span, and a
/// type whose tokens come from different places is reported at the macro call instead).
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut token| {
            if let TokenTree::Group(group) = &token {
                let mut inner =
                    proc_macro2::Group::new(group.delimiter(), respan(group.stream(), span));
                inner.set_span(span);
                token = TokenTree::Group(inner);
            } else {
                token.set_span(span);
            }
            token
        })
        .collect()
}

fn effect_variant(effect: Effect) -> TokenStream {
    match effect {
        Effect::Read => quote!(Read),
        Effect::Write => quote!(Write),
        Effect::External => quote!(External),
        Effect::Destructive => quote!(Destructive),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attr::Example;

    fn spec(args: &CapabilityArgs) -> String {
        let resolved = Resolved {
            id: "app.note".to_owned(),
            effect: Some(Effect::Read),
            title: "Note".to_owned(),
            description: "Notes.".to_owned(),
        };
        spec_impl(
            &quote!(::rcip_runtime),
            &quote!(note),
            &quote!(()),
            &quote!(()),
            &resolved,
            Effect::Read,
            args,
            Span::call_site(),
        )
        .to_string()
    }

    const OPTIONAL: [&str; 4] = ["IDEMPOTENT", "TAGS", "WHEN_TO_USE", "EXAMPLES"];

    #[test]
    fn optional_constants_are_written_only_when_declared() {
        let undeclared = spec(&CapabilityArgs::default());
        for name in OPTIONAL {
            assert!(!undeclared.contains(name), "{name} in {undeclared}");
        }
        let text = |value: &str| LitStr::new(value, Span::call_site());
        let declared = spec(&CapabilityArgs {
            idempotent: Some((true, Span::call_site())),
            tags: vec![text("notes")],
            when_to_use: Some(text("When notes are wanted.")),
            examples: vec![Example {
                description: text("Empty"),
                input: text("{}"),
            }],
            ..CapabilityArgs::default()
        });
        for name in OPTIONAL {
            assert!(declared.contains(name), "{name} missing from {declared}");
        }
        // `idempotent = false` is the default too.
        let not_idempotent = spec(&CapabilityArgs {
            idempotent: Some((false, Span::call_site())),
            ..CapabilityArgs::default()
        });
        assert!(!not_idempotent.contains("IDEMPOTENT"));
    }
}
