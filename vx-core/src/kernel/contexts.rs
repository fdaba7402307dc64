//! What a kernel's callbacks receive: the node's parameters, its attributes, and its local data.
//! [`ValidateContext`] for the validator, [`LifecycleContext`] for init/deinit (with the spec's
//! local-data rules), [`ProcessContext`] for process, [`ControlContext`] for a command sent to the
//! node. Init, process, control and deinit reach the node's typed instance context. Objects reached through these contexts may
//! be virtual: kernels of the owning graph may map them, the application may not.

use std::ffi::c_void;
use vx_plugin_abi::{BorderMode, ImageFormat};

use crate::data::array::Array;
use crate::data::image::Image;
use crate::data::image::patch::{ImagePatch, ImagePatchMut, Pixel};
use crate::data::items::ArrayItem;
use crate::data::kernel_view::KernelView;
use crate::data::object::Access;
use crate::data::reference::{DataObject, Reference};
use crate::data::scalar::Scalar;
use crate::data::user_data::UserDataObject;
use crate::error::{Error, ErrorKind, Result};
use crate::kernel::instance::InstanceContext;
use crate::kernel::local_data::{LocalData, LocalPtr, Phase, check_set_ptr, check_set_size};
use crate::kernel::memory::{MemBlock, MemRegion, NodeMemory, Plain, Taken, block_slice};
use crate::shared::Resources;
use std::sync::Arc;

/// A node's identity: its graph's id (`Graph::id`) and its index in the
/// graph (indexes are never reused). The callbacks' contexts give it too (`node_key`), so a
/// binding (the C API) can tell which node a callback runs for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NodeKey {
    /// The graph's id.
    pub graph: u64,
    /// The node's index in the graph.
    pub index: usize,
}

fn param(params: &[Option<Reference>], i: u32) -> Result<&Reference> {
    match params.get(i as usize) {
        Some(Some(r)) => Ok(r),
        Some(None) => {
            Err(Error::new(ErrorKind::InvalidParameters, "the optional parameter is not set").at_parameter(i))
        }
        None => Err(Error::new(ErrorKind::InvalidParameters, "no such parameter")
            .at_parameter(i)
            .expected_found(format!("index < {}", params.len()), i)),
    }
}

fn wrong_type(i: u32, want: &str, r: &Reference) -> Error {
    Error::new(ErrorKind::InvalidType, "the parameter has another type")
        .at_parameter(i)
        .expected_found(want, r.data_type())
}

macro_rules! param_accessors {
    () => {
        /// Which node the callback runs for (`Node::key` of the same node).
        pub fn node_key(&self) -> NodeKey {
            self.node
        }
        /// The node's parameters, indexed like the kernel's signature (`None` = optional, unset).
        pub fn params(&self) -> &'a [Option<Reference>] {
            self.params
        }
        /// Parameter `i`, or an error naming it when missing.
        pub fn param(&self, i: u32) -> Result<&'a Reference> {
            param(self.params, i)
        }
        /// Parameter `i` as a scalar, as the node's kernel sees it (a virtual one too).
        pub fn scalar(&self, i: u32) -> Result<KernelView<'a, Scalar>> {
            let r = param(self.params, i)?;
            r.as_scalar().map(KernelView::new).ok_or_else(|| wrong_type(i, "scalar", r))
        }
        /// Parameter `i` as a `T` (its attributes): `v.get::<Pyramid>(0)?.levels()`.
        pub fn get<T: DataObject>(&self, i: u32) -> Result<&'a T> {
            let r = param(self.params, i)?;
            T::from_reference(r).ok_or_else(|| wrong_type(i, &T::TYPE.to_string(), r))
        }
        /// The node's border mode (`VX_NODE_BORDER`).
        pub fn border(&self) -> BorderMode {
            self.border
        }
        /// The node's name.
        pub fn node_name(&self) -> &str {
            self.node_name
        }
        /// `vxIsParameterAliased`: whether verification placed parameters `a` and `b` (in either
        /// order) in one buffer, honouring one of the kernel's alias hints. Decided before init, so
        /// init and process see the same answer; always false in a validator (not decided yet).
        pub fn is_parameter_aliased(&self, a: u32, b: u32) -> bool {
            self.aliased.iter().any(|&(x, y)| (x, y) == (a, b) || (y, x) == (a, b))
        }
    };
}

