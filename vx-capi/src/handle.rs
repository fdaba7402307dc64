//! The handle table: every `vx_reference` the library hands out is the address of an [`Entry`]
//! registered here, and every call looks its handles up before touching them, so a NULL, released,
//! foreign or wrong-type handle is refused with `VX_ERROR_INVALID_REFERENCE` instead of being
//! dereferenced.
//!
//! Counts follow the specification: the application's (external: creates, `vxRetainReference`,
//! `vxRelease*`) and the library's own (internal: a handle lent to a callback for the duration of
//! the call). An entry goes when both reach zero. The same object always has the same handle while
//! its entry lives: objects with an identity ([`Ident`]) are found in the context's identity map
//! before a new entry is made.
//!
//! Concurrency: one mutex guards the whole table (entries, counts, identity maps, per-context
//! totals); every count change and map change happens under it, so no interleaving of two calls
//! can see a count and an entry disagree. Nothing is called under the lock: entries that go are
//! collected and dropped after it is released, because dropping a graph runs deinit callbacks
//! that re-enter this table.

use std::collections::HashMap;
use std::ffi::CString;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

use vx::NodeKey;

use crate::context::CContext;
use crate::sys::consts::*;
use crate::sys::{VxRef, vx_enum, vx_reference, vx_status};

/// What a handle refers to.
pub(crate) enum Object {
    Context(Arc<CContext>),
    Graph(crate::graph::CGraph),
    Node(vx::Node),
    /// `None` once `vxRemoveKernel` removed it.
    Kernel(Mutex<Option<vx::Kernel>>),
    /// A node's or a kernel's parameter (`vx_parameter`).
    Parameter(Parameter),
    /// Any data object.
    Data(vx::Reference),
    /// A validator's meta format for output `index` of the callback frame `frame`.
    MetaFormat {
        frame: u64,
        index: u32,
    },
    /// An error object (`vxGetStatus` reads the status).
    Error(vx_status),
    /// A delay, with the handles of its slots.
    Delay(crate::delay::CDelay),
}

/// A `vx_parameter`: parameter `index` of a node or of a kernel.
#[derive(Clone)]
pub(crate) enum Parameter {
    Node { node: vx::Node, key: NodeKey, kernel: vx::Kernel, index: u32 },
    Kernel { kernel: vx::Kernel, index: u32 },
}

/// The identity of an object that must keep one handle while it lives.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Ident {
    Data(u64),
    Graph(u64),
    Node(NodeKey),
    /// A kernel, by its record's address (alive while a handle holds the kernel).
    Kernel(usize),
}

/// One handle's target. Its address is the handle.
pub(crate) struct Entry {
    /// `VX_TYPE_*`.
    pub(crate) kind: vx_enum,
    /// The context it belongs to (`None`: a context, or an error object of no context).
    pub(crate) ctx: Option<Arc<CContext>>,
    pub(crate) object: Object,
    /// `VX_REFERENCE_NAME`s, kept as C text so the query can return a pointer to the last; every
    /// name given is kept while the entry lives, so a pointer the query returned never dangles.
    pub(crate) name: Mutex<Vec<CString>>,
    /// `vxDirective(…, VX_DIRECTIVE_DISABLE_LOGGING)` clears it.
    pub(crate) logging: AtomicBool,
    ident: Option<Ident>,
}

impl Entry {
    pub(crate) fn new(kind: vx_enum, ctx: Option<Arc<CContext>>, object: Object) -> Entry {
        Entry {
            kind,
            ctx,
            object,
            name: Mutex::new(vec![CString::default()]),
            logging: AtomicBool::new(true),
            ident: None,
        }
    }
    pub(crate) fn with_ident(mut self, ident: Ident) -> Entry {
        self.ident = Some(ident);
        self
    }
    /// The handle of this entry.
    pub(crate) fn handle(self: &Arc<Self>) -> vx_reference {
        Arc::as_ptr(self) as *mut VxRef
    }
    /// The context this entry belongs to, or itself if it is one.
    pub(crate) fn context(&self) -> Option<Arc<CContext>> {
        match &self.object {
            Object::Context(c) => Some(Arc::clone(c)),
            _ => self.ctx.clone(),
        }
    }
}

