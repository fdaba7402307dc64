//! The data-object kinds, once: the list every per-kind table on both sides of the module ABI is
//! generated from (wasmparser's `for_each_operator!` idea). `for_each_kind!(m)` expands to
//! `m! { <the list> }`; the callback macro writes what it needs from each entry's fields.
//!
//! Per entry: the variant ident (also the host's handle type), then
//! - `code`: the name of its `vx_type_e` constant in [`crate::wire::data_type`],
//! - `module`: the host's module (file) for the kind (`vx-core/src/data/<module>.rs`),
//! - `label`: how messages and `vx inspect` name it.
//!
//! Adding a kind starts here; the host's `data/kinds.rs` and `data/types.rs` pick it up.

/// The data-object kinds (see the module doc).
#[macro_export]
#[doc(hidden)]
macro_rules! for_each_kind {
    ($m:ident) => {
        $m! {
            Image          { code: IMAGE,            module: image,        label: "image" },
            Scalar         { code: SCALAR,           module: scalar,       label: "scalar" },
            Array          { code: ARRAY,            module: array,        label: "array" },
            UserDataObject { code: USER_DATA_OBJECT, module: user_data,    label: "user data object" },
            Matrix         { code: MATRIX,           module: matrix,       label: "matrix" },
            Convolution    { code: CONVOLUTION,      module: convolution,  label: "convolution" },
            Lut            { code: LUT,              module: lut,          label: "LUT" },
            Distribution   { code: DISTRIBUTION,     module: distribution, label: "distribution" },
            Threshold      { code: THRESHOLD,        module: threshold,    label: "threshold" },
            Pyramid        { code: PYRAMID,          module: pyramid,      label: "pyramid" },
            Remap          { code: REMAP,            module: remap,        label: "remap" },
            ObjectArray    { code: OBJECT_ARRAY,     module: object_array, label: "object array" },
            Tensor         { code: TENSOR,           module: tensor,       label: "tensor" },
        }
    };
}

#[cfg(test)]
mod tests {
    macro_rules! codes {
        ($($T:ident { code: $code:ident, module: $m:ident, label: $label:literal }),* $(,)?) => {
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
