//! vx against OpenCV, kernel by kernel, with both sides' rounds interleaved (issue 29):
//! `cargo bench -p vx-tests --bench performance`, or `bash tests/benches/performance.sh`, which
//! first makes a Python virtual environment with `opencv-python-headless` and `numpy` under
//! `target/` and writes `docs/book/src/performance.md` from this bench's output.
//!
//! One OpenCV process stays up for the whole run (`opencv_bench.py --serve`); for every size,
//! kernel and thread count, each round times one batch of vx frames (a one-node graph of the
//! vx_filters kernel, outputs preallocated at verify) and then one batch of the same OpenCV calls
//! (outputs preallocated, `cv2.setNumThreads` = vx's threads), about 4 Mpixel per batch, one
//! untimed call before each batch. Printed per cell: vx and OpenCV ms per frame as min / median /
//! max over the rounds, and the ratio of the medians (OpenCV / vx: above 1, vx is faster); then the
//! machine (CPU model, cores, caches, SIMD level). The output is Markdown.
//!
//! `VX_BENCH_SIZES=640x480,1920x1080` limits the sizes; `VX_PERF_ROUNDS` (default 15) sets the
//! rounds; `VX_PERF_KERNELS=pipeline,copy` limits the kernels; `VX_PERF_OUT=path` also writes the
//! report to `path`.
//!
//! Halide (issue 34, `docs/design/fusion.md` §8): with `VX_PERF_HALIDE=1` (and only then: the
//! `halide` package is not part of the default venv's promise, and JIT-compiling the pipeline takes
//! a few seconds per size), a third long-lived process, `halide_bench.py --serve` (same line
//! protocol, `HL_NUM_THREADS` = the most threads measured), times the edge pipeline written in
//! Halide, interleaved in the same rounds as vx and OpenCV. Bit-exactness first: vx's pipeline
//! output (1 and 2 threads) on uniform noise (640×480 and 301×203, where about 70 % of the pixels
//! are edges) goes to `halide_bench.py --check`, and before timing each size, vx's output on the
//! bench picture to the serving process (`check`); each compares Halide's own output (1 and 2
//! threads) and the bench stops unless they are bit-identical. (On the smooth bench pictures no
//! gradient magnitude exceeds the level, 100: both outputs are all 0 there.) The
//! `pipeline` rows then leave the per-size kernel table (whose format does not change) for a table
//! of their own with a Halide column and `Halide / vx` (Halide median / vx median: above 1, vx is
//! faster). `HALIDE_SCHEDULE` (`line`, the default; `strip`; `tile`) picks the Halide schedule (see
//! `halide_bench.py`).
//!
//! G-API Fluid (issue 34's "≥ 4× G-API Fluid"): with `VX_PERF_GAPI=1` (independent of
//! `VX_PERF_HALIDE`; both give both columns), one more process, `gapi_bench.py --serve`, times the
//! edge pipeline as an OpenCV G-API graph compiled for the Fluid backend (nine Fluid operations in
//! one Fluid island, which the script checks from OpenCV's log when it loads a size), in the same
//! rounds. It needs `opencv-contrib-python-headless` (the plain wheel has no `cv2.gapi`);
//! `performance.sh` installs that instead of `opencv-python-headless` when the switch is on, and the
//! OpenCV column then runs on the contrib build. Its output is checked against vx's as Halide's is
//! (noise and the bench pictures); it is bit-identical by default, and with `GAPI_BLUR=gaussian`
//! (G-API's own `gaussianBlur`, which rounds differently) the script answers `inexact: …` with the
//! differing pixels' count, which the report prints instead of the bench stopping. Fluid runs on
//! one thread in this build (the 2-thread cells are serial) and G-API's Python bindings return a new
//! output array per call (see `gapi_bench.py`). Its columns: G-API Fluid ms and `G-API Fluid / vx`;
//! the report lists the `fused` cells below 4×.

#[path = "common/filters.rs"]
mod filters;

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write as _};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use filters::*;
use vx::{Context, Graph, Image, Rect};
use vx_tests::{build_module_profile, plugin_dir, workspace_root};

/// A long-lived Python process of the `--serve` line protocol: OpenCV's (`opencv_bench.py`),
/// Halide's (`halide_bench.py`) or G-API Fluid's (`gapi_bench.py`).
struct Server {
    _child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    name: &'static str,
}

