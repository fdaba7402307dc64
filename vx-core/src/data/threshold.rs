//! Thresholds (`vx_threshold`): binary (one value) or range (lower, upper), for images of an input
//! format, with the true and false values written to an output format
//! (`vxCopyThresholdValue`, `vxCopyThresholdRange`, `vxCopyThresholdOutput`).

use std::sync::Mutex;

use vx_plugin_abi::ImageFormat;

use crate::data::kernel_view::KernelView;
use crate::data::kind::{Applied, Handle, ObjectKind, Refusal, kind_names, meta_attributes};
use crate::data::object::{Access, ObjectHeader};
use crate::data::types::ScalarType;
use crate::data::wire::{AttrValue, format};
use crate::error::{Error, ErrorKind, Result};
use crate::shared::{AsContext, VirtualScope};
use crate::support::sync::lock;
use vx_plugin_abi::kinds::threshold::Wire;
use vx_plugin_abi::wire::threshold_type;

kind_names! {
    kind: ThresholdKind, meta: ThresholdMeta, attr: ThresholdAttr, partial: ThresholdPartial;
    exports: Threshold, ThresholdAttr, ThresholdMeta, ThresholdType, ThresholdValues
}

/// `VX_THRESHOLD_TYPE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ThresholdType {
    /// `VX_THRESHOLD_TYPE_BINARY`: `value > threshold`.
    Binary,
    /// `VX_THRESHOLD_TYPE_RANGE`: `lower <= value <= upper`.
    Range,
}

/// The meta data of a threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ThresholdMeta {
    /// `VX_THRESHOLD_TYPE`.
    pub threshold_type: ThresholdType,
    /// `VX_THRESHOLD_INPUT_FORMAT`.
    pub input_format: ImageFormat,
    /// `VX_THRESHOLD_OUTPUT_FORMAT`.
    pub output_format: ImageFormat,
}

/// The values of a threshold (pixel values as `i64`, enough for every single-channel format).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThresholdValues {
    /// `VX_THRESHOLD_THRESHOLD_VALUE` (binary).
    pub value: i64,
    /// `VX_THRESHOLD_THRESHOLD_LOWER` (range).
    pub lower: i64,
    /// `VX_THRESHOLD_THRESHOLD_UPPER` (range).
    pub upper: i64,
    /// `VX_THRESHOLD_TRUE_VALUE`.
    pub true_value: i64,
    /// `VX_THRESHOLD_FALSE_VALUE`.
    pub false_value: i64,
}

/// The state behind a Threshold handle, next to its header.
pub struct ThresholdBody {
    meta: ThresholdMeta,
    values: Mutex<ThresholdValues>,
}

/// A threshold handle.
pub type Threshold = Handle<ThresholdKind>;

/// The [`ObjectKind`] of Threshold.
pub struct ThresholdKind;

impl std::fmt::Display for ThresholdMeta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "threshold {:?} {} -> {}", self.threshold_type, self.input_format, self.output_format)
    }
}

meta_attributes! {
    /// One meta-format attribute of a threshold.
    ThresholdAttr, ThresholdPartial for ThresholdMeta {
        /// `VX_THRESHOLD_TYPE`.
        Type(ThresholdType) => threshold_type @ THRESHOLD_TYPE: |v: &AttrValue<'_>| v.u32().and_then(threshold_of),
        /// `VX_THRESHOLD_INPUT_FORMAT` (unset: any).
        InputFormat(ImageFormat) => input_format @ THRESHOLD_INPUT_FORMAT: AttrValue::format,
        /// `VX_THRESHOLD_OUTPUT_FORMAT` (unset: any).
        OutputFormat(ImageFormat) => output_format @ THRESHOLD_OUTPUT_FORMAT: AttrValue::format,
    }
}

