//! Arrays (`vx_array`): a typed list of items with a capacity fixed at creation; items are
//! appended, read and truncated. Virtual arrays get their item type and capacity at verify.

use std::fmt;
use std::sync::{Mutex, MutexGuard};

use crate::data::blob::BytesMap;
use crate::data::buffer::{SharedBuffer, WHOLE};
use crate::data::items::{ArrayItem, ArrayItemType};
use crate::data::kernel_view::KernelView;
use crate::data::kind::{Applied, Handle, ObjectKind, Recorded, Refusal, kind_names, meta_attributes, positive};
use crate::data::object::{Access, ObjectHeader};
use crate::data::wire::{AttrValue, size};
use crate::error::{Error, ErrorKind, Result};
use crate::shared::{AsContext, VirtualScope};
use crate::support::sync::lock;
use vx_plugin_abi::kinds::array::Wire;
use vx_plugin_abi::wire::attribute as at;

kind_names! {
    kind: ArrayKind, meta: ArrayMeta, attr: ArrayAttr, partial: ArrayPartial;
    exports: Array, ArrayAttr, ArrayMeta
}

#[derive(Clone, Copy, Debug)]
pub(super) struct ArrayState {
    pub(super) item_type: Option<ArrayItemType>,
    pub(super) capacity: usize,
    pub(super) num_items: usize,
}

/// The meta data of an array (`VX_ARRAY_ITEMTYPE`, `VX_ARRAY_CAPACITY`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ArrayMeta {
    /// Item type (`None`: a virtual array not yet completed).
    pub item_type: Option<ArrayItemType>,
    /// Most items it holds.
    pub capacity: usize,
}

/// The state behind a Array handle, next to its header.
pub struct ArrayBody {
    state: Mutex<ArrayState>,
    buffer: SharedBuffer,
    /// Item type and capacity as given at creation (partial for virtual arrays).
    pub(super) declared: (Option<ArrayItemType>, usize),
}

/// An array handle.
pub type Array = Handle<ArrayKind>;

impl crate::data::reference::Reference {
    /// The array, if this is one.
    pub fn as_array(&self) -> Option<&Array> {
        self.get()
    }
}

/// The [`ObjectKind`] of Array.
pub struct ArrayKind;

impl fmt::Display for ArrayMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.item_type {
            Some(t) => write!(f, "array of {} {t}", self.capacity),
            None => write!(f, "array of {} (type unknown)", self.capacity),
        }
    }
}

meta_attributes! {
    /// One meta-format attribute of an array.
    ArrayAttr, ArrayPartial {
        /// `VX_ARRAY_ITEMTYPE` (`VX_ARRAY_ITEMSIZE` by code: a user struct of that size).
        ItemType(ArrayItemType) => item_type @ ARRAY_ITEMTYPE: |v: &AttrValue<'_>| v.u32().and_then(|c| ArrayItemType::from_wire(c, 0)),
        /// `VX_ARRAY_CAPACITY`.
        Capacity(usize) => capacity @ ARRAY_CAPACITY: AttrValue::size,
    }
}

