//! Parsing of `#[capability(...)]` arguments. Every mistake is collected, each at its own
//! span, so one compile reports them all.

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::{Expr, ExprArray, Lit, LitStr, Path};

use rcip_core::Effect;

/// The keys `#[capability]` accepts, for messages.
pub(crate) const KEYS: &str = "effect, idempotent, long_running, id, scope, scopes, title, description, when_to_use, example, tags, output, crate";

/// Collects errors; the expansion reports all of them together.
#[derive(Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }

    pub(crate) fn at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.push(syn::Error::new(span, message));
    }

    pub(crate) fn into_result(self) -> Result<(), syn::Error> {
        self.0.map_or(Ok(()), Err)
    }
}

/// One usage example: a description and a JSON input checked at compile time.
pub(crate) struct Example {
    pub(crate) description: LitStr,
    pub(crate) input: LitStr,
}

/// The parsed arguments.
#[derive(Default)]
pub(crate) struct CapabilityArgs {
    pub(crate) effect: Option<(Effect, Span)>,
    /// Set when `effect` was written at all (valid or not), so a bad value is reported once.
    pub(crate) effect_given: Option<Span>,
    /// `idempotent` (or `idempotent = true | false`); the span of its first mention.
    pub(crate) idempotent: Option<(bool, Span)>,
    /// `long_running` (optional) or `long_running = "optional" | "required"`: the variant.
    pub(crate) long_running: Option<(&'static str, Span)>,
    pub(crate) id: Option<LitStr>,
    pub(crate) scopes: Vec<LitStr>,
    pub(crate) scopes_given: Option<Span>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) when_to_use: Option<LitStr>,
    pub(crate) examples: Vec<Example>,
    pub(crate) tags: Vec<LitStr>,
    pub(crate) krate: Option<Path>,
    /// `output = Type`, for `#[derive(Capability)]` only.
    pub(crate) output: Option<syn::Type>,
    /// Set by `#[capabilities]` for its methods: the spec names the block's capabilities
    /// (`CapabilitySpec::BLOCK`, the module's `__RCIP_BLOCK`).
    pub(crate) in_block: bool,
}

impl CapabilityArgs {
    /// Handles one `key = value` (or `key(...)`) of the attribute.
    pub(crate) fn parse_key(&mut self, meta: &ParseNestedMeta<'_>, errors: &mut Errors) {
        let Some(key) = meta.path.get_ident().map(ToString::to_string) else {
            errors.push(meta.error(format!(
                "unknown capability attribute; expected one of {KEYS}"
            )));
            return;
        };
        let result = match key.as_str() {
            "effect" => self.parse_effect(meta, errors),
            "idempotent" => self.parse_idempotent(meta, errors),
            "long_running" => self.parse_long_running(meta, errors),
            "id" => once(&mut self.id, meta, errors, "id"),
            "scope" | "scopes" => self.parse_scopes(meta, errors, &key),
            "title" => once(&mut self.title, meta, errors, "title"),
            "description" => once(&mut self.description, meta, errors, "description"),
            "when_to_use" => once(&mut self.when_to_use, meta, errors, "when_to_use"),
            "example" => self.parse_example(meta, errors),
            "tags" => string_list(meta).map(|tags| self.tags.extend(tags)),
            "crate" => self.parse_crate(meta, errors),
            "output" => meta
                .value()
                .and_then(|v| v.parse())
                .map(|ty| self.output = Some(ty)),
            other => {
                errors.push(meta.error(format!(
                    "unknown capability attribute `{other}`; expected one of {KEYS}"
                )));
                skip_value(meta)
            }
        };
        if let Err(error) = result {
            errors.push(error);
        }
    }

    fn parse_effect(&mut self, meta: &ParseNestedMeta<'_>, errors: &mut Errors) -> syn::Result<()> {
        let value: LitStr = meta.value()?.parse()?;
        if self.effect_given.replace(value.span()).is_some() {
            errors.at(value.span(), "duplicate capability attribute `effect`");
            return Ok(());
        }
        match Effect::from_wire(&value.value()) {
            Some(effect) => self.effect = Some((effect, value.span())),
            None => errors.at(
                value.span(),
                format!(
                    "unknown effect {:?}: expected \"read\", \"write\", \"external\" or \"destructive\"",
                    value.value()
                ),
            ),
        }
        Ok(())
    }

    /// `idempotent` alone, or `idempotent = true | false` (a bool literal, nothing else).
    fn parse_idempotent(
        &mut self,
        meta: &ParseNestedMeta<'_>,
        errors: &mut Errors,
    ) -> syn::Result<()> {
        let key_span = meta
            .path
            .get_ident()
            .map_or_else(Span::call_site, |i| i.span());
        let value = if meta.input.peek(syn::Token![=]) {
            let expr: Expr = meta.value()?.parse()?;
            match &expr {
                Expr::Lit(syn::ExprLit {
                    lit: Lit::Bool(b), ..
                }) => Some(b.value),
                other => {
                    errors.push(syn::Error::new_spanned(
                        other,
                        "`idempotent` takes no value (`idempotent`) or a bool (`idempotent = true`)",
                    ));
                    None
                }
            }
        } else if meta.input.peek(syn::token::Paren) {
            let group: proc_macro2::Group = meta.input.parse()?;
            errors.at(
                group.span(),
                "`idempotent` takes no value (`idempotent`) or a bool (`idempotent = true`)",
            );
            None
        } else {
            Some(true)
        };
        if self.idempotent.is_some() {
            errors.at(key_span, "duplicate capability attribute `idempotent`");
        } else if let Some(value) = value {
            self.idempotent = Some((value, key_span));
        }
        Ok(())
    }

