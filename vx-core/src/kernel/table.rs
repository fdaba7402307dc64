//! The context's kernel table: names and enumerations are unique, lookups see finalized kernels
//! only, and the user kernel id / library id pools of `vxAllocateUserKernelId` and
//! `vxAllocateUserKernelLibraryId`.

use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard, Weak};

use crate::error::{Error, ErrorKind, Result};
use crate::kernel::record::KernelInner;
use crate::kernel::users::{IdleRebind, KernelUse, KernelUses};
use crate::shared::ContextShared;
use crate::support::sync::lock;

/// `VX_ID_USER`: the vendor id of user kernels.
pub const VX_ID_USER: u32 = 0xFFE;
/// Size of the dynamic user kernel id pool.
pub const USER_KERNEL_ID_POOL: u32 = 4096;
/// The largest dynamically allocated library id.
pub const MAX_USER_LIBRARY_ID: u32 = 255;

/// `VX_KERNEL_BASE(vendor, lib)`: `(vendor << 20) | (lib << 12)`, as a `vx_enum`.
pub const fn kernel_base(vendor: u32, library: u32) -> i32 {
    ((vendor << 20) | (library << 12)) as i32
}

/// A context's kernels: the registry behind a lock, with the context's shared part (for the
/// kernel resource count and for "same context" checks).
pub(crate) struct KernelTable {
    pub(crate) shared: Arc<ContextShared>,
    registry: Mutex<KernelRegistry>,
    /// Held for writing while a module reload swaps its kernels in (and marks the old ones
    /// replaced), for reading while a graph rebinds its nodes: a graph sees every kernel of a reload
    /// replaced, or none, so one frame never mixes two versions of a module.
    swap: RwLock<()>,
    /// Which node runs which kernel version (see `kernel/users.rs`).
    uses: Mutex<KernelUses>,
    /// Bumped by every reload after it marked its old kernels replaced (under `swap`): a graph that
    /// checked its nodes at this count need not look again until it changes.
    reloads: std::sync::atomic::AtomicU64,
}

