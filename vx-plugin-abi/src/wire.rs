//! The wire codes of the module ABI, named once: the macros, the host and hand-written modules all
//! use these (OpenVX's own `vx_type_e` / `vx_direction_e` values where OpenVX has one). Codes cross
//! the boundary as plain integers, never as Rust enums, so a value a newer module sends is refused
//! with an error instead of being undefined behaviour.

pub use crate::kinds::data_type;

/// Scalar types (`vx_type_e`).
pub mod scalar_type {
    /// `VX_TYPE_CHAR`.
    pub const CHAR: u32 = 0x001;
    /// `VX_TYPE_INT8`.
    pub const INT8: u32 = 0x002;
    /// `VX_TYPE_UINT8`.
    pub const UINT8: u32 = 0x003;
    /// `VX_TYPE_INT16`.
    pub const INT16: u32 = 0x004;
    /// `VX_TYPE_UINT16`.
    pub const UINT16: u32 = 0x005;
    /// `VX_TYPE_INT32`.
    pub const INT32: u32 = 0x006;
    /// `VX_TYPE_UINT32`.
    pub const UINT32: u32 = 0x007;
    /// `VX_TYPE_INT64`.
    pub const INT64: u32 = 0x008;
    /// `VX_TYPE_UINT64`.
    pub const UINT64: u32 = 0x009;
    /// `VX_TYPE_FLOAT32`.
    pub const FLOAT32: u32 = 0x00A;
    /// `VX_TYPE_FLOAT64`.
    pub const FLOAT64: u32 = 0x00B;
    /// `VX_TYPE_ENUM`.
    pub const ENUM: u32 = 0x00C;
    /// `VX_TYPE_SIZE`.
    pub const SIZE: u32 = 0x00D;
    /// `VX_TYPE_DF_IMAGE`.
    pub const DF_IMAGE: u32 = 0x00E;
    /// `VX_TYPE_BOOL`.
    pub const BOOL: u32 = 0x010;

    /// The type's name for messages (`U8`, `F32`, …; an unknown code in hex).
    pub fn name(code: u32) -> std::borrow::Cow<'static, str> {
        let known = match code {
            CHAR => "CHAR",
            INT8 => "I8",
            UINT8 => "U8",
            INT16 => "I16",
            UINT16 => "U16",
            INT32 => "I32",
            UINT32 => "U32",
            INT64 => "I64",
            UINT64 => "U64",
            FLOAT32 => "F32",
            FLOAT64 => "F64",
            ENUM => "ENUM",
            SIZE => "SIZE",
            DF_IMAGE => "DF_IMAGE",
            BOOL => "BOOL",
            other => return format!("unknown type {other:#x}").into(),
        };
        known.into()
    }
}

/// Parameter directions (`vx_direction_e` order).
pub mod direction {
    /// `VX_INPUT`.
    pub const INPUT: u32 = 0;
    /// `VX_OUTPUT`.
    pub const OUTPUT: u32 = 1;
    /// `VX_BIDIRECTIONAL` (refused for user kernels).
    pub const BIDIRECTIONAL: u32 = 2;
}

/// Parameter states.
pub mod param_state {
    /// `VX_PARAMETER_STATE_REQUIRED`.
    pub const REQUIRED: u32 = 0;
    /// `VX_PARAMETER_STATE_OPTIONAL`.
    pub const OPTIONAL: u32 = 1;
}

/// Border modes of tiling kernels (`VX_KERNEL_BORDER`).
pub mod border {
    /// `VX_BORDER_UNDEFINED`.
    pub const UNDEFINED: u32 = 0;
    /// `VX_BORDER_MODE_SELF`: the kernel handles pixels outside the image itself.
    pub const SELF: u32 = 1;
}

/// Processing types of alias hints (`vx_buffer_aliasing_processing_type_e`).
pub mod alias_kind {
    /// Every element is read and written.
    pub const DENSE: u32 = 0;
    /// Only some elements are written.
    pub const SPARSE: u32 = 1;
}

/// Levels of log lines from modules ([`crate::log`], `HostVtable::log`).
pub mod log_level {
    /// An error (module panics are logged at this level).
    pub const ERROR: u32 = 1;
    /// A warning.
    pub const WARN: u32 = 2;
    /// Information.
    pub const INFO: u32 = 3;
    /// Debugging detail.
    pub const DEBUG: u32 = 4;
    /// Tracing detail.
    pub const TRACE: u32 = 5;
}

/// Kernel memory regions (`crate::MemRegion`).
pub mod mem_region {
    /// Persistent: from init to deinit.
    pub const PERSISTENT: u32 = 0;
    /// Scratch: during one callback, in the executor's arena.
    pub const SCRATCH: u32 = 1;
}

/// Array item types beyond the scalars (`vx_type_e`): an array's `VX_ARRAY_ITEMTYPE` is a
/// [`scalar_type`] code or one of these.
pub mod item_type {
    /// `VX_TYPE_RECTANGLE`.
    pub const RECTANGLE: u32 = 0x020;
    /// `VX_TYPE_KEYPOINT`.
    pub const KEYPOINT: u32 = 0x021;
    /// `VX_TYPE_COORDINATES2D`.
    pub const COORDINATES2D: u32 = 0x022;
    /// `VX_TYPE_COORDINATES3D`.
    pub const COORDINATES3D: u32 = 0x023;
    /// `VX_TYPE_COORDINATES2DF`.
    pub const COORDINATES2DF: u32 = 0x024;
    /// `VX_TYPE_USER_STRUCT_START`: a user struct (its size is the array's item size).
    pub const USER_STRUCT: u32 = 0x100;
}

/// Matrix patterns (`vx_pattern_e`).
pub mod pattern {
    /// `VX_PATTERN_BOX`.
    pub const BOX: u32 = 0x17000;
    /// `VX_PATTERN_CROSS`.
    pub const CROSS: u32 = 0x17001;
    /// `VX_PATTERN_DISK`.
    pub const DISK: u32 = 0x17002;
    /// `VX_PATTERN_OTHER`.
    pub const OTHER: u32 = 0x17003;
}

/// Threshold types (`vx_threshold_type_e`).
pub mod threshold_type {
    /// `VX_THRESHOLD_TYPE_BINARY`.
    pub const BINARY: u32 = 0xB000;
    /// `VX_THRESHOLD_TYPE_RANGE`.
    pub const RANGE: u32 = 0xB001;
}

pub use crate::kinds::attribute;

/// The border rule a row entry applies past the image edge ([`FusionDesc::fill`](crate::module_abi::FusionDesc)):
/// the SDK's [`BorderFill`](crate::BorderFill) without its constant's value (the host needs only
/// which rows a window resolves to; a constant row is the module's own).
pub mod row_fill {
    /// No row entry.
    pub const NONE: u32 = 0;
    /// `BorderFill::Reflect101`.
    pub const REFLECT101: u32 = 1;
    /// `BorderFill::Replicate`.
    pub const REPLICATE: u32 = 2;
    /// `BorderFill::Constant(_)`.
    pub const CONSTANT: u32 = 3;
}

/// Flags of [`FusionDesc::flags`](crate::module_abi::FusionDesc).
pub mod fusion {
    /// The kernel's tile functions read and write only through SDK views, each bounded by its
    /// descriptor's `readable` rectangle (never `base + y * stride` outside it): descriptors into a
    /// line buffer are safe for it.
    pub const VIEWS_BOUNDED: u32 = 1;
}
