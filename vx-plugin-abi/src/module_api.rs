//! The module side of the ABI, written once (the gstreamer-rs subclassing idea): generic
//! `extern "C"` trampolines over small traits, each catching panics inside the module. The macros'
//! output implements a trait on a unit type and passes `trampoline::<ThatType>` to the host; it never
//! writes `extern "C"` or `unsafe` itself. Hand-written modules may use the same trampolines.
//!
//! | trait | trampoline | ABI slot |
//! |---|---|---|
//! | [`TilingFunction`] | [`tiling_trampoline`] | `KernelDesc::fast` / `flexible` |
//! | [`RowFunction`] | [`row_trampoline`] | `FusionDesc::rows` (`Host::declare_fusion`) |
//! | [`ValidateFunction`] | [`validate_trampoline`] | `KernelDesc::validate` |
//! | [`ProcessFunction`] | [`process_trampoline`] | `KernelDesc::process` |
//! | [`StatefulProcess`] | [`stateful_process_trampoline`] | `KernelDesc::process` (with state) |
//! | [`StateHooks`] | [`init_trampoline`], [`deinit_trampoline`] | `KernelDesc::init` / `deinit`, `TargetDesc::create` / `delete` |
//! | [`ControlFunction`] | [`control_trampoline`] | `KernelDesc::control` / `TargetDesc::control` |
//! | [`StatefulControl`] | [`stateful_control_trampoline`] | `KernelDesc::control` / `TargetDesc::control` (with state) |
//! | [`ValidRectFn`] (a plain `fn`) | [`valid_rect_trampoline`] | `ValidatorVtable::set_output_valid_rect`, through [`Validator::set_output_valid_rect`] |

use std::cell::Cell;
use std::ffi::c_void;
use std::sync::Once;

use abi_stable::std_types::{RResult, RSlice, RSliceMut, RString};

use crate::geometry::Rect;
use crate::module_abi::{AbiError, AbiResult, Controller, Lifecycle, LocalData, Processor, ValidRectFnPtr, Validator};
use crate::status::Status;
use crate::tile::{RowArgs, RowRegion, TileArgs, TileError, TileParam};

/// Where the last panic on this thread happened, as the module's panic hook recorded it: a plain
/// `Copy` value in a const thread-local, so recording it registers no thread-local destructor (one
/// would keep the module mapped after unload while the thread lives).
#[derive(Clone, Copy)]
struct PanicSite {
    file: [u8; 128],
    len: u8,
    line: u32,
    column: u32,
}

thread_local! {
    static PANIC_SITE: Cell<Option<PanicSite>> = const { Cell::new(None) };
}

/// Install the module's panic hook (once per module; `vx_module!` calls this when the host opens the
/// module). A module has a std of its own: its default hook would print to stderr, look up the
/// current thread (a thread-local with a destructor, which keeps the module mapped after unload)
/// and, under `RUST_BACKTRACE=1`, capture and symbolize a backtrace into a cache that is orphaned
/// when the module is unloaded (tens of MB per version). This hook only records where the panic
/// happened; [`guard`] turns it and the message into the error the host reports.
///
/// Only for modules: in an application, kernels share the application's std and its hook.
pub fn install_panic_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let site = info.location().map(|l| {
                let mut file = [0u8; 128];
                let bytes = l.file().as_bytes();
                let len = bytes.len().min(file.len());
                file[..len].copy_from_slice(&bytes[..len]);
                PanicSite { file, len: len as u8, line: l.line(), column: l.column() }
            });
            PANIC_SITE.with(|s| s.set(site));
        }))
    });
}

/// Run `f`, turning a panic into an error (never let it cross the boundary): the panic's message,
/// and where it happened when the module's hook recorded it (unless the message names that place
/// already, as the SDK's own panics do: `Tile::pixel` says `(at file:line:col)` of its caller).
pub fn guard<T>(what: &str, f: impl FnOnce() -> Result<T, AbiError>) -> AbiResult<T> {
    PANIC_SITE.with(|s| s.set(None));
    match crate::unwind::catch_panic(f) {
        Ok(r) => r.into(),
        Err(payload) => {
            let text = crate::unwind::panic_message(&*payload);
            let site = PANIC_SITE.with(|s| s.take()).map(|p| {
                (String::from_utf8_lossy(&p.file[..p.len as usize]).into_owned(), format!(":{}:{}", p.line, p.column))
            });
            RResult::RErr(AbiError::new(Status::Failure, panic_error(what, site, &text)))
        }
    }
}

