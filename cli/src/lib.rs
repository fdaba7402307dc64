//! `vx`: the command line of vx-rs.
//!
//! - `vx inspect [MODULE|DIR] [KERNEL] [--json]`: what kernel modules hold — every module of a
//!   directory (or of the search path), one module's kernels, or one kernel in detail.
//! - `vx run <graph.toml> [--set key=value]… [--frames N] [--target SPEC]… [--place NODE=TARGET]…`:
//!   run a graph described in a file (`docs/book/src/graph-file.md`), with a progress bar over frames and
//!   the time table (a row per node, one per fused group).
//! - `vx watch <dir> <graph.toml> [--fps N] [--force-reload]`: the same graph as a service,
//!   reloading modules from `dir` as they change.
//!
//! Warnings (`tracing` events at level warn, and `vx: warning: …` lines — an output some of whose
//! pixels no node wrote) go to standard error unless `--log off`.
//!
//! Every argument and every key of the graph file is checked before any module is loaded or image
//! read. SIGINT / SIGTERM during `run` or `watch` stop after the frame in hand: outputs are written,
//! the summary printed, exit code 0; a second signal exits at once with 130.
//!
//! Exit codes scripts can use: 0 success, 1 processing failed (or an output could not be written),
//! 2 usage or input files wrong, 3 a module could not be loaded, 4 the graph could not be built or
//! verified, 130 interrupted twice (or before the first frame).
//!
//! The command lives in this library ([`main`]; `src/main.rs` only calls it) so that the fuzz
//! targets in `fuzz/` can drive its graph-file and image-file readers ([`fuzz`]).

/// `eprintln!` that never panics: a line on standard error through [`output::note`].
macro_rules! note {
    ($($t:tt)*) => { $crate::output::note(&format!($($t)*)) };
}

#[doc(hidden)]
pub mod fuzz;
mod graph_file;
mod inspect;
mod new;
mod output;
mod run;
mod signals;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use vx::{MAX_QUEUE_DEPTH, MAX_THREADS, TargetConfig};

/// Inspect kernel modules and run graphs of OpenVX-style kernels.
#[derive(Parser, Debug)]
#[command(name = "vx", version, about)]
struct Cli {
    /// Also search these directories for modules (before VX_MODULE_PATH and the vx binary's own);
    /// for `inspect`, `run` and `watch`, before or after the command's name.
    #[arg(long = "module-dir", short = 'M', value_name = "DIR")]
    module_dirs: Vec<PathBuf>,
    /// Log to standard error (a tracing filter such as `info` or `vx=debug`; RUST_LOG works too;
    /// default: warnings; `off`: none).
    #[arg(long, global = true, value_name = "FILTER")]
    log: Option<String>,
    #[command(subcommand)]
    command: Command,
}

/// `-M DIR` after a command's name (`vx run -M target/debug graph.toml`): the commands that load
/// modules take it; `vx new` does not, so its help does not list it.
#[derive(clap::Args, Debug)]
struct ModuleDirs {
    /// Also search these directories for modules (before VX_MODULE_PATH and the vx binary's own).
    #[arg(long = "module-dir", short = 'M', value_name = "DIR")]
    module_dirs: Vec<PathBuf>,
}

/// What `run` and `watch` share: the graph file and what the command line changes in it.
#[derive(clap::Args, Debug)]
struct GraphArgs {
    /// The graph file (format: docs/book/src/graph-file.md).
    graph: PathBuf,
    /// Set a variable the file uses as `${key}` (`--set threshold=80`); repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = parse_key_value)]
    set: Vec<(String, String)>,
    /// Worker threads (default: the file's `threads`, else the machine's cores).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=MAX_THREADS as u64))]
    threads: Option<u64>,
    /// Declare a target: `NAME[:threads=N][:cores=A,B,…][:queue_depth=N]`; replaces a target of
    /// the file of the same name; repeatable.
    #[arg(long = "target", value_name = "SPEC", value_parser = parse_target)]
    targets: Vec<TargetConfig>,
    /// Run node NODE (by its `name` in the file) on TARGET (`host`, `any` or a declared target);
    /// repeatable.
    #[arg(long = "place", value_name = "NODE=TARGET", value_parser = parse_key_value)]
    place: Vec<(String, String)>,
}

impl GraphArgs {
    fn overrides(&self) -> graph_file::Overrides {
        graph_file::Overrides { set: self.set.clone(), targets: self.targets.clone(), place: self.place.clone() }
    }
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Describe kernel modules: every module of a directory (or of the search path, without an
    /// argument), one module's kernels, or one kernel in detail.
    Inspect {
        /// A plugin directory, a module name (`vx_filters`, searched) or a path to `lib<name>.so`;
        /// none: every module of the search path.
        module: Option<String>,
        /// A kernel of the module to describe in detail: its full name (`filters.sobel3x3`) or a
        /// unique short one (`sobel3x3`).
        kernel: Option<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        dirs: ModuleDirs,
    },
    /// Run a graph described in a TOML file.
    Run {
        #[command(flatten)]
        graph: GraphArgs,
        /// Frames to process (default: the file's `frames`, else 1).
        #[arg(long, value_parser = parse_frames)]
        frames: Option<u64>,
        /// No progress bar and no time table.
        #[arg(long, short)]
        quiet: bool,
        #[command(flatten)]
        dirs: ModuleDirs,
    },
    /// Make a new kernel-module crate: a tiling kernel, a user kernel, tests that pass, a README.
    New(new::NewArgs),
    /// Serve a graph, reloading modules from a directory whenever they change.
    Watch {
        /// The plugin directory to watch (modules are loaded from it).
        dir: PathBuf,
        #[command(flatten)]
        graph: GraphArgs,
        /// Frames per second.
        #[arg(long, default_value_t = run::DEFAULT_FPS, value_parser = parse_fps)]
        fps: f64,
        /// Write the outputs every N frames (each written whole, then renamed into place), besides
        /// after every reload and at the end.
        #[arg(long, value_name = "N", value_parser = parse_frames)]
        write_every: Option<u64>,
        /// Stop after this many seconds (default: run until interrupted).
        #[arg(long, value_parser = parse_seconds)]
        seconds: Option<f64>,
        /// Reload a module even when its new version drops (or renames) a kernel a node of the
        /// graph uses: those nodes keep the old code (vx names them). Without it such a reload is
        /// refused and the running version keeps serving.
        #[arg(long)]
        force_reload: bool,
        #[command(flatten)]
        dirs: ModuleDirs,
    },
}

/// `--frames`: a whole number of frames, at least 1.
fn parse_frames(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("`{s}` is not a whole number of frames (at least 1)")),
    }
}

