//! The crew: the context's helper threads for one parallel step at a time (the tiles of a tiling
//! node, the nodes of a graph level), a fork primitive that allocates nothing per use.
//!
//! TIOVX's rule is no heap allocation in process. rayon cannot be entered from outside its pool
//! without allocating: `Scope::spawn` boxes each job and the injector queue allocates a block per 63
//! jobs pushed. The crew is built with the context: `threads - 1` parked threads, one job slot
//! behind a mutex and two condition variables (futexes: no allocation). `run` publishes a borrowed
//! closure in the slot, wakes the helpers, runs the closure on the calling thread too, then retires
//! the job and waits until no helper is inside. The closure pulls its own work items (an atomic
//! counter), so a helper that wakes late finds nothing left and the caller never waits for a wake-up.
//!
//! A helper that finds itself on the caller's CPU when it joins a job moves off it first
//! (`support::cpu`): Linux often wakes it right there ("wake affine"), and the two would then
//! share one CPU while another idles, until the load balancer notices milliseconds later. For the
//! same reason a helper does not spin on the caller's CPU.
//!
//! A helper that finishes a job spins for [`SPIN`] before it parks (and so does one woken for a
//! job that was retired before it arrived): a graph publishes its next
//! parallel step (the next node's tiles, the next frame) within microseconds, and a futex wake-up
//! of a parked vCPU on a VM costs 50–300 µs — as much as a whole 1080p 3×3 filter on one core.
//! OpenCV's pool waits actively for the same reason. The spin reads atomics; it never takes the
//! mutex, so the caller publishing a job is not slowed by spinning helpers.
//!
//! The crew measures how long a helper takes to join a job (publication to its first step inside,
//! settling estimates, [`Crew::join_estimate`]), apart for jobs published while a helper was spinning
//! (warm) and while all were parked (cold): the tiling cost model weighs a node's work per thread
//! against the one for the helpers' present state (`graph/tiling/split.rs`). A job no helper joined before the caller finished
//! counts the caller's time as a lower bound of the helpers' delay: it may raise the estimate,
//! never lower it.
//!
//! One job at a time: a caller that finds the crew busy (another graph on another thread) or that
//! is itself running crew work (a tiling node inside a parallel level) runs its closure alone.
//!
//! # The protocol, interleaving by interleaving
//!
//! The slot (job, epoch, `wanted`, `running`) lives under the crew's mutex; `posted` (the epoch)
//! and `inside` (a copy of `running`) are atomics written under it and read without it. The models
//! in `loom_tests` check what follows in every interleaving up to a preemption bound.
//!
//! - **Publish.** The caller, holding the mutex, stores the borrowed job, `wanted` and a new
//!   epoch, then `posted` (Release), and decides whether to wake: not if every wanted helper is
//!   spinning (`spinning`, counted by the helpers around their spin, SeqCst) or a wake-up is on its
//!   way (`waking`, swapped to true here, under the mutex; cleared by a helper in every critical
//!   section in which it looks for a job, hence in the one in which it starts to wait). It releases
//!   the mutex, then calls `notify_all` if it decided to. A helper counted in `spinning` either sees
//!   `posted` while spinning, or stops spinning and *then* takes the mutex and finds the job; one
//!   that parked before the publication decremented `spinning` before taking the mutex, so the
//!   caller, reading in its own later critical section, sees the decrement and notifies.
//! - **A wake-up on its way** (`waking` true, no notify). It was swapped true inside an earlier
//!   publication's critical section, whose `notify_all` follows it. A helper that took the mutex
//!   after that critical section cleared the flag; so the flag still true means every parked helper
//!   was asleep on the condition variable before that critical section (the wait releases the mutex
//!   and sleeps as one step), that `notify_all` wakes it, and it takes the mutex after this
//!   publication and finds the newest job. Swapped after the unlock instead, the flag could be set
//!   after a helper cleared it but before it slept: the wake-up would come before its sleep, the
//!   flag stay set, and no later job wake it. Only speed rides on the flag: a caller never waits
//!   for a helper that did not join.
//! - **Join.** A helper that saw the new epoch (spinning, Acquire; or woken) first leaves the
//!   caller's CPU if it is on it, holding nothing and counted nowhere (woken under the mutex, it
//!   releases it to move, once per wake-up, then looks at the slot again). Under the mutex it joins
//!   only if the job is still there and `wanted > 0`, incrementing `running` and storing `inside`
//!   before it releases the mutex — so a caller never waits for a helper in transit between CPUs.
//!   It calls the job outside the mutex, then, under it, decrements `running`, stores `inside`
//!   (Release) and notifies `finished` at 0.
//! - **Retire** (the caller after its own share, also on unwind: `Retire`'s drop). Under the mutex
//!   it removes the job and sets `wanted = 0`: from then on no helper joins, so `running` and
//!   `inside` only fall. It releases the mutex, spins up to `RETIRE_SPIN` while `inside > 0`
//!   (Acquire), then waits on `finished` under the mutex while `running > 0`. A helper that joined
//!   before the retire was counted before the caller's critical section, so the caller returns (and
//!   the borrowed job dies) only after it left. A helper that arrives after the retire finds no job
//!   and does not enter; seeing a newer epoch without a job, it spins again (counted in `spinning`)
//!   instead of parking, and a job published meanwhile ends that spin and is joined under the mutex
//!   as above.
//! - **The last `inside = 0` against the caller's spin.** Release/Acquire make every write the job
//!   made visible to the caller when it reads 0; after the spin's timeout the mutex gives the same
//!   order, and the condition-variable loop is the protocol without the spin. The spin exists
//!   because the other side is usually a fraction of a tile from done, and a futex sleep and
//!   wake-up of the caller costs more than that on a VM.
//! - **Tiles and statistics.** Which thread takes which tile is argued in
//!   `vx-core/src/graph/tiling/claims.rs`. The warm/cold join statistics (`spinning`,
//!   `posted_warm`) are hints for the cost model: a stale read changes a decision, never a result.
//!
//! Checked to fail: swapping `waking` after the unlock fails two of the loom models, and a retire
//! that does not wait for the last helper fails
//! `loom_every_item_runs_once_and_run_returns_with_no_helper_inside`. Tested besides: the unit tests
//! below (`a_helper_joins_every_job_whether_it_spun_or_parked` fails without the wake-up), every
//! tiling test at 2 and 4 threads, and ThreadSanitizer in `.ci/run`.

