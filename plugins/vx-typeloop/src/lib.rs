//! `vx_typeloop`: the type loop of the Khronos conformance tests for user nodes
//! (`UserNode.testUserKernel`, `testUserKernelObjectArray`) as a kernel module. For each of ten
//! data object types, each meta mode (output meta from the input as exemplar, or attribute by
//! attribute) and each local-data mode (none, framework-allocated, kernel-allocated), a kernel
//! `typeloop.<type>.<ref|attr>.<none|framework|kernel>` copies its input to its output through the
//! SDK's typed views; `typeloop.objarray.<type>.<ref|attr>` does the same inside object arrays.
//! Every callback is counted per kernel; `typeloop.counts` reports a kernel's counts (validate,
//! init, deinit, process, whether init's and deinit's local-data sets were accepted) into a U32
//! array, so a test reads them through the public API. `across.rs` adds kernels for what else
//! crosses the ABI: valid-rectangle functions and a convolution's scale.

use std::sync::atomic::{AtomicU32, Ordering::SeqCst};

use vx_plugin_abi::kernel_record::inventory;
use vx_plugin_abi::module_abi::{AbiError, AbiResult, Host, KernelAttr, KernelDesc, Lifecycle, Processor, Validator};
use vx_plugin_abi::module_api::{ProcessFunction, ValidateFunction, guard, process_trampoline, validate_trampoline};
use vx_plugin_abi::views::{
    Array, Convolution, Distribution, Image, Lut, Matrix, ParamView, Pyramid, RawImage, Remap, Scalar, Threshold,
};
use vx_plugin_abi::wire::{attribute as at, data_type as dt, direction, param_state, scalar_type as st};
use vx_plugin_abi::{ImageFormat, KernelRecord, ObjectMeta, ParamPath, Status, user_kernel};

vx_plugin_abi::vx_module!(name = "vx_typeloop");

mod across;

const IMAGE: u8 = 0;
const ARRAY: u8 = 1;
const PYRAMID: u8 = 2;
const SCALAR: u8 = 3;
const DISTRIBUTION: u8 = 4;
const MATRIX: u8 = 5;
const THRESHOLD: u8 = 6;
const LUT: u8 = 7;
const REMAP: u8 = 8;
const CONVOLUTION: u8 = 9;

const NONE: u8 = 0;
const FRAMEWORK: u8 = 1;
const KERNEL: u8 = 2;

/// Counters per kernel slot: validate, init, deinit, process, init's sets accepted, deinit's.
static COUNTS: [[AtomicU32; 6]; 128] = [const { [const { AtomicU32::new(0) }; 6] }; 128];

const fn slot(kind: u8, from_ref: bool, local: u8, in_array: bool) -> usize {
    kind as usize * 12 + from_ref as usize * 6 + local as usize * 2 + in_array as usize
}

fn bad(msg: impl Into<String>) -> AbiError {
    AbiError::new(Status::InvalidParameters, msg)
}

fn data_type_of(kind: u8) -> u32 {
    [
        dt::IMAGE,
        dt::ARRAY,
        dt::PYRAMID,
        dt::SCALAR,
        dt::DISTRIBUTION,
        dt::MATRIX,
        dt::THRESHOLD,
        dt::LUT,
        dt::REMAP,
        dt::CONVOLUTION,
    ][kind as usize]
}

