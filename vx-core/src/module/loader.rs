//! `vxLoadKernels` / `vxUnloadKernels`: resolving a short module name to a library file, loading it
//! reference-counted per name, publishing transactionally, unloading (unpublish, then the module's
//! kernels leave lookup), and the per-module state a service can query.
//!
//! Search order for `lib<name>.so`: directories added with `Context::add_module_dir` (in order),
//! then the colon-separated `VX_MODULE_PATH` (absolute entries only; ignored in a set-uid, set-gid
//! or capability-raised process, as the C library ignores `LD_LIBRARY_PATH`), then the executable's
//! directory. Every file found is loaded only if the context's `ModuleTrust` accepts it. A library
//! stays mapped as long as any kernel, node or graph from it is alive; then it is closed and checked.

use std::collections::{HashMap, VecDeque};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::{Error, ErrorKind, Result};
use crate::kernel::handle::Kernel;
use crate::kernel::record::KernelInner;
use crate::kernel::table::KernelTable;
use crate::kernel::users::{KernelUse, StaleNode};
use crate::module::foreign::{ForeignModuleHost, run_foreign};
use crate::module::host::publish::{PublishCtx, run_entry, run_records};
use crate::module::library::EntryPoints;
use crate::module::library::{ModuleInfo, ModuleLibrary, ModuleState, module_name_of_file, origin};
use crate::shared::{ContextShared, ResourceKind, ResourceSlot};
use crate::support::sync::lock;

/// The environment variable with extra module directories (colon-separated).
pub const MODULE_PATH_VAR: &str = "VX_MODULE_PATH";

/// How a module reload treats live nodes whose kernel the new version no longer publishes
/// (dropped, or renamed).
///
/// By default such a reload is refused (`ErrorKind::ReferenceNonzero`, naming the kernels, graphs
/// and nodes) and nothing changes. [`force`](Self::force) swaps anyway: those nodes keep running the
/// old code (its library stays mapped), the reload's [`ReloadReport::left_on_old`] lists them,
/// each gets a `tracing` warning, and [`Graph::stale_nodes`](crate::Graph::stale_nodes) keeps
/// saying so.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReloadOptions {
    force: bool,
}

impl ReloadOptions {
    /// The default: refuse to leave live nodes on a kernel the new version drops.
    pub fn new() -> Self {
        Self::default()
    }
    /// Swap even if live nodes use a kernel the new version drops (they stay on the old code).
    pub fn force(mut self, force: bool) -> Self {
        self.force = force;
        self
    }
    /// Whether [`force`](Self::force) is set.
    pub fn is_forced(&self) -> bool {
        self.force
    }
}

/// What a module reload did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReloadReport {
    /// The module.
    pub module: String,
    /// The version replaced (`None`: the module was not loaded, and the reload loaded it).
    pub from: Option<String>,
    /// The version now serving.
    pub to: String,
    /// Kernels of both versions: live nodes rebind to the new one at their next process.
    pub replaced: Vec<String>,
    /// Kernels only the new version publishes.
    pub added: Vec<String>,
    /// Kernels only the old version published: no longer in the context.
    pub dropped: Vec<String>,
    /// Nodes left running a dropped kernel's old code (a forced reload; empty otherwise).
    pub left_on_old: Vec<StaleNode>,
}

impl ReloadReport {
    /// The graphs some node of which runs old code after this reload (sorted, each once).
    pub fn graphs_left_on_old(&self) -> Vec<String> {
        let mut g: Vec<String> = self.left_on_old.iter().map(|n| n.graph.clone()).collect();
        g.sort();
        g.dedup();
        g
    }
}

/// The nodes of `uses` as [`StaleNode`]s, in (graph, node) order.
fn stale_nodes(uses: &[Arc<KernelUse>]) -> Vec<StaleNode> {
    let mut nodes: Vec<StaleNode> = uses
        .iter()
        .map(|u| {
            let (graph, node) = u.names();
            let kernel = u.kernel();
            let (module, version) = origin(&kernel).unzip();
            StaleNode { graph, node, kernel: kernel.name.clone(), module, version }
        })
        .collect();
    nodes.sort_by(|a, b| (&a.graph, &a.node).cmp(&(&b.graph, &b.node)));
    nodes
}

