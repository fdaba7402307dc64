//! The context: the composition root. A [`Context`] is its shared part (configuration, pool,
//! resource counters — what every object holds), its kernel table and its modules; every public
//! method lives here and delegates to the layer that owns the concept. Nothing below this file
//! names `Context`.
//!
//! # Invariants
//!
//! - **One shared part per context.** `ContextShared` is created once, in [`Context::with_config`];
//!   the kernel table, the modules and every data object, kernel, graph and node hold an `Arc` of
//!   that one value, so "same context" is `Arc::ptr_eq` on it, and the pool and counters outlive
//!   every object that uses them, whatever the order of drops.
//! - **Counted while alive.** Every kernel, module, graph, node and data object holds a
//!   `ResourceSlot` from the shared counters and gives it back on drop; limits are enforced when the
//!   slot is taken, never later.
//! - **Kernels belong to one table.** A kernel handle holds the `KernelTable` it was added to;
//!   lookups return only finalized kernels; a removed or replaced kernel stays usable by the nodes
//!   that hold it (its code stays mapped through its keep-alive) but is never found again.
//! - **Modules publish into that table, transactionally.** `Modules` owns the loaded libraries
//!   (each with its private copy, loaded only if the context's `ModuleTrust` accepts the file); a
//!   failed publish removes every kernel it added; a reload swaps the new kernels in under the
//!   table's lock, so a lookup sees one version or the other.
//! - **One lock order.** The modules lock before the kernel table's (a reload's swap holds both);
//!   no path takes them the other way, and a module's `publish` runs with the modules lock released,
//!   taking the table's lock per call. Graph locks are taken by graph operations only, never here.

use std::path::PathBuf;
use std::sync::Arc;

use crate::error::Result;
use crate::kernel::builder::KernelBuilder;
use crate::kernel::handle::Kernel;
use crate::kernel::table::KernelTable;
use crate::module::library::{ModuleInfo, ModuleState};
use crate::module::loader::{Modules, ReloadOptions, ReloadReport};
use crate::shared::{
    AsContext, ContextConfig, ContextShared, Limits, MemoryLeak, ModuleTrust, ResourceKind, ResourceStat,
    ResourceUsage, Sealed, TargetConfig, TargetInfo, TilingPolicy,
};

/// Builds a [`Context`] with non-default limits or thread count.
#[derive(Clone, Debug, Default)]
pub struct ContextBuilder {
    config: ContextConfig,
}

impl ContextBuilder {
    /// Number of worker threads in the context's pool: 1 to [`MAX_THREADS`](crate::MAX_THREADS)
    /// (more, or 0, is `InvalidValue` at [`build`](Self::build); default: the machine's cores).
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
    /// Most bytes of data buffers at once.
    pub fn max_buffer_bytes(mut self, n: usize) -> Self {
        self.config.max_buffer_bytes = n;
        self
    }
    /// Most bytes of kernels' persistent memory at once.
    pub fn max_persistent_bytes(mut self, n: usize) -> Self {
        self.config.max_persistent_bytes = n;
        self
    }
    /// Most bytes of scratch arenas at once.
    pub fn max_scratch_bytes(mut self, n: usize) -> Self {
        self.config.max_scratch_bytes = n;
        self
    }
    /// How tiling nodes are cut into tiles (cache budget, tiles per thread, minimum tile size).
    pub fn tiling_policy(mut self, policy: TilingPolicy) -> Self {
        self.config.tiling = policy;
        self
    }
    /// Whether graphs honour kernels' buffer-aliasing hints (default true; `false`: never alias,
    /// e.g. to compare results or memory with and without).
    pub fn aliasing(mut self, on: bool) -> Self {
        self.config.aliasing = on;
        self
    }

    /// Whether graphs place their virtual objects (every kind with a buffer) by lifetime in one
    /// arena (default true; `false`: one buffer per virtual object).
    pub fn memory_plan(mut self, on: bool) -> Self {
        self.config.memory_plan = on;
        self
    }

    /// Whether graphs fuse chains of tiling nodes joined by virtual images (default true): a group
    /// runs step by step down the image, its intermediate images in small line
    /// buffers instead of image buffers ([`Graph::fusion_report`](crate::Graph::fusion_report)
    /// says what was fused, and why a node was not). [`Graph::set_fusion`](crate::Graph::set_fusion)
    /// overrides it per graph.
    pub fn fusion(mut self, on: bool) -> Self {
        self.config.fusion = on;
        self
    }

    /// The largest module file `load_module` / `reload_module` / the watcher accept, in bytes
    /// (default [`DEFAULT_MAX_MODULE_BYTES`](crate::DEFAULT_MAX_MODULE_BYTES)): a larger file is
    /// refused (`InvalidModule`) before any copy, whatever it holds (a sparse file included).
    pub fn max_module_bytes(mut self, n: u64) -> Self {
        self.config.max_module_bytes = n;
        self
    }

