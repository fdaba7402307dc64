//! Convolutions (`vx_convolution`): an odd `rows × columns` matrix of S16 coefficients and a
//! power-of-two scale, copied in and out whole (`vxCopyConvolutionCoefficients`).

use std::sync::atomic::{AtomicU32, Ordering};

use crate::data::items::{ArrayItem, ArrayItemType};
use crate::data::kernel_view::KernelView;
use crate::data::kind::{
    Applied, BlobBody, BlobKind, Handle, ObjectKind, Refusal, blob_object, exactly, kind_names, meta_attributes,
    positive,
};
use crate::data::object::{Access, ObjectHeader};
use crate::data::wire::{AttrValue, size};
use crate::error::{Error, ErrorKind, Result};
use crate::shared::{AsContext, VirtualScope};
use vx_plugin_abi::kinds::convolution::Wire;

kind_names! {
    kind: ConvolutionKind, meta: ConvolutionMeta, attr: ConvolutionAttr, partial: ConvolutionPartial;
    exports: Convolution, ConvolutionAttr, ConvolutionMeta, MAX_CONVOLUTION_DIMENSION
}

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

/// `VX_CONVOLUTION_SCALE`: a value, not meta data; 1 in a new convolution.
pub struct Scale(AtomicU32);

impl Default for Scale {
    fn default() -> Scale {
        Scale(AtomicU32::new(1))
    }
}

/// The [`ObjectKind`] of convolutions.
pub struct ConvolutionKind;

/// A convolution handle.
pub type Convolution = Handle<ConvolutionKind>;

impl std::fmt::Display for ConvolutionMeta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "convolution {}x{}", self.columns, self.rows)
    }
}

meta_attributes! {
    /// One meta-format attribute of a convolution.
    ConvolutionAttr, ConvolutionPartial for ConvolutionMeta {
        /// `VX_CONVOLUTION_ROWS`.
        Rows(usize) => rows @ CONVOLUTION_ROWS: AttrValue::size,
        /// `VX_CONVOLUTION_COLUMNS`.
        Columns(usize) => columns @ CONVOLUTION_COLUMNS: AttrValue::size,
    }
}

impl ObjectKind for ConvolutionKind {
    type Wire = Wire;
    const NAME: &'static str = "Convolution";
    type Meta = ConvolutionMeta;
    type Attr = ConvolutionAttr;
    type Partial = ConvolutionPartial;
    type Body = BlobBody<ConvolutionKind>;
    blob_object!();
    fn fmt_details(h: &Convolution, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x{}, scale {}", h.columns(), h.rows(), h.scale())
    }
    fn apply(h: &Convolution, w: &ConvolutionMeta) -> std::result::Result<Applied, Refusal> {
        exactly(&h.meta(), w, ErrorKind::InvalidDimension)
    }
    fn exemplar(p: &mut ConvolutionPartial, m: &ConvolutionMeta) {
        *p = ConvolutionPartial::of(m);
    }
    fn resolve(p: &ConvolutionPartial) -> std::result::Result<ConvolutionMeta, &'static str> {
        Ok(ConvolutionMeta {
            columns: positive(p.columns, "convolution columns")?,
            rows: positive(p.rows, "convolution rows")?,
        })
    }
    fn to_wire(h: &Convolution) -> Wire {
        let m = h.meta();
        Wire { columns: m.columns as u64, rows: m.rows as u64, scale: h.scale() }
    }
    /// The scale is a value, not meta data: not taken (`ConvolutionMeta` has none).
    fn from_wire(w: &Wire) -> Result<ConvolutionMeta> {
        let Wire { columns, rows, .. } = w;
        Ok(ConvolutionMeta { columns: size(*columns)?, rows: size(*rows)? })
    }
}

impl BlobKind for ConvolutionKind {
    type Extra = Scale;
    fn layout(m: &ConvolutionMeta) -> Result<usize> {
        check_side("column count", m.columns).and_then(|_| check_side("row count", m.rows))?;
        Ok(m.columns * m.rows * 2)
    }
    fn element(_: &ConvolutionMeta) -> ArrayItemType {
        i16::ITEM_TYPE
    }
}

fn check_side(what: &str, n: usize) -> Result<()> {
    if !(3..=MAX_CONVOLUTION_DIMENSION).contains(&n) || n.is_multiple_of(2) {
        return Err(Error::new(ErrorKind::InvalidDimension, format!("a convolution's {what} must be odd, 3 to 15"))
            .expected_found(format!("3, 5, …, {MAX_CONVOLUTION_DIMENSION}"), n));
    }
    Ok(())
}

impl Handle<ConvolutionKind> {
    /// `vxCreateConvolution`: zero coefficients, scale 1.
    pub fn new(ctx: &impl AsContext, columns: usize, rows: usize) -> Result<Convolution> {
        Convolution::with_header(ObjectHeader::new(ctx, "convolution", None)?, ConvolutionMeta { columns, rows })
    }

    /// `vxCreateVirtualConvolution`.
    pub fn new_virtual(graph: &impl VirtualScope, columns: usize, rows: usize) -> Result<Convolution> {
        let header = ObjectHeader::new(graph, "virtual-convolution", Some(graph.scope_id()))?;
        Convolution::with_header(header, ConvolutionMeta { columns, rows })
    }

    /// `VX_CONVOLUTION_COLUMNS`.
    pub fn columns(&self) -> usize {
        self.obj.body.meta.columns
    }
    /// `VX_CONVOLUTION_ROWS`.
    pub fn rows(&self) -> usize {
        self.obj.body.meta.rows
    }
    /// `VX_CONVOLUTION_SCALE`.
    pub fn scale(&self) -> u32 {
        self.obj.body.extra.0.load(Ordering::Acquire)
    }
    /// `vxSetConvolutionAttribute(VX_CONVOLUTION_SCALE)`: a power of two.
    pub fn set_scale(&self, scale: u32) -> Result<()> {
        if !scale.is_power_of_two() {
            return Err(Error::new(ErrorKind::InvalidValue, "a convolution's scale must be a power of two")
                .on_object(&self.name())
                .expected_found("1, 2, 4, …, 2^31", scale));
        }
        self.obj.body.extra.0.store(scale, Ordering::Release);
        Ok(())
    }
    /// `vxCopyConvolutionCoefficients` (read), row-major.
    pub fn copy_to(&self, out: &mut [i16]) -> Result<()> {
        self.copy_whole_to(out, Access::Application)
    }
    /// `vxCopyConvolutionCoefficients` (write), row-major.
    pub fn copy_from(&self, src: &[i16]) -> Result<()> {
        self.copy_whole_from(src, Access::Application)
    }
}

impl KernelView<'_, Convolution> {
    /// Copy the coefficients out, row-major.
    pub fn copy_to(&self, out: &mut [i16]) -> Result<()> {
        self.object.copy_whole_to(out, Access::Kernel)
    }
    /// Copy the coefficients in, row-major.
    pub fn copy_from(&self, src: &[i16]) -> Result<()> {
        self.object.copy_whole_from(src, Access::Kernel)
    }
}
