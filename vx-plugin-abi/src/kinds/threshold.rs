//! The Threshold kind on the module side: its wire meta, code, attribute codes and view.


use abi_stable::StableAbi;

use super::ObjectMeta;
use super::ViewKind;
use super::view::{ParamView, assert_writable, meta_for};
use crate::module_abi::{AbiError, Processor};
use crate::object_meta::{ParamPath};

/// `VX_TYPE_THRESHOLD`.
pub const CODE: u32 = 0x80A;

/// Its meta-format attribute codes (re-exported in [`crate::wire::attribute`]).
pub mod attribute {
    /// `VX_THRESHOLD_TYPE` (`vx_enum`).
    pub const THRESHOLD_TYPE: u32 = 0x80A00;
    /// `VX_THRESHOLD_INPUT_FORMAT` (`vx_df_image`).
    pub const THRESHOLD_INPUT_FORMAT: u32 = 0x80A07;
    /// `VX_THRESHOLD_OUTPUT_FORMAT` (`vx_df_image`).
    pub const THRESHOLD_OUTPUT_FORMAT: u32 = 0x80A08;
}

/// A threshold. The meta on the wire
/// ([`ObjectMeta::Threshold`]).
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq)]
pub struct Wire {
    /// [`crate::wire::threshold_type`].
    pub threshold_type: u32,
    /// Input image FourCC (0: any).
    pub input_format: u32,
    /// Output image FourCC (0: any).
    pub output_format: u32,
}

/// A threshold's values (`VX_THRESHOLD_THRESHOLD_VALUE`, `_LOWER`, `_UPPER`, `_TRUE_VALUE`,
/// `_FALSE_VALUE`), as 64-bit integers whatever the formats.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ThresholdBits {
    /// The binary threshold's value.
    pub value: i64,
    /// The range threshold's lower bound.
    pub lower: i64,
    /// The range threshold's upper bound.
    pub upper: i64,
    /// Output where the test holds.
    pub true_value: i64,
    /// Output where it does not.
    pub false_value: i64,
}


/// A threshold: its type, formats and values; `&mut` sets the values.
pub struct Threshold<'a> {
    p: &'a Processor,
    path: ParamPath,
    meta: ObjectMeta,
    values: ThresholdBits,
    writable: bool,
}

impl<'a> ParamView<'a> for Threshold<'a> {
    fn map(p: &'a Processor, path: ParamPath, write: bool) -> Result<Self, AbiError> {
        let meta = meta_for::<Self>(p, path)?;
        Ok(Threshold { p, path, meta, values: p.threshold_values(path)?, writable: write })
    }
}

impl ViewKind for Threshold<'_> {
    type At<'a> = Threshold<'a>;
    const DATA_TYPE: u32 = CODE;
    fn check(_: &ObjectMeta) -> Result<(), String> {
        Ok(())
    }
}

impl Threshold<'_> {
    /// The threshold's meta data (type and formats).
    pub fn meta(&self) -> &ObjectMeta {
        &self.meta
    }
    /// The values as read when mapped (or last set).
    pub fn values(&self) -> ThresholdBits {
        self.values
    }
    /// Set every value (binary value, range, outputs). Panics when mapped for reading.
    #[track_caller]
    pub fn set_values(&mut self, values: ThresholdBits) -> Result<(), AbiError> {
        assert_writable(self.writable);
        self.p.set_threshold_values(self.path, values)?;
        self.values = values;
        Ok(())
    }
}