    /// Add a named target (an executor with its own threads and FIFO), started with the context.
    pub fn target(mut self, target: TargetConfig) -> Self {
        self.config.targets.push(target);
        self
    }

    /// Set the limits `limits` holds (the others keep their values).
    pub fn limits(mut self, limits: Limits) -> Self {
        limits.apply(&mut self.config);
        self
    }

    /// Load a TOML limits file (as [`Context::export_limits`] writes) and set the limits it holds.
    /// A file that cannot be read or parsed, or has an unknown key, is an error naming it.
    pub fn limits_from_file(self, path: impl AsRef<std::path::Path>) -> Result<Self> {
        Ok(self.limits(Limits::from_file(path)?))
    }
    /// How many replaced versions' states each module keeps (default 16).
    pub fn module_history(mut self, n: usize) -> Self {
        self.config.module_history = n;
        self
    }
    /// Which module files the context loads (default [`ModuleTrust::owner`]: a module file and
    /// every directory above it owned by root or this process's user and writable by no one else;
    /// [`ModuleTrust::any`] for development; [`ModuleTrust::pin`] to list the SHA-256 of each
    /// module build allowed). See `docs/book/src/security.md`.
    pub fn module_trust(mut self, trust: ModuleTrust) -> Self {
        self.config.module_trust = trust;
        self
    }
    /// Create the context and its thread pool.
    pub fn build(self) -> Result<Context> {
        Context::with_config(self.config)
    }
}

pub(crate) struct ContextInner {
    pub(crate) shared: Arc<ContextShared>,
    pub(crate) kernels: Arc<KernelTable>,
    pub(crate) modules: Modules,
}

/// An OpenVX context (`vx_context`): cheap to clone (a shared handle), `Send + Sync`.
///
/// Every object keeps its context's shared part alive, so dropping the last `Context` handle while
/// graphs or images exist is fine. Kernels stay registered while a `Context` handle, a kernel
/// handle or a node holds them.
#[derive(Clone)]
pub struct Context {
    pub(crate) inner: Arc<ContextInner>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context").field("id", &self.inner.shared.id).field("threads", &self.threads()).finish()
    }
}

impl Sealed for Context {}
impl AsContext for Context {
    fn as_context(&self) -> &Arc<ContextShared> {
        &self.inner.shared
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
        let shared = ContextShared::new(config)?;
        let kernels = KernelTable::new(Arc::clone(&shared));
        let modules = Modules::new(Arc::clone(&shared), Arc::clone(&kernels));
        Ok(Context { inner: Arc::new(ContextInner { shared, kernels, modules }) })
    }

    /// The configuration the context was built with.
    pub fn config(&self) -> &ContextConfig {
        &self.inner.shared.config
    }

    /// Threads that compute in parallel steps (the calling thread and `threads - 1` helpers).
    pub fn threads(&self) -> usize {
        self.inner.shared.threads
    }

    /// The context's named targets, each with its configuration and counters (the default target,
    /// [`HOST_TARGET`](crate::HOST_TARGET), runs nodes on the calling thread and the crew and is not listed).
    pub fn targets(&self) -> Vec<TargetInfo> {
        self.inner.shared.targets.list.iter().map(|t| t.info()).collect()
    }

    /// What the context's helper threads did since it was built or since the last
    /// [`reset_crew_stats`](Self::reset_crew_stats): jobs handed to them, wake-ups, late arrivals,
    /// spins, moves, and the waits of callers for helpers (see [`CrewStats`](crate::shared::crew::CrewStats)). All zero with one
    /// thread.
    pub fn crew_stats(&self) -> crate::shared::crew::CrewStats {
        self.inner.shared.crew.stats()
    }

    /// [`crew_stats`](Self::crew_stats), then every count back to zero (to look at one stretch of
    /// work, such as one benchmark cell).
    pub fn reset_crew_stats(&self) -> crate::shared::crew::CrewStats {
        self.inner.shared.crew.take_stats()
    }

    /// Usage of one kind of resource: current, peak and configured maximum.
    pub fn usage(&self, kind: ResourceKind) -> ResourceUsage {
        self.inner.shared.resources.usage(kind)
    }

    /// Bytes of data buffers currently allocated (and the peak); `max` is unbounded.
    pub fn buffer_bytes(&self) -> ResourceUsage {
        self.usage(ResourceKind::BufferBytes)
    }

    /// Every limit's statistics: name, max, used, peak, required (`tivxQueryResourceStats` for
    /// each resource).
    pub fn resource_stats(&self) -> Vec<ResourceStat> {
        crate::shared::limits::stats(&self.inner.shared.resources)
    }