use std::cell::Cell;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::shared::model::{
    Arc, AtomicBool, AtomicU64, AtomicUsize, Condvar, CpuSet, JoinHandle, Mutex, MutexGuard, SpinBudget, cpu, lock,
    protocol_local, thread,
};
use crate::support::unwind::catch_panic;

/// A borrowed job, its lifetime erased (see `Crew::run` for why that is sound).
#[derive(Clone, Copy)]
struct Job(&'static (dyn Fn() + Sync));

struct Slot {
    /// Bumped for every published job, so a helper joins each job at most once.
    epoch: u64,
    job: Option<Job>,
    /// Helpers that may still join the current job.
    wanted: usize,
    /// Helpers inside the current job.
    running: usize,
    /// Helpers that have started (construction waits for all).
    started: usize,
    shutdown: bool,
}

/// How long a caller waits spinning for its helpers to leave a job before it sleeps.
const RETIRE_SPIN: Duration = Duration::from_micros(50);

/// How long a helper keeps looking for the next job before it parks on the condition variable.
const SPIN: Duration = Duration::from_micros(200);

/// `CrewState::caller_cpu` when the caller's CPU is not known.
const NO_CPU: usize = usize::MAX;

/// What the crew of a context did since it was built or since the last
/// [`Context::reset_crew_stats`](crate::Context::reset_crew_stats) ([`Context::crew_stats`](crate::Context::crew_stats)):
/// how often the helpers were handed work, how they came to it, and how long callers waited for
/// them. A run on several threads that is slower than on one shows its cause here: helpers that
/// were parked (`wakeups`), that arrived after the work was done (`late_arrivals`), that had to
/// move off the caller's CPU (`moves`), or that kept the caller waiting (`retire_waits`,
/// `retire_wait_max`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CrewStats {
    /// Parallel steps handed to the helpers (a tiling node's tiles shared out, a graph level's
    /// nodes run at once).
    pub jobs: u64,
    /// Of those, handed out while a helper was spinning for work (it joins within microseconds).
    pub warm_jobs: u64,
    /// Wake-ups sent to parked helpers (a futex system call; on a VM tens to hundreds of µs before
    /// the helper runs).
    pub wakeups: u64,
    /// The callers' wall time across sending them, in all: the system call, which on a VM that
    /// must interrupt a halted virtual CPU can cost the caller more than a small node's work, and
    /// any time the caller lost the CPU meanwhile (a helper woken onto it before moving off);
    /// 5–200 µs a wake-up on average per benchmark cell on the 2-vCPU machine of
    /// `docs/book/src/performance.md`.
    pub wakeup_time: Duration,
    /// Times a helper started on a job.
    pub helper_joins: u64,
    /// Times a helper, looking at the job slot, found that a job had been published and retired
    /// since its last look (once per look, however many it missed; with several helpers, one the
    /// job did not want, or one that came after the others, counts too).
    pub late_arrivals: u64,
    /// Times a helper began spinning for the next job: when it started, after each job it
    /// joined, and after each late arrival (it spins rather than parks, for a caller likely to
    /// publish again within the spin).
    pub spins: u64,
    /// Times a helper moved off the latest caller's CPU (before spinning for a job or before
    /// joining one: Linux had woken it there, or the caller came to its CPU).
    pub moves: u64,
    /// Jobs whose caller finished its share while a helper was still inside, and waited for it.
    pub retire_waits: u64,
    /// Of those, waits longer than the caller's spin: it slept until the helper left.
    pub retire_sleeps: u64,
    /// The time callers waited for helpers to leave jobs, in all.
    pub retire_wait_total: Duration,
    /// The longest such wait.
    pub retire_wait_max: Duration,
}

/// [`CrewStats`]' counters (relaxed `std` atomics, outside the protocol: plain under loom too).
#[derive(Default)]
struct Counters {
    jobs: std::sync::atomic::AtomicU64,
    warm_jobs: std::sync::atomic::AtomicU64,
    wakeups: std::sync::atomic::AtomicU64,
    wakeup_ns: std::sync::atomic::AtomicU64,
    helper_joins: std::sync::atomic::AtomicU64,
    late_arrivals: std::sync::atomic::AtomicU64,
    spins: std::sync::atomic::AtomicU64,
    moves: std::sync::atomic::AtomicU64,
    retire_waits: std::sync::atomic::AtomicU64,
    retire_sleeps: std::sync::atomic::AtomicU64,
    retire_wait_ns: std::sync::atomic::AtomicU64,
    retire_wait_max_ns: std::sync::atomic::AtomicU64,
}

impl Counters {
    fn bump(c: &std::sync::atomic::AtomicU64) {
        c.fetch_add(1, Ordering::Relaxed);
    }

    fn all(&self) -> [&std::sync::atomic::AtomicU64; 12] {
        [
            &self.jobs,
            &self.warm_jobs,
            &self.wakeups,
            &self.wakeup_ns,
            &self.helper_joins,
            &self.late_arrivals,
            &self.spins,
            &self.moves,
            &self.retire_waits,
            &self.retire_sleeps,
            &self.retire_wait_ns,
            &self.retire_wait_max_ns,
        ]
    }

    fn read(&self) -> CrewStats {
        Counters::stats(self.all().map(|c| c.load(Ordering::Relaxed)))
    }

