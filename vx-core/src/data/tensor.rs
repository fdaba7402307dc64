//! Tensors (`vx_tensor`): up to [`MAX_TENSOR_DIMS`] dimensions of a numeric type with a
//! fixed-point position, stored packed with dimension 0 fastest. Views (`vxCreateTensorFromView`)
//! share their tensor's memory; patches are copied in and out with a packed user layout
//! (`vxCopyTensorPatch`). A virtual tensor's dimensions and type may be unknown until verify.

use std::sync::{Arc, Mutex};

use crate::data::blob::{Blob, BytesMap, check_element};
use crate::data::items::ArrayItem;
use crate::data::kernel_view::KernelView;
use crate::data::kind::{Applied, Handle, ObjectKind, RawMap, Recorded, Refusal, kind_names, meta_attributes};
use crate::data::matrix::is_numeric;
use crate::data::object::{Access, ObjectHeader};
use crate::data::types::ScalarType;
use crate::data::wire::{AttrValue, code, scalar_type, size};
use crate::error::{Error, ErrorKind, Result};
use crate::shared::{AsContext, VirtualScope};
use crate::support::sync::lock;
use vx_plugin_abi::kinds::tensor::Wire;

kind_names! {
    kind: TensorKind, meta: TensorMeta, attr: TensorAttr, partial: TensorPartial;
    exports: MAX_TENSOR_DIMS, Tensor, TensorAttr, TensorMeta
}

/// `VX_CONTEXT_MAX_TENSOR_DIMS`.
pub const MAX_TENSOR_DIMS: usize = 6;

/// The meta data of a tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TensorMeta {
    /// `VX_TENSOR_NUMBER_OF_DIMS` (0: unknown, a virtual tensor before verify).
    pub num_dims: usize,
    /// `VX_TENSOR_DIMS`: the first `num_dims` entries count.
    pub dims: [usize; MAX_TENSOR_DIMS],
    /// `VX_TENSOR_DATA_TYPE` (`None`: unknown).
    pub data_type: Option<ScalarType>,
    /// `VX_TENSOR_FIXED_POINT_POSITION`.
    pub fixed_point_position: i8,
}

impl TensorMeta {
    /// Meta data from a dimension list.
    pub fn new(dims: &[usize], data_type: ScalarType, fixed_point_position: i8) -> TensorMeta {
        let mut d = [0; MAX_TENSOR_DIMS];
        let n = dims.len().min(MAX_TENSOR_DIMS);
        d[..n].copy_from_slice(&dims[..n]);
        TensorMeta { num_dims: dims.len(), dims: d, data_type: Some(data_type), fixed_point_position }
    }
    /// The dimensions.
    pub fn dims(&self) -> &[usize] {
        &self.dims[..self.num_dims.min(MAX_TENSOR_DIMS)]
    }
    fn elements(&self) -> Option<usize> {
        self.dims().iter().try_fold(1usize, |a, d| a.checked_mul(*d))
    }
    fn is_complete(&self) -> bool {
        self.num_dims > 0 && self.data_type.is_some() && self.dims().iter().all(|d| *d > 0)
    }
    fn bytes(&self) -> usize {
        match (self.is_complete(), self.data_type) {
            (true, Some(t)) => self.elements().unwrap_or(0) * t.size(),
            _ => 0,
        }
    }
}

/// The memory a tensor and its views share.
pub(super) struct TensorStorage {
    data: Blob,
    /// The root tensor's dimensions (its meta once known).
    root: Mutex<TensorMeta>,
}

/// The state behind a Tensor handle, next to its header.
pub struct TensorBody {
    storage: Arc<TensorStorage>,
    meta: Mutex<TensorMeta>,
    /// As given at creation (partial for virtual tensors).
    pub(super) declared: TensorMeta,
    /// Where this view starts in the root tensor (zeros for a tensor of its own).
    start: [usize; MAX_TENSOR_DIMS],
    _parent: Option<Tensor>,
}

/// A tensor handle.
pub type Tensor = Handle<TensorKind>;

/// The [`ObjectKind`] of Tensor.
pub struct TensorKind;

impl std::fmt::Display for TensorMeta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.data_type {
            Some(t) => write!(f, "tensor {:?} of {t} (fixed point {})", self.dims(), self.fixed_point_position),
            None => write!(f, "tensor {:?} (type unknown)", self.dims()),
        }
    }
}

