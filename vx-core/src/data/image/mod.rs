//! Images (`vx_image`): single-plane U8/U16/S16/U32/S32/RGB/RGBX/UYVY/YUYV and multi-plane
//! NV12/NV21/IYUV/YUV4; virtual
//! images with partial meta data completed at verify; ROI sub-images sharing the parent's memory;
//! valid regions; map/unmap and copy of rectangular patches.
//!
//! Memory follows the TIOVX notes: creating an image allocates nothing; the buffer is allocated at
//! graph verification or at the first map/copy before it.
//!
//! Buffer aliasing: a virtual image can be *bound* at verify to another image's storage (the
//! `aliasing` pass decides; see `graph/verify/aliasing.rs`). Its own storage then stays unallocated
//! and every map, lease and allocation goes to the bound storage ([`Image::storage`]); the
//! identity used for dataflow ([`Image::storage_key`]) stays its own, so re-verification sees the
//! graph as the application built it. Mappings hold an `Arc` of the storage they mapped, so a
//! rebinding can never pull memory from under a live mapping.

use std::marker::PhantomData;
use std::sync::{Arc, Mutex, MutexGuard};

use vx_plugin_abi::{ImageFormat, Rect};

pub(crate) mod import;
#[cfg(feature = "image")]
pub(crate) mod interop;
pub(super) mod kind;
pub(crate) mod layout;
pub(crate) mod patch;

use crate::data::buffer::SharedBuffer;
use crate::data::kernel_view::KernelView;
use crate::data::kind::{Handle, kind_names};
use crate::data::object::{Access, ObjectHeader};
use crate::error::{Error, ErrorKind, Result};
use crate::shared::{AsContext, VirtualScope};
use crate::support::sync::lock;
use layout::ImageLayout;
use patch::{ImagePatch, ImagePatchMut, PatchAddressing, Pixel};

pub use kind::{ImageAttr, ImageMeta};
pub(crate) use kind::{ImagePartial, concrete};
kind_names! {
    kind: ImageKind, meta: ImageMeta, attr: ImageAttr, partial: ImagePartial;
    exports: Image, ImageAttr, ImageMeta
}

/// The memory an image and all its ROIs share.
pub(super) struct ImageStorage {
    pub(super) buffer: SharedBuffer,
    /// Layout of the whole (root) image; `None` for a virtual image not yet verified.
    pub(super) layout: Mutex<Option<ImageLayout>>,
    /// Set once an ROI of this storage's image has been created (never cleared): other image
    /// objects may then share these pixels.
    pub(super) has_rois: std::sync::atomic::AtomicBool,
}

impl ImageStorage {
    pub(super) fn layout(&self) -> MutexGuard<'_, Option<ImageLayout>> {
        lock(&self.layout)
    }
}

/// Format, size and valid rectangle of an image (its meta data and more).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ImageState {
    pub(crate) format: ImageFormat,
    pub(crate) width: u32,
    pub(crate) height: u32,
    pub(super) valid: Rect,
}

/// The state behind a Image handle, next to its header.
pub struct ImageBody {
    pub(super) storage: Arc<ImageStorage>,
    /// The storage this (virtual) image is bound to by buffer aliasing, if any.
    bound: Mutex<Option<Arc<ImageStorage>>>,
    /// Offset of this image inside the root image (non-zero for ROIs).
    origin: (u32, u32),
    pub(super) meta: Mutex<ImageState>,
    /// Meta data as given at creation (partial for virtual images: 0 / `Virtual` = unknown).
    pub(super) declared: (ImageFormat, u32, u32),
    /// The image this ROI was taken from (kept alive by the ROI).
    _parent: Option<Image>,
    /// `VX_IMAGE_SPACE` as set (`None`: the format's default).
    space: Mutex<Option<ColorSpace>>,
}

