//! The Tensor view: what a `#[user_kernel]` takes for the kind (its wire side: `kinds/tensor.rs`).

use std::marker::PhantomData;
use crate::kinds::ObjectMeta;
use crate::kinds::ViewKind;
use super::{Data, Element, ParamView, element_check, meta_for};
use crate::module_abi::{AbiError, Processor};
use crate::object_meta::{ParamPath};
use crate::kinds::tensor::{CODE, Wire};


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
    #[track_caller]
    fn offset(&self, index: &[usize]) -> usize {
        let dims = self.dims();
        assert!(
            index.len() == dims.len() && index.iter().zip(dims).all(|(i, d)| (*i as u64) < *d),
            "index {index:?} outside a tensor of {dims:?}"
        );
        index.iter().zip(self.strides()).map(|(i, s)| i * *s as usize).sum::<usize>() / size_of::<T>()
    }
    /// The element at `index` (one entry per dimension). Panics outside the tensor.
    #[track_caller]
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