    /// [`read`](Self::read), each counter set back to zero as it is read (a count made meanwhile
    /// lands in this snapshot or the next, never in neither).
    fn take(&self) -> CrewStats {
        Counters::stats(self.all().map(|c| c.swap(0, Ordering::Relaxed)))
    }

    fn stats(values: [u64; 12]) -> CrewStats {
        let [
            jobs,
            warm_jobs,
            wakeups,
            wakeup_ns,
            helper_joins,
            late_arrivals,
            spins,
            moves,
            retire_waits,
            retire_sleeps,
            wait,
            max,
        ] = values;
        CrewStats {
            jobs,
            warm_jobs,
            wakeups,
            wakeup_time: Duration::from_nanos(wakeup_ns),
            helper_joins,
            late_arrivals,
            spins,
            moves,
            retire_waits,
            retire_sleeps,
            retire_wait_total: Duration::from_nanos(wait),
            retire_wait_max: Duration::from_nanos(max),
        }
    }
}

struct CrewState {
    slot: Mutex<Slot>,
    /// A copy of `Slot::epoch`, written under the mutex, read without it by spinning helpers.
    posted: AtomicU64,
    /// The CPU the caller of the latest job ran on when it published it ([`NO_CPU`]: unknown).
    caller_cpu: AtomicUsize,
    start: Condvar,
    finished: Condvar,
    /// When the crew was built: `posted_at` counts from here.
    origin: Instant,
    /// When the latest job was published, ns since `origin` (statistics, outside the protocol: a
    /// plain atomic under loom too, like the other measurements below).
    posted_at: std::sync::atomic::AtomicU64,
    /// A copy of `Slot::running`, written under the mutex, read without it by a caller waiting for
    /// its helpers to leave the job (Release/Acquire: what they wrote is visible once it reads 0).
    inside: AtomicUsize,
    /// Helpers spinning for the next job now (in `spin_for_next`).
    spinning: AtomicUsize,
    /// A caller has signalled `start` for parked helpers and none has looked at the slot since: a
    /// wake-up is on its way, and a job published meanwhile needs no second system call (the
    /// woken helper takes the mutex and finds the newest job). Set by a caller under the mutex,
    /// in the critical section that publishes the job (its `notify_all` follows the unlock);
    /// cleared by a helper in every critical section in which it looks for a job (and so in the
    /// one in which it starts to wait).
    waking: AtomicBool,
    /// Whether a helper was spinning when the latest job was published.
    posted_warm: std::sync::atomic::AtomicBool,
    /// Settling estimates (`support::time::settling_average`: down fast, up slowly) of the delay
    /// from publishing a job to a helper starting it, ns (0: none yet): for jobs published while
    /// a helper spun (warm: about a microsecond) and while every helper was parked (cold: a futex
    /// wake-up, 50–300 µs on a VM). Kept apart, because a node that shares every frame keeps its
    /// helpers warm, and one average would let the cold wake-ups of rare explorations stop it from
    /// ever sharing. Settling, because a delay is noisy upwards only (the helper's vCPU taken
    /// away): with a moving average one 100 µs outlier among 1 µs joins held the warm estimate
    /// above 6 µs for a dozen jobs, and a VGA `not` (10 µs) alone meanwhile — and a node kept
    /// alone publishes no warm job to bring the estimate back down (measured: with a moving
    /// average the model shared 2114 of 3900 runs that always sharing ran 20 % faster; 3662 with
    /// the settling estimate).
    join_warm_ns: std::sync::atomic::AtomicU64,
    join_cold_ns: std::sync::atomic::AtomicU64,
    /// What [`Crew::stats`] reports.
    counters: Counters,
}

impl CrewState {
    /// ns since `origin`.
    fn now_ns(&self) -> u64 {
        self.origin.elapsed().as_nanos().min(u64::MAX as u128) as u64
    }

    /// A helper joined the current job now (`lower_bound` false), or the caller finished it before
    /// any did (`lower_bound`: the delay was at least this long). A lower bound only ever raises the
    /// estimate, an eighth of the way as a slower sample does: settled in like a join, a 30 µs
    /// node's lower bounds would pull a 150 µs cold estimate to 60.
    fn note_join(&self, lower_bound: bool) {
        let delay = self.now_ns().saturating_sub(self.posted_at.load(Ordering::Relaxed));
        let average = if self.posted_warm.load(Ordering::Relaxed) { &self.join_warm_ns } else { &self.join_cold_ns };
        if !lower_bound || delay > average.load(Ordering::Relaxed) {
            crate::support::time::settling_average(average, delay);
        }
    }

    fn slot(&self) -> MutexGuard<'_, Slot> {
        lock(&self.slot)
    }
}

protocol_local! {
    /// This thread's crew index (a helper), or `usize::MAX`.
    static CREW_INDEX: Cell<usize> = Cell::new(usize::MAX);
    /// This thread is running crew work (as a helper or as the caller of `run`).
    static IN_CREW: Cell<bool> = Cell::new(false);
}

/// Marks the thread as running crew work until dropped.
struct InCrew(bool);

impl InCrew {
    fn enter() -> InCrew {
        InCrew(IN_CREW.with(|c| c.replace(true)))
    }
}

impl Drop for InCrew {
    fn drop(&mut self) {
        IN_CREW.with(|c| c.set(self.0));
    }
}

/// The helper threads of a context.
pub(crate) struct Crew {
    state: Arc<CrewState>,
    handles: Vec<JoinHandle<()>>,
}