/// `VX_TENSOR_DIMS`'s bytes: up to six `vx_size`s.
fn dims_of(v: &AttrValue<'_>) -> Result<[usize; MAX_TENSOR_DIMS]> {
    if !v.bytes.len().is_multiple_of(8) || v.bytes.len() > 8 * MAX_TENSOR_DIMS {
        return Err(v.wrong("vx_size array of at most 6 dimensions", 8 * MAX_TENSOR_DIMS));
    }
    let mut d = [0usize; MAX_TENSOR_DIMS];
    for (o, c) in d.iter_mut().zip(v.bytes.chunks_exact(8)) {
        *o = u64::from_ne_bytes(c.try_into().expect("8-byte chunk")) as usize;
    }
    Ok(d)
}

meta_attributes! {
    /// One meta-format attribute of a tensor.
    TensorAttr, TensorPartial {
        /// `VX_TENSOR_NUMBER_OF_DIMS`.
        NumberOfDims(usize) => num_dims @ TENSOR_NUMBER_OF_DIMS: AttrValue::size,
        /// `VX_TENSOR_DIMS` (the first `VX_TENSOR_NUMBER_OF_DIMS` entries count).
        Dims([usize; MAX_TENSOR_DIMS]) => dims @ TENSOR_DIMS: dims_of,
        /// `VX_TENSOR_DATA_TYPE`.
        DataType(ScalarType) => data_type @ TENSOR_DATA_TYPE: AttrValue::scalar_type,
        /// `VX_TENSOR_FIXED_POINT_POSITION`.
        FixedPointPosition(i8) => fixed_point_position @ TENSOR_FIXED_POINT_POSITION: AttrValue::i8,
    }
}

impl ObjectKind for TensorKind {
    type Wire = Wire;
    const NAME: &'static str = "Tensor";
    type Meta = TensorMeta;
    type Attr = TensorAttr;
    type Partial = TensorPartial;
    type Body = TensorBody;
    fn meta(h: &Tensor) -> TensorMeta {
        h.meta()
    }
    fn build(header: ObjectHeader, m: &TensorMeta) -> Result<Tensor> {
        Tensor::with_header(header, *m)
    }
    fn ensure_allocated(h: &Tensor) -> Result<()> {
        h.ensure_allocated()
    }
    /// A virtual tensor takes what it did not declare (type `None`, dimensions 0).
    fn apply(h: &Tensor, w: &TensorMeta) -> std::result::Result<Applied, Refusal> {
        let d = if h.is_virtual() { h.obj.body.declared } else { h.meta() };
        if d.data_type.is_some_and(|dt| Some(dt) != w.data_type) {
            return Err(Refusal::Mismatch(ErrorKind::InvalidType));
        }
        let dims_differ = d.num_dims != 0
            && (d.num_dims != w.num_dims || d.dims().iter().zip(w.dims()).any(|(a, b)| *a != 0 && a != b));
        if dims_differ {
            return Err(Refusal::Mismatch(ErrorKind::InvalidDimension));
        }
        if d.fixed_point_position != w.fixed_point_position {
            return Err(Refusal::Mismatch(ErrorKind::InvalidValue));
        }
        if h.is_virtual() && h.complete_virtual(*w)? {
            return Ok(Applied::Completed);
        }
        Ok(Applied::Unchanged)
    }
    fn set(p: &mut TensorPartial, a: TensorAttr) -> Result<()> {
        if let TensorAttr::NumberOfDims(n) = a
            && (n == 0 || n > MAX_TENSOR_DIMS)
        {
            return Err(Error::new(ErrorKind::InvalidDimension, "a tensor has 1 to 6 dimensions")
                .expected_found(format!("1..={MAX_TENSOR_DIMS}"), n));
        }
        p.record(a);
        Ok(())
    }
    fn exemplar(p: &mut TensorPartial, m: &TensorMeta) {
        p.num_dims = Some(m.num_dims);
        p.dims = Some(m.dims);
        if m.data_type.is_some() {
            p.data_type = m.data_type;
        }
        p.fixed_point_position = Some(m.fixed_point_position);
    }
    fn resolve(p: &TensorPartial) -> std::result::Result<TensorMeta, &'static str> {
        let num_dims = p.num_dims.ok_or("tensor number of dimensions")?;
        let dims = p.dims.ok_or("tensor dimensions")?;
        if dims[..num_dims].contains(&0) {
            return Err("tensor dimensions (one is 0)");
        }
        Ok(TensorMeta {
            num_dims,
            dims,
            data_type: Some(p.data_type.ok_or("tensor data type")?),
            fixed_point_position: p.fixed_point_position.unwrap_or(0),
        })
    }
    fn map_raw(h: &Tensor, write: bool) -> Option<Result<RawMap<'_>>> {
        let (blob, header) = h.blob();
        Some(blob.lease_raw(header, Access::Kernel, write).map(|lease| {
            let (offset, strides, bytes) = h.raw_layout();
            RawMap { lease, offset, strides: strides.map(|v| v as u64), bytes }
        }))
    }
    /// The root storage, whole (a view shares it; only a virtual tensor, never a view, is planned).
    fn plan_storage(h: &Tensor, f: &mut dyn FnMut(crate::data::kind::PlanStorage<'_>)) {
        h.obj.body.storage.data.plan_storage(f)
    }
    fn storage_key(h: &Tensor) -> Option<usize> {
        Some(h.storage_key())
    }
    fn share_elements(a: &Tensor, b: &Tensor) -> bool {
        a.boxes_overlap(b)
    }
    fn fmt_details(h: &Tensor, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = h.meta();
        write!(f, "{:?} of {:?}", m.dims(), m.data_type)
    }
    fn to_wire(h: &Tensor) -> Wire {
        let m = h.meta();
        Wire {
            num_dims: m.num_dims as u32,
            dims: m.dims.map(|d| d as u64),
            data_type: m.data_type.map_or(0, code),
            fixed_point_position: m.fixed_point_position,
        }
    }
    fn from_wire(w: &Wire) -> Result<TensorMeta> {
        let Wire { num_dims, dims, data_type, fixed_point_position } = w;
        let mut d = [0usize; MAX_TENSOR_DIMS];
        for (o, i) in d.iter_mut().zip(dims) {
            *o = size(*i)?;
        }
        Ok(TensorMeta {
            num_dims: *num_dims as usize,
            dims: d,
            data_type: if *data_type == 0 { None } else { Some(scalar_type(*data_type)?) },
            fixed_point_position: *fixed_point_position,
        })
    }
}