/// `items` comma-separated, at most `max` of them (then "and N more").
fn listed(items: impl IntoIterator<Item = String>, max: usize) -> String {
    let items: Vec<String> = items.into_iter().collect();
    let mut s: Vec<String> = items.iter().take(max).cloned().collect();
    if items.len() > max {
        s.push(format!("and {} more", items.len() - max));
    }
    s.join(", ")
}

/// Names in quotes, comma-separated, at most `max`.
fn quoted<'a>(names: impl IntoIterator<Item = &'a String>, max: usize) -> String {
    listed(names.into_iter().map(|n| format!("'{n}'")), max)
}

/// The refusal of a reload that would leave `nodes` on the old code of `dropped`.
fn refusal(name: &str, from: &str, to: &str, dropped: &[String], added: &[String], nodes: &[StaleNode]) -> Error {
    // A node on an older version names that version's kernel: the dropped one of the same name.
    let used: Vec<&String> = dropped.iter().filter(|d| nodes.iter().any(|n| &n.kernel == *d)).collect();
    let uses = listed(nodes.iter().map(|n| format!("graph '{}' node '{}' ({})", n.graph, n.node, n.kernel)), 8);
    let renamed = if added.is_empty() {
        String::new()
    } else {
        format!(" (it publishes {} instead: renamed?)", quoted(added, 8))
    };
    let graphs = {
        let mut g: Vec<&str> = nodes.iter().map(|n| n.graph.as_str()).collect();
        g.sort();
        g.dedup();
        g.len()
    };
    // Two builds of one version are told apart as builds, not by a version both share.
    let (new, old) = if from == to {
        (format!("the new build (version {to}, as the loaded one)"), "the loaded build".to_owned())
    } else {
        (format!("version {to}"), format!("the loaded version {from}"))
    };
    Error::new(
        ErrorKind::ReferenceNonzero,
        format!(
            "reloading module '{name}' refused: {new} no longer publishes {} {}{renamed}, which live graphs use: \
             {uses}; {old} keeps serving. Remove those nodes (or release their graphs) first, or force the \
             reload (ReloadOptions::force), which leaves them on the old code",
            if used.len() == 1 { "kernel" } else { "kernels" },
            quoted(used.iter().copied(), 8),
        ),
    )
    .expected_found(
        "no live node using a kernel the new version drops",
        format!("{} node(s) in {graphs} graph(s)", nodes.len()),
    )
}

struct LoadedModule {
    library: Arc<ModuleLibrary>,
    kernels: Vec<Arc<KernelInner>>,
    _slot: ResourceSlot,
}

struct ModuleEntry {
    count: usize,
    loaded: Option<LoadedModule>,
    state: Arc<Mutex<ModuleState>>,
    /// States of versions replaced by reloads, oldest first (at most `ContextConfig::module_history`).
    retired: VecDeque<(String, Arc<Mutex<ModuleState>>)>,
}

/// A context's modules: the table behind a lock and the kernel table they publish into.
///
/// Module operations (load, unload, reload, in-process publish) are serialized by `ops`, held for
/// the whole operation, whichever thread calls: a second load of a name is a reference count, an
/// unload cannot slip into a reload, and the table lock (held only for short reads and updates)
/// never spans a module's `publish`. Queries take only the table lock.
pub(crate) struct Modules {
    shared: Arc<ContextShared>,
    kernels: Arc<KernelTable>,
    ops: Mutex<()>,
    table: Mutex<ModuleTable>,
    /// Calls OpenVX C modules' entry points (`foreign.rs`), once the C API installed it.
    foreign: Mutex<Option<Arc<ForeignModuleHost>>>,
}

/// Whether this process runs in secure-execution mode (`AT_SECURE`: set-uid, set-gid, or file
/// capabilities raised its rights), where the environment belongs to a less trusted caller.
pub(super) fn secure_execution() -> bool {
    // SAFETY: getauxval only reads the auxiliary vector the kernel gave the process; an absent
    // entry reads as 0.
    unsafe { libc::getauxval(libc::AT_SECURE) != 0 }
}

