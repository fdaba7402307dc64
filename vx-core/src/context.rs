//! The context: the root of every object, the kernel registry, the configured limits, the resource
//! counters and the context's own rayon thread pool (never the global one).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::{Error, ErrorKind, Result};
use crate::kernel_registry::KernelRegistry;
use crate::resources::{ResourceKind, ResourceSlot, ResourceUsage, Resources};
use crate::tile_plan::TilingPolicy;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A process-unique id for contexts, graphs and data objects.
pub(crate) fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// Limits and threading of a context. Every limit counts live objects; creating one more than the
/// limit fails with [`ErrorKind::NoResources`].
#[derive(Clone, Debug)]
pub struct ContextConfig {
    /// Threads of the context's pool; `None` = the machine's available parallelism.
    pub threads: Option<usize>,
    pub max_kernels: usize,
    pub max_modules: usize,
    pub max_graphs: usize,
    pub max_nodes: usize,
    pub max_data_objects: usize,
    /// How tiling nodes are cut into tiles.
    pub tiling: TilingPolicy,
}

impl Default for ContextConfig {
    fn default() -> Self {
        ContextConfig {
            threads: None,
            max_kernels: 4096,
            max_modules: 64,
            max_graphs: 1024,
            max_nodes: 16 * 1024,
            max_data_objects: 64 * 1024,
            tiling: TilingPolicy::default(),
        }
    }
}

/// Builds a [`Context`] with non-default limits or thread count.
#[derive(Clone, Debug, Default)]
pub struct ContextBuilder {
    config: ContextConfig,
}

impl ContextBuilder {
    /// Number of worker threads in the context's pool (at least 1).
    pub fn threads(mut self, n: usize) -> Self {
        self.config.threads = Some(n);
        self
    }
    /// Most kernels (added, not yet removed) at once.
    pub fn max_kernels(mut self, n: usize) -> Self {
        self.config.max_kernels = n;
        self
    }
    /// Most loaded modules at once.
    pub fn max_modules(mut self, n: usize) -> Self {
        self.config.max_modules = n;
        self
    }
    /// Most live graphs at once.
    pub fn max_graphs(mut self, n: usize) -> Self {
        self.config.max_graphs = n;
        self
    }
    /// Most live nodes (over all graphs) at once.
    pub fn max_nodes(mut self, n: usize) -> Self {
        self.config.max_nodes = n;
        self
    }
    /// Most live data objects (images, scalars, arrays, user data objects) at once.
    pub fn max_data_objects(mut self, n: usize) -> Self {
        self.config.max_data_objects = n;
        self
    }
    /// How tiling nodes are cut into tiles (cache budget, tiles per thread, minimum tile size).
    pub fn tiling_policy(mut self, policy: TilingPolicy) -> Self {
        self.config.tiling = policy;
        self
    }
    /// Create the context and its thread pool.
    pub fn build(self) -> Result<Context> {
        Context::with_config(self.config)
    }
}

pub(crate) struct ContextInner {
    pub(crate) id: u64,
    pub(crate) config: ContextConfig,
    pub(crate) pool: rayon::ThreadPool,
    pub(crate) resources: Arc<Resources>,
    registry: Mutex<KernelRegistry>,
    pub(crate) modules: Mutex<crate::module_loader::ModuleTable>,
    /// Where shadow copies of module libraries go.
    pub(crate) shadow_dir: std::path::PathBuf,
}

impl Drop for ContextInner {
    fn drop(&mut self) {
        // Best effort: the directory is empty unless a module stayed mapped (zombie).
        let _ = std::fs::remove_dir(&self.shadow_dir);
    }
}

impl ContextInner {
    pub(crate) fn registry(&self) -> MutexGuard<'_, KernelRegistry> {
        self.registry.lock().unwrap_or_else(|p| p.into_inner())
    }
    pub(crate) fn acquire(&self, kind: ResourceKind) -> Result<ResourceSlot> {
        self.resources.acquire(kind)
    }
}

