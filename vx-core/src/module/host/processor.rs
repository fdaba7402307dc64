//! The processor vtable: what a module's user-kernel `process` may call to reach its parameters
//! (image patches — pyramid levels and object-array items too —, the memory of fixed-layout
//! objects, scalars, thresholds, arrays, local data, alias decisions), each by [`ParamPath`].

use std::ffi::c_void;
use std::sync::OnceLock;

use vx_plugin_abi::abi_stable::prefix_type::PrefixTypeTrait;
use vx_plugin_abi::module_abi::{
    AbiResult, ArrayInfo, LocalData, MappedImage, MemBlockInfo, Processor, ProcessorVtable, ProcessorVtableRef,
};
use vx_plugin_abi::object_meta::{MappedData, ObjectMeta as WireMeta, ParamPath, ScalarBits, ThresholdBits};

use crate::data::array::Array;
use crate::data::blob::RawLease;
use crate::data::image::PlaneLease;
use crate::data::kernel_view::KernelView;
use crate::data::kind::RawMap;
use crate::data::object::Access;
use crate::data::reference::Reference;
use crate::data::scalar::Scalar;
use crate::data::threshold::Threshold;
use crate::data::types::{ScalarType, ScalarValue};
use crate::error::{Error, ErrorKind, Result};
use crate::kernel::contexts::KernelArray;
use crate::kernel::contexts::ProcessContext;
use crate::kernel::memory::MemRegion;
use crate::module::host::objects::{self, scalar_bits};
use crate::module::host::{abi, catch, catch_or, to_error};

const MAX_MAPS: usize = 16;

/// What a module has mapped: held until unmapped (by token = slot) or the call ends.
enum Lease<'b> {
    Plane(#[allow(dead_code)] PlaneLease<'b>),
    Data(#[allow(dead_code)] RawLease<'b>),
}

struct ProcessCall<'a, 'b> {
    p: &'a mut ProcessContext<'b>,
    maps: [Option<Lease<'b>>; MAX_MAPS],
}

/// The region of a wire code, or an error naming it.
pub(super) fn region(code: u32) -> Result<MemRegion> {
    MemRegion::from_code(code)
        .ok_or_else(|| Error::new(ErrorKind::InvalidParameters, "no such memory region").found(code))
}

unsafe extern "C" fn proc_mem_block(p: &Processor, region_code: u32, index: u32) -> AbiResult<MemBlockInfo> {
    catch("memory block", || {
        let c = process_call(p);
        abi((|| {
            let region = region(region_code)?;
            let (ptr, bytes) = c.p.memory.locate(region, index, c.p.scratch)?;
            c.p.taken.borrow_mut().take(region, index)?;
            Ok(MemBlockInfo { ptr: ptr as usize, bytes: bytes as u64 })
        })())
    })
}

unsafe extern "C" fn proc_mem_alloc(p: &Processor, region_code: u32, bytes: u64) -> AbiResult<u32> {
    catch("memory alloc", || {
        let c = process_call(p);
        let region = MemRegion::from_code(region_code).map_or("unknown".to_string(), |r| r.to_string());
        abi(Err(Error::new(
            ErrorKind::NotSupported,
            format!(
                "kernel memory is allocated in init only (TIOVX's create); node '{}' asked for {bytes} bytes of \
                 {region} memory in process",
                c.p.node_name()
            ),
        )))
    })
}

fn process_call<'a, 'b>(p: &Processor) -> &'a mut ProcessCall<'a, 'b> {
    // SAFETY: `call_process` built this Processor with `ctx` = the address of a ProcessCall that
    // lives (and is borrowed by nobody else) for the whole process call.
    unsafe { &mut *(p.ctx() as *mut ProcessCall<'a, 'b>) }
}

impl<'b> ProcessCall<'_, 'b> {
    /// A free map slot, or an error naming the limit.
    fn free_slot(&self) -> Result<usize> {
        self.maps
            .iter()
            .position(Option::is_none)
            .ok_or_else(|| Error::new(ErrorKind::NoResources, "too many objects mapped at once").expected(MAX_MAPS))
    }
    fn params(&self) -> &'b [Option<Reference>] {
        self.p.params()
    }
}

