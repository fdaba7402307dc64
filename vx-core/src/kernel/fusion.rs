//! What a tiling kernel offers fused execution (`docs/design/fusion.md` §6.2): its row entry
//! ([`RowFn`], kept with the kernel's functions), the border rule and row count of that entry and
//! whether its views are bounded ([`FusionSupport`], frozen at finalize). A module declares it
//! through the host vtable's `declare_fusion`, an in-process kernel with
//! [`KernelBuilder::rows`](crate::KernelBuilder::rows) / [`fusable`](crate::KernelBuilder::fusable).
//! The fusion pass (`graph/verify/fusion.rs`) reads the support to pick candidates; a fused group's
//! runner (`graph/fusion/run.rs`) calls a row kernel's row entry with tables of row pointers into
//! its line buffers. A leaf of `kernel/`: the declaring and calling methods are on the handle
//! (`handle.rs`).

use vx_plugin_abi::wire;

/// The rule a row entry applies past the image edge (the SDK's `BorderFill`, without a constant's
/// value: which image row a window row resolves to is all the host needs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RowFill {
    /// `BorderFill::Reflect101`: `dcb|abcd|cba`.
    Reflect101,
    /// `BorderFill::Replicate`: `aaa|abcd|ddd`.
    Replicate,
    /// `BorderFill::Constant(v)`: rows past the edge are the module's own constant row.
    Constant,
}

impl RowFill {
    /// The rule a [`wire::row_fill`] code names (`None` for `NONE` and unknown codes).
    pub(crate) fn from_code(code: u32) -> Option<RowFill> {
        match code {
            wire::row_fill::REFLECT101 => Some(RowFill::Reflect101),
            wire::row_fill::REPLICATE => Some(RowFill::Replicate),
            wire::row_fill::CONSTANT => Some(RowFill::Constant),
            _ => None,
        }
    }
}

/// What a kernel declared for fused execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FusionSupport {
    /// The row entry's rule (`None`: no row entry).
    pub fill: Option<RowFill>,
    /// The rows the row entry's window spans (`N` of `Rows<T, N>`; 0 without a row entry).
    pub rows_n: u32,
    /// The tile functions read and write only through SDK views bounded by their descriptors.
    pub bounded: bool,
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use vx_plugin_abi::RowArgs;

    use super::*;
    use crate::data::types::{DataType, ParamState};
    use crate::error::ErrorKind;
    use crate::kernel::callbacks::{KernelFunctions, RowFn};
    use crate::kernel::signature::ParamDirection;
    use crate::{Context, Kernel, KernelBuilder};

    /// A finalized 1-in 1-out tiling kernel named `name`, its builder edited by `edit`.
    fn kernel(ctx: &Context, name: &str, edit: impl FnOnce(KernelBuilder<'_>) -> KernelBuilder<'_>) -> Kernel {
        let b = ctx
            .tiling_kernel(name, ctx.allocate_user_kernel_id().unwrap(), 2)
            .flexible(|_| Ok(()))
            .validate(|_, _| Ok(()));
        let k = edit(b).add().unwrap();
        k.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required).unwrap();
        k.add_parameter(1, ParamDirection::Output, DataType::Image, ParamState::Required).unwrap();
        k.finalize().unwrap();
        k
    }

    #[test]
    fn the_shape_differs_when_the_row_entry_or_its_rule_differs() {
        let ctx = Context::new().unwrap();
        let plain = kernel(&ctx, "t.plain", |b| b.validator_key(7));
        let plain2 = kernel(&ctx, "t.plain2", |b| b.validator_key(7));
        let fusable = kernel(&ctx, "t.fusable", |b| b.validator_key(7).fusable());
        let reflect = kernel(&ctx, "t.reflect", |b| b.validator_key(7).rows(RowFill::Reflect101, 3, |_| Ok(())));
        let reflect2 = kernel(&ctx, "t.reflect2", |b| b.validator_key(7).rows(RowFill::Reflect101, 3, |_| Ok(())));
        let replicate = kernel(&ctx, "t.replicate", |b| b.validator_key(7).rows(RowFill::Replicate, 3, |_| Ok(())));
        let five = kernel(&ctx, "t.five", |b| b.validator_key(7).rows(RowFill::Reflect101, 5, |_| Ok(())));
        // A row entry without its declaration is impossible through the builder; through the
        // module path, the same support with and without the entry: set it by hand.
        let entry_only = kernel(&ctx, "t.entry_only", |b| b.validator_key(7));
        let KernelFunctions::Tiling { rows, .. } = &entry_only.inner.functions else { unreachable!() };
        let _ = rows.set(Arc::new(|_: &RowArgs<'_>| Ok(())));

        let same = |a: &Kernel, b: &Kernel| a.inner.rebinds_in_place(&b.inner);
        assert!(same(&plain, &plain2) && same(&reflect, &reflect2), "code alone differs: moved in place");
        for (a, b) in
            [(&plain, &fusable), (&fusable, &reflect), (&reflect, &replicate), (&reflect, &five), (&plain, &entry_only)]
        {
            assert_ne!(a.inner.shape(), b.inner.shape(), "{} vs {}", a.inner.name, b.inner.name);
            assert!(!same(a, b) && !same(b, a), "{} vs {}", a.inner.name, b.inner.name);
        }
        assert_eq!(
            reflect.fusion_support(),
            Some(FusionSupport { fill: Some(RowFill::Reflect101), rows_n: 3, bounded: true })
        );
        assert_eq!(fusable.fusion_support(), Some(FusionSupport { fill: None, rows_n: 0, bounded: true }));
        assert_eq!(plain.fusion_support(), None);
    }

    #[test]
    fn a_declaration_must_describe_its_row_entry_and_come_before_finalize() {
        let ctx = Context::new().unwrap();
        let k = ctx.tiling_kernel("t.declared", 0, 1).flexible(|_| Ok(())).validate(|_, _| Ok(())).add().unwrap();
        let entry = || -> Arc<RowFn> { Arc::new(|_: &RowArgs<'_>| Ok(())) };
        let bounded = FusionSupport { fill: None, rows_n: 0, bounded: true };
        let rows = FusionSupport { fill: Some(RowFill::Constant), rows_n: 1, bounded: true };
        assert_eq!(k.declare_fusion(bounded, Some(entry())).unwrap_err().kind(), ErrorKind::InvalidParameters);
        assert_eq!(k.declare_fusion(rows, None).unwrap_err().kind(), ErrorKind::InvalidParameters);
        k.declare_fusion(rows, Some(entry())).unwrap();
        assert_eq!(k.declare_fusion(rows, Some(entry())).unwrap_err().kind(), ErrorKind::NotSupported);
        k.add_parameter(0, ParamDirection::Output, DataType::Image, ParamState::Required).unwrap();
        k.finalize().unwrap();
        assert_eq!(k.fusion_support(), Some(rows));
        assert_eq!(k.declare_fusion(bounded, None).unwrap_err().kind(), ErrorKind::NotSupported);
    }
}
