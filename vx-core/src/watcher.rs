//! Watching a plugin directory: when `lib<name>.so` appears or changes, load it (new) or reload it
//! (already loaded) once the file has been quiet for a debounce interval — so a build or a copy in
//! progress is not picked up half-written. A load that fails because the file is not (yet) a valid
//! library is retried after the next quiet interval, up to a limit; every outcome is reported.
//!
//! The watcher applies the context's `ModuleTrust`: it refuses to watch a directory that the policy
//! refuses (another user could plant modules there, and they would be loaded automatically), and
//! it looks at each module file before loading it; a file refused (owner, mode, unpinned digest) is
//! logged and reported, and not retried until it changes again.
//!
//! By default the watcher never forces a reload: a new version that no longer publishes a kernel
//! some live node uses (dropped, or renamed) is refused by `Context::reload_module`
//! (`ReferenceNonzero`, the kernels, graphs and nodes named) and the loaded version keeps serving.
//! The watcher reports that like any outcome — a `tracing` warning and a [`WatchEvent`] with the
//! error — and does not retry it (retrying would refuse again while those nodes live); the next
//! change of the file is tried again. The service decides: remove the nodes, or reload with
//! `ReloadOptions::force` — or start the watcher with
//! [`start_with_reload`](ModuleWatcher::start_with_reload) and forcing options, when its reloads
//! swap anyway (those nodes keep the old code; each event's [`WatchEvent::report`] names them).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use notify::{EventKind, RecursiveMode, Watcher};

use crate::context::Context;
use crate::error::{Error, ErrorKind, Result};
use crate::module::library::module_name_of_file;
use crate::module::loader::{ReloadOptions, ReloadReport};
use crate::module::trust::vet;
use crate::support::unwind::catch_panic;

/// What the watcher did for one module file.
#[derive(Debug)]
pub struct WatchEvent {
    /// The module name (`lib<name>.so`).
    pub module: String,
    /// True for a reload of a loaded module, false for a first load.
    pub reload: bool,
    /// The outcome. On failure the previous version (if any) keeps serving. A reload refused
    /// because live nodes use a kernel the new version drops is `ReferenceNonzero` (not retried).
    pub result: Result<()>,
    /// What a successful reload did (`None` for a first load or a failure); after a forced reload,
    /// its `left_on_old` names the nodes that keep a dropped kernel's old code.
    pub report: Option<ReloadReport>,
}

/// Settings of a [`ModuleWatcher`].
#[derive(Clone, Copy, Debug)]
pub struct WatchOptions {
    /// How long a file must stay unchanged before it is (re)loaded.
    pub debounce: Duration,
    /// How many quiet intervals a file that fails to load is retried.
    pub retries: u32,
    /// Also load modules that appear in the directory (false: only reload loaded ones).
    pub load_new: bool,
}

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions { debounce: Duration::from_millis(300), retries: 5, load_new: true }
    }
}

