//! The module loader's ELF pre-check (`check_elf`: headers and program headers, bounded reads,
//! whatever the file claims), over bytes read through an anonymous file as the loader reads a
//! module. Any panic or abort is a bug; a refusal is the expected outcome for junk.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = vx::__check_elf_bytes(data);
});
