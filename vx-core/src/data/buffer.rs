//! Data buffers: a 64-byte aligned, zero-initialised heap block ([`RawBuf`]) and the map
//! bookkeeping around it ([`SharedBuffer`]): per region, any number of readers or one writer at a
//! time (disjoint regions, such as two ROIs, never conflict), and no reallocation while mapped.
//! Every data object (image storage, array, user data object) keeps its bytes in a `SharedBuffer`,
//! allocated on first need (first map/copy or verify) — or *placed* by a graph's memory plan at an
//! offset of the graph's arena, which virtual objects never live at the same time share
//! (`graph/verify/memory_plan.rs`).

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::{Error, ErrorKind, Result};
use vx_plugin_abi::Rect;

use crate::shared::{ResourceKind, Resources};
use crate::support::sync::lock;

/// Alignment of every data buffer: a cache line, enough for any pixel or item type.
pub const BUFFER_ALIGN: usize = 64;

/// Blocks at least this large are anonymous mappings of their own: the OS hands out zero pages as
/// they are first touched, so creating even a huge image or arena is O(1) and resident memory
/// follows what is used (design note 12). `alloc_zeroed` cannot promise that at a 64-byte
/// alignment: the system allocator then allocates aligned and writes every byte.
const MAPPED_FROM: usize = 256 * 1024;

/// An owned, aligned, zero-initialised byte block whose size is accounted in [`Resources`].
pub(crate) struct RawBuf {
    ptr: NonNull<u8>,
    len: usize,
    /// An anonymous mapping (`len >= MAPPED_FROM`), else a heap block.
    mapped: bool,
    resources: Arc<Resources>,
    /// Which byte count the block is accounted in.
    kind: ResourceKind,
}

// SAFETY: RawBuf owns its allocation exclusively (like Box<[u8]>); the raw pointer is only
// dereferenced through the borrow rules enforced by SharedBuffer's reader/writer counts.
unsafe impl Send for RawBuf {}
// SAFETY: shared references to RawBuf expose only the pointer value and length, never the bytes.
unsafe impl Sync for RawBuf {}

impl RawBuf {
    /// Allocate `len` zeroed bytes of data buffer (at least 1, so the pointer is always a real
    /// allocation).
    pub(crate) fn new(len: usize, resources: &Arc<Resources>) -> Result<RawBuf> {
        RawBuf::counted(len, resources, ResourceKind::BufferBytes)
    }

    /// Allocate `len` zeroed bytes accounted as `kind` (a byte kind), refused past its limit.
    pub(crate) fn counted(len: usize, resources: &Arc<Resources>, kind: ResourceKind) -> Result<RawBuf> {
        let layout = Layout::from_size_align(len.max(1), BUFFER_ALIGN).map_err(|_| {
            Error::new(ErrorKind::NoMemory, format!("a buffer of {len} bytes exceeds the address space"))
        })?;
        resources.add_bytes(kind, len)?;
        let mapped = len >= MAPPED_FROM;
        let raw = if mapped {
            // SAFETY: a fresh private anonymous mapping of `len` (> 0) bytes at an address the
            // kernel chooses; it aliases nothing. Its pages read as zero and are committed on first
            // touch; it is page-aligned, so BUFFER_ALIGN-aligned. Without MAP_NORESERVE, a size the
            // system cannot back fails here with an error instead of later on touch.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if p == libc::MAP_FAILED { std::ptr::null_mut() } else { p.cast::<u8>() }
        } else {
            // SAFETY: the layout has a non-zero size (len.max(1)) and a valid power-of-two alignment.
            unsafe { alloc_zeroed(layout) }
        };
        let Some(ptr) = NonNull::new(raw) else {
            resources.sub_bytes(kind, len);
            return Err(Error::new(ErrorKind::NoMemory, format!("could not allocate a buffer of {len} bytes")));
        };
        Ok(RawBuf { ptr, len, mapped, resources: Arc::clone(resources), kind })
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// The bytes, for an exclusive owner.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr points to len initialised (zeroed) bytes owned by self; &mut self makes the
        // borrow exclusive for the returned lifetime.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for RawBuf {
    fn drop(&mut self) {
        if self.mapped {
            // SAFETY: ptr/len are exactly the mapping made in RawBuf::counted, unmapped once; no
            // borrow of its bytes outlives the RawBuf.
            let r = unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
            debug_assert_eq!(r, 0, "munmap of a buffer's own mapping");
        } else {
            // SAFETY: ptr was allocated in RawBuf::counted with exactly this layout and is freed once.
            unsafe { dealloc(self.ptr.as_ptr(), Layout::from_size_align_unchecked(self.len.max(1), BUFFER_ALIGN)) };
        }
        self.resources.sub_bytes(self.kind, self.len);
    }
}

/// The buffer a memory plan may place an object's bytes in (`ObjectKind::plan_storage`): the
/// effective one (an image bound by aliasing gives its owner's), and the bytes it needs there
/// (`None`: not known yet, a virtual object not completed).
pub struct PlanStorage<'a> {
    buffer: &'a SharedBuffer,
    bytes: Option<usize>,
}

