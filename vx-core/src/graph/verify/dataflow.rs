//! Pass `dataflow`: one writer per object (ROI overlap aware), edges from writer to reader (a
//! virtual input needs a writer; a node reading its own output is a cycle), and the schedule as
//! levels (Kahn): every node's producers are in earlier levels; nodes left over form a cycle, named.

use crate::data::types::Direction;
use crate::error::{Error, ErrorKind, Result};
use crate::graph::GraphBody;
use crate::graph::verify::Verification;

pub(super) fn run(v: &mut Verification<'_>, body: &mut GraphBody) -> Result<()> {
    let node = |i: usize| body.nodes[i].as_ref().expect("live");

    // Writers: every output object has one writer.
    v.writers.clear();
    for &n in &v.live {
        let s = node(n);
        for (p, r) in s.params.iter().enumerate() {
            if let (Direction::Output, Some(r)) = (s.spec(p).direction, r) {
                if let Some((wn, wp, _)) = v.writers.iter().find(|(_, _, w)| w.overlaps(r)) {
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
                v.writers.push((n, p, r.clone()));
            }
        }
    }

    // Edges writer → reader; virtual inputs need a writer.
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); body.nodes.len()];
    for &n in &v.live {
        let s = node(n);
        for (p, r) in s.params.iter().enumerate() {
            let (Direction::Input, Some(r)) = (s.spec(p).direction, r) else { continue };
            let mut written = false;
            for (wn, _, w) in &v.writers {
                if w.overlaps(r) {
                    written = true;
                    if *wn == n {
                        return Err(v.at(
                            s,
                            Error::new(ErrorKind::InvalidGraph, "the node reads its own output (a cycle)")
                                .at_parameter(p as u32)
                                .on_object(&r.name()),
                        ));
                    }
                    if !preds[n].contains(wn) {
                        preds[n].push(*wn);
                    }
                }
            }
            if !written && r.is_virtual() {
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
    }

    // Levels (Kahn); leftovers form a cycle.
    let mut level: Vec<Option<usize>> = vec![None; body.nodes.len()];
    let mut order = Vec::with_capacity(v.live.len());
    loop {
        let ready: Vec<usize> = v
            .live
            .iter()
            .copied()
            .filter(|&n| level[n].is_none() && preds[n].iter().all(|&p| level[p].is_some()))
            .collect();
        if ready.is_empty() {
            break;
        }
        for &n in &ready {
            level[n] = Some(preds[n].iter().map(|&p| level[p].expect("ready") + 1).max().unwrap_or(0));
            order.push(n);
        }
    }
    if order.len() < v.live.len() {
        let stuck: Vec<String> =
            v.live.iter().filter(|&&n| level[n].is_none()).map(|&n| format!("'{}'", node(n).name)).collect();
        return Err(Error::new(ErrorKind::InvalidGraph, "the graph has a cycle")
            .in_graph(&v.gname)
            .found(format!("nodes {} depend on each other", stuck.join(", "))));
    }
    order.sort_by_key(|&n| (level[n], n));
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
