//! The `#[tiling_kernel(...)]` attribute as a model. Syntax errors stop parsing (nothing sensible
//! follows them); everything else — bad values, duplicate keys — is recorded in the `Ctxt` and
//! parsing goes on, so one compile run reports all of it.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::parse::ParseStream;
use syn::punctuated::Punctuated;
use syn::{Expr, ExprLit, ExprUnary, Ident, Lit, LitInt, LitStr, Path, Token, UnOp, parenthesized};

use crate::internals::ctxt::Ctxt;

#[derive(Clone)]
pub(crate) enum Border {
    Undefined,
    Self_,
    /// A rule the SDK applies for a row kernel (a vx-rs extension, like OpenCV G-API Fluid's
    /// `getBorder`): the `BorderFill` expression, e.g. `__vx::BorderFill::Reflect101`, and the
    /// rule's `wire::row_fill` constant (`REFLECT101`, …) the fusion declaration names.
    Fill(TokenStream, &'static str),
}

pub(crate) struct Alias {
    pub a: u32,
    pub b: u32,
    pub sparse: bool,
    pub tokens: TokenStream,
}

pub(crate) enum Flexible {
    /// `flexible = path`: the annotated function is fast, `path` the flexible one.
    Path(Path),
    /// `flexible`: the annotated function is the (only) flexible function.
    This,
}

#[derive(Default)]
pub(crate) struct Attrs {
    pub name: Option<LitStr>,
    pub enumeration: Option<LitInt>,
    pub block: Option<(u32, u32)>,
    pub nbhd: Option<[i32; 4]>,
    pub border: Option<(Border, Ident)>,
    pub aliases: Vec<Alias>,
    pub tile_memory: Option<u64>,
    pub flexible: Option<Flexible>,
    pub any_size: bool,
    /// `fusion = false`: declare nothing for fused execution (the kernel then runs unfused).
    pub no_fusion: bool,
    /// Every key as written, for diagnostics that point at one.
    pub keys: Vec<Ident>,
}

const KEYS: &str = "name, enumeration, block, nbhd, border, alias, tile_memory, flexible, any_size, fusion";

const BORDERS: &str = "`Undefined` or `Self_`, or for a row kernel `Reflect101`, `Replicate` or `Constant(value)`";

fn parse_border(cx: &Ctxt, input: ParseStream<'_>) -> syn::Result<Option<(Border, Ident)>> {
    let id: Ident = input.parse()?;
    let border = match id.to_string().as_str() {
        "Undefined" => Border::Undefined,
        "Self_" => Border::Self_,
        "Reflect101" => Border::Fill(quote::quote!(__vx::BorderFill::Reflect101), "REFLECT101"),
        "Replicate" => Border::Fill(quote::quote!(__vx::BorderFill::Replicate), "REPLICATE"),
        "Constant" => {
            if !input.peek(syn::token::Paren) {
                cx.error_spanned_by(&id, "`Constant` takes the value of the pixels past the edge: `Constant(0)`");
                return Ok(None);
            }
            let content;
            parenthesized!(content in input);
            let value: Expr = content.parse()?;
            Border::Fill(quote::quote!(__vx::BorderFill::Constant(#value)), "CONSTANT")
        }
        other => {
            cx.error_spanned_by(&id, format!("unknown border `{other}`; expected {BORDERS}"));
            return Ok(None);
        }
    };
    Ok(Some((border, id)))
}

/// `WxH` arrives as an integer literal "W" with suffix "xH" (`4x1`); `0x1` is a hex literal.
fn parse_block(cx: &Ctxt, lit: &LitInt) -> Option<(u32, u32)> {
    let text = lit.to_string();
    let (w, h) = if let Some(rest) = text.strip_prefix("0x") {
        ("0".to_string(), rest.to_string())
    } else {
        match lit.suffix().strip_prefix('x') {
            Some(h) if !h.is_empty() => (lit.base10_digits().to_string(), h.to_string()),
            _ => {
                cx.error_spanned_by(lit, format!("expected a tile block `WxH` such as `4x1`, found `{text}`"));
                return None;
            }
        }
    };
    match (w.parse::<u32>(), h.parse::<u32>()) {
        (Ok(w), Ok(h)) if w >= 1 && h >= 1 => Some((w, h)),
        (Ok(_), Ok(_)) => {
            cx.error_spanned_by(lit, format!("a tile block is at least 1x1, found `{text}`"));
            None
        }
        _ => {
            cx.error_spanned_by(lit, format!("expected a tile block `WxH` such as `4x1`, found `{text}`"));
            None
        }
    }
}

fn int_of(cx: &Ctxt, e: &Expr) -> Option<i32> {
    let (neg, lit) = match e {
        Expr::Lit(ExprLit { lit: Lit::Int(l), .. }) => (false, l),
        Expr::Unary(ExprUnary { op: UnOp::Neg(_), expr, .. }) => match &**expr {
            Expr::Lit(ExprLit { lit: Lit::Int(l), .. }) => (true, l),
            _ => {
                cx.error_spanned_by(e, "expected an integer");
                return None;
            }
        },
        _ => {
            cx.error_spanned_by(e, "expected an integer");
            return None;
        }
    };
    match lit.base10_parse::<i32>() {
        Ok(v) => Some(if neg { -v } else { v }),
        Err(err) => {
            cx.error_spanned_by(e, err);
            None
        }
    }
}

fn parse_nbhd(cx: &Ctxt, input: ParseStream<'_>) -> syn::Result<Option<[i32; 4]>> {
    let content;
    let parens = parenthesized!(content in input);
    let values = Punctuated::<Expr, Token![,]>::parse_terminated(&content)?;
    if values.len() != 4 {
        let span = parens.span.join();
        cx.syn_error_at(
            span,
            format!(
                "a neighborhood has four values (left, right, top, bottom), e.g. `(-1, 1, -1, 1)`; found {}",
                values.len()
            ),
        );
        return Ok(None);
    }
    let v: Vec<Option<i32>> = values.iter().map(|e| int_of(cx, e)).collect();
    let [Some(l), Some(r), Some(t), Some(b)] = [v[0], v[1], v[2], v[3]] else { return Ok(None) };
    let checks = [
        (l, "left", "<= 0", l <= 0),
        (r, "right", ">= 0", r >= 0),
        (t, "top", "<= 0", t <= 0),
        (b, "bottom", ">= 0", b >= 0),
    ];
    let mut ok = true;
    for ((_, side, want, good), e) in checks.iter().zip(values.iter()) {
        if !good {
            ok = false;
            cx.error_spanned_by(
                e,
                format!("the {side} offset of the neighborhood must be {want} (order: left, right, top, bottom — are the signs swapped?)"),
            );
        }
    }
    Ok(ok.then_some([l, r, t, b]))
}

fn parse_alias(cx: &Ctxt, input: ParseStream<'_>) -> syn::Result<Option<Alias>> {
    let content;
    parenthesized!(content in input);
    let tokens: TokenStream = content.fork().parse()?;
    let a: LitInt = content.parse()?;
    content.parse::<Token![,]>()?;
    let b: LitInt = content.parse()?;
    content.parse::<Token![,]>()?;
    let kind: Ident = content.parse()?;
    let sparse = match kind.to_string().as_str() {
        "sparse" => true,
        "dense" => false,
        other => {
            cx.error_spanned_by(&kind, format!("unknown alias kind `{other}`; expected `dense` or `sparse`"));
            return Ok(None);
        }
    };
    Ok(Some(Alias { a: a.base10_parse()?, b: b.base10_parse()?, sparse, tokens }))
}

impl Attrs {
    /// Parse the attribute's arguments.
    pub(crate) fn parse(cx: &Ctxt, args: TokenStream) -> syn::Result<Attrs> {
        let mut attrs = Attrs::default();
        let mut seen: Vec<String> = Vec::new();
        let parser = syn::meta::parser(|meta| {
            let key = meta.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
            if let Some(id) = meta.path.get_ident() {
                attrs.keys.push(id.clone());
            }
            if key != "alias" {
                if seen.contains(&key) {
                    cx.error_spanned_by(&meta.path, format!("duplicate key `{key}`"));
                }
                seen.push(key.clone());
            }
            match key.as_str() {
                "name" => attrs.name = Some(meta.value()?.parse()?),
                "enumeration" => attrs.enumeration = Some(meta.value()?.parse()?),
                "block" => {
                    let lit: LitInt = meta.value()?.parse()?;
                    attrs.block = parse_block(cx, &lit);
                }
                "nbhd" => attrs.nbhd = parse_nbhd(cx, meta.value()?)?,
                "border" => {
                    if let Some(b) = parse_border(cx, meta.value()?)? {
                        attrs.border = Some(b);
                    }
                }
                "alias" => {
                    if let Some(a) = parse_alias(cx, meta.input)? {
                        attrs.aliases.push(a);
                    }
                }
                "tile_memory" => attrs.tile_memory = Some(meta.value()?.parse::<LitInt>()?.base10_parse()?),
                "flexible" => {
                    if meta.input.peek(Token![=]) {
                        attrs.flexible = Some(Flexible::Path(meta.value()?.parse()?));
                    } else {
                        attrs.flexible = Some(Flexible::This);
                    }
                }
                "any_size" => attrs.any_size = true,
                "fusion" => {
                    let value: Expr = meta.value()?.parse()?;
                    match &value {
                        Expr::Lit(ExprLit { lit: Lit::Bool(b), .. }) => attrs.no_fusion = !b.value,
                        _ => cx.error_spanned_by(
                            &value,
                            "expected `fusion = false` (declare nothing for fused execution; the kernel runs \
                             unfused) or `fusion = true` (the default)",
                        ),
                    }
                }
                _ => {
                    cx.error_spanned_by(
                        &meta.path,
                        format!("unknown key `{}`; expected one of: {KEYS}", meta.path.to_token_stream()),
                    );
                    // Skip a `= value` or `(...)` so the other keys still get checked.
                    if meta.input.peek(Token![=]) {
                        let _: Expr = meta.value()?.parse()?;
                    } else if meta.input.peek(syn::token::Paren) {
                        let content;
                        parenthesized!(content in meta.input);
                        let _: TokenStream = content.parse()?;
                    }
                }
            }
            Ok(())
        });
        syn::parse::Parser::parse2(parser, args)?;
        Ok(attrs)
    }
}