impl ObjectKind for ThresholdKind {
    type Wire = Wire;
    const NAME: &'static str = "Threshold";
    type Meta = ThresholdMeta;
    type Attr = ThresholdAttr;
    type Partial = ThresholdPartial;
    type Body = ThresholdBody;
    fn fmt_details(h: &Threshold, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}, {:?}", h.obj.body.meta, h.values_unchecked())
    }
    fn meta(h: &Threshold) -> ThresholdMeta {
        h.meta()
    }
    fn build(header: ObjectHeader, m: &ThresholdMeta) -> Result<Threshold> {
        Threshold::with_header(header, *m)
    }
    /// Formats left unset ([`ImageFormat::Virtual`]) match any.
    fn apply(h: &Threshold, w: &ThresholdMeta) -> std::result::Result<Applied, Refusal> {
        let m = h.meta();
        if m.threshold_type != w.threshold_type {
            return Err(Refusal::Mismatch(ErrorKind::InvalidType));
        }
        let differs = |want: ImageFormat, have: ImageFormat| want != ImageFormat::Virtual && want != have;
        if differs(w.input_format, m.input_format) || differs(w.output_format, m.output_format) {
            return Err(Refusal::Mismatch(ErrorKind::InvalidFormat));
        }
        Ok(Applied::Unchanged)
    }
    fn exemplar(p: &mut ThresholdPartial, m: &ThresholdMeta) {
        *p = ThresholdPartial::of(m);
    }
    fn resolve(p: &ThresholdPartial) -> std::result::Result<ThresholdMeta, &'static str> {
        Ok(ThresholdMeta {
            threshold_type: p.threshold_type.ok_or("threshold type")?,
            input_format: p.input_format.unwrap_or(ImageFormat::Virtual),
            output_format: p.output_format.unwrap_or(ImageFormat::Virtual),
        })
    }
    fn to_wire(h: &Threshold) -> Wire {
        let m = h.meta();
        Wire {
            threshold_type: threshold_code(m.threshold_type),
            input_format: m.input_format.fourcc(),
            output_format: m.output_format.fourcc(),
        }
    }
    fn from_wire(w: &Wire) -> Result<ThresholdMeta> {
        let Wire { threshold_type: t, input_format, output_format } = w;
        Ok(ThresholdMeta {
            threshold_type: threshold_of(*t)?,
            input_format: format(*input_format)?,
            output_format: format(*output_format)?,
        })
    }
}

fn threshold_code(t: ThresholdType) -> u32 {
    match t {
        ThresholdType::Binary => threshold_type::BINARY,
        ThresholdType::Range => threshold_type::RANGE,
    }
}

fn threshold_of(code: u32) -> Result<ThresholdType> {
    match code {
        threshold_type::BINARY => Ok(ThresholdType::Binary),
        threshold_type::RANGE => Ok(ThresholdType::Range),
        other => Err(Error::new(ErrorKind::InvalidType, "unknown threshold type code").found(format!("{other:#x}"))),
    }
}

/// The smallest and largest value of a single-channel format.
fn bounds(format: ImageFormat) -> Option<(i64, i64)> {
    Some(match format {
        ImageFormat::U8 => (0, u8::MAX as i64),
        ImageFormat::U16 => (0, u16::MAX as i64),
        ImageFormat::S16 => (i16::MIN as i64, i16::MAX as i64),
        ImageFormat::U32 => (0, u32::MAX as i64),
        ImageFormat::S32 => (i32::MIN as i64, i32::MAX as i64),
        _ => return None,
    })
}

impl Threshold {
    /// `vxCreateThresholdForImage`: a threshold for images of `input_format` writing
    /// `output_format` (single-channel formats). Values 0, true value the output format's maximum,
    /// false value 0.
    pub fn for_image(
        ctx: &impl AsContext,
        threshold_type: ThresholdType,
        input_format: ImageFormat,
        output_format: ImageFormat,
    ) -> Result<Threshold> {
        let meta = ThresholdMeta { threshold_type, input_format, output_format };
        Threshold::with_header(ObjectHeader::new(ctx, "threshold", None)?, meta)
    }

    /// `vxCreateThreshold` (OpenVX 1.1): a threshold over values of `data_type` (U8, S16, U16, S32
    /// or U32 images) writing U8.
    pub fn new(ctx: &impl AsContext, threshold_type: ThresholdType, data_type: ScalarType) -> Result<Threshold> {
        let input = match data_type {
            ScalarType::Uint8 => ImageFormat::U8,
            ScalarType::Int16 => ImageFormat::S16,
            ScalarType::Uint16 => ImageFormat::U16,
            ScalarType::Int32 => ImageFormat::S32,
            ScalarType::Uint32 => ImageFormat::U32,
            other => {
                return Err(Error::new(ErrorKind::InvalidType, "a threshold compares pixel values")
                    .expected_found("Uint8, Int16, Uint16, Int32 or Uint32", other));
            }
        };
        Threshold::for_image(ctx, threshold_type, input, ImageFormat::U8)
    }

    /// `vxCreateVirtualThresholdForImage`.
    pub fn new_virtual_for_image(
        graph: &impl VirtualScope,
        threshold_type: ThresholdType,
        input_format: ImageFormat,
        output_format: ImageFormat,
    ) -> Result<Threshold> {
        let meta = ThresholdMeta { threshold_type, input_format, output_format };
        Threshold::with_header(ObjectHeader::new(graph, "virtual-threshold", Some(graph.scope_id()))?, meta)
    }

