//! OpenVX status codes (`vx_status_e`) with their exact numeric values.

use std::fmt;

/// An OpenVX status code. The discriminants are the values of `vx_status_e` in OpenVX 1.2.1, so a
/// status crosses the module boundary as a plain `i32`.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// `VX_SUCCESS`
    Success = 0,
    /// `VX_FAILURE`
    Failure = -1,
    /// `VX_ERROR_NOT_IMPLEMENTED`
    NotImplemented = -2,
    /// `VX_ERROR_NOT_SUPPORTED`
    NotSupported = -3,
    /// `VX_ERROR_NOT_SUFFICIENT`
    NotSufficient = -4,
    /// `VX_ERROR_NOT_ALLOCATED`
    NotAllocated = -5,
    /// `VX_ERROR_NOT_COMPATIBLE`
    NotCompatible = -6,
    /// `VX_ERROR_NO_RESOURCES`
    NoResources = -7,
    /// `VX_ERROR_NO_MEMORY`
    NoMemory = -8,
    /// `VX_ERROR_OPTIMIZED_AWAY`
    OptimizedAway = -9,
    /// `VX_ERROR_INVALID_PARAMETERS`
    InvalidParameters = -10,
    /// `VX_ERROR_INVALID_MODULE`
    InvalidModule = -11,
    /// `VX_ERROR_INVALID_REFERENCE`
    InvalidReference = -12,
    /// `VX_ERROR_INVALID_LINK`
    InvalidLink = -13,
    /// `VX_ERROR_INVALID_FORMAT`
    InvalidFormat = -14,
    /// `VX_ERROR_INVALID_DIMENSION`
    InvalidDimension = -15,
    /// `VX_ERROR_INVALID_VALUE`
    InvalidValue = -16,
    /// `VX_ERROR_INVALID_TYPE`
    InvalidType = -17,
    /// `VX_ERROR_INVALID_GRAPH`
    InvalidGraph = -18,
    /// `VX_ERROR_INVALID_NODE`
    InvalidNode = -19,
    /// `VX_ERROR_INVALID_SCOPE`
    InvalidScope = -20,
    /// `VX_ERROR_GRAPH_SCHEDULED`
    GraphScheduled = -21,
    /// `VX_ERROR_GRAPH_ABANDONED`
    GraphAbandoned = -22,
    /// `VX_ERROR_MULTIPLE_WRITERS`
    MultipleWriters = -23,
    /// `VX_ERROR_REFERENCE_NONZERO`
    ReferenceNonzero = -24,
}

impl Status {
    /// Every status, success first, in the order of `vx_status_e`.
    pub const ALL: [Status; 25] = [
        Status::Success,
        Status::Failure,
        Status::NotImplemented,
        Status::NotSupported,
        Status::NotSufficient,
        Status::NotAllocated,
        Status::NotCompatible,
        Status::NoResources,
        Status::NoMemory,
        Status::OptimizedAway,
        Status::InvalidParameters,
        Status::InvalidModule,
        Status::InvalidReference,
        Status::InvalidLink,
        Status::InvalidFormat,
        Status::InvalidDimension,
        Status::InvalidValue,
        Status::InvalidType,
        Status::InvalidGraph,
        Status::InvalidNode,
        Status::InvalidScope,
        Status::GraphScheduled,
        Status::GraphAbandoned,
        Status::MultipleWriters,
        Status::ReferenceNonzero,
    ];

    /// The raw `vx_status` value.
    pub const fn code(self) -> i32 {
        self as i32
    }

    /// The status with this raw value, if it is one of `vx_status_e`.
    pub fn from_code(code: i32) -> Option<Status> {
        Status::ALL.iter().copied().find(|s| s.code() == code)
    }

    /// The OpenVX C name, e.g. `VX_ERROR_INVALID_FORMAT`.
    pub const fn c_name(self) -> &'static str {
        match self {
            Status::Success => "VX_SUCCESS",
            Status::Failure => "VX_FAILURE",
            Status::NotImplemented => "VX_ERROR_NOT_IMPLEMENTED",
            Status::NotSupported => "VX_ERROR_NOT_SUPPORTED",
            Status::NotSufficient => "VX_ERROR_NOT_SUFFICIENT",
            Status::NotAllocated => "VX_ERROR_NOT_ALLOCATED",
            Status::NotCompatible => "VX_ERROR_NOT_COMPATIBLE",
            Status::NoResources => "VX_ERROR_NO_RESOURCES",
            Status::NoMemory => "VX_ERROR_NO_MEMORY",
            Status::OptimizedAway => "VX_ERROR_OPTIMIZED_AWAY",
            Status::InvalidParameters => "VX_ERROR_INVALID_PARAMETERS",
            Status::InvalidModule => "VX_ERROR_INVALID_MODULE",
            Status::InvalidReference => "VX_ERROR_INVALID_REFERENCE",
            Status::InvalidLink => "VX_ERROR_INVALID_LINK",
            Status::InvalidFormat => "VX_ERROR_INVALID_FORMAT",
            Status::InvalidDimension => "VX_ERROR_INVALID_DIMENSION",
            Status::InvalidValue => "VX_ERROR_INVALID_VALUE",
            Status::InvalidType => "VX_ERROR_INVALID_TYPE",
            Status::InvalidGraph => "VX_ERROR_INVALID_GRAPH",
            Status::InvalidNode => "VX_ERROR_INVALID_NODE",
            Status::InvalidScope => "VX_ERROR_INVALID_SCOPE",
            Status::GraphScheduled => "VX_ERROR_GRAPH_SCHEDULED",
            Status::GraphAbandoned => "VX_ERROR_GRAPH_ABANDONED",
            Status::MultipleWriters => "VX_ERROR_MULTIPLE_WRITERS",
            Status::ReferenceNonzero => "VX_ERROR_REFERENCE_NONZERO",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.c_name(), self.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_vx_status_e() {
        // Values from vx_types.h of OpenVX 1.2.1 (VX_STATUS_MIN = -25 lies just past the last code).
        assert_eq!(Status::Success.code(), 0);
        assert_eq!(Status::Failure.code(), -1);
        assert_eq!(Status::InvalidParameters.code(), -10);
        assert_eq!(Status::InvalidFormat.code(), -14);
        assert_eq!(Status::InvalidGraph.code(), -18);
        assert_eq!(Status::MultipleWriters.code(), -23);
        assert_eq!(Status::ReferenceNonzero.code(), -24);
        for (i, s) in Status::ALL.iter().enumerate() {
            assert_eq!(s.code(), -(i as i32), "{s:?} out of order");
            assert_eq!(Status::from_code(s.code()), Some(*s));
        }
        assert_eq!(Status::from_code(-25), None);
        assert_eq!(Status::from_code(1), None);
    }
}
