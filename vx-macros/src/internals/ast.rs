//! The annotated function as a model, shared by `#[tiling_kernel]` and `#[user_kernel]`: each
//! argument is a kernel parameter (in argument order: input image, output image or scalar, each
//! possibly `Option<…>` = an optional parameter) or an extra that is not a parameter (tile memory and
//! tile context for tiling kernels, the typed state and kernel memory blocks for user kernels). The
//! two attributes differ only in their image view types ([`Flavor`]).

use quote::ToTokens;
use syn::{FnArg, GenericArgument, ItemFn, PathArguments, Type, TypePath, TypeReference};

use crate::internals::ctxt::Ctxt;

/// Which attribute: its image view types and extras.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// `&Tile<T>` / `&mut TileMut<T>`; extras `&mut [u8]` (tile memory) and `TileContext`.
    Tiling,
    /// `&ImageIn<T>` / `&mut ImageOut<T>`; extra `&mut L` (the `local = L` state).
    User,
    /// A tiling kernel in row form: `Rows<T, N>` (an input's neighborhood rows, border-extended by
    /// the SDK) and `&mut [T]` (an output row); no extras.
    Rows,
}

impl Flavor {
    fn views(self) -> (&'static str, &'static str) {
        match self {
            Flavor::Tiling => ("Tile", "TileMut"),
            Flavor::User => ("ImageIn", "ImageOut"),
            Flavor::Rows => ("Rows", "[T]"),
        }
    }

    fn expected(self) -> &'static str {
        match self {
            Flavor::Tiling => {
                "unsupported parameter type: expected `&Tile<T>` (input image), `&mut TileMut<T>` (output image), \
                 `&mut InPlace<T>` (an input and the next output, read-modify-write), a scalar (u8, i8, u16, i16, u32, i32, u64, i64, f32, f64, bool), `Option<...>` of those, `&mut [u8]` \
                 (tile memory) or `TileContext`"
            }
            Flavor::User => {
                "unsupported parameter type: expected `&ImageIn<T>` (input image), `&mut ImageOut<T>` (output image), a \
                 scalar (u8, i8, u16, i16, u32, i32, u64, i64, f32, f64, bool), a view of any object by `&` (input) or \
                 `&mut` (output) (`vx_plugin_abi::views`); `Option<...>` of those, `&mut L` \
                 for the `local = L` state, or `&mut [T]` for a memory block named in `scratch(...)` / `persistent(...)`"
            }
            Flavor::Rows => {
                "unsupported parameter type in a row kernel: expected `Rows<T, N>` (an input image's neighborhood \
                 rows), `&mut [T]` (an output row) or a scalar (u8, i8, u16, i16, u32, i32, u64, i64, f32, f64, bool)"
            }
        }
    }
}

/// What a parameter is.
#[derive(Clone)]
pub(crate) enum ParamKind {
    /// An input image of pixel type `T`.
    Input(Type),
    /// An output image of pixel type `T`.
    Output(Type),
    /// An input scalar by value.
    ByValue(Type),
    /// A typed view of any object (`vx_plugin_abi::views`, user kernels): `&View` an input,
    /// `&mut View` an output. `ty` is the view type as written.
    Object { ty: Type, output: bool },
}

impl ParamKind {
    /// The view's name (`Matrix`, `Pyramid`, …) of an object parameter.
    pub(crate) fn view_name(&self) -> Option<String> {
        match self {
            ParamKind::Object { ty, .. } => last_segment(ty).map(|(i, _)| i.to_string()),
            _ => None,
        }
    }
}

/// The other flavors' image forms: refused in a user kernel by the macro (they are no views).
const OTHER_FORMS: [&str; 5] = ["Tile", "TileMut", "InPlace", "Rows", "TileContext"];

