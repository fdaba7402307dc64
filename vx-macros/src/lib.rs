//! # vx-macros — `#[tiling_kernel]`, `#[user_kernel]` and `vx_module!`
//!
//! Procedural macros that turn annotated Rust functions into registered kernels, and a crate into
//! a kernel module. Layout (after thiserror-impl and serde_derive): `lib.rs` entry points →
//! `tiling/` and `user/` (each: attribute model → checks → expansion) over one shared model in
//! `internals/` (the signature model `ast.rs`, the expansion pieces `expand.rs`, serde's `Ctxt`, and
//! `run`, the entry wrapper with its fallback); `module.rs` for `vx_module!`. Every error is
//! collected and reported at once, each pointing at its token.
//!
//! Use them through `vx_plugin_abi` (the kernel SDK), which re-exports them; its crate docs show
//! each form, and the vx-rs book's chapters *Your first kernel*, *Tiling kernels and borders* and
//! *User kernels and validators* (`docs/book/src/` in the repository) explain every key.

mod internals;
mod module;
mod tiling;
mod user;

use proc_macro::TokenStream;

/// Export this crate as a kernel module: `vx_module!(name = "vx_filters");`. Its `publish`
/// registers every kernel the crate defines with `#[tiling_kernel]` / `#[user_kernel]` /
/// `#[target_kernel]`; its `unpublish` removes them. Once per cdylib crate (a cdylib with kernels
/// and no `vx_module!` is a compile error, and so is a second `vx_module!`, naming the first).
///
/// - `name = "…"` (required): the module's name, what applications load (`load_module("vx_filters")`
///   finds `libvx_filters.so`).
/// - `version = "1.2.0"`: the module's version; default: the crate's.
#[proc_macro]
pub fn vx_module(input: TokenStream) -> TokenStream {
    match syn::parse::<module::ModuleArgs>(input) {
        Ok(args) => module::expand(args).into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Turn a function into a tiling kernel (the OpenVX tiling extension): the function's arguments
/// are the kernel's parameters; the macro generates the validator, the glue to the SDK's
/// trampolines and the registration record (the vx-rs book's chapter *Tiling kernels and borders*,
/// `docs/book/src/tiling.md`, has runnable examples of every form).
///
/// Arguments: `&Tile<T>` (input image), `&mut TileMut<T>` (output image), a scalar by value,
/// `Option<…>` of those (optional parameter), `&mut InPlace<T>` (parameters `i` and `i + 1`, in
/// place), `Rows<T, N>` with `&mut [T]` outputs (a row kernel), and two that are not parameters:
/// `&mut [u8]` (tile memory) and `TileContext`. Returns `()` or `Result<(), TileError>`.
///
/// Each parameter is registered under its argument's name (what `vx inspect`, graph files and the
/// generated validator's messages show). An argument that is a pattern, not a plain identifier
/// (`[a, b, c]: Rows<u8, 3>`, `_: u8`), is named `input` if it is an input and `output` if it is an
/// output; when several inputs (or outputs) are patterns they are `input1`, `input2`, … in argument
/// order, skipping a name another argument has. So `fn box3x3([a, b, c]: Rows<u8, 3>, out: &mut
/// [u8])` has parameters `input` and `out`.
///
/// Keys (all optional):
///
/// - `name = "module.kernel"`: the kernel's name; default `<crate>.<function>`. Unique per crate
///   (a second kernel of one name is a compile error naming the first); not empty.
/// - `enumeration = N`: the kernel's enumeration; default: one the host allocates, the lowest free
///   id of the context's pool, handed out in kernel-name order as the module publishes (never in
///   link order). The same module published into a fresh context gets the same enumerations in
///   every build; they move when it adds, removes or renames a kernel that sorts before, or when
///   other modules took ids first (a reload keeps them). Declare `N` for one that never moves.
/// - `block = WxH`: the output tile block size; the fast function gets whole blocks.
/// - `nbhd = (left, right, top, bottom)`: the input neighborhood (`left`, `top` ≤ 0 ≤ `right`,
///   `bottom`).
/// - `border = Undefined | Self_`: the OpenVX tiling border mode (`Self_`: the kernel reads only
///   what exists); row kernels: `border = Reflect101 | Replicate | Constant(v)`, the rule the SDK
///   extends rows with at the image's edge (required for them).
/// - `tile_memory = N`: bytes of tile memory per block, for a `&mut [u8]` argument (required with
///   one).
/// - `alias(a, b, dense | sparse)`: repeatable buffer-aliasing hint: output `b` may share input
///   `a`'s buffer (required for an `InPlace` argument, with `b = a + 1`).
/// - `flexible = path`: the annotated function is the fast one, `path` the flexible one (the same
///   arguments; the return type may differ).
/// - `flexible`: the annotated function is the only, flexible, function.
/// - `any_size`: images need not share one size.
#[proc_macro_attribute]
pub fn tiling_kernel(args: TokenStream, item: TokenStream) -> TokenStream {
    match syn::parse::<syn::ItemFn>(item) {
        Ok(f) => tiling::tiling_kernel(args.into(), f).into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Turn a function into a user (non-tiling) kernel, called once per frame with whole objects (the
/// vx-rs book's chapter *User kernels and validators*, `docs/book/src/user-kernels.md`, has
/// runnable examples).
///
/// Arguments: `&ImageIn<T>` / `&mut ImageOut<T>` (images), scalars by value, any data object
/// through the SDK's typed views (`&views::Matrix<f32>`, `&mut views::Array<u32>`, …),
/// `Option<…>` of those (optional parameters), `&mut L` for typed local data and `&mut [T]` for
/// each kernel memory request. Returns `()` or `Result<(), AbiError>`. Parameters are named as for
/// [`macro@tiling_kernel`] (a pattern argument is `input` or `output`, numbered when several).
///
/// Keys (all optional):
///
/// - `name = "…"`, `enumeration = N`: as for `#[tiling_kernel]`.
/// - `local = L`: typed local data (`L: Default`), created at the node's init and dropped at
///   deinit; the argument `&mut L`.
/// - `init = path` / `deinit = path`: `fn(&mut L) -> Result<(), AbiError>`, after creating / before
///   dropping `L` (with `local`).
/// - `persistent(name = count, …)`: kernel memory kept from init to deinit, the argument
///   `name: &mut [T]`; `count` is a `usize` expression or a `fn(&Lifecycle) -> Result<usize,
///   AbiError>`.
/// - `scratch(name = count, …)`: kernel memory for one call, from the executor's scratch arena.
/// - `validate = path`: `fn(&Validator) -> Result<(), AbiError>`, replaces the generated
///   validator (needed when an output has no input of its kind to copy its meta from).
/// - `control = path`: `fn(&Controller, &mut L) -> Result<(), AbiError>` with `local`, else
///   `fn(&Controller) -> …`: commands sent with `Node::send_command`, serialized with process.
/// - `any_size`: images need not share one size.
/// - `target = "name"`: see [`macro@target_kernel`].
#[proc_macro_attribute]
pub fn user_kernel(args: TokenStream, item: TokenStream) -> TokenStream {
    match syn::parse::<syn::ItemFn>(item) {
        Ok(f) => user::user_kernel(args.into(), f, user::Entry::User).into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Turn a function into a target kernel (TIOVX `tivxAddTargetKernelByName`): a user kernel
/// implemented on one target, whose nodes run on that target's thread. Arguments and keys as
/// [`macro@user_kernel`], plus:
///
/// - `target = "name"` (required): the target.
/// - `create = path` / `delete = path`: the target-side init / deinit, `fn(&mut L) -> Result<(),
///   AbiError>` over `local = L`, run on the node's target.
/// - `control = path`: as for `#[user_kernel]`, run on the target.
#[proc_macro_attribute]
pub fn target_kernel(args: TokenStream, item: TokenStream) -> TokenStream {
    match syn::parse::<syn::ItemFn>(item) {
        Ok(f) => user::user_kernel(args.into(), f, user::Entry::Target).into(),
        Err(e) => e.to_compile_error().into(),
    }
}
