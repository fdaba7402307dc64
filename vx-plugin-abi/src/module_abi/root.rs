//! What a module exports: its ABI version (a plain symbol the host reads first, and a field of the
//! root descriptor) and the root descriptor ([`VxModule`]) with its entry points.

use abi_stable::library::RootModule;
use abi_stable::sabi_types::VersionStrings;
use abi_stable::std_types::RStr;
use abi_stable::{StableAbi, declare_root_module_statics, package_version_strings};

use super::error::AbiResult;
use super::host::Host;

/// The module ABI version. A host refuses modules built for another one. Version 2: handles with a
/// private host pointer, `!Send`/`!Sync`; `unsafe extern "C" fn` where raw pointers are trusted.
/// Version 3: kernel memory (`mem_*` in the lifecycle and processor vtables) — a module built for it
/// must not load into a host without them, so the version changed although the vtables only grew.
/// Version 4: init and deinit read parameter metas (`param_meta` in the lifecycle vtable), so a
/// kernel sizes its memory requests by its images; target kernels (`KernelDesc::targets`, control
/// callbacks and the [`Controller`](super::controller::Controller) handle).
/// Version 5: every data object ([`crate::object_meta`]): validators, init and deinit read any
/// object's meta ([`ObjectMeta`](crate::object_meta::ObjectMeta), scalar values and array item counts included) and set outputs
/// of any type, whole or attribute by attribute; process maps pyramid levels, object-array items
/// and the fixed-layout objects, reads and writes thresholds. All new vtable functions follow the
/// last prefix field, so the prefix-type layout rules hold; the version changed because a module
/// calling them must not load into a host without them.
/// Version 6: one form per processor function. The functions that existed twice, by parameter
/// index and by [`ParamPath`](crate::object_meta::ParamPath) (`map_image`, `read_scalar`,
/// `write_scalar`, `array_info`, `array_add`, `array_read`, `array_truncate`), take a path only;
/// the processor vtable is laid out afresh, every function in its prefix.
/// Version 7: [`ObjectMeta`](crate::object_meta::ObjectMeta) has one tuple variant per kind over
/// the kind's own wire struct (`kinds::<kind>::Wire`, generated from the list of kinds); the flat
/// forms `param_meta` (validator and lifecycle), `set_output_image` and `set_output_array` are gone
/// from the vtables (the safe methods of the same names remain, over `object_meta` /
/// `set_output_meta`).
/// Version 8: fused execution. Row kernels export a row entry over tables of row
/// pointers ([`RowFnPtr`](super::RowFnPtr) with [`RowRegion`](crate::RowRegion),
/// [`RowSourceDesc`](super::RowSourceDesc), [`RowSinkDesc`](super::RowSinkDesc) and the
/// `TileParamKind` values `InputRows` / `OutputRows`), declared with the optional host function
/// `declare_fusion` ([`FusionDesc`](super::FusionDesc)); the tile descriptor flag
/// [`TILE_LINE_BUFFER`](crate::TILE_LINE_BUFFER). Later within version 8, with no bump (a hint a
/// module reads with a default: a host before it leaves the bits 0, read as one thread): the
/// run's thread count in the flags' bits 8–15 ([`TILE_RUN_THREADS_SHIFT`](crate::TILE_RUN_THREADS_SHIFT)).
/// Also within version 8, with no bump: the image formats NV21, UYVY, YUYV, IYUV and YUV4. A
/// format crosses the boundary only as its FourCC (a `u32` of the image wire meta; no
/// [`ImageFormat`](crate::ImageFormat) is in a vtable or an `abi_stable` type), so no layout
/// changed; a module meets a FourCC it does not know as before (its typed views refuse it), and a
/// host before them refuses such an output meta with an error.
pub const ABI_VERSION: u32 = 8;

/// The name of the plain `u32` static (no mangling) holding the module's [`ABI_VERSION`]. The host
/// reads it before abi_stable's layout check, so a module of another ABI version is refused with
/// that reason (a layout report would hide it); modules built against ABI version 1 lack it.
pub const ABI_VERSION_SYMBOL: &str = "vx_rs_module_abi_version";

/// The name of the plain `u8` static (no mangling) that says how the module was built: 1 when
/// its crate was compiled with debug assertions (cargo's `dev` profile: unoptimized code), 0 when
/// without (`--release`). Informational, outside the root descriptor (no ABI version change): a
/// module without it is of unknown build, and the host says so.
pub const BUILD_DEBUG_SYMBOL: &str = "vx_rs_module_debug_assertions";

/// A module's `publish` / `unpublish`.
pub type EntryFnPtr = extern "C" fn(host: &Host) -> AbiResult<()>;

/// The root descriptor every module exports.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = VxModuleRef)))]
#[sabi(missing_field(panic))]
pub struct VxModule {
    /// Must equal the host's [`ABI_VERSION`].
    #[cfg(not(feature = "abi-layout-mismatch"))]
    pub abi_version: u32,
    /// (Test feature: a different layout, which the host's abi_stable check must refuse.)
    #[cfg(feature = "abi-layout-mismatch")]
    pub abi_version: u64,
    /// The module's name (e.g. `vx_filters`).
    pub name: RStr<'static>,
    /// The module's own version.
    pub version: RStr<'static>,
    /// Registers the module's kernels.
    pub publish: extern "C" fn(host: &Host) -> AbiResult<()>,
    /// Removes them.
    #[sabi(last_prefix_field)]
    pub unpublish: extern "C" fn(host: &Host) -> AbiResult<()>,
}

impl RootModule for VxModuleRef {
    declare_root_module_statics! {VxModuleRef}
    const BASE_NAME: &'static str = "vx_module";
    const NAME: &'static str = "vx_module";
    const VERSION_STRINGS: VersionStrings = package_version_strings!();
}