/// The error `guard` makes of a panic with message `text` at `site` (file, `:line:column`), and
/// the one log line of it: to the host's subscriber as an echo of that error
/// ([`crate::log::PANIC_SOURCE`]; a subscriber that shows the errors it gets, as `vx` does, leaves
/// it out, so the panic is reported once), for the application that handles the error quietly.
fn panic_error(what: &str, site: Option<(String, String)>, text: &str) -> String {
    let at = match site {
        Some((file, line)) if !(text.contains(&file) && text.contains(&line)) => format!(" at {file}{line}"),
        _ => String::new(),
    };
    let message = format!("{what} panicked in the module{at}: {text}");
    if crate::log::is_connected() {
        crate::log::emit(crate::log::Level::Error, crate::log::PANIC_SOURCE, &message);
    }
    message
}

/// A tiling kernel's fast or flexible function.
pub trait TilingFunction: 'static {
    /// Process one tile.
    fn call(args: &mut TileArgs<'_>) -> Result<(), TileError>;
}

/// `vx_tiling_kernel_f` for `F`: builds the tile views, calls `F`, catches panics.
///
/// # Safety
///
/// Called by the host with a parameters array of `num` entries and tile memory of `size` bytes
/// valid for the call ([`TileArgs::new`]'s contract).
pub unsafe extern "C" fn tiling_trampoline<F: TilingFunction>(
    params: *const TileParam,
    num: u32,
    tile_memory: *mut u8,
    size: usize,
) -> AbiResult<()> {
    guard("a tiling function", || {
        // SAFETY: the host passes `num` parameters valid for this call (caller's contract).
        let params = unsafe { host_params(params, num) };
        // SAFETY: forwarded unchanged from the host, which upholds TileArgs::new's contract.
        let mut args = unsafe { TileArgs::new(params, tile_memory, size) };
        F::call(&mut args).map_err(tile_to_abi)
    })
}

/// The parameters array a host passes a tiling function or a row entry (empty for none).
///
/// # Safety
///
/// Unless `num` is 0 or `params` null, `params` points to `num` initialized entries valid for `'a`.
unsafe fn host_params<'a>(params: *const TileParam, num: u32) -> &'a [TileParam] {
    if num == 0 || params.is_null() {
        &[]
    } else {
        // SAFETY: `num` valid entries at `params` (this function's contract).
        unsafe { std::slice::from_raw_parts(params, num as usize) }
    }
}

fn tile_to_abi(e: TileError) -> AbiError {
    AbiError { status: e.status.code(), message: RString::from(e.message.into_owned()) }
}

/// A row kernel's row entry (fused execution): compute the output rows of `args.region()` from the
/// inputs' row tables — what `#[tiling_kernel]` generates for a `Rows<T, N>` kernel, through
/// [`RowTable::for_rows`](crate::tile::RowTable::for_rows), the code path of
/// [`Tile::for_rows`](crate::Tile::for_rows).
pub trait RowFunction: 'static {
    /// Compute the call's output rows.
    fn call(args: &RowArgs<'_>) -> Result<(), TileError>;
}

/// The row entry ([`RowFnPtr`](crate::module_abi::RowFnPtr)) for `F`: builds the row views, calls
/// `F`, catches panics.
///
/// # Safety
///
/// Called by the host with `num` parameters at `params` and the region `call` upholding
/// [`RowArgs::new`]'s contract.
pub unsafe extern "C" fn row_trampoline<F: RowFunction>(
    params: *const TileParam,
    num: u32,
    call: &RowRegion,
) -> AbiResult<()> {
    guard("a row entry", || {
        // SAFETY: the host passes `num` parameters valid for this call (caller's contract).
        let params = unsafe { host_params(params, num) };
        // SAFETY: forwarded unchanged from the host, which upholds RowArgs::new's contract.
        let args = unsafe { RowArgs::new(params, *call) };
        F::call(&args).map_err(tile_to_abi)
    })
}