    /// `long_running` alone (optional), or `long_running = "optional" | "required"`.
    fn parse_long_running(
        &mut self,
        meta: &ParseNestedMeta<'_>,
        errors: &mut Errors,
    ) -> syn::Result<()> {
        const USAGE: &str = "`long_running` takes no value (`long_running`) or \"optional\" or \"required\" (`long_running = \"required\"`)";
        let key_span = meta
            .path
            .get_ident()
            .map_or_else(Span::call_site, |i| i.span());
        let variant = if meta.input.peek(syn::Token![=]) {
            let expr: Expr = meta.value()?.parse()?;
            match &expr {
                Expr::Lit(syn::ExprLit {
                    lit: Lit::Str(value),
                    ..
                }) => match value.value().as_str() {
                    "optional" => Some("Optional"),
                    "required" => Some("Required"),
                    _ => {
                        errors.at(value.span(), USAGE);
                        None
                    }
                },
                other => {
                    errors.push(syn::Error::new_spanned(other, USAGE));
                    None
                }
            }
        } else if meta.input.peek(syn::token::Paren) {
            let group: proc_macro2::Group = meta.input.parse()?;
            errors.at(group.span(), USAGE);
            None
        } else {
            Some("Optional")
        };
        if self.long_running.is_some() {
            errors.at(key_span, "duplicate capability attribute `long_running`");
        } else if let Some(variant) = variant {
            self.long_running = Some((variant, key_span));
        }
        Ok(())
    }

    fn parse_scopes(
        &mut self,
        meta: &ParseNestedMeta<'_>,
        errors: &mut Errors,
        key: &str,
    ) -> syn::Result<()> {
        let span = meta
            .path
            .get_ident()
            .map_or_else(Span::call_site, |i| i.span());
        if self.scopes_given.replace(span).is_some() {
            errors.at(span, "`scope`/`scopes` given more than once");
        }
        if key == "scope" {
            self.scopes.push(meta.value()?.parse()?);
        } else {
            self.scopes.extend(string_list(meta)?);
        }
        Ok(())
    }

    fn parse_example(
        &mut self,
        meta: &ParseNestedMeta<'_>,
        errors: &mut Errors,
    ) -> syn::Result<()> {
        let mut description = None;
        let mut input = None;
        let span = meta
            .path
            .get_ident()
            .map_or_else(Span::call_site, |i| i.span());
        meta.parse_nested_meta(|inner| {
            if inner.path.is_ident("description") {
                description = Some(inner.value()?.parse::<LitStr>()?);
                Ok(())
            } else if inner.path.is_ident("input") {
                input = Some(inner.value()?.parse::<LitStr>()?);
                Ok(())
            } else {
                Err(inner.error("expected `description = \"...\"` or `input = r#\"{...}\"#`"))
            }
        })?;
        match (description, input) {
            (Some(description), Some(input)) => {
                if rcip_core::is_blank(&description.value()) {
                    errors.at(
                        description.span(),
                        "an example needs a non-empty description",
                    );
                }
                if let Err(e) = serde_json::from_str::<serde_json::Value>(&input.value()) {
                    errors.at(input.span(), format!("example input is not JSON: {e}"));
                }
                self.examples.push(Example { description, input });
            }
            _ => errors.at(
                span,
                "an example needs both `description = \"...\"` and `input = r#\"{...}\"#`",
            ),
        }
        Ok(())
    }

    fn parse_crate(&mut self, meta: &ParseNestedMeta<'_>, errors: &mut Errors) -> syn::Result<()> {
        let value: LitStr = meta.value()?.parse()?;
        match value.parse::<Path>() {
            Ok(path) => self.krate = Some(path),
            Err(_) => errors.at(
                value.span(),
                "`crate` must name a path, e.g. \"::rcip_runtime\"",
            ),
        }
        Ok(())
    }
}

/// Consumes the value of an unknown key (`= expr` or `(...)`), so parsing goes on and the
/// remaining keys are still checked.
fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        let _: Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        let _group: proc_macro2::Group = meta.input.parse()?;
    }
    Ok(())
}

/// `key = "value"`, given at most once.
fn once(
    slot: &mut Option<LitStr>,
    meta: &ParseNestedMeta<'_>,
    errors: &mut Errors,
    key: &str,
) -> syn::Result<()> {
    let value: LitStr = meta.value()?.parse()?;
    if slot.is_some() {
        errors.at(
            value.span(),
            format!("duplicate capability attribute `{key}`"),
        );
    } else {
        *slot = Some(value);
    }
    Ok(())
}

/// `key = ["a", "b"]`.
fn string_list(meta: &ParseNestedMeta<'_>) -> syn::Result<Vec<LitStr>> {
    let array: ExprArray = meta.value()?.parse()?;
    array
        .elems
        .iter()
        .map(|element| match element {
            Expr::Lit(lit) => match &lit.lit {
                Lit::Str(s) => Ok(s.clone()),
                other => Err(syn::Error::new(other.span(), "expected a string literal")),
            },
            other => Err(syn::Error::new_spanned(other, "expected a string literal")),
        })
        .collect()
}