/// The directories `VX_MODULE_PATH`'s value `value` adds to the search path, and a warning for each
/// part refused: all of it in secure-execution mode (`secure`), relative entries always (they
/// would depend on the working directory). Empty entries are skipped.
pub(super) fn module_path_entries(secure: bool, value: Option<&OsStr>) -> (Vec<PathBuf>, Vec<String>) {
    let Some(value) = value.filter(|v| !v.is_empty()) else { return (Vec::new(), Vec::new()) };
    if secure {
        return (
            Vec::new(),
            vec![format!(
                "{MODULE_PATH_VAR} is ignored: the process runs in secure-execution mode (set-uid, set-gid or raised \
                 capabilities), where the environment is not trusted"
            )],
        );
    }
    let (mut dirs, mut warnings) = (Vec::new(), Vec::new());
    for d in std::env::split_paths(value).filter(|d| !d.as_os_str().is_empty()) {
        if d.is_absolute() {
            dirs.push(d);
        } else {
            warnings.push(format!(
                "{MODULE_PATH_VAR} entry {} is ignored: relative entries are refused (they would depend on the working \
                 directory)",
                d.display()
            ));
        }
    }
    (dirs, warnings)
}

/// Log `warnings` about `VX_MODULE_PATH`'s value `value`, once per value and process (the search
/// path is computed on every resolve).
fn warn_module_path(value: Option<&OsStr>, warnings: &[String]) {
    static WARNED: Mutex<Option<OsString>> = Mutex::new(None);
    if warnings.is_empty() {
        return;
    }
    let mut last = lock(&WARNED);
    if last.as_deref() != value {
        *last = value.map(OsStr::to_owned);
        for w in warnings {
            tracing::warn!("{w}");
        }
    }
}

/// The modules by name and the module directories.
#[derive(Default)]
struct ModuleTable {
    entries: HashMap<String, ModuleEntry>,
    dirs: Vec<PathBuf>,
}

fn check_name(name: &str) -> Result<()> {
    if name.is_empty() {
        return Err(Error::new(ErrorKind::InvalidParameters, "the module name is empty")
            .expected("a short name such as 'filters' (the file libfilters.so)"));
    }
    if name.contains(['/', '\\', '\0']) || name.contains("..") {
        return Err(Error::new(
            ErrorKind::InvalidParameters,
            "a module name is a short name such as 'filters', not a path",
        )
        .expected_found("a name without '/', '\\\\' or '..'", format!("{name:?}")));
    }
    Ok(())
}

thread_local! {
    /// This thread holds a module operation (`Modules::operation`).
    static IN_OPERATION: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// A module operation in progress on this thread.
struct OperationGuard<'a> {
    _guard: MutexGuard<'a, ()>,
}

impl Drop for OperationGuard<'_> {
    fn drop(&mut self) {
        IN_OPERATION.with(|c| c.set(false));
    }
}

/// Remove from `kernels` every kernel a failed publish had added (its transaction's rollback).
fn roll_back(kernels: &KernelTable, added: &[Kernel]) {
    let mut registry = kernels.registry();
    for k in added {
        registry.remove(&k.inner);
    }
}

impl Modules {
    pub(crate) fn new(shared: Arc<ContextShared>, kernels: Arc<KernelTable>) -> Modules {
        Modules {
            shared,
            kernels,
            ops: Mutex::new(()),
            table: Mutex::new(ModuleTable::default()),
            foreign: Mutex::new(None),
        }
    }

