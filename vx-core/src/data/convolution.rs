//! Convolutions (`vx_convolution`): an odd `rows × columns` matrix of S16 coefficients and a
//! power-of-two scale, copied in and out whole (`vxCopyConvolutionCoefficients`).

use std::sync::atomic::{AtomicU32, Ordering};

use crate::data::items::{ArrayItem, ArrayItemType};
use crate::data::kernel_view::KernelView;
use crate::data::kind::{
    Applied, BlobBody, BlobKind, Handle, ObjectKind, Recorded, Refusal, blob_object, kind_names, meta_attributes,
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

/// The meta data of a convolution (`VX_CONVOLUTION_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConvolutionMeta {
    /// `VX_CONVOLUTION_COLUMNS`.
    pub columns: usize,
    /// `VX_CONVOLUTION_ROWS`.
    pub rows: usize,
    /// `VX_CONVOLUTION_SCALE`, a power of two: an object's scale now (it may change: a value as
    /// much as meta data); in a meta format, the scale the output must have, 0 for any (what
    /// `vxSetMetaFormatFromReference` leaves it, as OpenVX's sample implementation does).
    pub scale: u32,
}

/// `VX_CONVOLUTION_SCALE`: 1 in a new convolution.
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
        write!(f, "convolution {}x{}", self.columns, self.rows)?;
        match self.scale {
            0 => Ok(()),
            s => write!(f, " scale {s}"),
        }
    }
}

meta_attributes! {
    /// One meta-format attribute of a convolution.
    ConvolutionAttr, ConvolutionPartial for ConvolutionMeta {
        /// `VX_CONVOLUTION_ROWS`.
        Rows(usize) => rows @ CONVOLUTION_ROWS: AttrValue::size,
        /// `VX_CONVOLUTION_COLUMNS`.
        Columns(usize) => columns @ CONVOLUTION_COLUMNS: AttrValue::size,
        /// `VX_CONVOLUTION_SCALE`: a power of two (unset: any).
        Scale(u32) => scale @ CONVOLUTION_SCALE: AttrValue::u32,
    }
}

/// `scale` if it is a power of two (OpenVX's rule for `VX_CONVOLUTION_SCALE`).
fn power_of_two(scale: u32) -> Result<u32> {
    if !scale.is_power_of_two() {
        return Err(Error::new(ErrorKind::InvalidValue, "a convolution's scale must be a power of two")
            .expected_found("1, 2, 4, …, 2^31", scale));
    }
    Ok(scale)
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
    /// Sides must match; a scale (0: any) is given to a virtual convolution, and a real one must
    /// have it (`InvalidValue`).
    fn apply(h: &Convolution, w: &ConvolutionMeta) -> std::result::Result<Applied, Refusal> {
        let m = h.meta();
        if (m.columns, m.rows) != (w.columns, w.rows) {
            return Err(Refusal::Mismatch(ErrorKind::InvalidDimension));
        }
        if w.scale == 0 || w.scale == m.scale {
            return Ok(Applied::Unchanged);
        }
        if !h.is_virtual() {
            return Err(Refusal::Mismatch(ErrorKind::InvalidValue));
        }
        h.set_scale(w.scale)?;
        Ok(Applied::Completed)
    }
    fn set(p: &mut ConvolutionPartial, a: ConvolutionAttr) -> Result<()> {
        if let ConvolutionAttr::Scale(s) = a {
            power_of_two(s)?;
        }
        p.record(a);
        Ok(())
    }
    /// A scale of 0 leaves it unset (any).
    fn exemplar(p: &mut ConvolutionPartial, m: &ConvolutionMeta) {
        *p = ConvolutionPartial::of(m);
        p.scale = p.scale.filter(|s| *s != 0);
    }
    /// Without the scale (0: any): the scale is also a value the application may change.
    fn exemplar_meta(h: &Convolution) -> ConvolutionMeta {
        ConvolutionMeta { scale: 0, ..h.meta() }
    }
    fn resolve(p: &ConvolutionPartial) -> std::result::Result<ConvolutionMeta, &'static str> {
        Ok(ConvolutionMeta {
            columns: positive(p.columns, "convolution columns")?,
            rows: positive(p.rows, "convolution rows")?,
            scale: p.scale.unwrap_or(0),
        })
    }
    fn to_wire(h: &Convolution) -> Wire {
        let m = h.meta();
        Wire { columns: m.columns as u64, rows: m.rows as u64, scale: m.scale }
    }
    /// A scale of 0 is "any"; another must be a power of two.
    fn from_wire(w: &Wire) -> Result<ConvolutionMeta> {
        let Wire { columns, rows, scale } = *w;
        let scale = if scale == 0 { 0 } else { power_of_two(scale)? };
        Ok(ConvolutionMeta { columns: size(columns)?, rows: size(rows)?, scale })
    }
}