impl ObjectKind for ArrayKind {
    type Wire = Wire;
    const NAME: &'static str = "Array";
    type Meta = ArrayMeta;
    type Attr = ArrayAttr;
    type Partial = ArrayPartial;
    type Body = ArrayBody;
    fn fmt_details(h: &Array, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = h.state();
        write!(f, "{:?}, {}/{}", s.item_type, s.num_items, s.capacity)
    }
    fn meta(h: &Array) -> ArrayMeta {
        let s = h.state();
        ArrayMeta { item_type: s.item_type, capacity: s.capacity }
    }
    fn build(header: ObjectHeader, m: &ArrayMeta) -> Result<Array> {
        Array::build(header, m.item_type, m.capacity)
    }
    fn ensure_allocated(h: &Array) -> Result<()> {
        h.ensure_allocated()
    }
    /// A virtual array takes the item type and, when it declared none, the capacity.
    fn apply(h: &Array, w: &ArrayMeta) -> std::result::Result<Applied, Refusal> {
        let (dt, dc) = h.obj.body.declared;
        if h.is_virtual() {
            if dt.is_some_and(|t| Some(t) != w.item_type) || (dc != 0 && dc < w.capacity) {
                return Err(Refusal::Mismatch(ErrorKind::NotCompatible));
            }
            let item = w.item_type.expect("resolved meta has an item type");
            if h.complete_virtual(item, if dc != 0 { dc } else { w.capacity })? {
                return Ok(Applied::Completed);
            }
        } else if dt != w.item_type {
            return Err(Refusal::Mismatch(ErrorKind::InvalidType));
        } else if dc < w.capacity {
            return Err(Refusal::Mismatch(ErrorKind::InvalidDimension));
        }
        Ok(Applied::Unchanged)
    }
    fn exemplar(p: &mut ArrayPartial, m: &ArrayMeta) {
        if m.item_type.is_some() {
            p.item_type = m.item_type;
        }
        p.capacity = Some(m.capacity);
    }
    fn resolve(p: &ArrayPartial) -> std::result::Result<ArrayMeta, &'static str> {
        Ok(ArrayMeta {
            item_type: Some(p.item_type.ok_or("array item type")?),
            capacity: positive(p.capacity, "array capacity")?,
        })
    }
    /// The item buffer: capacity × item size (unknown until the item type is).
    fn plan_storage(h: &Array, f: &mut dyn FnMut(crate::data::kind::PlanStorage<'_>)) {
        let s = h.state();
        let bytes = s.item_type.and_then(|t| t.size().checked_mul(s.capacity));
        f(crate::data::kind::PlanStorage::new(&h.obj.body.buffer, bytes))
    }
    fn frame_copy(h: &Array, slot: usize) -> Option<Result<Array>> {
        Some(h.frame_copy(slot))
    }
    fn to_wire(h: &Array) -> Wire {
        let s = h.state();
        Wire {
            item_type: s.item_type.map_or(0, ArrayItemType::wire_code),
            item_size: s.item_type.map_or(0, |t| t.size()) as u64,
            capacity: s.capacity as u64,
            num_items: s.num_items as u64,
        }
    }
    fn from_wire(w: &Wire) -> Result<ArrayMeta> {
        let Wire { item_type: t, item_size, capacity, .. } = w;
        Ok(ArrayMeta {
            item_type: if *t == 0 { None } else { Some(ArrayItemType::from_wire(*t, *item_size)?) },
            capacity: size(*capacity)?,
        })
    }
    fn attr_by_code(v: &AttrValue<'_>) -> Option<Result<ArrayAttr>> {
        if v.code == at::ARRAY_ITEMSIZE {
            return Some(v.size().map(|size| ArrayAttr::ItemType(ArrayItemType::User { size })));
        }
        ArrayPartial::by_code(v)
    }
}

fn check_size(item: ArrayItemType, capacity: usize) -> Result<()> {
    if item.size() == 0 {
        return Err(Error::new(ErrorKind::InvalidParameters, "array items must have a size").found(item));
    }
    if item.size().checked_mul(capacity).is_none_or(|b| b > isize::MAX as usize) {
        return Err(Error::new(ErrorKind::InvalidDimension, "array capacity overflows the addressable memory")
            .found(format!("{capacity} items of {} bytes", item.size())));
    }
    Ok(())
}

impl Array {
    /// `vxCreateArray`: room for `capacity` (≥ 1) items of `item_type`.
    pub fn new(ctx: &impl AsContext, item_type: ArrayItemType, capacity: usize) -> Result<Array> {
        if capacity == 0 {
            return Err(Error::new(ErrorKind::InvalidParameters, "an array needs a capacity").expected_found(">= 1", 0));
        }
        check_size(item_type, capacity)?;
        Array::build(ObjectHeader::new(ctx, "array", None)?, Some(item_type), capacity)
    }

    /// `vxCreateVirtualArray`: item type (`None` = unknown) and capacity (0 = unknown) are
    /// completed at verify from the producer's meta format.
    pub fn new_virtual(graph: &impl VirtualScope, item_type: Option<ArrayItemType>, capacity: usize) -> Result<Array> {
        if let Some(it) = item_type {
            check_size(it, capacity)?;
        }
        Array::build(ObjectHeader::new(graph, "virtual-array", Some(graph.scope_id()))?, item_type, capacity)
    }

    pub(super) fn build(header: ObjectHeader, item_type: Option<ArrayItemType>, capacity: usize) -> Result<Array> {
        Ok(Handle::from_body(
            header,
            ArrayBody {
                state: Mutex::new(ArrayState { item_type, capacity, num_items: 0 }),
                buffer: SharedBuffer::new(),
                declared: (item_type, capacity),
            },
        ))
    }

