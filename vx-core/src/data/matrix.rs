//! Matrices (`vx_matrix`): `rows × columns` elements of a numeric type, with an origin and the
//! pattern they were made from; copied in and out whole (`vxCopyMatrix`).

use crate::data::items::{ArrayItem, ArrayItemType};
use crate::data::kernel_view::KernelView;
use crate::data::kind::{
    Applied, BlobBody, BlobKind, Handle, ObjectKind, Refusal, blob_object, kind_names, meta_attributes, positive,
};
use crate::data::object::{Access, ObjectHeader};
use crate::data::types::ScalarType;
use crate::data::wire::{AttrValue, code, scalar_type, size};
use crate::error::{Error, ErrorKind, Result};
use crate::shared::{AsContext, VirtualScope};
use vx_plugin_abi::kinds::matrix::Wire;
use vx_plugin_abi::wire::pattern;

kind_names! {
    kind: MatrixKind, meta: MatrixMeta, attr: MatrixAttr, partial: MatrixPartial;
    exports: Matrix, MatrixAttr, MatrixMeta, MatrixPattern
}

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

/// The [`ObjectKind`] of matrices.
pub struct MatrixKind;

/// A matrix handle.
pub type Matrix = Handle<MatrixKind>;

impl std::fmt::Display for MatrixMeta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "matrix {} {}x{} origin {:?} pattern {:?}",
            self.element, self.columns, self.rows, self.origin, self.pattern
        )
    }
}

meta_attributes! {
    /// One meta-format attribute of a matrix.
    MatrixAttr, MatrixPartial for MatrixMeta {
        /// `VX_MATRIX_TYPE`.
        Type(ScalarType) => element @ MATRIX_TYPE: AttrValue::scalar_type,
        /// `VX_MATRIX_ROWS`.
        Rows(usize) => rows @ MATRIX_ROWS: AttrValue::size,
        /// `VX_MATRIX_COLUMNS`.
        Columns(usize) => columns @ MATRIX_COLUMNS: AttrValue::size,
        /// `VX_MATRIX_ORIGIN` (column, row; unset: the centre).
        Origin((usize, usize)) => origin,
        /// `VX_MATRIX_PATTERN` (unset: [`MatrixPattern::Other`]).
        Pattern(MatrixPattern) => pattern,
    }
}

impl ObjectKind for MatrixKind {
    type Wire = Wire;
    const NAME: &'static str = "Matrix";
    type Meta = MatrixMeta;
    type Attr = MatrixAttr;
    type Partial = MatrixPartial;
    type Body = BlobBody<MatrixKind>;
    blob_object!();
    fn fmt_details(h: &Matrix, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = h.obj.body.meta;
        write!(f, "{} {}x{}", m.element, m.columns, m.rows)
    }
    fn apply(h: &Matrix, w: &MatrixMeta) -> std::result::Result<Applied, Refusal> {
        let m = h.meta();
        if m.element != w.element {
            return Err(Refusal::Mismatch(ErrorKind::InvalidType));
        }
        if (m.columns, m.rows) != (w.columns, w.rows) {
            return Err(Refusal::Mismatch(ErrorKind::InvalidDimension));
        }
        Ok(Applied::Unchanged)
    }
    fn exemplar(p: &mut MatrixPartial, m: &MatrixMeta) {
        *p = MatrixPartial::of(m);
    }
    fn resolve(p: &MatrixPartial) -> std::result::Result<MatrixMeta, &'static str> {
        let columns = positive(p.columns, "matrix columns")?;
        let rows = positive(p.rows, "matrix rows")?;
        Ok(MatrixMeta {
            element: p.element.ok_or("matrix type")?,
            columns,
            rows,
            origin: p.origin.unwrap_or((columns / 2, rows / 2)),
            pattern: p.pattern.unwrap_or(MatrixPattern::Other),
        })
    }
    fn to_wire(h: &Matrix) -> Wire {
        let m = h.meta();
        Wire {
            element: code(m.element),
            columns: m.columns as u64,
            rows: m.rows as u64,
            origin_x: m.origin.0 as u64,
            origin_y: m.origin.1 as u64,
            pattern: pattern_code(m.pattern),
        }
    }
    fn from_wire(w: &Wire) -> Result<MatrixMeta> {
        let Wire { element, columns, rows, origin_x, origin_y, pattern } = w;
        Ok(MatrixMeta {
            element: scalar_type(*element)?,
            columns: size(*columns)?,
            rows: size(*rows)?,
            origin: (size(*origin_x)?, size(*origin_y)?),
            pattern: pattern_of(*pattern)?,
        })
    }
}