/// An OpenVX context (`vx_context`): cheap to clone (a shared handle), `Send + Sync`.
///
/// Every object keeps its context alive, so dropping the last `Context` handle while graphs or
/// images exist is fine: the context goes when the last of them goes.
#[derive(Clone)]
pub struct Context {
    pub(crate) inner: Arc<ContextInner>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context").field("id", &self.inner.id).field("threads", &self.threads()).finish()
    }
}

impl Context {
    /// A context with default limits and one pool thread per available core.
    pub fn new() -> Result<Context> {
        Context::with_config(ContextConfig::default())
    }

    /// A builder for limits and thread count.
    pub fn builder() -> ContextBuilder {
        ContextBuilder::default()
    }

    /// A context with the given configuration.
    pub fn with_config(config: ContextConfig) -> Result<Context> {
        let threads = match config.threads {
            Some(0) => {
                return Err(Error::new(ErrorKind::InvalidValue, "a context needs at least one thread")
                    .expected_found("threads >= 1", 0));
            }
            Some(n) => n,
            None => std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        };
        let id = next_id();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(move |i| format!("vx-ctx{id}-worker{i}"))
            .build()
            .map_err(|e| {
                Error::new(ErrorKind::NoResources, format!("could not start the context's thread pool: {e}"))
            })?;
        // Wait until every worker runs, so no thread start-up (and its allocations) happens later,
        // during the first frames of a real-time service.
        pool.broadcast(|_| ());
        let resources = Resources::new([
            config.max_kernels,
            config.max_modules,
            config.max_graphs,
            config.max_nodes,
            config.max_data_objects,
        ]);
        tracing::debug!(context = id, threads, "context created");
        Ok(Context {
            inner: Arc::new(ContextInner {
                id,
                config,
                pool,
                resources,
                registry: Mutex::new(KernelRegistry::default()),
                modules: Mutex::new(Default::default()),
                shadow_dir: std::env::temp_dir().join(format!("vx-rs-modules-{}-ctx{id}", std::process::id())),
            }),
        })
    }

    /// The configuration the context was built with.
    pub fn config(&self) -> &ContextConfig {
        &self.inner.config
    }

    /// Threads in the context's pool.
    pub fn threads(&self) -> usize {
        self.inner.pool.current_num_threads()
    }

    /// Usage of one kind of resource: current, peak and configured maximum.
    pub fn usage(&self, kind: ResourceKind) -> ResourceUsage {
        self.inner.resources.usage(kind)
    }

    /// Bytes of data buffers currently allocated (and the peak); `max` is unbounded.
    pub fn buffer_bytes(&self) -> ResourceUsage {
        self.inner.resources.bytes()
    }

    /// Every resource's usage, for logs (`tivxPrintAllResourceStats`).
    pub fn resource_report(&self) -> String {
        let mut s = String::new();
        for kind in ResourceKind::ALL {
            let u = self.usage(kind);
            s.push_str(&format!("{kind:>12}: current {:>6}  peak {:>6}  max {:>6}\n", u.current, u.peak, u.max));
        }
        let b = self.buffer_bytes();
        s.push_str(&format!("{:>12}: current {:>6}  peak {:>6}\n", "buffer bytes", b.current, b.peak));
        s
    }

    /// `VX_CONTEXT_MODULES`: modules loaded (kernel modules arrive with issue 4).
    pub fn module_count(&self) -> usize {
        self.usage(ResourceKind::Modules).current
    }

    /// Kernels in the context, finalized or not (not yet removed).
    pub fn kernel_count(&self) -> usize {
        self.inner.registry().len()
    }

    /// `VX_CONTEXT_UNIQUE_KERNELS`: finalized kernels available to nodes (names are unique).
    pub fn unique_kernel_count(&self) -> usize {
        self.inner.registry().finalized_len()
    }

    /// Run `f` on the context's pool.
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        self.inner.pool.install(f)
    }

    pub(crate) fn same(&self, other: &Arc<ContextInner>) -> bool {
        Arc::ptr_eq(&self.inner, other)
    }
}
