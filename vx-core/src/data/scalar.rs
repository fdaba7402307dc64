//! Scalars (`vx_scalar`): one value of any scalar type, read and written with type checks.

use std::sync::Mutex;

use crate::data::kernel_view::KernelView;
use crate::data::kind::{Applied, Handle, ObjectKind, Refusal, kind_names, meta_attributes};
use crate::data::object::{Access, ObjectHeader};
use crate::data::types::{Direction, ScalarPrimitive, ScalarType, ScalarValue};
use crate::data::wire::{AttrValue, code, scalar_bits, scalar_type};
use crate::error::{Error, ErrorKind, Result};
use crate::shared::{AsContext, VirtualScope};
use crate::support::sync::lock;
use vx_plugin_abi::kinds::scalar::Wire;

kind_names! {
    kind: ScalarKind, meta: ScalarMeta, attr: ScalarAttr, partial: ScalarPartial;
    exports: Scalar, ScalarAttr, ScalarMeta
}

/// The meta data of a scalar (`VX_SCALAR_TYPE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ScalarMeta {
    /// `VX_SCALAR_TYPE`.
    pub scalar_type: ScalarType,
}

/// The state behind a Scalar handle, next to its header.
pub struct ScalarBody {
    value: Mutex<ScalarValue>,
}

/// A scalar handle (`vxCreateScalar`). Its type is fixed at creation.
pub type Scalar = Handle<ScalarKind>;

impl crate::data::reference::Reference {
    /// The scalar, if this is one.
    pub fn as_scalar(&self) -> Option<&Scalar> {
        self.get()
    }
}

/// The [`ObjectKind`] of Scalar.
pub struct ScalarKind;

impl std::fmt::Display for ScalarMeta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "scalar {}", self.scalar_type)
    }
}

meta_attributes! {
    /// One meta-format attribute of a scalar.
    ScalarAttr, ScalarPartial for ScalarMeta {
        /// `VX_SCALAR_TYPE`.
        Type(ScalarType) => scalar_type @ SCALAR_TYPE: AttrValue::scalar_type,
    }
}

impl ObjectKind for ScalarKind {
    type Wire = Wire;
    const NAME: &'static str = "Scalar";
    const TILING_DIRECTIONS: &'static [Direction] = &[Direction::Input];
    type Meta = ScalarMeta;
    type Attr = ScalarAttr;
    type Partial = ScalarPartial;
    type Body = ScalarBody;
    fn fmt_details(h: &Scalar, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", h.read())
    }
    fn meta(h: &Scalar) -> ScalarMeta {
        ScalarMeta { scalar_type: h.scalar_type() }
    }
    /// Scalars start at zero.
    fn build(header: ObjectHeader, m: &ScalarMeta) -> Result<Scalar> {
        Ok(Scalar::with_header(header, ScalarValue::zero(m.scalar_type)))
    }
    fn apply(h: &Scalar, w: &ScalarMeta) -> std::result::Result<Applied, Refusal> {
        if h.scalar_type() != w.scalar_type {
            return Err(Refusal::Mismatch(ErrorKind::InvalidType));
        }
        Ok(Applied::Unchanged)
    }
    fn exemplar(p: &mut ScalarPartial, m: &ScalarMeta) {
        *p = ScalarPartial::of(m);
    }
    fn resolve(p: &ScalarPartial) -> std::result::Result<ScalarMeta, &'static str> {
        Ok(ScalarMeta { scalar_type: p.scalar_type.ok_or("scalar type")? })
    }
    fn to_wire(h: &Scalar) -> Wire {
        let v = h.read();
        Wire { scalar_type: code(v.scalar_type()), value: scalar_bits(v) }
    }
    fn from_wire(w: &Wire) -> Result<ScalarMeta> {
        let Wire { scalar_type: t, .. } = w;
        Ok(ScalarMeta { scalar_type: scalar_type(*t)? })
    }
}

