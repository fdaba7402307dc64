//! Targets (TIOVX's `TIVX_TARGET_*`, Khronos `vx_khr_target_kernel`) as a host has them: a named
//! **executor** — its own threads (one by default, optionally pinned to cores) and a FIFO job
//! queue — that runs the nodes assigned to it and the control commands sent to them in order of
//! arrival. The context's default target, [`HOST_TARGET`], is not an executor: its nodes run on the
//! calling thread and the crew, as they always did.
//!
//! A job is two words and a function pointer ([`Job`]): the process path queues jobs without
//! allocating (the queue's capacity is reserved at start), and the submitter keeps the job's data
//! alive until the job signals completion ([`Latch`]). A job submitted from one of the target's own
//! threads runs inline ([`Executor::is_current`]): a callback that queued behind itself would wait
//! forever.
//!
//! Panics inside a job are caught by the worker (node callbacks are guarded already; this keeps a
//! worker alive whatever a job does). Dropping the context stops the workers: each finishes the job
//! in hand, the queue is drained, and the threads are joined — except a worker that does not come
//! back within [`JOIN_GRACE`] (a hung control callback), which is detached and reported.

use std::cell::{Cell, UnsafeCell};
use std::collections::VecDeque;
use std::panic::resume_unwind;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorKind, Result};
use crate::shared::model::{AtomicU64, Condvar, CpuSet, JoinHandle, Mutex, join_by, lock, protocol_local, thread};
use crate::support::ids::next_id;
use crate::support::unwind::catch_panic;
// `std`'s `Arc` even under loom: executors are shared with the rest of the runtime as
// `std::sync::Arc` (loom's `Arc` only adds leak checks).
use std::sync::Arc;

/// The name of the default target: nodes run on the calling thread and the crew.
pub const HOST_TARGET: &str = "host";
/// The most jobs a target's queue may hold (`TargetConfig::queue_depth`; reserved at start).
pub const MAX_QUEUE_DEPTH: usize = 1 << 16;
/// `VX_TARGET_ANY`: [`Node::set_target`](crate::Node::set_target) with this name (any case) lets
/// the runtime choose any target that implements the node's kernel (the default rule).
pub const TARGET_ANY: &str = "any";

/// How long dropping a context waits for each target thread before detaching it.
const JOIN_GRACE: Duration = Duration::from_secs(2);

/// A target the context creates (`ContextBuilder::target`): a named executor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetConfig {
    /// The target's name (what `Node::set_target` and kernels' target implementations name).
    pub name: String,
    /// Threads taking jobs from the queue (1: jobs run one at a time, in order of arrival).
    pub threads: usize,
    /// Cores the threads are pinned to (empty: not pinned).
    pub cores: Vec<usize>,
    /// Most jobs waiting in the queue; a command to a full queue is refused.
    pub queue_depth: usize,
}

impl TargetConfig {
    /// A target of one thread, not pinned, with a queue of 64 jobs.
    pub fn new(name: &str) -> TargetConfig {
        TargetConfig { name: name.to_owned(), threads: 1, cores: Vec::new(), queue_depth: 64 }
    }
    /// Threads taking jobs (at least 1).
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = n;
        self
    }
    /// Pin the target's threads to these cores.
    pub fn pin_to_cores(mut self, cores: &[usize]) -> Self {
        self.cores = cores.to_vec();
        self
    }
    /// Most jobs waiting in the queue (at least 1).
    pub fn queue_depth(mut self, n: usize) -> Self {
        self.queue_depth = n;
        self
    }

    pub(super) fn check(&self) -> Result<()> {
        let bad = |what: &str| Error::new(ErrorKind::InvalidValue, format!("target '{}': {what}", self.name));
        if self.name.is_empty()
            || self.name.eq_ignore_ascii_case(HOST_TARGET)
            || self.name.eq_ignore_ascii_case(TARGET_ANY)
        {
            return Err(bad("the name must be non-empty and neither the default target's nor \"any\" (in any case)")
                .found(&self.name));
        }
        if self.threads == 0 || self.threads > super::MAX_THREADS {
            return Err(bad("a target has 1 to MAX_THREADS threads")
                .expected_found(format!("1..={}", super::MAX_THREADS), self.threads));
        }
        if self.queue_depth == 0 || self.queue_depth > MAX_QUEUE_DEPTH {
            return Err(bad("a target's queue holds 1 to MAX_QUEUE_DEPTH jobs")
                .expected_found(format!("1..={MAX_QUEUE_DEPTH}"), self.queue_depth));
        }
        Ok(())
    }
}

