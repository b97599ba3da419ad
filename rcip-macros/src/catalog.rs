//! `catalog!`: an application's metadata, scopes and `#[capability]` functions, assembled
//! into one type whose `definition()` the runtime takes. What the macro can see is checked
//! as it expands (identifier grammar, duplicate and undeclared scopes); what only the
//! compiler knows (the capability ids and scopes behind each path) is checked by constant
//! evaluation, so a mistake fails `cargo build` at the capability's path.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, Ident, LitStr, Path, Token, Visibility, bracketed, parenthesized};

use rcip_core::is_valid_identifier;

use crate::attr::Errors;

/// `("id", "Title", "Description" [, parent = "other"])`.
struct Scope {
    id: LitStr,
    title: LitStr,
    description: LitStr,
    parent: Option<LitStr>,
}

impl Parse for Scope {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let content;
        parenthesized!(content in input);
        let id = content.parse()?;
        content.parse::<Token![,]>()?;
        let title = content.parse()?;
        content.parse::<Token![,]>()?;
        let description = content.parse()?;
        let mut parent = None;
        if content.parse::<Option<Token![,]>>()?.is_some() && !content.is_empty() {
            let key: Ident = content.parse()?;
            if key != "parent" {
                return Err(syn::Error::new(key.span(), "expected `parent = \"scope\"`"));
            }
            content.parse::<Token![=]>()?;
            parent = Some(content.parse()?);
            content.parse::<Option<Token![,]>>()?;
        }
        Ok(Scope {
            id,
            title,
            description,
            parent,
        })
    }
}

/// The whole `catalog!` input.
pub(crate) struct Catalog {
    attrs: Vec<Attribute>,
    vis: Visibility,
    name: Ident,
    id: Option<LitStr>,
    app_name: Option<LitStr>,
    description: Option<LitStr>,
    version: Option<LitStr>,
    scopes: Vec<Scope>,
    capabilities: Vec<Path>,
    capability_sets: Vec<Path>,
    krate: Option<Path>,
    errors: Errors,
}

impl Parse for Catalog {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis = input.parse()?;
        input.parse::<Token![struct]>()?;
        let name = input.parse()?;
        let body;
        syn::braced!(body in input);
        let mut catalog = Catalog {
            attrs,
            vis,
            name,
            id: None,
            app_name: None,
            description: None,
            version: None,
            scopes: Vec::new(),
            capabilities: Vec::new(),
            capability_sets: Vec::new(),
            krate: None,
            errors: Errors::default(),
        };
        while !body.is_empty() {
            let key: Ident = if body.peek(Token![crate]) {
                let token: Token![crate] = body.parse()?;
                Ident::new("crate", token.span)
            } else {
                body.parse()?
            };
            body.parse::<Token![=]>()?;
            match key.to_string().as_str() {
                "id" => catalog.id = Some(body.parse()?),
                "name" => catalog.app_name = Some(body.parse()?),
                "description" => catalog.description = Some(body.parse()?),
                "version" => catalog.version = Some(body.parse()?),
                "scopes" => {
                    let list;
                    bracketed!(list in body);
                    catalog.scopes = Punctuated::<Scope, Token![,]>::parse_terminated(&list)?
                        .into_iter()
                        .collect();
                }
                "capabilities" => {
                    let list;
                    bracketed!(list in body);
                    catalog.capabilities = Punctuated::<Path, Token![,]>::parse_terminated(&list)?
                        .into_iter()
                        .collect();
                }
                "capability_sets" => {
                    let list;
                    bracketed!(list in body);
                    catalog.capability_sets =
                        Punctuated::<Path, Token![,]>::parse_terminated(&list)?
                            .into_iter()
                            .collect();
                }
                "crate" => {
                    let path: LitStr = body.parse()?;
                    catalog.krate = Some(path.parse()?);
                }
                other => {
                    return Err(syn::Error::new(
                        key.span(),
                        format!(
                            "unknown catalog key `{other}`; expected id, name, description, \
                             version, scopes, capabilities, capability_sets or crate"
                        ),
                    ));
                }
            }
            if !body.is_empty() {
                body.parse::<Token![,]>()?;
            }
        }
        Ok(catalog)
    }
}

