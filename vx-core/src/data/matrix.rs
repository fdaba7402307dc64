//! Matrices (`vx_matrix`): `rows × columns` elements of a numeric type, with an origin and the
//! pattern they were made from; copied in and out whole (`vxCopyMatrix`).

use std::sync::Arc;

use crate::data::array::{ArrayItem, ArrayItemType};
use crate::data::blob::{Blob, check_element};
use crate::data::kernel_view::KernelView;
use crate::data::object::{Access, ObjectHeader};
use crate::data::types::ScalarType;
use crate::error::{Error, ErrorKind, Result};
use crate::shared::{AsContext, VirtualScope};

/// `VX_MATRIX_PATTERN`: how a matrix was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatrixPattern {
    /// `VX_PATTERN_BOX`: every element 255.
    Box,
    /// `VX_PATTERN_CROSS`: 255 on the origin's row and column, 0 elsewhere.
    Cross,
    /// `VX_PATTERN_DISK`: 255 inside the ellipse inscribed in the matrix, 0 outside.
    Disk,
    /// `VX_PATTERN_OTHER`: any other (a matrix created with [`Matrix::new`]).
    Other,
}

/// The meta data of a matrix (`VX_MATRIX_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MatrixMeta {
    /// `VX_MATRIX_TYPE`.
    pub element: ScalarType,
    /// `VX_MATRIX_COLUMNS`.
    pub columns: usize,
    /// `VX_MATRIX_ROWS`.
    pub rows: usize,
    /// `VX_MATRIX_ORIGIN` (column, row).
    pub origin: (usize, usize),
    /// `VX_MATRIX_PATTERN`.
    pub pattern: MatrixPattern,
}

pub(crate) struct MatrixObj {
    pub(super) header: ObjectHeader,
    meta: MatrixMeta,
    data: Blob,
}

/// A matrix handle.
#[derive(Clone)]
pub struct Matrix {
    pub(super) obj: Arc<MatrixObj>,
}

impl std::fmt::Debug for Matrix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = self.obj.meta;
        write!(f, "Matrix('{}', {} {}x{})", self.name(), m.element, m.columns, m.rows)
    }
}

/// The numeric scalar types (elements of matrices and tensors).
pub(super) fn is_numeric(t: ScalarType) -> bool {
    matches!(
        t,
        ScalarType::Int8
            | ScalarType::Uint8
            | ScalarType::Int16
            | ScalarType::Uint16
            | ScalarType::Int32
            | ScalarType::Uint32
            | ScalarType::Int64
            | ScalarType::Uint64
            | ScalarType::Float32
            | ScalarType::Float64
    )
}

fn check_meta(m: &MatrixMeta) -> Result<()> {
    if !is_numeric(m.element) {
        return Err(Error::new(ErrorKind::InvalidType, "a matrix holds numbers")
            .expected_found("an integer or floating-point type", m.element));
    }
    if m.columns == 0 || m.rows == 0 {
        return Err(Error::new(ErrorKind::InvalidDimension, "a matrix needs at least one row and column")
            .found(format!("{} columns, {} rows", m.columns, m.rows)));
    }
    if m.columns
        .checked_mul(m.rows)
        .and_then(|n| n.checked_mul(m.element.size()))
        .is_none_or(|b| b > isize::MAX as usize)
    {
        return Err(Error::new(ErrorKind::InvalidDimension, "the matrix overflows the addressable memory")
            .found(format!("{} columns, {} rows", m.columns, m.rows)));
    }
    if m.origin.0 >= m.columns || m.origin.1 >= m.rows {
        return Err(Error::new(ErrorKind::InvalidParameters, "the origin lies outside the matrix")
            .expected_found(format!("column < {}, row < {}", m.columns, m.rows), format!("{:?}", m.origin)));
    }
    Ok(())
}

impl Matrix {
    /// The storage and header (a module kernel's raw map).
    pub(crate) fn blob(&self) -> (&Blob, &ObjectHeader) {
        (&self.obj.data, &self.obj.header)
    }

    /// `vxCreateMatrix`: `rows × columns` zeros of `element`, origin at the centre, pattern
    /// [`MatrixPattern::Other`].
    pub fn new(ctx: &impl AsContext, element: ScalarType, columns: usize, rows: usize) -> Result<Matrix> {
        let meta =
            MatrixMeta { element, columns, rows, origin: (columns / 2, rows / 2), pattern: MatrixPattern::Other };
        Matrix::build(ObjectHeader::new(ctx, "matrix", None)?, meta)
    }

    /// `vxCreateVirtualMatrix`: a matrix only the kernels of `graph` can read and write.
    pub fn new_virtual(graph: &impl VirtualScope, element: ScalarType, columns: usize, rows: usize) -> Result<Matrix> {
        let meta =
            MatrixMeta { element, columns, rows, origin: (columns / 2, rows / 2), pattern: MatrixPattern::Other };
        Matrix::build(ObjectHeader::new(graph, "virtual-matrix", Some(graph.scope_id()))?, meta)
    }

    /// `vxCreateMatrixFromPattern`: a U8 matrix of 255s and 0s, origin at the centre.
    pub fn from_pattern(ctx: &impl AsContext, pattern: MatrixPattern, columns: usize, rows: usize) -> Result<Matrix> {
        Matrix::from_pattern_and_origin(ctx, pattern, columns, rows, (columns / 2, rows / 2))
    }