/// What a target is and has done (`Context::targets`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetInfo {
    /// The configuration it was created with.
    pub config: TargetConfig,
    /// Jobs (node calls, commands) taken by its threads so far, counted as each starts.
    pub jobs_run: u64,
    /// Jobs waiting now.
    pub queued: usize,
}

/// A unit of work: `run(data, arg)`. The submitter keeps `data` alive and usable from another
/// thread until the job has run (it waits on a [`Latch`] the job releases).
pub(crate) struct Job {
    pub(crate) run: unsafe fn(*const (), usize),
    pub(crate) data: *const (),
    pub(crate) arg: usize,
}

// SAFETY: a Job is a function pointer and an address; whoever builds one promises (see
// `Executor::submit`) that the data may be used from the worker thread until the job has run.
unsafe impl Send for Job {}

struct Queue {
    jobs: VecDeque<Job>,
    shutdown: bool,
}

/// A target's executor: its threads and FIFO.
pub(crate) struct Executor {
    id: u64,
    pub(crate) config: TargetConfig,
    queue: Mutex<Queue>,
    work: Condvar,
    space: Condvar,
    jobs_run: AtomicU64,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

protocol_local! {
    /// The executor the current thread works for (0: none).
    static CURRENT: Cell<u64> = Cell::new(0);
}

impl Executor {
    /// Start a target's threads (every one running before this returns).
    pub(super) fn start(config: TargetConfig, context: u64) -> Result<Arc<Executor>> {
        config.check()?;
        let ex = Arc::new(Executor {
            id: next_id(),
            queue: Mutex::new(Queue { jobs: VecDeque::with_capacity(config.queue_depth), shutdown: false }),
            work: Condvar::new(),
            space: Condvar::new(),
            jobs_run: AtomicU64::new(0),
            threads: Mutex::new(Vec::new()),
            config,
        });
        let started = Arc::new(Latch::new(ex.config.threads));
        let pin_failed = Arc::new(AtomicU64::new(0));
        for i in 0..ex.config.threads {
            let (worker, started, pin_failed) = (Arc::clone(&ex), Arc::clone(&started), Arc::clone(&pin_failed));
            let spawned =
                thread::Builder::new().name(format!("vx-ctx{context}-{}-{i}", ex.config.name)).spawn(move || {
                    if !worker.config.cores.is_empty() && !CpuSet::pin_to_cores(&worker.config.cores) {
                        pin_failed.fetch_add(1, Ordering::Relaxed);
                    }
                    CURRENT.with(|c| c.set(worker.id));
                    started.count_down();
                    worker.work_loop();
                });
            match spawned {
                Ok(h) => lock(&ex.threads).push(h),
                Err(e) => {
                    ex.stop();
                    return Err(Error::new(
                        ErrorKind::NoResources,
                        format!("could not start thread {i} of target '{}': {e}", ex.config.name),
                    ));
                }
            }
        }
        started.wait();
        if pin_failed.load(Ordering::Relaxed) > 0 {
            ex.stop();
            return Err(Error::new(
                ErrorKind::InvalidValue,
                format!("target '{}': its threads could not be pinned to the cores given", ex.config.name),
            )
            .found(format!("{:?}", ex.config.cores)));
        }
        tracing::debug!(target_name = %ex.config.name, threads = ex.config.threads, "target started");
        Ok(ex)
    }

    fn work_loop(&self) {
        loop {
            let job = {
                let mut q = lock(&self.queue);
                loop {
                    if let Some(j) = q.jobs.pop_front() {
                        break j;
                    }
                    if q.shutdown {
                        return;
                    }
                    q = self.work.wait(q).unwrap_or_else(std::sync::PoisonError::into_inner);
                }
            };
            self.space.notify_one();
            // Counted before the job runs: the job releases its submitter, who may read the count
            // at once (counting after raced with that read).
            self.jobs_run.fetch_add(1, Ordering::Relaxed);
            // SAFETY: the submitter promised `data` is usable until the job has run (`submit`).
            let r = catch_panic(|| unsafe { (job.run)(job.data, job.arg) });
            // Under loom a panic in a job is the model checker's own (a deadlock, a model's
            // assertion): it must fail the model, not be logged away.
            #[cfg(loom)]
            if let Err(p) = r {
                resume_unwind(p);
            }
            if r.is_err() {
                tracing::error!(target_name = %self.config.name, "a job panicked outside a guarded callback");
            }
        }
    }

