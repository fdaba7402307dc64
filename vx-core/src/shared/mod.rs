//! What every object needs of its context, and nothing more: the configuration, the thread pool and
//! the resource counters ([`ContextShared`]). Data objects, kernels and modules hold an
//! `Arc<ContextShared>`, never the [`Context`](crate::Context) itself, so the layers below the
//! context never name it; constructors take `&impl AsContext` (wasmtime's `AsContext` pattern), which
//! a `Context` and a `Graph` both are.

mod config;
pub(crate) mod crew;
pub(crate) mod limits;
mod model;
mod resources;
pub(crate) mod target;
pub(crate) mod trust;

use std::sync::Arc;

pub use config::{ContextConfig, DEFAULT_MAX_MODULE_BYTES, TilingPolicy};
pub use limits::{Limits, MAX_LIMITS_FILE_BYTES, ResourceStat};
pub use resources::{MemoryLeak, ResourceKind, ResourceUsage};
pub(crate) use resources::{ResourceSlot, Resources};
pub use target::{HOST_TARGET, MAX_QUEUE_DEPTH, TARGET_ANY, TargetConfig, TargetInfo};
pub use trust::ModuleTrust;

use crate::error::{Error, ErrorKind, Result};
use crate::support::ids::next_id;

/// The part of a context that every object of it holds: id, configuration, thread pool, resource
/// counters. Opaque outside the runtime; reach it through [`AsContext`].
pub struct ContextShared {
    pub(crate) id: u64,
    pub(crate) config: ContextConfig,
    /// Threads that compute in parallel steps: the calling thread plus `threads - 1` crew helpers.
    pub(crate) threads: usize,
    /// The helpers of parallel steps (tiles, graph levels); allocation-free per use.
    pub(crate) crew: crew::Crew,
    /// A rayon pool of `threads` workers for `Context::install`, started on first use.
    pool: std::sync::OnceLock<std::result::Result<rayon::ThreadPool, String>>,
    pub(crate) resources: Arc<Resources>,
    /// Persistent-memory leaks found at deinit, newest last (at most [`MAX_LEAK_REPORTS`]).
    leaks: std::sync::Mutex<std::collections::VecDeque<MemoryLeak>>,
    /// The named targets (executors), in configuration order.
    pub(crate) targets: Targets,
}

/// A context's targets: the configured executors, and the one that runs control commands sent to
/// nodes of the default host target (started on the first such command). Stopped with the context.
pub(crate) struct Targets {
    pub(crate) list: Vec<Arc<target::Executor>>,
    host_control: std::sync::OnceLock<std::result::Result<Arc<target::Executor>, String>>,
    /// The executor of host-target nodes in pipelined graphs (started on first use).
    host_pipeline: std::sync::OnceLock<std::result::Result<Arc<target::Executor>, String>>,
    /// Threads of the host pipeline executor (the context's thread count).
    host_threads: usize,
    context: u64,
}

impl Targets {
    /// The executor named `name` (`None` for the host target or an unknown name).
    /// Target names are case-insensitive, as OpenVX's target strings are.
    pub(crate) fn get(&self, name: &str) -> Option<&Arc<target::Executor>> {
        self.list.iter().find(|t| t.config.name.eq_ignore_ascii_case(name))
    }

    /// Whether `name` is a target of this context (the host target included).
    pub(crate) fn exists(&self, name: &str) -> bool {
        name.eq_ignore_ascii_case(HOST_TARGET) || self.get(name).is_some()
    }

    /// The names of the context's targets, the host target first.
    pub(crate) fn names(&self) -> Vec<&str> {
        std::iter::once(HOST_TARGET).chain(self.list.iter().map(|t| t.config.name.as_str())).collect()
    }

    /// The executor of control commands for host-target nodes.
    pub(crate) fn host_control(&self) -> Result<&Arc<target::Executor>> {
        self.host_control
            .get_or_init(|| {
                target::Executor::start(TargetConfig::new("host-control"), self.context).map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|e| Error::new(ErrorKind::NoResources, format!("could not start the host control thread: {e}")))
    }

    /// The executor that runs host-target nodes of pipelined graphs: as many threads as the
    /// context computes with, so host stages of different frames overlap.
    pub(crate) fn host_pipeline(&self) -> Result<&Arc<target::Executor>> {
        self.host_pipeline
            .get_or_init(|| {
                let config = TargetConfig::new("host-pipeline").threads(self.host_threads).queue_depth(1024);
                target::Executor::start(config, self.context).map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|e| Error::new(ErrorKind::NoResources, format!("could not start the host pipeline threads: {e}")))
    }
}

impl Drop for Targets {
    fn drop(&mut self) {
        let lazy = [&self.host_control, &self.host_pipeline];
        for t in self.list.iter().chain(lazy.into_iter().filter_map(|l| l.get().and_then(|r| r.as_ref().ok()))) {
            t.stop();
        }
    }
}

/// The most threads a context's pool or one target may have (`ContextBuilder::threads`,
/// `TargetConfig::threads`): far above any machine's cores, far below what would exhaust the
/// process's memory for stacks and bookkeeping. More is `InvalidValue`; a thread the system will
/// not start is `NoResources`.
pub const MAX_THREADS: usize = 1024;

/// Leak reports a context keeps (older ones are dropped).
pub(crate) const MAX_LEAK_REPORTS: usize = 256;

impl std::fmt::Debug for ContextShared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContextShared").field("id", &self.id).finish_non_exhaustive()
    }
}

