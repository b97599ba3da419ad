//! `#[capabilities]` on an inherent impl block: each `#[capability(...)]` `&self` method
//! becomes a capability of the impl's type, declared in a module named after the type (snake
//! case: `Greeter` -> `greeter::greet`), because an impl block cannot hold the capability
//! types and the method names alone would collide between two services.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::{ImplItem, ItemImpl, Visibility};

use crate::attr::{CapabilityArgs, Errors};
use crate::expand::{Callee, Declaration, analyze, check_no_output, declare, doc_text, resolve};

/// `#[capabilities(module = name, crate = "path")]`.
#[derive(Default)]
pub(crate) struct BlockArgs {
    module: Option<syn::Ident>,
    krate: Option<syn::Path>,
}

impl BlockArgs {
    pub(crate) fn parse_key(&mut self, meta: &syn::meta::ParseNestedMeta<'_>, errors: &mut Errors) {
        let result = if meta.path.is_ident("module") {
            meta.value()
                .and_then(|v| v.parse())
                .map(|module| self.module = Some(module))
        } else if meta.path.is_ident("crate") {
            meta.value()
                .and_then(|v| v.parse::<syn::LitStr>())
                .and_then(|path| path.parse())
                .map(|path| self.krate = Some(path))
        } else {
            Err(meta.error("unknown `#[capabilities]` argument; expected `module = name` or `crate = \"path\"`"))
        };
        if let Err(error) = result {
            errors.push(error);
        }
    }
}

pub(crate) fn capabilities(
    args: BlockArgs,
    mut block: ItemImpl,
    mut errors: Errors,
) -> TokenStream {
    if let Some((path, _)) = &block.trait_ {
        errors.at(
            path.span(),
            "`#[capabilities]` goes on an inherent impl block (`impl Type { ... }`), not a trait impl",
        );
    }
    if !block.generics.params.is_empty() {
        errors.at(
            block.generics.span(),
            "`#[capabilities]` does not support generic impl blocks",
        );
    }
    if let Err(error) = errors.into_result() {
        // A block that cannot hold capabilities stays as written, without its `#[capability]`
        // attributes and without a module: nothing to cascade from.
        for item in &mut block.items {
            if let ImplItem::Fn(method) = item {
                method.attrs.retain(|a| !a.path().is_ident("capability"));
            }
        }
        let error = error.to_compile_error();
        return quote! { #block #error };
    }
    let mut errors = Errors::default();
    let self_ty = &block.self_ty;
    let self_tokens = quote!(#self_ty);
    let type_name = match &**self_ty {
        syn::Type::Path(path) if path.qself.is_none() => {
            path.path.segments.last().map(|s| s.ident.clone())
        }
        _ => None,
    };
    let module = match (&args.module, &type_name) {
        (Some(module), _) => module.clone(),
        (None, Some(name)) => {
            format_ident!("{}", snake_case(&name.to_string()), span = name.span())
        }
        (None, None) => {
            errors.at(
                self_ty.span(),
                "name the module of the capability types: `#[capabilities(module = name)]`",
            );
            format_ident!("capabilities")
        }
    };

    let mut declarations = Vec::new();
    // (id, path as a catalog lists it) of every capability the block declares.
    let mut siblings: Vec<(String, String)> = Vec::new();
    let mut widest = Widest::Private;
    for item in &mut block.items {
        let attrs = match item {
            ImplItem::Fn(method) => &mut method.attrs,
            ImplItem::Const(item) => &mut item.attrs,
            ImplItem::Type(item) => &mut item.attrs,
            ImplItem::Macro(item) => &mut item.attrs,
            _ => continue,
        };
        let Some(at) = attrs.iter().position(|a| a.path().is_ident("capability")) else {
            continue;
        };
        let attribute = attrs.remove(at);
        let ImplItem::Fn(method) = item else {
            errors.at(
                attribute.span(),
                "`#[capability]` in a `#[capabilities]` block goes on a `&self` method",
            );
            continue;
        };
        let sig = &method.sig;
        let attrs = &method.attrs;
        let mut method_errors = Errors::default();
        let mut capability_args = CapabilityArgs::default();
        if !matches!(attribute.meta, syn::Meta::Path(_))
            && let Err(error) = attribute.parse_nested_meta(|meta| {
                capability_args.parse_key(&meta, &mut method_errors);
                Ok(())
            })
        {
            method_errors.push(error);
        }
        if capability_args.krate.is_none() {
            capability_args.krate.clone_from(&args.krate);
        }
        capability_args.in_block = true;
        let shape = analyze(sig, Some(&self_tokens), &mut method_errors);
        check_no_output(&capability_args, &mut method_errors);
        let doc = doc_text(attrs);
        let resolved = resolve(&capability_args, &sig.ident, &doc, true, &mut method_errors);
        if let Err(error) = method_errors.into_result() {
            errors.push(error);
            continue;
        }
        let Some(effect) = resolved.effect else {
            continue;
        };
        // A method compiled only under some `cfg` may be absent; the catalog cannot be
        // asked to list it.
        if !attrs.iter().any(|a| a.path().is_ident("cfg")) {
            siblings.push((resolved.id.clone(), format!("{module}::{}", sig.ident)));
        }
        let (vis, width) = inner_visibility(&method.vis);
        widest = widest.max(width);
        let doc = format!(
            "The RCIP capability `{}`, declared by the method `{}::{}`.",
            resolved.id,
            type_name
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default(),
            sig.ident
        );
        declarations.push(declare(
            &Declaration {
                name: &sig.ident,
                vis: &vis,
                doc: &doc,
                callee: Callee::Method {
                    self_ty: &self_tokens,
                    name: &sig.ident,
                },
                shape: &shape,
                resolved: &resolved,
                effect,
            },
            &capability_args,
        ));
    }
    let errors = errors.into_result().err().map(|e| e.to_compile_error());
    let (block_ids, block_paths): (Vec<String>, Vec<String>) = siblings.into_iter().unzip();
    let module_vis = widest.tokens();
    let module_doc = format!(
        "The RCIP capability types of `{}`'s `#[capability]` methods.",
        type_name
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default()
    );
    quote! {
        #block
        #errors
        #[doc = #module_doc]
        #module_vis mod #module {
            #[allow(unused_imports)]
            use super::*;
            /// The block's capabilities: `catalog!` lists all of them or none.
            const __RCIP_BLOCK: &[(&str, &str)] = &[#((#block_ids, #block_paths)),*];
            #(#declarations)*
        }
    }
}

/// How far a capability type is visible, so the module is as visible as its widest one.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Widest {
    Private,
    Crate,
    Public,
}

impl Widest {
    fn tokens(self) -> TokenStream {
        match self {
            Widest::Private => TokenStream::new(),
            Widest::Crate => quote!(pub(crate)),
            Widest::Public => quote!(pub),
        }
    }
}

/// A method's visibility, seen from inside the generated module (one level deeper): a
/// private method's capability type is `pub(super)`, a `pub` one's `pub`, anything else
/// `pub(crate)`.
fn inner_visibility(vis: &Visibility) -> (TokenStream, Widest) {
    match vis {
        Visibility::Inherited => (quote!(pub(super)), Widest::Private),
        Visibility::Public(_) => (quote!(pub), Widest::Public),
        Visibility::Restricted(_) => (quote!(pub(crate)), Widest::Crate),
    }
}

/// `PollService` -> `poll_service`.
fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.char_indices() {
        if c.is_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::snake_case;

    #[test]
    fn type_names_become_snake_case_modules() {
        assert_eq!(snake_case("Greeter"), "greeter");
        assert_eq!(snake_case("PollService"), "poll_service");
    }
}