impl Crew {
    /// Start `helpers` parked threads named by `name(i)`; every one is running when this returns.
    pub(super) fn new(helpers: usize, name: impl Fn(usize) -> String) -> std::io::Result<Crew> {
        let state = Arc::new(CrewState {
            slot: Mutex::new(Slot { epoch: 0, job: None, wanted: 0, running: 0, started: 0, shutdown: false }),
            posted: AtomicU64::new(0),
            caller_cpu: AtomicUsize::new(NO_CPU),
            start: Condvar::new(),
            finished: Condvar::new(),
            origin: Instant::now(),
            posted_at: std::sync::atomic::AtomicU64::new(0),
            inside: AtomicUsize::new(0),
            spinning: AtomicUsize::new(0),
            waking: AtomicBool::new(false),
            posted_warm: std::sync::atomic::AtomicBool::new(false),
            join_warm_ns: std::sync::atomic::AtomicU64::new(0),
            join_cold_ns: std::sync::atomic::AtomicU64::new(0),
            counters: Counters::default(),
        });
        let mut crew = Crew { state, handles: Vec::with_capacity(helpers) };
        for i in 0..helpers {
            let state = Arc::clone(&crew.state);
            let spawned = thread::Builder::new().name(name(i)).spawn(move || {
                CREW_INDEX.with(|c| c.set(i));
                state.slot().started += 1;
                state.finished.notify_all();
                helper(&state);
            });
            // On failure, dropping `crew` stops and joins the helpers started so far.
            crew.handles.push(spawned?);
        }
        let mut slot = crew.state.slot();
        while slot.started < helpers {
            slot = crew.state.finished.wait(slot).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        drop(slot);
        Ok(crew)
    }

    /// How long a helper has lately taken to join a job published while one spun (warm) and while
    /// all were parked (cold), zero before the first such job; and whether one is spinning now (a
    /// job published now is warm).
    pub(crate) fn join_estimate(&self) -> (Duration, Duration, bool) {
        let ns = |a: &std::sync::atomic::AtomicU64| Duration::from_nanos(a.load(Ordering::Relaxed));
        (ns(&self.state.join_warm_ns), ns(&self.state.join_cold_ns), self.state.spinning.load(Ordering::Relaxed) > 0)
    }

    /// How long a helper spins for the next job before it parks.
    pub(crate) const SPIN: Duration = SPIN;

    /// What the crew did since it was built or since the last [`take_stats`](Self::take_stats).
    pub(crate) fn stats(&self) -> CrewStats {
        self.state.counters.read()
    }

    /// [`stats`](Self::stats), the counters starting again from zero (a count made meanwhile by a
    /// running job lands on one side or the other).
    pub(crate) fn take_stats(&self) -> CrewStats {
        self.state.counters.take()
    }

    /// This thread's helper index, if it is a crew thread (of any context).
    pub(crate) fn current_index() -> Option<usize> {
        let i = CREW_INDEX.with(|c| c.get());
        (i != usize::MAX).then_some(i)
    }

    /// Run `work` on the calling thread and on up to `helpers` crew threads at once, returning when
    /// every one of them has returned from it. `work` must share its items out itself (an atomic
    /// counter) and must not unwind (callers catch panics per item). Allocates nothing.
    pub(crate) fn run(&self, helpers: usize, work: &(dyn Fn() + Sync)) {
        self.run_counted(helpers, &|_| work());
    }

    /// [`run`](Self::run), telling `work` how many threads were invited to share it: the caller
    /// and the helpers the job was published to, or 1 when the caller runs it alone (inside
    /// another crew job, or with the crew busy with another caller's). Helpers invited may still
    /// come late and find nothing left.
    pub(crate) fn run_counted(&self, helpers: usize, work: &(dyn Fn(usize) + Sync)) {
        let helpers = helpers.min(self.handles.len());
        if helpers == 0 || IN_CREW.with(|c| c.get()) {
            let _inside = InCrew::enter();
            work(1);
            return;
        }
        let mut slot = self.state.slot();
        if slot.job.is_some() {
            // Another caller's job: do this one alone rather than wait.
            drop(slot);
            let _inside = InCrew::enter();
            work(1);
            return;
        }
        let invited = &|| work(helpers + 1);
        // SAFETY: the job is only called by helpers between here and the `Retire` guard's drop,
        // which runs before this function returns or unwinds: it takes the job out of the slot (no
        // helper can start it afterwards) and waits until no helper is inside it. So `invited` (and
        // `work`, which it borrows) outlives every call made through the erased reference.
        let job = Job(unsafe { std::mem::transmute::<&(dyn Fn() + Sync), &'static (dyn Fn() + Sync)>(invited) });
        slot.job = Some(job);
        slot.wanted = helpers;
        slot.epoch = slot.epoch.wrapping_add(1);
        self.state.caller_cpu.store(cpu::current().unwrap_or(NO_CPU), Ordering::Relaxed);
        self.state.posted_at.store(self.state.now_ns(), Ordering::Relaxed);
        let warm = self.state.spinning.load(Ordering::Relaxed) > 0;
        self.state.posted_warm.store(warm, Ordering::Relaxed);
        self.state.posted.store(slot.epoch, Ordering::Release);
        // Helpers spinning see `posted`; only parked ones need the futex wake-up (a system call
        // even when nobody sleeps, and on a VM an interrupt to the parked CPU), and only once per
        // wake-up: while one is on its way (`waking`), the woken helper will take the mutex after
        // this publication and find the job. One that stops spinning after this read takes the
        // mutex after the publication above and finds the job there (see this file's module doc).
        // Read and swapped under the mutex: a helper that takes it later clears the flag after
        // this swap, and one that took it before is asleep on the condition variable (the wait
        // releases the mutex and sleeps as one step) when the wake-up below is sent. (Swapped
        // after the unlock, a helper could take the mutex, clear the flag, and park just after
        // the swap and the wake-up: the flag then stayed set with every helper asleep, and no
        // later job woke them.)
        let wake =
            self.state.spinning.load(Ordering::SeqCst) < helpers && !self.state.waking.swap(true, Ordering::SeqCst);
        drop(slot);
        let counters = &self.state.counters;
        if wake {
            // The statistics' clock (real time under loom too: outside the protocol).
            let sent_from = Instant::now();
            self.state.start.notify_all();
            let took = sent_from.elapsed().as_nanos().min(u64::MAX as u128) as u64;
            Counters::bump(&counters.wakeups);
            counters.wakeup_ns.fetch_add(took, Ordering::Relaxed);
        }
        // Counted by the caller only (helpers' joins too, at retire): the counters' cache line
        // does not travel between the threads on every job.
        Counters::bump(&counters.jobs);
        if warm {
            Counters::bump(&counters.warm_jobs);
        }
        let _retire = Retire(&self.state, helpers);
        let _inside = InCrew::enter();
        invited();
    }
}

/// Retires the published job (for `.1` helpers) and waits for the helpers inside it (also on
/// unwind).
struct Retire<'a>(&'a CrewState, usize);

impl Drop for Retire<'_> {
    fn drop(&mut self) {
        let mut slot = self.0.slot();
        if slot.wanted == self.1 {
            // No helper came before the caller finished: its time is a lower bound of the delay.
            self.0.note_join(true);
        }
        // Every helper that joined took one of the `wanted` places, under this mutex.
        let joined = self.1.saturating_sub(slot.wanted) as u64;
        self.0.counters.helper_joins.fetch_add(joined, Ordering::Relaxed);
        slot.job = None;
        slot.wanted = 0;
        if slot.running == 0 {
            return;
        }
        // A helper is finishing its last item — with work shared out by stealing, a part of one
        // tile. Wait for it spinning, briefly, rather than sleeping on the condition variable: a
        // futex sleep and wake-up of this thread costs more than that on a VM. No helper can join
        // now (the job is gone), so `inside` only falls.
        drop(slot);
        // The statistics' clock (real time under loom too: outside the protocol).
        let waited_from = Instant::now();
        let start = SpinBudget::start();
        while self.0.inside.load(Ordering::Acquire) > 0 && !start.spent(RETIRE_SPIN) {
            for _ in 0..SpinBudget::BATCH {
                SpinBudget::pause();
            }
        }
        let mut slot = self.0.slot();
        let counters = &self.0.counters;
        if slot.running > 0 {
            Counters::bump(&counters.retire_sleeps);
        }
        while slot.running > 0 {
            slot = self.0.finished.wait(slot).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        drop(slot);
        let waited = waited_from.elapsed().as_nanos().min(u64::MAX as u128) as u64;
        Counters::bump(&counters.retire_waits);
        counters.retire_wait_ns.fetch_add(waited, Ordering::Relaxed);
        counters.retire_wait_max_ns.fetch_max(waited, Ordering::Relaxed);
    }
}

/// Spin until a job newer than `seen` is posted, [`SPIN`] has passed, or this helper finds itself on
/// the last caller's CPU (spinning there would take the CPU from the caller). The helper then takes
/// the mutex and either joins the job or parks.
fn spin_for_next(state: &CrewState, seen: u64) {
    let start = SpinBudget::start();
    loop {
        for _ in 0..SpinBudget::BATCH {
            if state.posted.load(Ordering::Acquire) != seen {
                return;
            }
            SpinBudget::pause();
        }
        if start.spent(SPIN) || cpu::current() == Some(state.caller_cpu.load(Ordering::Relaxed)) {
            return;
        }
    }
}

/// Whether this helper runs on the latest caller's CPU and could move off it.
fn on_callers_cpu(state: &CrewState, allowed: Option<&CpuSet>) -> bool {
    allowed.is_some() && cpu::current() == Some(state.caller_cpu.load(Ordering::Relaxed))
}

/// Before joining a job: leave the caller's CPU if the helper was woken on it. (A move that
/// fails, or leaves the helper on that CPU, is tried once per look at the slot: the helper then
/// joins where it is.)
fn leave_callers_cpu(state: &CrewState, allowed: Option<&CpuSet>) {
    let caller = state.caller_cpu.load(Ordering::Relaxed);
    if let (Some(allowed), Some(here)) = (allowed, cpu::current())
        && here == caller
        && allowed.move_off(here)
    {
        Counters::bump(&state.counters.moves);
    }
}

fn helper(state: &CrewState) {
    // The CPUs this helper may use (inherited from the thread that built the crew); moving off the
    // caller's CPU restricts it to this set minus that one CPU.
    let allowed = CpuSet::of_this_thread();
    let mut seen = 0u64;
    'next: loop {
        // Off the caller's CPU before spinning (spinning there would take the CPU from it) and
        // before joining, not after: a helper counted in `running` that then migrates (a wake-up
        // of the other vCPU, 100 µs and more on a VM) kept the caller waiting in `Retire` for it
        // long after the caller had done every item (a 1080p `not` on two threads: 370 µs a run
        // against 100 µs alone). Moved first, it finds the job retired if it arrives too late,
        // and no one waits for it.
        leave_callers_cpu(state, allowed.as_ref());
        state.spinning.fetch_add(1, Ordering::SeqCst);
        Counters::bump(&state.counters.spins);
        spin_for_next(state, seen);
        state.spinning.fetch_sub(1, Ordering::SeqCst);
        leave_callers_cpu(state, allowed.as_ref());
        let mut slot = state.slot();
        // Holding the mutex, this helper sees every job published before: a wake-up signalled
        // before now has done its work (or was not needed).
        state.waking.store(false, Ordering::SeqCst);
        // A move tried since this helper last slept (one per wake-up: a move that fails, or that
        // the scheduler undoes, must not keep it cycling through the mutex while a job waits).
        let mut moved = false;
        loop {
            if slot.shutdown {
                return;
            }
            if slot.job.is_none() && slot.epoch != seen {
                Counters::bump(&state.counters.late_arrivals);
                // A job published since this helper last looked and already retired: it came too
                // late (a wake-up, or a move off the caller's CPU, took longer than the job).
                // Spin for the next one rather than park — a caller that published one job is
                // likely to publish another within the spin, and will find this helper warm.
                // (Parking here kept a VGA node's helper cold for good: each wake-up came after
                // the node was done.) Each pass needs a newer epoch: no loop without jobs.
                seen = slot.epoch;
                drop(slot);
                continue 'next;
            }
            // Nothing to join: no new job (the branch above took a newer epoch without one), or
            // the job needs no more helpers.
            if slot.epoch == seen || slot.job.is_none() || slot.wanted == 0 {
                slot = state.start.wait(slot).unwrap_or_else(std::sync::PoisonError::into_inner);
                state.waking.store(false, Ordering::SeqCst);
                moved = false;
                continue;
            }
            // A job to join. Woken onto the caller's CPU (Linux wakes a thread where its waker
            // runs): move off it outside the mutex, then look at the slot again.
            if moved || !on_callers_cpu(state, allowed.as_ref()) {
                break;
            }
            drop(slot);
            leave_callers_cpu(state, allowed.as_ref());
            moved = true;
            slot = state.slot();
            state.waking.store(false, Ordering::SeqCst);
        }
        seen = slot.epoch;
        slot.wanted -= 1;
        slot.running += 1;
        state.inside.store(slot.running, Ordering::Release);
        let Some(Job(job)) = slot.job else { continue };
        drop(slot);
        state.note_join(false);
        {
            let _inside = InCrew::enter();
            // Items catch their own panics; this only keeps the helper alive if one escapes.
            let _ = catch_panic(job);
        }
        let mut slot = state.slot();
        slot.running -= 1;
        state.inside.store(slot.running, Ordering::Release);
        if slot.running == 0 {
            state.finished.notify_all();
        }
    }
}

impl Drop for Crew {
    fn drop(&mut self) {
        self.state.slot().shutdown = true;
        self.state.start.notify_all();
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    //! The crew's protocol under the model checker: every interleaving (up to a preemption bound)
    //! of a caller publishing jobs and a helper spinning, parking, being woken onto the caller's
    //! CPU and moving off it, joining, and shutting down. Run with
    //! `RUSTFLAGS="--cfg loom" cargo test -p vx-rs --lib --release loom` (`.ci/run` does).
    //! A deadlock or a thread left blocked fails the model; so does a job whose caller waits for a
    //! helper that never comes (a lost wake-up: the caller's wait runs out of loom's branches).

    use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};