/// `vx_color_space_e`: what the pixels of a YUV image mean. Kept as set: vx-rs has no kernel
/// that reads it yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorSpace {
    /// `VX_COLOR_SPACE_NONE`: no color space (the default of non-YUV formats).
    None,
    /// `VX_COLOR_SPACE_BT601_525`.
    Bt601_525,
    /// `VX_COLOR_SPACE_BT601_625`.
    Bt601_625,
    /// `VX_COLOR_SPACE_BT709` (`VX_COLOR_SPACE_DEFAULT`: the default of YUV formats).
    Bt709,
}

/// An image handle. Clones share the same image; the image goes when the last handle (and every
/// graph parameter referencing it) is dropped.
pub type Image = Handle<ImageKind>;

impl crate::data::reference::Reference {
    /// The image, if this is one.
    pub fn as_image(&self) -> Option<&Image> {
        self.get()
    }
}

/// The [`ObjectKind`] of Image.
pub struct ImageKind;

impl Image {
    /// `vxCreateImage`: a `width × height` image of a concrete `format`. Allocates nothing yet.
    pub fn new(ctx: &impl AsContext, width: u32, height: u32, format: ImageFormat) -> Result<Image> {
        let layout = ImageLayout::new(format, width, height)?;
        let header = ObjectHeader::new(ctx, "image", None)?;
        Ok(Image::from_parts(header, Some(layout), format, width, height))
    }

    /// `vxCreateVirtualImage`: an image owned by `graph`, whose width, height (0 = unknown) and
    /// format ([`ImageFormat::Virtual`] = unknown) are completed at verify from the producing
    /// node's meta format. The application cannot map or copy it.
    pub fn new_virtual(graph: &impl VirtualScope, width: u32, height: u32, format: ImageFormat) -> Result<Image> {
        let header = ObjectHeader::new(graph, "virtual-image", Some(graph.scope_id()))?;
        Ok(Image::from_parts(header, None, format, width, height))
    }

    /// An image under a given header (a pyramid level, an object array's item): virtual when the
    /// header is, with unknown size or format completed at verify.
    pub(super) fn with_header(header: ObjectHeader, width: u32, height: u32, format: ImageFormat) -> Result<Image> {
        let known = width != 0 && height != 0 && format != ImageFormat::Virtual;
        if !known && header.scope.is_none() {
            return Err(Error::new(ErrorKind::InvalidParameters, "a real image needs a size and a format")
                .on_object(&header.name())
                .found(format!("{format} {width}x{height}")));
        }
        let layout = if known { Some(ImageLayout::new(format, width, height)?) } else { None };
        Ok(Image::from_parts(header, layout, format, width, height))
    }

    /// A virtual image that is not part of another object (a pyramid level is not): the memory
    /// plan and buffer aliasing place only these.
    pub(crate) fn is_standalone_virtual(&self) -> bool {
        self.is_virtual() && self.obj.header.ancestors.is_empty()
    }

    pub(super) fn from_parts(
        header: ObjectHeader,
        layout: Option<ImageLayout>,
        format: ImageFormat,
        w: u32,
        h: u32,
    ) -> Image {
        Handle::from_body(
            header,
            ImageBody {
                storage: Arc::new(ImageStorage {
                    buffer: SharedBuffer::new(),
                    layout: Mutex::new(layout),
                    has_rois: std::sync::atomic::AtomicBool::new(false),
                }),
                bound: Mutex::new(None),
                origin: (0, 0),
                meta: Mutex::new(ImageState { format, width: w, height: h, valid: Rect::full(w, h) }),
                declared: (format, w, h),
                _parent: None,
                space: Mutex::new(None),
            },
        )
    }