    /// Whether the calling thread is one of this target's threads.
    pub(crate) fn is_current(&self) -> bool {
        CURRENT.with(|c| c.get()) == self.id
    }

    /// Queue `job`. `wait_for_space`: block while the queue is full (the process path: the caller
    /// waits for the job anyway); otherwise a full queue is an error naming the target.
    ///
    /// # Safety
    ///
    /// `job.data` must stay valid, and usable from another thread, until `job.run` has returned
    /// (the caller waits on a latch the job releases, or the data is owned by the job).
    pub(crate) unsafe fn submit(&self, job: Job, wait_for_space: bool) -> Result<()> {
        let mut q = lock(&self.queue);
        while q.jobs.len() >= self.config.queue_depth {
            if q.shutdown {
                break;
            }
            if !wait_for_space {
                return Err(Error::new(
                    ErrorKind::NoResources,
                    format!("the queue of target '{}' is full", self.config.name),
                )
                .expected_found(
                    format!("at most {} queued jobs (TargetConfig::queue_depth)", self.config.queue_depth),
                    q.jobs.len() + 1,
                ));
            }
            q = self.space.wait(q).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        if q.shutdown {
            return Err(Error::new(ErrorKind::InvalidReference, format!("target '{}' is stopped", self.config.name)));
        }
        q.jobs.push_back(job);
        drop(q);
        self.work.notify_one();
        Ok(())
    }

    /// Run `f` on this target and return its result (inline when called from one of the target's
    /// threads). A panic in `f` resumes on the caller.
    pub(crate) fn run_sync<R: Send, F: FnOnce() -> R + Send>(&self, f: F) -> Result<R> {
        if self.is_current() {
            return Ok(f());
        }
        struct SyncJob<F, R> {
            f: UnsafeCell<Option<F>>,
            result: UnsafeCell<Option<std::thread::Result<R>>>,
            done: Latch,
        }
        unsafe fn call<F: FnOnce() -> R, R>(p: *const (), _: usize) {
            // SAFETY: `p` is the SyncJob `run_sync` keeps alive until `done` is released; the
            // worker is the only one touching `f` and `result` until then.
            let j = unsafe { &*(p as *const SyncJob<F, R>) };
            // SAFETY: as above: exclusive access until `done` is released.
            let f = unsafe { (*j.f.get()).take() };
            if let Some(f) = f {
                let r = catch_panic(f);
                // SAFETY: as above.
                unsafe { *j.result.get() = Some(r) };
            }
            j.done.count_down();
        }
        let job = SyncJob { f: UnsafeCell::new(Some(f)), result: UnsafeCell::new(None), done: Latch::new(1) };
        // SAFETY: `job` lives on this stack until `done` is released below (we wait for it
        // whatever happens once the job is queued); F and R are Send.
        unsafe { self.submit(Job { run: call::<F, R>, data: &job as *const _ as *const (), arg: 0 }, true)? };
        job.done.wait();
        // SAFETY: the worker released `done` after its last access; the job is ours again.
        match unsafe { (*job.result.get()).take() } {
            Some(Ok(r)) => Ok(r),
            Some(Err(p)) => resume_unwind(p),
            None => Err(Error::new(ErrorKind::Failure, "the target dropped the job")),
        }
    }

    /// Jobs waiting now.
    pub(super) fn queued(&self) -> usize {
        lock(&self.queue).jobs.len()
    }

    pub(crate) fn info(&self) -> TargetInfo {
        TargetInfo {
            config: self.config.clone(),
            jobs_run: self.jobs_run.load(Ordering::Relaxed),
            queued: self.queued(),
        }
    }

    /// Stop the workers after the queued jobs; join them (detaching one that does not return in
    /// time, or the calling thread itself).
    pub(super) fn stop(&self) {
        lock(&self.queue).shutdown = true;
        self.work.notify_all();
        self.space.notify_all();
        let handles: Vec<JoinHandle<()>> = lock(&self.threads).drain(..).collect();
        let deadline = Instant::now() + JOIN_GRACE;
        for h in handles {
            if h.thread().id() == thread::current().id() {
                continue; // the last reference dropped inside a job: this thread ends on its own
            }
            if !join_by(h, deadline) {
                tracing::error!(target_name = %self.config.name, "a target thread did not stop (a callback hangs); detached");
            }
        }
    }
}

/// A countdown latch: `wait` returns once `count_down` was called `n` times. No allocation.
pub(crate) struct Latch {
    left: Mutex<usize>,
    cv: Condvar,
}

impl Latch {
    pub(crate) fn new(n: usize) -> Latch {
        Latch { left: Mutex::new(n), cv: Condvar::new() }
    }
    pub(crate) fn count_down(&self) {
        let mut l = lock(&self.left);
        *l = l.saturating_sub(1);
        if *l == 0 {
            self.cv.notify_all();
        }
    }
    pub(crate) fn wait(&self) {
        let mut l = lock(&self.left);
        while *l > 0 {
            l = self.cv.wait(l).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }
    /// Wait at most `timeout`; true when released.
    /// Any `timeout` works: one beyond the clock's range waits without a deadline.
    pub(crate) fn wait_for(&self, timeout: Duration) -> bool {
        let deadline = crate::support::time::deadline(timeout);
        let mut l = lock(&self.left);
        while *l > 0 {
            match crate::support::time::remaining(deadline, Instant::now()) {
                None => l = self.cv.wait(l).unwrap_or_else(std::sync::PoisonError::into_inner),
                Some(Duration::ZERO) => return false,
                Some(left) => {
                    l = self.cv.wait_timeout(l, left).unwrap_or_else(std::sync::PoisonError::into_inner).0;
                }
            }
        }
        true
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    //! The executor's queue, latch and stop under the model checker (`shared::model`): every
    //! interleaving, up to a preemption bound, of submitters, the target's thread and `stop`.
    //! A deadlock or a thread left blocked fails the model.

    use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};

    use super::*;

    use crate::shared::model::check as model;

    unsafe fn count(p: *const (), _: usize) {
        // SAFETY: the models keep the counter alive until the executor has stopped.
        unsafe { &*(p as *const AtomicUsize) }.fetch_add(1, SeqCst);
    }

    unsafe fn block(p: *const (), _: usize) {
        // SAFETY: the models keep the latch alive until the executor has stopped.
        unsafe { &*(p as *const Latch) }.wait();
    }

    /// Two threads call `run_sync` at once: each gets its own result back, both jobs ran on the
    /// target, and `stop` joins its thread.
    #[test]
    fn loom_concurrent_run_sync_calls_each_get_their_result() {
        model(3, || {
            let ex = Executor::start(TargetConfig::new("t"), 0).unwrap();
            let other = {
                let ex = Arc::clone(&ex);
                loom::thread::spawn(move || ex.run_sync(|| 2).unwrap())
            };
            assert_eq!(ex.run_sync(|| 1).unwrap(), 1);
            assert_eq!(other.join().unwrap(), 2);
            ex.stop();
            assert_eq!(ex.info().jobs_run, 2);
        });
    }

    /// A queue of one job behind a busy thread: a submitter waiting for space and `stop` racing
    /// it. A job the queue accepted runs (the thread drains the queue before it ends); one it
    /// refused is refused because the target stopped; nobody waits for good.
    #[test]
    fn loom_a_job_accepted_runs_and_one_refused_is_refused_as_stopped() {
        model(2, || {
            let ex = Executor::start(TargetConfig::new("t").queue_depth(1), 0).unwrap();
            let gate = Arc::new(Latch::new(1));
            let ran = Arc::new(AtomicUsize::new(0));
            let job = |run: unsafe fn(*const (), usize), data: *const ()| Job { run, data, arg: 0 };
            // SAFETY: `gate` and `ran` outlive the executor's jobs (joined by `stop` below).
            unsafe { ex.submit(job(block, Arc::as_ptr(&gate) as *const ()), true).unwrap() };
            let waiter = {
                let (ex, ran) = (Arc::clone(&ex), Arc::clone(&ran));
                loom::thread::spawn(move || {
                    // Up to two jobs: the first may fill the queue, the second then waits for
                    // space (or is refused once the target stops).
                    let mut accepted = 0;
                    for _ in 0..2 {
                        // SAFETY: as above; `ran` is kept by this thread's clone until the model
                        // ends, after `stop`.
                        match unsafe { ex.submit(job(count, Arc::as_ptr(&ran) as *const ()), true) } {
                            Ok(()) => accepted += 1,
                            Err(e) => {
                                assert_eq!(e.kind(), ErrorKind::InvalidReference, "{e}");
                                assert!(e.to_string().contains("stopped"), "{e}");
                            }
                        }
                    }
                    accepted
                })
            };
            gate.count_down();
            ex.stop();
            let accepted = waiter.join().unwrap();
            assert_eq!(ran.load(SeqCst), accepted, "an accepted job did not run (or a refused one did)");
        });
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn jobs_run_in_order_of_arrival_on_one_thread() {
        let ex = Executor::start(TargetConfig::new("t"), 0).unwrap();
        let order = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for i in 0..4 {
                let (ex, order) = (&ex, &order);
                s.spawn(move || {
                    ex.run_sync(|| lock(order).push((i, std::thread::current().name().map(str::to_owned))))
                });
            }
        });
        let seen = order.into_inner().unwrap();
        assert_eq!(seen.len(), 4);
        assert!(seen.iter().all(|(_, n)| n.as_deref() == Some("vx-ctx0-t-0")), "{seen:?}");
        assert_eq!(ex.info().jobs_run, 4);
        ex.stop();
    }

