//! The commands: `inspect`, `run` (frames with a progress bar, then the output files and the time
//! table) and `watch` (the hot-reload service: a module directory watched while frames run at a
//! steady rate). `run` and `watch` check the graph file, its input files and its outputs'
//! directories before any module is loaded, and stop cleanly on SIGINT / SIGTERM (`signals.rs`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use vx::{Context, ModuleWatcher, TargetConfig, WatchOptions};

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
            let dirs: Vec<_> = ctx.module_search_path().iter().map(|d| inspect::list_dir(d)).collect();
            if json { to_json(&inspect::SearchPath { search_path: dirs }) } else { inspect::search_path_text(&dirs) }
        }
        (Some(m), None) if Path::new(m).is_dir() => {
            let dir = Path::new(m);
            std::fs::read_dir(dir)
                .map_err(|e| Failure::usage(format!("cannot read the plugin directory {}: {e}", dir.display())))?;
            let r = inspect::list_dir(dir);
            if json { to_json(&r) } else { inspect::dir_text(&r) }
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
    for (name, out) in file.outputs() {
        output::check_writable(&out.path, &format!("image '{name}'"))?;
    }
    Ok(file)
}

/// The context (with the file's and the command line's targets), modules loaded, graph built.
fn setup(module_dirs: &[PathBuf], args: &GraphArgs, file: &GraphFile) -> Result<(Context, BuiltGraph), Failure> {
    let threads = args.threads.map(|n| n as usize).or(file.threads);
    let ctx = context(module_dirs, threads, &file.targets)?;
    for m in &file.modules {
        inspect::load(&ctx, m)?;
    }
    let built = file.build(&ctx)?;
    Ok((ctx, built))
}

/// Write every output (all are tried; the errors are reported together, exit code 1).
fn write_outputs(built: &BuiltGraph) -> Result<Vec<String>, Failure> {
    let mut written = Vec::new();
    let mut errors = Vec::new();
    for (name, img, out) in &built.outputs {
        match encode_image(img, out.encoding)
            .map_err(|e| format!("cannot write {}: {e}", out.path.display()))
            .and_then(|bytes| output::write_file(&out.path, &bytes))
        {
            Ok(()) => written.push(format!("{name} -> {}\n", out.path.display())),
            Err(e) => errors.push(format!("image '{name}': {e}")),
        }
    }
    if errors.is_empty() { Ok(written) } else { Err(Failure::process(errors.join("\nvx: "))) }
}

fn us(d: Duration) -> String {
    format!("{:>9.1} µs", d.as_secs_f64() * 1e6)
}

fn time_table(b: &BuiltGraph) -> Result<String, Failure> {
    use std::fmt::Write;
    let fail = |e: vx::Error| Failure::process(e.to_string());
    let mut rows = Vec::new();
    for (name, node) in &b.nodes {
        rows.push((
            name.clone(),
            node.kernel_name().map_err(fail)?,
            node.target().map_err(fail)?,
            node.perf().map_err(fail)?,
        ));
    }
    let nw = rows.iter().map(|r| r.0.len()).max().unwrap_or(0).max(5);
    let kw = rows.iter().map(|r| r.1.len()).max().unwrap_or(0).max(6);
    let tw = rows.iter().map(|r| r.2.len()).max().unwrap_or(0).max(6);
    let mut s = String::new();
    let _ =
        writeln!(s, "{:<nw$}  {:<kw$}  {:<tw$}  {:>12} {:>12} {:>12}", "node", "kernel", "target", "avg", "min", "max");
    for (node, kernel, target, p) in &rows {
        let _ = writeln!(s, "{node:<nw$}  {kernel:<kw$}  {target:<tw$}  {} {} {}", us(p.avg()), us(p.min), us(p.max));
    }
    let g = b.graph.perf().map_err(fail)?;
    let _ = writeln!(s, "{:<nw$}  {:<kw$}  {:<tw$}  {} {} {}", "graph", "", "", us(g.avg()), us(g.min), us(g.max));
    Ok(s)
}

/// `vx run`.
pub(crate) fn run(module_dirs: &[PathBuf], args: &GraphArgs, frames: Option<u64>, quiet: bool) -> Result<(), Failure> {
    let stop = Stop::install()?;
    let file = prepare(args)?;
    let frames = frames.or(file.frames).unwrap_or(1);
    let (_ctx, built) = setup(module_dirs, args, &file)?;
    if !quiet {
        eprintln!("vx: running {frames} frame(s) of graph '{}' (Ctrl-C: stop after the current frame)", file.name);
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
        eprintln!("vx: {sig}: stopped after frame {done} of {frames}; writing the outputs");
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
        output::print(&s)?;
    }
    Ok(())
}

/// `vx watch`.
pub(crate) fn watch(
    module_dirs: &[PathBuf],
    dir: &Path,
    args: &GraphArgs,
    fps: f64,
    seconds: Option<f64>,
) -> Result<(), Failure> {
    let stop = Stop::install()?;
    if !dir.is_dir() {
        return Err(Failure::usage(format!("cannot watch {}: not a directory", dir.display())));
    }
    let file = prepare(args)?;
    let mut dirs = vec![dir.to_path_buf()];
    dirs.extend_from_slice(module_dirs);
    let (ctx, built) = setup(&dirs, args, &file)?;
    let reloaded = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&reloaded);
    let options = WatchOptions { load_new: false, ..WatchOptions::default() };
    let _watcher = ModuleWatcher::start(&ctx, dir, options, move |e| {
        match &e.result {
            Ok(()) => eprintln!("vx: module '{}' reloaded; the next frame runs the new code", e.module),
            Err(err) => eprintln!("vx: module '{}' not reloaded (the running version keeps serving): {err}", e.module),
        }
        flag.store(true, Ordering::Release);
    })
    .map_err(|e| Failure::usage(e.to_string()))?;
    eprintln!(
        "vx: serving graph '{}' from {} at {fps} frames/s (Ctrl-C: stop after the current frame)",
        file.name,
        dir.display()
    );
    let period = Duration::from_secs_f64(1.0 / fps);
    let (start, mut frames, mut errors) = (Instant::now(), 0u64, 0u64);
    let (mut last, mut next) = (start, start);
    while stop.asked().is_none() && seconds.is_none_or(|s| start.elapsed().as_secs_f64() < s) {
        match built.graph.process() {
            Ok(()) => frames += 1,
            Err(e) => {
                errors += 1;
                eprintln!("vx: frame {frames}: {e}");
            }
        }
        if reloaded.swap(false, Ordering::AcqRel) || last.elapsed() >= Duration::from_secs(5) {
            eprintln!("vx: {frames} frames, {errors} errors, {:.0} s", start.elapsed().as_secs_f64());
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
        eprintln!("vx: {sig}: stopped after frame {frames}; writing the outputs");
    }
    let written = write_outputs(&built)?;
    let stopped = sig.map(|s| format!(" (stopped by {s})")).unwrap_or_default();
    output::print(&format!(
        "{}{frames} frames, {errors} errors in {elapsed:.1} s ({:.1} frames/s){stopped}\n",
        written.concat(),
        frames as f64 / elapsed.max(1e-9)
    ))?;
    if errors > 0 { Err(Failure::process(format!("{errors} frame(s) failed"))) } else { Ok(()) }
}