fn check_meta(m: &TensorMeta, partial: bool) -> Result<()> {
    if m.num_dims > MAX_TENSOR_DIMS || (!partial && m.num_dims == 0) {
        return Err(Error::new(ErrorKind::InvalidDimension, "a tensor has 1 to 6 dimensions")
            .expected_found(format!("1..={MAX_TENSOR_DIMS}"), m.num_dims));
    }
    if !partial && m.dims().contains(&0) {
        return Err(Error::new(ErrorKind::InvalidDimension, "a tensor's dimensions must not be 0")
            .found(format!("{:?}", m.dims())));
    }
    if let Some(t) = m.data_type.filter(|t| !is_numeric(*t)) {
        return Err(Error::new(ErrorKind::InvalidType, "a tensor holds numbers")
            .expected_found("an integer or floating-point type", t));
    }
    if !partial && m.data_type.is_none() {
        return Err(Error::new(ErrorKind::InvalidType, "a tensor needs a data type"));
    }
    if m.elements()
        .and_then(|n| n.checked_mul(m.data_type.map_or(1, |t| t.size())))
        .is_none_or(|b| b > isize::MAX as usize)
    {
        return Err(Error::new(ErrorKind::InvalidDimension, "the tensor overflows the addressable memory")
            .found(format!("{:?}", m.dims())));
    }
    Ok(())
}

impl Tensor {
    /// The shared storage and this view's header (a module kernel's raw map).
    pub(super) fn blob(&self) -> (&Blob, &ObjectHeader) {
        (&self.obj.body.storage.data, &self.obj.header)
    }