/// A running watcher; dropping it stops watching.
pub struct ModuleWatcher {
    watcher: Option<notify::RecommendedWatcher>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for ModuleWatcher {
    fn drop(&mut self) {
        // Dropping the notify watcher closes the event channel, which ends the thread.
        self.watcher.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

struct Pending {
    last_event: Instant,
    size: Option<u64>,
    failures: u32,
}

impl ModuleWatcher {
    /// Watch `dir` (added to the context's module search path) and call `on_event` after every
    /// load or reload the watcher performs.
    pub fn start(
        ctx: &Context,
        dir: impl Into<PathBuf>,
        options: WatchOptions,
        on_event: impl Fn(&WatchEvent) + Send + 'static,
    ) -> Result<ModuleWatcher> {
        Self::start_with_reload(ctx, dir, options, ReloadOptions::default(), on_event)
    }

    /// [`start`](Self::start), reloading with `reload`: `ReloadOptions::new().force(true)` swaps
    /// even when live nodes use a kernel the new version drops (they keep the old code; the event's
    /// [`report`](WatchEvent::report) lists them). [`start`](Self::start) never forces.
    pub fn start_with_reload(
        ctx: &Context,
        dir: impl Into<PathBuf>,
        options: WatchOptions,
        reload: ReloadOptions,
        on_event: impl Fn(&WatchEvent) + Send + 'static,
    ) -> Result<ModuleWatcher> {
        let dir: PathBuf = dir.into();
        // Events carry absolute paths: work with the canonical directory.
        let dir = dir.canonicalize().map_err(|e| {
            Error::new(ErrorKind::InvalidParameters, format!("cannot watch the plugin directory: {e}"))
                .on_object(&dir.display().to_string())
        })?;
        crate::module::trust::check_dir("ModuleWatcher", &dir, &ctx.config().module_trust)
            .inspect_err(|e| tracing::warn!(dir = %dir.display(), "refusing to watch the plugin directory: {e}"))?;
        let (tx, rx) = mpsc::channel::<notify::Result<notify::Event>>();
        let mut watcher = notify::recommended_watcher(tx)
            .map_err(|e| Error::new(ErrorKind::NoResources, format!("cannot start a file watcher: {e}")))?;
        watcher.watch(&dir, RecursiveMode::NonRecursive).map_err(|e| {
            Error::new(ErrorKind::InvalidParameters, format!("cannot watch the plugin directory: {e}"))
                .on_object(&dir.display().to_string())
        })?;
        if !ctx.module_search_path().contains(&dir) {
            ctx.add_module_dir(&dir);
        }
        let ctx = ctx.clone();
        let thread = std::thread::Builder::new()
            .name("vx-module-watcher".into())
            .spawn(move || watch_loop(&ctx, &dir, options, reload, rx, on_event))
            .map_err(|e| Error::new(ErrorKind::NoResources, format!("cannot start the watcher thread: {e}")))?;
        Ok(ModuleWatcher { watcher: Some(watcher), thread: Some(thread) })
    }
}

fn watch_loop(
    ctx: &Context,
    dir: &Path,
    options: WatchOptions,
    reload_options: ReloadOptions,
    rx: mpsc::Receiver<notify::Result<notify::Event>>,
    on_event: impl Fn(&WatchEvent),
) {
    let mut pending: HashMap<String, Pending> = HashMap::new();
    loop {
        match rx.recv_timeout((options.debounce / 4).max(Duration::from_millis(1))) {
            Ok(Ok(event)) => {
                if matches!(event.kind, EventKind::Create(_) | EventKind::Modify(_)) {
                    for p in &event.paths {
                        // The watch is not recursive: every path is a direct child of `dir`.
                        if let Some(name) = module_name_of_file(p) {
                            let e = pending.entry(name).or_insert(Pending {
                                last_event: Instant::now(),
                                size: None,
                                failures: 0,
                            });
                            e.last_event = Instant::now();
                        }
                    }
                }
            }
            Ok(Err(e)) => tracing::warn!(dir = %dir.display(), "file watcher error: {e}"),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        let now = Instant::now();
        let due: Vec<String> = pending
            .iter()
            .filter(|(_, p)| now.duration_since(p.last_event) >= options.debounce)
            .map(|(n, _)| n.clone())
            .collect();
        for name in due {
            let file = dir.join(format!("lib{name}.so"));
            let size = std::fs::metadata(&file).map(|m| m.len()).ok();
            let Some(p) = pending.get_mut(&name) else { continue };
            if size.is_none() {
                pending.remove(&name); // deleted: nothing to load
                continue;
            }
            if p.size != size {
                // Still growing (or first look): wait one more quiet interval.
                p.size = size;
                p.last_event = now;
                continue;
            }
            let reload = ctx
                .module_state(&name)
                .is_some_and(|s| matches!(s, crate::module::library::ModuleState::Loaded { .. }));
            if !reload && !options.load_new {
                pending.remove(&name);
                continue;
            }
            // The context's trust policy first: a refused file is reported, not retried (it is not
            // half-written; it is not trusted).
            let refused = vet(&name, &file, &ctx.config().module_trust).err();
            // The watcher thread must outlive anything a load does: a panic (a bug anywhere below) is
            // an outcome like any error, reported, never the end of the watcher.
            let outcome = match refused.clone() {
                Some(e) => Err(e),
                None => crate::support::unwind::guarded("picking up the module", || {
                    if reload {
                        ctx.reload_module_with(&name, reload_options).map(Some)
                    } else {
                        ctx.load_module(&name).map(|()| None)
                    }
                }),
            };
            let (result, report) = match outcome {
                Ok(report) => (Ok(()), report),
                Err(e) => (Err(e), None),
            };
            // A reload refused because live nodes use a kernel it drops is not retried either.
            let in_use = matches!(&result, Err(e) if e.kind() == ErrorKind::ReferenceNonzero);
            let failed = result.is_err() && refused.is_none() && !in_use;
            match &result {
                Ok(()) => tracing::info!(module = %name, reload, "module picked up from {}", dir.display()),
                Err(e) if refused.is_some() => tracing::warn!(module = %name, reload, "refused the module file: {e}"),
                Err(e) if in_use => tracing::warn!(
                    module = %name,
                    reload,
                    "reload refused, the loaded version keeps serving (this watcher does not force; it tries again \
                     when the file changes): {e}"
                ),
                Err(e) => tracing::warn!(module = %name, reload, "picking up the module failed: {e}"),
            }
            let outcome = WatchEvent { module: name.clone(), reload, result, report };
            if catch_panic(|| on_event(&outcome)).is_err() {
                tracing::error!(module = %name, "the watcher's outcome callback panicked; the watcher goes on");
            }
            let Some(p) = pending.get_mut(&name) else { continue };
            if failed && p.failures < options.retries {
                p.failures += 1;
                p.last_event = Instant::now();
            } else {
                pending.remove(&name);
            }
        }
    }
}