/// What the validator sees: parameters and node attributes. Images can be queried (format, size,
/// valid region), not mapped.
pub struct ValidateContext<'a> {
    pub(crate) node: NodeKey,
    pub(crate) node_name: &'a str,
    pub(crate) params: &'a [Option<Reference>],
    pub(crate) border: BorderMode,
    /// Parameter pairs sharing one buffer (buffer aliasing), decided at verify.
    pub(crate) aliased: &'a [(u32, u32)],
}

impl<'a> ValidateContext<'a> {
    param_accessors!();

    /// Parameter `i` as an image (query its format, size, valid region).
    pub fn image(&self, i: u32) -> Result<&'a Image> {
        let r = param(self.params, i)?;
        r.as_image().ok_or_else(|| wrong_type(i, "image", r))
    }

    /// Parameter `i` as an array.
    pub fn array(&self, i: u32) -> Result<&'a Array> {
        let r = param(self.params, i)?;
        r.as_array().ok_or_else(|| wrong_type(i, "array", r))
    }

    /// Check that input image `i` has `format`, with an error that names both.
    pub fn expect_image_format(&self, i: u32, format: ImageFormat) -> Result<&'a Image> {
        let img = self.image(i)?;
        if img.format() != format {
            return Err(Error::new(ErrorKind::InvalidFormat, "wrong image format")
                .at_parameter(i)
                .expected_found(format, img.format()));
        }
        Ok(img)
    }
}

/// What init and deinit see: parameters, node attributes, and the node's local data, which they may
/// set only as the spec allows.
pub struct LifecycleContext<'a> {
    pub(crate) node: NodeKey,
    pub(crate) node_name: &'a str,
    pub(crate) params: &'a [Option<Reference>],
    pub(crate) border: BorderMode,
    /// Parameter pairs sharing one buffer (buffer aliasing), decided at verify.
    pub(crate) aliased: &'a [(u32, u32)],
    pub(crate) phase: Phase,
    pub(crate) kernel_local_size: usize,
    pub(crate) local: &'a mut LocalData,
    /// The node's kernel memory (blocks allocated in init, freed in deinit).
    pub(crate) memory: &'a mut NodeMemory,
    pub(crate) resources: &'a Arc<Resources>,
    pub(crate) instance: &'a mut InstanceContext,
}

impl<'a> LifecycleContext<'a> {
    param_accessors!();

