//! "Which of these references overlaps that one?" by index, not by scan.
//!
//! [`Reference::overlaps`] is true when the two are one object, one is a part of the other (a
//! pyramid level, an object-array item, an ROI: the part's header lists its containers), or both
//! are images (tensors) over one storage whose rectangles (boxes) intersect. An [`OverlapIndex`]
//! keeps its references under the keys that can make that true — the object's own id, each of its
//! containers' ids, its storage — so a query looks at those lists only and confirms each
//! candidate with `overlaps` itself: the answers are exactly a scan's, in insertion order.
//!
//! Cost: building is O(n · depth) (depth = containers per object, at most a few); a query is
//! O(depth + candidates), and the candidates are the hits plus the other references of the same
//! storage (most storages hold one or two references; an image with k ROIs in one graph costs k).

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::data::reference::Reference;
use crate::support::hash::FastHasher;

/// Ids and storage addresses are already well spread: the fast hasher mixes them.
type IdMap<V> = HashMap<u64, V, BuildHasherDefault<FastHasher>>;

/// No link.
const END: u32 = u32::MAX;

/// Entry positions by key, each key's in insertion order, with no allocation per key: a key maps
/// to its list's first and last link, `links[l]` is (entry position, next link).
#[derive(Default)]
struct Lists {
    ends: IdMap<(u32, u32)>,
    links: Vec<(u32, u32)>,
}

impl Lists {
    fn push(&mut self, key: u64, entry: u32) {
        let l = u32::try_from(self.links.len()).expect("fewer than 2^32 keys in one graph");
        self.links.push((entry, END));
        match self.ends.entry(key) {
            std::collections::hash_map::Entry::Occupied(mut o) => {
                let (_, last) = o.get_mut();
                self.links[*last as usize].1 = l;
                *last = l;
            }
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert((l, l));
            }
        }
    }

    /// The positions listed under `key`, ascending.
    fn get(&self, key: u64) -> impl Iterator<Item = usize> + '_ {
        let mut l = self.ends.get(&key).map_or(END, |&(first, _)| first);
        std::iter::from_fn(move || {
            let (entry, next) = *self.links.get(l as usize)?;
            l = next;
            Some(entry as usize)
        })
    }

    fn reserve(&mut self, n: usize) {
        self.ends.reserve(n);
        self.links.reserve(n);
    }

    fn clear(&mut self) {
        self.ends.clear();
        self.links.clear();
    }
}

/// References, each with a value of the caller's (`T`), found by overlap.
pub(super) struct OverlapIndex<T> {
    entries: Vec<(Reference, T)>,
    /// Entries by their own id and by the id of each of their containers.
    lineage: Lists,
    /// Entries by their own id.
    own: Lists,
    /// Images and tensors by storage (its address).
    storage: Lists,
}

impl<T> Default for OverlapIndex<T> {
    fn default() -> Self {
        OverlapIndex {
            entries: Vec::new(),
            lineage: Lists::default(),
            own: Lists::default(),
            storage: Lists::default(),
        }
    }
}

impl<T> OverlapIndex<T> {
    /// Room for `n` more references without reallocating (most have one container at most).
    pub(super) fn reserve(&mut self, n: usize) {
        self.entries.reserve(n);
        self.lineage.reserve(n);
        self.own.reserve(n);
        self.storage.reserve(n);
    }

    /// Add `r` with `value`; its position is the count before.
    pub(super) fn push(&mut self, r: Reference, value: T) {
        let at = u32::try_from(self.entries.len()).expect("fewer than 2^32 references in one graph");
        let keys = r.overlap_keys();
        self.own.push(keys.id, at);
        self.lineage.push(keys.id, at);
        for &a in keys.containers {
            self.lineage.push(a, at);
        }
        if let Some(s) = keys.storage {
            self.storage.push(s as u64, at);
        }
        self.entries.push((r, value));
    }