/// A kernel's validator.
pub trait ValidateFunction: 'static {
    /// Check the node's parameters and set its outputs' meta formats.
    fn validate(v: &Validator) -> Result<(), AbiError>;
}

/// The validator entry point for `V`, panics caught.
pub extern "C" fn validate_trampoline<V: ValidateFunction>(v: &Validator) -> AbiResult<()> {
    guard("validate", || V::validate(v))
}

/// A valid-rectangle function (`vx_kernel_image_valid_rectangle_f`): given the output parameter's
/// index and the valid rectangles of the node's input images (in parameter order; a pyramid gives
/// one per level, an object array one per image), fill `outputs`, one rectangle per image of the
/// output (one for an image), each holding the whole image when called. The host refuses a
/// rectangle outside the output.
pub type ValidRectFn = fn(index: u32, inputs: &[Rect], outputs: &mut [Rect]) -> Result<(), AbiError>;

/// The [`ValidRectFnPtr`] every valid-rectangle function
/// crosses the ABI through: `ctx` is the module's [`ValidRectFn`] (code of the module, alive as long
/// as the module is), called with panics caught.
///
/// # Safety
///
/// `ctx` is a [`ValidRectFn`] cast to a pointer ([`Validator::set_output_valid_rect`] passes it);
/// the host passes slices valid for the call.
pub unsafe extern "C" fn valid_rect_trampoline(
    ctx: *const c_void,
    index: u32,
    inputs: RSlice<'_, Rect>,
    mut outputs: RSliceMut<'_, Rect>,
) -> AbiResult<()> {
    guard("a valid rectangle function", || {
        if ctx.is_null() {
            return Err(AbiError::new(Status::InvalidParameters, "no valid rectangle function"));
        }
        // SAFETY: `ctx` is a `ValidRectFn` (a fn pointer, the size of a data pointer on every
        // platform Rust supports) that `set_output_valid_rect` cast to a pointer (caller's contract).
        let f = unsafe { std::mem::transmute::<*const c_void, ValidRectFn>(ctx) };
        f(index, inputs.as_slice(), outputs.as_mut_slice())
    })
}

impl Validator {
    /// `VX_VALID_RECT_CALLBACK`: output `index` (an image, a pyramid, an object array of them) gets
    /// its valid rectangles from `f` over the inputs' (the host calls it when it verifies the
    /// graph; a panic in `f` becomes an error). The host keeps the module loaded as long as it
    /// may call `f`.
    pub fn set_output_valid_rect(&self, index: u32, f: ValidRectFn) -> Result<(), AbiError> {
        // SAFETY: `valid_rect_trampoline` reads `ctx` as the `ValidRectFn` given here, code of this
        // module (alive while the module is loaded), callable from any thread.
        unsafe {
            self.set_output_valid_rect_raw(index, ValidRectFnPtr { func: valid_rect_trampoline }, f as *const c_void)
        }
    }
}

/// A user kernel's process function.
pub trait ProcessFunction: 'static {
    /// Run the node once.
    fn process(p: &Processor) -> Result<(), AbiError>;
}

/// The process entry point for `P`, panics caught.
pub extern "C" fn process_trampoline<P: ProcessFunction>(p: &Processor) -> AbiResult<()> {
    guard("process", || P::process(p))
}

/// A user kernel's typed node state: created at init (boxed behind the node's local data), dropped
/// at deinit, with the kernel's own hooks run on it; and its kernel memory requests, allocated
/// before the state is made and freed after it is dropped.
pub trait StateHooks: 'static {
    /// The state (`()` for a kernel with memory requests and no state).
    type State: Default + 'static;
    /// Allocate the kernel's memory requests, in order (blocks are numbered per region in
    /// allocation order, so process finds them with [`MemBlock::nth`](crate::memory::MemBlock::nth)).
    /// A failed init gets no deinit: the host takes back what was allocated.
    fn allocate(_l: &Lifecycle) -> Result<(), AbiError> {
        Ok(())
    }
    /// Free the persistent blocks [`allocate`](Self::allocate) made (deinit, after the state is
    /// dropped).
    fn release(_l: &Lifecycle) -> Result<(), AbiError> {
        Ok(())
    }
    /// The kernel's own init, run on the fresh state.
    fn init(_state: &mut Self::State) -> Result<(), AbiError> {
        Ok(())
    }
    /// The kernel's own deinit, run before the state is dropped.
    fn deinit(_state: &mut Self::State) -> Result<(), AbiError> {
        Ok(())
    }
}