    /// Parameter `i` as an image.
    pub fn image(&self, i: u32) -> Result<&'a Image> {
        let r = param(self.params, i)?;
        r.as_image().ok_or_else(|| wrong_type(i, "image", r))
    }

    /// `VX_NODE_LOCAL_DATA_SIZE`.
    pub fn local_data_size(&self) -> usize {
        self.local.size
    }
    /// `VX_NODE_LOCAL_DATA_PTR` (null when unset).
    pub fn local_data_ptr(&self) -> *mut c_void {
        self.local.ptr()
    }
    /// The framework-allocated local data, if the framework allocated it.
    pub fn local_data(&mut self) -> Option<&mut [u8]> {
        self.local.framework_bytes()
    }

    /// Set `VX_NODE_LOCAL_DATA_SIZE`. Allowed only when the kernel's local data size is 0, and in
    /// deinit only when the framework did not allocate the buffer. If init sets a size and no
    /// pointer, the framework allocates a buffer of that size after init.
    pub fn set_local_data_size(&mut self, size: usize) -> Result<()> {
        check_set_size(self.phase, self.kernel_local_size, self.local)?;
        if size != self.local.size && self.local.is_framework() {
            self.local.ptr = LocalPtr::Null;
        }
        self.local.size = size;
        Ok(())
    }

    /// Allocate `count` elements of `T` in `region` (`tivxMemAlloc`): init only (TIOVX's
    /// `create_func`). A persistent block lives until deinit frees it ([`free`](Self::free)); a
    /// scratch block is a request, valid in each later callback of this node in the running
    /// executor's scratch arena. Blocks are zeroed when allocated; scratch contents are undefined
    /// at the start of every callback.
    pub fn alloc<T: Plain>(&mut self, region: MemRegion, count: usize) -> Result<MemBlock<T>> {
        let bytes = count.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| {
            Error::new(ErrorKind::NoMemory, format!("{count} elements of {} overflow", std::any::type_name::<T>()))
        })?;
        Ok(MemBlock::nth(region, self.alloc_bytes(region, bytes)?))
    }

    /// [`alloc`](Self::alloc) in bytes (the module ABI's `mem_alloc`).
    pub(crate) fn alloc_bytes(&mut self, region: MemRegion, bytes: usize) -> Result<u32> {
        if self.phase != Phase::Init {
            return Err(Error::new(
                ErrorKind::NotSupported,
                format!(
                    "kernel memory is allocated in init only (TIOVX's create); node '{}' asked for {region} memory \
                     in deinit",
                    self.node_name
                ),
            ));
        }
        self.memory.alloc(region, bytes, self.resources)
    }

    /// Free a block (`tivxMemFree`): what init allocated, deinit frees. A persistent block left at
    /// the end of deinit is freed by the runtime and reported as a leak ([`MemoryLeak`](crate::MemoryLeak)).
    pub fn free<T: Plain>(&mut self, block: MemBlock<T>) -> Result<()> {
        self.memory.free(block.region(), block.index())
    }

    /// The elements of a persistent block (init may fill a table, deinit read it), one at a time:
    /// the slice borrows the context, so nothing can free the block while it is in use. Scratch
    /// blocks are reachable in process only.
    pub fn block<T: Plain>(&mut self, block: MemBlock<T>) -> Result<&mut [T]> {
        let (ptr, bytes) = self.memory.locate(block.region(), block.index(), (std::ptr::null_mut(), 0))?;
        // SAFETY: a persistent block of this node (`locate`), which the `&mut self` borrow keeps
        // from being freed or handed out again while the slice lives.
        Ok(unsafe { block_slice(ptr, bytes) })
    }

    /// Set the node's instance context (`tivxSetTargetKernelInstanceContext`), typically in init
    /// (create): any `Send` value, reached in process and control with `instance::<S>()`, taken back
    /// in deinit with [`take_instance`](Self::take_instance) or dropped after it.
    pub fn set_instance<S: std::any::Any + Send>(&mut self, value: S) {
        self.instance.set(value);
    }
    /// The node's instance context, if it is an `S` (`tivxGetTargetKernelInstanceContext`).
    pub fn instance<S: std::any::Any + Send>(&mut self) -> Result<&mut S> {
        self.instance.get(self.node_name)
    }
    /// Take the instance context back (deinit / delete); what is left is dropped after deinit.
    pub fn take_instance<S: std::any::Any + Send>(&mut self) -> Result<S> {
        self.instance.take(self.node_name)
    }

    /// Set `VX_NODE_LOCAL_DATA_PTR` to memory the kernel owns (and frees in deinit). Same rules as
    /// [`set_local_data_size`](Self::set_local_data_size); the framework never dereferences it.
    pub fn set_local_data_ptr(&mut self, ptr: *mut c_void) -> Result<()> {
        check_set_ptr(self.phase, self.kernel_local_size, self.local)?;
        self.local.ptr = if ptr.is_null() { LocalPtr::Null } else { LocalPtr::Kernel(ptr as usize) };
        Ok(())
    }
}

/// What process sees: parameters (mappable, including virtual ones), node attributes and the
/// node's local data.
pub struct ProcessContext<'a> {
    pub(crate) node: NodeKey,
    pub(crate) node_name: &'a str,
    pub(crate) params: &'a [Option<Reference>],
    pub(crate) border: BorderMode,
    /// Parameter pairs sharing one buffer (buffer aliasing), decided at verify.
    pub(crate) aliased: &'a [(u32, u32)],
    pub(crate) local: &'a mut LocalData,
    /// The node's kernel memory.
    pub(crate) memory: &'a NodeMemory,
    /// The running executor's scratch arena (base, length; at least the node's scratch requests),
    /// borrowed for the call.
    pub(crate) scratch: (*mut u8, usize),
    /// The blocks handed out in this call (each once).
    pub(crate) taken: std::cell::RefCell<Taken>,
    pub(crate) instance: &'a mut InstanceContext,
}

impl<'a> ProcessContext<'a> {
    param_accessors!();

    /// The node's instance context, if it is an `S` (`tivxGetTargetKernelInstanceContext`).
    pub fn instance<S: std::any::Any + Send>(&mut self) -> Result<&mut S> {
        self.instance.get(self.node_name)
    }

