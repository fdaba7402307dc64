//! Pyramids (`vx_pyramid`): `levels` images of one format, each `scale` times the size of the one
//! before (ceil), level 0 `width × height`. Levels are images of their own, usable as node
//! parameters (and ROIs of them); writing the pyramid writes every level. A virtual pyramid's size
//! and format may be unknown until verify.

use std::sync::Mutex;

use vx_plugin_abi::ImageFormat;

use crate::data::image::Image;
use crate::data::image::concrete;
use crate::data::kernel_view::KernelView;
use crate::data::kind::{Applied, Handle, ObjectKind, Recorded, Refusal, kind_names, meta_attributes, positive};
use crate::data::object::ObjectHeader;
use crate::data::wire::{AttrValue, format, size};
use crate::error::{Error, ErrorKind, Result};
use crate::shared::{AsContext, VirtualScope};
use crate::support::sync::lock;
use vx_plugin_abi::kinds::pyramid::Wire;

kind_names! {
    kind: PyramidKind, meta: PyramidMeta, attr: PyramidAttr, partial: PyramidPartial;
    exports: MAX_PYRAMID_LEVELS, PYRAMID_SCALE_HALF, PYRAMID_SCALE_ORB, Pyramid, PyramidAttr, PyramidMeta
}

/// `VX_SCALE_PYRAMID_HALF`.
pub const PYRAMID_SCALE_HALF: f32 = 0.5;
/// `VX_SCALE_PYRAMID_ORB`: 2^(-1/4).
pub const PYRAMID_SCALE_ORB: f32 = 0.840_896_4;
/// The most levels a pyramid has.
pub const MAX_PYRAMID_LEVELS: usize = 32;

/// The meta data of a pyramid.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PyramidMeta {
    /// `VX_PYRAMID_LEVELS`.
    pub levels: usize,
    /// `VX_PYRAMID_SCALE`: [`PYRAMID_SCALE_HALF`] or [`PYRAMID_SCALE_ORB`].
    pub scale: f32,
    /// `VX_PYRAMID_WIDTH` of level 0 (0: unknown, a virtual pyramid before verify).
    pub width: u32,
    /// `VX_PYRAMID_HEIGHT` of level 0 (0: unknown).
    pub height: u32,
    /// `VX_PYRAMID_FORMAT` ([`ImageFormat::Virtual`]: unknown).
    pub format: ImageFormat,
}

impl Eq for PyramidMeta {}
impl std::hash::Hash for PyramidMeta {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        (self.levels, self.scale.to_bits(), self.width, self.height, self.format).hash(h)
    }
}

impl PyramidMeta {
    /// The size of every level: HALF halves (rounding up) level by level; ORB scales each group of
    /// four levels from the last level of the previous group by 2^(-k/4), as the Khronos sample
    /// implementation does, so that every fourth level is exactly half the one four before. At most
    /// [`MAX_PYRAMID_LEVELS`] sizes, whatever `levels` says (no pyramid has more).
    pub fn level_sizes(&self) -> Vec<(u32, u32)> {
        let orb = [0.5f32, PYRAMID_SCALE_ORB, PYRAMID_SCALE_ORB * PYRAMID_SCALE_ORB, PYRAMID_SCALE_ORB.powi(3)];
        let (mut w, mut h) = (self.width, self.height);
        let (mut rw, mut rh) = (w, h);
        let levels = self.levels.min(MAX_PYRAMID_LEVELS);
        let mut out = Vec::with_capacity(levels);
        for i in 0..levels {
            out.push((w, h));
            if self.scale == PYRAMID_SCALE_ORB {
                let s = orb[(i + 1) % 4];
                w = (rw as f32 * s).ceil() as u32;
                h = (rh as f32 * s).ceil() as u32;
                if (i + 1) % 4 == 0 {
                    (rw, rh) = (w, h);
                }
            } else {
                w = (w as f32 * self.scale).ceil() as u32;
                h = (h as f32 * self.scale).ceil() as u32;
            }
        }
        out
    }
}

/// The state behind a Pyramid handle, next to its header.
pub struct PyramidBody {
    meta: Mutex<PyramidMeta>,
    /// As given at creation (partial for virtual pyramids).
    pub(super) declared: PyramidMeta,
    levels: Vec<Image>,
}

/// A pyramid handle.
pub type Pyramid = Handle<PyramidKind>;

/// The [`ObjectKind`] of Pyramid.
pub struct PyramidKind;

impl std::fmt::Display for PyramidMeta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = self;
        write!(f, "pyramid of {} levels x {} from {} {}x{}", m.levels, m.scale, m.format, m.width, m.height)
    }
}