impl Scalar {
    /// A scalar holding `value`; its type is the value's.
    pub fn new(ctx: &impl AsContext, value: ScalarValue) -> Result<Scalar> {
        Ok(Scalar::with_header(ObjectHeader::new(ctx, "scalar", None)?, value))
    }

    /// A scalar under a given header (an object array's item).
    pub(super) fn with_header(header: ObjectHeader, value: ScalarValue) -> Scalar {
        Handle::from_body(header, ScalarBody { value: Mutex::new(value) })
    }

    /// `vxCreateVirtualScalar`: a scalar of `scalar_type` (zero until a node writes it) that only
    /// the kernels of `graph` read and write; the application's reads and writes are refused
    /// (`OptimizedAway`), as for every virtual object.
    pub fn new_virtual(graph: &impl VirtualScope, scalar_type: ScalarType) -> Result<Scalar> {
        let header = ObjectHeader::new(graph, "virtual-scalar", Some(graph.scope_id()))?;
        Ok(Scalar::with_header(header, ScalarValue::zero(scalar_type)))
    }

    /// `VX_SCALAR_TYPE`.
    pub fn scalar_type(&self) -> ScalarType {
        self.read().scalar_type()
    }

    /// The value, whoever asks (the host's own reads: messages, the module ABI, tiling).
    pub(crate) fn read(&self) -> ScalarValue {
        *lock(&self.obj.body.value)
    }

    fn value_as(&self, access: Access) -> Result<ScalarValue> {
        self.obj.header.check_access(access)?;
        Ok(self.read())
    }

    /// Replace the value as `access` may; its type must be the scalar's.
    pub(crate) fn write(&self, value: ScalarValue, access: Access) -> Result<()> {
        self.obj.header.check_access(access)?;
        let mut v = lock(&self.obj.body.value);
        if v.scalar_type() != value.scalar_type() {
            return Err(Error::new(ErrorKind::InvalidType, "the value's type is not the scalar's")
                .on_object(&self.obj.header.name())
                .expected_found(v.scalar_type(), value.scalar_type()));
        }
        *v = value;
        Ok(())
    }

    fn get_as<T: ScalarPrimitive>(&self, access: Access) -> Result<T> {
        let v = self.value_as(access)?;
        T::from_value(v).ok_or_else(|| {
            Error::new(ErrorKind::InvalidType, "the scalar has another type")
                .on_object(&self.name())
                .expected_found(T::TYPE, v.scalar_type())
        })
    }

    /// `vxCopyScalar` (read): the current value (`OptimizedAway` for a virtual scalar).
    pub fn value(&self) -> Result<ScalarValue> {
        self.value_as(Access::Application)
    }

    /// `vxCopyScalar` (write): replace the value; its type must be the scalar's.
    pub fn set_value(&self, value: ScalarValue) -> Result<()> {
        self.write(value, Access::Application)
    }

    /// Typed read: `scalar.get::<u8>()` on a `Uint8` scalar.
    pub fn get<T: ScalarPrimitive>(&self) -> Result<T> {
        self.get_as(Access::Application)
    }

    /// Typed write.
    pub fn set<T: ScalarPrimitive>(&self, value: T) -> Result<()> {
        self.set_value(value.into_value())
    }

    /// Rename the object.
    pub fn set_name(&self, name: &str) {
        self.obj.header.set_name(name)
    }
}

impl KernelView<'_, Scalar> {
    /// The current value (virtual scalars too).
    pub fn value(&self) -> Result<ScalarValue> {
        self.object.value_as(Access::Kernel)
    }
    /// Replace the value; its type must be the scalar's.
    pub fn set_value(&self, value: ScalarValue) -> Result<()> {
        self.object.write(value, Access::Kernel)
    }
    /// Typed read.
    pub fn get<T: ScalarPrimitive>(&self) -> Result<T> {
        self.object.get_as(Access::Kernel)
    }
    /// Typed write.
    pub fn set<T: ScalarPrimitive>(&self, value: T) -> Result<()> {
        self.set_value(value.into_value())
    }
}