impl Server {
    /// `tests/benches/{script} --serve` with `env` set, once it answers `version`.
    fn start(name: &'static str, script: &str, env: &[(&str, String)]) -> Option<Server> {
        let script = workspace_root().join("tests/benches").join(script);
        let mut child = Command::new("python3")
            .arg(script)
            .arg("--serve")
            .envs(env.iter().map(|(k, v)| (k, v)))
            // numpy's OpenBLAS starts a pool of threads that poll with `sched_yield` between BLAS
            // calls (none are made here); on a 2-core machine they took a core from vx's rounds
            // (`perf`: 18 % of samples in `blas_thread_server`, vx's 2-thread VGA cells 2-3× slower).
            // OpenCV's own threads are set per round by `cv2.setNumThreads`, Halide's by
            // `HL_NUM_THREADS`, not by this.
            .env("OPENBLAS_NUM_THREADS", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let input = child.stdin.take()?;
        let output = BufReader::new(child.stdout.take()?);
        let mut server = Server { _child: child, input, output, name };
        server.ask("version").filter(|v| !v.starts_with("error"))?;
        Some(server)
    }

    fn ask(&mut self, line: &str) -> Option<String> {
        writeln!(self.input, "{line}").ok()?;
        self.input.flush().ok()?;
        let mut answer = String::new();
        self.output.read_line(&mut answer).ok()?;
        Some(answer.trim().to_owned()).filter(|a| !a.is_empty())
    }

    /// Seconds per call of `op` over `calls` calls.
    fn time(&mut self, op: &str, threads: usize, calls: u32) -> Duration {
        let name = self.name;
        let a = self.ask(&format!("time {op} {threads} {calls}")).unwrap_or_else(|| panic!("{name} answered"));
        Duration::from_secs_f64(a.parse().unwrap_or_else(|_| panic!("{name}: {a}")))
    }
}

/// min / median / max of `v`.
fn spread(mut v: Vec<Duration>) -> [Duration; 3] {
    v.sort();
    [v[0], v[v.len() / 2], v[v.len() - 1]]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The machine: CPU model, cores, caches, SIMD level.
fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name").and_then(|r| r.split_once(':')).map(|(_, m)| m.trim().to_owned()))
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mut caches = Vec::new();
    for i in 0..8 {
        let d = format!("/sys/devices/system/cpu/cpu0/cache/index{i}");
        let read = |f: &str| std::fs::read_to_string(format!("{d}/{f}")).map(|s| s.trim().to_owned());
        let (Ok(level), Ok(kind), Ok(size)) = (read("level"), read("type"), read("size")) else { break };
        if kind != "Instruction" {
            caches.push(format!("L{level} {size}"));
        }
    }
    #[cfg(target_arch = "x86_64")]
    let simd = if std::is_x86_feature_detected!("avx512bw") {
        "AVX-512 (BW)"
    } else if std::is_x86_feature_detected!("avx2") {
        "AVX2"
    } else {
        "SSE2"
    };
    #[cfg(not(target_arch = "x86_64"))]
    let simd = "portable";
    format!("{model}; {cores} logical CPUs; caches (cpu0) {}; SIMD {simd}", caches.join(", "))
}

/// A cell: `min / **median** / max` in ms.
fn cell(d: &[Duration; 3]) -> String {
    format!("{:.3} / **{:.3}** / {:.3}", ms(d[0]), ms(d[1]), ms(d[2]))
}

/// A pipeline-only side of the edge pipeline's table (Halide, G-API Fluid): its serving process,
/// its script (for the one-shot `--check`) and that process's environment.
struct Side {
    server: Server,
    script: &'static str,
    env: Vec<(&'static str, String)>,
    /// What its checks answered when not bit-identical (`inexact: …`; only G-API's non-default
    /// `GAPI_BLUR=gaussian` says that), for the report.
    inexact: Vec<String>,
}

impl Side {
    /// `script --serve`, or exits with `hint` when it does not start.
    fn start(name: &'static str, script: &'static str, env: Vec<(&'static str, String)>, hint: &str) -> Side {
        let server = Server::start(name, script, &env).unwrap_or_else(|| {
            eprintln!("{hint}");
            std::process::exit(2);
        });
        Side { server, script, env, inexact: Vec::new() }
    }

    /// Takes a check's answer: "ok" passes, "inexact: …" is kept for the report (the side knows it
    /// is not bit-identical and says how), anything else panics.
    fn take(&mut self, answer: &str, what: &str) {
        let name = self.server.name;
        if answer == "ok" || answer.starts_with("ok;") {
            eprintln!("{name}'s pipeline output is bit-identical to vx's ({what})");
        } else if answer.starts_with("inexact:") {
            eprintln!("{name}'s pipeline output differs from vx's as documented ({what}): {answer}");
            self.inexact.push(format!("{what}: {answer}"));
        } else {
            panic!("{name}'s pipeline against vx's ({what}): {answer}");
        }
    }
}

/// A side's pipeline output against vx's (`g`'s output `out`, processed once here): the side's
/// process compares its own (1 and N threads) with vx's, written to `path`; panics unless identical
/// (or documented inexact, see [`Side::take`]).
fn check_side(side: &mut Side, g: &Graph, out: &Image, s: &Inputs, threads: usize, path: &std::path::Path) {
    g.process().unwrap();
    let mut px = vec![0u8; s.w as usize * s.h as usize];
    out.copy_to(Rect::full(s.w, s.h), 0, &mut px).unwrap();
    std::fs::write(path, &px).unwrap();
    let answer = side.server.ask(&format!("check {}", path.display())).unwrap_or_default();
    side.take(&answer, &format!("{}×{}, vx {threads} threads", s.w, s.h));
}

/// Each side's pipeline against vx's on uniform noise (the bench pictures are smooth: no gradient
/// magnitude reaches the threshold there, so their outputs are all 0 and compare nothing but that):
/// at 640×480 and at an odd 301×203, vx at 1 and 2 threads, through `SCRIPT --check` (the side at 1
/// and 2 threads). Panics unless bit-identical (or documented inexact), or if the noise's output is
/// not a mix of 0 and 255.
fn check_noise(ctxs: &[Context], sides: &mut [Side], dir: &std::path::Path) {
    for (w, h) in [(640u32, 480u32), (301, 203)] {
        let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ u64::from(w);
        let noise: Vec<u8> = (0..w * h)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (x >> 56) as u8
            })
            .collect();
        let (a_raw, out_raw) = (dir.join("noise.u8"), dir.join("vx_pipeline_noise.u8"));
        std::fs::write(&a_raw, &noise).unwrap();
        for (t, ctx) in ctxs.iter().enumerate() {
            let s = inputs(ctx, w, h, &noise, &noise);
            let (g, out) = pipeline_graph_out(ctx, &s);
            g.process().unwrap();
            let mut px = vec![0u8; (w * h) as usize];
            out.copy_to(Rect::full(w, h), 0, &mut px).unwrap();
            let edges = px.iter().filter(|&&p| p == 255).count();
            assert!(edges > 0 && edges < px.len(), "the noise's edges are a mix ({edges} of {})", px.len());
            std::fs::write(&out_raw, &px).unwrap();
            for side in sides.iter_mut() {
                let check = Command::new("python3")
                    .arg(workspace_root().join("tests/benches").join(side.script))
                    .arg("--check")
                    .args([a_raw.display().to_string(), w.to_string(), h.to_string(), out_raw.display().to_string()])
                    .envs(side.env.iter().map(|(k, v)| (k, v)))
                    .env("OPENBLAS_NUM_THREADS", "1")
                    .output()
                    .unwrap_or_else(|e| panic!("python3 {} --check: {e}", side.script));
                let said = String::from_utf8_lossy(&check.stdout).trim().to_owned();
                let what = format!("noise {w}×{h}, vx {} threads, {edges} edge pixels", t + 1);
                assert!(check.status.success(), "{} against vx on {what}: {said}", side.server.name);
                side.take(&said, &what);
            }
        }
    }
}

fn main() {
    let rounds: usize = std::env::var("VX_PERF_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(15).max(3);
    let only = std::env::var("VX_PERF_KERNELS").ok();
    let mpixels: u32 = std::env::var("VX_PERF_MPIXELS").ok().and_then(|v| v.parse().ok()).unwrap_or(4).max(1);
    let with_halide = std::env::var("VX_PERF_HALIDE").is_ok_and(|v| v == "1");
    let with_gapi = std::env::var("VX_PERF_GAPI").is_ok_and(|v| v == "1");
    eprintln!("building vx_filters (release)…");
    let filters_so = build_module_profile("vx-filters", &[], true);
    let dir = plugin_dir("performance-bench", &[("vx_filters", &filters_so)]);
    let ctxs = [context(1, &dir), context(2, &dir)];
    let Some(mut cv) = Server::start("OpenCV", "opencv_bench.py", &[]) else {
        eprintln!(
            "OpenCV is missing: run `bash tests/benches/performance.sh` (it makes a virtual environment with \
             opencv-python-headless), or put a python3 with cv2 and numpy first on PATH"
        );
        std::process::exit(2);
    };
    // The pipeline-only sides, in their columns' order.
    let mut sides = Vec::new();
    if with_halide {
        // Halide's thread pool reads HL_NUM_THREADS once: the most threads any round asks for (the
        // 1-thread rounds run a serial build of the schedule).
        let env = vec![("HL_NUM_THREADS", ctxs.len().to_string())];
        sides.push(Side::start(
            "Halide",
            "halide_bench.py",
            env,
            "VX_PERF_HALIDE=1 but halide_bench.py did not start: `pip install halide` into the python3 first on PATH \
             (`bash tests/benches/performance.sh` does, into target/perf-venv)",
        ));
    }
    if with_gapi {
        sides.push(Side::start(
            "G-API Fluid",
            "gapi_bench.py",
            Vec::new(),
            "VX_PERF_GAPI=1 but gapi_bench.py did not start: the python3 first on PATH needs \
             opencv-contrib-python-headless (cv2.gapi; `bash tests/benches/performance.sh` with VX_PERF_GAPI=1 puts \
             it into target/perf-venv)",
        ));
    }
    check_noise(&ctxs, &mut sides, &input_dir());
    let cv_version = cv.ask("version").unwrap_or_default();
    let versions: Vec<String> = sides.iter_mut().map(|s| s.server.ask("version").unwrap_or_default()).collect();
    let dir_in = input_dir();
    let (a_raw, b_raw) = (dir_in.join("a.u8"), dir_in.join("b.u8"));

    let mut md = String::new();
    let date = Command::new("date").arg("-u").arg("+%Y-%m-%d %H:%M UTC").output().ok();
    let date = date.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned()).unwrap_or_default();
    let _ = writeln!(md, "Run {date} on: {}.", machine());
    let cv_wheel = if with_gapi { "opencv-contrib-python-headless" } else { "opencv-python-headless" };
    let _ = writeln!(
        md,
        "\nOpenCV {cv_version} (`{cv_wheel}`), one process for the whole run; vx-rs one-node graphs of \
         `vx_filters` (the 4-node edge pipeline over virtual images for `pipeline`; `copy` is a plain copy kernel, \
         against `np.copyto`). {rounds} interleaved rounds per cell, each about 4 Mpixel of frames per side; ms \
         per frame as min / median / max; ratio = OpenCV median / vx median (above 1: vx is faster).\n"
    );
    for (side, version) in sides.iter().zip(&versions) {
        let _ = match side.server.name {
            "Halide" => writeln!(
                md,
                "Halide {version} (`halide` from PyPI, JIT; `tests/benches/halide_bench.py`), another process timed \
                 in the same rounds, for the edge pipeline only, its output checked bit-identical to vx's; Halide / vx \
                 = Halide median / vx median (above 1: vx is faster).\n"
            ),
            _ => writeln!(
                md,
                "G-API Fluid: OpenCV {version}, `tests/benches/gapi_bench.py`: the edge pipeline as one G-API graph of \
                 nine Fluid operations (checked one Fluid island at every size), another process timed in the same \
                 rounds, its output checked {} vx's. Fluid runs on one thread in this build (its 2-thread cells are \
                 serial), and the Python bindings return a new output array per call (no preallocated output). \
                 G-API Fluid / vx = G-API median / vx median (above 1: vx is faster).\n",
                if side.inexact.is_empty() { "bit-identical to" } else { "against (not bit-identical, below)" }
            ),
        };
    }
    let mut below = Vec::new();
    // Per two-thread cell: what the crew did in its timed rounds (`Context::crew_stats`).
    let mut crew_rows = Vec::new();
    let mut below_sides: Vec<Vec<String>> = vec![Vec::new(); sides.len()];
    for (w, h) in sizes() {
        let (a_px, b_px) = (pixels(1, w, h), pixels(2, w, h));
        std::fs::write(&a_raw, &a_px).unwrap();
        std::fs::write(&b_raw, &b_px).unwrap();
        let load = format!("load {w} {h} {} {}", a_raw.display(), b_raw.display());
        assert_eq!(cv.ask(&load).as_deref(), Some("ok"));
        for side in &mut sides {
            assert_eq!(side.server.ask(&load).as_deref(), Some("ok"), "{}: {load}", side.server.name);
        }
        let ins: Vec<Inputs> = ctxs.iter().map(|c| inputs(c, w, h, &a_px, &b_px)).collect();
        let frames = (mpixels * 1_000_000 / (w * h)).max(1);
        let _ = writeln!(md, "### {w}×{h}\n");
        // `fused`: the edge pipeline with fusion on (issue 34), timed against the same OpenCV chain
        // and Halide pipeline as `pipeline`.
        let kernels: Vec<&str> = KERNELS
            .into_iter()
            .chain(["fused"])
            .filter(|k| only.as_ref().is_none_or(|o| o.split(',').any(|x| x == *k)))
            .collect();
        // The kernel table, unless its only row would be the pipeline's and that has its own table.
        if kernels.iter().any(|k| !(!sides.is_empty() && (*k == "pipeline" || *k == "fused"))) {
            let _ = writeln!(
                md,
                "| kernel | threads | vx ms (min / median / max) | OpenCV ms (min / median / max) | ratio |"
            );
            let _ = writeln!(md, "|---|---|---|---|---|");
        }
        let mut pipeline_md = String::new();
        for name in kernels {
            let edges = name == "pipeline" || name == "fused";
            let op = if edges { "pipeline" } else { name };
            let n_sides = if edges { sides.len() } else { 0 };
            let mut one_thread_median = None;
            for (t, (ctx, s)) in ctxs.iter().zip(&ins).enumerate() {
                let threads = t + 1;
                let g = if !edges {
                    filter_graph(ctx, s, name)
                } else {
                    let (g, out) = pipeline_graph_out(ctx, s);
                    // `pipeline` is the unfused graph (each node writes its whole image), `fused` the
                    // same graph fused (the default).
                    g.set_fusion(Some(name == "fused")).unwrap();
                    g.verify().unwrap();
                    if name == "fused" {
                        let report = g.fusion_report().unwrap();
                        assert_eq!(report.groups.first().map(|g| g.nodes.len()), Some(4), "{report}");
                    }
                    for side in &mut sides[..n_sides] {
                        check_side(side, &g, &out, s, threads, &dir_in.join("vx_pipeline.u8"));
                    }
                    g
                };
                for _ in 0..3 {
                    g.process().unwrap();
                }
                ctx.reset_crew_stats();
                let (mut vx, mut ocv) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
                let mut other = vec![Vec::with_capacity(rounds); n_sides];
                for _ in 0..rounds {
                    g.process().unwrap();
                    let t0 = Instant::now();
                    for _ in 0..frames {
                        g.process().unwrap();
                    }
                    vx.push(t0.elapsed() / frames);
                    ocv.push(cv.time(op, threads, frames));
                    for (side, t) in sides.iter_mut().zip(&mut other) {
                        t.push(side.server.time(op, threads, frames));
                    }
                }
                let (v, c) = (spread(vx), spread(ocv));
                let ratio = c[1].as_secs_f64() / v[1].as_secs_f64();
                let crew = ctx.reset_crew_stats();
                match one_thread_median {
                    None => one_thread_median = Some(v[1]),
                    Some(one) => crew_rows.push(format!(
                        "| {name} {w}×{h} | {:.2}× | {} | {} | {} ({:.0} µs) | {} | {} | {} ({}) | {:.0} µs |",
                        one.as_secs_f64() / v[1].as_secs_f64(),
                        crew.jobs,
                        crew.warm_jobs,
                        crew.wakeups,
                        crew.wakeup_time.as_secs_f64() * 1e6 / crew.wakeups.max(1) as f64,
                        crew.moves,
                        crew.late_arrivals,
                        crew.retire_waits,
                        crew.retire_sleeps,
                        crew.retire_wait_max.as_secs_f64() * 1e6
                    )),
                }
                if ratio < 1.0 {
                    below.push(format!("{name} {w}×{h} {threads}t ({ratio:.2}×)"));
                }
                if other.is_empty() {
                    let _ = writeln!(md, "| {name} | {threads} | {} | {} | **{ratio:.2}×** |", cell(&v), cell(&c));
                } else {
                    let _ =
                        write!(pipeline_md, "| {name} | {threads} | {} | {} | **{ratio:.2}×** |", cell(&v), cell(&c));
                    for ((side, t), below) in sides.iter().zip(other).zip(&mut below_sides) {
                        let os = spread(t);
                        let oratio = os[1].as_secs_f64() / v[1].as_secs_f64();
                        // Halide: every row below 1×; G-API Fluid: the fused rows below issue 34's 4×.
                        let target = if side.server.name == "Halide" { 1.0 } else { 4.0 };
                        if oratio < target && (target == 1.0 || name == "fused") {
                            below.push(format!("{name} {w}×{h} {threads}t ({oratio:.2}×)"));
                        }
                        let _ = write!(pipeline_md, " {} | **{oratio:.2}×** |", cell(&os));
                    }
                    pipeline_md.push('\n');
                }
            }
        }
        if !pipeline_md.is_empty() {
            if !md.ends_with("\n\n") {
                md.push('\n');
            }
            let _ = write!(
                md,
                "| kernel | threads | vx ms (min / median / max) | OpenCV ms (min / median / max) | OpenCV / vx |"
            );
            for side in &sides {
                let name = side.server.name;
                let _ = write!(md, " {name} ms (min / median / max) | {name} / vx |");
            }
            let _ = writeln!(md, "\n|---|---|---|---|---|{}", "---|---|".repeat(sides.len()));
            md.push_str(&pipeline_md);
        }
        md.push('\n');
    }
    if !crew_rows.is_empty() {
        let _ = writeln!(
            md,
            "### The helper thread in the two-thread cells\n\n`Context::crew_stats` over each cell's timed rounds \
             (every round's frames and the untimed frame before them): speed-up = the one-thread median / the \
             two-thread median; jobs handed to the helper, of which warm (published while it spun), wake-ups of \
             the parked helper (and the caller's time per wake-up, in the system call), moves off the caller's CPU, late arrivals (the job was done), caller waits for \
             the helper to leave a job (of which slept past the spin), and the longest wait.\n\n\
             | cell | speed-up | jobs | warm | wake-ups | moves | late | waits (slept) | longest wait |\n\
             |---|---|---|---|---|---|---|---|---|"
        );
        for row in &crew_rows {
            let _ = writeln!(md, "{row}");
        }
        md.push('\n');
    }
    let _ = writeln!(
        md,
        "Cells where vx's median is slower than OpenCV's: {}.",
        if below.is_empty() { "none".to_owned() } else { below.join(", ") }
    );
    for (side, below) in sides.iter().zip(&below_sides) {
        let below = if below.is_empty() { "none".to_owned() } else { below.join(", ") };
        let _ = match side.server.name {
            "Halide" => writeln!(md, "\nPipeline cells where vx's median is slower than Halide's: {below}."),
            _ => writeln!(
                md,
                "\n`fused` cells where vx's median is less than 4× faster than G-API Fluid's (the target of \
                 `docs/design/fusion.md`): {below}."
            ),
        };
        if !side.inexact.is_empty() {
            let _ = writeln!(
                md,
                "\n{}'s output is not bit-identical to vx's ({}): {}.",
                side.server.name,
                side.inexact.len(),
                side.inexact.join("; ")
            );
        }
    }
    print!("{md}");
    if let Ok(path) = std::env::var("VX_PERF_OUT") {
        std::fs::write(&path, &md).unwrap_or_else(|e| panic!("writing {path}: {e}"));
        eprintln!("wrote {path}");
    }
}
