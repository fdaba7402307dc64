//! The Array view: what a `#[user_kernel]` takes for the kind (its wire side: `kinds/array.rs`).

use std::marker::PhantomData;
use crate::kinds::ObjectMeta;
use crate::kinds::ViewKind;
use super::{Element, ParamView, Zero, assert_writable, element_check, meta_for};
use crate::module_abi::{AbiError, Processor, Validator};
use crate::object_meta::{ParamPath};
use crate::kinds::array::{CODE, Wire};


/// An array of `T` items: read them, and with `&mut` append and truncate.
pub struct Array<'a, T: Element> {
    p: &'a Processor,
    path: ParamPath,
    writable: bool,
    _t: PhantomData<T>,
}

impl<'a, T: Element> ParamView<'a> for Array<'a, T> {
    fn map(p: &'a Processor, path: ParamPath, write: bool) -> Result<Self, AbiError> {
        meta_for::<Self>(p, path)?;
        Ok(Array { p, path, writable: write, _t: PhantomData })
    }
}

impl<T: Element> ViewKind for Array<'_, T> {
    type At<'a> = Array<'a, T>;
    const DATA_TYPE: u32 = CODE;
    fn check(meta: &ObjectMeta) -> Result<(), String> {
        match meta {
            ObjectMeta::Array(Wire { item_type, .. }) if *item_type != 0 => element_check::<T>("array", *item_type),
            _ => Ok(()),
        }
    }
}

impl<T: Element> Array<'_, T> {
    /// Items now.
    pub fn len(&self) -> Result<usize, AbiError> {
        Ok(self.p.array_info(self.path)?.num_items as usize)
    }
    /// Whether it holds no item.
    pub fn is_empty(&self) -> Result<bool, AbiError> {
        Ok(self.len()? == 0)
    }
    /// Most items.
    pub fn capacity(&self) -> Result<usize, AbiError> {
        Ok(self.p.array_info(self.path)?.capacity as usize)
    }
    /// Every item.
    pub fn items(&self) -> Result<Vec<T>, AbiError> {
        let n = self.len()?;
        let mut out = vec![T::default_zero(); n];
        // SAFETY: `out` holds n initialised T; viewed as its bytes for the copy.
        let bytes = unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr() as *mut u8, n * size_of::<T>()) };
        let got = self.p.array_read(self.path, bytes)? as usize;
        out.truncate(got);
        Ok(out)
    }
    /// Append `items`. Panics when mapped for reading.
    #[track_caller]
    pub fn extend(&mut self, items: &[T]) -> Result<(), AbiError> {
        assert_writable(self.writable);
        // SAFETY: T: Plain: its bytes are initialised.
        let bytes = unsafe { std::slice::from_raw_parts(items.as_ptr() as *const u8, size_of_val(items)) };
        self.p.array_add(self.path, bytes)
    }
    /// Keep the first `n` items. Panics when mapped for reading.
    #[track_caller]
    pub fn truncate(&mut self, n: usize) -> Result<(), AbiError> {
        assert_writable(self.writable);
        self.p.array_truncate(self.path, n as u64)
    }
}

impl Validator {
    /// Set output array `index` to `capacity` items of the scalar type `scalar_type` (through
    /// [`Self::set_output_meta`]).
    pub fn set_output_array(&self, index: u32, scalar_type: u32, capacity: u64) -> Result<(), AbiError> {
        let wire = Wire { item_type: scalar_type, item_size: 0, capacity, num_items: 0 };
        self.set_output_meta(index, &ObjectMeta::Array(wire))
    }
}