    /// The elements of a block init allocated: persistent, or scratch in this executor's arena.
    /// Each block once per call (a second time is an error), so the slices never overlap; they
    /// live as long as the call. Process cannot allocate: blocks come from init.
    pub fn block<T: Plain>(&self, block: MemBlock<T>) -> Result<&'a mut [T]> {
        let (ptr, bytes) = self.memory.locate(block.region(), block.index(), self.scratch)?;
        self.taken.borrow_mut().take(block.region(), block.index())?;
        // SAFETY: `locate` returned a range inside a persistent block of the node or the executor's
        // arena, both valid (and not freed: process cannot free) for the call ('a); `taken` hands
        // each block out once per call and blocks are disjoint, so no other reference covers it.
        Ok(unsafe { block_slice(ptr, bytes) })
    }

    /// Parameter `i` as an image the kernel may map.
    pub fn image(&self, i: u32) -> Result<KernelImage<'a>> {
        let r = param(self.params, i)?;
        r.as_image().map(KernelView::new).ok_or_else(|| wrong_type(i, "image", r))
    }
    /// Map the whole of input image `input` (plane 0) for reading and output image `output` for
    /// writing: the usual start of an image-to-image kernel.
    pub fn map_pair<I: Pixel, O: Pixel>(
        &self,
        input: u32,
        output: u32,
    ) -> Result<(ImagePatch<'a, I>, ImagePatchMut<'a, O>)> {
        if self.is_parameter_aliased(input, output) {
            return Err(Error::new(
                ErrorKind::NotSupported,
                "the two parameters share one buffer (buffer aliasing): map them with map_in_place",
            )
            .at_parameter(output));
        }
        let (src, dst) = (self.image(input)?, self.image(output)?);
        let i = src.map::<I>(src.full_rect(), 0).map_err(|e| e.at_parameter(input))?;
        let o = dst.map_mut::<O>(dst.full_rect(), 0).map_err(|e| e.at_parameter(output))?;
        Ok((i, o))
    }

    /// Map output image `output` (plane 0, whole) for reading and writing, holding the pixels of
    /// input image `input`: the same memory when verification aliased the two (buffer aliasing;
    /// nothing is copied, a sparse kernel writes only what it changes), else a copy of the input
    /// made here. The in-place counterpart of [`map_pair`](Self::map_pair).
    pub fn map_in_place<T: Pixel>(&self, input: u32, output: u32) -> Result<ImagePatchMut<'a, T>> {
        let (src, dst) = (self.image(input)?, self.image(output)?);
        if !self.is_parameter_aliased(input, output) {
            let i = src.map::<T>(src.full_rect(), 0).map_err(|e| e.at_parameter(input))?;
            let mut o = dst.map_mut::<T>(dst.full_rect(), 0).map_err(|e| e.at_parameter(output))?;
            if (i.width(), i.height()) != (o.width(), o.height()) {
                return Err(Error::new(ErrorKind::InvalidParameters, "in-place input and output differ in size")
                    .at_parameter(output)
                    .expected_found(format!("{}x{}", i.width(), i.height()), format!("{}x{}", o.width(), o.height())));
            }
            for y in 0..i.height() {
                o.row_mut(y).copy_from_slice(i.row(y));
            }
            return Ok(o);
        }
        dst.map_mut::<T>(dst.full_rect(), 0).map_err(|e| e.at_parameter(output))
    }

    /// Parameter `i` as an array the kernel may read and fill.
    pub fn array(&self, i: u32) -> Result<KernelArray<'a>> {
        let r = param(self.params, i)?;
        r.as_array().map(|array| KernelArray { array }).ok_or_else(|| wrong_type(i, "array", r))
    }
    /// Parameter `i` as a `T` the kernel may copy and map (`p.object::<Lut>(1)?.map::<u8>()?`),
    /// virtual or not.
    pub fn object<T: DataObject>(&self, i: u32) -> Result<KernelView<'a, T>> {
        let r = param(self.params, i)?;
        T::from_reference(r).map(KernelView::new).ok_or_else(|| wrong_type(i, &T::TYPE.to_string(), r))
    }
    /// Parameter `i` as a user data object the kernel may copy in and out.
    pub fn user_data_object(&self, i: u32) -> Result<KernelUserData<'a>> {
        let r = param(self.params, i)?;
        r.as_user_data_object()
            .map(|object| KernelUserData { object })
            .ok_or_else(|| wrong_type(i, "user data object", r))
    }
    /// `VX_NODE_LOCAL_DATA_SIZE`.
    pub fn local_data_size(&self) -> usize {
        self.local.size
    }
    /// `VX_NODE_LOCAL_DATA_PTR`.
    pub fn local_data_ptr(&self) -> *mut c_void {
        self.local.ptr()
    }
    /// The framework-allocated local data (not persistent between executions, per the spec).
    pub fn local_data(&mut self) -> Option<&mut [u8]> {
        self.local.framework_bytes()
    }
}

/// An image as a kernel sees it during process (mappable even when virtual).
pub type KernelImage<'a> = KernelView<'a, Image>;

/// An array as a kernel sees it during process.
#[derive(Clone, Copy)]
pub struct KernelArray<'a> {
    array: &'a Array,
}