impl Catalog {
    /// Checks what the macro can see, collecting every mistake.
    fn check(&mut self) {
        let errors = &mut self.errors;
        match &self.id {
            Some(id) if !is_valid_identifier(&id.value()) => {
                errors.at(
                    id.span(),
                    format!("invalid RCIP application id {:?}", id.value()),
                );
            }
            None => errors.at(self.name.span(), "missing `id = \"...\"`"),
            _ => {}
        }
        for (key, value) in [("name", &self.app_name), ("description", &self.description)] {
            match value {
                Some(text) if rcip_core::is_blank(&text.value()) => {
                    errors.at(
                        text.span(),
                        format!("the application {key} must not be empty"),
                    );
                }
                None => errors.at(self.name.span(), format!("missing `{key} = \"...\"`")),
                _ => {}
            }
        }
        let mut seen: Vec<String> = Vec::new();
        for scope in &self.scopes {
            let id = scope.id.value();
            if !is_valid_identifier(&id) {
                errors.at(scope.id.span(), format!("invalid RCIP scope id {id:?}"));
            } else if seen.contains(&id) {
                errors.at(scope.id.span(), format!("duplicate RCIP scope id {id:?}"));
            }
            seen.push(id);
            for text in [&scope.title, &scope.description] {
                if rcip_core::is_blank(&text.value()) {
                    errors.at(
                        text.span(),
                        "scope titles and descriptions must not be empty",
                    );
                }
            }
        }
        for scope in &self.scopes {
            if let Some(parent) = &scope.parent
                && !seen.contains(&parent.value())
            {
                errors.at(
                    parent.span(),
                    format!(
                        "parent scope {:?} is not declared in this catalog",
                        parent.value()
                    ),
                );
            }
        }
        if self.capabilities.is_empty() && self.capability_sets.is_empty() {
            errors.at(
                self.name.span(),
                "a catalog needs `capabilities = [...]` or `capability_sets = [...]`",
            );
        }
    }
}

