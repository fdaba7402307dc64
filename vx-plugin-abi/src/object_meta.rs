//! Every data object across the module ABI: which object a call means
//! ([`ParamPath`]: a parameter, an item of an object array, a level of a pyramid), what it is
//! ([`ObjectMeta`], one variant per OpenVX type (generated from the list of kinds in `kinds/`), with the values a validator may read: a scalar's
//! value, an array's item count), a mapped object's memory ([`MappedData`]) and a threshold's values
//! ([`ThresholdBits`]). Plain wire data: the host fills it, modules read it; codes are the
//! [`crate::wire`] ones.

use abi_stable::StableAbi;

pub use crate::kinds::ObjectMeta;
pub use crate::kinds::scalar::ScalarBits;
pub use crate::kinds::threshold::ThresholdBits;

/// No item / no level in a [`ParamPath`].
pub const PATH_NONE: u32 = u32::MAX;

/// Which object a call means: parameter `index`, then item `item` of it (an object array), then
/// level `level` of that (a pyramid). An object array of pyramids reaches a level of an item.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ParamPath {
    /// The parameter index.
    pub index: u32,
    /// The object-array item ([`PATH_NONE`]: the parameter itself).
    pub item: u32,
    /// The pyramid level ([`PATH_NONE`]: the object itself).
    pub level: u32,
}

impl ParamPath {
    /// Parameter `index` itself.
    pub const fn param(index: u32) -> ParamPath {
        ParamPath { index, item: PATH_NONE, level: PATH_NONE }
    }
    /// Item `item` of this object array.
    pub const fn item(self, item: u32) -> ParamPath {
        ParamPath { item, ..self }
    }
    /// Level `level` of this pyramid.
    pub const fn level(self, level: u32) -> ParamPath {
        ParamPath { level, ..self }
    }
}

impl std::fmt::Display for ParamPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "parameter {}", self.index)?;
        if self.item != PATH_NONE {
            write!(f, " item {}", self.item)?;
        }
        if self.level != PATH_NONE {
            write!(f, " level {}", self.level)?;
        }
        Ok(())
    }
}

/// An object's memory mapped for a module's process (matrix, convolution, LUT, distribution,
/// remap, tensor, user data object): `bytes` bytes at `base`, 64-byte aligned, until unmapped by
/// `token`. A tensor view's elements are `strides` bytes apart per dimension (its `bytes` run
/// from its first element to one past its last); the other objects are packed.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy)]
pub struct MappedData {
    /// The first byte.
    pub base: *mut u8,
    /// Bytes reachable from `base`.
    pub bytes: u64,
    /// Byte strides per dimension (tensors; 0 otherwise).
    pub strides: [u64; 6],
    /// Pass back to `unmap`.
    pub token: u64,
}
