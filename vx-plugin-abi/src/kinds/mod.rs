//! The data-object kinds, once: the list every per-kind table on both sides of the module ABI is
//! generated from (wasmparser's `for_each_operator!` idea). `for_each_kind!(m)` expands to
//! `m! { <the list> }`; the callback macro writes what it needs from each entry's fields.
//!
//! Per entry: the variant ident (also the host's handle type), then
//! - `code`: the name of its `vx_type_e` constant in [`crate::wire::data_type`],
//! - `module`: the kind's file on each side (`kinds/<module>.rs`, `views/<module>.rs`,
//!   `vx-core/src/data/<module>.rs`),
//! - `view`: the SDK view a `#[user_kernel]` function takes ([`crate::views`]),
//! - `label`: how messages and `vx inspect` name it.
//!
//! Adding a kind starts here; the host's `data/kinds/mod.rs` and `data/types.rs` pick it up. On this
//! side each kind has its own file, `kinds/<module>.rs`: its wire meta (`Wire`), its `vx_type_e`
//! code (`CODE`) and its meta-format attribute codes (`attribute`); from the list this file
//! generates the wire [`ObjectMeta`] (one tuple variant per kind over its `Wire`), the
//! [`data_type`] codes and the [`attribute`] codes. This folder is the wire's leaf: it imports
//! nothing else of the crate. Each kind's view is in `views/<module>.rs`, gathered from the list
//! by [`crate::views`]; [`ViewKind`] is here, by the list its diagnostic names.

/// The data-object kinds (see the module doc).
#[macro_export]
#[doc(hidden)]
macro_rules! for_each_kind {
    ($m:ident) => {
        $m! {
            Image          { code: IMAGE,            module: image,        view: Image,        label: "image" },
            Scalar         { code: SCALAR,           module: scalar,       view: Scalar,       label: "scalar" },
            Array          { code: ARRAY,            module: array,        view: Array,        label: "array" },
            UserDataObject { code: USER_DATA_OBJECT, module: user_data,    view: UserData,     label: "user data object" },
            Matrix         { code: MATRIX,           module: matrix,       view: Matrix,       label: "matrix" },
            Convolution    { code: CONVOLUTION,      module: convolution,  view: Convolution,  label: "convolution" },
            Lut            { code: LUT,              module: lut,          view: Lut,          label: "LUT" },
            Distribution   { code: DISTRIBUTION,     module: distribution, view: Distribution, label: "distribution" },
            Threshold      { code: THRESHOLD,        module: threshold,    view: Threshold,    label: "threshold" },
            Pyramid        { code: PYRAMID,          module: pyramid,      view: Pyramid,      label: "pyramid" },
            Remap          { code: REMAP,            module: remap,        view: Remap,        label: "remap" },
            ObjectArray    { code: OBJECT_ARRAY,     module: object_array, view: ObjectArray,  label: "object array" },
            Tensor         { code: TENSOR,           module: tensor,       view: Tensor,       label: "tensor" },
            RawImage       { code: RAW_IMAGE,        module: raw_image,    view: RawImage,     label: "raw image" },
        }
    };
}

use abi_stable::StableAbi;

