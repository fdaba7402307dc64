//! The C API's types as the headers declare them (`include/VX/vx_types.h`): scalar typedefs,
//! opaque handles, the `#[repr(C)]` structs and the callback types, and every constant
//! ([`consts`], generated from the headers). The layout test (`tests/capi.rs`) compiles C code
//! printing each struct's size and offsets and compares them with these.

#![allow(non_camel_case_types, missing_docs)]

pub mod consts;

use std::ffi::{c_char, c_void};

pub type vx_char = c_char;
pub type vx_uint8 = u8;
pub type vx_uint16 = u16;
pub type vx_uint32 = u32;
pub type vx_uint64 = u64;
pub type vx_int8 = i8;
pub type vx_int16 = i16;
pub type vx_int32 = i32;
pub type vx_int64 = i64;
pub type vx_float32 = f32;
pub type vx_float64 = f64;
pub type vx_size = usize;
pub type vx_enum = i32;
pub type vx_status = i32;
pub type vx_df_image = u32;
pub type vx_bitfield = u32;
pub type vx_map_id = usize;
pub type vx_action = vx_enum;
/// `vx_bool` is `enum vx_bool_e` (`vx_false_e = 0`, `vx_true_e = 1`): an `int`.
pub type vx_bool = i32;
pub const VX_FALSE: vx_bool = 0;
pub const VX_TRUE: vx_bool = 1;

/// Every handle (`vx_context`, `vx_image`, …) points at one of these: the registry (`handle.rs`)
/// tells which, and whether it is alive, before anything is read through it.
#[repr(C)]
pub struct VxRef {
    _opaque: [u8; 0],
}
pub type vx_reference = *mut VxRef;
pub type vx_context = vx_reference;
pub type vx_graph = vx_reference;
pub type vx_node = vx_reference;
pub type vx_kernel = vx_reference;
pub type vx_parameter = vx_reference;
pub type vx_image = vx_reference;
pub type vx_scalar = vx_reference;
pub type vx_meta_format = vx_reference;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct vx_rectangle_t {
    pub start_x: vx_uint32,
    pub start_y: vx_uint32,
    pub end_x: vx_uint32,
    pub end_y: vx_uint32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct vx_imagepatch_addressing_t {
    pub dim_x: vx_uint32,
    pub dim_y: vx_uint32,
    pub stride_x: vx_int32,
    pub stride_y: vx_int32,
    pub scale_x: vx_uint32,
    pub scale_y: vx_uint32,
    pub step_x: vx_uint32,
    pub step_y: vx_uint16,
    pub stride_x_bits: vx_uint16,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub union vx_pixel_value_t {
    pub RGB: [vx_uint8; 3],
    pub RGBX: [vx_uint8; 4],
    pub YUV: [vx_uint8; 3],
    pub U1: vx_bool,
    pub U8: vx_uint8,
    pub U16: vx_uint16,
    pub S16: vx_int16,
    pub U32: vx_uint32,
    pub S32: vx_int32,
    pub reserved: [vx_uint8; 16],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct vx_border_t {
    pub mode: vx_enum,
    pub constant_value: vx_pixel_value_t,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct vx_perf_t {
    pub tmp: vx_uint64,
    pub beg: vx_uint64,
    pub end: vx_uint64,
    pub sum: vx_uint64,
    pub avg: vx_uint64,
    pub min: vx_uint64,
    pub num: vx_uint64,
    pub max: vx_uint64,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct vx_kernel_info_t {
    pub enumeration: vx_enum,
    pub name: [vx_char; consts::VX_MAX_KERNEL_NAME as usize],
}

pub type vx_log_callback_f =
    Option<unsafe extern "C" fn(context: vx_context, r: vx_reference, status: vx_status, string: *const vx_char)>;
pub type vx_kernel_f =
    Option<unsafe extern "C" fn(node: vx_node, parameters: *const vx_reference, num: vx_uint32) -> vx_status>;
pub type vx_kernel_initialize_f = vx_kernel_f;
pub type vx_kernel_deinitialize_f = vx_kernel_f;
pub type vx_kernel_validate_f = Option<
    unsafe extern "C" fn(
        node: vx_node,
        parameters: *const vx_reference,
        num: vx_uint32,
        metas: *const vx_meta_format,
    ) -> vx_status,
>;
pub type vx_kernel_image_valid_rectangle_f = Option<
    unsafe extern "C" fn(
        node: vx_node,
        index: vx_uint32,
        input_valid: *const *const vx_rectangle_t,
        output_valid: *const *mut vx_rectangle_t,
    ) -> vx_status,
>;
pub type vx_nodecomplete_f = Option<unsafe extern "C" fn(node: vx_node) -> vx_action>;
pub type vx_publish_kernels_f = unsafe extern "C" fn(context: vx_context) -> vx_status;

/// `const void *` and `void *` of the prototypes.
pub type Ptr = *mut c_void;