impl<'a> KernelArray<'a> {
    /// `array` as a kernel sees it (an object-array item reached through the module ABI).
    pub(crate) fn of(array: &'a Array) -> KernelArray<'a> {
        KernelArray { array }
    }
    /// Items currently held.
    pub fn num_items(&self) -> usize {
        self.array.num_items()
    }
    /// Capacity.
    pub fn capacity(&self) -> usize {
        self.array.capacity()
    }
    /// Append items.
    pub fn add_items<T: ArrayItem>(&self, items: &[T]) -> Result<()> {
        self.array.add_items_impl(items, Access::Kernel)
    }
    /// Read all items (allocates the returned vector).
    pub fn read_items<T: ArrayItem>(&self) -> Result<Vec<T>> {
        self.array.read_items_impl(Access::Kernel)
    }
    /// Keep the first `n` items.
    pub fn truncate(&self, n: usize) -> Result<()> {
        self.array.truncate_impl(n, Access::Kernel)
    }
    /// Item size in bytes.
    pub fn item_size(&self) -> usize {
        self.array.item_size()
    }
    pub(crate) fn add_raw(&self, bytes: &[u8]) -> Result<()> {
        self.array.add_raw(bytes, Access::Kernel)
    }
    pub(crate) fn read_raw(&self, out: &mut [u8]) -> Result<usize> {
        self.array.read_raw(out, Access::Kernel)
    }
}

/// A user data object as a kernel sees it during process.
#[derive(Clone, Copy)]
pub struct KernelUserData<'a> {
    object: &'a UserDataObject,
}

impl KernelUserData<'_> {
    /// Size in bytes.
    pub fn size(&self) -> usize {
        self.object.size()
    }
    /// Copy bytes out.
    pub fn copy_to(&self, offset: usize, out: &mut [u8]) -> Result<()> {
        KernelView::new(self.object).copy_to(offset, out)
    }
    /// Copy bytes in.
    pub fn copy_from(&self, offset: usize, src: &[u8]) -> Result<()> {
        KernelView::new(self.object).copy_from(offset, src)
    }
}

/// What a control callback sees (`tivxNodeSendCommand` → `control_func`): the command, the
/// references sent with it, the node's parameters, instance context and persistent kernel memory.
/// It runs on the node's target, never at the same time as the node's process; it cannot allocate.
pub struct ControlContext<'a> {
    pub(crate) node: NodeKey,
    pub(crate) node_name: &'a str,
    pub(crate) params: &'a [Option<Reference>],
    pub(crate) border: BorderMode,
    pub(crate) aliased: &'a [(u32, u32)],
    pub(crate) command: u32,
    pub(crate) refs: &'a [Reference],
    pub(crate) memory: &'a NodeMemory,
    pub(crate) taken: std::cell::RefCell<Taken>,
    pub(crate) instance: &'a mut InstanceContext,
    pub(crate) local: &'a LocalData,
}

impl<'a> ControlContext<'a> {
    /// `VX_NODE_LOCAL_DATA_SIZE`.
    pub fn local_data_size(&self) -> usize {
        self.local.size
    }
    /// `VX_NODE_LOCAL_DATA_PTR` (null when unset).
    pub fn local_data_ptr(&self) -> *mut c_void {
        self.local.ptr()
    }
    /// A persistent block's address and size, handed out once per call (the module ABI).
    pub(crate) fn raw_block(&self, region: MemRegion, index: u32) -> Result<(*mut u8, usize)> {
        let found = self.memory.locate(region, index, (std::ptr::null_mut(), 0))?;
        self.taken.borrow_mut().take(region, index)?;
        Ok(found)
    }

    param_accessors!();

    /// The command code the application sent.
    pub fn command(&self) -> u32 {
        self.command
    }
    /// The references sent with the command.
    pub fn refs(&self) -> &'a [Reference] {
        self.refs
    }
    /// The node's instance context, if it is an `S`.
    pub fn instance<S: std::any::Any + Send>(&mut self) -> Result<&mut S> {
        self.instance.get(self.node_name)
    }
    /// A persistent block init allocated (each once per call; scratch is process-only).
    pub fn block<T: Plain>(&self, block: MemBlock<T>) -> Result<&'a mut [T]> {
        let (ptr, bytes) = self.raw_block(block.region(), block.index())?;
        // SAFETY: a persistent block of the node, valid for the call ('a: the node's memory is
        // borrowed for it and control cannot free); `raw_block` hands each block out once per call.
        Ok(unsafe { block_slice(ptr, bytes) })
    }
}