    use super::Crew;

    use crate::shared::model::check as model;

    /// A job that finishes only once a helper has run it (the caller waits inside it).
    fn run_needing_a_helper(crew: &Crew) {
        let helped = AtomicBool::new(false);
        crew.run(1, &|| {
            if Crew::current_index().is_some() {
                helped.store(true, SeqCst);
            } else {
                while !helped.load(SeqCst) {
                    loom::thread::yield_now();
                }
            }
        });
    }

    /// Two helpers, one job that needs both of them: `wanted` lets each join once, and both are
    /// woken (one wake-up for all parked helpers) or find it spinning.
    #[test]
    fn loom_two_helpers_both_join_a_job_that_needs_both() {
        model(2, || {
            let crew = Crew::new(2, |i| format!("loom-{i}")).unwrap();
            let joined = [AtomicUsize::new(0), AtomicUsize::new(0)];
            crew.run(2, &|| match Crew::current_index() {
                Some(i) => {
                    joined[i].fetch_add(1, SeqCst);
                }
                None => {
                    while joined.iter().any(|j| j.load(SeqCst) == 0) {
                        loom::thread::yield_now();
                    }
                }
            });
            // Checked on the caller: a panic inside the job would be caught on a helper.
            for (i, j) in joined.iter().enumerate() {
                assert_eq!(j.load(SeqCst), 1, "helper {i} joined the job {} times", j.load(SeqCst));
            }
        });
    }

