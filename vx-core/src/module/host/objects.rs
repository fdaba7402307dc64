//! Every data object across the module ABI: which object a [`ParamPath`] names (a parameter, an
//! object-array item, a pyramid level) and its meta data as the wire carries it ([`wire_meta`]).
//! Each type's wire form, and its attributes by OpenVX code, are in its own file
//! (`ObjectKind::{to_wire, from_wire, attr_by_code}`), reached through `data/kinds/mod.rs`.

use vx_plugin_abi::object_meta::{ObjectMeta as WireMeta, PATH_NONE, ParamPath};

use crate::data::image::Image;
use crate::data::kinds::AnyObject;
use crate::data::reference::{DataObject, Reference};
use crate::data::types::DataType;
use crate::error::{Error, ErrorKind, Result};

pub(super) use crate::data::wire::scalar_bits;

/// The object a path names.
#[derive(Clone, Copy)]
pub(super) enum Target<'b> {
    /// A parameter or an object-array item.
    Ref(&'b Reference),
    /// A pyramid level.
    Level(&'b Image),
}

impl<'b> Target<'b> {
    /// The image, if the object is one (a parameter, an item or a level).
    pub(super) fn image(self) -> Option<&'b Image> {
        match self {
            Target::Ref(r) => r.as_image(),
            Target::Level(i) => Some(i),
        }
    }
    /// The reference, if the object is not a pyramid level.
    pub(super) fn reference(self) -> Option<&'b Reference> {
        match self {
            Target::Ref(r) => Some(r),
            Target::Level(_) => None,
        }
    }
    pub(super) fn data_type(self) -> DataType {
        match self {
            Target::Ref(r) => r.data_type(),
            Target::Level(_) => DataType::Image,
        }
    }
}

/// The object at `path`, or `None` for an unset optional parameter.
pub(super) fn resolve(params: &[Option<Reference>], path: ParamPath) -> Result<Option<Target<'_>>> {
    let at = |e: Error| e.at_parameter(path.index);
    let slot = params.get(path.index as usize).ok_or_else(|| {
        Error::new(ErrorKind::InvalidParameters, "no such parameter")
            .expected_found(format!("index < {}", params.len()), path.index)
    })?;
    let Some(mut r) = slot.as_ref() else { return Ok(None) };
    if path.item != PATH_NONE {
        let Reference::ObjectArray(a) = r else {
            return Err(at(Error::new(
                ErrorKind::InvalidParameters,
                format!("{path}: the parameter is not an object array"),
            )
            .found(r.data_type())));
        };
        r = a.item_ref(path.item as usize).map_err(at)?;
    }
    if path.level == PATH_NONE {
        return Ok(Some(Target::Ref(r)));
    }
    let Reference::Pyramid(p) = r else {
        return Err(at(Error::new(ErrorKind::InvalidParameters, format!("{path}: the object is not a pyramid"))
            .found(r.data_type())));
    };
    Ok(Some(Target::Level(p.level_ref(path.level as usize).map_err(at)?)))
}

/// The object at `path`, which must be set and of type `want` (named in the error).
pub(super) fn target(params: &[Option<Reference>], path: ParamPath, want: DataType) -> Result<Target<'_>> {
    let t = resolve(params, path)?.ok_or_else(|| {
        Error::new(ErrorKind::InvalidParameters, format!("{path} is not set")).at_parameter(path.index)
    })?;
    if t.data_type() != want {
        return Err(Error::new(ErrorKind::InvalidType, format!("{path} is not a {want}"))
            .at_parameter(path.index)
            .expected_found(want, t.data_type()));
    }
    Ok(t)
}

/// The `T` at `path` (not a pyramid level: those are images, see [`target`]).
pub(super) fn get<T: DataObject>(params: &[Option<Reference>], path: ParamPath) -> Result<&T> {
    let t = target(params, path, T::TYPE)?;
    t.reference().and_then(T::from_reference).ok_or_else(|| {
        Error::new(ErrorKind::InvalidType, format!("{path} is not a {}", T::TYPE)).at_parameter(path.index)
    })
}

/// The image at `path` (a parameter, an item, a level).
pub(super) fn image(params: &[Option<Reference>], path: ParamPath) -> Result<&Image> {
    Ok(target(params, path, DataType::Image)?.image().expect("an image target is an image"))
}

/// What the object at `path` is, as the wire says it (values a validator may read included).
pub(super) fn wire_meta(params: &[Option<Reference>], path: ParamPath) -> Result<WireMeta> {
    Ok(match resolve(params, path)? {
        None => WireMeta::Absent,
        Some(Target::Level(i)) => i.to_wire(),
        Some(Target::Ref(r)) => r.any().to_wire(),
    })
}