struct Slot {
    entry: Arc<Entry>,
    external: u32,
    internal: u32,
}

/// The table's hasher: keys are addresses and ids the library made, not an attacker's choice,
/// so a multiply-rotate of each word (FxHash's) serves; SipHash costs more than the rest of a
/// lookup.
#[derive(Default, Clone, Copy)]
pub(crate) struct WordHasher(u64);

impl std::hash::Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_ne_bytes(w));
        }
    }
    fn write_u64(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, w: usize) {
        self.write_u64(w as u64);
    }
    fn write_u32(&mut self, w: u32) {
        self.write_u64(w as u64);
    }
    fn write_u8(&mut self, w: u8) {
        self.write_u64(w as u64);
    }
    fn write_isize(&mut self, w: isize) {
        self.write_u64(w as u64);
    }
}

pub(crate) type FastMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<WordHasher>>;

/// Everything the table knows, behind [`TABLE`].
#[derive(Default)]
struct Table {
    slots: FastMap<usize, Slot>,
    /// (context address, identity) → handle.
    identity: FastMap<(usize, Ident), usize>,
    /// Context address → entries of that context that count in `VX_CONTEXT_REFERENCES`.
    live: FastMap<usize, usize>,
}

static TABLE: LazyLock<Mutex<Table>> = LazyLock::new(Default::default);

fn table() -> MutexGuard<'static, Table> {
    // A panic while the table is held cannot leave it half-updated in a way that matters more
    // than refusing every later call would: keep serving.
    TABLE.lock().unwrap_or_else(|p| p.into_inner())
}

fn ctx_key(ctx: &Option<Arc<CContext>>) -> Option<usize> {
    ctx.as_ref().map(|c| Arc::as_ptr(c) as usize)
}

/// Counted in `VX_CONTEXT_REFERENCES`: everything but contexts, error objects and meta formats.
fn counts_in_context(e: &Entry) -> bool {
    !matches!(e.kind, VX_TYPE_CONTEXT | VX_TYPE_ERROR | VX_TYPE_META_FORMAT)
}

/// Register a new entry with one external (`external`) or one internal count.
pub(crate) fn register(entry: Entry, external: bool) -> vx_reference {
    let entry = Arc::new(entry);
    let handle = entry.handle();
    let mut t = table();
    insert(&mut t, entry, external);
    handle
}

fn insert(t: &mut Table, entry: Arc<Entry>, external: bool) {
    let key = entry.handle() as usize;
    if let (Some(c), Some(id)) = (ctx_key(&entry.ctx), entry.ident.clone()) {
        t.identity.insert((c, id), key);
    }
    if counts_in_context(&entry)
        && let Some(c) = ctx_key(&entry.ctx)
    {
        *t.live.entry(c).or_default() += 1;
    }
    let (external, internal) = if external { (1, 0) } else { (0, 1) };
    t.slots.insert(key, Slot { entry, external, internal });
}

/// The handle of the object with identity `ident` in `ctx`, made by `make` if it has none; its
/// external (or internal) count goes up by one.
pub(crate) fn handle_for(
    ctx: &Arc<CContext>,
    ident: Ident,
    external: bool,
    make: impl FnOnce() -> Entry,
) -> vx_reference {
    let mut t = table();
    let c = Arc::as_ptr(ctx) as usize;
    if let Some(&key) = t.identity.get(&(c, ident.clone()))
        && let Some(slot) = t.slots.get_mut(&key)
    {
        if external {
            slot.external = slot.external.saturating_add(1);
        } else {
            slot.internal = slot.internal.saturating_add(1);
        }
        return key as vx_reference;
    }
    let entry = Arc::new(make().with_ident(ident));
    let handle = entry.handle();
    insert(&mut t, entry, external);
    handle
}