    /// One limit's statistics, by its config key (`max_nodes`, `max_scratch_bytes`, …), as
    /// `tivxQueryResourceStats` takes a resource's name.
    pub fn resource_stat(&self, name: &str) -> Option<ResourceStat> {
        self.resource_stats().into_iter().find(|s| s.name == name)
    }

    /// Persistent kernel memory that nodes' deinit left (freed by the runtime), oldest first, with
    /// each node's name.
    pub fn memory_leaks(&self) -> Vec<MemoryLeak> {
        self.inner.shared.leaks()
    }

    /// The statistics as a table, for logs (`tivxPrintAllResourceStats`).
    pub fn resource_report(&self) -> String {
        crate::shared::limits::report(&self.inner.shared.resources)
    }

    /// The peaks so far as limits (what [`export_limits`](Self::export_limits) writes).
    pub fn peak_limits(&self) -> Limits {
        crate::shared::limits::peaks(&self.inner.shared.resources)
    }

    /// Write the peaks so far as a TOML limits file (`tivxExportAllResourceMaxUsedValueToFile`):
    /// a deployment runs once, exports, and builds its contexts with
    /// [`ContextBuilder::limits_from_file`].
    pub fn export_limits(&self, path: impl AsRef<std::path::Path>) -> Result<()> {
        self.peak_limits().to_file(path)
    }

    /// Run `f` on a rayon pool of the context's thread count (started on first use; graphs do not
    /// use it: their parallel steps run on the context's allocation-free helper threads).
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> Result<R> {
        Ok(self.inner.shared.pool()?.install(f))
    }

    /// True when `other` is this context's shared part.
    pub(crate) fn same(&self, other: &Arc<ContextShared>) -> bool {
        Arc::ptr_eq(&self.inner.shared, other)
    }

    // ------------------------------------------------------------------ kernels

