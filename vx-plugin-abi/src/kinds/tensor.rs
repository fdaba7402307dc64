//! The Tensor kind on the module side: its wire meta, code, attribute codes and view.

use std::marker::PhantomData;

use abi_stable::StableAbi;

use super::ObjectMeta;
use super::ViewKind;
use super::view::{Data, Element, ParamView, element_check, meta_for};
use crate::module_abi::{AbiError, Processor};
use crate::object_meta::{ParamPath};

/// `VX_TYPE_TENSOR`.
pub const CODE: u32 = 0x815;

/// Its meta-format attribute codes (re-exported in [`crate::wire::attribute`]).
pub mod attribute {
    /// `VX_TENSOR_NUMBER_OF_DIMS` (`vx_size`).
    pub const TENSOR_NUMBER_OF_DIMS: u32 = 0x81500;
    /// `VX_TENSOR_DIMS` (`vx_size[]`, one per dimension).
    pub const TENSOR_DIMS: u32 = 0x81501;
    /// `VX_TENSOR_DATA_TYPE` (`vx_enum`).
    pub const TENSOR_DATA_TYPE: u32 = 0x81502;
    /// `VX_TENSOR_FIXED_POINT_POSITION` (`vx_int8`).
    pub const TENSOR_FIXED_POINT_POSITION: u32 = 0x81503;
}

/// A tensor. The meta on the wire ([`ObjectMeta::Tensor`]).
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq)]
pub struct Wire {
    /// Dimensions used (≤ 6).
    pub num_dims: u32,
    /// Sizes, dimension 0 first (the first `num_dims` count).
    pub dims: [u64; 6],
    /// Element type ([`crate::wire::scalar_type`]).
    pub data_type: u32,
    /// `VX_TENSOR_FIXED_POINT_POSITION`.
    pub fixed_point_position: i8,
}


/// A tensor (or a view of one) of `T`: elements by index, `strides()` bytes apart per dimension.
pub struct Tensor<'a, T: Element> {
    data: Data<'a>,
    meta: ObjectMeta,
    _t: PhantomData<T>,
}

impl<'a, T: Element> ParamView<'a> for Tensor<'a, T> {
    fn map(p: &'a Processor, path: ParamPath, write: bool) -> Result<Self, AbiError> {
        let meta = meta_for::<Self>(p, path)?;
        Ok(Tensor { data: Data::map(p, path, write)?, meta, _t: PhantomData })
    }
}

impl<T: Element> ViewKind for Tensor<'_, T> {
    type At<'a> = Tensor<'a, T>;
    const DATA_TYPE: u32 = CODE;
    fn check(meta: &ObjectMeta) -> Result<(), String> {
        match meta {
            ObjectMeta::Tensor(Wire { data_type, .. }) if *data_type != 0 => element_check::<T>("tensor", *data_type),
            _ => Ok(()),
        }
    }
}

impl<T: Element> Tensor<'_, T> {
    /// The sizes, dimension 0 first.
    pub fn dims(&self) -> &[u64] {
        match &self.meta {
            ObjectMeta::Tensor(Wire { num_dims, dims, .. }) => &dims[..*num_dims as usize],
            _ => unreachable!("checked at map"),
        }
    }
    /// Byte strides per dimension.
    pub fn strides(&self) -> &[u64] {
        &self.data.m.strides[..self.dims().len()]
    }
    /// `VX_TENSOR_FIXED_POINT_POSITION`.
    pub fn fixed_point_position(&self) -> i8 {
        match &self.meta {
            ObjectMeta::Tensor(Wire { fixed_point_position, .. }) => *fixed_point_position,
            _ => unreachable!("checked at map"),
        }
    }
    fn offset(&self, index: &[usize]) -> usize {
        let dims = self.dims();
        assert!(
            index.len() == dims.len() && index.iter().zip(dims).all(|(i, d)| (*i as u64) < *d),
            "index {index:?} outside a tensor of {dims:?}"
        );
        index.iter().zip(self.strides()).map(|(i, s)| i * *s as usize).sum::<usize>() / size_of::<T>()
    }
    /// The element at `index` (one entry per dimension). Panics outside the tensor.
    pub fn get(&self, index: &[usize]) -> T {
        self.data.slice::<T>()[self.offset(index)]
    }
    /// Write the element at `index`. Panics outside the tensor or when mapped for reading.
    #[track_caller]
    pub fn set(&mut self, index: &[usize], value: T) {
        let o = self.offset(index);
        self.data.slice_mut::<T>()[o] = value;
    }
}

