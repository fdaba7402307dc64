//! Randomized differential test of the runtime (issue 26): random graphs run in vx-rs and
//! compared with an independent reference interpreter, pixel by pixel, frame by frame; alias
//! decisions and memory plans checked; illegal constructs must be refused (no panic, no hang).
//!
//! More seeds: `cargo run --release -p vx-tests --bin random_graphs -- --seeds 0..100000`.

use vx_tests::random_graphs::{Failure, Stats, run_seed};

/// Seeds of the default run (debug build: about 35 s on 2 cores, payload chains included);
/// `VX_RANDOM_SEEDS=N` changes it (`.ci/run` runs fewer under ThreadSanitizer).
const SEEDS: u64 = 1000;

#[test]
fn random_graphs_match_the_reference() {
    // Every proportional re-verification and move in place compared with a complete verification.
    vx::__verify_check_always();
    let seeds = std::env::var("VX_RANDOM_SEEDS").ok().and_then(|v| v.parse().ok()).unwrap_or(SEEDS);
    let mut total = Stats::default();
    let mut failures: Vec<Failure> = Vec::new();
    for seed in 0..seeds {
        match run_seed(seed, false) {
            Ok(s) => total += s,
            Err(f) => failures.push(f),
        }
    }
    println!("{seeds} seeds: {total}; {} failed", failures.len());
    if let Some(first) = failures.first() {
        let failed: Vec<String> = failures.iter().map(|f| format!("{} [{}]", f.seed, f.detail.mode)).collect();
        panic!("{} of {seeds} seeds failed: {}\n\nfirst failure:\n{first}", failures.len(), failed.join(", "));
    }
    assert!(total.pipelined_frames > 0 && total.alias_decisions_checked > 0 && total.plans_checked > 0, "{total}");
    // Payload chains (issue 28 step 8): the default run draws every kind of the list.
    assert!(total.payload_chains > 0 && total.payload_digests > 0, "{total}");
    if seeds >= SEEDS {
        assert_eq!(total.payload_kinds.count_ones() as usize, vx::DataType::ALL.len(), "{total}");
        // Fusion (issue 34): half the graphs fuse, and the generator's bias makes groups form
        // (about one graph in five), row kernels among them.
        assert!(total.fused_graphs * 10 > seeds && total.fused_row_nodes > 0 && total.row_entry_calls > 0, "{total}");
        // Members that leave pixels unprocessed (border Undefined, fast-only remainders) fuse too.
        assert!(total.fused_unprocessed > 0, "{total}");
    }
    assert!(total.fusion_graphs > 0 && total.fusion_reports_checked > 0, "{total}");
}

#[test]
fn a_planted_reference_error_is_caught() {
    // The reference's add-constant deliberately off by one: some of a few seeds must fail.
    let caught = (0..8).filter_map(|seed| run_seed(seed, true).err()).collect::<Vec<_>>();
    assert!(!caught.is_empty(), "a wrong reference went unnoticed over 8 seeds");
    let first = &caught[0];
    assert!(first.plant && first.to_string().contains(&format!("seed {}", first.seed)), "{first}");
    println!("planted error caught by {} of 8 seeds; first:\n{first}", caught.len());
}