/// The input's attributes as the conformance test expects them, and the output's attributes one
/// by one (`vxSetMetaFormatAttribute`): code and value bytes.
fn expected(kind: u8, meta: &ObjectMeta) -> Result<Vec<(u32, Vec<u8>)>, AbiError> {
    let u8f = ImageFormat::U8.fourcc();
    let size = |v: usize| (v as u64).to_ne_bytes().to_vec();
    let u32b = |v: u32| v.to_ne_bytes().to_vec();
    let ok = match (kind, meta) {
        (IMAGE, ObjectMeta::Image(vx_plugin_abi::kinds::image::Wire { format, width: 128, height: 128 }))
            if *format == u8f =>
        {
            vec![(at::IMAGE_FORMAT, u32b(u8f)), (at::IMAGE_WIDTH, u32b(128)), (at::IMAGE_HEIGHT, u32b(128))]
        }
        (ARRAY, ObjectMeta::Array(vx_plugin_abi::kinds::array::Wire { item_type: st::UINT8, capacity: 20, .. })) => {
            vec![(at::ARRAY_ITEMTYPE, u32b(st::UINT8)), (at::ARRAY_CAPACITY, size(20))]
        }
        (
            PYRAMID,
            ObjectMeta::Pyramid(vx_plugin_abi::kinds::pyramid::Wire {
                levels: 8,
                scale,
                width: 128,
                height: 128,
                format,
            }),
        ) if *scale == 0.5 && *format == u8f => {
            vec![
                (at::PYRAMID_FORMAT, u32b(u8f)),
                (at::PYRAMID_WIDTH, u32b(128)),
                (at::PYRAMID_HEIGHT, u32b(128)),
                (at::PYRAMID_LEVELS, size(8)),
                (at::PYRAMID_SCALE, 0.5f32.to_ne_bytes().to_vec()),
            ]
        }
        (SCALAR, ObjectMeta::Scalar(vx_plugin_abi::kinds::scalar::Wire { scalar_type: st::UINT8, .. })) => {
            vec![(at::SCALAR_TYPE, u32b(st::UINT8))]
        }
        (
            DISTRIBUTION,
            ObjectMeta::Distribution(vx_plugin_abi::kinds::distribution::Wire {
                bins: 36, offset: 0, range: 360, ..
            }),
        ) => vec![
            (at::DISTRIBUTION_BINS, size(36)),
            (at::DISTRIBUTION_OFFSET, 0i32.to_ne_bytes().to_vec()),
            (at::DISTRIBUTION_RANGE, u32b(360)),
        ],
        (
            MATRIX,
            ObjectMeta::Matrix(vx_plugin_abi::kinds::matrix::Wire { element: st::UINT8, rows: 5, columns: 5, .. }),
        ) => {
            vec![(at::MATRIX_TYPE, u32b(st::UINT8)), (at::MATRIX_ROWS, size(5)), (at::MATRIX_COLUMNS, size(5))]
        }
        (THRESHOLD, ObjectMeta::Threshold(vx_plugin_abi::kinds::threshold::Wire { threshold_type, .. }))
            if *threshold_type == vx_plugin_abi::wire::threshold_type::BINARY =>
        {
            vec![(at::THRESHOLD_TYPE, u32b(*threshold_type))]
        }
        (LUT, ObjectMeta::Lut(vx_plugin_abi::kinds::lut::Wire { element: st::UINT8, count: 100, .. })) => {
            vec![(at::LUT_TYPE, u32b(st::UINT8)), (at::LUT_COUNT, size(100))]
        }
        (
            REMAP,
            ObjectMeta::Remap(vx_plugin_abi::kinds::remap::Wire {
                source_width: 128,
                source_height: 128,
                destination_width: 256,
                destination_height: 256,
            }),
        ) => vec![
            (at::REMAP_SOURCE_WIDTH, u32b(128)),
            (at::REMAP_SOURCE_HEIGHT, u32b(128)),
            (at::REMAP_DESTINATION_WIDTH, u32b(256)),
            (at::REMAP_DESTINATION_HEIGHT, u32b(256)),
        ],
        (CONVOLUTION, ObjectMeta::Convolution(vx_plugin_abi::kinds::convolution::Wire { columns: 5, rows: 3, .. })) => {
            vec![(at::CONVOLUTION_COLUMNS, size(5)), (at::CONVOLUTION_ROWS, size(3))]
        }
        (k, m) => return Err(bad(format!("kernel of kind {k}: unexpected input {m:?}"))),
    };
    Ok(ok)
}

/// One conformance kernel.
struct Case<const KIND: u8, const FROM_REF: bool, const LOCAL: u8, const IN_ARRAY: bool>;

impl<const KIND: u8, const FROM_REF: bool, const LOCAL: u8, const IN_ARRAY: bool>
    Case<KIND, FROM_REF, LOCAL, IN_ARRAY>
{
    const SLOT: usize = slot(KIND, FROM_REF, LOCAL, IN_ARRAY);

    fn count(i: usize) {
        COUNTS[Self::SLOT][i].fetch_add(1, SeqCst);
    }

    fn register(api: &Host, name: &'static str) -> Result<(), AbiError> {
        let desc = KernelDesc::user(name, 0, 2, validate_trampoline::<Self>, process_trampoline::<Self>)
            .with_lifecycle(Some(Self::init), Some(Self::deinit));
        let k = api.add_kernel(&desc)?;
        let t = if IN_ARRAY { dt::OBJECT_ARRAY } else { data_type_of(KIND) };
        api.add_parameter(k, 0, direction::INPUT, t, param_state::REQUIRED)?;
        api.add_parameter(k, 1, direction::OUTPUT, t, param_state::REQUIRED)?;
        if LOCAL == FRAMEWORK {
            api.set_attribute(k, KernelAttr::LocalDataSize(10))?;
        }
        api.finalize(k)
    }

    extern "C" fn init(l: &Lifecycle) -> AbiResult<()> {
        guard("init", || {
            Self::count(1);
            let (size, ptr) = if LOCAL == KERNEL { (10, Box::into_raw(Box::new([0u8; 10])) as usize) } else { (0, 0) };
            let a = l.set_local_data_size(size).is_ok();
            let b = l.set_local_data_ptr(ptr).is_ok();
            COUNTS[Self::SLOT][4].store((a && b) as u32, SeqCst);
            Ok(())
        })
    }

    extern "C" fn deinit(l: &Lifecycle) -> AbiResult<()> {
        guard("deinit", || {
            Self::count(2);
            let d = l.local_data();
            if LOCAL == KERNEL && d.ptr != 0 {
                // SAFETY: init leaked exactly this Box<[u8; 10]> and set it as the pointer; the
                // framework never frees a kernel-set pointer, so it is reclaimed once, here.
                drop(unsafe { Box::from_raw(d.ptr as *mut [u8; 10]) });
            }
            let a = l.set_local_data_size(0).is_ok();
            let b = l.set_local_data_ptr(0).is_ok();
            COUNTS[Self::SLOT][5].store((a && b) as u32, SeqCst);
            Ok(())
        })
    }
}