meta_attributes! {
    /// One meta-format attribute of a pyramid.
    PyramidAttr, PyramidPartial {
        /// `VX_PYRAMID_LEVELS`.
        Levels(usize) => levels @ PYRAMID_LEVELS: AttrValue::size,
        /// `VX_PYRAMID_SCALE`.
        Scale(f32) => scale @ PYRAMID_SCALE: AttrValue::f32,
        /// `VX_PYRAMID_WIDTH`.
        Width(u32) => width @ PYRAMID_WIDTH: AttrValue::u32,
        /// `VX_PYRAMID_HEIGHT`.
        Height(u32) => height @ PYRAMID_HEIGHT: AttrValue::u32,
        /// `VX_PYRAMID_FORMAT`.
        Format(ImageFormat) => format @ PYRAMID_FORMAT: AttrValue::format,
    }
}

impl ObjectKind for PyramidKind {
    type Wire = Wire;
    const NAME: &'static str = "Pyramid";
    const VALID_RECTS: bool = true;
    fn valid_rect_parts(h: &Pyramid, f: &mut dyn FnMut(&dyn crate::data::kind::ValidRectPart)) {
        h.level_images().iter().for_each(|l| f(l))
    }
    type Meta = PyramidMeta;
    type Attr = PyramidAttr;
    type Partial = PyramidPartial;
    type Body = PyramidBody;
    fn meta(h: &Pyramid) -> PyramidMeta {
        h.meta()
    }
    fn build(header: ObjectHeader, m: &PyramidMeta) -> Result<Pyramid> {
        Pyramid::with_header(header, *m)
    }
    fn ensure_allocated(h: &Pyramid) -> Result<()> {
        h.ensure_allocated()
    }
    /// A virtual pyramid takes the format and size it did not declare; levels and scale must match.
    fn apply(h: &Pyramid, w: &PyramidMeta) -> std::result::Result<Applied, Refusal> {
        let d = if h.is_virtual() { h.obj.body.declared } else { h.meta() };
        if d.levels != w.levels || d.scale != w.scale {
            return Err(Refusal::Mismatch(ErrorKind::InvalidDimension));
        }
        if d.format != ImageFormat::Virtual && d.format != w.format {
            return Err(Refusal::Mismatch(ErrorKind::InvalidFormat));
        }
        if (d.width != 0 && d.width != w.width) || (d.height != 0 && d.height != w.height) {
            return Err(Refusal::Mismatch(ErrorKind::InvalidDimension));
        }
        if h.is_virtual() && h.complete_virtual(w.format, w.width, w.height)? {
            return Ok(Applied::Completed);
        }
        Ok(Applied::Unchanged)
    }
    fn set(p: &mut PyramidPartial, a: PyramidAttr) -> Result<()> {
        if let PyramidAttr::Format(f) = a {
            concrete(f)?;
        }
        p.record(a);
        Ok(())
    }
    fn exemplar(p: &mut PyramidPartial, m: &PyramidMeta) {
        p.levels = Some(m.levels);
        p.scale = Some(m.scale);
        if m.format != ImageFormat::Virtual {
            p.format = Some(m.format);
        }
        p.width = Some(m.width);
        p.height = Some(m.height);
    }
    fn resolve(p: &PyramidPartial) -> std::result::Result<PyramidMeta, &'static str> {
        Ok(PyramidMeta {
            levels: positive(p.levels, "pyramid levels")?,
            scale: p.scale.ok_or("pyramid scale")?,
            width: positive(p.width, "pyramid width")?,
            height: positive(p.height, "pyramid height")?,
            format: p.format.ok_or("pyramid format")?,
        })
    }
    fn fmt_details(h: &Pyramid, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = h.meta();
        write!(f, "{} levels x {}, {} {}x{}", m.levels, m.scale, m.format, m.width, m.height)
    }
    fn to_wire(h: &Pyramid) -> Wire {
        let m = h.meta();
        Wire { levels: m.levels as u64, scale: m.scale, width: m.width, height: m.height, format: m.format.fourcc() }
    }
    fn from_wire(w: &Wire) -> Result<PyramidMeta> {
        let Wire { levels, scale, width, height, format: f } = w;
        Ok(PyramidMeta { levels: size(*levels)?, scale: *scale, width: *width, height: *height, format: format(*f)? })
    }
}

impl Pyramid {
    /// `vxCreatePyramid`: `levels` images of `format`, level 0 `width × height`, each next level
    /// `scale` ([`PYRAMID_SCALE_HALF`] or [`PYRAMID_SCALE_ORB`]) times the one before.
    pub fn new(
        ctx: &impl AsContext,
        levels: usize,
        scale: f32,
        width: u32,
        height: u32,
        format: ImageFormat,
    ) -> Result<Pyramid> {
        let meta = PyramidMeta { levels, scale, width, height, format };
        Pyramid::with_header(ObjectHeader::new(ctx, "pyramid", None)?, meta)
    }

