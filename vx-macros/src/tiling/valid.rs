//! Checks that need both the attribute and the signature.

use syn::ItemFn;

use crate::internals::ast::{Arg, InPlaceHalf, ParamKind, is_row_form, params};
use crate::internals::ctxt::Ctxt;
use crate::tiling::attr::{Attrs, Border, Flexible};

pub(crate) fn check(cx: &Ctxt, f: &ItemFn, attrs: &Attrs, args: &[Arg]) {
    crate::internals::expand::check_name(cx, f, attrs.name.as_ref());
    let params = params(args);
    let row_form = is_row_form(f);
    if !params.iter().any(|p| matches!(p.kind, ParamKind::Output(_))) && !args.is_empty() {
        let view = if row_form { "`&mut [T]`, a row of it" } else { "`&mut TileMut<T>`" };
        cx.error_spanned_by(&f.sig.ident, format!("a tiling kernel needs at least one output image ({view})"));
    }
    check_border(cx, f, attrs, row_form);
    if attrs.tile_memory.is_none_or(|m| m == 0) {
        for (input, arg) in f.sig.inputs.iter().zip(args) {
            if matches!(arg, Arg::Extra(crate::internals::ast::Extra::TileMemory)) {
                cx.error_spanned_by(
                    input,
                    "`&mut [u8]` is the tile's memory, and the kernel asks for none: add `tile_memory = <bytes per tile>`",
                );
            }
        }
    }
    if row_form {
        check_row_form(cx, f, attrs, args);
    }
    for alias in &attrs.aliases {
        let n = params.len() as u32;
        for i in [alias.a, alias.b] {
            if i >= n {
                cx.error_spanned_by(
                    &alias.tokens,
                    format!("alias index {i} is out of range: the kernel has {n} parameter(s)"),
                );
            }
        }
        if alias.a < n && alias.b < n {
            let (ka, kb) = (&params[alias.a as usize].kind, &params[alias.b as usize].kind);
            match (ka, kb) {
                (ParamKind::Input(_), ParamKind::Output(_)) | (ParamKind::Output(_), ParamKind::Input(_)) => {}
                (ParamKind::Input(_), ParamKind::Input(_)) => cx.error_spanned_by(
                    &alias.tokens,
                    "an alias pairs an input image with an output image; these are two inputs",
                ),
                (ParamKind::Output(_), ParamKind::Output(_)) => cx.error_spanned_by(
                    &alias.tokens,
                    "an alias pairs an input image with an output image; these are two outputs",
                ),
                _ => cx.error_spanned_by(&alias.tokens, "only images can alias, not scalars"),
            }
        }
    }
    for (i, p) in params.iter().enumerate() {
        if p.in_place != Some(InPlaceHalf::First) {
            continue;
        }
        let (a, b) = (i as u32, i as u32 + 1);
        if !attrs.aliases.iter().any(|al| (al.a, al.b) == (a, b) || (al.a, al.b) == (b, a)) {
            cx.error_spanned_by(
                &f.sig.ident,
                format!(
                    "an `&mut InPlace<T>` argument is parameters {a} (input) and {b} (output): declare how it \
                     touches them with `alias({a}, {b}, dense)` or `alias({a}, {b}, sparse)`"
                ),
            );
        }
    }
    if let Some((Border::Self_, id)) = &attrs.border
        && !row_form
        && attrs.flexible.is_none()
    {
        cx.error_spanned_by(
            id,
            "border `Self_` needs a flexible function, and this kernel has only a fast one: add `flexible = path` or \
             `flexible`, or use `border = Undefined`",
        );
    }
    if let Some(Flexible::Path(p)) = &attrs.flexible
        && p.is_ident(&f.sig.ident)
    {
        cx.error_spanned_by(p, "`flexible = path` names another function; for a flexible-only kernel write `flexible`");
    }
}

/// Which border a kernel of this form may declare: a rule (`Reflect101`, …) only for a row kernel,
/// and a row kernel only a rule.
fn check_border(cx: &Ctxt, f: &ItemFn, attrs: &Attrs, row_form: bool) {
    match (&attrs.border, row_form) {
        (Some((Border::Fill(..), id)), false) => cx.error_spanned_by(
            id,
            format!(
                "border `{id}` is a rule the SDK applies for a row kernel: take the input as `Rows<T, N>` and each \
                 output as `&mut [T]`; a kernel with `Tile` views handles its border itself (`Self_`, e.g. with \
                 `Tile::for_rows`) or leaves it `Undefined`"
            ),
        ),
        (Some((Border::Undefined | Border::Self_, id)), true) => cx.error_spanned_by(
            id,
            "a row kernel gets the pixels past the image edge from the SDK: give the rule, `border = Reflect101`, \
             `Replicate` or `Constant(value)`",
        ),
        // A `border` that did not parse has its own error already.
        (None, true) if !attrs.keys.iter().any(|k| k == "border") => cx.error_spanned_by(
            &f.sig.ident,
            "a row kernel (`Rows<T, N>` input) needs a border rule: add `border = Reflect101`, `Replicate` or \
             `Constant(value)`",
        ),
        _ => {}
    }
}

/// A row kernel: one `Rows<T, N>` input whose `N` is the neighborhood's height, required
/// parameters, and none of the keys that describe tiles (the SDK decides those).
fn check_row_form(cx: &Ctxt, f: &ItemFn, attrs: &Attrs, args: &[Arg]) {
    for key in &attrs.keys {
        let k = key.to_string();
        if ["block", "flexible", "tile_memory", "alias", "any_size"].contains(&k.as_str()) {
            cx.error_spanned_by(
                key,
                format!(
                    "`{k}` does not apply to a row kernel: the SDK runs its row function on every tile (1x1 blocks, \
                     rows border-extended, images of one size)"
                ),
            );
        }
    }
    let [l, r, t, b] = attrs.nbhd.unwrap_or([0; 4]);
    let height = (b - t + 1) as u64;
    let params = params(args);
    let rows: Vec<_> = params.iter().filter_map(|p| p.rows.as_ref()).collect();
    if rows.len() > 1 {
        cx.error_spanned_by(rows[1], "a row kernel takes one `Rows<T, N>` input");
    }
    if let Some(syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(n), .. })) = rows.first()
        && n.base10_parse::<u64>().ok() != Some(height)
    {
        cx.error_spanned_by(
            n,
            format!(
                "`Rows<T, {n}>` takes {n} rows, but the neighborhood (top {t}, bottom {b}) spans {height}: write \
                 `Rows<T, {height}>` or change `nbhd`"
            ),
        );
    }
    if (r - l) as usize > 32 {
        cx.error_spanned_by(
            &f.sig.ident,
            format!("a row kernel's neighborhood is at most 32 pixels wide beyond the output (right - left), this one is {}", r - l),
        );
    }
    if params.iter().any(|p| p.optional) {
        cx.error_spanned_by(&f.sig.ident, "a row kernel's parameters are all required (no `Option<...>`)");
    }
}
