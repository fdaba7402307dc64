//! Remaps (`vx_remap`): for every pixel of a destination image, the point of a source image it
//! comes from, as `(x, y)` floats; points set one by one or copied by rectangular patch
//! (`vxCopyRemapPatch`).

use std::sync::Arc;

use vx_plugin_abi::Rect;

use crate::data::array::Coordinates2dF;
use crate::data::blob::Blob;
use crate::data::kernel_view::KernelView;
use crate::data::object::{Access, ObjectHeader};
use crate::error::{Error, ErrorKind, Result};
use crate::shared::{AsContext, VirtualScope};

/// The meta data of a remap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RemapMeta {
    /// `VX_REMAP_SOURCE_WIDTH`.
    pub source_width: u32,
    /// `VX_REMAP_SOURCE_HEIGHT`.
    pub source_height: u32,
    /// `VX_REMAP_DESTINATION_WIDTH`.
    pub destination_width: u32,
    /// `VX_REMAP_DESTINATION_HEIGHT`.
    pub destination_height: u32,
}

pub(crate) struct RemapObj {
    pub(super) header: ObjectHeader,
    meta: RemapMeta,
    data: Blob,
}

/// A remap handle.
#[derive(Clone)]
pub struct Remap {
    pub(super) obj: Arc<RemapObj>,
}

impl std::fmt::Debug for Remap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = self.obj.meta;
        write!(
            f,
            "Remap('{}', {}x{} -> {}x{})",
            self.name(),
            m.source_width,
            m.source_height,
            m.destination_width,
            m.destination_height
        )
    }
}

impl Remap {
    /// The storage and header (a module kernel's raw map).
    pub(crate) fn blob(&self) -> (&Blob, &ObjectHeader) {
        (&self.obj.data, &self.obj.header)
    }

    /// `vxCreateRemap`: every point (0, 0) until set.
    pub fn new(
        ctx: &impl AsContext,
        source_width: u32,
        source_height: u32,
        destination_width: u32,
        destination_height: u32,
    ) -> Result<Remap> {
        let meta = RemapMeta { source_width, source_height, destination_width, destination_height };
        Remap::with_header(ObjectHeader::new(ctx, "remap", None)?, meta)
    }

    /// `vxCreateVirtualRemap`.
    pub fn new_virtual(
        graph: &impl VirtualScope,
        source_width: u32,
        source_height: u32,
        destination_width: u32,
        destination_height: u32,
    ) -> Result<Remap> {
        let meta = RemapMeta { source_width, source_height, destination_width, destination_height };
        Remap::with_header(ObjectHeader::new(graph, "virtual-remap", Some(graph.scope_id()))?, meta)
    }

    pub(super) fn with_header(header: ObjectHeader, meta: RemapMeta) -> Result<Remap> {
        if meta.source_width == 0
            || meta.source_height == 0
            || meta.destination_width == 0
            || meta.destination_height == 0
        {
            return Err(Error::new(ErrorKind::InvalidParameters, "a remap's sizes must not be 0")
                .on_object(&header.name())
                .found(format!("{meta:?}")));
        }
        // Two f32 coordinates per destination point.
        let bytes = crate::support::size::checked_bytes(
            "remap",
            &[meta.destination_width as usize, meta.destination_height as usize],
            8,
        )
        .map_err(|e| e.on_object(&header.name()))?;
        let data = Blob::new(bytes);
        Ok(Remap { obj: Arc::new(RemapObj { header, meta, data }) })
    }

    /// Every attribute that makes its meta data.
    pub fn meta(&self) -> RemapMeta {
        self.obj.meta
    }
    /// `VX_REMAP_SOURCE_WIDTH`.
    pub fn source_width(&self) -> u32 {
        self.obj.meta.source_width
    }
    /// `VX_REMAP_SOURCE_HEIGHT`.
    pub fn source_height(&self) -> u32 {
        self.obj.meta.source_height
    }
    /// `VX_REMAP_DESTINATION_WIDTH`.
    pub fn destination_width(&self) -> u32 {
        self.obj.meta.destination_width
    }
    /// `VX_REMAP_DESTINATION_HEIGHT`.
    pub fn destination_height(&self) -> u32 {
        self.obj.meta.destination_height
    }
    /// The object's name.
    pub fn name(&self) -> String {
        self.obj.header.name()
    }
    /// True once the points exist.
    pub fn is_allocated(&self) -> bool {
        self.obj.data.is_allocated()
    }
    pub(super) fn ensure_allocated(&self) -> Result<()> {
        self.obj.data.ensure(&self.obj.header)
    }

