//! The Scalar view: what a `#[user_kernel]` takes for the kind (its wire side: `kinds/scalar.rs`).

use crate::kinds::ObjectMeta;
use crate::kinds::ViewKind;
use super::{ParamView, assert_writable, element_check, meta_for};
use crate::module_abi::{AbiError, ParamMeta, Processor};
use crate::object_meta::{ParamPath};
use crate::tile::TileScalar;
use crate::kinds::scalar::{CODE, ScalarBits, Wire};

/// A scalar of type `T`: read its value; `&mut` writes it.
pub struct Scalar<'a, T: TileScalar> {
    p: &'a Processor,
    path: ParamPath,
    value: T,
    writable: bool,
}

fn scalar_value<T: TileScalar>(bits: ScalarBits) -> T {
    // SAFETY: the bytes hold a value of T's scalar type (type code checked by the caller) at
    // their start; read_unaligned makes no alignment assumption.
    unsafe { (bits.bytes.as_ptr() as *const T).read_unaligned() }
}

impl<'a, T: TileScalar> ParamView<'a> for Scalar<'a, T> {
    fn map(p: &'a Processor, path: ParamPath, write: bool) -> Result<Self, AbiError> {
        meta_for::<Self>(p, path)?;
        let bits = p.read_scalar(path)?;
        Ok(Scalar { p, path, value: scalar_value(bits), writable: write })
    }
}

impl<T: TileScalar> ViewKind for Scalar<'_, T> {
    type At<'a> = Scalar<'a, T>;
    const DATA_TYPE: u32 = CODE;
    const OUTPUT_META_WITHOUT_EXEMPLAR: bool = true;
    fn check(meta: &ObjectMeta) -> Result<(), String> {
        match meta {
            ObjectMeta::Scalar(Wire { scalar_type, .. }) => element_check::<T>("scalar", *scalar_type),
            _ => Ok(()),
        }
    }
    fn output_meta(_: Option<&ObjectMeta>) -> Option<ObjectMeta> {
        Some(ObjectMeta::Scalar(Wire {
            scalar_type: T::TYPE_CODE,
            value: ScalarBits { type_code: T::TYPE_CODE, bytes: [0; 8] },
        }))
    }
}

impl ParamMeta {
    /// A scalar's type code, for [`ParamMeta::of`] (`None`: the meta is not a scalar's).
    pub(crate) fn scalar_part(meta: &ObjectMeta) -> Option<u32> {
        match meta {
            ObjectMeta::Scalar(s) => Some(s.scalar_type),
            _ => None,
        }
    }
}

impl<T: TileScalar> Scalar<'_, T> {
    /// The value.
    pub fn get(&self) -> T {
        self.value
    }
    /// Write the value. Panics when mapped for reading.
    #[track_caller]
    pub fn set(&mut self, value: T) -> Result<(), AbiError> {
        assert_writable(self.writable);
        let mut bytes = [0u8; 8];
        // SAFETY: T is at most 8 bytes (the scalar types); written unaligned at the start.
        unsafe { (bytes.as_mut_ptr() as *mut T).write_unaligned(value) };
        self.p.write_scalar(self.path, ScalarBits { type_code: T::TYPE_CODE, bytes })?;
        self.value = value;
        Ok(())
    }
}