/// An object lent to a callback.
pub(crate) enum Lend<'a> {
    Node(&'a vx::Node),
    Data(&'a vx::Reference),
}

/// [`handle_for`] with internal counts for several objects at once (one lock): the handles
/// lent to a callback (NULL for `None`).
pub(crate) fn lend_all<'a>(ctx: &Arc<CContext>, items: impl Iterator<Item = Option<Lend<'a>>>) -> Vec<vx_reference> {
    let mut t = table();
    let c = Arc::as_ptr(ctx) as usize;
    items
        .map(|item| {
            let Some(item) = item else { return std::ptr::null_mut() };
            let ident = match item {
                Lend::Node(n) => Ident::Node(n.key()),
                Lend::Data(r) => Ident::Data(r.id()),
            };
            if let Some(&key) = t.identity.get(&(c, ident.clone()))
                && let Some(slot) = t.slots.get_mut(&key)
            {
                slot.internal = slot.internal.saturating_add(1);
                return key as vx_reference;
            }
            let entry = match item {
                Lend::Node(n) => Entry::new(VX_TYPE_NODE, Some(Arc::clone(ctx)), Object::Node(n.clone())),
                Lend::Data(r) => Entry::new(r.data_type().code(), Some(Arc::clone(ctx)), Object::Data(r.clone())),
            };
            let entry = Arc::new(entry.with_ident(ident));
            let handle = entry.handle();
            insert(&mut t, entry, false);
            handle
        })
        .collect()
}

/// One internal count less on each non-NULL handle of `handles` (one lock); returns the entries
/// that went, for the caller to drop outside the lock.
pub(crate) fn release_lent(handles: &[vx_reference]) -> Vec<Arc<Entry>> {
    let mut t = table();
    let mut gone = Vec::new();
    for &h in handles.iter().filter(|h| !h.is_null()) {
        let key = h as usize;
        if let Some(slot) = t.slots.get_mut(&key)
            && slot.internal > 0
        {
            slot.internal -= 1;
            if slot.external == 0 && slot.internal == 0 && slot.entry.kind != VX_TYPE_ERROR {
                gone.push(remove(&mut t, key));
            }
        }
    }
    gone
}

/// The live entry behind `r`, if it is one of ours.
pub(crate) fn lookup(r: vx_reference) -> Option<Arc<Entry>> {
    if r.is_null() {
        return None;
    }
    table().slots.get(&(r as usize)).map(|s| Arc::clone(&s.entry))
}

/// The entry behind `r` if it is alive and of type `kind` (`VX_TYPE_REFERENCE`: any type).
pub(crate) fn get(r: vx_reference, kind: vx_enum) -> Result<Arc<Entry>, vx_status> {
    match lookup(r) {
        Some(e) if kind == VX_TYPE_REFERENCE || e.kind == kind => Ok(e),
        _ => Err(VX_ERROR_INVALID_REFERENCE),
    }
}

/// `vxRetainReference`: one more external count.
pub(crate) fn retain(r: vx_reference) -> vx_status {
    let mut t = table();
    match t.slots.get_mut(&(r as usize)) {
        Some(s) if !r.is_null() => {
            s.external = s.external.saturating_add(1);
            VX_SUCCESS
        }
        _ => VX_ERROR_INVALID_REFERENCE,
    }
}

/// One external (or internal) count less; the entry goes when both are zero. `kind` as in
/// [`get`]. Returns the entry if this was its last count (the caller drops it, outside the lock).
pub(crate) fn release(r: vx_reference, kind: vx_enum, external: bool) -> Result<Option<Arc<Entry>>, vx_status> {
    let mut t = table();
    let key = r as usize;
    let Some(slot) = t.slots.get_mut(&key).filter(|_| !r.is_null()) else {
        return Err(VX_ERROR_INVALID_REFERENCE);
    };
    if kind != VX_TYPE_REFERENCE && slot.entry.kind != kind {
        return Err(VX_ERROR_INVALID_REFERENCE);
    }
    if slot.entry.kind == VX_TYPE_ERROR {
        // Error objects live as long as their context: releasing one is allowed and does nothing.
        return Ok(None);
    }
    let count = if external { &mut slot.external } else { &mut slot.internal };
    if *count == 0 {
        return Err(VX_ERROR_INVALID_REFERENCE);
    }
    *count -= 1;
    if slot.external > 0 || slot.internal > 0 {
        return Ok(None);
    }
    Ok(Some(remove(&mut t, key)))
}

