//! Compiles the one part of the C API Rust cannot define: `vxAddLogEntry`, a C variadic function
//! (`csrc/log_entry.c` formats the message and calls the Rust side).

fn main() {
    println!("cargo:rerun-if-changed=csrc/log_entry.c");
    println!("cargo:rerun-if-changed=include");
    cc::Build::new()
        .file("csrc/log_entry.c")
        .include("include")
        .warnings(true)
        .extra_warnings(true)
        .compile("vxrs_log_entry");
}
