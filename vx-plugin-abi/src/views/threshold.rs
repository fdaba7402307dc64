//! The Threshold view: what a `#[user_kernel]` takes for the kind (its wire side: `kinds/threshold.rs`).

use crate::kinds::ObjectMeta;
use crate::kinds::ViewKind;
use super::{ParamView, assert_writable, meta_for};
use crate::module_abi::{AbiError, Processor};
use crate::object_meta::{ParamPath};
use crate::kinds::threshold::{CODE, ThresholdBits};


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