    /// Items shared by the caller and one helper: `run` returns only when no helper is inside the
    /// job (the job's borrowed closure outlives every call through it) and every item has run
    /// (none finished by a helper after `run` returned).
    #[test]
    fn loom_every_item_runs_once_and_run_returns_with_no_helper_inside() {
        model(3, || {
            let crew = Crew::new(1, |i| format!("loom-{i}")).unwrap();
            for _ in 0..2 {
                let next = AtomicUsize::new(0);
                let done = [AtomicUsize::new(0), AtomicUsize::new(0)];
                let inside = AtomicUsize::new(0);
                crew.run(1, &|| {
                    inside.fetch_add(1, SeqCst);
                    while let Some(d) = done.get(next.fetch_add(1, SeqCst)) {
                        d.fetch_add(1, SeqCst);
                    }
                    inside.fetch_sub(1, SeqCst);
                });
                assert_eq!(inside.load(SeqCst), 0, "a helper was still inside the job when run returned");
                assert!(done.iter().all(|d| d.load(SeqCst) == 1), "an item ran twice or never");
            }
        });
    }

    /// Jobs that finish only once a helper has run them, published one after another (the helper
    /// spinning, parking, or woken with a wake-up already on its way): every one is joined.
    #[test]
    fn loom_every_job_that_waits_for_a_helper_is_joined() {
        model(3, || {
            let crew = Crew::new(1, |i| format!("loom-{i}")).unwrap();
            for _ in 0..2 {
                run_needing_a_helper(&crew);
            }
        });
    }

    /// Jobs that wait for a helper whose first move off the caller's CPU fails: it joins from
    /// the caller's CPU (one move per wake-up, then it joins where it is) instead of cycling
    /// through the mutex while the job waits.
    #[test]
    fn loom_a_helper_whose_move_fails_joins_where_it_is() {
        model(3, || {
            crate::shared::model::FIRST_MOVE_FAILS.with(|f| f.set(true));
            let crew = Crew::new(1, |i| format!("loom-{i}")).unwrap();
            for _ in 0..2 {
                run_needing_a_helper(&crew);
            }
        });
    }

