//! Typed views of every data object for a module's user kernel: what `#[user_kernel]` functions
//! take (`&Matrix<f32>` to read, `&mut Pyramid<u8>` to write, `&ObjectArray<Image<u8>>`, …) and
//! what hand-written process functions build with [`ParamView::map`]. Each view maps its object
//! through the [`Processor`](crate::module_abi::Processor) when made and unmaps it when dropped; the element type is checked
//! against the object's meta data (an error naming both, never a reinterpretation). A view taken
//! by `&` is mapped for reading; its writing methods panic (the SDK's trampoline turns a panic
//! into an error), so a kernel that writes takes `&mut`.
//!
//! [`ViewKind`] says what the generated validator checks for each view and what meta an output
//! gets: the meta of the first input parameter of the same view (an exemplar, as
//! `vxSetMetaFormatFromReference`), or for a scalar output its own type.
//!
//! Each view lives with its kind (`kinds/<kind>.rs`); this module gathers them from the list.

pub use crate::kinds::ViewKind;
pub use crate::kinds::view::{Element, ParamView};

macro_rules! views {
    ($($T:ident { code: $code:ident, module: $m:ident, view: $v:ident, label: $label:literal }),* $(,)?) => {
        $(pub use crate::kinds::$m::$v;)*
    };
}
crate::for_each_kind!(views);