fn remove(t: &mut Table, key: usize) -> Arc<Entry> {
    let slot = t.slots.remove(&key).expect("the caller found it");
    let e = slot.entry;
    if let Some(c) = ctx_key(&e.ctx) {
        if let Some(id) = &e.ident
            && t.identity.get(&(c, id.clone())) == Some(&key)
        {
            t.identity.remove(&(c, id.clone()));
        }
        if counts_in_context(&e)
            && let Some(n) = t.live.get_mut(&c)
        {
            *n = n.saturating_sub(1);
        }
    }
    e
}

/// `VX_REFERENCE_COUNT` as the table knows it: external plus internal counts.
pub(crate) fn counts(r: vx_reference) -> Option<(u32, u32)> {
    table().slots.get(&(r as usize)).map(|s| (s.external, s.internal))
}

/// `VX_CONTEXT_REFERENCES`: the entries of `ctx` alive now.
pub(crate) fn live_in(ctx: &Arc<CContext>) -> usize {
    table().live.get(&(Arc::as_ptr(ctx) as usize)).copied().unwrap_or(0)
}

/// Remove every entry of `ctx` (the context is being released); the caller drops them, outside
/// the lock.
pub(crate) fn remove_context_entries(ctx: &Arc<CContext>) -> Vec<Arc<Entry>> {
    let mut t = table();
    let c = Arc::as_ptr(ctx) as usize;
    let keys: Vec<usize> = t.slots.iter().filter(|(_, s)| ctx_key(&s.entry.ctx) == Some(c)).map(|(k, _)| *k).collect();
    let gone = keys.into_iter().map(|k| remove(&mut t, k)).collect();
    t.live.remove(&c);
    gone
}

/// Put back an entry [`release`] removed, with one internal count (a context being torn down
/// stays reachable for the callbacks its objects' destruction runs).
pub(crate) fn reinstate(entry: Arc<Entry>) {
    let mut t = table();
    insert(&mut t, entry, false);
}

/// Forget the identity of the object behind `r` (a removed kernel: a new kernel of that
/// identity gets a new handle).
pub(crate) fn forget_identity(r: vx_reference) {
    let mut t = table();
    let key = r as usize;
    if let Some(slot) = t.slots.get(&key)
        && let (Some(c), Some(id)) = (ctx_key(&slot.entry.ctx), slot.entry.ident.clone())
        && t.identity.get(&(c, id.clone())) == Some(&key)
    {
        t.identity.remove(&(c, id));
    }
}

/// Remove the context's own entry.
pub(crate) fn remove_entry(r: vx_reference) -> Option<Arc<Entry>> {
    let mut t = table();
    t.slots.contains_key(&(r as usize)).then(|| remove(&mut t, r as usize))
}

/// The number of entries in the whole table (tests).
#[cfg(test)]
pub(crate) fn total() -> usize {
    table().slots.len()
}

#[cfg(test)]
mod tests {
    //! The table against a model of the specification's counting rules: random sequences of
    //! creates (with and without identity), retains, external and internal releases and lends,
    //! checking after every step each handle's counts, which handles are alive, that an identity
    //! keeps its handle while alive, and the context's live total.

    use std::collections::HashMap;

    use super::*;

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            // xorshift64*
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Model {
        external: u32,
        internal: u32,
        ident: Option<u64>,
    }

    fn data_entry(ctx: &Arc<CContext>) -> Entry {
        Entry::new(VX_TYPE_GRAPH, Some(Arc::clone(ctx)), Object::Error(VX_SUCCESS - 1000))
    }