impl<'a> PlanStorage<'a> {
    /// `bytes` of `buffer` (0 bytes: not known yet).
    pub(super) fn new(buffer: &'a SharedBuffer, bytes: Option<usize>) -> PlanStorage<'a> {
        PlanStorage { buffer, bytes: bytes.filter(|b| *b > 0) }
    }
    /// The identity of the buffer: objects with one key share their bytes (an aliased chain).
    pub(super) fn key(&self) -> usize {
        std::ptr::from_ref(self.buffer) as usize
    }
    /// The bytes the object needs in the plan, once known.
    pub(super) fn bytes(&self) -> Option<usize> {
        self.bytes
    }
    /// Put the bytes at `offset..offset + len` of `arena`.
    pub(super) fn place(&self, arena: &Arc<RawBuf>, offset: usize, len: usize) -> Result<()> {
        self.buffer.place(arena, offset, len)
    }
    /// Take the bytes out of a plan's arena (a block of their own at the next allocation).
    pub(super) fn unplace(&self) {
        self.buffer.unplace()
    }
    /// Where a plan placed the bytes: (arena address, offset).
    pub(super) fn placement(&self) -> Option<(usize, usize)> {
        self.buffer.placement()
    }
}

/// Most mappings of one buffer at a time.
pub(super) const MAX_LEASES: usize = 32;

/// Where a buffer's bytes are.
enum Backing {
    /// A block of its own.
    Own(RawBuf),
    /// `len` bytes at `offset` of a graph's memory-plan arena, which other virtual objects whose
    /// lifetimes in the schedule are disjoint from this one's also use.
    Placed { arena: Arc<RawBuf>, offset: usize, len: usize },
    /// Memory the application owns, lent to the object (`vxCreateImageFromHandle`).
    External(ExternalBlock),
}

/// Memory the application lent to a data object: the owner (a `Vec`, an `image` buffer, …) and
/// its bytes, taken once when the owner was boxed (moving the box never moves them).
pub(super) struct ExternalBlock {
    owner: Box<dyn std::any::Any + Send>,
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the block owns its owner (Send); the pointer is into memory the owner keeps alive and
// nothing else references; the bytes are only touched through SharedBuffer's leases.
unsafe impl Send for ExternalBlock {}
// SAFETY: a shared ExternalBlock exposes only the pointer value and length, never the owner.
unsafe impl Sync for ExternalBlock {}

impl ExternalBlock {
    /// Box `owner`, then take its bytes (their address is stable from then on).
    pub(super) fn new<M: ExternalMemory>(owner: M) -> ExternalBlock {
        let mut owner = Box::new(owner);
        let bytes = owner.bytes_mut();
        let (ptr, len) = (NonNull::new(bytes.as_mut_ptr()).expect("a slice pointer is never null"), bytes.len());
        ExternalBlock { owner, ptr, len }
    }
    pub(super) fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }
    pub(super) fn len(&self) -> usize {
        self.len
    }
    /// The owner, as the type it was made from (`Err` gives the block back).
    pub(super) fn into_owner<M: 'static>(self) -> std::result::Result<M, ExternalBlock> {
        let ExternalBlock { owner, ptr, len } = self;
        owner.downcast::<M>().map(|b| *b).map_err(|owner| ExternalBlock { owner, ptr, len })
    }
}