/// One kernel parameter.
#[derive(Clone)]
pub(crate) struct Param {
    pub(crate) kind: ParamKind,
    /// The argument's name (`src`), for the kernel's description (`vx inspect`, graph files) and
    /// the generated validator's messages; an argument that is a pattern (`[a, b, c]: Rows<u8, 3>`,
    /// `_: u8`) gets one by [`pattern_names`]. An in-place half shows it with ` (in)` / ` (out)`
    /// ([`Param::shown_name`]).
    pub(crate) name: String,
    /// The argument's type as written (`Rows<u8, 3>`, `&Tile<u8>`, `Option<&mut TileMut<u8>>`),
    /// for the generated validator's messages.
    pub(crate) view: String,
    /// `Option<…>`: the parameter is optional (`VX_PARAMETER_STATE_OPTIONAL`).
    pub(crate) optional: bool,
    /// `Rows<T, N>`: the row count `N` as written.
    pub(crate) rows: Option<syn::Expr>,
    /// Half of an `&mut InPlace<T>` argument (tiling): the input (`First`, bound and passed as the
    /// view) or the output (`Second`, neither bound nor passed).
    pub(crate) in_place: Option<InPlaceHalf>,
}

impl Param {
    /// The parameter's registered name: its argument's, with ` (in)` or ` (out)` for a half of an
    /// `&mut InPlace<T>` argument.
    pub(crate) fn shown_name(&self) -> String {
        match self.in_place {
            None => self.name.clone(),
            Some(InPlaceHalf::First) => format!("{} (in)", self.name),
            Some(InPlaceHalf::Second) => format!("{} (out)", self.name),
        }
    }

    /// True for an output (an image or a view taken by `&mut`).
    fn is_output(&self) -> bool {
        matches!(self.kind, ParamKind::Output(_) | ParamKind::Object { output: true, .. })
    }
}

/// Which half of an `&mut InPlace<T>` argument a parameter is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum InPlaceHalf {
    /// The input, at index `i`.
    First,
    /// The output, at index `i + 1`.
    Second,
}

/// `&mut InPlace<T>`: `T`.
fn in_place_of(ty: &Type) -> Option<Type> {
    let Type::Reference(TypeReference { mutability: Some(_), elem, .. }) = ty else { return None };
    let (id, args) = last_segment(elem)?;
    (id == "InPlace").then(|| single_generic(args).cloned()).flatten()
}

/// An argument that is not a kernel parameter.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Extra {
    /// `&mut [u8]`: this tile's memory (tiling).
    TileMemory,
    /// `TileContext`: answers is-parameter-aliased (tiling).
    Context,
    /// `&mut L`: the node's typed state (user, with `local = L`).
    Local,
}

/// A kernel memory region a request names (`vx_plugin_abi::memory::MemRegion`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Region {
    /// `persistent(...)`: init to deinit.
    Persistent,
    /// `scratch(...)`: one callback, in the executor's scratch arena.
    Scratch,
}

impl Region {
    pub(crate) fn key(self) -> &'static str {
        match self {
            Region::Persistent => "persistent",
            Region::Scratch => "scratch",
        }
    }
}

/// A memory request `name = count` in `scratch(...)` or `persistent(...)` (user kernels): the
/// function's argument `name: &mut [T]` receives the block of `count` elements of `T`.
pub(crate) struct MemRequest {
    pub(crate) region: Region,
    pub(crate) name: syn::Ident,
    /// A `usize` expression or a function of the node's `Lifecycle` (`macro_support::MemCount`).
    pub(crate) count: syn::Expr,
}

/// The argument a memory request names.
pub(crate) struct MemArg {
    /// Which request (index into the requests, in attribute order).
    pub(crate) request: usize,
    pub(crate) region: Region,
    /// The block's number in its region: requests are allocated in order.
    pub(crate) nth: u32,
    /// `T` of `&mut [T]`.
    pub(crate) elem: Type,
}

/// One argument of the annotated function.
pub(crate) enum Arg {
    /// A kernel parameter.
    Param(Box<Param>),
    /// Something else the SDK passes.
    Extra(Extra),
    /// A kernel memory block (user kernels).
    Memory(Box<MemArg>),
}

/// The kernel parameters among `args`, in order.
pub(crate) fn params(args: &[Arg]) -> Vec<&Param> {
    args.iter().filter_map(|a| if let Arg::Param(p) = a { Some(&**p) } else { None }).collect()
}

const SCALARS: [&str; 11] = ["u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f32", "f64", "bool"];

/// The pixel types of images (the SDK's `TilePixel`), for messages.
pub(crate) const PIXELS: &str =
    "`u8` (U8), `u16` (U16), `i16` (S16), `u32` (U32), `i32` (S32), `[u8; 3]` (RGB) or `[u8; 4]` (RGBX)";

