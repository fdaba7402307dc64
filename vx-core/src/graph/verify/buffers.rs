//! Pass `buffers`: every buffer the graph's nodes touch is allocated (virtual objects were completed
//! by `meta`; fused images live in their group's line buffers instead), so processing never allocates a data buffer.
//! Cost: O(parameters) (+ the allocations).

use crate::error::Result;
use crate::graph::GraphBody;
use crate::graph::verify::Verification;

pub(super) fn run(v: &mut Verification<'_>, body: &mut GraphBody) -> Result<()> {
    for n in v.order() {
        let s = body.nodes[n].as_ref().expect("scheduled nodes are live");
        for (p, r) in s.params.iter().enumerate() {
            if let Some(r) = r {
                if body.fusion.is_fused(r) {
                    continue; // it lives in its group's line buffers
                }
                r.ensure_allocated().map_err(|e| v.at(s, e.at_parameter(p as u32)))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::Graph;
    use crate::graph::verify::testkit::{copy_kernel, run_until, virtual_chain};

    #[test]
    fn every_buffer_is_allocated_and_nothing_before() {
        let (ctx, k) = copy_kernel();
        let g = Graph::new(&ctx).unwrap();
        virtual_chain(&ctx, &g, &k);
        run_until(&g, "nodes").unwrap();
        assert_eq!(ctx.buffer_bytes().current, 0, "nothing is allocated before the buffers pass");
        run_until(&g, "buffers").unwrap();
        // Three 8×8 U8 images, each row padded to the 64-byte stride.
        assert_eq!(ctx.buffer_bytes().current, 3 * 8 * 64);
    }
}