    fn lock(&self) -> MutexGuard<'_, ArrayState> {
        lock(&self.obj.body.state)
    }

    pub(super) fn state(&self) -> ArrayState {
        *self.lock()
    }

    /// `VX_ARRAY_ITEMTYPE` (`None` for a virtual array before verify).
    pub fn item_type(&self) -> Option<ArrayItemType> {
        self.state().item_type
    }
    /// `VX_ARRAY_ITEMSIZE` (0 when the type is not known yet).
    pub fn item_size(&self) -> usize {
        self.state().item_type.map_or(0, |t| t.size())
    }
    /// `VX_ARRAY_CAPACITY`.
    pub fn capacity(&self) -> usize {
        self.state().capacity
    }
    /// `VX_ARRAY_NUMITEMS`.
    pub fn num_items(&self) -> usize {
        self.state().num_items
    }
    /// True once the item storage exists.
    pub fn is_allocated(&self) -> bool {
        self.obj.body.buffer.is_allocated()
    }

    /// A new virtual array of the same graph with this (completed) array's item type and capacity:
    /// the copy a pipelined graph gives each frame in flight (`graph/verify/frames.rs`).
    pub(super) fn frame_copy(&self, frame_slot: usize) -> Result<Array> {
        let s = self.state();
        let header = ObjectHeader::frame_copy_of(&self.obj.header, frame_slot)?;
        Array::build(header, s.item_type, s.capacity)
    }

    pub(super) fn complete_virtual(&self, item_type: ArrayItemType, capacity: usize) -> Result<bool> {
        check_size(item_type, capacity).map_err(|e| e.on_object(&self.name()))?;
        let mut s = self.lock();
        let changed = s.item_type != Some(item_type) || s.capacity != capacity;
        if changed {
            *s = ArrayState { item_type: Some(item_type), capacity, num_items: 0 };
        }
        Ok(changed)
    }

    pub(super) fn ensure_allocated(&self) -> Result<()> {
        let s = self.state();
        let Some(it) = s.item_type else {
            return Err(Error::new(ErrorKind::NotAllocated, "the virtual array's item type is not known yet")
                .on_object(&self.name()));
        };
        self.obj
            .body
            .buffer
            .ensure(it.size() * s.capacity, &self.obj.header.ctx.resources)
            .map_err(|e| e.on_object(&self.name()))
    }

    fn check_type<T: ArrayItem>(&self, s: &ArrayState) -> Result<()> {
        if s.item_type != Some(T::ITEM_TYPE) {
            return Err(Error::new(ErrorKind::InvalidType, "the item type is not the array's")
                .on_object(&self.name())
                .expected_found(s.item_type.map_or("an unknown type".to_string(), |t| t.to_string()), T::ITEM_TYPE));
        }
        Ok(())
    }

    pub(crate) fn add_items_impl<T: ArrayItem>(&self, items: &[T], access: Access) -> Result<()> {
        self.obj.header.check_access(access)?;
        // The type first: a call refused for its type allocates nothing.
        self.check_type::<T>(&self.state())?;
        self.ensure_allocated()?;
        let mut s = self.lock();
        self.check_type::<T>(&s)?;
        if s.capacity - s.num_items < items.len() {
            return Err(Error::new(ErrorKind::NoResources, "the array is full")
                .on_object(&self.name())
                .expected_found(format!("at most {} more items", s.capacity - s.num_items), items.len()));
        }
        let lease = self.obj.body.buffer.acquire(WHOLE, true)?;
        // SAFETY: num_items + items.len() <= capacity, the buffer holds capacity items of T (type
        // checked above; T has the item size and alignment <= 64), and the write lease is exclusive.
        unsafe {
            let dst = (lease.ptr as *mut T).add(s.num_items);
            std::ptr::copy_nonoverlapping(items.as_ptr(), dst, items.len());
        }
        self.obj.body.buffer.release(lease.slot);
        s.num_items += items.len();
        Ok(())
    }

    pub(crate) fn read_items_impl<T: ArrayItem>(&self, access: Access) -> Result<Vec<T>> {
        self.obj.header.check_access(access)?;
        self.check_type::<T>(&self.state())?;
        self.ensure_allocated()?;
        let s = self.lock();
        self.check_type::<T>(&s)?;
        // Reserved fallibly: NoMemory, never an abort.
        let mut v = crate::support::size::try_vec::<T>("copy of the items", s.num_items)
            .map_err(|e| e.on_object(&self.name()))?;
        v.resize(s.num_items, T::default());
        let lease = self.obj.body.buffer.acquire(WHOLE, false)?;
        // SAFETY: the buffer holds num_items initialised items of T; the read lease keeps writers away;
        // `v` holds num_items items.
        unsafe { std::ptr::copy_nonoverlapping(lease.ptr as *const T, v.as_mut_ptr(), s.num_items) };
        self.obj.body.buffer.release(lease.slot);
        Ok(v)
    }

    pub(crate) fn truncate_impl(&self, n: usize, access: Access) -> Result<()> {
        self.obj.header.check_access(access)?;
        let mut s = self.lock();
        if n > s.num_items {
            return Err(Error::new(ErrorKind::InvalidParameters, "cannot truncate an array to more items than it has")
                .on_object(&self.name())
                .expected_found(format!("<= {}", s.num_items), n));
        }
        s.num_items = n;
        Ok(())
    }

    /// Append raw items (a multiple of the item size) — for callers across the module ABI.
    pub(crate) fn add_raw(&self, bytes: &[u8], access: Access) -> Result<()> {
        self.obj.header.check_access(access)?;
        self.ensure_allocated()?;
        let mut s = self.lock();
        let size = s.item_type.map_or(0, |t| t.size());
        if size == 0 || !bytes.len().is_multiple_of(size) {
            return Err(Error::new(ErrorKind::InvalidParameters, "raw items must be whole items")
                .on_object(&self.name())
                .expected_found(format!("a multiple of {size} bytes"), bytes.len()));
        }
        let n = bytes.len() / size;
        if s.capacity - s.num_items < n {
            return Err(Error::new(ErrorKind::NoResources, "the array is full")
                .on_object(&self.name())
                .expected_found(format!("at most {} more items", s.capacity - s.num_items), n));
        }
        let lease = self.obj.body.buffer.acquire(WHOLE, true)?;
        // SAFETY: num_items + n <= capacity, so the destination range lies in the buffer of
        // capacity * size bytes; the write lease is exclusive; the source is a separate slice.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), lease.ptr.add(s.num_items * size), bytes.len()) };
        self.obj.body.buffer.release(lease.slot);
        s.num_items += n;
        Ok(())
    }

    /// Copy as many whole items as fit into `out`; returns the number copied.
    pub(crate) fn read_raw(&self, out: &mut [u8], access: Access) -> Result<usize> {
        self.obj.header.check_access(access)?;
        self.ensure_allocated()?;
        let s = self.lock();
        let size = s.item_type.map_or(1, |t| t.size()).max(1);
        let n = s.num_items.min(out.len() / size);
        let lease = self.obj.body.buffer.acquire(WHOLE, false)?;
        // SAFETY: n <= num_items items are initialised in the buffer; out holds n * size bytes.
        unsafe { std::ptr::copy_nonoverlapping(lease.ptr, out.as_mut_ptr(), n * size) };
        self.obj.body.buffer.release(lease.slot);
        Ok(n)
    }

    /// Every byte of the item storage (capacity × item size) mapped as a [`BytesMap`], which keeps
    /// the array alive.
    fn map_bytes_as(&self, write: bool, access: Access) -> Result<BytesMap> {
        self.obj.header.check_access(access)?;
        self.ensure_allocated()?;
        let lease = self.obj.body.buffer.acquire(WHOLE, write).map_err(|e| e.on_object(&self.name()))?;
        let h = self.clone();
        Ok(BytesMap::new(lease.ptr, lease.len, write, move || h.obj.body.buffer.release(lease.slot)))
    }

    /// `vxMapArrayRange` / `vxCopyArrayRange` as bytes, for a binding whose mapping outlives any
    /// Rust borrow (the C API): the whole item storage (`capacity × item size` bytes, the first
    /// [`num_items`](Self::num_items) items valid), for writing (and reading) when `write`. While
    /// it is mapped, items cannot be added. The lease is released when the [`BytesMap`] drops.
    pub fn map_bytes(&self, write: bool) -> Result<BytesMap> {
        self.map_bytes_as(write, Access::Application)
    }

    /// `vxAddArrayItems` with raw items: `bytes` holds whole items of the array's item size.
    pub fn add_bytes(&self, bytes: &[u8]) -> Result<()> {
        self.add_raw(bytes, Access::Application)
    }

    /// `vxAddArrayItems`: append items (type-checked against the array's item type).
    pub fn add_items<T: ArrayItem>(&self, items: &[T]) -> Result<()> {
        self.add_items_impl(items, Access::Application)
    }
    /// `vxCopyArrayRange` (read) of all items.
    pub fn read_items<T: ArrayItem>(&self) -> Result<Vec<T>> {
        self.read_items_impl(Access::Application)
    }
    /// `vxTruncateArray`.
    pub fn truncate(&self, n: usize) -> Result<()> {
        self.truncate_impl(n, Access::Application)
    }
}

impl KernelView<'_, Array> {
    /// As [`Array::add_items`], from a kernel of the object's graph (an object-array item, virtual
    /// or not: `ProcessContext::array` serves a parameter).
    pub fn add_items<T: ArrayItem>(&self, items: &[T]) -> Result<()> {
        self.object.add_items_impl(items, Access::Kernel)
    }
    /// As [`Array::read_items`].
    pub fn read_items<T: ArrayItem>(&self) -> Result<Vec<T>> {
        self.object.read_items_impl(Access::Kernel)
    }
    /// As [`Array::truncate`].
    pub fn truncate(&self, n: usize) -> Result<()> {
        self.object.truncate_impl(n, Access::Kernel)
    }
    /// As [`Array::map_bytes`].
    pub fn map_bytes(&self, write: bool) -> Result<BytesMap> {
        self.object.map_bytes_as(write, Access::Kernel)
    }
    /// As [`Array::add_bytes`].
    pub fn add_bytes(&self, bytes: &[u8]) -> Result<()> {
        self.object.add_raw(bytes, Access::Kernel)
    }
}