    /// Where this view's elements lie in the storage: the byte offset of its first element, the
    /// byte stride of each dimension, and the bytes from its first element to one past its last.
    pub(super) fn raw_layout(&self) -> (usize, [usize; MAX_TENSOR_DIMS], usize) {
        let m = self.meta();
        let root = *lock(&self.obj.body.storage.root);
        let size = m.data_type.map_or(1, |t| t.size());
        let mut stride = [0usize; MAX_TENSOR_DIMS];
        let mut s = size;
        for (st, d) in stride.iter_mut().zip(&root.dims).take(root.num_dims) {
            *st = s;
            s *= d;
        }
        let offset: usize = (0..m.num_dims).map(|i| self.obj.body.start[i] * stride[i]).sum();
        let last: usize = (0..m.num_dims).map(|i| (m.dims[i].max(1) - 1) * stride[i]).sum();
        (offset, stride, if m.num_dims == 0 { 0 } else { last + size })
    }

    /// `vxCreateTensor`: zeros of `data_type` with dimensions `dims` (dimension 0 fastest).
    pub fn new(
        ctx: &impl AsContext,
        dims: &[usize],
        data_type: ScalarType,
        fixed_point_position: i8,
    ) -> Result<Tensor> {
        Tensor::with_header(
            ObjectHeader::new(ctx, "tensor", None)?,
            TensorMeta::new(dims, data_type, fixed_point_position),
        )
    }

    /// `vxCreateVirtualTensor`: `dims` empty (or with 0 entries) and `data_type` `None` are left
    /// to the producing node's meta format.
    pub fn new_virtual(
        graph: &impl VirtualScope,
        dims: &[usize],
        data_type: Option<ScalarType>,
        fixed_point_position: i8,
    ) -> Result<Tensor> {
        let mut meta = TensorMeta::new(dims, ScalarType::Uint8, fixed_point_position);
        meta.data_type = data_type;
        Tensor::with_header(ObjectHeader::new(graph, "virtual-tensor", Some(graph.scope_id()))?, meta)
    }

    pub(super) fn with_header(header: ObjectHeader, meta: TensorMeta) -> Result<Tensor> {
        check_meta(&meta, header.scope.is_some()).map_err(|e| e.on_object(&header.name()))?;
        let storage = Arc::new(TensorStorage { data: Blob::new(meta.bytes()), root: Mutex::new(meta) });
        Ok(Handle::from_body(
            header,
            TensorBody { storage, meta: Mutex::new(meta), declared: meta, start: [0; MAX_TENSOR_DIMS], _parent: None },
        ))
    }

    /// `vxCreateTensorFromView`: the box `start..end` (per dimension, end exclusive) of this
    /// tensor, sharing its memory.
    pub fn view(&self, start: &[usize], end: &[usize]) -> Result<Tensor> {
        let m = self.meta();
        if self.is_virtual() {
            return Err(Error::new(ErrorKind::InvalidReference, "a view cannot be taken of a virtual tensor")
                .on_object(&self.name()));
        }
        self.check_box(&m, start, end)?;
        let mut header = ObjectHeader::new(&self.obj.header.ctx, "tensor-view", None)?;
        header.ancestors.push(self.obj.header.id);
        header.ancestors.extend_from_slice(&self.obj.header.ancestors);
        let dims: Vec<usize> = start.iter().zip(end).map(|(s, e)| e - s).collect();
        let meta = TensorMeta::new(&dims, m.data_type.expect("real tensors have a type"), m.fixed_point_position);
        let mut s = self.obj.body.start;
        for (i, v) in start.iter().enumerate() {
            s[i] += v;
        }
        Ok(Handle::from_body(
            header,
            TensorBody {
                storage: Arc::clone(&self.obj.body.storage),
                meta: Mutex::new(meta),
                declared: meta,
                start: s,
                _parent: Some(self.clone()),
            },
        ))
    }

    fn check_box(&self, m: &TensorMeta, start: &[usize], end: &[usize]) -> Result<()> {
        let ok = start.len() == m.num_dims
            && end.len() == m.num_dims
            && start.iter().zip(end).zip(m.dims()).all(|((s, e), d)| s < e && e <= d);
        if !ok {
            return Err(Error::new(ErrorKind::InvalidParameters, "the box must be non-empty and inside the tensor")
                .on_object(&self.name())
                .expected_found(format!("start < end <= {:?}", m.dims()), format!("{start:?}..{end:?}")));
        }
        Ok(())
    }

