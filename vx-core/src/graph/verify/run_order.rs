//! What the graph's executor guarantees about the order of its nodes within one frame: the relation
//! the memory plan may rely on when it lets two buffers share bytes (*a plan serves an
//! executor*).
//!
//! - **Sequential** graphs (`process`, `schedule`; `graph/execute.rs`) run level by level, and a
//!   level waits for all of its nodes (host and target) before the next starts: node *a* finishes
//!   before node *b* starts iff `level(a) < level(b)`.
//! - **Pipelined** graphs (`graph/pipeline/coordinator.rs`) submit a node as soon as its producers
//!   in the frame are done, whatever their level: *a* finishes before *b* starts iff there is a
//!   dataflow path from *a* to *b*. (A node's own frame order and a target's FIFO add order across
//!   frames, but frames in flight never share a buffer: each frame slot has its own arena.)
//!
//! Two sets of nodes are *ordered* when every node of one finishes before any node of the other
//! starts. Dataflow paths imply increasing levels, so a plan made for the pipelined order is also
//! sound for the sequential one, never the other way round.
//! Cost: levels O(nodes); dataflow reachability O(edges × writer targets / 64) time and nodes ×
//! writer targets bits (pipelined graphs only: a chain of N virtual buffers is N² bits, 32 MB at
//! N = 16,000 — the one quadratic table left).

/// The order the graph's executor enforces between the nodes of one frame.
pub(super) enum RunOrder {
    /// Per node index, its level (sequential execution).
    Levels(Vec<usize>),
    /// Strict reachability along dataflow edges, as bit sets (pipelined execution).
    Dataflow(Reach),
}

/// Strict dataflow reachability from every node to a chosen set of *targets*.
pub(super) struct Reach {
    /// Per node index, its row of `bits` (`usize::MAX`: the node is not in the graph).
    row: Vec<usize>,
    /// Per node index, its bit (`usize::MAX`: not a target).
    target_bit: Vec<usize>,
    words: usize,
    bits: Vec<u64>,
}

impl RunOrder {
    /// The sequential executor's order of the nodes in `schedule` (node indices by level).
    pub(super) fn levels(schedule: &[Vec<usize>], n_nodes: usize) -> Self {
        let mut level = vec![usize::MAX; n_nodes];
        for (l, nodes) in schedule.iter().enumerate() {
            for &n in nodes {
                level[n] = l;
            }
        }
        RunOrder::Levels(level)
    }

    /// The pipeline's order: dataflow paths between the nodes in `schedule`, whose producers
    /// are `producers[n]`. Only paths that end at a node of `targets` can be asked for
    /// ([`before`](Self::before) needs them only for the nodes it is given as `later`), which keeps
    /// the table at nodes × targets bits.
    pub(super) fn dataflow(schedule: &[Vec<usize>], producers: &[Vec<usize>], targets: &[usize]) -> Self {
        let n_nodes = producers.len();
        let mut target_bit = vec![usize::MAX; n_nodes];
        let mut n_targets = 0;
        for &t in targets {
            if target_bit[t] == usize::MAX {
                target_bit[t] = n_targets;
                n_targets += 1;
            }
        }
        let words = n_targets.div_ceil(64);
        let order: Vec<usize> = schedule.iter().flatten().copied().collect();
        let mut row = vec![usize::MAX; n_nodes];
        for (i, &n) in order.iter().enumerate() {
            row[n] = i;
        }
        let mut bits = vec![0u64; order.len() * words];
        // Producers come in earlier levels: walking the schedule backwards, a node's consumers are
        // complete when it is reached, so each node ORs itself (if a target) and its reach into
        // every producer's row.
        for &n in order.iter().rev() {
            let r = row[n];
            for &p in &producers[n] {
                let pr = row[p];
                debug_assert!(pr < r, "a producer is scheduled before its consumer");
                let (head, tail) = bits.split_at_mut(r * words);
                let (prow, nrow) = (&mut head[pr * words..(pr + 1) * words], &tail[..words]);
                for (d, s) in prow.iter_mut().zip(nrow) {
                    *d |= *s;
                }
                if target_bit[n] != usize::MAX {
                    prow[target_bit[n] / 64] |= 1 << (target_bit[n] % 64);
                }
            }
        }
        RunOrder::Dataflow(Reach { row, target_bit, words, bits })
    }