impl BlobKind for ConvolutionKind {
    type Extra = Scale;
    /// The meta data's scale (1 when 0, any).
    fn extra_of(m: &ConvolutionMeta) -> Scale {
        Scale(AtomicU32::new(m.scale.max(1)))
    }
    fn meta_of(m: &ConvolutionMeta, scale: &Scale) -> ConvolutionMeta {
        ConvolutionMeta { scale: scale.0.load(Ordering::Acquire), ..*m }
    }
    fn layout(m: &ConvolutionMeta) -> Result<usize> {
        check_side("column count", m.columns).and_then(|_| check_side("row count", m.rows))?;
        if m.scale != 0 {
            power_of_two(m.scale)?;
        }
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
        Convolution::with_header(
            ObjectHeader::new(ctx, "convolution", None)?,
            ConvolutionMeta { columns, rows, scale: 1 },
        )
    }

    /// `vxCreateVirtualConvolution`.
    pub fn new_virtual(graph: &impl VirtualScope, columns: usize, rows: usize) -> Result<Convolution> {
        let header = ObjectHeader::new(graph, "virtual-convolution", Some(graph.scope_id()))?;
        Convolution::with_header(header, ConvolutionMeta { columns, rows, scale: 1 })
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
        power_of_two(scale).map_err(|e| e.on_object(&self.name()))?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::kinds::{ObjectMeta, Reference};
    use crate::data::types::DataType;
    use crate::kernel::meta_format::MetaFormat;
    use crate::{Context, Graph};

    fn meta(scale: u32) -> ConvolutionMeta {
        ConvolutionMeta { columns: 3, rows: 5, scale }
    }

    #[test]
    fn a_meta_formats_scale_is_a_power_of_two_left_unset_by_an_exemplar() {
        let ctx = Context::new().unwrap();
        let c = Convolution::new(&ctx, 3, 5).unwrap();
        c.set_scale(8).unwrap();
        assert_eq!(c.meta(), meta(8), "an object's meta data has its scale now");
        let mut m = MetaFormat::new(0, DataType::Convolution);
        m.set_from_reference(&Reference::from(&c)).unwrap();
        assert_eq!(m.resolve().unwrap(), ObjectMeta::Convolution(meta(0)), "the scale is a value: any");
        assert_eq!(m.set(ConvolutionAttr::Scale(3)).unwrap_err().kind(), ErrorKind::InvalidValue);
        assert_eq!(m.set(ConvolutionAttr::Scale(0)).unwrap_err().kind(), ErrorKind::InvalidValue);
        m.set(ConvolutionAttr::Scale(4)).unwrap();
        assert_eq!(m.resolve().unwrap(), ObjectMeta::Convolution(meta(4)));
        // A module's meta: 0 is any, another scale must be a power of two.
        let wire = |scale| ConvolutionKind::from_wire(&Wire { columns: 3, rows: 5, scale });
        assert_eq!(wire(0).unwrap(), meta(0));
        assert_eq!(wire(2).unwrap(), meta(2));
        assert_eq!(wire(6).unwrap_err().kind(), ErrorKind::InvalidValue);
        assert_eq!(ConvolutionKind::to_wire(&c), Wire { columns: 3, rows: 5, scale: 8 });
    }

    #[test]
    fn a_virtual_convolution_takes_the_scale_and_a_real_one_must_have_it() {
        let ctx = Context::new().unwrap();
        let g = Graph::new(&ctx).unwrap();
        let v = Convolution::new_virtual(&g, 3, 5).unwrap();
        assert!(matches!(ConvolutionKind::apply(&v, &meta(16)), Ok(Applied::Completed)));
        assert_eq!(v.scale(), 16);
        assert!(matches!(ConvolutionKind::apply(&v, &meta(16)), Ok(Applied::Unchanged)));
        let r = Convolution::new(&ctx, 3, 5).unwrap();
        assert!(matches!(ConvolutionKind::apply(&r, &meta(16)), Err(Refusal::Mismatch(ErrorKind::InvalidValue))));
        assert!(matches!(ConvolutionKind::apply(&r, &meta(0)), Ok(Applied::Unchanged)), "any scale");
        r.set_scale(16).unwrap();
        assert!(matches!(ConvolutionKind::apply(&r, &meta(16)), Ok(Applied::Unchanged)));
        let other = ConvolutionMeta { columns: 5, ..meta(0) };
        assert!(matches!(ConvolutionKind::apply(&r, &other), Err(Refusal::Mismatch(ErrorKind::InvalidDimension))));
        // A copy made from the meta data (an object array's item, a frame slot) has the scale.
        let item = ConvolutionKind::build(ObjectHeader::new(&ctx, "item", None).unwrap(), &r.meta()).unwrap();
        assert_eq!(item.scale(), 16);
    }
}