    /// Every attribute.
    pub fn meta(&self) -> TensorMeta {
        *lock(&self.obj.body.meta)
    }
    /// `VX_TENSOR_NUMBER_OF_DIMS`.
    pub fn num_dims(&self) -> usize {
        self.meta().num_dims
    }
    /// `VX_TENSOR_DIMS`.
    pub fn dims(&self) -> Vec<usize> {
        self.meta().dims().to_vec()
    }
    /// `VX_TENSOR_DATA_TYPE` (`None` for a virtual tensor before verify).
    pub fn data_type(&self) -> Option<ScalarType> {
        self.meta().data_type
    }
    /// `VX_TENSOR_FIXED_POINT_POSITION`.
    pub fn fixed_point_position(&self) -> i8 {
        self.meta().fixed_point_position
    }
    /// True once the elements exist.
    pub fn is_allocated(&self) -> bool {
        self.obj.body.storage.data.is_allocated()
    }

    pub(super) fn ensure_allocated(&self) -> Result<()> {
        self.obj.body.storage.data.ensure(&self.obj.header)
    }

    /// Complete (or re-complete) a virtual tensor. True when the meta data changed.
    pub(super) fn complete_virtual(&self, meta: TensorMeta) -> Result<bool> {
        check_meta(&meta, false).map_err(|e| e.on_object(&self.name()))?;
        let mut m = lock(&self.obj.body.meta);
        let changed = *m != meta;
        if changed {
            *m = meta;
            *lock(&self.obj.body.storage.root) = meta;
            self.obj.body.storage.data.set_len(meta.bytes());
        }
        Ok(changed)
    }

    pub(super) fn storage_key(&self) -> usize {
        Arc::as_ptr(&self.obj.body.storage) as usize
    }

    /// True when the two boxes of one storage intersect.
    pub(super) fn boxes_overlap(&self, other: &Tensor) -> bool {
        let (a, b) = (self.meta(), other.meta());
        (0..a.num_dims.max(b.num_dims).min(MAX_TENSOR_DIMS)).all(|i| {
            let (s0, e0) = (self.obj.body.start[i], self.obj.body.start[i] + a.dims[i].max(1));
            let (s1, e1) = (other.obj.body.start[i], other.obj.body.start[i] + b.dims[i].max(1));
            s0 < e1 && s1 < e0
        })
    }

    /// Visit every run of dimension 0 of box `start..end` (in this tensor's coordinates): the
    /// element offset in the root storage and in a packed copy of the box.
    fn runs(&self, m: &TensorMeta, start: &[usize], end: &[usize], mut f: impl FnMut(usize, usize, usize)) {
        let root = *lock(&self.obj.body.storage.root);
        let n = m.num_dims;
        let mut stride = [1usize; MAX_TENSOR_DIMS];
        for i in 1..n {
            stride[i] = stride[i - 1] * root.dims[i - 1];
        }
        let run = end[0] - start[0];
        let mut idx: Vec<usize> = start.to_vec();
        let mut packed = 0;
        loop {
            let off: usize = (0..n).map(|i| (self.obj.body.start[i] + idx[i]) * stride[i]).sum();
            f(off, packed, run);
            packed += run;
            // Next index over dimensions 1..n.
            let mut d = 1;
            loop {
                if d >= n {
                    return;
                }
                idx[d] += 1;
                if idx[d] < end[d] {
                    break;
                }
                idx[d] = start[d];
                d += 1;
            }
        }
    }

    fn patch_check<T: ArrayItem>(&self, start: &[usize], end: &[usize], n: usize) -> Result<TensorMeta> {
        let m = self.meta();
        let Some(t) = m.data_type else {
            return Err(Error::new(ErrorKind::NotAllocated, "the virtual tensor's meta data is not known yet")
                .on_object(&self.name()));
        };
        check_element::<T>(&self.obj.header, t.into())?;
        self.check_box(&m, start, end)?;
        let want: usize = start.iter().zip(end).map(|(s, e)| e - s).product();
        if n != want {
            return Err(Error::new(ErrorKind::InvalidParameters, "the elements do not fill the patch")
                .on_object(&self.name())
                .expected_found(format!("{want} elements (dimension 0 fastest)"), n));
        }
        Ok(m)
    }

