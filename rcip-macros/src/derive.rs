//! `#[derive(Capability)]`: a capability contract declared on its input type, without a
//! handler (the host binds one later with `Host::bind_typed`).

use proc_macro2::TokenStream;
use quote::quote;
use syn::DeriveInput;
use syn::spanned::Spanned;

use crate::attr::{CapabilityArgs, Errors};
use crate::expand::{doc_text, resolve, spec_impl};

pub(crate) fn derive(input: DeriveInput) -> TokenStream {
    let mut errors = Errors::default();
    let mut args = CapabilityArgs::default();
    let mut found = false;
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("rcip")) {
        found = true;
        if let Err(error) = attr.parse_nested_meta(|meta| {
            args.parse_key(&meta, &mut errors);
            Ok(())
        }) {
            errors.push(error);
        }
    }
    let name = &input.ident;
    if !found {
        errors.at(
            name.span(),
            "#[derive(Capability)] needs `#[rcip(id = \"...\", effect = \"...\", output = Type)]`",
        );
        // Nothing else to check without the attribute: every key would be "missing".
        return errors
            .into_result()
            .err()
            .map(|e| e.to_compile_error())
            .unwrap_or_default();
    }
    if !input.generics.params.is_empty() {
        errors.at(
            input.generics.span(),
            "a capability input type cannot be generic",
        );
    }
    if args.output.is_none() && found {
        errors.at(
            name.span(),
            "missing `output = Type` (the capability's output type)",
        );
    }
    let doc = doc_text(&input.attrs);
    let resolved = resolve(&args, name, &doc, false, &mut errors);
    if let Err(error) = errors.into_result() {
        return error.to_compile_error();
    }
    let (Some(effect), Some(output)) = (resolved.effect, args.output.as_ref()) else {
        return TokenStream::new();
    };
    let krate = args
        .krate
        .as_ref()
        .map_or_else(|| quote!(::rcip_runtime), |path| quote!(#path));
    let spec = spec_impl(
        &krate,
        &quote!(#name),
        &quote!(Self),
        &quote!(#output),
        &resolved,
        effect,
        &args,
        proc_macro2::Span::call_site(),
    );
    quote! {
        const _: () = {
            #spec
        };
    }
}