/// The single-plane pixel types that are primitives.
const PIXEL_PRIMITIVES: [&str; 5] = ["u8", "u16", "i16", "u32", "i32"];

const PRIMITIVES: [&str; 17] = [
    "u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "u128", "i128", "usize", "isize", "f32", "f64", "bool",
    "char", "str",
];

/// The primitive a type path names (`f64`, `core::primitive::f64`), if it names one.
fn primitive(ty: &Type) -> Option<String> {
    let Type::Path(TypePath { qself: None, path }) = ty else { return None };
    let last = path.segments.last()?;
    let name = last.ident.to_string();
    let prefix_ok = match path.segments.len() {
        1 => path.leading_colon.is_none(),
        3 => {
            let s: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
            matches!(s[0].as_str(), "core" | "std") && s[1] == "primitive"
        }
        _ => false,
    };
    (prefix_ok && matches!(last.arguments, PathArguments::None) && PRIMITIVES.contains(&name.as_str())).then_some(name)
}

/// True when `ty` certainly is no pixel type. `TilePixel` is sealed, so only the SDK's types are,
/// and a name the macro cannot see through (an alias, a path of the crate's) might be one: those
/// are left to the compiler. A primitive other than the five, a tuple, a reference, a slice or an
/// array other than `[u8; 3]` / `[u8; 4]` never is.
pub(crate) fn not_a_pixel(ty: &Type) -> bool {
    match ty {
        Type::Path(_) => primitive(ty).is_some_and(|p| !PIXEL_PRIMITIVES.contains(&p.as_str())),
        Type::Array(a) => {
            let elem_not_u8 = primitive(&a.elem).is_some_and(|p| p != "u8") || not_a_pixel_shape(&a.elem);
            let len_wrong = match &a.len {
                syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(n), .. }) => !matches!(n.base10_digits(), "3" | "4"),
                _ => false,
            };
            elem_not_u8 || len_wrong
        }
        Type::Paren(p) => not_a_pixel(&p.elem),
        Type::Group(g) => not_a_pixel(&g.elem),
        other => not_a_pixel_shape(other),
    }
}

/// A type whose form alone rules it out as a pixel (nor as an array's `u8`).
fn not_a_pixel_shape(ty: &Type) -> bool {
    matches!(
        ty,
        Type::Tuple(_)
            | Type::Reference(_)
            | Type::Slice(_)
            | Type::Ptr(_)
            | Type::BareFn(_)
            | Type::Never(_)
            | Type::TraitObject(_)
            | Type::ImplTrait(_)
            | Type::Array(_)
    )
}

/// The view types whose generic argument is a pixel type.
const PIXEL_VIEWS: [&str; 7] = ["Tile", "TileMut", "InPlace", "ImageIn", "ImageOut", "Image", "Pyramid"];

/// Report `ty` (a pixel type position) when it is no pixel type.
fn check_pixel(cx: &Ctxt, ty: &Type) {
    if not_a_pixel(ty) {
        let shown = ty.to_token_stream().to_string().replace(" ;", ";").replace("& ", "&");
        cx.error_spanned_by(ty, format!("`{shown}` is not a pixel type: images hold {PIXELS}"));
    }
}

