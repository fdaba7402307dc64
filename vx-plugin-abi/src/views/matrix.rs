//! The Matrix view: what a `#[user_kernel]` takes for the kind (its wire side: `kinds/matrix.rs`).

use crate::kinds::ObjectMeta;
use super::{Element, data_view, element_check};
use crate::kinds::matrix::{CODE, Wire};


data_view!(
    /// A matrix of `T`, row-major.
    Matrix<T: Element>, T, CODE, |m| match m {
        ObjectMeta::Matrix(Wire { element, .. }) => element_check::<T>("matrix", *element),
        _ => Ok(()),
    }
);

impl<T: Element> Matrix<'_, T> {
    /// Rows.
    pub fn rows(&self) -> usize {
        match &self.meta {
            ObjectMeta::Matrix(Wire { rows, .. }) => *rows as usize,
            _ => unreachable!("checked at map"),
        }
    }
    /// Columns.
    pub fn columns(&self) -> usize {
        match &self.meta {
            ObjectMeta::Matrix(Wire { columns, .. }) => *columns as usize,
            _ => unreachable!("checked at map"),
        }
    }
    /// Element at `row`, `column`. Panics outside the matrix.
    #[track_caller]
    pub fn get(&self, row: usize, column: usize) -> T {
        assert!(column < self.columns(), "column {column} outside a matrix of {} columns", self.columns());
        self.as_slice()[row * self.columns() + column]
    }
}

