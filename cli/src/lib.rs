//! `vx`: the command line of vx-rs.
//!
//! - `vx inspect <module-or-path> [--json]`: what a kernel module holds.
//! - `vx run <graph.toml> [--set key=value]… [--frames N]`: run a graph described in a file, with
//!   a progress bar over frames and the per-node time table.
//! - `vx watch <dir> <graph.toml>`: the same graph as a service, reloading modules from `dir` as
//!   they change.
//!
//! Exit codes scripts can use: 0 success, 1 processing failed, 2 usage or input files wrong,
//! 3 a module could not be loaded, 4 the graph could not be built or verified.
//!
//! The command lives in this library ([`main`]; `src/main.rs` only calls it) so that the fuzz
//! targets in `fuzz/` can drive its graph-file and image-file readers ([`fuzz`]).

#[doc(hidden)]
pub mod fuzz;
mod graph_file;
mod inspect;
mod new;
mod run;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Inspect kernel modules and run graphs of OpenVX-style kernels.
#[derive(Parser, Debug)]
#[command(name = "vx", version, about)]
struct Cli {
    /// Also search these directories for modules (before VX_MODULE_PATH and the vx binary's own).
    #[arg(long = "module-dir", short = 'M', global = true, value_name = "DIR")]
    module_dirs: Vec<PathBuf>,
    /// Log to standard error (a tracing filter such as `info` or `vx=debug`; RUST_LOG works too).
    #[arg(long, global = true, value_name = "FILTER")]
    log: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Describe a kernel module: version, ABI, every kernel with its parameters and attributes.
    Inspect {
        /// A module name (`vx_filters`, searched) or a path to `lib<name>.so`.
        module: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Run a graph described in a TOML file.
    Run {
        /// The graph file.
        graph: PathBuf,
        /// Set a variable of the file (`--set threshold=80`); repeatable.
        #[arg(long = "set", value_name = "KEY=VALUE", value_parser = parse_key_value)]
        set: Vec<(String, String)>,
        /// Frames to process (default: the file's `frames`, else 1).
        #[arg(long)]
        frames: Option<u64>,
        /// Worker threads (default: the file's `threads`, else the machine's cores).
        #[arg(long)]
        threads: Option<usize>,
        /// No progress bar and no time table.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Make a new kernel-module crate: a tiling kernel, a user kernel, tests that pass, a README.
    New(new::NewArgs),
    /// Serve a graph, reloading modules from a directory whenever they change.
    Watch {
        /// The plugin directory to watch (modules are loaded from it).
        dir: PathBuf,
        /// The graph file.
        graph: PathBuf,
        /// Set a variable of the file; repeatable.
        #[arg(long = "set", value_name = "KEY=VALUE", value_parser = parse_key_value)]
        set: Vec<(String, String)>,
        /// Stop after this many seconds (default: run until interrupted).
        #[arg(long)]
        seconds: Option<f64>,
    },
}

fn parse_key_value(s: &str) -> Result<(String, String), String> {
    let (k, v) = s.split_once('=').ok_or_else(|| format!("`{s}` is not KEY=VALUE"))?;
    if k.is_empty() {
        return Err(format!("`{s}` has an empty key"));
    }
    Ok((k.to_owned(), v.to_owned()))
}

/// Why `vx` failed, with the exit code that says so.
#[derive(Debug)]
pub(crate) struct Failure {
    code: u8,
    message: String,
}

impl Failure {
    /// Processing failed (exit code 1).
    pub(crate) fn process(m: impl Into<String>) -> Failure {
        Failure { code: 1, message: m.into() }
    }
    /// The command line or an input file is wrong (2).
    pub(crate) fn usage(m: impl Into<String>) -> Failure {
        Failure { code: 2, message: m.into() }
    }
    /// A module could not be loaded (3).
    pub(crate) fn module(m: impl Into<String>) -> Failure {
        Failure { code: 3, message: m.into() }
    }
    /// The graph could not be built or verified (4).
    pub(crate) fn graph(m: impl Into<String>) -> Failure {
        Failure { code: 4, message: m.into() }
    }
}

/// `vx` with the process's arguments: runs the command and gives its exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let filter = cli.log.clone().or_else(|| std::env::var("RUST_LOG").ok());
    if let Some(filter) = filter {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_writer(std::io::stderr)
            .init();
    }
    let result = match cli.command {
        Command::Inspect { module, json } => run::inspect(&cli.module_dirs, &module, json),
        Command::Run { graph, set, frames, threads, quiet } => {
            run::run(&cli.module_dirs, &graph, &set, frames, threads, quiet)
        }
        Command::New(args) => new::new(&args),
        Command::Watch { dir, graph, set, seconds } => run::watch(&cli.module_dirs, &dir, &graph, &set, seconds),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("vx: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}