/// Init for `H`: allocate its memory requests, box a default state as the node's local data, then
/// run `H::init` on it.
pub extern "C" fn init_trampoline<H: StateHooks>(l: &Lifecycle) -> AbiResult<()> {
    guard("init", || {
        H::allocate(l)?;
        let mut state = Box::new(H::State::default());
        H::init(&mut state)?;
        l.set_local_data_size(std::mem::size_of::<H::State>() as u64)?;
        let ptr = Box::into_raw(state);
        if let Err(e) = l.set_local_data_ptr(ptr as usize) {
            // SAFETY: ptr came from Box::into_raw just above and was not handed out.
            drop(unsafe { Box::from_raw(ptr) });
            return Err(e);
        }
        Ok(())
    })
}

/// Deinit for `H`: run `H::deinit`, drop the boxed state and clear the pointer, then free the
/// memory requests (`H::release`).
pub extern "C" fn deinit_trampoline<H: StateHooks>(l: &Lifecycle) -> AbiResult<()> {
    guard("deinit", || {
        let d = l.local_data();
        let r = if d.ptr == 0 {
            Ok(())
        } else {
            // SAFETY: init_trampoline::<H> stored Box::into_raw(Box<H::State>) here and nothing
            // else owns it; it is reclaimed exactly once (the pointer is cleared below).
            let mut state = unsafe { Box::from_raw(d.ptr as *mut H::State) };
            let r = H::deinit(&mut state);
            drop(state);
            l.set_local_data_ptr(0)?;
            r
        };
        let freed = H::release(l);
        r.and(freed)
    })
}

/// A user kernel's process function over its typed node state (see [`StateHooks`]).
pub trait StatefulProcess: StateHooks {
    /// Run the node once, with its state.
    fn process(p: &Processor, state: &mut Self::State) -> Result<(), AbiError>;
}

/// The process entry point for `P`: the node's state (made by [`init_trampoline::<P>`]) is passed
/// to `P::process`, panics caught.
pub extern "C" fn stateful_process_trampoline<P: StatefulProcess>(p: &Processor) -> AbiResult<()> {
    guard("process", || {
        // SAFETY: taken once for this process call; the host runs a node's process one call at a
        // time, so this is the only reference to the state while it lives.
        let state = unsafe { state::<P>(p.local_data())? };
        P::process(p, state)
    })
}

/// A kernel's control callback (`tivxNodeSendCommand` → `control_func`).
pub trait ControlFunction: 'static {
    /// Handle one command.
    fn control(c: &Controller) -> Result<(), AbiError>;
}

/// The control entry point for `C`, panics caught.
pub extern "C" fn control_trampoline<C: ControlFunction>(c: &Controller) -> AbiResult<()> {
    guard("control", || C::control(c))
}

/// A control callback over the kernel's typed node state (the host serializes it with process).
pub trait StatefulControl: StateHooks {
    /// Handle one command, with the node's state.
    fn control(c: &Controller, state: &mut Self::State) -> Result<(), AbiError>;
}

/// The control entry point for `C`: the node's state (made by [`init_trampoline::<C>`]) is
/// passed to `C::control`, panics caught.
pub extern "C" fn stateful_control_trampoline<C: StatefulControl>(c: &Controller) -> AbiResult<()> {
    guard("control", || {
        // SAFETY: taken once for this control call; the host never runs a node's control and
        // process at once (the node's run lock), so this is the only reference to the state.
        let state = unsafe { state::<C>(c.local_data())? };
        C::control(c, state)
    })
}

