//! The commands: `inspect`, `run` (frames with a progress bar, then the output files and the time
//! table) and `watch` (the hot-reload service: a module directory watched while frames run at a
//! steady rate). `run` and `watch` check the graph file, its input files and its outputs'
//! directories before any module is loaded, and stop cleanly on SIGINT / SIGTERM (`signals.rs`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use vx::{Context, ErrorKind, ModuleWatcher, ReloadOptions, TargetConfig, WatchEvent, WatchOptions};

use crate::graph_file::{BuiltGraph, GraphFile, encode_image};
use crate::signals::Stop;
use crate::{Failure, GraphArgs, inspect, output};

/// `vx watch`'s frame rate when `--fps` is not given.
pub(crate) const DEFAULT_FPS: f64 = 30.0;

fn context(module_dirs: &[PathBuf], threads: Option<usize>, targets: &[TargetConfig]) -> Result<Context, Failure> {
    let mut b = Context::builder();
    if let Some(n) = threads {
        b = b.threads(n);
    }
    for t in targets {
        b = b.target(t.clone());
    }
    let ctx = b.build().map_err(|e| Failure::usage(e.to_string()))?;
    for d in module_dirs {
        ctx.add_module_dir(d.clone());
    }
    Ok(ctx)
}

/// `vx inspect`.
pub(crate) fn inspect(
    module_dirs: &[PathBuf],
    module: Option<&str>,
    kernel: Option<&str>,
    json: bool,
) -> Result<(), Failure> {
    let text = match (module, kernel) {
        (None, _) => {
            let ctx = context(module_dirs, Some(1), &[])?;
            let dirs: Vec<_> = ctx.module_search_path().iter().map(|d| inspect::list_dir(d, true)).collect();
            if json { to_json(&inspect::SearchPath { search_path: dirs }) } else { inspect::search_path_text(&dirs) }
        }
        (Some(m), None) if Path::new(m).is_dir() => {
            let dir = Path::new(m);
            std::fs::read_dir(dir)
                .map_err(|e| Failure::usage(format!("cannot read the plugin directory {}: {e}", dir.display())))?;
            let r = inspect::list_dir(dir, false);
            if json { to_json(&r) } else { inspect::dir_text(&r) }
        }
        (Some(m), Some(k)) if Path::new(m).is_dir() => {
            // A kernel of one of the directory's modules.
            let dir = Path::new(m);
            let listed = inspect::list_dir(dir, true);
            // The module with a kernel of that full name; else the one whose kernel has it as a
            // short name (`gaussian3x3` for `filters.gaussian3x3`), refused when several have.
            let exact = listed.modules.iter().find(|l| l.kernels.iter().any(|n| n == k));
            let fits: Vec<_> =
                listed.modules.iter().filter(|l| l.kernels.iter().any(|n| inspect::short_name_of(n, k))).collect();
            if exact.is_none() && fits.len() > 1 {
                let names: Vec<String> = fits
                    .iter()
                    .flat_map(|l| {
                        l.kernels.iter().filter(|n| inspect::short_name_of(n, k)).map(|n| format!("{n} ({})", l.name))
                    })
                    .collect();
                return Err(Failure::usage(format!(
                    "kernel name '{k}' is ambiguous in {}: it could be {}; give the full name",
                    dir.display(),
                    names.join(" or ")
                )));
            }
            let Some(module) = exact.or(fits.first().copied()) else {
                let names: Vec<&str> = listed.modules.iter().map(|l| l.name.as_str()).collect();
                return Err(Failure::usage(format!(
                    "no module of {} has a kernel '{k}' (its modules: {}; `vx inspect {}` lists their kernels)",
                    dir.display(),
                    if names.is_empty() { "none".to_owned() } else { names.join(", ") },
                    dir.display()
                )));
            };
            // Not the -M directories: the directory given comes first.
            let ctx = context(&[], Some(1), &[])?;
            let name = inspect::load(&ctx, &module.file.display().to_string())?;
            let r = inspect::report(&ctx, &name)?;
            let d = inspect::kernel_details(&r, k)?;
            if json { to_json(&d) } else { inspect::kernel_text(&d) }
        }
        (Some(m), kernel) => {
            let ctx = context(module_dirs, Some(1), &[])?;
            let name = inspect::load(&ctx, m)?;
            let r = inspect::report(&ctx, &name)?;
            match kernel {
                None if json => to_json(&r),
                None => inspect::text(&r),
                Some(k) => {
                    let d = inspect::kernel_details(&r, k)?;
                    if json { to_json(&d) } else { inspect::kernel_text(&d) }
                }
            }
        }
    };
    output::print(&text)
}

