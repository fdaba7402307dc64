//! Delays (`vx_delay`): a ring of objects of one type and meta data, indexed `0` (the current
//! one), `-1`, …, `-(slots - 1)` (older ones). [`Delay::age`] (`vxAgeDelay`) moves each object one
//! index older and the oldest to index 0, and every node parameter bound to an index
//! ([`Delay::bind`], or `vxSetParameterByIndex` with `vxGetReferenceFromDelay`'s object in the C
//! API) follows its index: it now holds the object at that index. A graph ages the delays
//! registered with it after each successful process ([`Graph::register_auto_aging`]).
//!
//! Concurrency: a delay's slots and bindings are behind one mutex; aging takes it, rotates, then
//! rebinds each bound node outside it (rebinding takes the node's graph lock; a graph never
//! holds its lock while it ages, see `execute.rs`).

use std::sync::{Arc, Mutex};

use crate::data::reference::Reference;
use crate::data::types::DataType;
use crate::error::{Error, ErrorKind, Result};
use crate::graph::Graph;
use crate::graph::node::Node;
use crate::support::sync::lock;

/// `vx_delay`. Clones share the delay.
#[derive(Clone)]
pub struct Delay {
    inner: Arc<Mutex<DelayState>>,
}

struct DelayState {
    /// Position `p` holds index `-p`.
    slots: Vec<Reference>,
    bindings: Vec<Binding>,
}

struct Binding {
    node: Node,
    param: u32,
    /// The delay index's position (`-index`).
    position: usize,
}

impl std::fmt::Debug for Delay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = lock(&self.inner);
        write!(f, "Delay({} x {})", s.slots.len(), s.slots[0].data_type())
    }
}

/// The most slots a delay may have.
pub const MAX_DELAY_SLOTS: usize = 1024;

impl Delay {
    /// `vxCreateDelay`: `slots` new objects like `exemplar` (same type and meta data, not
    /// virtual). Refused for 0 slots, more than [`MAX_DELAY_SLOTS`], or a delay exemplar.
    pub fn new(exemplar: &Reference, slots: usize) -> Result<Delay> {
        if slots == 0 || slots > MAX_DELAY_SLOTS {
            return Err(Error::new(ErrorKind::InvalidParameters, "a delay has 1 or more slots")
                .on_object(&exemplar.name())
                .expected_found(format!("1..={MAX_DELAY_SLOTS}"), slots));
        }
        let mut objects = Vec::new();
        objects
            .try_reserve_exact(slots)
            .map_err(|_| Error::new(ErrorKind::NoMemory, "no memory for the delay's slots"))?;
        for _ in 0..slots {
            objects.push(exemplar.new_like()?);
        }
        Ok(Delay { inner: Arc::new(Mutex::new(DelayState { slots: objects, bindings: Vec::new() })) })
    }

    /// `VX_DELAY_SLOTS`.
    pub fn slots(&self) -> usize {
        lock(&self.inner).slots.len()
    }

    /// `VX_DELAY_TYPE`: the type of its objects.
    pub fn data_type(&self) -> DataType {
        lock(&self.inner).slots[0].data_type()
    }

    fn position(slots: usize, index: i32) -> Result<usize> {
        let p = index.checked_neg().and_then(|p| usize::try_from(p).ok()).filter(|&p| p < slots);
        p.ok_or_else(|| {
            Error::new(ErrorKind::InvalidParameters, "no such delay index")
                .expected_found(format!("0 down to -{}", slots - 1), index)
        })
    }

    /// `vxGetReferenceFromDelay`: the object at `index` (0, -1, …).
    pub fn get(&self, index: i32) -> Result<Reference> {
        let s = lock(&self.inner);
        Ok(s.slots[Self::position(s.slots.len(), index)?].clone())
    }

    /// The index `r` is at now, if it is one of the delay's objects.
    pub fn index_of(&self, r: &Reference) -> Option<i32> {
        lock(&self.inner).slots.iter().position(|x| x.same_object(r)).map(|p| -(p as i32))
    }

    /// Set parameter `param` of `node` to the object at `index`, and keep it bound to that index
    /// (aging rebinds it). A node parameter is bound to at most one delay index: binding it again
    /// replaces the binding.
    pub fn bind(&self, node: &Node, param: u32, index: i32) -> Result<()> {
        let r = {
            let s = lock(&self.inner);
            s.slots[Self::position(s.slots.len(), index)?].clone()
        };
        node.set_parameter(param, r)?;
        let mut s = lock(&self.inner);
        let position = Self::position(s.slots.len(), index)?;
        let key = node.key();
        s.bindings.retain(|b| !(b.node.key() == key && b.param == param));
        s.bindings.push(Binding { node: node.clone(), param, position });
        Ok(())
    }

    /// Forget the binding of `node`'s parameter `param`, if any (the parameter was set to
    /// something else).
    pub fn unbind(&self, node: &Node, param: u32) {
        let key = node.key();
        lock(&self.inner).bindings.retain(|b| !(b.node.key() == key && b.param == param));
    }

    /// `vxAgeDelay`: each object moves one index older, the oldest becomes index 0, and every
    /// bound node parameter gets the object now at its index. Bindings of nodes whose graph is
    /// gone are dropped.
    pub fn age(&self) -> Result<()> {
        let rebinds: Vec<(Node, u32, Reference)> = {
            let mut s = lock(&self.inner);
            s.slots.rotate_right(1);
            let DelayState { slots, bindings } = &mut *s;
            bindings.retain(|b| b.node.graph().is_some());
            bindings.iter().map(|b| (b.node.clone(), b.param, slots[b.position].clone())).collect()
        };
        for (node, param, r) in rebinds {
            node.set_parameter(param, r)?;
        }
        Ok(())
    }