unsafe extern "C" fn proc_map_image(
    p: &Processor,
    path: ParamPath,
    rect: vx_plugin_abi::Rect,
    write: bool,
) -> AbiResult<MappedImage> {
    catch("map image", || {
        let c = process_call(p);
        abi((|| {
            let img = objects::image(c.params(), path)?;
            let full = vx_plugin_abi::Rect::full(img.width(), img.height());
            let rect = if rect.is_empty() { full } else { rect };
            if !full.contains(&rect) {
                return Err(Error::new(ErrorKind::InvalidParameters, "the patch must lie inside the image")
                    .at_parameter(path.index)
                    .expected_found(format!("inside {full}"), rect));
            }
            let slot = c.free_slot()?;
            let lease = img.lease_plane0(write).map_err(|e| e.at_parameter(path.index))?;
            let offset = rect.start_y as usize * lease.stride_y + rect.start_x as usize * lease.stride_x;
            let m = MappedImage {
                // SAFETY: rect lies inside the image, so the offset stays inside the leased plane.
                base: unsafe { lease.base.add(offset) },
                dim_x: rect.width(),
                dim_y: rect.height(),
                stride_x: lease.stride_x as i32,
                stride_y: lease.stride_y as i32,
                token: slot as u64,
            };
            c.maps[slot] = Some(Lease::Plane(lease));
            Ok(m)
        })())
    })
}

unsafe extern "C" fn proc_map_data(p: &Processor, path: ParamPath, write: bool) -> AbiResult<MappedData> {
    catch("map data", || {
        let c = process_call(p);
        abi((|| {
            let r = objects::resolve(c.params(), path)?.ok_or_else(|| {
                Error::new(ErrorKind::InvalidParameters, format!("{path} is not set")).at_parameter(path.index)
            })?;
            let slot = c.free_slot()?;
            let Some(mapped) = r.reference().and_then(|r| r.any().map_raw(write)) else {
                return Err(Error::new(
                    ErrorKind::InvalidType,
                    format!("{path}: only matrices, convolutions, LUTs, distributions, remaps, tensors and user data objects are mapped as data"),
                )
                .at_parameter(path.index)
                .found(r.data_type()));
            };
            let RawMap { lease, offset, strides, bytes } = mapped.map_err(|e| e.at_parameter(path.index))?;
            if offset + bytes > lease.len {
                return Err(Error::new(ErrorKind::InvalidDimension, "the object's layout lies outside its storage")
                    .at_parameter(path.index)
                    .expected_found(format!("<= {} bytes", lease.len), offset + bytes));
            }
            let m = MappedData {
                // SAFETY: offset + bytes lies inside the leased buffer (checked above).
                base: unsafe { lease.ptr.add(offset) },
                bytes: bytes as u64,
                strides,
                token: slot as u64,
            };
            c.maps[slot] = Some(Lease::Data(lease));
            Ok(m)
        })())
    })
}

unsafe extern "C" fn proc_unmap_image(p: &Processor, token: u64) {
    catch_or("unmap", (), || {
        if let Some(slot) = process_call(p).maps.get_mut(token as usize) {
            *slot = None;
        }
    })
}

unsafe extern "C" fn proc_object_meta(p: &Processor, path: ParamPath) -> AbiResult<WireMeta> {
    catch("object meta", || abi(objects::wire_meta(process_call(p).params(), path)))
}

unsafe extern "C" fn proc_read_scalar(p: &Processor, path: ParamPath) -> AbiResult<ScalarBits> {
    catch("read scalar", || {
        let c = process_call(p);
        abi(objects::get::<Scalar>(c.params(), path).map(|s| scalar_bits(s.read())))
    })
}

unsafe extern "C" fn proc_write_scalar(p: &Processor, path: ParamPath, value: ScalarBits) -> AbiResult<()> {
    catch("write scalar", || {
        let c = process_call(p);
        abi((|| {
            let s = objects::get::<Scalar>(c.params(), path)?;
            let ty = ScalarType::ALL
                .into_iter()
                .find(|t| t.code() as u32 == value.type_code)
                .ok_or_else(|| Error::new(ErrorKind::InvalidType, "unknown scalar type code").found(value.type_code))?;
            s.write(ScalarValue::from_ne_bytes(ty, value.bytes), Access::Kernel)
        })())
    })
}

unsafe extern "C" fn proc_threshold_read(p: &Processor, path: ParamPath) -> AbiResult<ThresholdBits> {
    catch("threshold read", || {
        let c = process_call(p);
        abi((|| {
            let v = KernelView::new(objects::get::<Threshold>(c.params(), path)?).values()?;
            Ok(ThresholdBits {
                value: v.value,
                lower: v.lower,
                upper: v.upper,
                true_value: v.true_value,
                false_value: v.false_value,
            })
        })())
    })
}

unsafe extern "C" fn proc_threshold_write(p: &Processor, path: ParamPath, v: ThresholdBits) -> AbiResult<()> {
    catch("threshold write", || {
        let c = process_call(p);
        abi((|| {
            let t = KernelView::new(objects::get::<Threshold>(c.params(), path)?);
            t.set_value(v.value)?;
            t.set_range(v.lower, v.upper)?;
            t.set_output(v.true_value, v.false_value)
        })())
    })
}