impl KernelTable {
    pub(crate) fn new(shared: Arc<ContextShared>) -> Arc<KernelTable> {
        Arc::new(KernelTable {
            shared,
            registry: Mutex::new(KernelRegistry::default()),
            swap: RwLock::new(()),
            uses: Mutex::new(KernelUses::default()),
            reloads: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// Reloads so far (see `reloads`): read before looking at the `replaced` flags.
    pub(crate) fn reload_epoch(&self) -> u64 {
        self.reloads.load(std::sync::atomic::Ordering::Acquire)
    }

    /// A reload marked its old kernels replaced (call holding [`swap`](Self::swap), after).
    pub(crate) fn note_reload(&self) {
        self.reloads.fetch_add(1, std::sync::atomic::Ordering::Release);
    }

    /// Exclusive: a reload swapping kernels.
    pub(crate) fn swap(&self) -> RwLockWriteGuard<'_, ()> {
        self.swap.write().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Shared: a graph deciding which nodes to rebind, and rebinding them.
    pub(crate) fn rebinding(&self) -> RwLockReadGuard<'_, ()> {
        self.swap.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The registry, locked.
    pub(crate) fn registry(&self) -> MutexGuard<'_, KernelRegistry> {
        lock(&self.registry)
    }

    /// Register node `node` of the graph named by `graph` as running `kernel`. Call it holding
    /// [`rebinding`](Self::rebinding), where the kernel was resolved, so a reload sees the use.
    pub(crate) fn register_use(
        &self,
        kernel: &Arc<KernelInner>,
        graph: &Arc<Mutex<String>>,
        node: &str,
        owner: Weak<dyn IdleRebind>,
    ) -> Arc<KernelUse> {
        lock(&self.uses).register(kernel, graph, node, owner)
    }

    /// After new versions were published (a reload): every graph with a node on a replaced version
    /// moves what can move in place now, if idle, so the processing thread's next frame does not
    /// (`graph/body.rs::rebind_replaced`). Call it holding no lock of the table or the loader.
    pub(crate) fn rebind_idle_graphs(&self) {
        // Upgraded under the lock, looked at and dropped after it (a use's last handle may go).
        let uses = lock(&self.uses).live();
        let graphs = super::users::graphs_on_replaced(&uses);
        drop(uses);
        for g in graphs {
            g.rebind_if_idle();
        }
    }

    /// The live nodes whose kernel's newest version satisfies `pred` (a node on an older version
    /// rebinds to the newest at its next process). A reload calls it holding [`swap`](Self::swap).
    pub(crate) fn uses_where(&self, pred: impl Fn(&Arc<KernelInner>) -> bool) -> Vec<Arc<KernelUse>> {
        let all = lock(&self.uses).live();
        all.into_iter().filter(|u| pred(&u.kernel().latest())).collect()
    }
}

pub(crate) struct KernelRegistry {
    kernels: Vec<Arc<KernelInner>>,
    /// One bit per id of the user kernel id pool: set while allocated.
    kernel_ids: [u64; (USER_KERNEL_ID_POOL / 64) as usize],
    next_library_id: u32,
}

impl Default for KernelRegistry {
    fn default() -> Self {
        KernelRegistry { kernels: Vec::new(), kernel_ids: [0; (USER_KERNEL_ID_POOL / 64) as usize], next_library_id: 0 }
    }
}

impl KernelRegistry {
    pub(crate) fn len(&self) -> usize {
        self.kernels.len()
    }

    pub(crate) fn finalized_len(&self) -> usize {
        self.kernels.iter().filter(|k| k.final_().is_some()).count()
    }

    /// Name and enumeration of each finalized kernel, in registration order.
    pub(crate) fn finalized(&self) -> Vec<(String, i32)> {
        self.kernels.iter().filter(|k| k.final_().is_some()).map(|k| (k.name.clone(), k.enumeration)).collect()
    }

    pub(super) fn check_new(&self, name: &str, enumeration: i32) -> Result<()> {
        if let Some(k) = self.kernels.iter().find(|k| k.name == name) {
            return Err(Error::new(
                ErrorKind::InvalidParameters,
                "a kernel of this name already exists in the context",
            )
            .in_kernel(name)
            .found(format!("existing kernel with enumeration {:#x}", k.enumeration)));
        }
        if let Some(k) = self.kernels.iter().find(|k| k.enumeration == enumeration) {
            return Err(Error::new(
                ErrorKind::InvalidParameters,
                format!("enumeration {enumeration:#x} is already used"),
            )
            .in_kernel(name)
            .found(format!("kernel '{}'", k.name)));
        }
        Ok(())
    }

    pub(crate) fn insert(&mut self, k: Arc<KernelInner>) {
        self.kernels.push(k);
    }

    pub(super) fn contains(&self, k: &Arc<KernelInner>) -> bool {
        self.kernels.iter().any(|x| Arc::ptr_eq(x, k))
    }

    /// Take `k` out of the table (removed or unloaded); an enumeration it owns returns to the pool.
    pub(crate) fn remove(&mut self, k: &Arc<KernelInner>) {
        let before = self.kernels.len();
        self.kernels.retain(|x| !Arc::ptr_eq(x, k));
        let was_registered = self.kernels.len() < before;
        k.release_slot();
        if !k.removed.swap(true, std::sync::atomic::Ordering::AcqRel) && k.owns_enumeration && was_registered {
            self.release_kernel_id(k.enumeration);
        }
    }

    /// Give back the pool ids a staged (never registered) kernel owns: a failed reload.
    pub(crate) fn discard_staged(&mut self, k: &KernelInner) {
        k.release_slot();
        if k.owns_enumeration && !self.kernels.iter().any(|x| x.enumeration == k.enumeration) {
            self.release_kernel_id(k.enumeration);
        }
    }

    /// Swap `old` for `new` in place (module reload).
    /// A reload's step for one kernel (call holding the table's swap lock): `new` succeeds `old`.
    /// The successor is linked before the old version is marked removed (Release/Acquire): whoever
    /// sees it removed finds its successor.
    pub(crate) fn succeed(&mut self, old: &Arc<KernelInner>, new: &Arc<KernelInner>) {
        old.replace_with(new);
        self.replace(old, Arc::clone(new));
    }

    pub(super) fn replace(&mut self, old: &Arc<KernelInner>, new: Arc<KernelInner>) {
        let new_enumeration = new.enumeration;
        match self.kernels.iter_mut().find(|x| Arc::ptr_eq(x, old)) {
            Some(slot) => *slot = new,
            None => self.kernels.push(new),
        }
        old.removed.store(true, std::sync::atomic::Ordering::Release);
        old.release_slot();
        if old.owns_enumeration && old.enumeration != new_enumeration {
            self.release_kernel_id(old.enumeration);
        }
    }

    pub(crate) fn by_name(&self, name: &str) -> Option<Arc<KernelInner>> {
        self.kernels.iter().find(|k| k.name == name && k.final_().is_some()).cloned()
    }

    /// Why no kernel is named `name`, for a person: the closest name (a typo, or a short name
    /// such as `gaussian3x3` for `filters.gaussian3x3`) and the names there are (at most 12).
    pub(super) fn unknown_name(&self, name: &str) -> String {
        let mut names: Vec<&str> =
            self.kernels.iter().filter(|k| k.final_().is_some()).map(|k| k.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        if names.is_empty() {
            return format!(
                "no kernel named '{name}': the context has no kernels yet (load a module, or publish the kernels \
                 compiled in with publish_in_process)"
            );
        }
        let suggestion = match closest_name(name, &names) {
            Some(n) => format!("; did you mean '{n}'?"),
            None => String::new(),
        };
        let shown = names.iter().take(12).copied().collect::<Vec<_>>().join(", ");
        let more = if names.len() > 12 { format!(" and {} more", names.len() - 12) } else { String::new() };
        format!("no kernel named '{name}'{suggestion} (the context's kernels: {shown}{more})")
    }

    pub(super) fn by_enum(&self, e: i32) -> Option<Arc<KernelInner>> {
        self.kernels.iter().find(|k| k.enumeration == e && k.final_().is_some()).cloned()
    }

    /// The lowest free id of the user kernel id pool.
    pub(crate) fn allocate_kernel_id(&mut self) -> Result<i32> {
        let Some((word, bits)) = self.kernel_ids.iter_mut().enumerate().find(|(_, b)| **b != u64::MAX) else {
            return Err(Error::new(ErrorKind::NoResources, "the user kernel id pool is exhausted").expected_found(
                format!("at most {USER_KERNEL_ID_POOL} ids in use per context"),
                USER_KERNEL_ID_POOL + 1,
            ));
        };
        let bit = bits.trailing_ones();
        *bits |= 1 << bit;
        Ok(kernel_base(VX_ID_USER, 0) + (word as u32 * 64 + bit) as i32)
    }

    /// Return `id` to the user kernel id pool (ids outside the pool are ignored).
    fn release_kernel_id(&mut self, id: i32) {
        let index = id.wrapping_sub(kernel_base(VX_ID_USER, 0));
        if (0..USER_KERNEL_ID_POOL as i32).contains(&index) {
            self.kernel_ids[index as usize / 64] &= !(1 << (index % 64));
        }
    }

    /// Ids of the user kernel id pool in use.
    pub(crate) fn kernel_ids_in_use(&self) -> usize {
        self.kernel_ids.iter().map(|b| b.count_ones() as usize).sum()
    }

    pub(crate) fn allocate_library_id(&mut self) -> Result<i32> {
        if self.next_library_id >= MAX_USER_LIBRARY_ID {
            return Err(Error::new(ErrorKind::NoResources, "the user kernel library id pool is exhausted")
                .expected_found(format!("ids 1..={MAX_USER_LIBRARY_ID}"), MAX_USER_LIBRARY_ID + 1));
        }
        self.next_library_id += 1;
        Ok(self.next_library_id as i32)
    }
}

/// The name of `names` that `name` most likely meant: the one whose last dot-separated parts are
/// `name` (a short name), else the nearest by edit distance within a third of the name's length
/// (at least 1, at most 3); `None` when nothing is that near, or two are equally near.
fn closest_name<'a>(name: &str, names: &[&'a str]) -> Option<&'a str> {
    let short: Vec<&str> =
        names.iter().copied().filter(|n| n.strip_suffix(name).is_some_and(|head| head.ends_with('.'))).collect();
    if let [one] = short.as_slice() {
        return Some(one);
    }
    let limit = (name.chars().count() / 3).clamp(1, 3);
    let mut best: Option<(usize, &str)> = None;
    let mut tie = false;
    for &n in names {
        let d = edit_distance(name, n);
        match best {
            _ if d > limit => {}
            Some((b, _)) if d > b => {}
            Some((b, _)) if d == b => tie = true,
            _ => {
                best = Some((d, n));
                tie = false;
            }
        }
    }
    best.filter(|_| !tie).map(|(_, n)| n)
}

/// Levenshtein distance over characters (insertions, deletions, substitutions).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let up = row[j + 1];
            row[j + 1] = (diag + usize::from(ca != cb)).min(up + 1).min(row[j] + 1);
            diag = up;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::{closest_name, edit_distance};

    #[test]
    fn an_unknown_kernel_name_gets_the_nearest_one() {
        let names = ["filters.gaussian3x3", "filters.sobel3x3", "spec.gaussian3x3", "hello.brighten"];
        assert_eq!(closest_name("hello.brigthen", &names), Some("hello.brighten"));
        assert_eq!(closest_name("sobel3x3", &names), Some("filters.sobel3x3"));
        // Two kernels have the short name, both as near: no guess.
        assert_eq!(closest_name("gaussian3x3", &names), None);
        assert_eq!(closest_name("median5x5", &names), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("µs", "us"), 1);
    }
}
