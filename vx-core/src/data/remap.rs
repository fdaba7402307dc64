//! Remaps (`vx_remap`): for every pixel of a destination image, the point of a source image it
//! comes from, as `(x, y)` floats; points set one by one or copied by rectangular patch
//! (`vxCopyRemapPatch`).

use vx_plugin_abi::Rect;

use crate::data::items::{ArrayItem, ArrayItemType, Coordinates2dF};
use crate::data::kernel_view::KernelView;
use crate::data::kind::{
    Applied, BlobBody, BlobKind, Handle, ObjectKind, Refusal, blob_object, exactly, kind_names, meta_attributes,
    positive,
};
use crate::data::object::{Access, ObjectHeader};
use crate::data::wire::AttrValue;
use crate::error::{Error, ErrorKind, Result};
use crate::shared::{AsContext, VirtualScope};
use vx_plugin_abi::kinds::remap::Wire;

kind_names! {
    kind: RemapKind, meta: RemapMeta, attr: RemapAttr, partial: RemapPartial;
    exports: Remap, RemapAttr, RemapMeta
}

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

/// The [`ObjectKind`] of remaps.
pub struct RemapKind;

/// A remap handle.
pub type Remap = Handle<RemapKind>;

impl std::fmt::Display for RemapMeta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (sw, sh, dw, dh) = (self.source_width, self.source_height, self.destination_width, self.destination_height);
        write!(f, "remap {sw}x{sh} -> {dw}x{dh}")
    }
}

meta_attributes! {
    /// One meta-format attribute of a remap.
    RemapAttr, RemapPartial for RemapMeta {
        /// `VX_REMAP_SOURCE_WIDTH`.
        SourceWidth(u32) => source_width @ REMAP_SOURCE_WIDTH: AttrValue::u32,
        /// `VX_REMAP_SOURCE_HEIGHT`.
        SourceHeight(u32) => source_height @ REMAP_SOURCE_HEIGHT: AttrValue::u32,
        /// `VX_REMAP_DESTINATION_WIDTH`.
        DestinationWidth(u32) => destination_width @ REMAP_DESTINATION_WIDTH: AttrValue::u32,
        /// `VX_REMAP_DESTINATION_HEIGHT`.
        DestinationHeight(u32) => destination_height @ REMAP_DESTINATION_HEIGHT: AttrValue::u32,
    }
}

impl ObjectKind for RemapKind {
    type Wire = Wire;
    const NAME: &'static str = "Remap";
    type Meta = RemapMeta;
    type Attr = RemapAttr;
    type Partial = RemapPartial;
    type Body = BlobBody<RemapKind>;
    blob_object!();
    fn fmt_details(h: &Remap, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = h.obj.body.meta;
        write!(f, "{}x{} -> {}x{}", m.source_width, m.source_height, m.destination_width, m.destination_height)
    }
    fn apply(h: &Remap, w: &RemapMeta) -> std::result::Result<Applied, Refusal> {
        exactly(&h.meta(), w, ErrorKind::InvalidDimension)
    }
    fn exemplar(p: &mut RemapPartial, m: &RemapMeta) {
        *p = RemapPartial::of(m);
    }
    fn resolve(p: &RemapPartial) -> std::result::Result<RemapMeta, &'static str> {
        Ok(RemapMeta {
            source_width: positive(p.source_width, "remap source width")?,
            source_height: positive(p.source_height, "remap source height")?,
            destination_width: positive(p.destination_width, "remap destination width")?,
            destination_height: positive(p.destination_height, "remap destination height")?,
        })
    }
    fn to_wire(h: &Remap) -> Wire {
        let m = h.meta();
        Wire {
            source_width: m.source_width,
            source_height: m.source_height,
            destination_width: m.destination_width,
            destination_height: m.destination_height,
        }
    }
    fn from_wire(w: &Wire) -> Result<RemapMeta> {
        let Wire { source_width, source_height, destination_width, destination_height } = w;
        Ok(RemapMeta {
            source_width: *source_width,
            source_height: *source_height,
            destination_width: *destination_width,
            destination_height: *destination_height,
        })
    }
}

impl BlobKind for RemapKind {
    type Extra = ();
    fn layout(meta: &RemapMeta) -> Result<usize> {
        if meta.source_width == 0
            || meta.source_height == 0
            || meta.destination_width == 0
            || meta.destination_height == 0
        {
            return Err(
                Error::new(ErrorKind::InvalidParameters, "a remap's sizes must not be 0").found(format!("{meta:?}"))
            );
        }
        // Two f32 coordinates per destination point.
        crate::support::size::checked_bytes(
            "remap",
            &[meta.destination_width as usize, meta.destination_height as usize],
            8,
        )
    }
    fn element(_: &RemapMeta) -> ArrayItemType {
        Coordinates2dF::ITEM_TYPE
    }
}

impl Handle<RemapKind> {
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

    /// `VX_REMAP_SOURCE_WIDTH`.
    pub fn source_width(&self) -> u32 {
        self.obj.body.meta.source_width
    }
    /// `VX_REMAP_SOURCE_HEIGHT`.
    pub fn source_height(&self) -> u32 {
        self.obj.body.meta.source_height
    }
    /// `VX_REMAP_DESTINATION_WIDTH`.
    pub fn destination_width(&self) -> u32 {
        self.obj.body.meta.destination_width
    }
    /// `VX_REMAP_DESTINATION_HEIGHT`.
    pub fn destination_height(&self) -> u32 {
        self.obj.body.meta.destination_height
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
            self.copy_range_to(s, &mut out[o..o + pw], access)?;
        }
        Ok(())
    }

    fn copy_patch_from_impl(&self, rect: Rect, src: &[Coordinates2dF], access: Access) -> Result<()> {
        self.check_patch(rect, src.len())?;
        let pw = rect.width() as usize;
        for (o, s) in self.rows(rect) {
            self.copy_range_from(s, &src[o..o + pw], access)?;
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