/// JSON of a report, pretty-printed, with a final newline.
fn to_json<T: serde::Serialize>(v: &T) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}

/// Read and check the graph file, then its inputs (readable) and outputs (writable): everything
/// before any work.
fn prepare(args: &GraphArgs) -> Result<GraphFile, Failure> {
    let file = GraphFile::read(&args.graph, &args.overrides())?;
    for (name, path) in file.inputs() {
        std::fs::File::open(path)
            .map_err(|e| Failure::usage(format!("image '{name}': cannot read {}: {e}", path.display())))?;
    }
    let mut seen: Vec<(PathBuf, &str)> = Vec::new();
    for (name, out) in file.outputs() {
        output::check_writable(&out.path, &format!("image '{name}'"))?;
        // The same file under two spellings (`./o.png` and `o.png`): the canonical directory and
        // the file name.
        if let Some(id) = output::identity(&out.path) {
            if let Some((_, other)) = seen.iter().find(|(i, _)| *i == id) {
                return Err(Failure::usage(format!(
                    "{}: [images.{other}] and [images.{name}] write the same file ({})",
                    args.graph.display(),
                    id.display()
                )));
            }
            seen.push((id, name));
        }
    }
    Ok(file)
}

/// The context (with the file's and the command line's targets), modules loaded, graph built.
/// Each module loaded is named with its file and build (unless `quiet`); a debug build, whose
/// kernels `why` (are timed, are served) unoptimized, gets a warning whatever `quiet` says.
fn setup(
    module_dirs: &[PathBuf],
    args: &GraphArgs,
    file: &GraphFile,
    quiet: bool,
    why: &str,
) -> Result<(Context, BuiltGraph), Failure> {
    let threads = args.threads.map(|n| n as usize).or(file.threads);
    let ctx = context(module_dirs, threads, &file.targets)?;
    for m in &file.modules {
        let name = inspect::load(&ctx, m)?;
        if let Some(info) = ctx.module_info(&name) {
            if !quiet {
                note!("vx: module {} {} from {} ({})", info.name, info.version, info.file.display(), info.build);
            }
            if info.build == vx::ModuleBuild::Debug {
                note!(
                    "vx: warning: module '{}' is a debug build: {why} unoptimized code, many times slower than a \
                     release build (cargo build --release, then -M target/release)",
                    info.name
                );
            }
        }
    }
    let built = file.build(&ctx)?;
    Ok((ctx, built))
}

/// A warning for each output whose valid rectangle does not cover the whole image: pixels no node
/// wrote (a tiling kernel without a flexible function whose blocks do not divide the image, say).
fn warn_partial_outputs(built: &BuiltGraph) {
    for (name, img, out) in &built.outputs {
        let (w, h) = (img.width(), img.height());
        let v = img.valid_region();
        if (v.start_x, v.start_y, v.end_x, v.end_y) != (0, 0, w, h) {
            let (vw, vh) = (v.end_x.saturating_sub(v.start_x), v.end_y.saturating_sub(v.start_y));
            note!(
                "vx: warning: output '{name}' ({}): only {vw}x{vh} of {w}x{h} pixels are valid (x {}..{}, y {}..{}); \
                 the rest was not written by any node",
                out.path.display(),
                v.start_x,
                v.end_x,
                v.start_y,
                v.end_y
            );
        }
    }
}