    /// `vxCreateImageFromROI`: a sub-image sharing this image's memory. Writes through either are
    /// visible through the other. ROIs start on the format's [`ImageFormat::roi_alignment`]: even
    /// coordinates for NV12, NV21 and IYUV (their chroma planes are subsampled by 2), an even x for
    /// UYVY and YUYV (a U, V pair spans two pixels).
    pub fn roi(&self, rect: Rect) -> Result<Image> {
        let m = self.meta();
        if self.is_virtual() {
            return Err(Error::new(ErrorKind::InvalidReference, "an ROI cannot be taken of a virtual image")
                .on_object(&self.name()));
        }
        if rect.is_empty() || !Rect::full(m.width, m.height).contains(&rect) {
            return Err(Error::new(
                ErrorKind::InvalidParameters,
                "the ROI must be a non-empty rectangle inside the image",
            )
            .on_object(&self.name())
            .expected_found(format!("inside {}", Rect::full(m.width, m.height)), rect));
        }
        let (ax, ay) = m.format.roi_alignment();
        if !rect.start_x.is_multiple_of(ax) || !rect.start_y.is_multiple_of(ay) {
            let even = if ay == 1 { "an even x" } else { "even coordinates" };
            return Err(Error::new(ErrorKind::InvalidParameters, format!("a {} ROI must start on {even}", m.format))
                .on_object(&self.name())
                .expected_found(format!("start coordinates multiple of {ax}x{ay}"), rect));
        }
        let mut header = ObjectHeader::new(&self.obj.header.ctx, "roi", None)?;
        header.ancestors.push(self.obj.header.id);
        header.ancestors.extend_from_slice(&self.obj.header.ancestors);
        let (w, h) = (rect.width(), rect.height());
        self.obj.body.storage.has_rois.store(true, std::sync::atomic::Ordering::Relaxed);
        Ok(Handle::from_body(
            header,
            ImageBody {
                storage: Arc::clone(&self.obj.body.storage),
                bound: Mutex::new(None),
                origin: (self.obj.body.origin.0 + rect.start_x, self.obj.body.origin.1 + rect.start_y),
                meta: Mutex::new(ImageState { format: m.format, width: w, height: h, valid: Rect::full(w, h) }),
                declared: (m.format, w, h),
                _parent: Some(self.clone()),
                space: Mutex::new(*lock(&self.obj.body.space)),
            },
        ))
    }

    pub(crate) fn meta(&self) -> ImageState {
        *lock(&self.obj.body.meta)
    }

    /// `VX_IMAGE_FORMAT` ([`ImageFormat::Virtual`] for a virtual image before verify).
    pub fn format(&self) -> ImageFormat {
        self.meta().format
    }
    /// `VX_IMAGE_WIDTH` (0 for a virtual image of unknown width before verify).
    pub fn width(&self) -> u32 {
        self.meta().width
    }
    /// `VX_IMAGE_HEIGHT`.
    pub fn height(&self) -> u32 {
        self.meta().height
    }
    /// `VX_IMAGE_PLANES`.
    pub fn planes(&self) -> usize {
        self.format().plane_count()
    }
    /// True when this image is an ROI of another.
    pub fn is_roi(&self) -> bool {
        self._parent_ref().is_some()
    }
    fn _parent_ref(&self) -> Option<&Image> {
        self.obj.body._parent.as_ref()
    }
    /// Rename the object (`vxSetReferenceName`).
    pub fn set_name(&self, name: &str) {
        self.obj.header.set_name(name)
    }
    /// True once the pixel buffer exists (after verify or a first map/copy). For a virtual image
    /// bound to another's buffer by aliasing: whether that buffer exists.
    pub fn is_allocated(&self) -> bool {
        self.storage().buffer.is_allocated()
    }

    /// The storage this image's pixels live in: its own, or the one aliasing bound it to.
    pub(super) fn storage(&self) -> Arc<ImageStorage> {
        match lock(&self.obj.body.bound).as_ref() {
            Some(s) => Arc::clone(s),
            None => Arc::clone(&self.obj.body.storage),
        }
    }

    /// Bind this virtual image's pixels to `target`'s storage (`None`: its own again). Its own
    /// buffer is freed when bound (unless mapped, which the graph's lock rules out at verify).
    pub(crate) fn bind_storage(&self, target: Option<&Image>) {
        let mut b = lock(&self.obj.body.bound);
        *b = target.map(|t| Arc::clone(&t.obj.body.storage));
        if b.is_some() {
            self.obj.body.storage.buffer.free_if_unmapped();
        }
    }

