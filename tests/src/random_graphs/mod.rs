//! Randomized differential testing of the runtime (issue 26): a seeded generator of random graphs
//! (DAGs of 2–12 nodes over awkward image sizes, virtual and real intermediates, fan-out, one image
//! twice in a node, ROI inputs and outputs, alias hints legal and illegal, tiling and plain user
//! kernels, 1–4 threads, 0–2 targets, pipelined a third of the time, memory plan and aliasing on
//! and off, re-verification steps, illegal constructs), run in vx-rs and compared pixel by pixel
//! with an independent reference interpreter written from the specs. Half the graphs also carry
//! payload chains (issue 28 step 8): an object of any kind of `DataType::ALL`, or an object array
//! of one, copied through 1–4 generic copy nodes over real and virtual intermediates, queued or
//! shared in pipelined runs, compared by content digest frame by frame. Half the graphs run with
//! cross-node fusion on (issue 34, `ContextBuilder::fusion`): the generator then biases most nodes
//! toward fusion candidates (tiling, every pixel processed, no vertical neighborhood unless a row
//! kernel with a row entry, no tile memory, often their input's writer's target, seldom an alias
//! hint, outputs virtual), so chains over virtual images form fused groups (on the host or a named
//! target, sequential or pipelined) in about three graphs in four of those; every
//! run checks `Graph::fusion_report` against the candidate rules restated from the spec
//! (`checks::fusion_report`), and orders the memory plan's and aliasing's checks by the schedule
//! with each group contracted to one unit.
//!
//! [`run_seed`] runs one seed on a thread of its own under `catch_unwind` and a watchdog: a panic
//! or a hang is a failure like a wrong pixel. Module reloads between frames are simulated in
//! process (a step swaps new versions of some nodes' kernels in, through `Kernel::__replace_in_process`,
//! the validator key kept, dropped or changed): the runtime re-verifies the rebound nodes alone
//! where it can (or moves them in place), and with the check on (`VX_VERIFY_CHECK=1`, which the
//! `random_graphs` binary sets, or `vx::__verify_check_always()`, which the test calls) compares
//! that with a complete verification after each. Real cdylib reloads are covered by
//! `tests/tests/{module_reload,target_modules,reload_reverify}.rs`.

pub mod checks;
pub mod generate;
pub mod kernels;
pub mod reference;
pub mod rng;
pub mod runner;
pub mod spec;

use std::fmt;
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

pub use generate::generate;
pub use spec::GraphSpec;

/// What the seeds checked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Graphs run to the end.
    pub graphs: u64,
    /// Frames run (all modes).
    pub frames: u64,
    /// Frames run through a pipelined graph.
    pub pipelined_frames: u64,
    /// Alias decisions checked.
    pub alias_decisions_checked: u64,
    /// Memory plans checked.
    pub plans_checked: u64,
    /// Illegal constructs refused (as they must be).
    pub illegal_refused: u64,
    /// Re-verification steps.
    pub steps: u64,
    /// Of which in-process module reloads.
    pub reloads: u64,
    /// Output pixels compared.
    pub pixels_compared: u64,
    /// Payload chains built (issue 28 step 8).
    pub payload_chains: u64,
    /// The kinds they carried (bit `i`: `DataType::ALL[i]`).
    pub payload_kinds: u64,
    /// Payload digests compared with the reference's.
    pub payload_digests: u64,
    /// Graphs run with fusion on (issue 34).
    pub fusion_graphs: u64,
    /// Fusion reports checked (one per run of a graph).
    pub fusion_reports_checked: u64,
    /// Graphs that had at least one fused group in some run.
    pub fused_graphs: u64,
    /// Over those graphs, the nodes in fused groups (in each graph's run with the most).
    pub fused_nodes: u64,
    /// The groups they formed.
    pub fused_groups: u64,
    /// Of the nodes fused, row kernels (run through their row entries).
    pub fused_row_nodes: u64,
    /// Row-entry calls.
    pub row_entry_calls: u64,
    /// Of the graphs with fused groups, those run pipelined.
    pub fused_pipelined_graphs: u64,
    /// Groups on a named target (in each graph's run with the most).
    pub fused_groups_on_targets: u64,
    /// Materialized images in groups (in each graph's run with the most).
    pub materialized_images: u64,
    /// Fused nodes that leave pixels unprocessed (border `Undefined`, fast-only remainders; in
    /// each graph's run with the most).
    pub fused_unprocessed: u64,
}

