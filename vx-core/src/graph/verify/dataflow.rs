//! Pass `dataflow`: one writer per object (ROI overlap aware), edges from writer to reader (a
//! virtual input needs a writer; a node reading its own output is a cycle), and the schedule as
//! levels (Kahn): every node's producers are in earlier levels; nodes left over form a cycle, named.
//! Cost: O((parameters + edges) · log) — overlap queries go through `overlap.rs`'s index.

use crate::data::types::Direction;
use crate::error::{Error, ErrorKind, Result};
use crate::graph::GraphBody;
use crate::graph::verify::Verification;

pub(super) fn run(v: &mut Verification<'_>, body: &mut GraphBody) -> Result<()> {
    let node = |i: usize| body.nodes[i].as_ref().expect("live");

    // Writers: every output object has one writer. O(outputs · (depth + hits)) by the index.
    v.writers.clear();
    v.writer_index.clear();
    v.writer_index.reserve(v.live.len());
    for &n in &v.live {
        let s = node(n);
        for (p, r) in s.params.iter().enumerate() {
            if let (Direction::Output, Some(r)) = (s.spec(p).direction, r) {
                if let Some((_, &w)) = v.writer_index.first_overlapping(r) {
                    let (wn, wp, _) = &v.writers[w];
                    let other = node(*wn);
                    return Err(v.at(
                        s,
                        Error::new(ErrorKind::MultipleWriters, "two nodes write the same object")
                            .at_parameter(p as u32)
                            .on_object(&r.name())
                            .expected("one writer")
                            .found(format!("also written by node '{}' parameter {wp}", other.name)),
                    ));
                }
                v.writer_index.push(r.clone(), v.writers.len());
                v.writers.push((n, p, r.clone()));
            }
        }
    }

    // Edges writer → reader; virtual inputs need a writer. O(inputs · (depth + hits)).
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); body.nodes.len()];
    let mut hits = Vec::new();
    for &n in &v.live {
        let s = node(n);
        for (p, r) in s.params.iter().enumerate() {
            let (Direction::Input, Some(r)) = (s.spec(p).direction, r) else { continue };
            v.writer_index.overlapping_into(r, &mut hits);
            for &w in &hits {
                let wn = v.writers[w].0;
                if wn == n {
                    return Err(v.at(
                        s,
                        Error::new(ErrorKind::InvalidGraph, "the node reads its own output (a cycle)")
                            .at_parameter(p as u32)
                            .on_object(&r.name()),
                    ));
                }
                preds[n].push(wn);
            }
            if hits.is_empty() && r.is_virtual() {
                return Err(v.at(
                    s,
                    Error::new(
                        ErrorKind::InvalidGraph,
                        "the virtual object is read but no node of the graph writes it",
                    )
                    .at_parameter(p as u32)
                    .on_object(&r.name()),
                ));
            }
        }
        preds[n].sort_unstable();
        preds[n].dedup();
    }

    // Levels (Kahn, by in-degree: O(nodes + edges)): a node's level is one more than its
    // producers' highest; nodes never ready form a cycle.
    let mut successors: Vec<Vec<usize>> = vec![Vec::new(); body.nodes.len()];
    let mut waiting: Vec<usize> = vec![0; body.nodes.len()];
    for &n in &v.live {
        waiting[n] = preds[n].len();
        for &p in &preds[n] {
            successors[p].push(n);
        }
    }
    let mut level: Vec<Option<usize>> = vec![None; body.nodes.len()];
    let mut ready: Vec<usize> = v.live.iter().copied().filter(|&n| waiting[n] == 0).collect();
    let mut order = Vec::with_capacity(v.live.len());
    while let Some(n) = ready.pop() {
        level[n] = Some(preds[n].iter().map(|&p| level[p].expect("producers first") + 1).max().unwrap_or(0));
        order.push(n);
        for &m in &successors[n] {
            waiting[m] -= 1;
            if waiting[m] == 0 {
                ready.push(m);
            }
        }
    }
    if order.len() < v.live.len() {
        let stuck: Vec<String> =
            v.live.iter().filter(|&&n| level[n].is_none()).map(|&n| format!("'{}'", node(n).name)).collect();
        return Err(Error::new(ErrorKind::InvalidGraph, "the graph has a cycle")
            .in_graph(&v.gname)
            .found(format!("nodes {} depend on each other", stuck.join(", "))));
    }
    order.sort_unstable_by_key(|&n| (level[n], n));
    let depth = order.iter().map(|&n| level[n].expect("ordered")).max().unwrap_or(0) + 1;
    v.schedule = vec![Vec::new(); depth];
    for &n in &order {
        v.schedule[level[n].expect("ordered")].push(n);
    }
    v.producers = preds;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::graph::verify::testkit::{copy_kernel, image, run_until};
    use crate::{ErrorKind, Graph, Image, ImageFormat};

    #[test]
    fn a_chain_and_a_side_branch_get_levels() {
        let (ctx, k) = copy_kernel();
        let g = Graph::new(&ctx).unwrap();
        let (a, d) = (image(&ctx), image(&ctx));
        let b = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
        let c = image(&ctx);
        g.add_node(&k, [&b, &c]).unwrap(); // node 0 reads b, written by node 1
        g.add_node(&k, [&a, &b]).unwrap(); // node 1
        g.add_node(&k, [&a, &d]).unwrap(); // node 2, independent
        run_until(&g, "dataflow").unwrap();
        assert_eq!(g.inner.lock().unwrap().schedule, vec![vec![1, 2], vec![0]]);
    }

    #[test]
    fn two_writers_are_refused() {
        let (ctx, k) = copy_kernel();
        let g = Graph::new(&ctx).unwrap();
        let out = image(&ctx);
        g.add_node(&k, [&image(&ctx), &out]).unwrap();
        g.add_node(&k, [&image(&ctx), &out]).unwrap();
        assert_eq!(run_until(&g, "dataflow").unwrap_err().kind(), ErrorKind::MultipleWriters);
    }

    #[test]
    fn a_cycle_names_its_nodes() {
        let (ctx, k) = copy_kernel();
        let g = Graph::new(&ctx).unwrap();
        let (a, b) = (image(&ctx), image(&ctx));
        g.add_node(&k, [&a, &b]).unwrap();
        g.add_node(&k, [&b, &a]).unwrap();
        let e = run_until(&g, "dataflow").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidGraph);
        assert!(e.to_string().contains("copy#0") && e.to_string().contains("copy#1"), "{e}");
    }

    #[test]
    fn an_unwritten_virtual_input_is_refused() {
        let (ctx, k) = copy_kernel();
        let g = Graph::new(&ctx).unwrap();
        let v = Image::new_virtual(&g, 8, 8, ImageFormat::U8).unwrap();
        g.add_node(&k, [&v, &image(&ctx)]).unwrap();
        assert_eq!(run_until(&g, "dataflow").unwrap_err().kind(), ErrorKind::InvalidGraph);
    }
}