    fn copy_patch_to_impl<T: ArrayItem>(
        &self,
        start: &[usize],
        end: &[usize],
        out: &mut [T],
        access: Access,
    ) -> Result<()> {
        let m = self.patch_check::<T>(start, end, out.len())?;
        self.obj.body.storage.data.read(&self.obj.header, access, |bytes| {
            // SAFETY: T is sealed plain old data; the buffer is 64-byte aligned and holds the root
            // tensor's elements of T (type checked above), so the cast slice is in bounds.
            let all = unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<T>(), bytes.len() / size_of::<T>()) };
            self.runs(&m, start, end, |src, dst, n| out[dst..dst + n].copy_from_slice(&all[src..src + n]));
        })
    }

    fn copy_patch_from_impl<T: ArrayItem>(
        &self,
        start: &[usize],
        end: &[usize],
        src: &[T],
        access: Access,
    ) -> Result<()> {
        let m = self.patch_check::<T>(start, end, src.len())?;
        self.obj.body.storage.data.write(&self.obj.header, access, |bytes| {
            // SAFETY: as above; the write lease makes this the only access to the bytes.
            let all =
                unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast::<T>(), bytes.len() / size_of::<T>()) };
            self.runs(&m, start, end, |dst, s, n| all[dst..dst + n].copy_from_slice(&src[s..s + n]));
        })
    }

    /// The byte stride of each dimension in the memory the tensor lives in (a view has its
    /// tensor's), the first [`num_dims`](Self::num_dims) entries meaningful: what
    /// `vxMapTensorPatch` returns, and how [`map_bytes`](Self::map_bytes) lays the elements out.
    pub fn strides(&self) -> [usize; MAX_TENSOR_DIMS] {
        self.raw_layout().1
    }

    /// This tensor's (or view's) elements mapped as a [`BytesMap`], which keeps the tensor alive.
    fn map_bytes_as(&self, write: bool, access: Access) -> Result<BytesMap> {
        let (blob, header) = self.blob();
        let (ptr, _, slot) = blob.lease(header, access, write)?;
        let (offset, _, bytes) = self.raw_layout();
        let storage = Arc::clone(&self.obj.body.storage);
        // SAFETY: `offset` is this view's first element in the root storage the lease covers (a
        // view's box lies inside its tensor, checked when it was made).
        let first = unsafe { ptr.add(offset) };
        Ok(BytesMap::new(first, bytes, write, move || storage.data.release(slot)))
    }

    /// `vxMapTensorPatch` as bytes, for a binding whose mapping outlives any Rust borrow (the C
    /// API): the pointer is this tensor's first element, element `i` of dimension `d` lies
    /// [`strides`](Self::strides)`[d] * i` bytes further, and the length runs to one past its last
    /// element. For writing (and reading) when `write`; the lease is released when the
    /// [`BytesMap`] drops.
    pub fn map_bytes(&self, write: bool) -> Result<BytesMap> {
        self.map_bytes_as(write, Access::Application)
    }

    /// `vxCopyTensorPatch` (read): the box `start..end`, packed, dimension 0 fastest.
    pub fn copy_patch_to<T: ArrayItem>(&self, start: &[usize], end: &[usize], out: &mut [T]) -> Result<()> {
        self.copy_patch_to_impl(start, end, out, Access::Application)
    }
    /// `vxCopyTensorPatch` (write).
    pub fn copy_patch_from<T: ArrayItem>(&self, start: &[usize], end: &[usize], src: &[T]) -> Result<()> {
        self.copy_patch_from_impl(start, end, src, Access::Application)
    }
}

impl KernelView<'_, Tensor> {
    /// As [`Tensor::map_bytes`], as the node's kernel (a virtual tensor too).
    pub fn map_bytes(&self, write: bool) -> Result<BytesMap> {
        self.object.map_bytes_as(write, Access::Kernel)
    }
    /// Copy the box `start..end` out, packed, dimension 0 fastest.
    pub fn copy_patch_to<T: ArrayItem>(&self, start: &[usize], end: &[usize], out: &mut [T]) -> Result<()> {
        self.object.copy_patch_to_impl(start, end, out, Access::Kernel)
    }
    /// Copy the box `start..end` in.
    pub fn copy_patch_from<T: ArrayItem>(&self, start: &[usize], end: &[usize], src: &[T]) -> Result<()> {
        self.object.copy_patch_from_impl(start, end, src, Access::Kernel)
    }
}
