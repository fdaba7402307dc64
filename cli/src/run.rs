//! The commands: `inspect`, `run` (frames with a progress bar, then the time table and the output
//! files) and `watch` (the hot-reload service: a module directory watched while frames run).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use vx::{Context, ModuleWatcher, WatchOptions};

use crate::Failure;
use crate::graph_file::{BuiltGraph, GraphFile, Vars, write_image};
use crate::inspect;

fn context(module_dirs: &[PathBuf], threads: Option<usize>) -> Result<Context, Failure> {
    let mut b = Context::builder();
    if let Some(n) = threads {
        b = b.threads(n);
    }
    let ctx = b.build().map_err(|e| Failure::usage(e.to_string()))?;
    for d in module_dirs {
        ctx.add_module_dir(d.clone());
    }
    Ok(ctx)
}

/// `vx inspect`.
pub(crate) fn inspect(module_dirs: &[PathBuf], module: &str, json: bool) -> Result<(), Failure> {
    let ctx = context(module_dirs, Some(1))?;
    let name = inspect::load(&ctx, module)?;
    let r = inspect::report(&ctx, &name)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&r).expect("a report serializes"));
    } else {
        print!("{}", inspect::text(&r));
    }
    Ok(())
}

fn setup(
    module_dirs: &[PathBuf],
    graph: &Path,
    set: &[(String, String)],
    threads: Option<usize>,
) -> Result<(Context, GraphFile, Vars), Failure> {
    let file = GraphFile::read(graph)?;
    let vars = Vars::new(&file, graph, set);
    let ctx = context(module_dirs, threads.or(file.threads))?;
    for m in &file.modules {
        inspect::load(&ctx, m)?;
    }
    Ok((ctx, file, vars))
}

fn us(d: Duration) -> String {
    format!("{:>9.1} µs", d.as_secs_f64() * 1e6)
}

fn time_table(b: &BuiltGraph) -> Result<String, Failure> {
    use std::fmt::Write;
    let mut s = String::new();
    let perf = b.graph.node_perf().map_err(|e| Failure::process(e.to_string()))?;
    let kw = perf.iter().map(|(_, k, _)| k.len()).max().unwrap_or(6).max(6);
    let nw = perf.iter().map(|(n, _, _)| n.len()).max().unwrap_or(4).max(5);
    let _ = writeln!(s, "{:<nw$}  {:<kw$}  {:>12} {:>12} {:>12}", "node", "kernel", "avg", "min", "max");
    for (node, kernel, p) in &perf {
        let _ = writeln!(s, "{node:<nw$}  {kernel:<kw$}  {} {} {}", us(p.avg()), us(p.min), us(p.max));
    }
    let g = b.graph.perf().map_err(|e| Failure::process(e.to_string()))?;
    let _ = writeln!(s, "{:<nw$}  {:<kw$}  {} {} {}", "graph", "", us(g.avg()), us(g.min), us(g.max));
    Ok(s)
}

/// `vx run`.
pub(crate) fn run(
    module_dirs: &[PathBuf],
    graph: &Path,
    set: &[(String, String)],
    frames: Option<u64>,
    threads: Option<usize>,
    quiet: bool,
) -> Result<(), Failure> {
    let (ctx, file, vars) = setup(module_dirs, graph, set, threads)?;
    let built = file.build(&ctx, &vars)?;
    let frames = frames.or(file.frames).unwrap_or(1);
    let bar = if quiet { ProgressBar::hidden() } else { ProgressBar::new(frames) };
    bar.set_style(
        ProgressStyle::with_template("{spinner} frame {pos}/{len} [{bar:30}] {per_sec} eta {eta}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    for f in 0..frames {
        built.graph.process().map_err(|e| Failure::process(format!("frame {f}: {e}")))?;
        bar.inc(1);
    }
    bar.finish_and_clear();
    for (name, img, path) in &built.outputs {
        write_image(img, path)?;
        if !quiet {
            println!("{name} -> {}", path.display());
        }
    }
    if !quiet {
        println!("\n{} frame(s) of graph '{}'\n", frames, file.name.as_deref().unwrap_or("graph"));
        print!("{}", time_table(&built)?);
    }
    Ok(())
}

/// `vx watch`.
pub(crate) fn watch(
    module_dirs: &[PathBuf],
    dir: &Path,
    graph: &Path,
    set: &[(String, String)],
    seconds: Option<f64>,
) -> Result<(), Failure> {
    let mut dirs = vec![dir.to_path_buf()];
    dirs.extend_from_slice(module_dirs);
    let (ctx, file, vars) = setup(&dirs, graph, set, None)?;
    let built = file.build(&ctx, &vars)?;
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
    eprintln!("vx: serving graph '{}' from {}", file.name.as_deref().unwrap_or("graph"), dir.display());
    let (start, mut frames, mut errors) = (Instant::now(), 0u64, 0u64);
    let mut last = Instant::now();
    while seconds.is_none_or(|s| start.elapsed().as_secs_f64() < s) {
        match built.graph.process() {
            Ok(()) => frames += 1,
            Err(e) => {
                errors += 1;
                eprintln!("vx: frame {frames}: {e}");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        if reloaded.swap(false, Ordering::AcqRel) || last.elapsed() >= Duration::from_secs(5) {
            eprintln!("vx: {frames} frames, {errors} errors, {:.0} s", start.elapsed().as_secs_f64());
            last = Instant::now();
        }
    }
    for (_, img, path) in &built.outputs {
        write_image(img, path)?;
    }
    println!("{frames} frames, {errors} errors");
    if errors > 0 { Err(Failure::process(format!("{errors} frame(s) failed"))) } else { Ok(()) }
}