impl BlobKind for MatrixKind {
    type Extra = ();
    fn layout(m: &MatrixMeta) -> Result<usize> {
        check_meta(m)?;
        Ok(m.columns * m.rows * m.element.size())
    }
    fn element(m: &MatrixMeta) -> ArrayItemType {
        m.element.into()
    }
}

fn pattern_code(p: MatrixPattern) -> u32 {
    match p {
        MatrixPattern::Box => pattern::BOX,
        MatrixPattern::Cross => pattern::CROSS,
        MatrixPattern::Disk => pattern::DISK,
        MatrixPattern::Other => pattern::OTHER,
    }
}

fn pattern_of(code: u32) -> Result<MatrixPattern> {
    Ok(match code {
        pattern::BOX => MatrixPattern::Box,
        pattern::CROSS => MatrixPattern::Cross,
        pattern::DISK => MatrixPattern::Disk,
        pattern::OTHER => MatrixPattern::Other,
        other => {
            return Err(Error::new(ErrorKind::InvalidValue, "unknown matrix pattern code").found(format!("{other:#x}")));
        }
    })
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

impl Handle<MatrixKind> {
    /// `vxCreateMatrix`: `rows × columns` zeros of `element`, origin at the centre, pattern
    /// [`MatrixPattern::Other`].
    pub fn new(ctx: &impl AsContext, element: ScalarType, columns: usize, rows: usize) -> Result<Matrix> {
        let meta =
            MatrixMeta { element, columns, rows, origin: (columns / 2, rows / 2), pattern: MatrixPattern::Other };
        Matrix::with_header(ObjectHeader::new(ctx, "matrix", None)?, meta)
    }

    /// `vxCreateVirtualMatrix`: a matrix only the kernels of `graph` can read and write.
    pub fn new_virtual(graph: &impl VirtualScope, element: ScalarType, columns: usize, rows: usize) -> Result<Matrix> {
        let meta =
            MatrixMeta { element, columns, rows, origin: (columns / 2, rows / 2), pattern: MatrixPattern::Other };
        Matrix::with_header(ObjectHeader::new(graph, "virtual-matrix", Some(graph.scope_id()))?, meta)
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
        let m = Matrix::with_header(ObjectHeader::new(ctx, "matrix", None)?, meta)?;
        // Written straight into the matrix's own buffer (allocated within the context's limits):
        // no temporary of the same size.
        m.obj.body.data.write(&m.obj.header, Access::Application, |values| {
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

    /// `VX_MATRIX_TYPE`.
    pub fn element_type(&self) -> ScalarType {
        self.obj.body.meta.element
    }
    /// `VX_MATRIX_COLUMNS`.
    pub fn columns(&self) -> usize {
        self.obj.body.meta.columns
    }
    /// `VX_MATRIX_ROWS`.
    pub fn rows(&self) -> usize {
        self.obj.body.meta.rows
    }
    /// `VX_MATRIX_ORIGIN` (column, row).
    pub fn origin(&self) -> (usize, usize) {
        self.obj.body.meta.origin
    }
    /// `VX_MATRIX_PATTERN`.
    pub fn pattern(&self) -> MatrixPattern {
        self.obj.body.meta.pattern
    }
    /// `vxCopyMatrix` (read): every element, row-major.
    pub fn copy_to<T: ArrayItem>(&self, out: &mut [T]) -> Result<()> {
        self.copy_whole_to(out, Access::Application)
    }
    /// `vxCopyMatrix` (write): every element, row-major.
    pub fn copy_from<T: ArrayItem>(&self, src: &[T]) -> Result<()> {
        self.copy_whole_from(src, Access::Application)
    }
}

impl KernelView<'_, Matrix> {
    /// Copy every element out, row-major.
    pub fn copy_to<T: ArrayItem>(&self, out: &mut [T]) -> Result<()> {
        self.object.copy_whole_to(out, Access::Kernel)
    }
    /// Copy every element in, row-major.
    pub fn copy_from<T: ArrayItem>(&self, src: &[T]) -> Result<()> {
        self.object.copy_whole_from(src, Access::Kernel)
    }
}