/// True when some output goes to standard output (`-`, `/dev/stdout`): then `vx`'s own report
/// goes to standard error, not into the image's bytes.
fn writes_stdout(built: &BuiltGraph) -> bool {
    built.outputs.iter().any(|(_, _, out)| output::is_stdout(&out.path))
}

/// Print the report `s`: on standard output, or on standard error when an image went there.
fn report(built: &BuiltGraph, s: &str) -> Result<(), Failure> {
    if writes_stdout(built) { output::eprint(s) } else { output::print(s) }
}

/// Write every output (all are tried; the errors are reported together, exit code 1).
fn write_outputs(built: &BuiltGraph) -> Result<Vec<String>, Failure> {
    warn_partial_outputs(built);
    let mut written = Vec::new();
    let mut errors = Vec::new();
    for (name, img, out) in &built.outputs {
        match write_output(img, out) {
            Ok(()) => written.push(format!("{name} -> {}\n", out.path.display())),
            Err(e) => errors.push(format!("image '{name}': {e}")),
        }
    }
    if errors.is_empty() { Ok(written) } else { Err(Failure::process(errors.join("\nvx: "))) }
}

/// Encode `img` as `out` says and write it (whole, then renamed into place).
fn write_output(img: &vx::Image, out: &crate::graph_file::Output) -> Result<(), String> {
    encode_image(img, out.encoding)
        .map_err(|e| format!("cannot write {}: {e}", out.path.display()))
        .and_then(|bytes| output::write_file(&out.path, &bytes))
}

fn us(d: Duration) -> String {
    format!("{:>9.1} µs", d.as_secs_f64() * 1e6)
}

fn time_table(b: &BuiltGraph) -> Result<String, Failure> {
    use std::fmt::Write;
    let fail = |e: vx::Error| Failure::process(e.to_string());
    // One row per unit that runs: a node, or a fused group (its members share one time).
    let table = b.graph.perf_table().map_err(fail)?;
    let mut rows = Vec::new();
    for r in &table.rows {
        let leader = b.nodes.iter().find(|(name, _)| *name == r.nodes[0]).map(|(_, n)| n);
        let target = match leader {
            Some(n) => n.target().map_err(fail)?,
            None => String::new(),
        };
        rows.push((r.label(), r.kernel_label(), target, r.perf));
    }
    let nw = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0).max(5);
    let kw = rows.iter().map(|r| r.1.chars().count()).max().unwrap_or(0).max(6);
    let tw = rows.iter().map(|r| r.2.chars().count()).max().unwrap_or(0).max(6);
    let mut s = String::new();
    let _ =
        writeln!(s, "{:<nw$}  {:<kw$}  {:<tw$}  {:>12} {:>12} {:>12}", "node", "kernel", "target", "avg", "min", "max");
    for (node, kernel, target, p) in &rows {
        let _ = writeln!(s, "{node:<nw$}  {kernel:<kw$}  {target:<tw$}  {} {} {}", us(p.avg()), us(p.min), us(p.max));
    }
    let g = table.graph;
    let _ = writeln!(s, "{:<nw$}  {:<kw$}  {:<tw$}  {} {} {}", "graph", "", "", us(g.avg()), us(g.min), us(g.max));
    let fusion = b.graph.fusion_report().map_err(fail)?;
    if fusion.enabled {
        let _ = write!(s, "\n{fusion}");
    }
    Ok(s)
}

