//! The one shape of generated enum whose variants stand for fixed strings (a type's lifecycle
//! states, a vocabulary's capability paths): `ALL`, `as_str`, `parse`, `FromStr`, `Display`.

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use crate::tokens::{doc, uint};

/// One generated string enum.
pub(crate) struct StringEnum<'a> {
    /// The enum's name (`State`, `CapabilityPath`).
    pub(crate) name: Ident,
    /// Its doc line.
    pub(crate) doc: String,
    /// `(variant, text, doc)` in order.
    pub(crate) variants: Vec<(Ident, &'a str, String)>,
    /// What `ALL`, `as_str` and `parse` are documented as, in order.
    pub(crate) item_docs: [&'a str; 3],
    /// More associated items, placed after `ALL` (`pub const INITIAL: Self = ...;`).
    pub(crate) extra: Vec<TokenStream>,
    /// `FromStr`'s error type and the expression building it from `text`.
    pub(crate) error: (TokenStream, TokenStream),
}

impl StringEnum<'_> {
    /// The enum and its impls.
    pub(crate) fn tokens(&self) -> TokenStream {
        let name = &self.name;
        let enum_doc = doc(&self.doc);
        let [all_doc, as_str_doc, parse_doc] = self.item_docs.map(doc);
        let variants = self.variants.iter().map(|(variant, _, text)| {
            let doc = doc(text);
            quote!(#doc #variant)
        });
        let all = self.variants.iter().map(|(variant, _, _)| variant);
        let count = uint(u64::try_from(self.variants.len()).unwrap_or(u64::MAX));
        let as_str = self
            .variants
            .iter()
            .map(|(variant, text, _)| quote!(Self::#variant => #text));
        let parse = self.variants.iter().map(
            |(variant, text, _)| quote!(#text => ::core::option::Option::Some(Self::#variant)),
        );
        let extra = &self.extra;
        let (error_type, error) = &self.error;
        quote! {
            #enum_doc
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
            pub enum #name {
                #(#variants,)*
            }

            impl #name {
                #all_doc
                pub const ALL: [Self; #count] = [#(Self::#all),*];

                #(#extra)*

                #as_str_doc
                #[must_use]
                pub const fn as_str(self) -> &'static str {
                    match self {
                        #(#as_str,)*
                    }
                }

                #parse_doc
                #[must_use]
                pub fn parse(text: &str) -> ::core::option::Option<Self> {
                    match text {
                        #(#parse,)*
                        _ => ::core::option::Option::None,
                    }
                }
            }

            impl ::core::str::FromStr for #name {
                type Err = #error_type;

                fn from_str(text: &str) -> ::core::result::Result<Self, Self::Err> {
                    Self::parse(text).ok_or_else(|| #error)
                }
            }

            impl ::core::fmt::Display for #name {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    f.write_str(self.as_str())
                }
            }
        }
    }
}