    /// Identity of the memory the pixels are in now (after aliasing), for the runtime's
    /// same-buffer checks and the memory plan; [`storage_key`](Self::storage_key) is the object's own.
    pub(crate) fn effective_storage_key(&self) -> usize {
        match lock(&self.obj.body.bound).as_ref() {
            Some(s) => Arc::as_ptr(s) as usize,
            None => self.storage_key(),
        }
    }

    /// True when an ROI of this image exists or this image is one (other objects share its pixels).
    pub(crate) fn shares_pixels(&self) -> bool {
        self.is_roi() || self.obj.body.storage.has_rois.load(std::sync::atomic::Ordering::Relaxed)
    }
    /// `vxGetValidRegionImage`: the rectangle of pixels known to be valid.
    pub fn valid_region(&self) -> Rect {
        self.meta().valid
    }
    /// `vxSetImageValidRectangle`: set the valid rectangle (`None` = the whole image).
    pub fn set_valid_rectangle(&self, rect: Option<Rect>) -> Result<()> {
        let mut m = lock(&self.obj.body.meta);
        let full = Rect::full(m.width, m.height);
        let r = rect.unwrap_or(full);
        if !full.contains(&r) {
            return Err(Error::new(ErrorKind::InvalidParameters, "the valid rectangle must lie inside the image")
                .on_object(&self.obj.header.name())
                .expected_found(format!("inside {full}"), r));
        }
        m.valid = r;
        Ok(())
    }

    pub(super) fn set_valid_unchecked(&self, r: Rect) {
        lock(&self.obj.body.meta).valid = r;
    }

    /// Complete (or re-complete) a virtual image from a producer's meta. Returns true when the
    /// meta data changed. The caller checked compatibility with the declared partial meta.
    pub(super) fn complete_virtual(&self, format: ImageFormat, width: u32, height: u32) -> Result<bool> {
        let mut m = lock(&self.obj.body.meta);
        let mut layout = self.obj.body.storage.layout();
        let changed = layout.as_ref().is_none_or(|l| l.format != format || l.width != width || l.height != height);
        if changed {
            let new = ImageLayout::new(format, width, height).map_err(|e| e.on_object(&self.obj.header.name()))?;
            *layout = Some(new);
            m.format = format;
            m.width = width;
            m.height = height;
            m.valid = Rect::full(width, height);
        }
        Ok(changed)
    }

    /// A new virtual image of the same graph with this (completed) image's meta data and valid
    /// rectangle, its own storage: the copy a pipelined graph gives each frame in flight
    /// (`graph/verify/frames.rs`). Bind and place it like the original.
    pub(super) fn frame_copy(&self, frame_slot: usize) -> Result<Image> {
        let m = self.meta();
        let layout = self.obj.body.storage.layout().clone();
        if layout.is_none() {
            return Err(Error::new(ErrorKind::NotAllocated, "the virtual image's meta data is not known yet")
                .on_object(&self.name()));
        }
        let header = ObjectHeader::frame_copy_of(&self.obj.header, frame_slot)?;
        let copy = Image::from_parts(header, layout, m.format, m.width, m.height);
        copy.set_valid_unchecked(m.valid);
        Ok(copy)
    }

    /// Allocate the buffer if it does not exist yet (or has the wrong size after re-verify).
    pub(super) fn ensure_allocated(&self) -> Result<()> {
        let storage = self.storage();
        let size = {
            let layout = storage.layout();
            match layout.as_ref() {
                Some(l) => l.size,
                None => {
                    return Err(Error::new(ErrorKind::NotAllocated, "the virtual image's meta data is not known yet")
                        .on_object(&self.name()));
                }
            }
        };
        storage.buffer.ensure(size, &self.obj.header.ctx.resources).map_err(|e| e.on_object(&self.name()))
    }