    fn check_patch(&self, rect: Rect, n: usize) -> Result<()> {
        let full = Rect::full(self.destination_width(), self.destination_height());
        if rect.is_empty() || !full.contains(&rect) {
            return Err(Error::new(
                ErrorKind::InvalidParameters,
                "the patch must be a non-empty rectangle of the destination",
            )
            .on_object(&self.name())
            .expected_found(format!("inside {full}"), rect));
        }
        let want = rect.width() as usize * rect.height() as usize;
        if n != want {
            return Err(Error::new(ErrorKind::InvalidParameters, "the points do not fill the patch")
                .on_object(&self.name())
                .expected_found(format!("{want} points (row-major)"), n));
        }
        Ok(())
    }

    fn rows(&self, rect: Rect) -> impl Iterator<Item = (usize, usize)> + use<> {
        let w = self.destination_width() as usize;
        let (x0, pw) = (rect.start_x as usize, rect.width() as usize);
        (rect.start_y as usize..rect.end_y as usize).enumerate().map(move |(i, y)| (i * pw, y * w + x0))
    }

    fn copy_patch_to_impl(&self, rect: Rect, out: &mut [Coordinates2dF], access: Access) -> Result<()> {
        self.check_patch(rect, out.len())?;
        let pw = rect.width() as usize;
        for (o, s) in self.rows(rect) {
            self.obj.data.copy_out(&self.obj.header, access, s, &mut out[o..o + pw])?;
        }
        Ok(())
    }

    fn copy_patch_from_impl(&self, rect: Rect, src: &[Coordinates2dF], access: Access) -> Result<()> {
        self.check_patch(rect, src.len())?;
        let pw = rect.width() as usize;
        for (o, s) in self.rows(rect) {
            self.obj.data.copy_in(&self.obj.header, access, s, &src[o..o + pw])?;
        }
        Ok(())
    }

    /// `vxCopyRemapPatch` (read): the points of destination rectangle `rect`, row-major.
    pub fn copy_patch_to(&self, rect: Rect, out: &mut [Coordinates2dF]) -> Result<()> {
        self.copy_patch_to_impl(rect, out, Access::Application)
    }
    /// `vxCopyRemapPatch` (write).
    pub fn copy_patch_from(&self, rect: Rect, src: &[Coordinates2dF]) -> Result<()> {
        self.copy_patch_from_impl(rect, src, Access::Application)
    }
    /// `vxSetRemapPoint`: destination pixel `(x, y)` comes from source point `from`.
    pub fn set_point(&self, x: u32, y: u32, from: Coordinates2dF) -> Result<()> {
        self.copy_patch_from(Rect::new(x, y, x.saturating_add(1), y.saturating_add(1)), &[from])
    }
    /// `vxGetRemapPoint`.
    pub fn point(&self, x: u32, y: u32) -> Result<Coordinates2dF> {
        let mut p = [Coordinates2dF::default()];
        self.copy_patch_to(Rect::new(x, y, x.saturating_add(1), y.saturating_add(1)), &mut p)?;
        Ok(p[0])
    }
}

impl KernelView<'_, Remap> {
    /// Copy the points of destination rectangle `rect` out, row-major.
    pub fn copy_patch_to(&self, rect: Rect, out: &mut [Coordinates2dF]) -> Result<()> {
        self.object.copy_patch_to_impl(rect, out, Access::Kernel)
    }
    /// Copy the points of destination rectangle `rect` in, row-major.
    pub fn copy_patch_from(&self, rect: Rect, src: &[Coordinates2dF]) -> Result<()> {
        self.object.copy_patch_from_impl(rect, src, Access::Kernel)
    }
}
