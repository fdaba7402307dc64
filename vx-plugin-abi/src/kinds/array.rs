//! The Array kind on the module side: its wire meta, code, attribute codes and view.

use std::marker::PhantomData;

use abi_stable::StableAbi;

use super::ObjectMeta;
use super::ViewKind;
use super::view::{Element, ParamView, Zero, assert_writable, element_check, meta_for};
use crate::module_abi::{AbiError, Processor, Validator};
use crate::object_meta::{ParamPath};

/// `VX_TYPE_ARRAY`.
pub const CODE: u32 = 0x80E;

/// Its meta-format attribute codes (re-exported in [`crate::wire::attribute`]).
pub mod attribute {
    /// `VX_ARRAY_ITEMTYPE` (`vx_enum`).
    pub const ARRAY_ITEMTYPE: u32 = 0x80E00;
    /// `VX_ARRAY_CAPACITY` (`vx_size`).
    pub const ARRAY_CAPACITY: u32 = 0x80E02;
    /// `VX_ARRAY_ITEMSIZE` (`vx_size`; for user-struct items).
    pub const ARRAY_ITEMSIZE: u32 = 0x80E03;
}

/// An array. The meta on the wire ([`ObjectMeta::Array`]).
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq)]
pub struct Wire {
    /// A [`crate::wire::item_type`] code (0: not known yet).
    pub item_type: u32,
    /// Bytes per item.
    pub item_size: u64,
    /// Most items.
    pub capacity: u64,
    /// Items now (ignored when setting an output's meta).
    pub num_items: u64,
}


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