    /// `vxCreateMatrixFromPatternAndOrigin`. [`MatrixPattern::Other`] is refused (it names no pattern).
    pub fn from_pattern_and_origin(
        ctx: &impl AsContext,
        pattern: MatrixPattern,
        columns: usize,
        rows: usize,
        origin: (usize, usize),
    ) -> Result<Matrix> {
        if pattern == MatrixPattern::Other {
            return Err(Error::new(ErrorKind::InvalidParameters, "a matrix cannot be made from the pattern 'Other'")
                .expected("Box, Cross or Disk"));
        }
        let meta = MatrixMeta { element: ScalarType::Uint8, columns, rows, origin, pattern };
        let m = Matrix::build(ObjectHeader::new(ctx, "matrix", None)?, meta)?;
        // Written straight into the matrix's own buffer (allocated within the context's limits):
        // no temporary of the same size.
        let (data, header) = m.blob();
        data.write(header, Access::Application, |values| {
            for r in 0..rows {
                for c in 0..columns {
                    let on = match pattern {
                        MatrixPattern::Box => true,
                        MatrixPattern::Cross => r == origin.1 || c == origin.0,
                        MatrixPattern::Disk => {
                            // Inside the ellipse inscribed in the matrix, measured at element centres.
                            let (a, b) = (columns as f64 / 2.0, rows as f64 / 2.0);
                            let (x, y) = ((c as f64 + 0.5 - a) / a, (r as f64 + 0.5 - b) / b);
                            x * x + y * y <= 1.0
                        }
                        MatrixPattern::Other => unreachable!("refused above"),
                    };
                    values[r * columns + c] = if on { 255 } else { 0 };
                }
            }
        })?;
        Ok(m)
    }

    fn build(header: ObjectHeader, meta: MatrixMeta) -> Result<Matrix> {
        check_meta(&meta).map_err(|e| e.on_object(&header.name()))?;
        let data = Blob::new(meta.columns * meta.rows * meta.element.size());
        Ok(Matrix { obj: Arc::new(MatrixObj { header, meta, data }) })
    }

    /// A matrix of `meta` under a given header (an object array's item).
    pub(super) fn with_header(header: ObjectHeader, meta: MatrixMeta) -> Result<Matrix> {
        Matrix::build(header, meta)
    }

    /// Every attribute.
    pub fn meta(&self) -> MatrixMeta {
        self.obj.meta
    }
    /// `VX_MATRIX_TYPE`.
    pub fn element_type(&self) -> ScalarType {
        self.obj.meta.element
    }
    /// `VX_MATRIX_COLUMNS`.
    pub fn columns(&self) -> usize {
        self.obj.meta.columns
    }
    /// `VX_MATRIX_ROWS`.
    pub fn rows(&self) -> usize {
        self.obj.meta.rows
    }
    /// `VX_MATRIX_SIZE`: bytes.
    pub fn size(&self) -> usize {
        self.obj.data.len()
    }
    /// `VX_MATRIX_ORIGIN` (column, row).
    pub fn origin(&self) -> (usize, usize) {
        self.obj.meta.origin
    }
    /// `VX_MATRIX_PATTERN`.
    pub fn pattern(&self) -> MatrixPattern {
        self.obj.meta.pattern
    }
    /// The object's name.
    pub fn name(&self) -> String {
        self.obj.header.name()
    }
    /// True once the elements exist.
    pub fn is_allocated(&self) -> bool {
        self.obj.data.is_allocated()
    }
    pub(super) fn ensure_allocated(&self) -> Result<()> {
        self.obj.data.ensure(&self.obj.header)
    }

    fn item_type(&self) -> ArrayItemType {
        ArrayItemType::Scalar(self.obj.meta.element)
    }

    fn copy_to_impl<T: ArrayItem>(&self, out: &mut [T], access: Access) -> Result<()> {
        check_element::<T>(&self.obj.header, self.item_type())?;
        self.obj.data.copy_out_whole(&self.obj.header, access, out)
    }

    fn copy_from_impl<T: ArrayItem>(&self, src: &[T], access: Access) -> Result<()> {
        check_element::<T>(&self.obj.header, self.item_type())?;
        self.obj.data.copy_in_whole(&self.obj.header, access, src)
    }

    /// `vxCopyMatrix` (read): every element, row-major.
    pub fn copy_to<T: ArrayItem>(&self, out: &mut [T]) -> Result<()> {
        self.copy_to_impl(out, Access::Application)
    }
    /// `vxCopyMatrix` (write): every element, row-major.
    pub fn copy_from<T: ArrayItem>(&self, src: &[T]) -> Result<()> {
        self.copy_from_impl(src, Access::Application)
    }
}

impl KernelView<'_, Matrix> {
    /// Copy every element out, row-major.
    pub fn copy_to<T: ArrayItem>(&self, out: &mut [T]) -> Result<()> {
        self.object.copy_to_impl(out, Access::Kernel)
    }
    /// Copy every element in, row-major.
    pub fn copy_from<T: ArrayItem>(&self, src: &[T]) -> Result<()> {
        self.object.copy_from_impl(src, Access::Kernel)
    }
}