/// `vx run`.
pub(crate) fn run(module_dirs: &[PathBuf], args: &GraphArgs, frames: Option<u64>, quiet: bool) -> Result<(), Failure> {
    let stop = Stop::install()?;
    let file = prepare(args)?;
    let frames = frames.or(file.frames).unwrap_or(1);
    let (_ctx, built) = setup(module_dirs, args, &file, quiet, "the times are of")?;
    if !quiet {
        note!("vx: running {frames} frame(s) of graph '{}' (Ctrl-C: stop after the current frame)", file.name);
    }
    let bar = if quiet { ProgressBar::hidden() } else { ProgressBar::new(frames) };
    bar.set_style(
        ProgressStyle::with_template("{spinner} frame {pos}/{len} [{bar:30}] {per_sec} eta {eta}")
            .map_err(|e| Failure::process(e.to_string()))?
            .progress_chars("=> "),
    );
    let mut done = 0u64;
    while done < frames && stop.asked().is_none() {
        built.graph.process().map_err(|e| Failure::process(format!("frame {done}: {e}")))?;
        done += 1;
        bar.inc(1);
    }
    bar.finish_and_clear();
    let interrupted = stop.asked().filter(|_| done < frames);
    if let Some(sig) = interrupted {
        if done == 0 {
            return Err(Failure::interrupted(format!(
                "{sig} before the first frame: nothing processed, nothing written"
            )));
        }
        note!("vx: {sig}: stopped after frame {done} of {frames}; writing the outputs");
    }
    let written = write_outputs(&built)?;
    if !quiet {
        let mut s = written.concat();
        let stopped = match interrupted {
            Some(sig) => format!(" (stopped by {sig}; {frames} asked)"),
            None => String::new(),
        };
        s.push_str(&format!("\n{done} frame(s) of graph '{}'{stopped}\n\n", file.name));
        s.push_str(&time_table(&built)?);
        report(&built, &s)?;
    }
    Ok(())
}

/// What `vx watch` says about one of its watcher's events (lines ending in a newline).
fn reload_message(e: &WatchEvent) -> String {
    match (&e.result, &e.report) {
        (Ok(()), Some(r)) if !r.left_on_old.is_empty() => {
            let nodes: Vec<String> = r
                .left_on_old
                .iter()
                .map(|n| format!("node '{}' of graph '{}' ({})", n.node, n.graph, n.kernel))
                .collect();
            format!(
                "vx: module '{}' reloaded (forced: version {} no longer publishes kernels live nodes use); the next \
                 frame runs the new code, except these nodes, which keep the old code: {}\n",
                e.module,
                r.to,
                nodes.join(", ")
            )
        }
        (Ok(()), _) => format!("vx: module '{}' reloaded; the next frame runs the new code\n", e.module),
        (Err(err), _) if err.kind() == ErrorKind::ReferenceNonzero => format!(
            "vx: module '{}' not reloaded (the running version keeps serving): {}\nvx: restart `vx watch` to \
             rebuild the graph with the new version, or run with --force-reload\n",
            e.module,
            // The command's flag, not the Rust API the library's message names.
            err.to_string().replace("(ReloadOptions::force)", "(--force-reload)")
        ),
        (Err(err), _) => format!("vx: module '{}' not reloaded (the running version keeps serving): {err}\n", e.module),
    }
}

/// How `vx watch` serves: its rate, when it writes, how long, whether reloads are forced.
pub(crate) struct Serve {
    pub(crate) fps: f64,
    /// Write the outputs every this many frames (besides after each reload and at the end).
    pub(crate) write_every: Option<u64>,
    pub(crate) seconds: Option<f64>,
    pub(crate) force_reload: bool,
}

/// Write the outputs while serving (after a reload, or every N frames): file outputs only (an
/// image on standard output is written once, at the end), each whole and renamed into place, so a
/// viewer never sees half a file. A failure is reported and serving goes on.
fn write_while_serving(built: &BuiltGraph, frame: u64, why: &str) {
    for (name, img, out) in built.outputs.iter().filter(|(_, _, o)| !output::is_stdout(&o.path)) {
        match write_output(img, out) {
            Ok(()) => note!("vx: frame {frame} ({why}): {name} -> {}", out.path.display()),
            Err(e) => note!("vx: frame {frame} ({why}): image '{name}' not written: {e}"),
        }
    }
}