    /// Where a memory plan placed the pixels: (arena address, offset).
    #[cfg(test)]
    pub(crate) fn placement(&self) -> Option<(usize, usize)> {
        self.storage().buffer.placement()
    }

    /// Identity of the memory, for detecting writers and readers of the same pixels.
    pub(crate) fn storage_key(&self) -> usize {
        Arc::as_ptr(&self.obj.body.storage) as usize
    }

    /// The rectangle of the root image this image covers.
    pub(super) fn rect_in_storage(&self) -> Rect {
        let m = self.meta();
        let (x, y) = self.obj.body.origin;
        Rect::new(x, y, x + m.width, y + m.height)
    }

    pub(super) fn map_impl<T: Pixel>(
        &self,
        rect: Rect,
        plane: usize,
        write: bool,
        access: Access,
    ) -> Result<RawMapping<'_>> {
        self.map_checked(rect, plane, write, access, Some((T::matches, T::NAME)))
    }

    /// [`map_impl`](Self::map_impl) with the element type's check (`None`: bytes, any plane).
    fn map_checked(
        &self,
        rect: Rect,
        plane: usize,
        write: bool,
        access: Access,
        element: Option<ElementCheck>,
    ) -> Result<RawMapping<'_>> {
        self.obj.header.check_access(access)?;
        // One read of the meta data and one of the layout: this runs for every map a kernel makes.
        let m = self.meta();
        let name = || self.name();
        if plane >= m.format.plane_count() {
            return Err(Error::new(ErrorKind::InvalidParameters, "no such plane")
                .on_object(&name())
                .expected_found(format!("plane < {} for {}", m.format.plane_count(), m.format), plane));
        }
        if let Some((matches, element)) = element
            && !matches(m.format, plane)
        {
            return Err(Error::new(ErrorKind::InvalidFormat, "the patch element type does not match the image plane")
                .on_object(&name())
                .expected_found(format!("the element type of plane {plane} of {}", m.format), element));
        }
        if rect.is_empty() || !Rect::full(m.width, m.height).contains(&rect) {
            return Err(Error::new(
                ErrorKind::InvalidParameters,
                "the patch must be a non-empty rectangle inside the image",
            )
            .on_object(&name())
            .expected_found(format!("inside {}", Rect::full(m.width, m.height)), rect));
        }
        // Copy just the size and the plane (no clone of the layout's Vec: mapping must not allocate).
        let storage = self.storage();
        let (size, pl) = match storage.layout().as_ref() {
            Some(l) => (l.size, l.planes[plane]),
            None => {
                return Err(Error::new(ErrorKind::NotAllocated, "the virtual image's meta data is not known yet")
                    .on_object(&name()));
            }
        };
        storage.buffer.ensure(size, &self.obj.header.ctx.resources).map_err(|e| e.on_object(&name()))?;
        let (ox, oy) = self.obj.body.origin;
        let (sx, sy) = (pl.subsample_x, pl.subsample_y);
        if !(rect.start_x + ox).is_multiple_of(sx) || !(rect.start_y + oy).is_multiple_of(sy) {
            return Err(Error::new(
                ErrorKind::InvalidParameters,
                "a patch of a subsampled plane must start on the subsampling grid",
            )
            .on_object(&name())
            .expected_found(format!("start coordinates multiple of {sx}x{sy}"), rect));
        }
        let px = (rect.start_x + ox) / sx;
        let py = (rect.start_y + oy) / sy;
        let dim_x = rect.width().div_ceil(sx);
        let dim_y = rect.height().div_ceil(sy);
        let region = Rect::new(rect.start_x + ox, rect.start_y + oy, rect.end_x + ox, rect.end_y + oy);
        let lease = storage.buffer.acquire(region, write).map_err(|e| e.on_object(&name()))?;
        let offset = pl.offset + py as usize * pl.stride + px as usize * pl.bytes_per_element as usize;
        debug_assert!(
            offset + (dim_y as usize - 1) * pl.stride + dim_x as usize * pl.bytes_per_element as usize <= lease.len
        );
        Ok(RawMapping {
            storage,
            slot: lease.slot,
            // SAFETY: offset lies inside the buffer: (px + dim_x) <= plane width and (py + dim_y) <=
            // plane height because rect lies inside this image and this image inside the root, so
            // the whole patch is inside the plane, which is inside the buffer (checked above in
            // debug builds).
            base: unsafe { lease.ptr.add(offset) },
            addressing: PatchAddressing {
                dim_x,
                dim_y,
                stride_x: pl.bytes_per_element as i32,
                stride_y: pl.stride as i32,
            },
            rect,
            _image: PhantomData,
        })
    }

    /// `VX_IMAGE_SPACE`: as set, else the specification's default (BT.709 for a YUV format,
    /// none for the others).
    pub fn color_space(&self) -> ColorSpace {
        lock(&self.obj.body.space).unwrap_or(if self.format().is_yuv() { ColorSpace::Bt709 } else { ColorSpace::None })
    }

    /// Set `VX_IMAGE_SPACE`.
    pub fn set_color_space(&self, space: ColorSpace) {
        *lock(&self.obj.body.space) = Some(space);
    }

    /// Bytes from one row of plane 0 to the next, once the image has a layout (`None` before:
    /// a virtual image not yet verified).
    pub fn row_stride(&self) -> Option<usize> {
        self.storage().layout().as_ref().map(|l| l.planes[0].stride)
    }

    /// `vxMapImagePatch` as bytes, for a binding whose mapping outlives any Rust borrow (the C
    /// API): `rect` of `plane`, for writing (and reading) when `write`. The lease is released when
    /// the [`ImageBytesMap`] drops.
    pub fn map_bytes(&self, rect: Rect, plane: usize, write: bool) -> Result<ImageBytesMap> {
        Ok(self.map_checked(rect, plane, write, Access::Application, None)?.into_bytes(write))
    }

    /// `vxMapImagePatch` for reading plane 0: typed row access to `rect`. The element type must be
    /// the plane's (`u8` for U8, `i16` for S16, `[u8; 3]` for RGB, …).
    pub fn map<T: Pixel>(&self, rect: Rect) -> Result<ImagePatch<'_, T>> {
        self.map_plane(rect, 0)
    }

    /// `vxMapImagePatch` for reading one plane (`rect` in image coordinates).
    pub fn map_plane<T: Pixel>(&self, rect: Rect, plane: usize) -> Result<ImagePatch<'_, T>> {
        Ok(self.map_impl::<T>(rect, plane, false, Access::Application)?.read())
    }

    /// `vxMapImagePatch` with `VX_WRITE_ONLY`/`VX_READ_AND_WRITE` for plane 0.
    pub fn map_mut<T: Pixel>(&self, rect: Rect) -> Result<ImagePatchMut<'_, T>> {
        self.map_plane_mut(rect, 0)
    }

    /// `vxMapImagePatch` for writing one plane.
    pub fn map_plane_mut<T: Pixel>(&self, rect: Rect, plane: usize) -> Result<ImagePatchMut<'_, T>> {
        Ok(self.map_impl::<T>(rect, plane, true, Access::Application)?.write())
    }

    /// `vxCopyImagePatch` (read): copy `rect` of `plane` out, row-major and tightly packed.
    pub fn copy_to<T: Pixel>(&self, rect: Rect, plane: usize, out: &mut [T]) -> Result<()> {
        let patch = self.map_plane::<T>(rect, plane)?;
        let a = patch.addressing();
        let need = a.dim_x as usize * a.dim_y as usize;
        if out.len() != need {
            return Err(Error::new(ErrorKind::InvalidParameters, "the destination has the wrong length")
                .on_object(&self.name())
                .expected_found(need, out.len()));
        }
        for (y, chunk) in out.chunks_exact_mut(a.dim_x as usize).enumerate() {
            chunk.copy_from_slice(patch.row(y as u32));
        }
        Ok(())
    }

    /// `vxCopyImagePatch` (write): copy a tightly packed row-major block into `rect` of `plane`.
    pub fn copy_from<T: Pixel>(&self, rect: Rect, plane: usize, src: &[T]) -> Result<()> {
        let mut patch = self.map_plane_mut::<T>(rect, plane)?;
        let a = patch.addressing();
        let need = a.dim_x as usize * a.dim_y as usize;
        if src.len() != need {
            return Err(Error::new(ErrorKind::InvalidParameters, "the source has the wrong length")
                .on_object(&self.name())
                .expected_found(need, src.len()));
        }
        for (y, chunk) in src.chunks_exact(a.dim_x as usize).enumerate() {
            patch.row_mut(y as u32).copy_from_slice(chunk);
        }
        Ok(())
    }

    /// Read the whole of plane 0 into a vector (a convenience over [`copy_to`](Self::copy_to)).
    /// Checks come first (a virtual image, a pixel type that is not the plane's: the errors of
    /// [`map`](Self::map)); the vector is reserved fallibly (`NoMemory`, never an abort).
    pub fn to_vec<T: Pixel>(&self) -> Result<Vec<T>> {
        let m = self.meta();
        let patch = self.map_plane::<T>(Rect::full(m.width, m.height), 0)?;
        let a = patch.addressing();
        let mut v = crate::support::size::try_vec("copy of the image", a.dim_x as usize * a.dim_y as usize)
            .map_err(|e| e.on_object(&self.name()))?;
        for y in 0..a.dim_y {
            v.extend_from_slice(patch.row(y));
        }
        Ok(v)
    }
}

