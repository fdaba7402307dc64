//! `vx`: the command line of vx-rs. The commands, their exit codes and the graph-file format are in
//! the `vx_cli` library (`src/lib.rs`).

fn main() -> std::process::ExitCode {
    vx_cli::main()
}