/// Memory an application can lend to an image ([`crate::Image::from_handle`]): anything that owns
/// bytes and can be sent to other threads. The bytes are taken once, after the value is boxed.
pub trait ExternalMemory: Send + 'static {
    /// The bytes.
    fn bytes_mut(&mut self) -> &mut [u8];
}

impl ExternalMemory for Vec<u8> {
    fn bytes_mut(&mut self) -> &mut [u8] {
        self
    }
}

impl ExternalMemory for Box<[u8]> {
    fn bytes_mut(&mut self) -> &mut [u8] {
        self
    }
}

macro_rules! external_memory_of_pixels {
    ($($t:ty),*) => {$(
        impl ExternalMemory for Vec<$t> {
            fn bytes_mut(&mut self) -> &mut [u8] {
                let len = std::mem::size_of_val(self.as_slice());
                // SAFETY: a plain integer slice viewed as its bytes: same memory, every bit
                // pattern valid both ways, u8 has alignment 1, the borrow is the slice's.
                unsafe { std::slice::from_raw_parts_mut(self.as_mut_ptr() as *mut u8, len) }
            }
        }
    )*};
}
external_memory_of_pixels!(u16, i16, u32, i32);

impl Backing {
    fn len(&self) -> usize {
        match self {
            Backing::Own(b) => b.len(),
            Backing::Placed { len, .. } => *len,
            Backing::External(e) => e.len(),
        }
    }
    fn as_ptr(&self) -> *mut u8 {
        match self {
            Backing::Own(b) => b.as_ptr(),
            // SAFETY: the plan checked offset + len <= the arena's length when placing, so the
            // pointer stays inside the arena's allocation.
            Backing::Placed { arena, offset, .. } => unsafe { arena.as_ptr().add(*offset) },
            Backing::External(e) => e.as_ptr(),
        }
    }
}

struct BufState {
    buf: Option<Backing>,
    /// The object's memory is the application's ([`SharedBuffer::import`]): never allocated by
    /// the runtime, even after the application took it back.
    imported: bool,
    /// Outstanding mappings.
    leases: Leases,
}

/// Outstanding mappings: region (in the root image's pixel coordinates; a whole array or user data
/// object uses one fixed cell) and whether it is for writing, in slots marked in a bit set (a map
/// looks at the mappings there are, not at every slot: this is on every node run's path).
#[derive(Clone, Copy)]
struct Leases {
    used: u32,
    slots: [(Rect, bool); MAX_LEASES],
}

const _: () = assert!(MAX_LEASES <= u32::BITS as usize, "one bit per slot");

impl Leases {
    const NONE: Leases = Leases { used: 0, slots: [(Rect::new(0, 0, 0, 0), false); MAX_LEASES] };

    fn any(&self) -> bool {
        self.used != 0
    }

    fn iter(&self) -> impl Iterator<Item = &(Rect, bool)> {
        let mut bits = self.used;
        std::iter::from_fn(move || {
            let i = (bits != 0).then(|| bits.trailing_zeros() as usize)?;
            bits &= bits - 1;
            Some(&self.slots[i])
        })
    }

    /// Take a free slot for `lease`; `None` when every slot is taken.
    fn insert(&mut self, lease: (Rect, bool)) -> Option<usize> {
        let slot = self.used.trailing_ones() as usize;
        if slot >= MAX_LEASES {
            return None;
        }
        self.used |= 1 << slot;
        self.slots[slot] = lease;
        Some(slot)
    }

    fn remove(&mut self, slot: usize) {
        debug_assert!(self.used & (1 << slot) != 0, "lease slot {slot} given back twice");
        self.used &= !(1u32 << slot);
    }
}