    /// A job the caller finishes alone, then one that needs the helper: the first may retire
    /// before the helper arrives (it then looks for the next job instead of parking), and the
    /// second must still be joined.
    #[test]
    fn loom_a_helper_late_for_one_job_joins_the_next() {
        model(3, || {
            let crew = Crew::new(1, |i| format!("loom-{i}")).unwrap();
            crew.run(1, &|| {});
            run_needing_a_helper(&crew);
        });
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

    use super::Crew;
    use crate::support::cpu::{self, CpuSet};
    use crate::support::unwind::catch_panic;

    #[test]
    fn every_item_runs_once_and_helpers_take_part() {
        let crew = Crew::new(3, |i| format!("crew-test-{i}")).unwrap();
        for _ in 0..200 {
            let next = AtomicUsize::new(0);
            let done: Vec<AtomicUsize> = (0..64).map(|_| AtomicUsize::new(0)).collect();
            let helpers_seen = AtomicUsize::new(0);
            crew.run(3, &|| {
                while let Some(d) = done.get(next.fetch_add(1, SeqCst)) {
                    d.fetch_add(1, SeqCst);
                    if Crew::current_index().is_some() {
                        helpers_seen.fetch_add(1, SeqCst);
                    }
                    std::hint::spin_loop();
                }
            });
            assert!(done.iter().all(|d| d.load(SeqCst) == 1));
        }
    }

    /// Run `f` on a crew helper (the caller waits in the job until one has run it) and return its
    /// result.
    fn on_a_helper<T: Send>(crew: &Crew, f: impl Fn() -> T + Sync) -> T {
        let out = std::sync::Mutex::new(None);
        crew.run(1, &|| {
            if Crew::current_index().is_some() {
                *out.lock().unwrap() = Some(f());
            } else {
                let t = std::time::Instant::now();
                while out.lock().unwrap().is_none() && t.elapsed() < std::time::Duration::from_secs(10) {
                    std::thread::yield_now();
                }
            }
        });
        out.into_inner().unwrap().expect("a helper joined the job")
    }

    /// The statistics count what happened: a job a helper joins, a job whose caller finishes
    /// while the helper is still inside (and sleeps past its spin until it leaves), and a reset.
    #[test]
    fn the_statistics_count_jobs_joins_and_waits_for_a_helper() {
        let crew = Crew::new(1, |i| format!("stats-{i}")).unwrap();
        // Nothing counted yet but the helper's first spin, if it started already.
        let s = crew.stats();
        assert!(s.spins <= 1, "{s:?}");
        assert_eq!(s, super::CrewStats { spins: s.spins, ..Default::default() });
        assert!(on_a_helper(&crew, || true));
        // (Whether the caller waited for that helper to leave is up to the scheduler.)
        let s = crew.take_stats();
        assert_eq!((s.jobs, s.helper_joins), (1, 1), "{s:?}");
        // The helper stays inside 20 ms after the caller saw it start.
        let inside = std::sync::atomic::AtomicBool::new(false);
        crew.run(1, &|| {
            if Crew::current_index().is_some() {
                inside.store(true, SeqCst);
                std::thread::sleep(std::time::Duration::from_millis(20));
            } else {
                let t = std::time::Instant::now();
                while !inside.load(SeqCst) && t.elapsed() < std::time::Duration::from_secs(10) {
                    std::thread::yield_now();
                }
            }
        });
        assert!(inside.load(SeqCst), "a helper joined the job");
        let s = crew.take_stats();
        assert_eq!((s.jobs, s.helper_joins, s.retire_waits, s.retire_sleeps), (1, 1, 1, 1), "{s:?}");
        assert!(s.retire_wait_max >= std::time::Duration::from_millis(10), "{s:?}");
        assert!(s.retire_wait_total >= s.retire_wait_max, "{s:?}");
        // Reset: what the caller counts starts again from zero (a helper may still move).
        let s = crew.stats();
        assert_eq!((s.jobs, s.helper_joins, s.retire_waits, s.wakeups), (0, 0, 0, 0), "{s:?}");
    }

    /// The next of a xorshift sequence (the tests' gaps between jobs).
    fn xorshift(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    /// `VX_CREW_RUNS` (300) jobs that wait for a helper, on crews of 1 and 3 helpers, each after a
    /// gap of 0, 100, 190–210 (the spin's end) or 400 µs and a burst of up to `max_burst` jobs
    /// the caller finishes alone: every one is joined within 5 s.
    fn every_waiting_job_is_joined(name: &str, seed: u64, max_burst: u64) {
        let runs: usize = std::env::var("VX_CREW_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(300);
        for helpers in [1, 3] {
            let crew = Crew::new(helpers, |i| format!("{name}-{i}")).unwrap();
            let mut x = seed;
            for run in 0..runs {
                let x = xorshift(&mut x);
                let gap = [0, 100, 190 + x % 21, 400][(x >> 32) as usize % 4];
                std::thread::sleep(std::time::Duration::from_micros(gap));
                for _ in 0..(x >> 40) % (max_burst + 1) {
                    crew.run(helpers, &|| {});
                }
                let t = std::time::Instant::now();
                assert!(on_a_helper(&crew, || true), "run {run}");
                assert!(t.elapsed() < std::time::Duration::from_secs(5), "run {run}: joined after {:?}", t.elapsed());
            }
        }
    }

    /// Jobs published while helpers spin, while they are about to park and while they are parked
    /// (gaps around `SPIN`): every job is joined (a job published without the wake-up a parked
    /// helper needed would wait out `on_a_helper`'s 10 s and fail).
    #[test]
    fn a_helper_joins_every_job_whether_it_spun_or_parked() {
        every_waiting_job_is_joined("crew-gap", 0x2545_f491_4f6c_dd1d, 0);
    }

    /// Jobs the caller finishes alone, published in a burst while the parked helpers' wake-up is
    /// on its way (`waking`: one `notify_all` for the burst), then one that waits for a helper: it
    /// is joined, whatever the gap before the burst and the burst's length (a wake-up flag left
    /// set with every helper parked would fail it after 10 s).
    #[test]
    fn jobs_published_while_a_wake_up_is_on_its_way_are_joined() {
        every_waiting_job_is_joined("crew-wake", 0x9e37_79b9_7f4a_7c15, 4);
    }

    #[test]
    fn a_helper_woken_on_the_callers_cpu_leaves_it_before_running_the_job() {
        let Some(all) = CpuSet::of_this_thread() else { return };
        if all.count() < 2 {
            return; // nowhere to go
        }
        std::thread::spawn(|| {
            let crew = Crew::new(1, |i| format!("crew-cpu-{i}")).unwrap();
            let here = cpu::current().unwrap();
            assert!(CpuSet::pin_to(here));
            for _ in 0..5 {
                // Force the collision: the helper pins itself to the caller's CPU, so it is woken there.
                assert!(on_a_helper(&crew, || CpuSet::pin_to(here)));
                assert_ne!(on_a_helper(&crew, cpu::current), Some(here), "the helper ran the job on the caller's CPU");
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn nested_runs_and_a_busy_crew_run_alone() {
        let crew = Crew::new(2, |i| format!("crew-nest-{i}")).unwrap();
        let total = AtomicUsize::new(0);
        crew.run(2, &|| {
            // Inside crew work: runs on this thread, at once.
            crew.run(2, &|| {
                total.fetch_add(1, SeqCst);
            });
        });
        // The outer job ran on the caller and on up to 2 helpers: 1 to 3 inner runs.
        assert!((1..=3).contains(&total.load(SeqCst)), "{}", total.load(SeqCst));
    }

    /// `run_counted` tells the work how many threads were invited: the caller and the helpers (no
    /// more than the crew has), or 1 when the caller runs it alone (nested, or no helper asked).
    #[test]
    fn counted_runs_tell_the_work_how_many_threads_were_invited() {
        let crew = Crew::new(2, |i| format!("crew-count-{i}")).unwrap();
        let seen = std::sync::Mutex::new(Vec::new());
        for (helpers, want) in [(0, 1), (1, 2), (2, 3), (5, 3)] {
            seen.lock().unwrap().clear();
            crew.run_counted(helpers, &|n| seen.lock().unwrap().push(n));
            let seen = seen.lock().unwrap();
            assert!(!seen.is_empty() && seen.iter().all(|&n| n == want), "{helpers} helpers: {seen:?}");
        }
        let inner = std::sync::Mutex::new(Vec::new());
        crew.run(2, &|| crew.run_counted(2, &|n| inner.lock().unwrap().push(n)));
        let inner = inner.into_inner().unwrap();
        assert!(!inner.is_empty() && inner.iter().all(|&n| n == 1), "nested: {inner:?}");
    }

    #[test]
    fn a_panicking_item_on_the_caller_still_waits_for_the_helpers() {
        vx_plugin_abi::expect_panics("caller's item fails");
        let crew = Crew::new(2, |i| format!("crew-panic-{i}")).unwrap();
        let inside = AtomicUsize::new(0);
        let r = catch_panic(|| {
            crew.run(2, &|| {
                if Crew::current_index().is_none() {
                    panic!("caller's item fails");
                }
                inside.fetch_add(1, SeqCst);
                std::thread::sleep(std::time::Duration::from_millis(5));
                inside.fetch_sub(1, SeqCst);
            })
        });
        assert!(r.is_err());
        assert_eq!(inside.load(SeqCst), 0, "no helper is still inside after run unwound");
        // The crew still works.
        let n = AtomicUsize::new(0);
        crew.run(2, &|| {
            n.fetch_add(1, SeqCst);
        });
        assert!(n.load(SeqCst) >= 1);
    }

    #[test]
    fn a_helper_woken_for_a_job_already_retired_spins_for_the_next_one() {
        // A parked helper woken by a job the caller finishes at once arrives after the retire.
        // It must spin for the next job, not park again: a stream of jobs shorter than a wake-up
        // otherwise never finds it warm.
        // One CPU: the helper cannot leave the caller's, and does not spin there.
        if CpuSet::of_this_thread().is_none_or(|s| s.count() < 2) {
            return;
        }
        let crew = Crew::new(1, |i| format!("crew-late-{i}")).unwrap();
        // Waits for a condition the crew must reach; the bound is only there to fail instead of
        // hang (events, not timing, decide the outcome: a loaded machine only makes it slower).
        let reach = |what: &str, done: &dyn Fn() -> bool| {
            let t = std::time::Instant::now();
            while !done() {
                assert!(t.elapsed() < std::time::Duration::from_secs(20), "the helper never {what}");
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
        };
        // A helper starts spinning when it starts, after each job it joined and after each late
        // arrival, and nowhere else: every spin it owes is begun (and it is not spinning now).
        let owes_no_spin = || {
            let s = crew.stats();
            s.spins == 1 + s.helper_joins + s.late_arrivals
        };
        let settled = || owes_no_spin() && !crew.join_estimate().2;
        let mut late = 0;
        for _ in 0..20 {
            // Parked (a helper still spinning would join the job warm instead of arriving late).
            std::thread::sleep(super::SPIN * 5);
            reach("settled", &settled);
            let before = crew.stats();
            crew.run(1, &|| {});
            if crew.stats().helper_joins > before.helper_joins {
                continue; // It came in time.
            }
            // Woken for the job (or on its way to the mutex when it was published), it finds the
            // job retired, counts a late arrival, and then begins a spin: a helper that parked
            // again would owe that spin for good, as nothing else wakes it.
            reach("arrived", &|| crew.stats().late_arrivals > before.late_arrivals);
            reach("spun after arriving late", &owes_no_spin);
            late += 1;
        }
        // The caller of a one-item job with nothing to do finishes first nearly every time; a
        // helper that made every one of 20 jobs in time would leave the path above untested.
        assert!(late > 0, "no late arrival in 20 jobs: the test did not exercise the path");
    }
}