    /// Every candidate position for `q`, list by list (each ascending; a position may repeat).
    fn candidates<'a>(&'a self, q: &'a Reference) -> impl Iterator<Item = impl Iterator<Item = usize> + 'a> + 'a {
        let keys = q.overlap_keys();
        // Entries that are `q` or parts of it; entries that contain `q`; images (tensors) over
        // the same storage.
        std::iter::once(self.lineage.get(keys.id))
            .chain(keys.containers.iter().map(|&a| self.own.get(a)))
            .chain(keys.storage.map(|s| self.storage.get(s as u64)))
    }

    /// The positions of the entries that overlap `q`, ascending.
    pub(super) fn overlapping(&self, q: &Reference) -> Vec<usize> {
        let mut found = Vec::new();
        self.overlapping_into(q, &mut found);
        found
    }

    /// [`overlapping`](Self::overlapping) into `found` (cleared first; its room reused).
    pub(super) fn overlapping_into(&self, q: &Reference, found: &mut Vec<usize>) {
        found.clear();
        for list in self.candidates(q) {
            found.extend(list.filter(|&i| self.entries[i].0.overlaps(q)));
        }
        found.sort_unstable();
        found.dedup();
    }

    /// The first entry (in insertion order) that overlaps `q` (no allocation: each list is
    /// ascending, so its first hit is its least).
    pub(super) fn first_overlapping(&self, q: &Reference) -> Option<(&Reference, &T)> {
        self.candidates(q)
            .filter_map(|mut list| list.find(|&i| self.entries[i].0.overlaps(q)))
            .min()
            .map(|i| (&self.entries[i].0, &self.entries[i].1))
    }

    /// Some entry overlapping `q` whose value passes `accept`, visiting candidates lazily: it stops at
    /// the first (by list, not by position), so a query among many overlapping entries (a virtual
    /// image read by thousands of nodes) costs what it visits, not every hit.
    pub(super) fn find_overlapping(&self, q: &Reference, mut accept: impl FnMut(&T) -> bool) -> Option<&T> {
        self.candidates(q)
            .flatten()
            .map(|i| &self.entries[i])
            .find(|(r, value)| r.overlaps(q) && accept(value))
            .map(|(_, value)| value)
    }

    /// Does any entry overlap `q`?
    pub(super) fn any_overlapping(&self, q: &Reference) -> bool {
        self.candidates(q).any(|mut list| list.any(|i| self.entries[i].0.overlaps(q)))
    }

    /// True when nothing was added.
    pub(super) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub(super) fn clear(&mut self) {
        self.entries.clear();
        self.lineage.clear();
        self.own.clear();
        self.storage.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::OverlapIndex;
    use crate::{Context, Graph, Image, ImageFormat, ObjectArray, Pyramid, Rect, Reference, ScalarType, Tensor};

    /// SplitMix64: a tiny deterministic generator.
    struct SplitMix(u64);

    impl SplitMix {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) % n as u64) as usize
        }
    }

    /// A pool of references with every way to overlap: one object twice, ROIs (nested, disjoint,
    /// touching), pyramids and their levels, object arrays and their items, tensors and views,
    /// virtual images, unrelated objects. The index must answer exactly as a scan with `overlaps`.
    #[test]
    fn answers_exactly_as_a_scan_over_random_pools() {
        let ctx = Context::new().unwrap();
        let g = Graph::new(&ctx).unwrap();
        let mut rng = SplitMix(35);
        // `VX_OVERLAP_ROUNDS=5000` for a long run (about 150,000 queries).
        let rounds = std::env::var("VX_OVERLAP_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(60);
        let mut queries = 0;
        for round in 0..rounds {
            let mut pool: Vec<Reference> = Vec::new();
            for _ in 0..(4 + rng.below(10)) {
                match rng.below(6) {
                    0 => {
                        let img = Image::new(&ctx, 32, 16, ImageFormat::U8).unwrap();
                        for _ in 0..rng.below(4) {
                            let (x, y) = (rng.below(24) as u32, rng.below(12) as u32);
                            let r = Rect::new(x, y, x + 1 + rng.below(8) as u32, y + 1 + rng.below(4) as u32);
                            let roi = img.roi(r).unwrap();
                            if rng.below(2) == 0 {
                                pool.push(Reference::from(&roi.roi(Rect::new(0, 0, 1, 1)).unwrap()));
                            }
                            pool.push(Reference::from(&roi));
                        }
                        pool.push(Reference::from(&img));
                    }
                    1 => {
                        let p = Pyramid::new(&ctx, 3, 0.5, 16, 16, ImageFormat::U8).unwrap();
                        pool.push(Reference::from(&p.level(rng.below(3)).unwrap()));
                        if rng.below(2) == 0 {
                            pool.push(Reference::from(&p));
                        }
                    }
                    2 => {
                        let exemplar = Image::new(&ctx, 4, 4, ImageFormat::U8).unwrap();
                        let a = ObjectArray::new(&ctx, Reference::from(&exemplar), 3).unwrap();
                        pool.push(a.item(rng.below(3)).unwrap());
                        if rng.below(2) == 0 {
                            pool.push(Reference::from(&a));
                        }
                    }
                    3 => {
                        let t = Tensor::new(&ctx, &[8, 8], ScalarType::Uint8, 0).unwrap();
                        let s = rng.below(7);
                        let e = s + 1 + rng.below(8 - s);
                        pool.push(Reference::from(&t.view(&[s, 0], &[e, 8]).unwrap()));
                        pool.push(Reference::from(&t.view(&[0, s], &[8, e]).unwrap()));
                        pool.push(Reference::from(&t));
                    }
                    4 => pool.push(Reference::from(&Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap())),
                    _ => {
                        if let Some(r) = pool.last().cloned() {
                            pool.push(r); // the same object again
                        }
                    }
                }
            }
            let mut index = OverlapIndex::default();
            for (i, r) in pool.iter().enumerate() {
                index.push(r.clone(), i);
            }
            for q in &pool {
                let scan: Vec<usize> = (0..pool.len()).filter(|&i| pool[i].overlaps(q)).collect();
                assert_eq!(index.overlapping(q), scan, "round {round}, query {}", q.name());
                assert_eq!(index.any_overlapping(q), !scan.is_empty(), "round {round}, any, query {}", q.name());
                // A lazy find under a filter: some accepted hit iff the scan has one, and a hit.
                let pick = rng.below(3);
                let found = index.find_overlapping(q, |&i| i % 3 == pick).copied();
                let wanted = scan.iter().any(|&i| i % 3 == pick);
                assert_eq!(found.is_some(), wanted, "round {round}, find, query {}", q.name());
                assert!(found.is_none_or(|i| scan.contains(&i) && i % 3 == pick), "round {round}, found {found:?}");
                queries += 1;
            }
        }
        println!("{rounds} pools, {queries} queries: the index answered as the scan");
    }
}