    pub(super) fn with_header(header: ObjectHeader, meta: ThresholdMeta) -> Result<Threshold> {
        if bounds(meta.input_format).is_none() {
            return Err(Error::new(ErrorKind::InvalidFormat, "a threshold's input format must be single-channel")
                .on_object(&header.name())
                .expected_found("U8, U16, S16, U32 or S32", meta.input_format));
        }
        let Some((_, top)) = bounds(meta.output_format) else {
            return Err(Error::new(ErrorKind::InvalidFormat, "a threshold's output format must be single-channel")
                .on_object(&header.name())
                .expected_found("U8, U16, S16, U32 or S32", meta.output_format));
        };
        let values = ThresholdValues { value: 0, lower: 0, upper: 0, true_value: top, false_value: 0 };
        Ok(Handle::from_body(header, ThresholdBody { meta, values: Mutex::new(values) }))
    }

    /// Every attribute that makes its meta data.
    pub fn meta(&self) -> ThresholdMeta {
        self.obj.body.meta
    }
    /// `VX_THRESHOLD_TYPE`.
    pub fn threshold_type(&self) -> ThresholdType {
        self.obj.body.meta.threshold_type
    }
    /// `VX_THRESHOLD_INPUT_FORMAT`.
    pub fn input_format(&self) -> ImageFormat {
        self.obj.body.meta.input_format
    }
    /// `VX_THRESHOLD_OUTPUT_FORMAT`.
    pub fn output_format(&self) -> ImageFormat {
        self.obj.body.meta.output_format
    }

    fn values_unchecked(&self) -> ThresholdValues {
        *lock(&self.obj.body.values)
    }

    fn values_impl(&self, access: Access) -> Result<ThresholdValues> {
        self.obj.header.check_access(access)?;
        Ok(self.values_unchecked())
    }

    fn check(&self, what: &str, v: i64, format: ImageFormat) -> Result<()> {
        let (lo, hi) = bounds(format).expect("checked at creation");
        if v < lo || v > hi {
            return Err(Error::new(ErrorKind::InvalidValue, format!("the {what} does not fit the format"))
                .on_object(&self.name())
                .expected_found(format!("{lo}..={hi} ({format})"), v));
        }
        Ok(())
    }

    fn update(&self, access: Access, f: impl FnOnce(&mut ThresholdValues)) -> Result<()> {
        self.obj.header.check_access(access)?;
        f(&mut lock(&self.obj.body.values));
        Ok(())
    }

    fn set_value_impl(&self, value: i64, access: Access) -> Result<()> {
        self.check("threshold value", value, self.input_format())?;
        self.update(access, |v| v.value = value)
    }
    fn set_range_impl(&self, lower: i64, upper: i64, access: Access) -> Result<()> {
        self.check("lower bound", lower, self.input_format())?;
        self.check("upper bound", upper, self.input_format())?;
        if lower > upper {
            return Err(Error::new(ErrorKind::InvalidValue, "the lower bound exceeds the upper bound")
                .on_object(&self.name())
                .found(format!("{lower} > {upper}")));
        }
        self.update(access, |v| (v.lower, v.upper) = (lower, upper))
    }
    fn set_output_impl(&self, true_value: i64, false_value: i64, access: Access) -> Result<()> {
        self.check("true value", true_value, self.output_format())?;
        self.check("false value", false_value, self.output_format())?;
        self.update(access, |v| (v.true_value, v.false_value) = (true_value, false_value))
    }

    /// Every value (`vxCopyThresholdValue` / `Range` / `Output`, read).
    pub fn values(&self) -> Result<ThresholdValues> {
        self.values_impl(Access::Application)
    }
    /// `vxCopyThresholdValue` (write): the binary threshold, a value of the input format.
    pub fn set_value(&self, value: i64) -> Result<()> {
        self.set_value_impl(value, Access::Application)
    }
    /// `vxCopyThresholdRange` (write): the range's bounds, values of the input format.
    pub fn set_range(&self, lower: i64, upper: i64) -> Result<()> {
        self.set_range_impl(lower, upper, Access::Application)
    }
    /// `vxCopyThresholdOutput` (write): the values written for true and false, values of the output
    /// format.
    pub fn set_output(&self, true_value: i64, false_value: i64) -> Result<()> {
        self.set_output_impl(true_value, false_value, Access::Application)
    }
}

impl KernelView<'_, Threshold> {
    /// Every value.
    pub fn values(&self) -> Result<ThresholdValues> {
        self.object.values_impl(Access::Kernel)
    }
    /// Set the binary threshold.
    pub fn set_value(&self, value: i64) -> Result<()> {
        self.object.set_value_impl(value, Access::Kernel)
    }
    /// Set the range's bounds.
    pub fn set_range(&self, lower: i64, upper: i64) -> Result<()> {
        self.object.set_range_impl(lower, upper, Access::Kernel)
    }
    /// Set the true and false values.
    pub fn set_output(&self, true_value: i64, false_value: i64) -> Result<()> {
        self.object.set_output_impl(true_value, false_value, Access::Kernel)
    }
}
