//! Pinned diagnostics of `#[tiling_kernel]` and `#[user_kernel]`, and the ABI's compile-time
//! guarantees (handles neither `Send` nor `Sync`, raw-pointer entry points `unsafe`): each file under
//! `ui/` must fail to compile with exactly the recorded message, pointing at the offending token. Regenerate after an intended change with
//! `TRYBUILD=overwrite cargo test -p vx-plugin-abi --test compile_fail` and review the diff.

#[test]
fn tiling_kernel_diagnostics() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