    /// `vxCreateVirtualPyramid`: width, height (0) and format ([`ImageFormat::Virtual`]) may be left
    /// to the producing node's meta format; levels and scale may not.
    pub fn new_virtual(
        graph: &impl VirtualScope,
        levels: usize,
        scale: f32,
        width: u32,
        height: u32,
        format: ImageFormat,
    ) -> Result<Pyramid> {
        let meta = PyramidMeta { levels, scale, width, height, format };
        Pyramid::with_header(ObjectHeader::new(graph, "virtual-pyramid", Some(graph.scope_id()))?, meta)
    }

    pub(super) fn with_header(header: ObjectHeader, meta: PyramidMeta) -> Result<Pyramid> {
        if meta.scale != PYRAMID_SCALE_HALF && meta.scale != PYRAMID_SCALE_ORB {
            return Err(Error::new(ErrorKind::InvalidParameters, "a pyramid's scale is HALF or ORB")
                .on_object(&header.name())
                .expected_found(format!("{PYRAMID_SCALE_HALF} or {PYRAMID_SCALE_ORB}"), meta.scale));
        }
        if meta.levels == 0 || meta.levels > MAX_PYRAMID_LEVELS {
            return Err(Error::new(ErrorKind::InvalidParameters, "a pyramid's level count is out of range")
                .on_object(&header.name())
                .expected_found(format!("1..={MAX_PYRAMID_LEVELS}"), meta.levels));
        }
        let known = meta.width != 0 && meta.height != 0 && meta.format != ImageFormat::Virtual;
        if header.scope.is_none() && !known {
            return Err(Error::new(ErrorKind::InvalidParameters, "a pyramid needs a size and a format")
                .on_object(&header.name())
                .found(format!("{} {}x{}", meta.format, meta.width, meta.height)));
        }
        let sizes = if known { meta.level_sizes() } else { vec![(0, 0); meta.levels] };
        let levels = sizes
            .iter()
            .enumerate()
            .map(|(i, &(w, h))| {
                let lf = if known { meta.format } else { ImageFormat::Virtual };
                Image::with_header(ObjectHeader::part_of(&header, "level", i)?, w, h, lf)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Handle::from_body(header, PyramidBody { meta: Mutex::new(meta), declared: meta, levels }))
    }

    /// Every attribute.
    pub fn meta(&self) -> PyramidMeta {
        *lock(&self.obj.body.meta)
    }
    /// `VX_PYRAMID_LEVELS`.
    pub fn levels(&self) -> usize {
        self.obj.body.levels.len()
    }
    /// `VX_PYRAMID_SCALE`.
    pub fn scale(&self) -> f32 {
        self.obj.body.declared.scale
    }
    /// `VX_PYRAMID_WIDTH` (level 0).
    pub fn width(&self) -> u32 {
        self.meta().width
    }
    /// `VX_PYRAMID_HEIGHT` (level 0).
    pub fn height(&self) -> u32 {
        self.meta().height
    }
    /// `VX_PYRAMID_FORMAT`.
    pub fn format(&self) -> ImageFormat {
        self.meta().format
    }

    /// `vxGetPyramidLevel`: the image of level `index` (a handle to the same image each time).
    pub fn level(&self, index: usize) -> Result<Image> {
        self.level_ref(index).cloned()
    }

    pub(crate) fn level_ref(&self, index: usize) -> Result<&Image> {
        self.obj.body.levels.get(index).ok_or_else(|| {
            Error::new(ErrorKind::InvalidParameters, "no such pyramid level")
                .on_object(&self.name())
                .expected_found(format!("index < {}", self.levels()), index)
        })
    }

    /// Every level, level 0 first.
    pub(super) fn level_images(&self) -> &[Image] {
        &self.obj.body.levels
    }

    /// Complete (or re-complete) a virtual pyramid: every level gets its size. True when something
    /// changed. The caller checked the declared partial meta.
    pub(super) fn complete_virtual(&self, format: ImageFormat, width: u32, height: u32) -> Result<bool> {
        let mut m = lock(&self.obj.body.meta);
        let new = PyramidMeta { format, width, height, ..*m };
        let mut changed = *m != new;
        for (img, (w, h)) in self.obj.body.levels.iter().zip(new.level_sizes()) {
            changed |= img.complete_virtual(format, w, h)?;
        }
        *m = new;
        Ok(changed)
    }

    pub(super) fn ensure_allocated(&self) -> Result<()> {
        self.obj.body.levels.iter().try_for_each(Image::ensure_allocated)
    }
}

impl<'a> KernelView<'a, Pyramid> {
    /// Level `index`, as the kernel sees it (mappable even when virtual).
    pub fn level(&self, index: usize) -> Result<KernelView<'a, Image>> {
        self.object.level_ref(index).map(KernelView::new)
    }
}
