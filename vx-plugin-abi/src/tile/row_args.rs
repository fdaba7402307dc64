//! The parameters of one row-entry call ([`RowArgs`]): what [`TileArgs`](super::TileArgs) is to a
//! tiling function, for a row kernel's row entry (ABI v8, `docs/design/fusion.md` §6.1). Inputs
//! are [`RowTable`]s, outputs [`RowSink`]s, scalars by value; the one unsafe step is
//! [`RowArgs::new`], whose contract the host upholds.

use std::cell::Cell;

use super::rows::{RowRegion, RowSink, RowTable};
use super::{TileError, TileParam, TileParamKind, TilePixel, TileScalar};
use crate::module_abi::{RowSinkDesc, RowSourceDesc};
use crate::status::Status;

/// The parameters of one row-entry call and the region it computes.
#[derive(Debug)]
pub struct RowArgs<'a> {
    params: &'a [TileParam],
    region: RowRegion,
    /// Outputs handed out (each at most once: a [`RowSink`] is a unique borrow of its rows).
    taken: Cell<u64>,
}

fn bad(status: Status, message: String) -> TileError {
    TileError::new(status, message)
}

impl<'a> RowArgs<'a> {
    /// The parameters of a row-entry call over `region`.
    ///
    /// # Safety
    ///
    /// For `'a`: every [`TileParamKind::InputRows`] entry's `ptr` points to a [`RowSourceDesc`]
    /// whose table upholds [`RowTable::from_raw`]'s contract for `region.image_width` pixels of the
    /// entry's format; every [`TileParamKind::OutputRows`] entry's `ptr` points to a
    /// [`RowSinkDesc`] whose `region.count` rows uphold [`RowSink::from_raw`]'s contract (no output
    /// row overlaps an input row or another output's row); every [`TileParamKind::Scalar`]
    /// entry's `ptr` points to a value of its type code.
    pub unsafe fn new(params: &'a [TileParam], region: RowRegion) -> RowArgs<'a> {
        RowArgs { params, region, taken: Cell::new(0) }
    }

    /// The output rows and columns of the call.
    pub fn region(&self) -> RowRegion {
        self.region
    }

    /// The parameters array and its length, to hand the call on across the ABI.
    pub fn as_raw(&self) -> (*const TileParam, u32) {
        (self.params.as_ptr(), self.params.len() as u32)
    }

    fn param<T: TilePixel>(&self, i: usize, kind: TileParamKind) -> Result<&'a TileParam, TileError> {
        let p = self.params.get(i).ok_or_else(|| bad(Status::InvalidParameters, format!("no parameter {i}")))?;
        if p.kind != kind {
            return Err(bad(Status::InvalidParameters, format!("parameter {i} is {:?}, not {kind:?}", p.kind)));
        }
        if p.type_code != T::FORMAT.fourcc() || p.ptr.is_null() {
            return Err(bad(Status::InvalidFormat, format!("parameter {i}: the pixel type does not match the image")));
        }
        Ok(p)
    }

    /// Input image parameter `i` as a table of rows of `T` pixels.
    pub fn input<T: TilePixel>(&self, i: usize) -> Result<RowTable<'a, T>, TileError> {
        let p = self.param::<T>(i, TileParamKind::InputRows)?;
        // SAFETY: an `InputRows` entry points to a RowSourceDesc valid for 'a (contract of `new`).
        let d = unsafe { &*(p.ptr as *const RowSourceDesc) };
        if d.format != p.type_code {
            return Err(bad(Status::InvalidFormat, format!("parameter {i}: the row table has another format")));
        }
        // SAFETY: the table's rows hold `image_width` pixels of this format (checked above: T's)
        // and nobody writes them for 'a (contract of `new`).
        Ok(unsafe { RowTable::from_raw(d.first_row, d.rows, d.len, self.region.image_width) })
    }

    /// Output image parameter `i` as the call's output rows of `T` pixels (once per parameter).
    pub fn output<T: TilePixel>(&self, i: usize) -> Result<RowSink<'a, T>, TileError> {
        let p = self.param::<T>(i, TileParamKind::OutputRows)?;
        let bit = 1u64 << (i % 64);
        if i >= 64 || self.taken.get() & bit != 0 {
            return Err(bad(Status::InvalidParameters, format!("output {i} was taken already")));
        }
        // SAFETY: an `OutputRows` entry points to a RowSinkDesc valid for 'a (contract of `new`).
        let d = unsafe { &*(p.ptr as *const RowSinkDesc) };
        if d.format != p.type_code {
            return Err(bad(Status::InvalidFormat, format!("parameter {i}: the row sink has another format")));
        }
        self.taken.set(self.taken.get() | bit);
        // SAFETY: the sink's `count` rows hold `image_width` pixels of this format (checked: T's)
        // that only it accesses for 'a (contract of `new`); handed out once (`taken`).
        Ok(unsafe { RowSink::from_raw(d.rows, self.region.count, self.region.image_width) })
    }

    /// Input scalar parameter `i`, by value.
    pub fn scalar<T: TileScalar>(&self, i: usize) -> Result<T, TileError> {
        // SAFETY: scalar entries point to a value of their type code (contract of `new`).
        unsafe { super::scalar_param(self.params, i) }
    }

    /// True when optional parameter `i` is set.
    pub fn is_present(&self, i: usize) -> bool {
        self.params.get(i).is_some_and(|p| p.kind != TileParamKind::Absent)
    }
}