    #[test]
    fn a_job_from_the_target_itself_runs_inline_and_a_panic_reaches_the_caller() {
        vx_plugin_abi::expect_panics("boom");
        let ex = Executor::start(TargetConfig::new("t"), 0).unwrap();
        let inner = ex.run_sync(|| ex.run_sync(|| 7).unwrap()).unwrap();
        assert_eq!(inner, 7);
        let r = catch_panic(|| ex.run_sync(|| panic!("boom")));
        assert!(r.is_err());
        assert_eq!(ex.run_sync(|| 1).unwrap(), 1, "the worker survived");
        ex.stop();
    }

    #[test]
    fn a_full_queue_refuses_a_job_that_does_not_wait() {
        let ex = Executor::start(TargetConfig::new("t").queue_depth(1), 0).unwrap();
        let gate = Latch::new(1);
        let ran = AtomicUsize::new(0);
        unsafe fn block(p: *const (), _: usize) {
            // SAFETY: the test keeps the latch alive until the executor is stopped.
            unsafe { &*(p as *const Latch) }.wait();
        }
        unsafe fn count(p: *const (), _: usize) {
            // SAFETY: the test keeps the counter alive until the executor is stopped.
            unsafe { &*(p as *const AtomicUsize) }.fetch_add(1, Ordering::SeqCst);
        }
        // SAFETY: `gate` and `ran` outlive the executor's jobs (stopped below, after the gate opens).
        unsafe {
            ex.submit(Job { run: block, data: &gate as *const Latch as *const (), arg: 0 }, true).unwrap();
            // The worker takes the first job; the second fills the queue.
            while ex.queued() > 0 {
                std::thread::yield_now();
            }
            ex.submit(Job { run: count, data: &ran as *const AtomicUsize as *const (), arg: 0 }, false).unwrap();
            let e = ex
                .submit(Job { run: count, data: &ran as *const AtomicUsize as *const (), arg: 0 }, false)
                .unwrap_err();
            assert_eq!(e.kind(), ErrorKind::NoResources);
            assert!(e.to_string().contains("queue of target 't' is full"), "{e}");
        }
        gate.count_down();
        ex.stop();
        assert_eq!(ran.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn bad_configurations_are_refused_with_the_field() {
        for (c, what) in [
            (TargetConfig::new("host"), "name"),
            (TargetConfig::new("t").threads(0), "thread"),
            (TargetConfig::new("t").queue_depth(0), "queue"),
        ] {
            let e = Executor::start(c, 0).err().unwrap();
            assert_eq!(e.kind(), ErrorKind::InvalidValue);
            assert!(e.to_string().contains(what), "{e}");
        }
    }
}