impl std::ops::AddAssign for Stats {
    fn add_assign(&mut self, o: Stats) {
        self.graphs += o.graphs;
        self.frames += o.frames;
        self.pipelined_frames += o.pipelined_frames;
        self.alias_decisions_checked += o.alias_decisions_checked;
        self.plans_checked += o.plans_checked;
        self.illegal_refused += o.illegal_refused;
        self.steps += o.steps;
        self.reloads += o.reloads;
        self.pixels_compared += o.pixels_compared;
        self.payload_chains += o.payload_chains;
        self.payload_kinds |= o.payload_kinds;
        self.payload_digests += o.payload_digests;
        self.fusion_graphs += o.fusion_graphs;
        self.fusion_reports_checked += o.fusion_reports_checked;
        self.fused_graphs += o.fused_graphs;
        self.fused_nodes += o.fused_nodes;
        self.fused_groups += o.fused_groups;
        self.fused_row_nodes += o.fused_row_nodes;
        self.row_entry_calls += o.row_entry_calls;
        self.fused_pipelined_graphs += o.fused_pipelined_graphs;
        self.fused_groups_on_targets += o.fused_groups_on_targets;
        self.materialized_images += o.materialized_images;
        self.fused_unprocessed += o.fused_unprocessed;
    }
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} graphs, {} frames ({} pipelined), {} alias decisions checked, {} memory plans checked, \
             {} illegal constructs refused, {} re-verification steps ({} reloads), {} output pixels compared, \
             {} payload chains ({} of {} kinds), {} payload digests compared; fusion on in {} graphs, \
             {} fusion reports checked, graphs with fused groups: {}, nodes fused: {} (in {} groups, {} of them row kernels; \
             {} row-entry calls; {} of those graphs pipelined, {} groups on named targets, {} materialized images, {} members leaving pixels unprocessed)",
            self.graphs,
            self.frames,
            self.pipelined_frames,
            self.alias_decisions_checked,
            self.plans_checked,
            self.illegal_refused,
            self.steps,
            self.reloads,
            self.pixels_compared,
            self.payload_chains,
            self.payload_kinds.count_ones(),
            vx::DataType::ALL.len(),
            self.payload_digests,
            self.fusion_graphs,
            self.fusion_reports_checked,
            self.fused_graphs,
            self.fused_nodes,
            self.fused_groups,
            self.fused_row_nodes,
            self.row_entry_calls,
            self.fused_pipelined_graphs,
            self.fused_groups_on_targets,
            self.materialized_images,
            self.fused_unprocessed
        )
    }
}

/// What a running seed has done so far (read by the watchdog on a hang).
#[derive(Debug, Default)]
pub struct Progress {
    /// Steps and runs, in order.
    pub log: Vec<String>,
}

/// A failed seed: the seed, the graph, what ran, and the first thing that went wrong.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The seed.
    pub seed: u64,
    /// The reference was deliberately wrong.
    pub plant: bool,
    /// The rest.
    pub detail: Box<FailureDetail>,
}

/// What a [`Failure`] says beyond its seed.
#[derive(Clone, Debug)]
pub struct FailureDetail {
    /// How the graph ran (pipelined or not, memory plan, aliasing, threads, targets).
    pub mode: String,
    /// The graph's description.
    pub graph: String,
    /// Steps and runs before the failure.
    pub log: Vec<String>,
    /// Where it failed.
    pub step: String,
    /// What went wrong.
    pub what: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = &self.detail;
        writeln!(
            f,
            "seed {} FAILED{} [{}]",
            self.seed,
            if self.plant { " (planted reference error)" } else { "" },
            d.mode
        )?;
        writeln!(f, "  at: {}", d.step)?;
        writeln!(f, "  {}", d.what)?;
        write!(f, "{}", d.graph)?;
        if !d.log.is_empty() {
            writeln!(f, "  ran: {}", d.log.join(" | "))?;
        }
        Ok(())
    }
}

impl std::error::Error for Failure {}

/// Options of a run.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Deliberately wrong reference (AddC off by one): the test of the test.
    pub plant: bool,
    /// Context threads for every graph instead of the seed's choice.
    pub threads: Option<usize>,
    /// The watchdog: a seed running longer fails as a hang.
    pub timeout: Duration,
    /// Order memory-plan buffers and in-place readers by dataflow paths only, also outside queue
    /// modes (where the runtime runs one schedule level after the other, which orders too).
    pub strict_plan: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { plant: false, threads: None, timeout: Duration::from_secs(20), strict_plan: false }
    }
}

/// Run seed `seed` (see the module doc); `plant` makes the reference deliberately wrong.
pub fn run_seed(seed: u64, plant: bool) -> Result<Stats, Failure> {
    run_seed_with(seed, Options { plant, ..Options::default() })
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// [`run_seed`] with options.
pub fn run_seed_with(seed: u64, options: Options) -> Result<Stats, Failure> {
    let mut spec = generate(seed);
    if let Some(t) = options.threads {
        spec.threads = t;
    }
    let progress = Arc::new(Mutex::new(Progress::default()));
    let failure = |step: String, what: String, progress: &Mutex<Progress>| Failure {
        seed,
        plant: options.plant,
        detail: Box::new(FailureDetail {
            mode: spec.mode(),
            graph: spec.to_string(),
            log: progress.lock().unwrap_or_else(|p| p.into_inner()).log.clone(),
            step,
            what,
        }),
    };
    let (tx, rx) = mpsc::channel();
    let (s, p) = (spec.clone(), progress.clone());
    let spawned = std::thread::Builder::new().name(format!("random-graph-{seed}")).spawn(move || {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            runner::Runner::new(s, options, p).and_then(runner::Runner::run)
        }));
        let _ = tx.send(r);
    });
    if let Err(e) = spawned {
        return Err(failure("start".into(), format!("cannot start the seed's thread: {e}"), &progress));
    }
    match rx.recv_timeout(options.timeout) {
        Ok(Ok(Ok(stats))) => Ok(stats),
        Ok(Ok(Err(f))) => Err(failure(f.step, f.what, &progress)),
        Ok(Err(panic)) => Err(failure("panic".into(), format!("PANIC: {}", panic_message(panic.as_ref())), &progress)),
        Err(mpsc::RecvTimeoutError::Timeout) => Err(failure(
            "watchdog".into(),
            format!("HANG: the seed did not finish within {:?} (its thread is left behind)", options.timeout),
            &progress,
        )),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            Err(failure("watchdog".into(), "the seed's thread ended without a result".into(), &progress))
        }
    }
}
