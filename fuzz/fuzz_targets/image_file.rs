//! `vx run`'s image-file reader: PNG / JPEG decoded and converted to a vx image of the format the
//! first byte picks (`vx_cli::fuzz::image_file`). Any panic or abort is a bug.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

static CTX: OnceLock<vx::Context> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let ctx = CTX.get_or_init(vx_cli::fuzz::context);
    let _ = vx_cli::fuzz::image_file(ctx, data);
});
