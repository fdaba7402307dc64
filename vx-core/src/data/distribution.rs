//! Distributions (`vx_distribution`): `bins` U32 frequencies over `[offset, offset + range)`,
//! copied or mapped whole (`vxCopyDistribution`, `vxMapDistribution`).

use std::sync::Arc;

use crate::data::blob::{Blob, MappedSlice, MappedSliceMut};
use crate::data::kernel_view::KernelView;
use crate::data::object::{Access, ObjectHeader};
use crate::error::{Error, ErrorKind, Result};
use crate::shared::{AsContext, VirtualScope};

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

pub(crate) struct DistributionObj {
    pub(super) header: ObjectHeader,
    meta: DistributionMeta,
    data: Blob,
}

/// A distribution handle.
#[derive(Clone)]
pub struct Distribution {
    pub(super) obj: Arc<DistributionObj>,
}

impl std::fmt::Debug for Distribution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = self.obj.meta;
        write!(f, "Distribution('{}', {} bins over {}+{})", self.name(), m.bins, m.offset, m.range)
    }
}

impl Distribution {
    /// The storage and header (a module kernel's raw map).
    pub(crate) fn blob(&self) -> (&Blob, &ObjectHeader) {
        (&self.obj.data, &self.obj.header)
    }

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

    pub(super) fn with_header(header: ObjectHeader, meta: DistributionMeta) -> Result<Distribution> {
        if meta.bins == 0 || meta.bins as u64 > meta.range as u64 {
            return Err(Error::new(ErrorKind::InvalidParameters, "a distribution needs 1 to `range` bins")
                .on_object(&header.name())
                .expected_found(format!("1..={}", meta.range), meta.bins));
        }
        if (meta.offset as i64 + meta.range as i64) > i32::MAX as i64 + 1 {
            return Err(Error::new(ErrorKind::InvalidParameters, "offset + range overflows the values counted")
                .on_object(&header.name())
                .found(format!("{} + {}", meta.offset, meta.range)));
        }
        let data = Blob::new(meta.bins * 4);
        Ok(Distribution { obj: Arc::new(DistributionObj { header, meta, data }) })
    }

    /// Every attribute that makes its meta data.
    pub fn meta(&self) -> DistributionMeta {
        self.obj.meta
    }
    /// `VX_DISTRIBUTION_BINS`.
    pub fn bins(&self) -> usize {
        self.obj.meta.bins
    }
    /// `VX_DISTRIBUTION_OFFSET`.
    pub fn offset(&self) -> i32 {
        self.obj.meta.offset
    }
    /// `VX_DISTRIBUTION_RANGE`.
    pub fn range(&self) -> u32 {
        self.obj.meta.range
    }
    /// `VX_DISTRIBUTION_WINDOW`.
    pub fn window(&self) -> u32 {
        self.obj.meta.window()
    }
    /// `VX_DISTRIBUTION_SIZE`: bytes.
    pub fn size(&self) -> usize {
        self.obj.data.len()
    }
    /// The object's name.
    pub fn name(&self) -> String {
        self.obj.header.name()
    }
    /// True once the counts exist.
    pub fn is_allocated(&self) -> bool {
        self.obj.data.is_allocated()
    }
    pub(super) fn ensure_allocated(&self) -> Result<()> {
        self.obj.data.ensure(&self.obj.header)
    }

    fn copy_to_impl(&self, out: &mut [u32], access: Access) -> Result<()> {
        self.obj.data.copy_out_whole(&self.obj.header, access, out)
    }
    fn copy_from_impl(&self, src: &[u32], access: Access) -> Result<()> {
        self.obj.data.copy_in_whole(&self.obj.header, access, src)
    }

    /// `vxCopyDistribution` (read).
    pub fn copy_to(&self, out: &mut [u32]) -> Result<()> {
        self.copy_to_impl(out, Access::Application)
    }
    /// `vxCopyDistribution` (write).
    pub fn copy_from(&self, src: &[u32]) -> Result<()> {
        self.copy_from_impl(src, Access::Application)
    }
    /// `vxMapDistribution` for reading.
    pub fn map(&self) -> Result<MappedSlice<'_, u32>> {
        self.obj.data.map(&self.obj.header, Access::Application)
    }
    /// `vxMapDistribution` for writing.
    pub fn map_mut(&self) -> Result<MappedSliceMut<'_, u32>> {
        self.obj.data.map_mut(&self.obj.header, Access::Application)
    }
}

impl<'a> KernelView<'a, Distribution> {
    /// Copy the counts out.
    pub fn copy_to(&self, out: &mut [u32]) -> Result<()> {
        self.object.copy_to_impl(out, Access::Kernel)
    }
    /// Copy the counts in.
    pub fn copy_from(&self, src: &[u32]) -> Result<()> {
        self.object.copy_from_impl(src, Access::Kernel)
    }
    /// Map the counts for reading.
    pub fn map(&self) -> Result<MappedSlice<'a, u32>> {
        self.object.obj.data.map(&self.object.obj.header, Access::Kernel)
    }
    /// Map the counts for writing.
    pub fn map_mut(&self) -> Result<MappedSliceMut<'a, u32>> {
        self.object.obj.data.map_mut(&self.object.obj.header, Access::Kernel)
    }
}
