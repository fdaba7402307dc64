//! vx against OpenCV, kernel by kernel, with both sides' rounds interleaved (issue 29):
//! `cargo bench -p vx-tests --bench performance`, or `bash tests/benches/performance.sh`, which
//! first makes a Python virtual environment with `opencv-python-headless` and `numpy` under
//! `target/` and writes `docs/performance.md` from this bench's output.
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
//! rounds; `VX_PERF_OUT=path` also writes the report to `path`.

#[path = "common/filters.rs"]
mod filters;

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write as _};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use filters::*;
use vx_tests::{build_module_profile, plugin_dir, workspace_root};

/// The long-lived OpenCV process.
struct OpenCv {
    _child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl OpenCv {
    fn start() -> Option<OpenCv> {
        let script = workspace_root().join("tests/benches/opencv_bench.py");
        let mut child = Command::new("python3")
            .arg(script)
            .arg("--serve")
            // numpy's OpenBLAS starts a pool of threads that poll with `sched_yield` between BLAS
            // calls (none are made here); on a 2-core machine they took a core from vx's rounds
            // (`perf`: 18 % of samples in `blas_thread_server`, vx's 2-thread VGA cells 2-3× slower).
            // OpenCV's own threads are set per round by `cv2.setNumThreads`, not by this.
            .env("OPENBLAS_NUM_THREADS", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let input = child.stdin.take()?;
        let output = BufReader::new(child.stdout.take()?);
        let mut cv = OpenCv { _child: child, input, output };
        cv.ask("version").filter(|v| !v.starts_with("error"))?;
        Some(cv)
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
        let a = self.ask(&format!("time {op} {threads} {calls}")).expect("OpenCV answered");
        Duration::from_secs_f64(a.parse().unwrap_or_else(|_| panic!("OpenCV: {a}")))
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

fn main() {
    let rounds: usize = std::env::var("VX_PERF_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(15).max(3);
    let only = std::env::var("VX_PERF_KERNELS").ok();
    let mpixels: u32 = std::env::var("VX_PERF_MPIXELS").ok().and_then(|v| v.parse().ok()).unwrap_or(4).max(1);
    eprintln!("building vx_filters (release)…");
    let filters_so = build_module_profile("vx-filters", &[], true);
    let dir = plugin_dir("performance-bench", &[("vx_filters", &filters_so)]);
    let ctxs = [context(1, &dir), context(2, &dir)];
    let Some(mut cv) = OpenCv::start() else {
        eprintln!(
            "OpenCV is missing: run `bash tests/benches/performance.sh` (it makes a virtual environment with \
             opencv-python-headless), or put a python3 with cv2 and numpy first on PATH"
        );
        std::process::exit(2);
    };
    let cv_version = cv.ask("version").unwrap_or_default();
    let dir_in = input_dir();
    let (a_raw, b_raw) = (dir_in.join("a.u8"), dir_in.join("b.u8"));

    let mut md = String::new();
    let date = Command::new("date").arg("-u").arg("+%Y-%m-%d %H:%M UTC").output().ok();
    let date = date.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned()).unwrap_or_default();
    let _ = writeln!(md, "Run {date} on: {}.", machine());
    let _ = writeln!(
        md,
        "\nOpenCV {cv_version} (`opencv-python-headless`), one process for the whole run; vx-rs one-node graphs of \
         `vx_filters` (the 4-node edge pipeline over virtual images for `pipeline`; `copy` is a plain copy kernel, \
         against `np.copyto`). {rounds} interleaved rounds per cell, each about 4 Mpixel of frames per side; ms \
         per frame as min / median / max; ratio = OpenCV median / vx median (above 1: vx is faster).\n"
    );
    let mut below = Vec::new();
    for (w, h) in sizes() {
        let (a_px, b_px) = (pixels(1, w, h), pixels(2, w, h));
        std::fs::write(&a_raw, &a_px).unwrap();
        std::fs::write(&b_raw, &b_px).unwrap();
        assert_eq!(cv.ask(&format!("load {w} {h} {} {}", a_raw.display(), b_raw.display())).as_deref(), Some("ok"));
        let ins: Vec<Inputs> = ctxs.iter().map(|c| inputs(c, w, h, &a_px, &b_px)).collect();
        let frames = (mpixels * 1_000_000 / (w * h)).max(1);
        let _ = writeln!(md, "### {w}×{h}\n");
        let _ =
            writeln!(md, "| kernel | threads | vx ms (min / median / max) | OpenCV ms (min / median / max) | ratio |");
        let _ = writeln!(md, "|---|---|---|---|---|");
        for name in KERNELS.into_iter().filter(|k| only.as_ref().is_none_or(|o| o.split(',').any(|x| x == *k))) {
            for (t, (ctx, s)) in ctxs.iter().zip(&ins).enumerate() {
                let threads = t + 1;
                let g = if name == "pipeline" { pipeline_graph(ctx, s) } else { filter_graph(ctx, s, name) };
                for _ in 0..3 {
                    g.process().unwrap();
                }
                let (mut vx, mut ocv) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
                for _ in 0..rounds {
                    g.process().unwrap();
                    let t0 = Instant::now();
                    for _ in 0..frames {
                        g.process().unwrap();
                    }
                    vx.push(t0.elapsed() / frames);
                    ocv.push(cv.time(name, threads, frames));
                }
                let (v, c) = (spread(vx), spread(ocv));
                let ratio = c[1].as_secs_f64() / v[1].as_secs_f64();
                if ratio < 1.0 {
                    below.push(format!("{name} {w}×{h} {threads}t ({ratio:.2}×)"));
                }
                let _ = writeln!(
                    md,
                    "| {name} | {threads} | {:.3} / **{:.3}** / {:.3} | {:.3} / **{:.3}** / {:.3} | **{ratio:.2}×** |",
                    ms(v[0]),
                    ms(v[1]),
                    ms(v[2]),
                    ms(c[0]),
                    ms(c[1]),
                    ms(c[2])
                );
            }
        }
        md.push('\n');
    }
    let _ = writeln!(
        md,
        "Cells where vx's median is slower than OpenCV's: {}.",
        if below.is_empty() { "none".to_owned() } else { below.join(", ") }
    );
    print!("{md}");
    if let Ok(path) = std::env::var("VX_PERF_OUT") {
        std::fs::write(&path, &md).unwrap_or_else(|e| panic!("writing {path}: {e}"));
        eprintln!("wrote {path}");
    }
}