    /// Hold this for the whole of a module operation.
    /// Refused on a thread already inside a module operation — a C module's `vxPublishKernels`
    /// calling `vxLoadKernels`, say — which would otherwise wait for itself.
    fn operation(&self) -> Result<OperationGuard<'_>> {
        if IN_OPERATION.with(std::cell::Cell::get) {
            return Err(Error::new(
                ErrorKind::NotSupported,
                "a module operation (load, unload, reload) cannot start inside another one on the same thread \
                 (a module's publish or unpublish loading or unloading modules)",
            ));
        }
        let guard = lock(&self.ops);
        IN_OPERATION.with(|c| c.set(true));
        Ok(OperationGuard { _guard: guard })
    }

    /// Record a retired version's state, keeping the configured number of the newest.
    fn retire(&self, entry: &mut ModuleEntry, version: String, state: Arc<Mutex<ModuleState>>) {
        let keep = self.shared.config.module_history;
        entry.retired.push_back((version, state));
        while entry.retired.len() > keep {
            entry.retired.pop_front();
        }
    }

    fn modules(&self) -> MutexGuard<'_, ModuleTable> {
        lock(&self.table)
    }

    /// Run the module's `publish`; returns its outcome and the kernels it added (registered, or
    /// staged for a reload).
    fn run_publish(&self, library: &Arc<ModuleLibrary>, staged: bool) -> (Result<()>, Vec<Kernel>) {
        let _span =
            tracing::info_span!("module_publish", module = %library.name, version = %library.version, staged).entered();
        let publish = PublishCtx {
            kernels: &self.kernels,
            library: Some(Arc::clone(library)),
            added: Default::default(),
            removed: Default::default(),
            staged,
        };
        let result = match &library.entry {
            EntryPoints::Vx(m) => run_entry(&publish, m.publish()),
            EntryPoints::Foreign { publish: f, .. } => {
                let host = lock(&self.foreign).clone();
                run_foreign(&publish, host.as_ref(), *f, "vxPublishKernels", &[])
            }
        };
        (result, publish.added.take())
    }

    /// Install what calls OpenVX C modules' entry points (the C API, for its context).
    pub(crate) fn set_foreign_host(&self, host: Arc<ForeignModuleHost>) {
        *lock(&self.foreign) = Some(host);
    }

    /// Add a directory to search for modules (searched before `VX_MODULE_PATH` and the
    /// executable's directory, in the order added). Its modules load only if the context's
    /// `ModuleTrust` accepts them (checked at each load).
    pub(crate) fn add_dir(&self, dir: impl Into<PathBuf>) {
        self.modules().dirs.push(dir.into());
    }

    /// The directories searched for modules, in order.
    pub(crate) fn search_path(&self) -> Vec<PathBuf> {
        let mut dirs = self.modules().dirs.clone();
        let value = std::env::var_os(MODULE_PATH_VAR);
        let (extra, warnings) = module_path_entries(secure_execution(), value.as_deref());
        warn_module_path(value.as_deref(), &warnings);
        dirs.extend(extra);
        if let Some(exe_dir) = std::env::current_exe().ok().and_then(|e| e.parent().map(Path::to_path_buf)) {
            dirs.push(exe_dir);
        }
        // For a context of the C API (a foreign host installed): the dynamic loader's own search,
        // which OpenVX programs rely on for vxLoadKernels — its absolute entries, last (the trust
        // rules apply to what is found there as anywhere); none in secure-execution mode, where
        // the environment is a less trusted caller's.
        if lock(&self.foreign).is_some()
            && !secure_execution()
            && let Some(value) = std::env::var_os("LD_LIBRARY_PATH")
        {
            dirs.extend(std::env::split_paths(&value).filter(|p| p.is_absolute()));
        }
        dirs
    }

    /// The file `name` resolves to.
    pub(crate) fn resolve(&self, name: &str) -> Result<PathBuf> {
        self.locate(name).map(|(file, _)| file)
    }

    /// The file `name` loads from, with a warning when it shadows another file of that name later
    /// in the search path (said at a load or reload, not at every `resolve` query).
    fn resolve_to_load(&self, name: &str) -> Result<PathBuf> {
        let (first, shadowed) = self.locate(name)?;
        if !shadowed.is_empty() {
            let shadowed: Vec<String> = shadowed.iter().map(|p| p.display().to_string()).collect();
            tracing::warn!(
                module = %name,
                "module '{name}': loading {}, the first of the search path; it shadows {} (later in the path, not loaded)",
                first.display(),
                shadowed.join(", ")
            );
        }
        Ok(first)
    }

    /// The first file of `name` in the search path, and the other files of that name after it
    /// (the same file reached twice, through a link or a directory listed twice, is not another).
    fn locate(&self, name: &str) -> Result<(PathBuf, Vec<PathBuf>)> {
        check_name(name)?;
        let file = format!("lib{name}.so");
        let dirs = self.search_path();
        let mut found = dirs.iter().map(|d| d.join(&file)).filter(|p| p.is_file());
        let first = found.next();
        if let Some(first) = first {
            let real = first.canonicalize().ok();
            let shadowed = found.filter(|p| p.canonicalize().ok() != real).collect();
            return Ok((first, shadowed));
        }
        let looked: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        let short = name.strip_prefix("lib").unwrap_or(name);
        let short = short.strip_suffix(".so").unwrap_or(short);
        let hint = if short != name && !short.is_empty() {
            format!(" (did you mean '{short}'? a module is named without 'lib' and '.so')")
        } else {
            String::new()
        };
        Err(Error::new(
            ErrorKind::InvalidModule,
            format!(
                "module '{name}' not found{hint}; add the directory that holds {file} to the search path \
                 (Context::add_module_dir, or the VX_MODULE_PATH variable: absolute directories, ':'-separated)"
            ),
        )
        .expected_found(format!("{file} in one of: {}", looked.join(", ")), "no such file"))
    }

    /// `vxLoadKernels`: load module `name` and publish its kernels. Loading an already loaded
    /// module only counts it (no second publish). Publish is transactional: if it fails or panics,
    /// every kernel it added is removed, the library is closed, and the error says why.
    pub(crate) fn load(&self, name: &str) -> Result<()> {
        let _span = tracing::info_span!("module_load", module = %name).entered();
        check_name(name)?;
        let _op = self.operation()?;
        self.load_locked(name).inspect_err(|e| tracing::error!(module = %name, error = %e, "module load failed"))
    }

    /// `load` with the operation lock held.
    fn load_locked(&self, name: &str) -> Result<()> {
        let mut table = self.modules();
        if let Some(entry) = table.entries.get_mut(name)
            && let Some(loaded) = &entry.loaded
        {
            entry.count += 1;
            *lock(&entry.state) = ModuleState::Loaded { count: entry.count, version: loaded.library.version.clone() };
            return Ok(());
        }
        drop(table);
        let path = self.resolve_to_load(name)?;
        let slot = self.shared.acquire(ResourceKind::Modules)?;
        let library = Arc::new(ModuleLibrary::open(name, &path, &self.shared.config)?);
        let (result, added) = self.run_publish(&library, false);
        if let Err(e) = result {
            let n = added.len();
            roll_back(&self.kernels, &added);
            drop(added);
            drop(library);
            tracing::warn!(module = %name, "publish failed: {e}");
            return Err(Error::new(
                e.kind(),
                format!(
                    "publishing module '{name}' failed: {}; the {n} kernel(s) it had added were removed",
                    e.message()
                ),
            )
            .on_object(&path.display().to_string()));
        }
        let kernels: Vec<Arc<KernelInner>> = added.iter().map(|k| Arc::clone(&k.inner)).collect();
        drop(added);
        tracing::info!(
            module = %name,
            version = %library.version,
            file = %library.file.display(),
            build = %library.build,
            kernels = kernels.len(),
            "module loaded"
        );
        let state = Arc::clone(&library.state);
        let mut table = self.modules();
        let retired = table.entries.remove(name).map(|e| e.retired).unwrap_or_default();
        table.entries.insert(
            name.to_owned(),
            ModuleEntry { count: 1, loaded: Some(LoadedModule { library, kernels, _slot: slot }), state, retired },
        );
        Ok(())
    }

    /// `vxUnloadKernels`: undo one load. At zero, the module's `unpublish` runs and all its kernels
    /// leave lookup (even those `unpublish` forgot); the library closes once no kernel, node or
    /// graph from it is alive.
    pub(crate) fn unload(&self, name: &str) -> Result<()> {
        let _span = tracing::info_span!("module_unload", module = %name).entered();
        check_name(name)?;
        let _op = self.operation()?;
        let mut table = self.modules();
        let not_loaded = || Error::new(ErrorKind::InvalidParameters, format!("module '{name}' is not loaded"));
        let entry = table.entries.get_mut(name).ok_or_else(not_loaded)?;
        let Some(loaded) = &entry.loaded else { return Err(not_loaded()) };
        if entry.count > 1 {
            entry.count -= 1;
            *lock(&entry.state) = ModuleState::Loaded { count: entry.count, version: loaded.library.version.clone() };
            return Ok(());
        }
        entry.count = 0;
        let Some(loaded) = entry.loaded.take() else { return Err(not_loaded()) };
        drop(table);
        let unpublish = PublishCtx {
            kernels: &self.kernels,
            library: Some(Arc::clone(&loaded.library)),
            added: Default::default(),
            removed: Default::default(),
            staged: false,
        };
        let result = match &loaded.library.entry {
            EntryPoints::Vx(m) => run_entry(&unpublish, m.unpublish()),
            EntryPoints::Foreign { unpublish: Some(f), .. } => {
                let host = lock(&self.foreign).clone();
                let own: Vec<String> = loaded.kernels.iter().map(|k| k.name.clone()).collect();
                run_foreign(&unpublish, host.as_ref(), *f, "vxUnpublishKernels", &own)
            }
            EntryPoints::Foreign { unpublish: None, .. } => Ok(()),
        };
        let removed = unpublish.removed.take();
        let stray = unpublish.added.take();
        drop(unpublish);
        {
            let mut registry = self.kernels.registry();
            for k in loaded.kernels.iter().chain(stray.iter().map(|k| &k.inner)) {
                if !removed.iter().any(|n| *n == k.name) {
                    tracing::warn!(module = %name, kernel = %k.name, "unpublish did not remove the kernel; removed by the host");
                }
                registry.remove(k);
            }
        }
        drop(stray);
        let version = loaded.library.version.clone();
        // Kernels still used by nodes keep the library mapped until those go.
        loaded.library.set_state(ModuleState::Draining { version });
        drop(loaded);
        tracing::info!(module = %name, "module unloaded");
        result.map_err(|e| {
            Error::new(
                e.kind(),
                format!(
                    "module '{name}' unpublish reported an error (its kernels were removed anyway): {}",
                    e.message()
                ),
            )
        })
    }

    /// Reload module `name` from its file (a new build at the same path): the new version is
    /// opened beside the old one and published into staged kernels; only if that succeeds are the
    /// kernels swapped in, atomically. Graphs using the old kernels rebind to the new ones at their
    /// next process (the old instances are deinitialized first, with the old code). A failed reload
    /// leaves the old version serving and says why. Loads the module if it is not loaded.
    ///
    /// A new version that no longer publishes a kernel some live node uses (dropped or renamed) is
    /// refused — `ReferenceNonzero`, naming kernels, graphs and nodes, nothing changed — unless
    /// `options` force it: then those nodes stay on the old code and the report lists them.
    pub(crate) fn reload(&self, name: &str, options: ReloadOptions) -> Result<ReloadReport> {
        let _span = tracing::info_span!("module_reload", module = %name, force = options.force).entered();
        let report = self
            .reload_inner(name, options)
            .inspect_err(|e| tracing::error!(module = %name, error = %e, "module reload failed"))?;
        // Published, every lock of the loader released: idle graphs move their nodes now.
        self.kernels.rebind_idle_graphs();
        Ok(report)
    }

    fn reload_inner(&self, name: &str, options: ReloadOptions) -> Result<ReloadReport> {
        check_name(name)?;
        let _op = self.operation()?;
        if self.modules().entries.get(name).is_none_or(|e| e.loaded.is_none()) {
            self.load_locked(name)?;
            let table = self.modules();
            let loaded = table.entries.get(name).and_then(|e| e.loaded.as_ref());
            return Ok(ReloadReport {
                module: name.to_owned(),
                from: None,
                to: loaded.map(|l| l.library.version.clone()).unwrap_or_default(),
                added: loaded.map(|l| l.kernels.iter().map(|k| k.name.clone()).collect()).unwrap_or_default(),
                ..Default::default()
            });
        }
        let path = self.resolve_to_load(name)?;
        let library = Arc::new(ModuleLibrary::open(name, &path, &self.shared.config)?);
        let (result, staged) = self.run_publish(&library, true);
        let discard = |staged: &[Arc<KernelInner>]| {
            let mut registry = self.kernels.registry();
            for k in staged {
                registry.discard_staged(k);
            }
        };
        let new_kernels: Vec<Arc<KernelInner>> = staged.iter().map(|k| Arc::clone(&k.inner)).collect();
        if let Err(e) = result {
            drop(staged);
            discard(&new_kernels);
            drop(new_kernels);
            drop(library);
            return Err(Error::new(
                e.kind(),
                format!("reloading module '{name}' failed, the loaded version keeps serving: {}", e.message()),
            )
            .on_object(&path.display().to_string()));
        }
        if let Some(k) = staged.iter().find(|k| !k.is_finalized()) {
            let k = k.name().to_owned();
            drop(staged);
            discard(&new_kernels);
            return Err(Error::new(
                ErrorKind::InvalidModule,
                format!(
                    "reloading module '{name}' failed, the loaded version keeps serving: its publish left kernel '{k}' unfinalized"
                ),
            ));
        }
        drop(staged);
        let mut table = self.modules();
        // The operation lock is held, so the module is still loaded; say so if not, never panic.
        let Some(entry) = table.entries.get_mut(name).filter(|e| e.loaded.is_some()) else {
            drop(table);
            discard(&new_kernels);
            return Err(Error::new(
                ErrorKind::InvalidModule,
                format!("module '{name}' was unloaded during the reload"),
            ));
        };
        let (old_version, new_version) =
            (entry.loaded.as_ref().map(|l| l.library.version.clone()).unwrap_or_default(), library.version.clone());
        let (new_file, new_build) = (library.file.clone(), library.build);
        let mut report = ReloadReport {
            module: name.to_owned(),
            from: Some(old_version.clone()),
            to: new_version.clone(),
            ..Default::default()
        };
        let left_on_old = {
            // One swap: graphs see all of the old kernels replaced, or none (see `rebind_replaced`).
            // The look at who uses a dropped kernel is under it too: a node is registered before
            // it (and counted), or created after it (and resolves the new version).
            let _swap = self.kernels.swap();
            let old_kernels = entry.loaded.as_ref().map(|l| l.kernels.as_slice()).unwrap_or_default();
            let dropped: Vec<&Arc<KernelInner>> =
                old_kernels.iter().filter(|o| !new_kernels.iter().any(|n| n.name == o.name)).collect();
            for n in &new_kernels {
                let list =
                    if old_kernels.iter().any(|o| o.name == n.name) { &mut report.replaced } else { &mut report.added };
                list.push(n.name.clone());
            }
            report.dropped = dropped.iter().map(|k| k.name.clone()).collect();
            let users = if dropped.is_empty() {
                Vec::new()
            } else {
                self.kernels.uses_where(|latest| dropped.iter().any(|d| Arc::ptr_eq(d, latest)))
            };
            if !users.is_empty() && !options.force {
                let nodes = stale_nodes(&users);
                drop(_swap);
                drop(table);
                drop(users);
                discard(&new_kernels);
                return Err(refusal(name, &old_version, &new_version, &report.dropped, &report.added, &nodes)
                    .on_object(&path.display().to_string()));
            }
            let Some(old) = entry.loaded.take() else {
                return Err(Error::new(
                    ErrorKind::InvalidModule,
                    format!("module '{name}' was unloaded during the reload"),
                ));
            };
            let mut registry = self.kernels.registry();
            for new in &new_kernels {
                match old.kernels.iter().find(|o| o.name == new.name) {
                    Some(o) => registry.succeed(o, new),
                    None => registry.insert(Arc::clone(new)),
                }
            }
            for o in old.kernels.iter().filter(|o| !new_kernels.iter().any(|n| n.name == o.name)) {
                registry.remove(o);
            }
            drop(registry);
            // After every `replaced` mark, still under the swap: graphs look again.
            self.kernels.note_reload();
            old.library.set_state(ModuleState::Draining { version: old_version.clone() });
            let retired_state = Arc::clone(&old.library.state);
            self.retire(entry, old_version.clone(), retired_state);
            entry.state = Arc::clone(&library.state);
            library.set_state(ModuleState::Loaded { count: entry.count, version: new_version.clone() });
            entry.loaded = Some(LoadedModule { library, kernels: new_kernels, _slot: old._slot });
            let nodes = stale_nodes(&users);
            (old.kernels, old.library, users, nodes)
        };
        drop(table);
        // The old version goes (or drains) outside the locks.
        let (old_kernels, old_library, users, nodes) = left_on_old;
        drop(users);
        drop(old_kernels);
        drop(old_library);
        for n in &nodes {
            tracing::warn!(
                module = %name,
                graph = %n.graph,
                node = %n.node,
                kernel = %n.kernel,
                "forced reload: node '{}' of graph '{}' keeps running kernel '{}' of version {}, which version {new_version} \
                 no longer publishes",
                n.node,
                n.graph,
                n.kernel,
                n.version.as_deref().unwrap_or("?"),
            );
        }
        report.left_on_old = nodes;
        tracing::info!(
            module = %name,
            from = %old_version,
            to = %new_version,
            dropped = report.dropped.len(),
            left_on_old = report.left_on_old.len(),
            file = %new_file.display(),
            build = %new_build,
            "module reloaded"
        );
        Ok(report)
    }

    /// Load every module (`lib*.so`) of `dir`, going on past failures. Returns one result per
    /// module found, by name, in file-name order. `dir` is added to the search path first.
    pub(crate) fn load_dir(&self, dir: impl Into<PathBuf>) -> Result<Vec<(String, Result<()>)>> {
        let dir = dir.into();
        let entries = std::fs::read_dir(&dir).map_err(|e| {
            Error::new(ErrorKind::InvalidParameters, format!("cannot read the plugin directory: {e}"))
                .on_object(&dir.display().to_string())
        })?;
        let mut names: Vec<String> =
            entries.filter_map(|e| e.ok()).filter_map(|e| module_name_of_file(&e.path())).collect();
        names.sort();
        if !self.modules().dirs.contains(&dir) {
            self.add_dir(&dir);
        }
        Ok(names
            .into_iter()
            .map(|n| {
                let r = self.load(&n);
                if let Err(e) = &r {
                    tracing::warn!(module = %n, "loading from {} failed: {e}", dir.display());
                }
                (n, r)
            })
            .collect())
    }

    /// States of the versions of module `name` that reloads replaced (version, state), oldest first.
    pub(crate) fn history(&self, name: &str) -> Vec<(String, ModuleState)> {
        self.modules()
            .entries
            .get(name)
            .map(|e| e.retired.iter().map(|(v, s)| (v.clone(), lock(s).clone())).collect())
            .unwrap_or_default()
    }

    /// Publish the kernels defined in this binary with `#[tiling_kernel]` / `#[user_kernel]` (their
    /// registration records), through the same host interface modules use — no cdylib needed.
    /// Transactional: if one fails, the ones added are removed. Returns the names published.
    pub(crate) fn publish_in_process(&self) -> Result<Vec<String>> {
        let _span = tracing::info_span!("module_publish", module = "(this binary)", staged = false).entered();
        let _op = self.operation()?;
        let publish = PublishCtx {
            kernels: &self.kernels,
            library: None,
            added: Default::default(),
            removed: Default::default(),
            staged: false,
        };
        let result = run_records(&publish);
        let added = publish.added.take();
        if let Err(e) = result {
            roll_back(&self.kernels, &added);
            return Err(Error::new(e.kind(), format!("publishing the in-process kernels failed: {}", e.message())));
        }
        Ok(added.iter().map(|k| k.name().to_owned()).collect())
    }

    /// The state of module `name`, if it was ever loaded in this context.
    pub(crate) fn state(&self, name: &str) -> Option<ModuleState> {
        self.modules().entries.get(name).map(|e| lock(&e.state).clone())
    }

    /// What module `name` is (while loaded): version, file, build.
    pub(crate) fn info(&self, name: &str) -> Option<ModuleInfo> {
        let table = self.modules();
        let l = &table.entries.get(name)?.loaded.as_ref()?.library;
        Some(ModuleInfo { name: l.name.clone(), version: l.version.clone(), file: l.file.clone(), build: l.build })
    }

    /// Names of the kernels module `name` published (while loaded).
    pub(crate) fn kernel_names(&self, name: &str) -> Vec<String> {
        self.modules()
            .entries
            .get(name)
            .and_then(|e| e.loaded.as_ref())
            .map(|l| l.kernels.iter().map(|k| k.name.clone()).collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_module_path_is_ignored_in_secure_execution_mode() {
        let value = OsStr::new("/opt/vx/modules:/usr/lib/vx");
        let (dirs, warnings) = module_path_entries(false, Some(value));
        assert_eq!(dirs, [PathBuf::from("/opt/vx/modules"), PathBuf::from("/usr/lib/vx")]);
        assert!(warnings.is_empty());
        let (dirs, warnings) = module_path_entries(true, Some(value));
        assert!(dirs.is_empty(), "secure execution: nothing from the environment");
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("VX_MODULE_PATH is ignored: the process runs in secure-execution mode"));
        assert_eq!(module_path_entries(true, None), (Vec::new(), Vec::new()), "unset: nothing to say");
    }

    #[test]
    fn relative_module_path_entries_are_refused() {
        let (dirs, warnings) = module_path_entries(false, Some(OsStr::new("plugins::/abs:./here:../up")));
        assert_eq!(dirs, [PathBuf::from("/abs")]);
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert!(warnings[0].contains("entry plugins is ignored: relative entries are refused"), "{warnings:?}");
        assert!(warnings[1].contains("./here") && warnings[2].contains("../up"));
    }

    #[test]
    fn this_test_process_is_not_in_secure_execution_mode() {
        assert!(!secure_execution());
    }
}