/// The SDK side of the list: the kinds' files, their codes, the wire meta enum.
macro_rules! sdk_kinds {
    ($($T:ident { code: $code:ident, module: $m:ident, view: $v:ident, label: $label:literal }),* $(,)?) => {
        $(pub mod $m;)*

        /// Parameter data types (`vx_type_e`), one per kind.
        pub mod data_type {
            $(
                #[doc = concat!("`VX_TYPE_", stringify!($code), "`: ", $label, ".")]
                pub const $code: u32 = super::$m::CODE;
            )*
        }

        /// The meta-format attributes a validator may set one by one
        /// ([`Validator::set_output_attribute`](crate::module_abi::Validator::set_output_attribute), as
        /// `vxSetMetaFormatAttribute`), with OpenVX's codes; the value's bytes are the C type named.
        /// Each kind's are in its file (`kinds::<kind>::attribute`).
        pub mod attribute {
            $(pub use super::$m::attribute::*;)*
        }

        /// What an object is: its type and OpenVX attributes. Validators read it for inputs
        /// ([`Validator::meta`](crate::module_abi::Validator::meta)) and give it for outputs
        /// ([`Validator::set_output_meta`](crate::module_abi::Validator::set_output_meta), like
        /// `vxSetMetaFormatFromReference`); init, deinit and process read it too. One variant per
        /// kind over the kind's `Wire` struct (`ObjectMeta::Matrix(matrix::Wire { .. })`). Sizes cross
        /// as `u64`, types and formats as [`crate::wire`] codes (0: not known yet, a virtual object
        /// before verify).
        #[repr(C, u8)]
        #[derive(StableAbi, Debug, Clone, PartialEq)]
        pub enum ObjectMeta {
            /// An optional parameter left unset.
            Absent,
            $(
                #[doc = concat!("A ", $label, " ([`", stringify!($m), "::Wire`]).")]
                $T($m::Wire),
            )*
        }

        $(
            impl From<$m::Wire> for ObjectMeta {
                fn from(w: $m::Wire) -> ObjectMeta {
                    ObjectMeta::$T(w)
                }
            }
        )*

        impl ObjectMeta {
            /// The object's [`data_type`] code (0 for [`ObjectMeta::Absent`]).
            pub fn data_type(&self) -> u32 {
                match self {
                    ObjectMeta::Absent => 0,
                    $(ObjectMeta::$T(_) => data_type::$code,)*
                }
            }
        }
    };
}

crate::for_each_kind!(sdk_kinds);

/// What a view type is, whatever its lifetime: its object type, the check of an input's meta,
/// and the meta of an output. Each kind's view implements it in the kind's file; the note below
/// is the list's views, by hand (a diagnostic text must be a literal).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a view of a data object",
    label = "not a data-object view",
    note = "a `#[user_kernel]` parameter taken by reference is a view (`vx_plugin_abi::views`): `Image<T>`, \
            `Scalar<T>`, `Array<T>`, `UserData`, `Matrix<T>`, `Convolution`, `Lut<T>`, `Distribution`, `Threshold`, \
            `Pyramid<T>`, `Remap`, `ObjectArray<V>`, `Tensor<T>`, `RawImage<T>`; or `ImageIn<T>` / `ImageOut<T>`, `&mut L` for \
            `local = L`, `&mut [T]` for a memory request"
)]
pub trait ViewKind {
    /// The view at lifetime `'a` (a [`ParamView`](crate::views::ParamView)).
    type At<'a>;
    /// The object's [`crate::wire::data_type`].
    const DATA_TYPE: u32;
    /// Whether an output of this view has a meta without an exemplar input (a scalar: its own
    /// type); `#[user_kernel]` refuses an output of another view with no input of the same view
    /// unless the kernel has its own validator.
    const OUTPUT_META_WITHOUT_EXEMPLAR: bool = false;
    /// Why `meta` does not suit this view (element type, …), if it does not.
    fn check(meta: &ObjectMeta) -> Result<(), String>;
    /// An output's meta, given the meta of the first input of this view (`None`: there is none).
    fn output_meta(exemplar: Option<&ObjectMeta>) -> Option<ObjectMeta> {
        exemplar.cloned()
    }
}

#[cfg(test)]
mod tests {
    macro_rules! codes {
        ($($T:ident { code: $code:ident, module: $m:ident, view: $v:ident, label: $label:literal }),* $(,)?) => {
            [$(crate::wire::data_type::$code),*]
        };
    }

    #[test]
    fn every_kind_has_its_own_code() {
        let codes = crate::for_each_kind!(codes);
        let mut sorted = codes.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), codes.len());
    }
}
