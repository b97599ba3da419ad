//! Expansion of `#[capability]`: the function is kept as written, and a declaration type of
//! the same name (type namespace only) implements `Capability` for it.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::spanned::Spanned;
use syn::{FnArg, GenericArgument, ItemFn, LitStr, PathArguments, ReturnType, Type};

use rcip_core::{Effect, derive_capability_id, is_valid_identifier};

use crate::attr::{CapabilityArgs, Errors};

/// How the function's result reaches the runtime.
enum Returns {
    /// `-> Output` (or nothing: `()`).
    Plain(Type),
    /// `-> Result<Output, E>`.
    Result(Type),
}

/// The parts of a supported signature: `[state,] input [, context]`.
struct Shape {
    state: Option<Type>,
    input: Type,
    takes_context: bool,
    returns: Returns,
}

const SUPPORTED: &str = "a capability function takes `[state: S,] input: T [, ctx: InvocationContext]` \
     by value and returns `Output` or `Result<Output, E>`";

fn is_context(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none()
        && p.path.segments.last().is_some_and(|s| s.ident == "InvocationContext"))
}

fn analyze(function: &ItemFn, errors: &mut Errors) -> Option<Shape> {
    let sig = &function.sig;
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
    let mut types = Vec::new();
    for argument in &sig.inputs {
        match argument {
            FnArg::Receiver(receiver) => errors.at(
                receiver.span(),
                format!("methods (`self`) cannot be capabilities: {SUPPORTED}"),
            ),
            FnArg::Typed(typed) => {
                if let Type::Reference(reference) = &*typed.ty {
                    errors.at(
                        reference.span(),
                        format!("parameters must be owned, not references: {SUPPORTED}"),
                    );
                }
                types.push((*typed.ty).clone());
            }
        }
    }
    let takes_context = types.last().is_some_and(is_context);
    if takes_context {
        types.pop();
    }
    let (state, input) = match types.len() {
        1 => (None, types.pop()),
        2 => {
            let input = types.pop();
            (types.pop(), input)
        }
        0 => {
            errors.at(
                sig.paren_token.span.join(),
                format!("missing the input parameter: {SUPPORTED}"),
            );
            (None, None)
        }
        _ => {
            errors.at(
                sig.inputs.span(),
                format!("too many parameters: {SUPPORTED}"),
            );
            (None, None)
        }
    };
    let returns = match &sig.output {
        ReturnType::Default => Returns::Plain(syn::parse_quote!(())),
        ReturnType::Type(_, ty) => {
            result_output(ty).map_or_else(|| Returns::Plain((**ty).clone()), Returns::Result)
        }
    };
    Some(Shape {
        state,
        input: input?,
        takes_context,
        returns,
    })
}

/// `Result<Output, E>` (any path ending in `Result` with two type arguments) -> `Output`.
fn result_output(ty: &Type) -> Option<Type> {
    let Type::Path(path) = ty else { return None };
    let last = path.path.segments.last()?;
    if last.ident != "Result" {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    let mut types = args.args.iter().filter_map(|a| match a {
        GenericArgument::Type(t) => Some(t.clone()),
        _ => None,
    });
    let output = types.next()?;
    types.next()?;
    Some(output)
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
pub(crate) fn spec_impl(
    krate: &TokenStream,
    target: &TokenStream,
    input: &TokenStream,
    output: &TokenStream,
    resolved: &Resolved,
    effect: Effect,
    args: &CapabilityArgs,
) -> TokenStream {
    let Resolved {
        id,
        title,
        description,
        ..
    } = resolved;
    let effect = match effect {
        Effect::Read => quote!(Read),
        Effect::Write => quote!(Write),
        Effect::External => quote!(External),
        Effect::Destructive => quote!(Destructive),
    };
    let scopes = &args.scopes;
    let tags = &args.tags;
    let when_to_use = match &args.when_to_use {
        Some(when) => quote!(::core::option::Option::Some(#when)),
        None => quote!(::core::option::Option::None),
    };
    let example_descriptions = args.examples.iter().map(|e| &e.description);
    let example_inputs = args.examples.iter().map(|e| &e.input);
    quote! {
        impl #krate::CapabilitySpec for #target {
            type Input = #input;
            type Output = #output;
            const ID: &'static str = #id;
            const EFFECT: #krate::Effect = #krate::Effect::#effect;
            const SCOPES: &'static [&'static str] = &[#(#scopes),*];
            const TITLE: &'static str = #title;
            const DESCRIPTION: &'static str = #description;
            const TAGS: &'static [&'static str] = &[#(#tags),*];
            const WHEN_TO_USE: ::core::option::Option<&'static str> = #when_to_use;
            const EXAMPLES: &'static [(&'static str, &'static str)] =
                &[#((#example_descriptions, #example_inputs)),*];
        }
    }
}

pub(crate) fn capability(
    args: CapabilityArgs,
    function: ItemFn,
    mut errors: Errors,
) -> TokenStream {
    let name = &function.sig.ident;
    let shape = analyze(&function, &mut errors);

    if let Some(output) = &args.output {
        errors.at(
            output.span(),
            "`output` is for `#[derive(Capability)]`; a function's output is its return type",
        );
    }
    let doc = doc_text(&function.attrs);
    let resolved = resolve(&args, name, &doc, true, &mut errors);
    if let Err(error) = errors.into_result() {
        // The function itself is still emitted, so code that calls it does not cascade.
        let compile_errors = error.to_compile_error();
        return quote! { #function #compile_errors };
    }
    let (Some(shape), Some(effect)) = (shape, resolved.effect) else {
        return quote! { #function };
    };

    let krate = args
        .krate
        .as_ref()
        .map_or_else(|| quote!(::rcip_runtime), |path| quote!(#path));
    let private = quote!(#krate::__private);
    let vis = &function.vis;
    let input = &shape.input;
    let (output, convert) = match &shape.returns {
        Returns::Plain(output) => (output, quote!(#private::plain_output)),
        Returns::Result(output) => (output, quote!(#private::result_output)),
    };
    let state_type = shape.state.clone().unwrap_or_else(|| syn::parse_quote!(()));
    let state_arg = shape.state.as_ref().map(|_| quote!(state,));
    let context_arg = shape.takes_context.then(|| quote!(context,));
    let call = if function.sig.asyncness.is_some() {
        quote! {
            let future = #name(#state_arg input, #context_arg);
            ::std::boxed::Box::pin(async move { #convert(future.await) })
        }
    } else {
        quote! {
            ::std::boxed::Box::pin(::core::future::ready(#convert(#name(#state_arg input, #context_arg))))
        }
    };
    let spec = spec_impl(
        &krate,
        &quote!(#name),
        &quote!(#input),
        &quote!(#output),
        &resolved,
        effect,
        &args,
    );
    let doc = format!(
        "The RCIP capability `{}`, declared by the function [`{name}()`]({name}()).",
        resolved.id
    );
    quote! {
        #function

        #[doc = #doc]
        #[allow(non_camel_case_types)]
        #vis struct #name {}

        const _: () = {
            #spec

            impl #krate::Capability for #name {
                type State = #state_type;

                fn call(
                    state: Self::State,
                    input: Self::Input,
                    context: #krate::InvocationContext,
                ) -> #private::BoxFuture<::core::result::Result<Self::Output, #krate::HandlerError>> {
                    let _ = (&state, &context);
                    #call
                }
            }
        };
    }
}
