//! Checks that need both the attribute and the signature.

use syn::ItemFn;

use crate::internals::ast::{Arg, ParamKind, params};
use crate::internals::ctxt::Ctxt;
use crate::tiling::attr::{Attrs, Border, Flexible};

pub(crate) fn check(cx: &Ctxt, f: &ItemFn, attrs: &Attrs, args: &[Arg]) {
    let params = params(args);
    if !params.iter().any(|p| matches!(p.kind, ParamKind::Output(_))) && !args.is_empty() {
        cx.error_spanned_by(&f.sig.ident, "a tiling kernel needs at least one output image (`&mut TileMut<T>`)");
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
    if let Some((Border::SelfBorder, id)) = &attrs.border
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