/// Plane 0 of an image held mapped for a whole tiling-node execution.
pub(crate) struct PlaneLease<'a> {
    storage: Arc<ImageStorage>,
    slot: usize,
    /// Address of this image's pixel (0, 0).
    pub(crate) base: *mut u8,
    pub(crate) stride_x: usize,
    pub(crate) stride_y: usize,
    pub(crate) format: ImageFormat,
    pub(crate) width: u32,
    pub(crate) height: u32,
    _image: PhantomData<&'a Image>,
}

impl Drop for PlaneLease<'_> {
    fn drop(&mut self) {
        self.storage.buffer.release(self.slot);
    }
}

impl Image {
    /// Map all of plane 0 (for a kernel) and describe where pixel (0, 0) is.
    pub(crate) fn lease_plane0(&self, write: bool) -> Result<PlaneLease<'_>> {
        let m = self.meta();
        let storage = self.storage();
        let pl =
            storage.layout().as_ref().map(|l| l.planes[0]).ok_or_else(|| {
                Error::new(ErrorKind::NotAllocated, "the image has no layout").on_object(&self.name())
            })?;
        let (ox, oy) = self.obj.body.origin;
        let rect = Rect::new(ox, oy, ox + m.width, oy + m.height);
        let lease = storage.buffer.acquire(rect, write).map_err(|e| e.on_object(&self.name()))?;
        let offset = oy as usize * pl.stride + ox as usize * pl.bytes_per_element as usize;
        Ok(PlaneLease {
            slot: lease.slot,
            // SAFETY: (ox, oy) is the ROI origin inside the root image's plane 0, so the offset lies
            // inside the buffer.
            base: unsafe { lease.ptr.add(offset) },
            stride_x: pl.bytes_per_element as usize,
            stride_y: pl.stride,
            format: m.format,
            width: m.width,
            height: m.height,
            storage,
            _image: PhantomData,
        })
    }
}