/// The bytes of a data object plus who has which part mapped.
pub(super) struct SharedBuffer {
    state: Mutex<BufState>,
}

/// A granted mapping: the base pointer of the whole buffer, its length, and the lease slot to hand
/// back with [`SharedBuffer::release`] (the map guards of the data objects do this in `Drop`).
#[derive(Clone, Copy)]
pub(super) struct Lease {
    pub(super) ptr: *mut u8,
    pub(super) len: usize,
    pub(super) slot: usize,
}

/// The region standing for "the whole object" (arrays, user data objects).
pub(super) const WHOLE: Rect = Rect::new(0, 0, 1, 1);

impl SharedBuffer {
    pub(super) fn new() -> SharedBuffer {
        SharedBuffer { state: Mutex::new(BufState { buf: None, imported: false, leases: Leases::NONE }) }
    }

    fn lock(&self) -> MutexGuard<'_, BufState> {
        // A poisoned lock only means a panic happened while the table was consistent (no code
        // panics between reading and writing it), so the state is still usable.
        lock(&self.state)
    }

    /// Make sure a buffer of exactly `len` bytes exists; reallocates (zeroed) when the size changed,
    /// which is refused while the buffer is mapped.
    pub(super) fn ensure(&self, len: usize, resources: &Arc<Resources>) -> Result<()> {
        let mut st = self.lock();
        if st.buf.as_ref().is_some_and(|b| b.len() == len || matches!(b, Backing::External(e) if e.len() >= len)) {
            return Ok(());
        }
        if st.imported {
            return Err(match &st.buf {
                Some(b) => Error::new(ErrorKind::InvalidParameters, "the application's memory is too small")
                    .expected_found(format!("{len} bytes"), format!("{} bytes", b.len())),
                None => Error::new(
                    ErrorKind::NoMemory,
                    "the image has no memory: the application took it back (swap_handle with None)",
                ),
            });
        }
        if st.leases.any() {
            return Err(Error::new(ErrorKind::NotSupported, "the buffer is mapped and cannot be reallocated"));
        }
        st.buf = None;
        st.buf = Some(Backing::Own(RawBuf::new(len, resources)?));
        Ok(())
    }

    /// Put the bytes at `offset..offset + len` of `arena` (a memory plan), freeing a block of its
    /// own. Refused while mapped, and if the range is not inside the arena.
    pub(super) fn place(&self, arena: &Arc<RawBuf>, offset: usize, len: usize) -> Result<()> {
        if offset.checked_add(len).is_none_or(|end| end > arena.len()) || !offset.is_multiple_of(BUFFER_ALIGN) {
            return Err(Error::new(ErrorKind::InvalidValue, "a placement outside its arena or misaligned")
                .expected_found(format!("64-byte aligned, inside {} bytes", arena.len()), format!("{offset}+{len}")));
        }
        let mut st = self.lock();
        if let Some(Backing::Placed { arena: a, offset: o, len: l }) = &st.buf
            && Arc::ptr_eq(a, arena)
            && (*o, *l) == (offset, len)
        {
            return Ok(());
        }
        if st.leases.any() {
            return Err(Error::new(ErrorKind::NotSupported, "the buffer is mapped and cannot be moved"));
        }
        st.buf = Some(Backing::Placed { arena: Arc::clone(arena), offset, len });
        Ok(())
    }

    /// Lend the application's memory to the object (`None`: take it back, leaving the object
    /// without memory); returns the memory it had if that was the application's too. Refused
    /// while mapped (a graph processing the object maps it), leaving everything as it was.
    pub(super) fn import(&self, block: Option<ExternalBlock>) -> Result<Option<ExternalBlock>> {
        let mut st = self.lock();
        if st.leases.any() {
            return Err(Error::new(
                ErrorKind::NotSupported,
                "the image is mapped (by the application or a running graph); its memory cannot be swapped now",
            ));
        }
        let old = match st.buf.take() {
            Some(Backing::External(e)) => Some(e),
            _ => None,
        };
        st.buf = block.map(Backing::External);
        st.imported = true;
        Ok(old)
    }

    /// Take the bytes out of a memory plan's arena (the next `ensure` allocates a block of its
    /// own); a buffer of its own is kept. Nothing happens while mapped.
    pub(super) fn unplace(&self) {
        let mut st = self.lock();
        if matches!(st.buf, Some(Backing::Placed { .. })) && !st.leases.any() {
            st.buf = None;
        }
    }

    /// The arena and offset this buffer is placed at, if a memory plan placed it.
    pub(super) fn placement(&self) -> Option<(usize, usize)> {
        match &self.lock().buf {
            Some(Backing::Placed { arena, offset, .. }) => Some((Arc::as_ptr(arena) as usize, *offset)),
            _ => None,
        }
    }

    /// Free the bytes unless mapped (a virtual image bound to another's storage by aliasing).
    pub(super) fn free_if_unmapped(&self) {
        let mut st = self.lock();
        if !st.leases.any() && !st.imported {
            st.buf = None;
        }
    }

    /// True if the object's memory is the application's ([`import`](Self::import)).
    pub(super) fn is_imported(&self) -> bool {
        self.lock().imported
    }

    /// True once the buffer exists.
    pub(super) fn is_allocated(&self) -> bool {
        self.lock().buf.is_some()
    }

    /// Map `region` for reading (`write == false`) or writing. Overlapping readers share; a writer
    /// excludes every overlapping mapping; disjoint regions never conflict.
    pub(super) fn acquire(&self, region: Rect, write: bool) -> Result<Lease> {
        let mut st = self.lock();
        let Some(buf) = st.buf.as_ref() else {
            return Err(Error::new(ErrorKind::NotAllocated, "the buffer is not allocated"));
        };
        let (ptr, len) = (buf.as_ptr(), buf.len());
        for (r, w) in st.leases.iter() {
            if (write || *w) && r.overlaps(&region) {
                return Err(Error::new(
                    ErrorKind::NotSupported,
                    if *w {
                        "the region is already mapped for writing"
                    } else {
                        "the region is mapped for reading and cannot be mapped for writing"
                    },
                )
                .expected_found("no overlapping mapping", r));
            }
        }
        let Some(slot) = st.leases.insert((region, write)) else {
            return Err(Error::new(ErrorKind::NoResources, "too many simultaneous mappings of one object")
                .expected_found(format!("at most {MAX_LEASES}"), MAX_LEASES + 1));
        };
        Ok(Lease { ptr, len, slot })
    }

    /// Give back a mapping granted by [`acquire`](Self::acquire).
    pub(super) fn release(&self, slot: usize) {
        self.lock().leases.remove(slot);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bit-set lease table against a plain table of options (the old representation): the
    /// same slot taken, the same mappings seen, the same refusal when full, over random sequences.
    #[test]
    fn the_lease_bit_set_matches_a_table_of_options() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..2_000 {
            let mut fast = Leases::NONE;
            let mut plain: [Option<(Rect, bool)>; MAX_LEASES] = [None; MAX_LEASES];
            for step in 0..200u32 {
                let r = next();
                if r % 3 != 0 {
                    let lease = (Rect::new(step, 0, step + 1 + (r >> 8) as u32 % 5, 1), r & 8 != 0);
                    let expected = plain.iter().position(Option::is_none);
                    if let Some(i) = expected {
                        plain[i] = Some(lease);
                    }
                    assert_eq!(fast.insert(lease), expected);
                } else {
                    let taken: Vec<usize> = (0..MAX_LEASES).filter(|&i| plain[i].is_some()).collect();
                    if let Some(&slot) = taken.get((r >> 16) as usize % taken.len().max(1)) {
                        plain[slot] = None;
                        fast.remove(slot);
                    }
                }
                assert_eq!(fast.any(), plain.iter().any(Option::is_some));
                let seen: Vec<(Rect, bool)> = fast.iter().copied().collect();
                let want: Vec<(Rect, bool)> = plain.iter().flatten().copied().collect();
                assert_eq!(seen, want);
            }
        }
    }
}