    /// `vxAddUserKernel`: start building a user kernel named `name` with `num_params` parameters.
    pub fn user_kernel(&self, name: &str, enumeration: i32, num_params: u32) -> KernelBuilder<'_> {
        KernelBuilder::new(&self.inner.kernels, name, enumeration, num_params, false)
    }

    /// `vxAddTilingKernel`: start building a tiling kernel (fast and/or flexible function; images
    /// in and out plus input scalars).
    pub fn tiling_kernel(&self, name: &str, enumeration: i32, num_params: u32) -> KernelBuilder<'_> {
        KernelBuilder::new(&self.inner.kernels, name, enumeration, num_params, true)
    }

    /// `vxGetKernelByName`: a finalized kernel.
    pub fn kernel_by_name(&self, name: &str) -> Result<Kernel> {
        Kernel::by_name(&self.inner.kernels, name)
    }

    /// `vxGetKernelByEnum`: a finalized kernel.
    pub fn kernel_by_enum(&self, enumeration: i32) -> Result<Kernel> {
        Kernel::by_enum(&self.inner.kernels, enumeration)
    }

    /// `vxAllocateUserKernelId`: the next of 4096 enumerations from `VX_KERNEL_BASE(VX_ID_USER, 0)`.
    pub fn allocate_user_kernel_id(&self) -> Result<i32> {
        self.inner.kernels.registry().allocate_kernel_id()
    }

    /// `vxAllocateUserKernelLibraryId`: the next library id of 1..=255.
    pub fn allocate_user_kernel_library_id(&self) -> Result<i32> {
        self.inner.kernels.registry().allocate_library_id()
    }

    /// Ids of the user kernel id pool in use (allocated by the application, or by the host for
    /// module kernels without an explicit enumeration, which give them back when they leave).
    pub fn user_kernel_ids_in_use(&self) -> usize {
        self.inner.kernels.registry().kernel_ids_in_use()
    }

    /// Kernels in the context, finalized or not (not yet removed).
    pub fn kernel_count(&self) -> usize {
        self.inner.kernels.registry().len()
    }

    /// `VX_CONTEXT_UNIQUE_KERNELS`: finalized kernels available to nodes (names are unique).
    pub fn unique_kernel_count(&self) -> usize {
        self.inner.kernels.registry().finalized_len()
    }

    /// Install what calls OpenVX C modules' entry points (`vxPublishKernels(vx_context)`) with
    /// this context's C handle: the C API (vx-rs-capi) does, for each context it makes. Without
    /// it, loading a C module fails with a message saying so. Once installed, the module search
    /// path also ends with `LD_LIBRARY_PATH`'s absolute directories (OpenVX programs find their
    /// modules there), under the same trust rules.
    pub fn set_foreign_module_host(&self, host: Arc<crate::module::foreign::ForeignModuleHost>) {
        self.inner.modules.set_foreign_host(host);
    }

    /// `VX_CONTEXT_UNIQUE_KERNEL_TABLE`: name and enumeration of each finalized kernel.
    pub fn kernel_table(&self) -> Vec<(String, i32)> {
        self.inner.kernels.registry().finalized()
    }

    // ------------------------------------------------------------------ modules

    /// `VX_CONTEXT_MODULES`: modules loaded.
    pub fn module_count(&self) -> usize {
        self.usage(ResourceKind::Modules).current
    }

    /// Add a directory to search for modules (searched before `VX_MODULE_PATH` and the
    /// executable's directory, in the order added).
    pub fn add_module_dir(&self, dir: impl Into<PathBuf>) {
        self.inner.modules.add_dir(dir)
    }

    /// The directories searched for modules, in order.
    pub fn module_search_path(&self) -> Vec<PathBuf> {
        self.inner.modules.search_path()
    }

    /// The file `name` resolves to (`lib<name>.so` in the search path).
    pub fn resolve_module(&self, name: &str) -> Result<PathBuf> {
        self.inner.modules.resolve(name)
    }

    /// `vxLoadKernels`: load module `name` and publish its kernels. Loading an already loaded
    /// module only counts it (no second publish). Publish is transactional: if it fails or panics,
    /// every kernel it added is removed, the library is closed, and the error says why.
    pub fn load_module(&self, name: &str) -> Result<()> {
        self.inner.modules.load(name)
    }

    /// `vxUnloadKernels`: undo one load. At zero, the module's `unpublish` runs and all its kernels
    /// leave lookup (even those `unpublish` forgot); the library closes once no kernel, node or
    /// graph from it is alive.
    pub fn unload_module(&self, name: &str) -> Result<()> {
        self.inner.modules.unload(name)
    }

    /// Reload module `name` from its file (a new build at the same path): the new version is
    /// opened beside the old one and published into staged kernels; only if that succeeds are the
    /// kernels swapped in, atomically. Graphs using the old kernels rebind to the new ones at their
    /// next process (the old instances are deinitialized first, with the old code). A failed reload
    /// leaves the old version serving and says why. Loads the module if it is not loaded.
    ///
    /// A new version that no longer publishes a kernel some live node uses (dropped, or renamed) is
    /// refused with `ErrorKind::ReferenceNonzero`, naming the kernels and the graphs and nodes that
    /// use them; nothing changes. [`reload_module_with`](Self::reload_module_with) can force it.
    /// Returns what the reload did.
    pub fn reload_module(&self, name: &str) -> Result<ReloadReport> {
        self.inner.modules.reload(name, ReloadOptions::default())
    }

    /// [`reload_module`](Self::reload_module) with options: `ReloadOptions::new().force(true)`
    /// swaps even when live nodes use a kernel the new version drops — they keep the old code, the
    /// report's `left_on_old` names them (one `tracing` warning each), and
    /// [`Graph::stale_nodes`](crate::Graph::stale_nodes) lists them until they are removed.
    pub fn reload_module_with(&self, name: &str, options: ReloadOptions) -> Result<ReloadReport> {
        self.inner.modules.reload(name, options)
    }

    /// Load every module (`lib*.so`) of `dir`, going on past failures. Returns one result per
    /// module found, by name, in file-name order. `dir` is added to the search path first.
    pub fn load_module_dir(&self, dir: impl Into<PathBuf>) -> Result<Vec<(String, Result<()>)>> {
        self.inner.modules.load_dir(dir)
    }

    /// States of the versions of module `name` that reloads replaced (version, state), oldest first.
    pub fn module_history(&self, name: &str) -> Vec<(String, ModuleState)> {
        self.inner.modules.history(name)
    }

    /// Publish the kernels defined in this binary with `#[tiling_kernel]` / `#[user_kernel]` (their
    /// registration records), through the same host interface modules use — no cdylib needed.
    /// Transactional: if one fails, the ones added are removed. Returns the names published.
    pub fn publish_in_process(&self) -> Result<Vec<String>> {
        self.inner.modules.publish_in_process()
    }

    /// The state of module `name`, if it was ever loaded in this context.
    pub fn module_state(&self, name: &str) -> Option<ModuleState> {
        self.inner.modules.state(name)
    }

    /// What module `name` is, while loaded: its version, the file it came from and how it was
    /// built (a debug build's kernels run many times slower: a tool that times or serves them
    /// should say so, as `vx run` and `vx watch` do).
    pub fn module_info(&self, name: &str) -> Option<ModuleInfo> {
        self.inner.modules.info(name)
    }

    /// Names of the kernels module `name` published (while loaded).
    pub fn module_kernels(&self, name: &str) -> Vec<String> {
        self.inner.modules.kernel_names(name)
    }
}