    /// True when both are the same delay.
    pub fn same_delay(&self, other: &Delay) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Graph {
    /// `vxRegisterAutoAging`: age `delay` after each successful process of this graph
    /// (registering a delay twice ages it once).
    pub fn register_auto_aging(&self, delay: &Delay) -> Result<()> {
        let mut d = lock(&self.inner.auto_aging);
        if !d.iter().any(|x| x.same_delay(delay)) {
            d.push(delay.clone());
        }
        Ok(())
    }

    /// Age the delays registered with [`register_auto_aging`](Self::register_auto_aging).
    pub(super) fn age_delays(&self) -> Result<()> {
        let delays = lock(&self.inner.auto_aging).clone();
        delays.iter().try_for_each(Delay::age).map_err(|e| e.in_graph(&self.name()))
    }
}

#[cfg(test)]
mod tests {
    //! Delays against a model ring (random sequences of ages and reads), and auto-aging through
    //! a graph: a node reading index -1 and writing index 0 accumulates over frames.

    use super::*;
    use crate::data::scalar::Scalar;
    use crate::data::types::{ParamState, ScalarType, ScalarValue};
    use crate::kernel::signature::ParamDirection;
    use crate::{Context, Kernel};

    fn ctx() -> Context {
        Context::builder().threads(1).build().expect("context")
    }

    #[test]
    fn indexes_follow_a_ring_model() {
        let ctx = ctx();
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut cases = 0;
        for slots in 1..=6usize {
            let ex: Reference = Scalar::new(&ctx, ScalarValue::Int32(0)).expect("scalar").into();
            let d = Delay::new(&ex, slots).expect("delay");
            // The model: the object ids at positions 0.. (index 0, -1, ...).
            let mut model: Vec<u64> = (0..slots).map(|p| d.get(-(p as i32)).expect("slot").id()).collect();
            assert!(model.iter().all(|&id| id != ex.id()), "the slots are new objects");
            for _ in 0..20_000 {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                cases += 1;
                if rng.is_multiple_of(3) {
                    d.age().expect("age");
                    model.rotate_right(1);
                } else {
                    let index = -(((rng >> 8) % (slots as u64 + 1)) as i32);
                    match d.get(index) {
                        Ok(r) => {
                            assert_eq!(r.id(), model[(-index) as usize]);
                            assert_eq!(d.index_of(&r), Some(index));
                        }
                        Err(e) => {
                            assert_eq!(-index as usize, slots, "only an index past the oldest is refused");
                            assert_eq!(e.kind(), ErrorKind::InvalidParameters);
                        }
                    }
                }
            }
        }
        assert!(cases >= 100_000);
        assert_eq!(d_refused(&ctx, 0), ErrorKind::InvalidParameters);
        assert_eq!(d_refused(&ctx, MAX_DELAY_SLOTS + 1), ErrorKind::InvalidParameters);
    }

    fn d_refused(ctx: &Context, slots: usize) -> ErrorKind {
        let ex: Reference = Scalar::new(ctx, ScalarValue::Int32(0)).expect("scalar").into();
        Delay::new(&ex, slots).expect_err("refused").kind()
    }

    /// `out = in + 1` on Int32 scalars.
    fn increment(ctx: &Context) -> Kernel {
        let k = ctx
            .user_kernel("test.delay.increment", ctx.allocate_user_kernel_id().expect("id"), 2)
            .process(|pc| {
                let v: i32 = pc.scalar(0)?.get()?;
                pc.scalar(1)?.set(v + 1)
            })
            .validate(|_, metas| {
                metas.get(1)?.set_scalar_type(ScalarType::Int32)?;
                Ok(())
            })
            .add()
            .expect("kernel");
        k.add_parameter(0, ParamDirection::Input, DataType::Scalar, ParamState::Required).expect("p0");
        k.add_parameter(1, ParamDirection::Output, DataType::Scalar, ParamState::Required).expect("p1");
        k.finalize().expect("finalize");
        k
    }

    #[test]
    fn auto_aging_accumulates_through_the_bound_indexes() {
        let ctx = ctx();
        let k = increment(&ctx);
        let ex: Reference = Scalar::new(&ctx, ScalarValue::Int32(0)).expect("scalar").into();
        for slots in 2..=4usize {
            let d = Delay::new(&ex, slots).expect("delay");
            let g = Graph::new(&ctx).expect("graph");
            let n = g.add_node(&k, [d.get(-1).expect("-1"), d.get(0).expect("0")]).expect("node");
            d.bind(&n, 0, -1).expect("bind in");
            d.bind(&n, 1, 0).expect("bind out");
            g.register_auto_aging(&d).expect("register");
            g.register_auto_aging(&d).expect("registering twice ages once");
            // Model: values by position; each frame writes position 0 = position 1 + 1, then ages.
            let mut model = vec![0i32; slots];
            for frame in 0..25 {
                g.process().expect("process");
                model[0] = model[1] + 1;
                model.rotate_right(1);
                for (p, want) in model.iter().enumerate() {
                    let got: i32 = d.get(-(p as i32)).expect("slot").as_scalar().expect("scalar").get().expect("value");
                    assert_eq!(got, *want, "slots {slots}, frame {frame}, index -{p}");
                }
            }
        }
    }
}
