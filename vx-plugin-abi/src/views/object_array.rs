//! The ObjectArray view: what a `#[user_kernel]` takes for the kind (its wire side: `kinds/object_array.rs`).

use std::marker::PhantomData;
use crate::kinds::ObjectMeta;
use crate::kinds::ViewKind;
use super::{ParamView, err, meta_for};
use crate::module_abi::{AbiError, Processor};
use crate::object_meta::{ParamPath};
use crate::status::Status;
use crate::kinds::object_array::{CODE, Wire};


/// An object array whose items are `V` views (`ObjectArray<Image<u8>>`,
/// `ObjectArray<Matrix<f32>>`, …), mapped when asked for.
pub struct ObjectArray<'a, V: ViewKind> {
    p: &'a Processor,
    path: ParamPath,
    count: usize,
    writable: bool,
    _v: PhantomData<fn() -> V>,
}

impl<'a, V: ViewKind> ParamView<'a> for ObjectArray<'a, V> {
    fn map(p: &'a Processor, path: ParamPath, write: bool) -> Result<Self, AbiError> {
        let count = match meta_for::<Self>(p, path)? {
            ObjectMeta::ObjectArray(Wire { count, .. }) => count as usize,
            _ => unreachable!("meta_for checked the type"),
        };
        Ok(ObjectArray { p, path, count, writable: write, _v: PhantomData })
    }
}

impl<V: ViewKind> ViewKind for ObjectArray<'_, V> {
    type At<'a> = ObjectArray<'a, V>;
    const DATA_TYPE: u32 = CODE;
    fn check(meta: &ObjectMeta) -> Result<(), String> {
        match meta {
            ObjectMeta::ObjectArray(Wire { item_type, .. }) if *item_type != V::DATA_TYPE => {
                Err(format!("an object array of type {item_type:#x} items, not the kernel's {:#x}", V::DATA_TYPE))
            }
            _ => Ok(()),
        }
    }
}

impl<'a, V: ViewKind> ObjectArray<'a, V> {
    /// Items.
    pub fn len(&self) -> usize {
        self.count
    }
    /// Whether it has no item.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
    /// Item `index`, mapped as this array is (for writing when taken by `&mut`).
    pub fn item(&self, index: usize) -> Result<V::At<'a>, AbiError>
    where
        V::At<'a>: ParamView<'a>,
    {
        if index >= self.count {
            return Err(err(self.path, Status::InvalidParameters, format!("no item {index} in {} items", self.count)));
        }
        <V::At<'a> as ParamView<'a>>::map(self.p, self.path.item(index as u32), self.writable)
    }
}
