//! Convolutions (`vx_convolution`): an odd `rows × columns` matrix of S16 coefficients and a
//! power-of-two scale, copied in and out whole (`vxCopyConvolutionCoefficients`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::data::blob::Blob;
use crate::data::kernel_view::KernelView;
use crate::data::object::{Access, ObjectHeader};
use crate::error::{Error, ErrorKind, Result};
use crate::shared::{AsContext, VirtualScope};

/// `VX_CONTEXT_CONVOLUTION_MAX_DIMENSION`: the largest convolution side.
pub const MAX_CONVOLUTION_DIMENSION: usize = 15;

/// The meta data of a convolution (`VX_CONVOLUTION_*` but the scale, which is a value).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConvolutionMeta {
    /// `VX_CONVOLUTION_COLUMNS`.
    pub columns: usize,
    /// `VX_CONVOLUTION_ROWS`.
    pub rows: usize,
}

pub(crate) struct ConvolutionObj {
    pub(super) header: ObjectHeader,
    meta: ConvolutionMeta,
    scale: AtomicU32,
    data: Blob,
}

/// A convolution handle.
#[derive(Clone)]
pub struct Convolution {
    pub(super) obj: Arc<ConvolutionObj>,
}

impl std::fmt::Debug for Convolution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Convolution('{}', {}x{}, scale {})", self.name(), self.columns(), self.rows(), self.scale())
    }
}

fn check_side(what: &str, n: usize) -> Result<()> {
    if !(3..=MAX_CONVOLUTION_DIMENSION).contains(&n) || n.is_multiple_of(2) {
        return Err(Error::new(ErrorKind::InvalidDimension, format!("a convolution's {what} must be odd, 3 to 15"))
            .expected_found(format!("3, 5, …, {MAX_CONVOLUTION_DIMENSION}"), n));
    }
    Ok(())
}

impl Convolution {
    /// The storage and header (a module kernel's raw map).
    pub(crate) fn blob(&self) -> (&Blob, &ObjectHeader) {
        (&self.obj.data, &self.obj.header)
    }

    /// `vxCreateConvolution`: zero coefficients, scale 1.
    pub fn new(ctx: &impl AsContext, columns: usize, rows: usize) -> Result<Convolution> {
        Convolution::with_header(ObjectHeader::new(ctx, "convolution", None)?, ConvolutionMeta { columns, rows })
    }

    /// `vxCreateVirtualConvolution`.
    pub fn new_virtual(graph: &impl VirtualScope, columns: usize, rows: usize) -> Result<Convolution> {
        let header = ObjectHeader::new(graph, "virtual-convolution", Some(graph.scope_id()))?;
        Convolution::with_header(header, ConvolutionMeta { columns, rows })
    }

    pub(super) fn with_header(header: ObjectHeader, meta: ConvolutionMeta) -> Result<Convolution> {
        check_side("column count", meta.columns)
            .and_then(|_| check_side("row count", meta.rows))
            .map_err(|e| e.on_object(&header.name()))?;
        let data = Blob::new(meta.columns * meta.rows * 2);
        Ok(Convolution { obj: Arc::new(ConvolutionObj { header, meta, scale: AtomicU32::new(1), data }) })
    }

    /// The attributes that make its meta data.
    pub fn meta(&self) -> ConvolutionMeta {
        self.obj.meta
    }
    /// `VX_CONVOLUTION_COLUMNS`.
    pub fn columns(&self) -> usize {
        self.obj.meta.columns
    }
    /// `VX_CONVOLUTION_ROWS`.
    pub fn rows(&self) -> usize {
        self.obj.meta.rows
    }
    /// `VX_CONVOLUTION_SIZE`: bytes of coefficients.
    pub fn size(&self) -> usize {
        self.obj.data.len()
    }
    /// `VX_CONVOLUTION_SCALE`.
    pub fn scale(&self) -> u32 {
        self.obj.scale.load(Ordering::Acquire)
    }
    /// `vxSetConvolutionAttribute(VX_CONVOLUTION_SCALE)`: a power of two.
    pub fn set_scale(&self, scale: u32) -> Result<()> {
        if !scale.is_power_of_two() {
            return Err(Error::new(ErrorKind::InvalidValue, "a convolution's scale must be a power of two")
                .on_object(&self.name())
                .expected_found("1, 2, 4, …, 2^31", scale));
        }
        self.obj.scale.store(scale, Ordering::Release);
        Ok(())
    }
    /// The object's name.
    pub fn name(&self) -> String {
        self.obj.header.name()
    }
    /// True once the coefficients exist.
    pub fn is_allocated(&self) -> bool {
        self.obj.data.is_allocated()
    }
    pub(super) fn ensure_allocated(&self) -> Result<()> {
        self.obj.data.ensure(&self.obj.header)
    }

    fn copy_to_impl(&self, out: &mut [i16], access: Access) -> Result<()> {
        self.obj.data.copy_out_whole(&self.obj.header, access, out)
    }

    fn copy_from_impl(&self, src: &[i16], access: Access) -> Result<()> {
        self.obj.data.copy_in_whole(&self.obj.header, access, src)
    }

    /// `vxCopyConvolutionCoefficients` (read), row-major.
    pub fn copy_to(&self, out: &mut [i16]) -> Result<()> {
        self.copy_to_impl(out, Access::Application)
    }
    /// `vxCopyConvolutionCoefficients` (write), row-major.
    pub fn copy_from(&self, src: &[i16]) -> Result<()> {
        self.copy_from_impl(src, Access::Application)
    }
}

impl KernelView<'_, Convolution> {
    /// Copy the coefficients out, row-major.
    pub fn copy_to(&self, out: &mut [i16]) -> Result<()> {
        self.object.copy_to_impl(out, Access::Kernel)
    }
    /// Copy the coefficients in, row-major.
    pub fn copy_from(&self, src: &[i16]) -> Result<()> {
        self.object.copy_from_impl(src, Access::Kernel)
    }
}