    #[test]
    fn counts_follow_the_model() {
        let c = crate::context::vxCreateContext();
        let ctx = crate::context::context_of(c).expect("a context");
        let before_total = total();
        let mut ops = 0u64;
        for seed in 1..=1000u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
            let mut model: HashMap<usize, Model> = HashMap::new();
            let mut gone: Vec<usize> = Vec::new();
            let base_live = live_in(&ctx);
            for _ in 0..200 {
                ops += 1;
                let handles: Vec<usize> = model.keys().copied().collect();
                let pick = |rng: &mut Rng| handles[rng.below(handles.len() as u64) as usize];
                match rng.below(7) {
                    0 => {
                        let external = rng.below(2) == 0;
                        let h = register(data_entry(&ctx), external) as usize;
                        model.insert(h, Model { external: external as u32, internal: (!external) as u32, ident: None });
                    }
                    1 => {
                        // An identity from a small space, so the same one comes back often.
                        let id = seed * 1000 + rng.below(4);
                        let external = rng.below(2) == 0;
                        let h = handle_for(&ctx, Ident::Data(id), external, || data_entry(&ctx)) as usize;
                        let existing = model.iter().find(|(_, m)| m.ident == Some(id)).map(|(k, _)| *k);
                        match existing {
                            Some(k) => {
                                assert_eq!(k, h, "an identity keeps its handle while it lives");
                                let m = model.get_mut(&k).expect("present");
                                if external { m.external += 1 } else { m.internal += 1 }
                            }
                            None => {
                                model.insert(
                                    h,
                                    Model { external: external as u32, internal: (!external) as u32, ident: Some(id) },
                                );
                            }
                        }
                    }
                    2 if !handles.is_empty() => {
                        let h = pick(&mut rng);
                        assert_eq!(retain(h as vx_reference), VX_SUCCESS);
                        model.get_mut(&h).expect("present").external += 1;
                    }
                    3 | 4 if !handles.is_empty() => {
                        let h = pick(&mut rng);
                        let external = rng.below(3) != 0;
                        let m = model.get_mut(&h).expect("present");
                        let count = if external { m.external } else { m.internal };
                        let r = release(h as vx_reference, VX_TYPE_REFERENCE, external);
                        if count == 0 {
                            assert_eq!(r.err(), Some(VX_ERROR_INVALID_REFERENCE), "releasing a count that is zero");
                        } else {
                            if external {
                                m.external -= 1
                            } else {
                                m.internal -= 1
                            }
                            let last = m.external == 0 && m.internal == 0;
                            assert_eq!(r.expect("a live handle").is_some(), last);
                            if last {
                                model.remove(&h);
                                gone.push(h);
                            }
                        }
                    }
                    5 if !handles.is_empty() => {
                        // Wrong type: refused, nothing changes.
                        let h = pick(&mut rng);
                        assert_eq!(
                            release(h as vx_reference, VX_TYPE_IMAGE, true).err(),
                            Some(VX_ERROR_INVALID_REFERENCE)
                        );
                        assert!(get(h as vx_reference, VX_TYPE_IMAGE).is_err());
                        assert!(get(h as vx_reference, VX_TYPE_GRAPH).is_ok());
                    }
                    _ => {
                        assert!(get(std::ptr::null_mut(), VX_TYPE_REFERENCE).is_err());
                        assert_eq!(retain(std::ptr::null_mut()), VX_ERROR_INVALID_REFERENCE);
                    }
                }
                for (h, m) in &model {
                    assert_eq!(counts(*h as vx_reference), Some((m.external, m.internal)), "seed {seed}");
                }
                for h in &gone {
                    if !model.contains_key(h) {
                        assert!(lookup(*h as vx_reference).is_none(), "a released handle is not found");
                    }
                }
                assert_eq!(live_in(&ctx), base_live + model.len(), "seed {seed}");
            }
            // Drain what is left.
            for (h, m) in model {
                for _ in 0..m.external {
                    let _ = release(h as vx_reference, VX_TYPE_REFERENCE, true);
                }
                for _ in 0..m.internal {
                    let _ = release(h as vx_reference, VX_TYPE_REFERENCE, false);
                }
                assert!(lookup(h as vx_reference).is_none());
            }
        }
        assert!(ops >= 100_000);
        let mut c = c;
        // SAFETY: a handle variable holding the context made above.
        assert_eq!(unsafe { crate::context::vxReleaseContext(&mut c) }, VX_SUCCESS);
        assert!(total() <= before_total, "the context's entries are gone");
    }
}
