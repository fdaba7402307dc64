//! What a context is configured with: limits, threads, the tiling policy and which module files it
//! trusts.

/// Limits and threading of a context. Every limit counts live objects; creating one more than the
/// limit fails with [`ErrorKind::NoResources`](crate::ErrorKind::NoResources).
#[derive(Clone, Debug)]
pub struct ContextConfig {
    /// Threads of the context's pool; `None` = the machine's available parallelism.
    pub threads: Option<usize>,
    /// Most kernels (added, not yet removed) at once.
    pub max_kernels: usize,
    /// Most loaded modules at once.
    pub max_modules: usize,
    /// Most live graphs at once.
    pub max_graphs: usize,
    /// Most live nodes (over all graphs) at once.
    pub max_nodes: usize,
    /// Most live data objects at once.
    pub max_data_objects: usize,
    /// Most bytes of data buffers at once (objects, memory-plan arenas, tile memory, local data).
    pub max_buffer_bytes: usize,
    /// Most bytes of kernels' persistent memory at once.
    pub max_persistent_bytes: usize,
    /// Most bytes of scratch arenas at once.
    pub max_scratch_bytes: usize,
    /// How tiling nodes are cut into tiles.
    pub tiling: TilingPolicy,
    /// States of versions replaced by reloads kept per module (`Context::module_history`); older
    /// ones are forgotten, so a service reloading for months holds a bounded history.
    pub module_history: usize,
    /// The largest module file loaded, in bytes (default [`DEFAULT_MAX_MODULE_BYTES`]): checked on
    /// the file's size before anything is copied or mapped, and on the bytes actually read.
    pub max_module_bytes: u64,
    /// Which module files are loaded: owner and mode rules, pinned digests (default
    /// [`ModuleTrust::owner`](super::ModuleTrust::owner)).
    pub module_trust: super::ModuleTrust,
    /// Honour kernels' buffer-aliasing hints where the graph allows it (default true). `false` is
    /// the extension's conservative policy: nothing is ever aliased.
    pub aliasing: bool,
    /// Place virtual images by lifetime in one arena per graph, sharing memory between images never
    /// live at once (default true). `false`: a buffer of its own for each.
    pub memory_plan: bool,
    /// Fuse chains of tiling nodes joined by virtual images into groups that run step by step
    /// with line buffers instead of image buffers (default true).
    pub fusion: bool,
    /// Named targets (executors) besides the default host target.
    pub targets: Vec<super::TargetConfig>,
}

/// The default of [`ContextConfig::max_module_bytes`]: 256 MiB, about 18 times the largest module a
/// debug build of this workspace makes (`vx_filters`, ~14 MB); release modules are well under 1 MB.
pub const DEFAULT_MAX_MODULE_BYTES: u64 = 256 << 20;

impl Default for ContextConfig {
    fn default() -> Self {
        ContextConfig {
            threads: None,
            max_kernels: 4096,
            max_modules: 64,
            max_graphs: 1024,
            max_nodes: 16 * 1024,
            max_data_objects: 64 * 1024,
            max_buffer_bytes: usize::MAX,
            max_persistent_bytes: usize::MAX,
            max_scratch_bytes: usize::MAX,
            tiling: TilingPolicy::default(),
            module_history: 16,
            max_module_bytes: DEFAULT_MAX_MODULE_BYTES,
            module_trust: super::ModuleTrust::owner(),
            aliasing: true,
            memory_plan: true,
            fusion: true,
            targets: Vec::new(),
        }
    }
}

/// How the runtime sizes tiles. Part of [`crate::ContextConfig`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TilingPolicy {
    /// Bytes of input and output rows a tile may touch: aim at a share of a core's L2.
    pub cache_budget_bytes: usize,
    /// Aim for at least this many tiles per pool thread (load balance), image size permitting.
    pub min_tiles_per_thread: usize,
    /// Never cut tiles smaller than this many pixels for parallelism's sake (call overhead).
    pub min_tile_pixels: usize,
    /// Nodes with fewer output pixels always run their tiles in order on the calling thread (a
    /// floor under the cost model, which decides above it).
    pub min_parallel_pixels: usize,
    /// Split a node's tiles across threads only when its measured work per thread exceeds the
    /// measured delay of a helper joining (true, the default); false splits every node of at least
    /// `min_parallel_pixels` that has several tiles (for tests that want parallel runs).
    pub split_by_cost: bool,
    /// Fused groups: rows of the group's last nodes per step, `k` (0: by the rule, a
    /// 192 KiB step budget over the group's line buffers, at most 32 rows). Rounded to the
    /// members' block heights.
    pub fusion_rows: u32,
    /// Fused groups: rows per band when threads share a group (0: by the rule, about four bands
    /// per thread and at least 16 rows).
    pub fusion_band_rows: u32,
}

impl Default for TilingPolicy {
    fn default() -> Self {
        TilingPolicy {
            cache_budget_bytes: 256 * 1024,
            min_tiles_per_thread: 4,
            min_tile_pixels: 16 * 1024,
            min_parallel_pixels: 16 * 1024,
            split_by_cost: true,
            fusion_rows: 0,
            fusion_band_rows: 0,
        }
    }
}