fn array_at<'b>(c: &ProcessCall<'_, 'b>, path: ParamPath) -> Result<KernelArray<'b>> {
    objects::get::<Array>(c.params(), path).map(KernelArray::of)
}

unsafe extern "C" fn proc_array_info(p: &Processor, path: ParamPath) -> AbiResult<ArrayInfo> {
    catch("array info", || {
        let c = process_call(p);
        abi(array_at(c, path).map(|a| ArrayInfo {
            item_size: a.item_size() as u64,
            capacity: a.capacity() as u64,
            num_items: a.num_items() as u64,
        }))
    })
}

unsafe extern "C" fn proc_array_add(p: &Processor, path: ParamPath, items: *const u8, count: u64) -> AbiResult<()> {
    catch("array add", || {
        let c = process_call(p);
        abi((|| {
            let a = array_at(c, path)?;
            let len = (count as usize)
                .checked_mul(a.item_size())
                .ok_or_else(|| Error::new(ErrorKind::InvalidValue, "item count overflows"))?;
            // SAFETY: the module passes `count` items of the array's item size at `items` (ABI contract).
            let bytes = unsafe { std::slice::from_raw_parts(items, len) };
            a.add_raw(bytes)
        })())
    })
}

unsafe extern "C" fn proc_array_read(p: &Processor, path: ParamPath, out: *mut u8, capacity: u64) -> AbiResult<u64> {
    catch("array read", || {
        let c = process_call(p);
        abi((|| {
            let a = array_at(c, path)?;
            let len = (capacity as usize)
                .checked_mul(a.item_size())
                .ok_or_else(|| Error::new(ErrorKind::InvalidValue, "capacity overflows"))?;
            // SAFETY: the module passes room for `capacity` items of the array's item size at `out`.
            let dst = unsafe { std::slice::from_raw_parts_mut(out, len) };
            a.read_raw(dst).map(|n| n as u64)
        })())
    })
}

unsafe extern "C" fn proc_array_truncate(p: &Processor, path: ParamPath, count: u64) -> AbiResult<()> {
    catch("array truncate", || {
        let c = process_call(p);
        abi(array_at(c, path).and_then(|a| a.truncate(count as usize)))
    })
}

unsafe extern "C" fn proc_local_data(p: &Processor) -> LocalData {
    catch_or("local data", LocalData { ptr: 0, size: 0 }, || {
        let c = process_call(p);
        LocalData { ptr: c.p.local_data_ptr() as usize, size: c.p.local_data_size() as u64 }
    })
}

unsafe extern "C" fn proc_param_present(p: &Processor, index: u32) -> bool {
    catch_or("param present", false, || process_call(p).p.params().get(index as usize).is_some_and(Option::is_some))
}

unsafe extern "C" fn proc_is_aliased(p: &Processor, a: u32, b: u32) -> bool {
    catch_or("is aliased", false, || process_call(p).p.is_parameter_aliased(a, b))
}

fn processor_vtable() -> ProcessorVtableRef {
    static V: OnceLock<ProcessorVtableRef> = OnceLock::new();
    *V.get_or_init(|| {
        ProcessorVtable {
            map_image: proc_map_image,
            map_data: proc_map_data,
            unmap_image: proc_unmap_image,
            object_meta: proc_object_meta,
            read_scalar: proc_read_scalar,
            write_scalar: proc_write_scalar,
            threshold_read: proc_threshold_read,
            threshold_write: proc_threshold_write,
            array_info: proc_array_info,
            array_add: proc_array_add,
            array_read: proc_array_read,
            array_truncate: proc_array_truncate,
            local_data: proc_local_data,
            param_present: proc_param_present,
            is_aliased: proc_is_aliased,
            mem_block: proc_mem_block,
            mem_alloc: proc_mem_alloc,
        }
        .leak_into_prefix()
    })
}

pub(super) fn call_process(f: extern "C" fn(&Processor) -> AbiResult<()>, pc: &mut ProcessContext<'_>) -> Result<()> {
    let mut call = ProcessCall { p: pc, maps: Default::default() };
    // SAFETY: `call` is the ProcessCall the processor vtable's functions expect, borrowed by nobody
    // else for the whole call; the module receives the handle for this call only.
    let handle =
        unsafe { Processor::from_raw(processor_vtable(), &mut call as *mut ProcessCall<'_, '_> as *mut c_void) };
    let r = f(&handle).into_result().map_err(to_error);
    drop(call); // unmaps whatever the module left mapped
    r
}
