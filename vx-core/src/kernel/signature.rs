//! A kernel's signature and attributes: parameters (direction, type, state), the settable
//! attributes of `vxSetKernelAttribute` (tiling ones included), alias hints, and their checks.

use vx_plugin_abi::{BorderMode, Neighborhood, TileBlockSize};

use crate::data::types::{DataType, Direction, ParamState};
use crate::error::{Error, ErrorKind, Result};

/// `VX_MAX_KERNEL_NAME`: kernel names are shorter than this many bytes.
pub const MAX_KERNEL_NAME: usize = 256;
/// Most parameters a kernel may declare.
pub const MAX_KERNEL_PARAMETERS: u32 = 64;

/// A parameter of a kernel's signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamSpec {
    /// Input or output.
    pub direction: Direction,
    /// The data object type the parameter takes.
    pub data_type: DataType,
    /// Required or optional.
    pub state: ParamState,
}

/// What a kernel says about itself for tools (`vx inspect`): a one-line description and, per
/// parameter, a name and the element it takes (pixel or scalar type). Informational only.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelDocs {
    /// A short description (the first paragraph of the kernel's doc comment), if it has one.
    pub summary: Option<String>,
    /// Per parameter index: its name (the kernel function's argument name for macro kernels).
    pub param_names: Vec<Option<String>>,
    /// Per parameter index: the element it takes (`U8`, `S16`, `views::Matrix<f32>`, …).
    pub param_elements: Vec<Option<String>>,
}

/// The settable kernel attributes (`vx_kernel_attribute_e` and the tiling extension's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelAttribute {
    /// `VX_KERNEL_LOCAL_DATA_SIZE`: bytes of node local data the framework allocates per node.
    LocalDataSize(usize),
    /// `VX_KERNEL_INPUT_NEIGHBORHOOD` (tiling kernels).
    InputNeighborhood(Neighborhood),
    /// `VX_KERNEL_OUTPUT_TILE_BLOCK_SIZE` (tiling kernels).
    OutputTileBlockSize(TileBlockSize),
    /// `VX_KERNEL_BORDER` (tiling kernels).
    Border(BorderMode),
    /// `VX_KERNEL_TILE_MEMORY_SIZE`: bytes per tile block (tiling kernels).
    TileMemorySize(usize),
}

/// `vx_buffer_aliasing_processing_type_e`: how a kernel would touch an aliased buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AliasKind {
    /// Every element is read and written (e.g. NOT).
    Dense,
    /// Only some elements are written (e.g. a threshold that leaves most pixels).
    Sparse,
}

/// A `vxAliasParameterIndexHint` recorded on a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AliasHint {
    /// One parameter of the pair.
    pub a: u32,
    /// The other parameter of the pair.
    pub b: u32,
    /// How the kernel would touch the shared buffer.
    pub kind: AliasKind,
}

/// The attribute values of a kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelAttributes {
    /// `VX_KERNEL_LOCAL_DATA_SIZE`.
    pub local_data_size: usize,
    /// `VX_KERNEL_INPUT_NEIGHBORHOOD`.
    pub neighborhood: Neighborhood,
    /// `VX_KERNEL_OUTPUT_TILE_BLOCK_SIZE`.
    pub block_size: TileBlockSize,
    /// `VX_KERNEL_BORDER`.
    pub border: BorderMode,
    /// `VX_KERNEL_TILE_MEMORY_SIZE`.
    pub tile_memory_size: usize,
}

/// A neighborhood is `(left <= 0, right >= 0, top <= 0, bottom >= 0)`.
pub(crate) fn check_neighborhood(nb: Neighborhood) -> Result<Neighborhood> {
    if nb.left > 0 || nb.right < 0 || nb.top > 0 || nb.bottom < 0 {
        return Err(Error::new(ErrorKind::InvalidValue, "invalid input neighborhood (left, right, top, bottom)")
            .expected_found(
                "left <= 0, right >= 0, top <= 0, bottom >= 0",
                format!("({}, {}, {}, {})", nb.left, nb.right, nb.top, nb.bottom),
            ));
    }
    Ok(nb)
}

/// Tiling kernels support the `Undefined` and `Self_` border modes only.
pub(crate) fn check_tiling_border(bm: BorderMode) -> Result<BorderMode> {
    match bm {
        BorderMode::Undefined | BorderMode::Self_ => Ok(bm),
        other => {
            Err(Error::new(ErrorKind::NotSupported, "tiling kernels support the Undefined and Self_ border modes only")
                .expected_found("Undefined or Self_", format!("{other:?}")))
        }
    }
}

/// Parameter direction as `vxAddParameterToKernel` accepts it (OpenVX's three values; only
/// `Input` and `Output` are allowed for user kernels).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamDirection {
    /// `VX_INPUT`.
    Input,
    /// `VX_OUTPUT`.
    Output,
    /// `VX_BIDIRECTIONAL` (refused for user kernels).
    Bidirectional,
}