impl<const KIND: u8, const FROM_REF: bool, const LOCAL: u8, const IN_ARRAY: bool> ValidateFunction
    for Case<KIND, FROM_REF, LOCAL, IN_ARRAY>
{
    fn validate(v: &Validator) -> Result<(), AbiError> {
        Self::count(0);
        let input = v.meta(0)?;
        if IN_ARRAY {
            let want = data_type_of(KIND);
            let item = v.meta_at(ParamPath::param(0).item(0))?;
            match (&input, v.meta(1)?) {
                (
                    ObjectMeta::ObjectArray(vx_plugin_abi::kinds::object_array::Wire { item_type, count: 20 }),
                    ObjectMeta::ObjectArray(vx_plugin_abi::kinds::object_array::Wire { item_type: o, .. }),
                ) if *item_type == want && o == want => {
                    expected(KIND, &item)?;
                }
                (i, o) => return Err(bad(format!("unexpected object arrays {i:?} / {o:?}"))),
            }
            return if FROM_REF {
                v.set_output_meta(1, &input)
            } else {
                v.set_output_attribute(1, at::OBJECT_ARRAY_ITEMTYPE, &want)?;
                v.set_output_attribute(1, at::OBJECT_ARRAY_NUMITEMS, &20usize)
            };
        }
        let attrs = expected(KIND, &input)?;
        if FROM_REF {
            return v.set_output_meta(1, &input);
        }
        for (code, bytes) in attrs {
            v.set_output_attribute_bytes(1, code, &bytes)?;
        }
        Ok(())
    }
}

fn copy_image(a: &Image<'_, u8>, b: &mut Image<'_, u8>) {
    for y in 0..a.height() {
        b.row_mut(y).copy_from_slice(a.row(y));
    }
}

/// Copy the object at `src` to the object at `dst` through the typed views.
fn copy(kind: u8, p: &Processor, src: ParamPath, dst: ParamPath) -> Result<(), AbiError> {
    fn pair<'a, V: ParamView<'a>>(p: &'a Processor, s: ParamPath, d: ParamPath) -> Result<(V, V), AbiError> {
        Ok((V::map(p, s, false)?, V::map(p, d, true)?))
    }
    match kind {
        IMAGE => {
            let (a, mut b) = pair::<Image<u8>>(p, src, dst)?;
            copy_image(&a, &mut b);
        }
        ARRAY => {
            let (a, mut b) = pair::<Array<u8>>(p, src, dst)?;
            b.truncate(0)?;
            b.extend(&a.items()?)?;
        }
        PYRAMID => {
            let (a, b) = pair::<Pyramid<u8>>(p, src, dst)?;
            for l in 0..a.levels() {
                copy_image(&a.level(l)?, &mut b.level(l)?);
            }
        }
        SCALAR => {
            let (a, mut b) = pair::<Scalar<u8>>(p, src, dst)?;
            b.set(a.get())?;
        }
        DISTRIBUTION => {
            let (a, mut b) = pair::<Distribution>(p, src, dst)?;
            b.as_mut_slice().copy_from_slice(a.as_slice());
        }
        MATRIX => {
            let (a, mut b) = pair::<Matrix<u8>>(p, src, dst)?;
            b.as_mut_slice().copy_from_slice(a.as_slice());
        }
        THRESHOLD => {
            let (a, mut b) = pair::<Threshold>(p, src, dst)?;
            b.set_values(a.values())?;
        }
        LUT => {
            let (a, mut b) = pair::<Lut<u8>>(p, src, dst)?;
            b.as_mut_slice().copy_from_slice(a.as_slice());
        }
        REMAP => {
            let (a, mut b) = pair::<Remap>(p, src, dst)?;
            b.as_mut_slice().copy_from_slice(a.as_slice());
        }
        CONVOLUTION => {
            let (a, mut b) = pair::<Convolution>(p, src, dst)?;
            b.as_mut_slice().copy_from_slice(a.as_slice());
        }
        other => return Err(bad(format!("no kind {other}"))),
    }
    Ok(())
}

