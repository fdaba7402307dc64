//! Run many seeds of the randomized differential test:
//!
//! ```sh
//! cargo run --release -p vx-tests --bin random_graphs -- --seeds 0..100000 [--plant] [--threads-per-run N] [--jobs J]
//! ```
//!
//! `--threads-per-run N` gives every graph's context N threads (instead of the seed's 1–4);
//! `--jobs J` runs J seeds at once (default 1); `--keep-going` runs every seed even after a failure;
//! `--strict-plan` orders memory-plan buffers by dataflow paths only, also outside queue modes. Prints progress and totals, and the first failing
//! seed with its graph; exit code 1 when a seed failed, 2 on a bad command line. The totals say how
//! often fusion happened ("graphs with fused groups: N, nodes fused: M"); with `--plant`, how many
//! of the seeds that caught the planted error had fused groups.

use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use vx_tests::random_graphs::{Failure, Options, Stats, run_seed_with, runner};

fn usage(msg: &str) -> ! {
    eprintln!(
        "{msg}\nusage: random_graphs --seeds A..B [--plant] [--threads-per-run N] [--jobs J] [--keep-going] [--strict-plan]"
    );
    std::process::exit(2)
}

fn main() {
    if std::env::var_os("VX_VERIFY_CHECK").is_none() {
        // Every re-verification of rebound nodes is compared with a full one (in release too).
        // SAFETY: no other thread exists yet, so none reads the environment concurrently.
        unsafe { std::env::set_var("VX_VERIFY_CHECK", "1") };
    }
    let mut args = std::env::args().skip(1);
    let (mut seeds, mut options, mut jobs, mut keep_going) = (0..1000u64, Options::default(), 1usize, false);
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().unwrap_or_else(|| usage(&format!("{name} needs a value")));
        match a.as_str() {
            "--seeds" => {
                let v = value("--seeds");
                let (a, b) = v.split_once("..").unwrap_or_else(|| usage("--seeds takes A..B"));
                let (a, b) =
                    (a.parse().unwrap_or_else(|_| usage("bad seed")), b.parse().unwrap_or_else(|_| usage("bad seed")));
                seeds = a..b;
            }
            "--plant" => options.plant = true,
            "--strict-plan" => options.strict_plan = true,
            "--threads-per-run" => {
                options.threads = Some(value("--threads-per-run").parse().unwrap_or_else(|_| usage("bad thread count")))
            }
            "--jobs" => jobs = value("--jobs").parse().unwrap_or_else(|_| usage("bad job count")),
            "--keep-going" => keep_going = true,
            other => usage(&format!("unknown argument {other}")),
        }
    }
    let start = Instant::now();
    let total = Arc::new(Mutex::new(Stats::default()));
    let failures: Arc<Mutex<Vec<Failure>>> = Arc::default();
    let next = Arc::new(AtomicU64::new(seeds.start));
    let done = Arc::new(AtomicU64::new(0));
    let count = seeds.end.saturating_sub(seeds.start);
    let workers: Vec<_> = (0..jobs.max(1))
        .map(|_| {
            let (total, failures, next, done) = (total.clone(), failures.clone(), next.clone(), done.clone());
            std::thread::spawn(move || {
                loop {
                    if !keep_going && !failures.lock().unwrap().is_empty() {
                        return;
                    }
                    let seed = next.fetch_add(1, SeqCst);
                    if seed >= seeds.end {
                        return;
                    }
                    match run_seed_with(seed, options) {
                        Ok(s) => *total.lock().unwrap() += s,
                        Err(f) => {
                            eprintln!(
                                "seed {seed} failed [{}]: {} — {}",
                                f.detail.mode,
                                f.detail.step,
                                f.detail.what.lines().next().unwrap_or("")
                            );
                            failures.lock().unwrap().push(f);
                        }
                    }
                    let d = done.fetch_add(1, SeqCst) + 1;
                    if d % 100 == 0 || d == count {
                        let t = total.lock().unwrap();
                        println!(
                            "{d}/{count} seeds in {:.1} s: {} failed; {} graphs, {} frames ({} pipelined), {} with \
                             fused groups",
                            start.elapsed().as_secs_f64(),
                            failures.lock().unwrap().len(),
                            t.graphs,
                            t.frames,
                            t.pipelined_frames,
                            t.fused_graphs
                        );
                    }
                }
            })
        })
        .collect();
    for w in workers {
        let _ = w.join();
    }
    let total = *total.lock().unwrap();
    let mut failures = std::mem::take(&mut *failures.lock().unwrap());
    failures.sort_by_key(|f| f.seed);
    println!("totals after {:.1} s: {total}", start.elapsed().as_secs_f64());
    println!(
        "fusion: on in {} of {} graphs; graphs with fused groups: {}, nodes fused: {} (in {} groups; {} row kernels, \
         {} row-entry calls)",
        total.fusion_graphs,
        total.graphs,
        total.fused_graphs,
        total.fused_nodes,
        total.fused_groups,
        total.fused_row_nodes,
        total.row_entry_calls
    );
    if options.plant {
        let fused = failures.iter().filter(|f| f.detail.what.contains("; fusion: ")).count();
        let writer = failures.iter().filter(|f| f.detail.what.contains(runner::FUSED_WRITER)).count();
        println!(
            "planted error: caught by {} of {count} seeds; {fused} of them with fused groups, {writer} in an image a \
             fused node wrote",
            failures.len()
        );
    }
    if let Some(first) = failures.first() {
        let seeds: Vec<String> = failures.iter().map(|f| f.seed.to_string()).collect();
        println!("{} seed(s) failed: {}", failures.len(), seeds.join(", "));
        println!("\nfirst failing seed:\n{first}");
        std::process::exit(1);
    }
    println!("no failures");
}