    /// Does every node of `earlier` finish before any node of `later` starts? For the dataflow
    /// order, `later` must be a set whose every node is reachable from one of `later_heads` ⊆
    /// `later` (the nodes writing a buffer: every reader of a buffer is reached from its writer),
    /// and `later_heads` must be targets of the table.
    pub(super) fn before(&self, earlier: &[usize], later: &[usize], later_heads: &[usize]) -> bool {
        match self {
            RunOrder::Levels(level) => {
                let last = earlier.iter().map(|&n| level[n]).max();
                let first = later.iter().map(|&n| level[n]).min();
                matches!((last, first), (Some(a), Some(b)) if a < b)
            }
            RunOrder::Dataflow(reach) => {
                !later_heads.is_empty() && earlier.iter().all(|&a| later_heads.iter().all(|&b| reach.reaches(a, b)))
            }
        }
    }
}

impl Reach {
    /// Is there a dataflow path of at least one edge from `a` to `b` (a target)?
    fn reaches(&self, a: usize, b: usize) -> bool {
        let (r, bit) = (self.row[a], self.target_bit[b]);
        assert!(r != usize::MAX && bit != usize::MAX, "asked for a node outside the table");
        self.bits[r * self.words + bit / 64] & (1 << (bit % 64)) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::RunOrder;

    /// 0 → 1 → 3, 0 → 2 (levels: 0 | 1 2 | 3).
    fn diamond() -> (Vec<Vec<usize>>, Vec<Vec<usize>>) {
        (vec![vec![0], vec![1, 2], vec![3]], vec![vec![], vec![0], vec![0], vec![1]])
    }

    #[test]
    fn levels_order_every_node_of_an_earlier_level_before_a_later_one() {
        let (schedule, _) = diamond();
        let o = RunOrder::levels(&schedule, 4);
        assert!(o.before(&[0], &[1, 2, 3], &[]));
        assert!(o.before(&[2], &[3], &[]), "level 1 before level 2, though 2 does not feed 3");
        assert!(!o.before(&[1], &[2], &[]), "one level");
        assert!(!o.before(&[3], &[0], &[]));
    }

    #[test]
    fn dataflow_orders_only_along_paths() {
        let (schedule, producers) = diamond();
        let o = RunOrder::dataflow(&schedule, &producers, &[1, 2, 3]);
        assert!(o.before(&[0], &[1], &[1]));
        assert!(o.before(&[0], &[3], &[3]), "through node 1");
        assert!(o.before(&[0, 1], &[3], &[3]));
        assert!(!o.before(&[2], &[3], &[3]), "2 and 3 may run at once in a pipeline");
        assert!(!o.before(&[1], &[1], &[1]), "a node is not before itself");
        assert!(!o.before(&[3], &[1], &[1]));
    }

    #[test]
    fn dataflow_reach_is_the_transitive_closure_on_random_dags() {
        // A tiny independent reference: reachability by depth-first search.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..300 {
            let n = 1 + (next() % 90) as usize;
            let producers: Vec<Vec<usize>> = (0..n).map(|i| (0..i).filter(|_| next() % 5 == 0).collect()).collect();
            let mut level = vec![0; n];
            for i in 0..n {
                level[i] = producers[i].iter().map(|&p| level[p] + 1).max().unwrap_or(0);
            }
            let depth = level.iter().max().unwrap() + 1;
            let mut schedule = vec![Vec::new(); depth];
            for i in 0..n {
                schedule[level[i]].push(i);
            }
            let targets: Vec<usize> = (0..n).filter(|_| next() % 2 == 0).collect();
            let o = RunOrder::dataflow(&schedule, &producers, &targets);
            let reaches = |a: usize, b: usize| {
                let mut stack = vec![b];
                let mut seen = vec![false; n];
                while let Some(x) = stack.pop() {
                    for &p in &producers[x] {
                        if p == a {
                            return true;
                        }
                        if !seen[p] {
                            seen[p] = true;
                            stack.push(p);
                        }
                    }
                }
                false
            };
            for a in 0..n {
                for &b in &targets {
                    assert_eq!(o.before(&[a], &[b], &[b]), reaches(a, b), "{a} → {b} in {producers:?}");
                }
            }
        }
    }
}