/// A patch element type's check: does it match a format's plane, and its name.
type ElementCheck = (fn(ImageFormat, usize) -> bool, &'static str);

/// A granted mapping before it is given its read or write type.
pub(super) struct RawMapping<'a> {
    storage: Arc<ImageStorage>,
    slot: usize,
    base: *mut u8,
    addressing: PatchAddressing,
    rect: Rect,
    _image: PhantomData<&'a Image>,
}

impl RawMapping<'_> {
    fn into_bytes(self, write: bool) -> ImageBytesMap {
        ImageBytesMap {
            storage: self.storage,
            slot: self.slot,
            base: self.base,
            addressing: self.addressing,
            rect: self.rect,
            write,
        }
    }
}

/// A patch mapped as bytes ([`Image::map_bytes`], [`KernelView::map_bytes`]): it owns its lease
/// and releases it when dropped, so a binding can keep it between a map and an unmap call. While
/// it lives, the bytes at [`ptr`](Self::ptr) are this mapping's (exclusively when written).
pub struct ImageBytesMap {
    storage: Arc<ImageStorage>,
    slot: usize,
    base: *mut u8,
    addressing: PatchAddressing,
    rect: Rect,
    write: bool,
}

// SAFETY: the mapping is a lease on the storage (an `Arc`, itself Send + Sync) and a pointer into
// that storage's buffer, which the lease keeps allocated and reserved for this mapping; nothing in
// it is tied to the thread that mapped it.
unsafe impl Send for ImageBytesMap {}
// SAFETY: `&ImageBytesMap` only reads the plain fields; writing through `ptr` is the holder's
// business, as with any raw pointer.
unsafe impl Sync for ImageBytesMap {}

