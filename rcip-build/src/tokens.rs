//! What every emitter of this crate shares: the generated items are built as tokens with
//! `quote` (so they are valid Rust by construction) and printed by `prettyplease` (so the file
//! reads well: what a user opens when a generated item surprises them), and text a package or
//! vocabulary author wrote only ever reaches the file as an escaped string literal.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

/// The prefix that marks an author doc for [`render`]; see [`author_doc`].
const AUTHOR_DOC: &str = "/";

/// The generated file: `header` (a `//` comment line), then `items` pretty-printed.
pub(crate) fn render(header: &str, items: TokenStream) -> String {
    // The emitters only build items, so this can fail only on a bug in this crate.
    let file: syn::File = syn::parse2(items).expect("rcip-build generated an invalid file");
    let code = prettyplease::unparse(&file);
    // prettyplease prints a `doc` string that starts with `/` as the attribute it is (a `///`
    // comment could not hold it); `author_doc` put the `/` there, this takes it away again. No
    // other text can match: inside a string literal every `"` is escaped.
    let code = code.replace(&format!("#[doc = \"{AUTHOR_DOC}"), "#[doc = \"");
    format!("{header}\n\n{code}")
}

/// A doc line of this crate's own words (and validated names): printed as `/// text`.
pub(crate) fn doc(text: &str) -> TokenStream {
    let text = format!(" {text}");
    quote!(#[doc = #text])
}

/// A doc attribute from a heading and an author's text. The text may hold anything, so it
/// stays an escaped `#[doc = "..."]` literal rather than becoming a `///` or `/** */`
/// comment: a newline would end a line comment, and a bare carriage return or a bidi control
/// is refused by rustc in any comment but harmless in an escaped literal. A code fence in it
/// would become a doctest of the including crate, so fences are escaped.
pub(crate) fn author_doc(heading: &str, text: Option<&str>) -> TokenStream {
    match text {
        Some(text) => {
            let doc = format!(
                "{AUTHOR_DOC}{heading}: {}",
                text.replace("```", "\\`\\`\\`")
            );
            quote!(#[doc = #doc])
        }
        None => doc(&format!("{heading}.")),
    }
}

/// An unsuffixed integer literal (`3`, not `3u64`).
pub(crate) fn uint(value: impl Into<u64>) -> Literal {
    Literal::u64_unsuffixed(value.into())
}

/// A signed integer: a minus sign and an unsuffixed literal.
pub(crate) fn int(value: i64) -> TokenStream {
    let magnitude = uint(value.unsigned_abs());
    if value < 0 {
        quote!(-#magnitude)
    } else {
        quote!(#magnitude)
    }
}

/// A float as Rust's `{:?}` writes it, which always has a fraction or an exponent (so the
/// literal is an `f64`) and round-trips.
pub(crate) fn float(value: f64) -> TokenStream {
    // `{:?}` of a finite number is always a float literal; JSON holds no other.
    let magnitude: Literal = format!("{:?}", value.abs())
        .parse()
        .expect("a finite float literal");
    if value.is_sign_negative() {
        quote!(-#magnitude)
    } else {
        quote!(#magnitude)
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::{author_doc, float, int, render};

    #[test]
    fn author_docs_stay_escaped_attributes_and_numbers_read_as_written() {
        let hostile = author_doc("Heading", Some("a\r\nb \u{202e} */ /* ```x```"));
        let plain = author_doc("Heading", None);
        let (n, f, g) = (int(-5), float(-2.5), float(1e300));
        let code = render(
            "// header",
            quote! {
                #hostile
                #plain
                pub const A: (i64, f64, f64) = (#n, #f, #g);
            },
        );
        assert_eq!(
            code,
            "// header\n\n\
             #[doc = \"Heading: a\\r\\nb \\u{202e} */ /* \\\\`\\\\`\\\\`x\\\\`\\\\`\\\\`\"]\n\
             /// Heading.\n\
             pub const A: (i64, f64, f64) = (-5, -2.5, 1e300);\n"
        );
    }
}
