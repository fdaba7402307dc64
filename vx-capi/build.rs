//! Compiles the one part of the C API Rust cannot define: `vxAddLogEntry`, a C variadic function
//! (`csrc/log_entry.c` formats the message and calls the Rust side).

fn main() {
    // The crate's tests and benches are Rust programs that load OpenVX C modules: the modules'
    // undefined vx* symbols resolve against the program, which must export them (as any Rust
    // program using this crate as a library and loading C modules must: `-C link-arg=-rdynamic`).
    println!("cargo:rustc-link-arg-tests=-rdynamic");
    println!("cargo:rustc-link-arg-benches=-rdynamic");
    println!("cargo:rerun-if-changed=csrc/log_entry.c");
    println!("cargo:rerun-if-changed=include");
    cc::Build::new()
        .file("csrc/log_entry.c")
        .include("include")
        .warnings(true)
        .extra_warnings(true)
        .compile("vxrs_log_entry");
}