impl ImageBytesMap {
    /// The patch's first element.
    pub fn ptr(&self) -> *mut u8 {
        self.base
    }
    /// Its addressing (dimensions and byte strides).
    pub fn addressing(&self) -> PatchAddressing {
        self.addressing
    }
    /// The rectangle mapped, in image coordinates.
    pub fn rect(&self) -> Rect {
        self.rect
    }
    /// Mapped for writing.
    pub fn is_write(&self) -> bool {
        self.write
    }
}

impl Drop for ImageBytesMap {
    fn drop(&mut self) {
        self.storage.buffer.release(self.slot);
    }
}

impl<'a> RawMapping<'a> {
    pub(super) fn read<T: Pixel>(self) -> ImagePatch<'a, T> {
        ImagePatch {
            storage: self.storage,
            slot: self.slot,
            base: self.base,
            addressing: self.addressing,
            rect: self.rect,
            _t: PhantomData,
        }
    }
    pub(super) fn write<T: Pixel>(self) -> ImagePatchMut<'a, T> {
        ImagePatchMut {
            storage: self.storage,
            slot: self.slot,
            base: self.base,
            addressing: self.addressing,
            rect: self.rect,
            _t: PhantomData,
        }
    }
}

impl<'a> KernelView<'a, Image> {
    /// The image handle (attributes).
    pub fn image(&self) -> &'a Image {
        self.object
    }
    /// The whole image as a rectangle.
    pub fn full_rect(&self) -> Rect {
        Rect::full(self.object.width(), self.object.height())
    }
    /// Map a patch of `plane` for reading.
    pub fn map<T: Pixel>(&self, rect: Rect, plane: usize) -> Result<ImagePatch<'a, T>> {
        Ok(self.object.map_impl::<T>(rect, plane, false, Access::Kernel)?.read())
    }
    /// Map a patch of `plane` for writing.
    pub fn map_mut<T: Pixel>(&self, rect: Rect, plane: usize) -> Result<ImagePatchMut<'a, T>> {
        Ok(self.object.map_impl::<T>(rect, plane, true, Access::Kernel)?.write())
    }
    /// [`Image::map_bytes`] as the node's kernel (a virtual image too).
    pub fn map_bytes(&self, rect: Rect, plane: usize, write: bool) -> Result<ImageBytesMap> {
        Ok(self.object.map_checked(rect, plane, write, Access::Kernel, None)?.into_bytes(write))
    }
}