pub(crate) fn catalog(mut catalog: Catalog) -> TokenStream {
    catalog.check();
    let Catalog {
        attrs,
        vis,
        name,
        id,
        app_name,
        description,
        version,
        scopes,
        capabilities,
        capability_sets: sets,
        krate,
        errors,
    } = catalog;
    if let Err(error) = errors.into_result() {
        let errors = error.to_compile_error();
        return quote! { #(#attrs)* #vis struct #name; #errors };
    }
    let krate = krate.map_or_else(|| quote!(::rcip_runtime), |path| quote!(#path));
    let private = quote!(#krate::__private);
    let version = version.map(|v| quote!(.version(#v)));
    let scope_ids: Vec<&LitStr> = scopes.iter().map(|s| &s.id).collect();
    let scope_builders = scopes.iter().map(|scope| {
        let (id, title, description) = (&scope.id, &scope.title, &scope.description);
        let parent = scope.parent.as_ref().map(|p| quote!(.parent(#p)));
        quote!(.scope(#krate::ScopeDefinition::new(#id, #title, #description) #parent))
    });
    // Constant checks, each panicking with a message that names the capability's path and
    // spanned at it.
    let duplicate_checks = capabilities.iter().enumerate().map(|(index, path)| {
        let message = format!(
            "duplicate capability id: `{}` has the same id as a capability listed before it",
            quote!(#path).to_string().replace(' ', "")
        );
        quote_spanned! {path.span()=>
            if DUPLICATE == #index {
                ::core::panic!(#message);
            }
        }
    });
    let scope_checks = capabilities.iter().map(|path| {
        let message = format!(
            "capability `{}` names a scope that this catalog does not declare",
            quote!(#path).to_string().replace(' ', "")
        );
        quote_spanned! {path.span()=>
            if !#private::all_declared(<#path as #krate::CapabilitySpec>::SCOPES, SCOPES) {
                ::core::panic!(#message);
            }
        }
    });
    // The methods of one `#[capabilities]` block are listed together (see
    // `__private::first_block_gap`): a method left out would otherwise vanish without a word.
    // One constant finds the first gap; the check at its path reports it.
    let catalog_name = name.to_string();
    let listed: Vec<String> = capabilities
        .iter()
        .map(|path| quote!(#path).to_string().replace(' ', ""))
        .collect();
    let block_checks = capabilities.iter().enumerate().map(|(index, path)| {
        quote_spanned! {path.span()=>
            if BLOCK_GAP.at == #index {
                ::core::panic!("{}", BLOCK_GAP.message());
            }
        }
    });
    let count = capabilities.len();
    let set_len = |path: &Path| quote!(<#path as #krate::CapabilitySet>::IDS.len());
    let set_checks = sets.iter().enumerate().map(|(i, path)| {
        let before = sets[..i].iter().map(set_len);
        let name = quote!(#path).to_string().replace(' ', "");
        let duplicate = format!(
            "duplicate capability id: a capability of set `{name}` has the same id as a \
             capability listed before it"
        );
        let undeclared =
            format!("capability set `{name}` names a scope that this catalog does not declare");
        quote_spanned! {path.span()=>
            let start = #count #(+ #before)*;
            if DUPLICATE >= start && DUPLICATE < start + <#path as #krate::CapabilitySet>::IDS.len() {
                ::core::panic!(#duplicate);
            }
            if !#private::all_declared(<#path as #krate::CapabilitySet>::SCOPES, SCOPES) {
                ::core::panic!(#undeclared);
            }
        }
    });
    let total = {
        let lens = sets.iter().map(set_len);
        quote!(#count #(+ #lens)*)
    };
    let bind = bind_all(&krate, &capabilities);
    let doc = format!(
        "The RCIP catalog of application `{}`: see [`{name}::definition`].",
        id.as_ref().map(LitStr::value).unwrap_or_default()
    );

    quote! {
        #(#attrs)*
        #[doc = #doc]
        #[derive(Debug, Clone, Copy, Default)]
        #vis struct #name;

        const _: () = {
            const DUPLICATE: usize = #private::first_duplicate(&#name::ALL_IDS);
            const BLOCK_GAP: #private::BlockGap = #private::first_block_gap(
                #catalog_name,
                &[#(#listed),*],
                &#name::ALL_IDS,
                &[#(<#capabilities as #krate::CapabilitySpec>::BLOCK),*],
            );
            const SCOPES: &[&str] = &[#(#scope_ids),*];
            #(#duplicate_checks)*
            #(#scope_checks)*
            #(#block_checks)*
            #({ #set_checks })*
        };

        impl #name {
            /// How many capabilities the catalog has (capabilities, then each set's).
            pub const CAPABILITY_COUNT: usize = #total;

            const ALL_IDS: [&'static str; #total] = #private::concat_ids(&[
                &[#(<#capabilities as #krate::CapabilitySpec>::ID),*],
                #(<#sets as #krate::CapabilitySet>::IDS,)*
            ]);

            /// Every capability id of the catalog, in catalog order.
            pub const CAPABILITY_IDS: &'static [&'static str] = &Self::ALL_IDS;

            /// The application definition: metadata, scopes, and each capability with its
            /// strict schemas derived from its types. Pass it to `Runtime::new` (or compile
            /// it once with `CompiledCatalog::compile`).
            ///
            /// # Errors
            ///
            /// A capability type without a strict schema.
            pub fn definition() -> ::core::result::Result<#krate::ApplicationDefinition, #krate::Error> {
                #private::with_capabilities(
                    #krate::ApplicationDefinition::new(#id, #app_name, #description)
                        #version
                        #(#scope_builders)*,
                    &[#(<#capabilities as #krate::CapabilitySpec>::definition),*],
                    &[#(<#sets as #krate::CapabilitySet>::definitions),*],
                )
            }

            /// The catalog as JSON with its content revision: the file `rcip export
            /// --profile NAME catalog.json` reads (write it with
            /// `serde_json::to_string_pretty(&App::catalog_export()?)`).
            ///
            /// # Errors
            ///
            /// The definition's, or a schema nested too deep to be made canonical.
            pub fn catalog_export() -> ::core::result::Result<#private::Value, #krate::Error> {
                ::core::result::Result::Ok(#krate::catalog_export(&Self::definition()?)?)
            }

            #bind
        }
    }
}

/// `bind_all` and `runtime`: every `#[capability]` of the list bound over its state, taken
/// from a tuple with one value per distinct state type. The macro cannot compare types, so
/// each capability gets an index parameter (`__private::Pick<State, Index>`) that the
/// compiler infers at the caller: a state type missing from the tuple is a compile error
/// there. Whether a path has a handler at all (a `#[derive(Capability)]` contract has none and
/// is skipped) is asked of its type (`Probe::IS_CAPABILITY`), not of its name.
fn bind_all(krate: &TokenStream, capabilities: &[Path]) -> TokenStream {
    let private = quote!(#krate::__private);
    let indices: Vec<Ident> = (0..capabilities.len())
        .map(|i| quote::format_ident!("__Index{i}"))
        .collect();
    let bindable: Vec<TokenStream> = capabilities
        .iter()
        .map(|path| {
            quote_spanned! {path.span()=>
                <#path as #private::Bindable<{
                    #[allow(unused_imports)]
                    use #private::NotCapability as _;
                    #private::Probe::<#path>::IS_CAPABILITY
                }>>
            }
        })
        .collect();
    let bounds: Vec<TokenStream> = bindable
        .iter()
        .zip(&indices)
        .map(|(bindable, index)| quote!(__States: #private::Pick<#bindable::State, #index>))
        .collect();
    let count = capabilities.len();
    quote! {
        /// Binds every `#[capability]` of the catalog over its state and returns the guards
        /// (contracts without a handler and capability sets are left to the host). `states`
        /// holds one value per distinct state type, as a tuple (`(store.clone(),)`,
        /// `(store, Arc::new(service))`), or `()` when every capability is stateless; a
        /// missing state type is a compile error.
        ///
        /// # Errors
        ///
        /// As `Host::bind`: a capability that is already bound.
        pub fn bind_all<__States, #(#indices),*>(
            host: &#krate::Host,
            states: __States,
        ) -> ::core::result::Result<#krate::BindingGuards, #krate::Error>
        where
            #(#bounds,)*
        {
            let mut guards = ::std::vec::Vec::with_capacity(#count);
            #(
                // The state type is inferred from `bind_into`'s parameter (one anonymous
                // constant less per capability than naming it again).
                #bindable::bind_into(
                    host,
                    <__States as #private::Pick<_, #indices>>::pick(&states),
                    &mut guards,
                )?;
            )*
            ::core::result::Result::Ok(#krate::BindingGuards::from(guards))
        }

        /// A runtime of this catalog with everything [`bind_all`](Self::bind_all) binds
        /// bound for the runtime's life, before any client exists (see
        /// `Runtime::with_bindings`; with `RuntimeOptions::require_all_bound`, a capability
        /// left unbound fails it).
        ///
        /// # Errors
        ///
        /// The definition's, `bind_all`'s, or `Error::Unbound`.
        pub fn runtime<__States, #(#indices),*>(
            options: #krate::RuntimeOptions,
            states: __States,
        ) -> ::core::result::Result<#krate::Runtime, #krate::Error>
        where
            #(#bounds,)*
        {
            #krate::Runtime::with_bindings(Self::definition()?, options, |host| {
                Self::bind_all::<__States, #(#indices),*>(host, states).map(#krate::BindingGuards::keep)
            })
        }
    }
}