/// The typed state `init_trampoline::<H>` placed behind the node's local data.
///
/// # Safety
///
/// Call at most once per process or control call, with the node's local data: the returned
/// reference is the only one to the node's state for the call's duration.
unsafe fn state<'a, H: StateHooks>(d: LocalData) -> Result<&'a mut H::State, AbiError> {
    if d.ptr == 0 || d.size as usize != std::mem::size_of::<H::State>() {
        return Err(AbiError::new(
            Status::NotAllocated,
            "the node's local data is not this kernel's state (was init run?)",
        ));
    }
    // SAFETY: init_trampoline::<H> stored a Box<H::State> (size checked) here; the node runs one
    // process at a time and the caller takes this reference once per call, so it is unique.
    Ok(unsafe { &mut *(d.ptr as *mut H::State) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shrink(index: u32, inputs: &[Rect], outputs: &mut [Rect]) -> Result<(), AbiError> {
        let r = inputs[0];
        outputs[0] = Rect::new(r.start_x + index, r.start_y + 1, r.end_x - 1, r.end_y - 1);
        Ok(())
    }

    fn refuses(_: u32, _: &[Rect], _: &mut [Rect]) -> Result<(), AbiError> {
        Err(AbiError::new(Status::InvalidValue, "no rectangle today"))
    }

    fn panics(_: u32, _: &[Rect], _: &mut [Rect]) -> Result<(), AbiError> {
        panic!("a valid rectangle function panics on purpose")
    }

    /// The trampoline as the host calls it: `ctx` is the function, as `set_output_valid_rect`
    /// passes it.
    fn call(f: ValidRectFn, index: u32, inputs: &[Rect], outputs: &mut [Rect]) -> Result<(), AbiError> {
        // SAFETY: `ctx` is a ValidRectFn cast to a pointer, the slices are valid for the call.
        unsafe {
            valid_rect_trampoline(
                f as *const c_void,
                index,
                RSlice::from_slice(inputs),
                RSliceMut::from_mut_slice(outputs),
            )
        }
        .into_result()
    }

    #[test]
    fn the_valid_rect_trampoline_calls_the_function_given_as_its_context() {
        let mut out = [Rect::full(8, 8)];
        call(shrink, 2, &[Rect::full(8, 8), Rect::full(4, 4)], &mut out).unwrap();
        assert_eq!(out[0], Rect::new(2, 1, 7, 7));
        let e = call(refuses, 1, &[], &mut out).unwrap_err();
        assert_eq!((e.status, e.message.as_str()), (Status::InvalidValue.code(), "no rectangle today"));
    }

    #[test]
    fn a_panicking_valid_rect_function_is_an_error() {
        crate::expect_panics("panics on purpose");
        let e = call(panics, 1, &[], &mut []).unwrap_err();
        assert_eq!(e.status, Status::Failure.code());
        assert!(e.message.contains("a valid rectangle function panicked in the module"), "{}", e.message);
        assert!(e.message.contains("panics on purpose"), "{}", e.message);
    }

    #[test]
    fn a_panic_names_its_place_once() {
        let site = || Some(("src/lib.rs".to_owned(), ":12:20".to_owned()));
        assert_eq!(
            panic_error("a tiling function", site(), "boom"),
            "a tiling function panicked in the module at src/lib.rs:12:20: boom"
        );
        // The SDK's own panics say where already (`Tile::pixel`): not twice.
        let sdk = "Tile::pixel(0, 0, 0, 2) reads 2 rows below the tile {0,0,4,4} (at src/lib.rs:12:20)";
        assert_eq!(
            panic_error("a tiling function", site(), sdk),
            format!("a tiling function panicked in the module: {sdk}")
        );
        assert_eq!(panic_error("validate", None, "boom"), "validate panicked in the module: boom");
    }

    #[test]
    fn a_null_context_is_refused() {
        // SAFETY: a null context is checked before it is read.
        let r = unsafe {
            valid_rect_trampoline(std::ptr::null(), 1, RSlice::from_slice(&[]), RSliceMut::from_mut_slice(&mut []))
        };
        assert_eq!(r.into_result().unwrap_err().status, Status::InvalidParameters.code());
    }
}
