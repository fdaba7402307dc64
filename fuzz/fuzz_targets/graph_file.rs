//! `vx run`'s graph-file reader: TOML parse, `${var}` expansion, the graph built and verified
//! (`vx_cli::fuzz::graph_file`). Any panic or abort is a bug; errors are the expected outcome.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

static CTX: OnceLock<vx::Context> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let ctx = CTX.get_or_init(vx_cli::fuzz::context);
    let _ = vx_cli::fuzz::graph_file(ctx, data);
});
