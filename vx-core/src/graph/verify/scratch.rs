//! Pass `scratch arenas`: one scratch arena per executor of the graph (the calling thread and each
//! crew helper), each as large as the largest scratch request of any node — sized once here, so
//! process never allocates (TIOVX's `TIVX_MEM_EXTERNAL_SCRATCH`, one heap per target). Every node
//! lays its requests out from offset 0 (`kernel/memory.rs`), which is TIOVX's
//! `tivxMemResetScratchHeap` before each node.
//! Cost: O(nodes + executors).

use std::sync::Mutex;

use crate::data::buffer::RawBuf;
use crate::error::Result;
use crate::graph::verify::Verification;
use crate::graph::{Graph, GraphBody};
use crate::shared::ResourceKind;
use crate::support::sync::{get_mut, lock};

/// One node's kernel memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeMemoryUse {
    /// The node.
    pub node: String,
    /// Bytes of persistent blocks it holds.
    pub persistent_bytes: usize,
    /// Bytes of scratch it requested (laid out from offset 0 of its executor's arena).
    pub scratch_bytes: usize,
}

/// A graph's kernel memory ([`Graph::kernel_memory`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelMemoryUse {
    /// Per node, in node creation order.
    pub nodes: Vec<NodeMemoryUse>,
    /// Bytes of each executor's scratch arena (the largest request of any node).
    pub scratch_arena_bytes: usize,
    /// Scratch arenas: one per executor (0 when no node asked for scratch).
    pub scratch_arenas: usize,
}

impl Graph {
    /// Kernel memory per node (persistent bytes held, scratch requested) and the scratch arenas.
    pub fn kernel_memory(&self) -> crate::error::Result<KernelMemoryUse> {
        let body = self.inner.lock()?;
        let nodes = body
            .nodes
            .iter()
            .flatten()
            .map(|n| {
                let run = n.run();
                NodeMemoryUse {
                    node: n.name.clone(),
                    persistent_bytes: run.memory.persistent_bytes(),
                    scratch_bytes: run.memory.scratch_bytes,
                }
            })
            .collect();
        Ok(KernelMemoryUse {
            nodes,
            scratch_arena_bytes: body.scratch.first().map_or(0, |a| lock(a).len()),
            scratch_arenas: body.scratch.len(),
        })
    }
}

pub(super) fn run(v: &mut Verification<'_>, body: &mut GraphBody) -> Result<()> {
    let need = body.nodes.iter_mut().flatten().map(|s| lock(&s.run).memory.scratch_bytes).max().unwrap_or(0);
    let have = body.scratch.first_mut().map_or(0, |a| get_mut(a).len());
    if need == have && (need == 0 || !body.scratch.is_empty()) {
        return Ok(());
    }
    body.scratch.clear();
    if need > 0 {
        let shared = &v.graph.ctx.inner.shared;
        for _ in 0..shared.threads {
            body.scratch.push(Mutex::new(RawBuf::counted(need, &shared.resources, ResourceKind::ScratchBytes)?));
        }
    }
    tracing::debug!(graph = %v.gname, bytes = need, executors = body.scratch.len(), "scratch arenas sized");
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::graph::verify::testkit::{image, run_until, u8_kernel};
    use crate::{Context, Graph, MemRegion, ResourceKind};

    #[test]
    fn each_executor_gets_an_arena_as_large_as_the_largest_node_request() {
        let ctx = Context::builder().threads(2).build().unwrap();
        let k = |name: &str, bytes: [usize; 2]| {
            u8_kernel(&ctx, name, move |b| {
                b.validate(|v, m| crate::graph::verify::testkit::same_size_u8(v, m).map(|_| ())).init(move |lc| {
                    for n in bytes {
                        lc.alloc::<u8>(MemRegion::Scratch, n)?;
                    }
                    Ok(())
                })
            })
        };
        // 100 + 28 padding + 50 = 178 bytes; 1000 + 24 + 1 = 1025 bytes: the second decides.
        let (small, large) = (k("test.small", [100, 50]), k("test.large", [1000, 1]));
        let g = Graph::new(&ctx).unwrap();
        let v = crate::Image::new_virtual(&g, 0, 0, crate::ImageFormat::Virtual).unwrap();
        g.add_node(&small, [&image(&ctx), &v]).unwrap();
        g.add_node(&large, [&v, &image(&ctx)]).unwrap();
        run_until(&g, "nodes").unwrap();
        assert_eq!(ctx.usage(ResourceKind::ScratchBytes).current, 0, "nothing before the pass");
        run_until(&g, "scratch arenas").unwrap();
        assert_eq!(ctx.usage(ResourceKind::ScratchBytes).current, 2 * 1025, "two executors, 1025 bytes each");
        drop(g);
        assert_eq!(ctx.usage(ResourceKind::ScratchBytes).current, 0, "freed with the graph");
    }
}