/// The function as the fallback expansion keeps it: a pixel type the checks refused is `u8` in
/// its signature (else rustc would add its own error for each), and then the body, written for
/// the refused type, is left out (the signature still resolves the names the function uses).
pub(crate) fn fallback_fn(f: &ItemFn) -> ItemFn {
    struct Fix(bool);
    impl syn::visit_mut::VisitMut for Fix {
        fn visit_path_segment_mut(&mut self, seg: &mut syn::PathSegment) {
            if PIXEL_VIEWS.contains(&seg.ident.to_string().as_str())
                && let PathArguments::AngleBracketed(a) = &mut seg.arguments
                && let Some(GenericArgument::Type(t)) =
                    a.args.iter_mut().find(|g| matches!(g, GenericArgument::Type(_)))
                && not_a_pixel(t)
            {
                *t = syn::parse_quote!(u8);
                self.0 = true;
            }
            syn::visit_mut::visit_path_segment_mut(self, seg);
        }
    }
    let mut out = f.clone();
    let mut fix = Fix(false);
    for input in &mut out.sig.inputs {
        syn::visit_mut::VisitMut::visit_fn_arg_mut(&mut fix, input);
    }
    if fix.0 {
        out.attrs.push(syn::parse_quote!(#[allow(unused_variables)]));
        out.block = Box::new(syn::parse_quote!({ ::core::unreachable!() }));
    }
    out
}

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

/// `Rows<T, N>`: `T` and `N`.
fn rows_of(ty: &Type) -> Option<(Type, syn::Expr)> {
    let (id, PathArguments::AngleBracketed(a)) = last_segment(ty)? else { return None };
    if id != "Rows" {
        return None;
    }
    let mut t = None;
    let mut n = None;
    for g in &a.args {
        match g {
            GenericArgument::Type(Type::Path(p)) if t.is_some() && n.is_none() => {
                n = Some(syn::Expr::Path(syn::ExprPath { attrs: Vec::new(), qself: None, path: p.path.clone() }))
            }
            GenericArgument::Type(ty) if t.is_none() => t = Some(ty.clone()),
            GenericArgument::Const(e) if t.is_some() && n.is_none() => n = Some(e.clone()),
            GenericArgument::Lifetime(_) => {}
            _ => return None,
        }
    }
    Some((t?, n?))
}

/// Whether `f` is a row kernel: one of its arguments is `Rows<…>`.
pub(crate) fn is_row_form(f: &ItemFn) -> bool {
    f.sig.inputs.iter().any(|a| matches!(a, FnArg::Typed(pt) if last_segment(&pt.ty).is_some_and(|(i, _)| i == "Rows")))
}

fn classify(flavor: Flavor, ty: &Type) -> Option<(ParamKind, bool, Option<syn::Expr>)> {
    if let Some((id, args)) = last_segment(ty)
        && id == "Option"
    {
        let inner = single_generic(args)?;
        let (k, opt, rows) = classify(flavor, inner)?;
        return (!opt).then_some((k, true, rows));
    }
    if flavor == Flavor::Rows {
        if let Some((t, n)) = rows_of(ty) {
            return Some((ParamKind::Input(t), false, Some(n)));
        }
        if let Type::Reference(TypeReference { mutability: Some(_), elem, .. }) = ty
            && let Type::Slice(s) = &**elem
        {
            return Some((ParamKind::Output((*s.elem).clone()), false, None));
        }
        let (id, args) = last_segment(ty)?;
        return (matches!(args, PathArguments::None) && SCALARS.contains(&id.to_string().as_str()))
            .then(|| (ParamKind::ByValue(ty.clone()), false, None));
    }
    let (input, output) = flavor.views();
    match ty {
        Type::Reference(TypeReference { mutability, elem, .. }) => {
            let (id, args) = last_segment(elem)?;
            let name = id.to_string();
            if flavor == Flavor::User && name != input && name != output && !OTHER_FORMS.contains(&name.as_str()) {
                // Any other type by reference is a view, resolved through `ViewKind` at the
                // user's compile time (rustc names the views when it is none).
                return Some((ParamKind::Object { ty: (**elem).clone(), output: mutability.is_some() }, false, None));
            }
            let t = single_generic(args)?.clone();
            match (mutability.is_some(), id.to_string()) {
                (false, v) if v == input => Some((ParamKind::Input(t), false, None)),
                (true, v) if v == output => Some((ParamKind::Output(t), false, None)),
                _ => None,
            }
        }
        _ => {
            let (id, args) = last_segment(ty)?;
            (matches!(args, PathArguments::None) && SCALARS.contains(&id.to_string().as_str()))
                .then(|| (ParamKind::ByValue(ty.clone()), false, None))
        }
    }
}

fn extra(flavor: Flavor, ty: &Type, local: Option<&Type>) -> Option<Extra> {
    let same = |a: &Type, b: &Type| a.to_token_stream().to_string() == b.to_token_stream().to_string();
    match flavor {
        Flavor::Tiling => {
            let tile_memory = matches!(ty, Type::Reference(TypeReference { mutability: Some(_), elem, .. })
                if matches!(&**elem, Type::Slice(s) if last_segment(&s.elem).is_some_and(|(i, _)| i == "u8")));
            if tile_memory {
                Some(Extra::TileMemory)
            } else {
                last_segment(ty).is_some_and(|(i, _)| i == "TileContext").then_some(Extra::Context)
            }
        }
        Flavor::Rows => None,
        Flavor::User => match (ty, local) {
            (Type::Reference(TypeReference { mutability: Some(_), elem, .. }), Some(l)) if same(l, elem) => {
                Some(Extra::Local)
            }
            _ => None,
        },
    }
}

/// `&mut [T]`: `T`.
fn slice_of(ty: &Type) -> Option<&Type> {
    match ty {
        Type::Reference(TypeReference { mutability: Some(_), elem, .. }) => match &**elem {
            Type::Slice(s) => Some(&s.elem),
            _ => None,
        },
        _ => None,
    }
}

/// `Some` when `pt` is the argument a memory request names (by its identifier): the argument, or
/// `None` when its type is wrong (reported).
fn memory_arg(cx: &Ctxt, pt: &syn::PatType, memory: &[MemRequest], used: &mut [bool]) -> Option<Option<Arg>> {
    let syn::Pat::Ident(pi) = &*pt.pat else { return None };
    let k = memory.iter().position(|m| m.name == pi.ident)?;
    let m = &memory[k];
    used[k] = true;
    let Some(elem) = slice_of(&pt.ty) else {
        cx.error_spanned_by(
            &pt.ty,
            format!("`{}` is a {} memory request: its argument is `&mut [T]` (T: u8, i8, u16, i16, u32, i32, u64, i64, f32, f64)", m.name, m.region.key()),
        );
        return Some(None);
    };
    let nth = memory[..k].iter().filter(|o| o.region == m.region).count() as u32;
    Some(Some(Arg::Memory(Box::new(MemArg { request: k, region: m.region, nth, elem: elem.clone() }))))
}

/// An argument's name: its identifier (`src`, `mut src`, `src @ ..`), or `None` for a pattern
/// (`[a, b, c]`, `_`), which [`pattern_names`] names.
fn arg_name(pat: &syn::Pat) -> Option<String> {
    match pat {
        syn::Pat::Ident(pi) => Some(pi.ident.to_string()),
        syn::Pat::Paren(p) => arg_name(&p.pat),
        _ => None,
    }
}

/// A type as a reader writes it (`Rows<u8, 3>`, `&mut [u8]`, `Option<&Tile<u8>>`), not with the
/// token stream's spacing (`Rows < u8 , 3 >`).
pub(crate) fn type_text(ty: &Type) -> String {
    let mut s = ty.to_token_stream().to_string();
    for (from, to) in
        [(" <", "<"), ("< ", "<"), (" >", ">"), (" ,", ","), ("& ", "&"), ("[ ", "["), (" ]", "]"), (" ;", ";")]
    {
        s = s.replace(from, to);
    }
    s.replace(" :: ", "::").replace(":: ", "::").replace(" ::", "::")
}

/// The names of `n` parameters of one direction whose arguments are patterns: `base` (`input` or
/// `output`) for one, else `base1`, `base2`, … in argument order; a name another argument of the
/// function has (`taken`) is skipped.
pub(crate) fn generated_names(base: &str, n: usize, taken: &[String]) -> Vec<String> {
    if n == 1 && !taken.iter().any(|t| t == base) {
        return vec![base.to_owned()];
    }
    (1..).map(|k| format!("{base}{k}")).filter(|c| !taken.contains(c)).take(n).collect()
}

/// Name the parameters whose argument is a pattern (`unnamed`: their indices in `out`; the first
/// half of an in-place pair stands for both): inputs `input`, outputs `output`
/// ([`generated_names`]).
fn pattern_names(out: &mut [Arg], unnamed: &[usize]) {
    fn param(a: &Arg) -> Option<&Param> {
        if let Arg::Param(p) = a { Some(p) } else { None }
    }
    let taken: Vec<String> = out
        .iter()
        .enumerate()
        .filter(|(i, a)| !unnamed.contains(i) && param(a).is_some_and(|p| p.in_place != Some(InPlaceHalf::Second)))
        .filter_map(|(_, a)| param(a).map(|p| p.name.clone()))
        .collect();
    for (base, output) in [("input", false), ("output", true)] {
        let of_kind: Vec<usize> =
            unnamed.iter().copied().filter(|&i| param(&out[i]).is_some_and(|p| p.is_output() == output)).collect();
        for (&i, name) in of_kind.iter().zip(generated_names(base, of_kind.len(), &taken)) {
            let pair = param(&out[i]).is_some_and(|p| p.in_place == Some(InPlaceHalf::First));
            for a in &mut out[i..=i + pair as usize] {
                if let Arg::Param(p) = a {
                    p.name = name.clone();
                }
            }
        }
    }
}

/// Classify every argument of `f`, collecting every error. `memory`: the user kernel's memory
/// requests (each names one argument).
pub(crate) fn args(cx: &Ctxt, flavor: Flavor, f: &ItemFn, local: Option<&Type>, memory: &[MemRequest]) -> Vec<Arg> {
    super::placement::check(cx, f);
    super::module_entry::check(cx, f);
    if let Some(a) = &f.sig.asyncness {
        cx.error_spanned_by(a, "a kernel function cannot be async");
    }
    if !f.sig.generics.params.is_empty() {
        cx.error_spanned_by(&f.sig.generics, "a kernel function cannot be generic");
    }
    let mut out = Vec::new();
    // Parameters whose argument is a pattern, by index in `out`: named at the end.
    let mut unnamed = Vec::new();
    let mut used = vec![false; memory.len()];
    for input in &f.sig.inputs {
        match input {
            FnArg::Receiver(r) => cx.error_spanned_by(r, "a kernel function cannot take `self`"),
            FnArg::Typed(pt) => {
                let ty = &*pt.ty;
                if let Some(m) = memory_arg(cx, pt, memory, &mut used) {
                    out.extend(m);
                } else if let Some(e) = extra(flavor, ty, local) {
                    out.push(Arg::Extra(e));
                } else if let Some(t) = in_place_of(ty).filter(|_| flavor == Flavor::Tiling) {
                    check_pixel(cx, &t);
                    let name = arg_name(&pt.pat);
                    if name.is_none() {
                        unnamed.push(out.len());
                    }
                    for (kind, half) in
                        [(ParamKind::Input(t.clone()), InPlaceHalf::First), (ParamKind::Output(t), InPlaceHalf::Second)]
                    {
                        out.push(Arg::Param(Box::new(Param {
                            kind,
                            name: name.clone().unwrap_or_default(),
                            view: type_text(ty),
                            optional: false,
                            rows: None,
                            in_place: Some(half),
                        })));
                    }
                } else if let Some((kind, optional, rows)) = classify(flavor, ty) {
                    match &kind {
                        ParamKind::Input(t) | ParamKind::Output(t) => check_pixel(cx, t),
                        ParamKind::Object { ty, .. } => {
                            if let Some((id, args)) = last_segment(ty)
                                && PIXEL_VIEWS.contains(&id.to_string().as_str())
                                && let Some(t) = single_generic(args)
                            {
                                check_pixel(cx, t);
                            }
                        }
                        ParamKind::ByValue(_) => {}
                    }
                    let name = arg_name(&pt.pat);
                    if name.is_none() {
                        unnamed.push(out.len());
                    }
                    out.push(Arg::Param(Box::new(Param {
                        kind,
                        name: name.unwrap_or_default(),
                        view: type_text(ty),
                        optional,
                        rows,
                        in_place: None,
                    })));
                } else {
                    cx.error_spanned_by(ty, flavor.expected());
                }
            }
        }
    }
    for (m, used) in memory.iter().zip(used) {
        if !used {
            cx.error_spanned_by(
                &m.name,
                format!(
                    "{} memory request `{}` names no argument of the function (add `{}: &mut [T]`)",
                    m.region.key(),
                    m.name,
                    m.name
                ),
            );
        }
    }
    if local.is_some() && !out.iter().any(|a| matches!(a, Arg::Extra(Extra::Local))) {
        cx.error_spanned_by(&f.sig.ident, "`local = Type` is declared, so the function takes `&mut Type`");
    }
    pattern_names(&mut out, &unnamed);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    #[test]
    fn only_what_certainly_is_no_pixel_type_is_refused() {
        for bad in [
            "f64",
            "f32",
            "i64",
            "u64",
            "i8",
            "bool",
            "char",
            "usize",
            "core::primitive::f64",
            "(u8, u8)",
            "()",
            "&u8",
            "[u8]",
            "[u8; 2]",
            "[u8; 5]",
            "[u16; 3]",
            "[f32; 4]",
            "[(u8, u8); 3]",
        ] {
            assert!(not_a_pixel(&syn::parse_str(bad).unwrap()), "{bad}");
        }
        // The pixel types, and names the macro cannot see through (an alias might be a pixel type).
        for fine in [
            "u8",
            "u16",
            "i16",
            "u32",
            "i32",
            "[u8; 3]",
            "[u8; 4]",
            "std::primitive::u8",
            "Px",
            "px::Gray",
            "[u8; N]",
            "[Px; 3]",
        ] {
            assert!(!not_a_pixel(&syn::parse_str(fine).unwrap()), "{fine}");
        }
    }

    #[test]
    fn a_pattern_argument_is_named_input_or_output() {
        assert_eq!(generated_names("input", 1, &[]), ["input"]);
        assert_eq!(generated_names("input", 2, &[]), ["input1", "input2"]);
        assert_eq!(generated_names("input", 1, &["input".into()]), ["input1"]);
        assert_eq!(generated_names("output", 2, &["output1".into()]), ["output2", "output3"]);

        // `fn k([a, b, c]: Rows<u8, 3>, _: u8, out: &mut [u8], _: &mut [u8], (input): u8)`.
        let param = |kind: ParamKind, name: &str, in_place| {
            Arg::Param(Box::new(Param {
                kind,
                name: name.into(),
                view: String::new(),
                optional: false,
                rows: None,
                in_place,
            }))
        };
        let u8_: Type = syn::parse_quote!(u8);
        let mut out = vec![
            param(ParamKind::Input(u8_.clone()), "", None),
            param(ParamKind::ByValue(u8_.clone()), "", None),
            param(ParamKind::Output(u8_.clone()), "out", None),
            param(ParamKind::Output(u8_.clone()), "", None),
            param(ParamKind::ByValue(u8_.clone()), "input", None),
            param(ParamKind::Input(u8_.clone()), "", Some(InPlaceHalf::First)),
            param(ParamKind::Output(u8_), "", Some(InPlaceHalf::Second)),
        ];
        pattern_names(&mut out, &[0, 1, 3, 5]);
        let names: Vec<String> = params(&out).iter().map(|p| p.shown_name()).collect();
        assert_eq!(names, ["input1", "input2", "out", "output", "input", "input3 (in)", "input3 (out)"]);
    }

    #[test]
    fn types_are_shown_as_written() {
        for t in [
            "Rows<u8, 3>",
            "&Tile<u8>",
            "&mut [u8]",
            "&mut InPlace<u8>",
            "Option<&mut TileMut<[u8; 3]>>",
            "&views::Matrix<f32>",
            "&ObjectArray<Image<u8>>",
            "u8",
        ] {
            assert_eq!(type_text(&syn::parse_str(t).unwrap()), t);
        }
    }

    #[test]
    fn the_fallback_turns_a_refused_pixel_type_into_u8_and_drops_the_body() {
        let f: ItemFn = syn::parse2(quote! {
            fn k(src: &Tile<u8>, dst: &mut TileMut<f64>, o: Option<&vx::Tile<[u8; 2]>>) { dst.set(0, 0, 1.0) }
        })
        .unwrap();
        let out = fallback_fn(&f);
        let sig = out.sig.to_token_stream().to_string();
        assert_eq!(sig, quote!(fn k(src: &Tile<u8>, dst: &mut TileMut<u8>, o: Option<&vx::Tile<u8> >)).to_string());
        assert_eq!(out.block.to_token_stream().to_string(), quote!({ ::core::unreachable!() }).to_string());
        assert!(out.attrs.iter().any(|a| a.to_token_stream().to_string().contains("unused_variables")));

        // Nothing refused: the function as written, body and all.
        let fine: ItemFn =
            syn::parse2(quote! { fn k(src: &Tile<Px>, dst: &mut TileMut<u8>) { dst.set(0, 0, 1) } }).unwrap();
        assert_eq!(fallback_fn(&fine).to_token_stream().to_string(), fine.to_token_stream().to_string());
    }
}
