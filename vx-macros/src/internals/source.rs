//! Reading the crate's own source files from a macro (leaf helpers of [`super::placement`] and
//! [`super::module_entry`]): a file's stamp for their caches, a file parsed, and whether an item
//! carries one of the kernel attributes.

use std::path::Path;
use std::time::SystemTime;

/// A file's size and modification time (`None`: unreadable): a cached reading of the file is
/// fresh while its stamp is unchanged.
pub(super) type Stamp = Option<(u64, Option<SystemTime>)>;

pub(super) fn stamp(path: &Path) -> Stamp {
    std::fs::metadata(path).ok().map(|m| (m.len(), m.modified().ok()))
}

/// The file parsed (`None`: unreadable or not Rust that parses).
pub(super) fn parse(path: &Path) -> Option<syn::File> {
    syn::parse_file(&std::fs::read_to_string(path).ok()?).ok()
}

/// True when `attrs` hold `#[tiling_kernel]`, `#[user_kernel]` or `#[target_kernel]` (any path).
pub(super) fn has_kernel_attr(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path()
            .segments
            .last()
            .is_some_and(|s| matches!(s.ident.to_string().as_str(), "tiling_kernel" | "user_kernel" | "target_kernel"))
    })
}
