//! What crosses the module ABI besides the type loop (`docs/design/object-kinds.md`, step 7): a valid-rectangle
//! function (`typeloop.shrink`, `typeloop.shrink_attr`, `typeloop.shrink_panics`) and a
//! convolution's scale given by a validator (`typeloop.conv_scale`, `typeloop.conv_scale_attr`),
//! read back downstream (`typeloop.conv_read_scale`).

use std::sync::atomic::Ordering::SeqCst;

use vx_plugin_abi::module_abi::{AbiError, Validator};
use vx_plugin_abi::module_api::ValidRectFn;
use vx_plugin_abi::views::{Convolution, Image, Scalar};
use vx_plugin_abi::wire::attribute as at;
use vx_plugin_abi::{ObjectMeta, Rect, Status, user_kernel};

use crate::{COUNTS, bad};

/// `typeloop.counts` slot of `typeloop.shrink` / `typeloop.shrink_attr`: validate calls,
/// valid-rectangle calls, then the last call's input count, first input's `start_x` and `end_x`,
/// and output index.
const SHRINK: usize = 120;

/// The output's valid rectangle: the first input's, shrunk by one pixel on each side (counted and
/// recorded in slot [`SHRINK`]).
fn shrink_rect(index: u32, inputs: &[Rect], outputs: &mut [Rect]) -> Result<(), AbiError> {
    let c = &COUNTS[SHRINK];
    c[1].fetch_add(1, SeqCst);
    c[2].store(inputs.len() as u32, SeqCst);
    let r = inputs.first().ok_or_else(|| AbiError::new(Status::InvalidParameters, "no input rectangle"))?;
    c[3].store(r.start_x, SeqCst);
    c[4].store(r.end_x, SeqCst);
    c[5].store(index, SeqCst);
    let shrunk = Rect::new(r.start_x + 1, r.start_y + 1, r.end_x.saturating_sub(1), r.end_y.saturating_sub(1));
    outputs.iter_mut().for_each(|o| *o = shrunk);
    Ok(())
}

fn panicking_rect(_: u32, _: &[Rect], _: &mut [Rect]) -> Result<(), AbiError> {
    panic!("typeloop's valid rectangle function panics on purpose")
}

fn copy(a: &Image<'_, u8>, b: &mut Image<'_, u8>) {
    for y in 0..a.height() {
        b.row_mut(y).copy_from_slice(a.row(y));
    }
}

/// Output 1 like input 0, with `f` for its valid rectangle.
fn like_input(v: &Validator, f: ValidRectFn) -> Result<(), AbiError> {
    v.set_output_meta(1, &v.meta(0)?)?;
    v.set_output_valid_rect(1, f)
}

/// A copy whose output's valid rectangle is its input's shrunk by one on each side.
#[user_kernel(name = "typeloop.shrink", validate = shrink_validate)]
fn shrink(a: &Image<u8>, b: &mut Image<u8>) {
    copy(a, b)
}

fn shrink_validate(v: &Validator) -> Result<(), AbiError> {
    COUNTS[SHRINK][0].fetch_add(1, SeqCst);
    like_input(v, shrink_rect)
}

/// `typeloop.shrink`, its valid-rectangle function given by the attribute.
#[user_kernel(name = "typeloop.shrink_attr", valid_rect = shrink_rect)]
fn shrink_attr(a: &Image<u8>, b: &mut Image<u8>) {
    copy(a, b)
}

/// A copy whose valid-rectangle function panics.
#[user_kernel(name = "typeloop.shrink_panics", validate = shrink_panics_validate)]
fn shrink_panics(a: &Image<u8>, b: &mut Image<u8>) {
    copy(a, b)
}

fn shrink_panics_validate(v: &Validator) -> Result<(), AbiError> {
    like_input(v, panicking_rect)
}

/// Input 0's convolution meta and the scale input 1 asks for (any value, checked by the host).
fn conv_and_scale(v: &Validator) -> Result<(vx_plugin_abi::kinds::convolution::Wire, u32), AbiError> {
    let ObjectMeta::Convolution(c) = v.meta(0)? else { return Err(bad("parameter 0 is not a convolution")) };
    let ObjectMeta::Scalar(s) = v.meta(1)? else { return Err(bad("parameter 1 is not a scalar")) };
    let [a, b, c2, d, ..] = s.value.bytes;
    Ok((c, u32::from_ne_bytes([a, b, c2, d])))
}

/// Copies the coefficients; its validator gives the output the scale `scale` (whole meta).
#[user_kernel(name = "typeloop.conv_scale", validate = conv_scale_validate)]
fn conv_scale(a: &Convolution, _scale: u32, b: &mut Convolution) {
    b.as_mut_slice().copy_from_slice(a.as_slice())
}

fn conv_scale_validate(v: &Validator) -> Result<(), AbiError> {
    let (c, scale) = conv_and_scale(v)?;
    v.set_output_meta(2, &ObjectMeta::Convolution(vx_plugin_abi::kinds::convolution::Wire { scale, ..c }))
}

/// `typeloop.conv_scale`, the output's meta given attribute by attribute.
#[user_kernel(name = "typeloop.conv_scale_attr", validate = conv_scale_attr_validate)]
fn conv_scale_attr(a: &Convolution, _scale: u32, b: &mut Convolution) {
    b.as_mut_slice().copy_from_slice(a.as_slice())
}

fn conv_scale_attr_validate(v: &Validator) -> Result<(), AbiError> {
    let (c, scale) = conv_and_scale(v)?;
    v.set_output_attribute(2, at::CONVOLUTION_COLUMNS, &(c.columns as usize))?;
    v.set_output_attribute(2, at::CONVOLUTION_ROWS, &(c.rows as usize))?;
    v.set_output_attribute(2, at::CONVOLUTION_SCALE, &scale)
}

/// The input convolution's scale, as the module reads it.
#[user_kernel(name = "typeloop.conv_read_scale")]
fn conv_read_scale(c: &Convolution, out: &mut Scalar<u32>) -> Result<(), AbiError> {
    out.set(c.scale())
}