/// `vx watch`.
pub(crate) fn watch(module_dirs: &[PathBuf], dir: &Path, args: &GraphArgs, serve: &Serve) -> Result<(), Failure> {
    let Serve { fps, write_every, seconds, force_reload } = *serve;
    let stop = Stop::install()?;
    if !dir.is_dir() {
        return Err(Failure::usage(format!("cannot watch {}: not a directory", dir.display())));
    }
    let file = prepare(args)?;
    let mut dirs = vec![dir.to_path_buf()];
    dirs.extend_from_slice(module_dirs);
    let (ctx, built) = setup(&dirs, args, &file, false, "the graph serves")?;
    let reloaded = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&reloaded);
    let options = WatchOptions { load_new: false, ..WatchOptions::default() };
    let reload = ReloadOptions::new().force(force_reload);
    let _watcher = ModuleWatcher::start_with_reload(&ctx, dir, options, reload, move |e| {
        output::note(reload_message(e).trim_end());
        flag.store(true, Ordering::Release);
    })
    .map_err(|e| Failure::usage(e.to_string()))?;
    note!(
        "vx: serving graph '{}' from {} at {fps} frames/s (Ctrl-C: stop after the current frame)",
        file.name,
        dir.display()
    );
    let period = Duration::from_secs_f64(1.0 / fps);
    let (start, mut frames, mut errors) = (Instant::now(), 0u64, 0u64);
    let (mut last, mut next) = (start, start);
    // A reload was seen: the next frame that succeeds runs the new code, and its outputs are written.
    let mut write_after_reload = false;
    while stop.asked().is_none() && seconds.is_none_or(|s| start.elapsed().as_secs_f64() < s) {
        match built.graph.process() {
            Ok(()) => {
                frames += 1;
                if write_after_reload {
                    write_while_serving(&built, frames, "the first after the reload");
                    write_after_reload = false;
                } else if write_every.is_some_and(|n| frames % n == 0) {
                    write_while_serving(&built, frames, "--write-every");
                }
            }
            Err(e) => {
                errors += 1;
                note!("vx: frame {frames}: {e}");
            }
        }
        let reload_seen = reloaded.swap(false, Ordering::AcqRel);
        write_after_reload |= reload_seen;
        if reload_seen || last.elapsed() >= Duration::from_secs(5) {
            note!("vx: {frames} frames, {errors} errors, {:.0} s", start.elapsed().as_secs_f64());
            last = Instant::now();
        }
        // A steady rate: the next frame at its time, or at once when late (no burst to catch up).
        next += period;
        let now = Instant::now();
        match (next > now, seconds) {
            (true, Some(s)) => stop.sleep((next - now).min(Duration::from_secs_f64(s).saturating_sub(start.elapsed()))),
            (true, None) => stop.sleep(next - now),
            (false, _) => next = now,
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    let sig = stop.asked();
    if frames == 0 {
        return match sig {
            Some(sig) => Err(Failure::interrupted(format!("{sig} before the first frame: nothing written"))),
            None => Err(Failure::process(format!("no frame succeeded ({errors} failed): nothing written"))),
        };
    }
    if let Some(sig) = sig {
        note!("vx: {sig}: stopped after frame {frames}; writing the outputs");
    }
    let written = write_outputs(&built)?;
    let stopped = sig.map(|s| format!(" (stopped by {s})")).unwrap_or_default();
    report(
        &built,
        &format!(
            "{}{frames} frames, {errors} errors in {elapsed:.1} s ({:.1} frames/s){stopped}\n",
            written.concat(),
            frames as f64 / elapsed.max(1e-9)
        ),
    )?;
    if errors > 0 { Err(Failure::process(format!("{errors} frame(s) failed"))) } else { Ok(()) }
}
