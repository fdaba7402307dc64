//! Distributions (`vx_distribution`): `bins` U32 frequencies over `[offset, offset + range)`,
//! copied or mapped whole (`vxCopyDistribution`, `vxMapDistribution`).

use crate::data::blob::{MappedSlice, MappedSliceMut};
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
use vx_plugin_abi::kinds::distribution::Wire;

kind_names! {
    kind: DistributionKind, meta: DistributionMeta, attr: DistributionAttr, partial: DistributionPartial;
    exports: Distribution, DistributionAttr, DistributionMeta
}

/// The meta data of a distribution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DistributionMeta {
    /// `VX_DISTRIBUTION_BINS`.
    pub bins: usize,
    /// `VX_DISTRIBUTION_OFFSET`: the first value counted.
    pub offset: i32,
    /// `VX_DISTRIBUTION_RANGE`: how many values are counted.
    pub range: u32,
}

impl DistributionMeta {
    /// `VX_DISTRIBUTION_WINDOW`: values per bin (`range / bins`; 0 for meta data no distribution
    /// has: no bins, or more bins than values).
    pub fn window(&self) -> u32 {
        u32::try_from(self.bins).ok().and_then(|b| self.range.checked_div(b)).unwrap_or(0)
    }
}

/// The [`ObjectKind`] of distributions.
pub struct DistributionKind;

/// A distribution handle.
pub type Distribution = Handle<DistributionKind>;

impl std::fmt::Display for DistributionMeta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "distribution of {} bins, offset {}, range {}", self.bins, self.offset, self.range)
    }
}

meta_attributes! {
    /// One meta-format attribute of a distribution.
    DistributionAttr, DistributionPartial for DistributionMeta {
        /// `VX_DISTRIBUTION_BINS`.
        Bins(usize) => bins @ DISTRIBUTION_BINS: AttrValue::size,
        /// `VX_DISTRIBUTION_OFFSET`.
        Offset(i32) => offset @ DISTRIBUTION_OFFSET: AttrValue::i32,
        /// `VX_DISTRIBUTION_RANGE`.
        Range(u32) => range @ DISTRIBUTION_RANGE: AttrValue::u32,
    }
}

impl ObjectKind for DistributionKind {
    type Wire = Wire;
    const NAME: &'static str = "Distribution";
    type Meta = DistributionMeta;
    type Attr = DistributionAttr;
    type Partial = DistributionPartial;
    type Body = BlobBody<DistributionKind>;
    blob_object!();
    fn fmt_details(h: &Distribution, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = h.obj.body.meta;
        write!(f, "{} bins over {}+{}", m.bins, m.offset, m.range)
    }
    fn apply(h: &Distribution, w: &DistributionMeta) -> std::result::Result<Applied, Refusal> {
        exactly(&h.meta(), w, ErrorKind::InvalidDimension)
    }
    fn exemplar(p: &mut DistributionPartial, m: &DistributionMeta) {
        *p = DistributionPartial::of(m);
    }
    fn resolve(p: &DistributionPartial) -> std::result::Result<DistributionMeta, &'static str> {
        Ok(DistributionMeta {
            bins: positive(p.bins, "distribution bins")?,
            offset: p.offset.ok_or("distribution offset")?,
            range: positive(p.range, "distribution range")?,
        })
    }
    fn to_wire(h: &Distribution) -> Wire {
        let m = h.meta();
        Wire { bins: m.bins as u64, offset: m.offset, range: m.range, window: m.window() }
    }
    fn from_wire(w: &Wire) -> Result<DistributionMeta> {
        let Wire { bins, offset, range, .. } = w;
        Ok(DistributionMeta { bins: size(*bins)?, offset: *offset, range: *range })
    }
}

impl BlobKind for DistributionKind {
    type Extra = ();
    fn layout(meta: &DistributionMeta) -> Result<usize> {
        if meta.bins == 0 || meta.bins as u64 > meta.range as u64 {
            return Err(Error::new(ErrorKind::InvalidParameters, "a distribution needs 1 to `range` bins")
                .expected_found(format!("1..={}", meta.range), meta.bins));
        }
        if (meta.offset as i64 + meta.range as i64) > i32::MAX as i64 + 1 {
            return Err(Error::new(ErrorKind::InvalidParameters, "offset + range overflows the values counted")
                .found(format!("{} + {}", meta.offset, meta.range)));
        }
        Ok(meta.bins * 4)
    }
    fn element(_: &DistributionMeta) -> ArrayItemType {
        u32::ITEM_TYPE
    }
}

impl Handle<DistributionKind> {
    /// `vxCreateDistribution`: `bins` zero counts over `[offset, offset + range)`; `bins` must not
    /// exceed `range`.
    pub fn new(ctx: &impl AsContext, bins: usize, offset: i32, range: u32) -> Result<Distribution> {
        Distribution::with_header(
            ObjectHeader::new(ctx, "distribution", None)?,
            DistributionMeta { bins, offset, range },
        )
    }

    /// `vxCreateVirtualDistribution`.
    pub fn new_virtual(graph: &impl VirtualScope, bins: usize, offset: i32, range: u32) -> Result<Distribution> {
        let header = ObjectHeader::new(graph, "virtual-distribution", Some(graph.scope_id()))?;
        Distribution::with_header(header, DistributionMeta { bins, offset, range })
    }

    /// `VX_DISTRIBUTION_BINS`.
    pub fn bins(&self) -> usize {
        self.obj.body.meta.bins
    }
    /// `VX_DISTRIBUTION_OFFSET`.
    pub fn offset(&self) -> i32 {
        self.obj.body.meta.offset
    }
    /// `VX_DISTRIBUTION_RANGE`.
    pub fn range(&self) -> u32 {
        self.obj.body.meta.range
    }
    /// `VX_DISTRIBUTION_WINDOW`.
    pub fn window(&self) -> u32 {
        self.obj.body.meta.window()
    }
    /// `vxCopyDistribution` (read).
    pub fn copy_to(&self, out: &mut [u32]) -> Result<()> {
        self.copy_whole_to(out, Access::Application)
    }
    /// `vxCopyDistribution` (write).
    pub fn copy_from(&self, src: &[u32]) -> Result<()> {
        self.copy_whole_from(src, Access::Application)
    }
    /// `vxMapDistribution` for reading.
    pub fn map(&self) -> Result<MappedSlice<'_, u32>> {
        self.map_as(Access::Application)
    }
    /// `vxMapDistribution` for writing.
    pub fn map_mut(&self) -> Result<MappedSliceMut<'_, u32>> {
        self.map_mut_as(Access::Application)
    }
}

impl<'a> KernelView<'a, Distribution> {
    /// Copy the counts out.
    pub fn copy_to(&self, out: &mut [u32]) -> Result<()> {
        self.object.copy_whole_to(out, Access::Kernel)
    }
    /// Copy the counts in.
    pub fn copy_from(&self, src: &[u32]) -> Result<()> {
        self.object.copy_whole_from(src, Access::Kernel)
    }
    /// Map the counts for reading.
    pub fn map(&self) -> Result<MappedSlice<'a, u32>> {
        self.object.map_as(Access::Kernel)
    }
    /// Map the counts for writing.
    pub fn map_mut(&self) -> Result<MappedSliceMut<'a, u32>> {
        self.object.map_mut_as(Access::Kernel)
    }
}
