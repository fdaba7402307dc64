//! The annotated function as a model: each argument classified as a kernel parameter (in argument
//! order) or an extra (tile memory, tile context).

use syn::{FnArg, GenericArgument, ItemFn, PathArguments, Type, TypePath, TypeReference};

use crate::ctxt::Ctxt;

#[derive(Clone)]
pub(crate) enum ParamKind {
    /// `&Tile<T>`
    Input(Type),
    /// `&mut TileMut<T>`
    Output(Type),
    /// a scalar by value
    Scalar(Type),
}

#[derive(Clone)]
pub(crate) struct Param {
    pub kind: ParamKind,
    pub optional: bool,
}

pub(crate) enum Arg {
    Param(Box<Param>),
    /// `&mut [u8]`: this tile's memory.
    TileMemory,
    /// `TileContext`: answers is-parameter-aliased.
    Context,
}

/// The kernel parameters among `args`, in order.
pub(crate) fn params(args: &[Arg]) -> Vec<&Param> {
    args.iter().filter_map(|a| if let Arg::Param(p) = a { Some(&**p) } else { None }).collect()
}

const SCALARS: [&str; 11] = ["u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f32", "f64", "bool"];

fn last_segment(ty: &Type) -> Option<(&syn::Ident, &PathArguments)> {
    match ty {
        Type::Path(TypePath { qself: None, path }) => path.segments.last().map(|s| (&s.ident, &s.arguments)),
        _ => None,
    }
}

fn single_generic(args: &PathArguments) -> Option<&Type> {
    match args {
        PathArguments::AngleBracketed(a) => {
            let types: Vec<&Type> =
                a.args.iter().filter_map(|g| if let GenericArgument::Type(t) = g { Some(t) } else { None }).collect();
            (types.len() == 1).then(|| types[0])
        }
        _ => None,
    }
}

fn classify(ty: &Type) -> Option<(ParamKind, bool)> {
    if let Some((id, args)) = last_segment(ty)
        && id == "Option"
    {
        let inner = single_generic(args)?;
        let (k, opt) = classify(inner)?;
        return (!opt).then_some((k, true));
    }
    match ty {
        Type::Reference(TypeReference { mutability, elem, .. }) => {
            let (id, args) = last_segment(elem)?;
            let t = single_generic(args)?.clone();
            match (mutability.is_some(), id.to_string().as_str()) {
                (false, "Tile") => Some((ParamKind::Input(t), false)),
                (true, "TileMut") => Some((ParamKind::Output(t), false)),
                _ => None,
            }
        }
        _ => {
            let (id, args) = last_segment(ty)?;
            (matches!(args, PathArguments::None) && SCALARS.contains(&id.to_string().as_str()))
                .then(|| (ParamKind::Scalar(ty.clone()), false))
        }
    }
}

fn is_tile_memory(ty: &Type) -> bool {
    matches!(ty, Type::Reference(TypeReference { mutability: Some(_), elem, .. })
        if matches!(&**elem, Type::Slice(s) if last_segment(&s.elem).is_some_and(|(i, _)| i == "u8")))
}

fn is_context(ty: &Type) -> bool {
    last_segment(ty).is_some_and(|(i, _)| i == "TileContext")
}

/// Classify every argument of `f`.
pub(crate) fn args(cx: &Ctxt, f: &ItemFn) -> Vec<Arg> {
    if let Some(a) = &f.sig.asyncness {
        cx.error_spanned_by(a, "a kernel function cannot be async");
    }
    if !f.sig.generics.params.is_empty() {
        cx.error_spanned_by(&f.sig.generics, "a kernel function cannot be generic");
    }
    let mut out = Vec::new();
    for input in &f.sig.inputs {
        match input {
            FnArg::Receiver(r) => cx.error_spanned_by(r, "a kernel function cannot take `self`"),
            FnArg::Typed(pt) => {
                let ty = &*pt.ty;
                if is_tile_memory(ty) {
                    out.push(Arg::TileMemory);
                } else if is_context(ty) {
                    out.push(Arg::Context);
                } else if let Some((kind, optional)) = classify(ty) {
                    out.push(Arg::Param(Box::new(Param { kind, optional })));
                } else {
                    cx.error_spanned_by(
                        ty,
                        "unsupported parameter type: expected `&Tile<T>` (input image), `&mut TileMut<T>` (output image), a \
                         scalar (u8, i8, u16, i16, u32, i32, u64, i64, f32, f64, bool), `Option<...>` of those, `&mut [u8]` \
                         (tile memory) or `TileContext`",
                    );
                }
            }
        }
    }
    out
}