impl ContextShared {
    /// Start the pool (every worker running before this returns) and the counters of `config`.
    pub(crate) fn new(config: ContextConfig) -> Result<Arc<ContextShared>> {
        let threads = match config.threads {
            Some(0) => {
                return Err(Error::new(ErrorKind::InvalidValue, "a context needs at least one thread")
                    .expected_found("threads >= 1", 0));
            }
            Some(n) if n > MAX_THREADS => {
                return Err(Error::new(
                    ErrorKind::InvalidValue,
                    format!("a context has at most {MAX_THREADS} threads (MAX_THREADS)"),
                )
                .expected_found(format!("1..={MAX_THREADS}"), n));
            }
            Some(n) => n,
            None => std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(MAX_THREADS),
        };
        let id = next_id();
        // Every helper runs before this returns, so no thread start-up (and its allocations)
        // happens later, during the first frames of a real-time service.
        let crew = crew::Crew::new(threads - 1, move |i| format!("vx-ctx{id}-worker{i}")).map_err(|e| {
            Error::new(ErrorKind::NoResources, format!("could not start the context's helper threads: {e}"))
        })?;
        let resources = Resources::new(limits::maxima(&config));
        let mut list: Vec<Arc<target::Executor>> = Vec::new();
        for t in &config.targets {
            if let Some(o) = list.iter().find(|o| o.config.name.eq_ignore_ascii_case(&t.name)) {
                return Err(Error::new(
                    ErrorKind::InvalidValue,
                    format!(
                        "target '{}' is configured twice (names are case-insensitive: '{}')",
                        t.name, o.config.name
                    ),
                ));
            }
            list.push(target::Executor::start(t.clone(), id)?);
        }
        let targets = Targets {
            list,
            host_control: Default::default(),
            host_pipeline: Default::default(),
            host_threads: threads,
            context: id,
        };
        tracing::debug!(context = id, threads, targets = targets.list.len(), "context created");
        Ok(Arc::new(ContextShared {
            id,
            config,
            threads,
            crew,
            pool: std::sync::OnceLock::new(),
            resources,
            leaks: Default::default(),
            targets,
        }))
    }

    /// The rayon pool of `Context::install`, started on first use.
    pub(crate) fn pool(&self) -> Result<&rayon::ThreadPool> {
        let id = self.id;
        self.pool
            .get_or_init(|| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(self.threads)
                    .thread_name(move |i| format!("vx-ctx{id}-rayon{i}"))
                    .build()
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|e| Error::new(ErrorKind::NoResources, format!("could not start the context's rayon pool: {e}")))
    }

    /// Record a persistent-memory leak (the runtime freed the blocks).
    pub(crate) fn report_leak(&self, leak: MemoryLeak) {
        tracing::warn!(
            node = %leak.node,
            kernel = %leak.kernel,
            blocks = leak.blocks,
            bytes = leak.bytes,
            "deinit left persistent kernel memory; the runtime freed it"
        );
        let mut l = crate::support::sync::lock(&self.leaks);
        if l.len() == MAX_LEAK_REPORTS {
            l.pop_front();
        }
        l.push_back(leak);
    }

    /// The leak reports so far, oldest first.
    pub(crate) fn leaks(&self) -> Vec<MemoryLeak> {
        crate::support::sync::lock(&self.leaks).iter().cloned().collect()
    }

    /// Take one unit of `kind` from the context's limits.
    pub(crate) fn acquire(&self, kind: ResourceKind) -> Result<ResourceSlot> {
        self.resources.acquire(kind)
    }
}

mod sealed {
    pub trait Sealed {}
}
pub(crate) use sealed::Sealed;

/// Anything that belongs to a context and can stand for it when creating objects:
/// `Image::new(&ctx, ..)` and `Image::new(&graph, ..)` both work. Sealed.
pub trait AsContext: Sealed {
    /// The context's shared part.
    #[doc(hidden)]
    fn as_context(&self) -> &Arc<ContextShared>;
}

/// What owns virtual objects (a graph): `Image::new_virtual(&graph, ..)`. Sealed.
pub trait VirtualScope: AsContext {
    /// The id of the scope virtual objects are created in.
    #[doc(hidden)]
    fn scope_id(&self) -> u64;
}

impl<T: Sealed + ?Sized> Sealed for &T {}
impl<T: AsContext + ?Sized> AsContext for &T {
    fn as_context(&self) -> &Arc<ContextShared> {
        (**self).as_context()
    }
}

impl Sealed for Arc<ContextShared> {}
impl AsContext for Arc<ContextShared> {
    fn as_context(&self) -> &Arc<ContextShared> {
        self
    }
}
