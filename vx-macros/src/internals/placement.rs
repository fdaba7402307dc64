//! Where the annotated function sits in its source file. An attribute macro sees only the function,
//! so a kernel written inside an `impl` block or a trait would get the expansion's module-level
//! items rejected with rustc's "`const` items in this context need a name". Instead the macro reads
//! the function's file (the span's `local_file`, stable since Rust 1.88), parses it once per
//! compilation (cached by path, size and modification time) and finds every function of that name
//! carrying a kernel attribute: if none is a free function and one sits in an `impl` block or a
//! trait, that is where this one is.
//!
//! Best effort by design: no file (a macro-generated function, a tool that gives no path), a file
//! that does not parse, or a free function of the same name in the same file → no finding, and
//! rustc's own error stands.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use syn::visit::Visit;

use super::ctxt::Ctxt;
use super::source::{Stamp, has_kernel_attr, parse, stamp};

/// Where a function with a kernel attribute was found.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Place {
    Free,
    Impl,
    Trait,
}

/// Per function name: where functions of that name with a kernel attribute are.
type Found = HashMap<String, Vec<Place>>;

type Cache = HashMap<PathBuf, (Stamp, Arc<Found>)>;

static CACHE: Mutex<Option<Cache>> = Mutex::new(None);

/// Report a kernel function written inside an `impl` block or a trait, at its name.
pub(crate) fn check(cx: &Ctxt, f: &syn::ItemFn) {
    let ident = &f.sig.ident;
    let Some(found) = kernels_in_file_of(ident) else { return };
    let Some(places) = found.get(&ident.to_string()) else { return };
    if places.contains(&Place::Free) {
        return;
    }
    let inside = if places.contains(&Place::Impl) { "an `impl` block" } else { "a trait" };
    cx.error_spanned_by(
        ident,
        format!(
            "`{ident}` is inside {inside}: a kernel is a free function (the module registers it by its \
             name, the runtime calls it without an object) — move it out to the module"
        ),
    );
}

fn kernels_in_file_of(ident: &syn::Ident) -> Option<Arc<Found>> {
    if !proc_macro::is_available() {
        return None;
    }
    let path = ident.span().unwrap().local_file()?;
    let stamp = stamp(&path);
    let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    let cache = cache.get_or_insert_with(HashMap::new);
    if let Some((cached, found)) = cache.get(&path)
        && *cached == stamp
    {
        return Some(found.clone());
    }
    let file = parse(&path)?;
    let mut walk = Walk { place: Place::Free, found: HashMap::new() };
    walk.visit_file(&file);
    let found = Arc::new(walk.found);
    cache.insert(path, (stamp, found.clone()));
    Some(found)
}

struct Walk {
    /// Where a function met now sits.
    place: Place,
    found: Found,
}

impl Walk {
    fn record(&mut self, attrs: &[syn::Attribute], ident: &syn::Ident) {
        if has_kernel_attr(attrs) {
            self.found.entry(ident.to_string()).or_default().push(self.place);
        }
    }

    /// Visit with `place` for what is met inside, then restore.
    fn within(&mut self, place: Place, visit: impl FnOnce(&mut Self)) {
        let outer = std::mem::replace(&mut self.place, place);
        visit(self);
        self.place = outer;
    }
}

impl<'ast> Visit<'ast> for Walk {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.record(&f.attrs, &f.sig.ident);
        // Items in a function's body are free again.
        self.within(Place::Free, |w| syn::visit::visit_item_fn(w, f));
    }
    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        self.within(Place::Impl, |w| syn::visit::visit_item_impl(w, i));
    }
    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.record(&f.attrs, &f.sig.ident);
        self.within(Place::Free, |w| syn::visit::visit_impl_item_fn(w, f));
    }
    fn visit_item_trait(&mut self, t: &'ast syn::ItemTrait) {
        self.within(Place::Trait, |w| syn::visit::visit_item_trait(w, t));
    }
    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        self.record(&f.attrs, &f.sig.ident);
        self.within(Place::Free, |w| syn::visit::visit_trait_item_fn(w, f));
    }
}