impl<const KIND: u8, const FROM_REF: bool, const LOCAL: u8, const IN_ARRAY: bool> ProcessFunction
    for Case<KIND, FROM_REF, LOCAL, IN_ARRAY>
{
    fn process(p: &Processor) -> Result<(), AbiError> {
        Self::count(3);
        let (src, dst) = (ParamPath::param(0), ParamPath::param(1));
        if !IN_ARRAY {
            return copy(KIND, p, src, dst);
        }
        let items = match p.meta_at(src)? {
            ObjectMeta::ObjectArray(vx_plugin_abi::kinds::object_array::Wire { count, .. }) => count as u32,
            other => return Err(bad(format!("not an object array: {other:?}"))),
        };
        (0..items).try_for_each(|i| copy(KIND, p, src.item(i), dst.item(i)))
    }
}

macro_rules! cases {
    ($($kind:ident $name:literal),*) => {$(
        cases!(@one $kind, $name, true, "ref");
        cases!(@one $kind, $name, false, "attr");
    )*};
    (@one $kind:ident, $name:literal, $from_ref:literal, $mode:literal) => {
        cases!(@local $kind, $name, $from_ref, $mode, NONE, "none");
        cases!(@local $kind, $name, $from_ref, $mode, FRAMEWORK, "framework");
        cases!(@local $kind, $name, $from_ref, $mode, KERNEL, "kernel");
        inventory::submit! {
            KernelRecord {
                name: concat!("typeloop.objarray.", $name, ".", $mode),
                register: |api| Case::<$kind, $from_ref, NONE, true>::register(api, concat!("typeloop.objarray.", $name, ".", $mode)),
            }
        }
    };
    (@local $kind:ident, $name:literal, $from_ref:literal, $mode:literal, $local:ident, $lname:literal) => {
        inventory::submit! {
            KernelRecord {
                name: concat!("typeloop.", $name, ".", $mode, ".", $lname),
                register: |api| Case::<$kind, $from_ref, $local, false>::register(
                    api, concat!("typeloop.", $name, ".", $mode, ".", $lname)),
            }
        }
    };
}

cases!(IMAGE "image", ARRAY "array", PYRAMID "pyramid", SCALAR "scalar", DISTRIBUTION "distribution",
    MATRIX "matrix", THRESHOLD "threshold", LUT "lut", REMAP "remap", CONVOLUTION "convolution");

/// `typeloop.counts`: the counters of the kernel with this slot (`kind * 12 + from_ref * 6 +
/// local * 2 + in_array`, kinds in the order of the constants above), into `out` (6 U32).
#[user_kernel(name = "typeloop.counts", validate = counts_validate)]
fn counts(slot: u32, out: &mut Array<u32>) -> Result<(), AbiError> {
    let c = COUNTS.get(slot as usize).ok_or_else(|| bad(format!("no slot {slot}")))?;
    out.truncate(0)?;
    out.extend(&c.iter().map(|a| a.load(SeqCst)).collect::<Vec<u32>>())
}

fn counts_validate(v: &Validator) -> Result<(), AbiError> {
    v.set_output_meta(
        1,
        &ObjectMeta::Array(vx_plugin_abi::kinds::array::Wire {
            item_type: st::UINT32,
            item_size: 4,
            capacity: 6,
            num_items: 0,
        }),
    )
}

/// `typeloop.raw_image.copy`: a raw image of 16-bit exposures copied through the SDK's view, meta
/// rows as they are and each pixel plus 1; the output's meta is the input's (the view's exemplar).
#[user_kernel(name = "typeloop.raw_image.copy")]
fn raw_image_copy(src: &RawImage<u16>, dst: &mut RawImage<u16>) -> Result<(), AbiError> {
    for e in 0..src.num_exposures() {
        let x = *src.layout().exposure(e).ok_or_else(|| bad("no such exposure"))?;
        for r in 0..x.meta_before.rows as usize {
            dst.meta_before_mut(e, r).copy_from_slice(src.meta_before(e, r));
        }
        for y in 0..src.height() as usize {
            for (d, s) in dst.row_mut(e, y).iter_mut().zip(src.row(e, y)) {
                *d = s.wrapping_add(1);
            }
        }
        for r in 0..x.meta_after.rows as usize {
            dst.meta_after_mut(e, r).copy_from_slice(src.meta_after(e, r));
        }
    }
    Ok(())
}