/// `--fps`: a rate from 0.01 to 10000 frames per second.
fn parse_fps(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(f) if (0.01..=10_000.0).contains(&f) => Ok(f),
        _ => Err(format!("`{s}` is not a rate from 0.01 to 10000 frames per second")),
    }
}

/// `--seconds`: a positive, finite duration of at most a year.
fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(f) if f > 0.0 && f <= 365.0 * 86400.0 => Ok(f),
        _ => Err(format!("`{s}` is not a number of seconds above 0 (at most a year)")),
    }
}

/// `--target NAME[:threads=N][:cores=A,B,…][:queue_depth=N]`.
fn parse_target(s: &str) -> Result<TargetConfig, String> {
    let mut parts = s.split(':');
    let name = parts.next().unwrap_or_default();
    let mut t = TargetConfig::new(name);
    for part in parts {
        let (k, v) = part.split_once('=').ok_or_else(|| {
            format!("`{part}` is not KEY=VALUE (keys: threads, cores, queue_depth; e.g. dsp:threads=2:cores=0,1)")
        })?;
        let number = |v: &str, max: usize| match v.trim().parse::<usize>() {
            Ok(n) if (1..=max).contains(&n) => Ok(n),
            _ => Err(format!("{k}: `{v}` is not a whole number from 1 to {max}")),
        };
        match k {
            "threads" => t = t.threads(number(v, MAX_THREADS)?),
            "queue_depth" => t = t.queue_depth(number(v, MAX_QUEUE_DEPTH)?),
            "cores" => {
                let cores = v
                    .split(',')
                    .map(|c| c.trim().parse::<usize>().map_err(|_| format!("cores: `{c}` is not a core number")))
                    .collect::<Result<Vec<_>, _>>()?;
                t = t.pin_to_cores(&cores);
            }
            other => return Err(format!("unknown key `{other}` (valid keys: threads, cores, queue_depth)")),
        }
    }
    graph_file::check_target(&t, "target").map(|()| t)
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
    /// Interrupted before there was anything to write (130).
    pub(crate) fn interrupted(m: impl Into<String>) -> Failure {
        Failure { code: signals::SECOND_SIGNAL_EXIT as u8, message: m.into() }
    }
}

/// `vx` with the process's arguments: runs the command and gives its exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // Warnings (a graph that leaves pixels unwritten, a reload refused) are shown by default.
    let given = cli.log.clone().or_else(|| std::env::var("RUST_LOG").ok().filter(|f| !f.trim().is_empty()));
    let filter = given.clone().unwrap_or_else(|| "warn".to_owned());
    match tracing_subscriber::EnvFilter::try_new(&filter) {
        Ok(f) => {
            use std::io::IsTerminal;
            use tracing_subscriber::layer::SubscriberExt;
            use tracing_subscriber::util::SubscriberInitExt;
            use tracing_subscriber::{Layer, filter::filter_fn};
            let fmt = tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(std::io::stderr().is_terminal());
            if given.is_some() {
                tracing_subscriber::registry().with(fmt.with_filter(f)).init();
            } else {
                // The default shows warnings to people: no time stamps, and not the events that
                // repeat what `vx` reports itself — an error a call returns (an `error` field), the
                // watcher's outcomes (a `reload` field; `vx watch` prints each).
                let not_echo = filter_fn(|m| {
                    let has = |f: &str| m.fields().field(f).is_some();
                    !((*m.level() == tracing_subscriber::filter::LevelFilter::ERROR && has("error"))
                        || (m.target() == "vx::watcher" && has("reload")))
                });
                tracing_subscriber::registry().with(fmt.without_time().with_filter(f).with_filter(not_echo)).init();
            }
        }
        Err(e) => {
            note!("vx: --log / RUST_LOG: `{filter}` is not a tracing filter: {e}");
            return ExitCode::from(2);
        }
    }
    let dirs = |d: ModuleDirs| [cli.module_dirs.clone(), d.module_dirs].concat();
    let result = match cli.command {
        Command::Inspect { module, kernel, json, dirs: d } => {
            run::inspect(&dirs(d), module.as_deref(), kernel.as_deref(), json)
        }
        Command::Run { graph, frames, quiet, dirs: d } => run::run(&dirs(d), &graph, frames, quiet),
        Command::New(_) if !cli.module_dirs.is_empty() => {
            Err(Failure::usage("-M / --module-dir is for inspect, run and watch; `vx new` loads no module"))
        }
        Command::New(args) => new::new(&args),
        Command::Watch { dir, graph, fps, write_every, seconds, force_reload, dirs: d } => {
            let serve = run::Serve { fps, write_every, seconds, force_reload };
            run::watch(&dirs(d), &dir, &graph, &serve)
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            note!("vx: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}
