//! Graph parameters (`vxAddParameterToGraph`, `vxSetGraphParameterByIndex`,
//! `vxGetGraphParameterByIndex`): node parameters the application names by a graph-level index.
//! A graph parameter stands for its node parameter's object *wherever it appears in the graph*, so
//! replacing it (or enqueueing a new reference to it in a pipelined graph, `graph/pipeline/`)
//! changes every node that uses that object.

use crate::data::reference::Reference;
use crate::error::{Error, ErrorKind, Result};
use crate::graph::node::Node;
use crate::graph::{Graph, GraphBody};

impl Graph {
    /// `vxAddParameterToGraph`: make parameter `index` of `node` graph parameter number
    /// [`num_parameters`](Self::num_parameters) (returned). The parameter must be set and not virtual.
    pub fn add_parameter(&self, node: &Node, index: u32) -> Result<u32> {
        let g = &self.inner;
        if !node.graph.upgrade().is_some_and(|n| std::sync::Arc::ptr_eq(&n, g)) {
            return Err(
                Error::new(ErrorKind::InvalidReference, "the node belongs to another graph").in_graph(&g.name())
            );
        }
        let mut body = g.lock()?;
        let Some(s) = body.nodes.get(node.index).and_then(Option::as_ref) else {
            return Err(Error::new(ErrorKind::InvalidReference, "the node was removed").in_graph(&g.name()));
        };
        let ctxt = |e: Error| e.at_parameter(index).in_node(&s.name).in_graph(&g.name());
        let Some(slot) = s.params.get(index as usize) else {
            return Err(ctxt(
                Error::new(ErrorKind::InvalidParameters, "no such parameter")
                    .expected_found(format!("index < {}", s.params.len()), index),
            ));
        };
        match slot {
            None => {
                return Err(ctxt(Error::new(
                    ErrorKind::InvalidParameters,
                    "a graph parameter needs an object: set the node parameter first",
                )));
            }
            Some(r) if r.is_virtual() => {
                return Err(ctxt(
                    Error::new(ErrorKind::InvalidParameters, "a virtual object cannot be a graph parameter")
                        .on_object(&r.name()),
                ));
            }
            Some(_) => {}
        }
        if body.graph_params.contains(&(node.index, index)) {
            return Err(ctxt(Error::new(
                ErrorKind::InvalidParameters,
                "the node parameter is already a graph parameter",
            )));
        }
        body.graph_params.push((node.index, index));
        body.invalidate();
        Ok(body.graph_params.len() as u32 - 1)
    }

    /// The node and node parameter index graph parameter `index` stands for
    /// (`vxGetGraphParameterByIndex`'s `vx_parameter`).
    pub fn parameter_target(&self, index: u32) -> Result<(Node, u32)> {
        let body = self.inner.lock()?;
        let (n, p) = graph_param(&body, index).map_err(|e| e.in_graph(&self.name()))?;
        Ok((Node { graph: std::sync::Arc::downgrade(&self.inner), index: n, graph_id: self.inner.id }, p as u32))
    }

    /// `VX_GRAPH_NUMPARAMETERS`.
    pub fn num_parameters(&self) -> Result<u32> {
        Ok(self.inner.lock()?.graph_params.len() as u32)
    }

    /// `vxGetGraphParameterByIndex`: the object graph parameter `index` stands for now.
    pub fn parameter_by_index(&self, index: u32) -> Result<Reference> {
        let body = self.inner.lock()?;
        let (n, p) = graph_param(&body, index).map_err(|e| e.in_graph(&self.name()))?;
        Ok(body.nodes[n].as_ref().expect("checked").params[p].clone().expect("graph parameters stay set"))
    }

    /// `vxSetGraphParameterByIndex`: replace the object graph parameter `index` stands for, at every
    /// node parameter holding it (as `Node::set_parameter` would, one by one).
    pub fn set_parameter_by_index(&self, index: u32, value: impl Into<Reference>) -> Result<()> {
        let value = value.into();
        let g = &self.inner;
        let mut body = g.lock()?;
        let (n, p) = graph_param(&body, index).map_err(|e| e.in_graph(&g.name()))?;
        let old = body.nodes[n].as_ref().expect("checked").params[p].clone().expect("graph parameters stay set");
        let sites = sites_of(&body, &old);
        for &(n, p) in &sites {
            let s = body.nodes[n].as_ref().expect("sites are live nodes");
            crate::graph::check_param(g, &s.kernel, p, s.spec(p), &value)?;
        }
        let trigger = old.meta() != value.meta();
        let mut proportional = !trigger;
        for &(n, p) in &sites {
            let s = body.nodes[n].as_mut().expect("sites are live nodes");
            s.params[p] = Some(value.clone());
            s.dirty |= trigger;
            // Same meta data: each site's node alone when nothing the graph passes read changed.
            proportional = proportional && crate::graph::verify::note_input_replaced(&mut body, n, p, &old, &value);
        }
        if !proportional {
            body.invalidate();
        }
        Ok(())
    }
}

/// The (node, parameter) of graph parameter `index`, checked.
pub(super) fn graph_param(body: &GraphBody, index: u32) -> Result<(usize, usize)> {
    let Some(&(n, p)) = body.graph_params.get(index as usize) else {
        return Err(Error::new(ErrorKind::InvalidParameters, "no such graph parameter")
            .expected_found(format!("index < {}", body.graph_params.len()), index));
    };
    match body.nodes.get(n).and_then(Option::as_ref) {
        Some(s) if s.params[p as usize].is_some() => Ok((n, p as usize)),
        Some(s) => Err(Error::new(ErrorKind::InvalidParameters, "the graph parameter's node parameter was cleared")
            .at_parameter(p)
            .in_node(&s.name)),
        None => Err(Error::new(
            ErrorKind::InvalidReference,
            format!("graph parameter {index}: its node was removed from the graph"),
        )),
    }
}

/// Every (node, parameter) of the graph holding `object`.
pub(super) fn sites_of(body: &GraphBody, object: &Reference) -> Vec<(usize, usize)> {
    let mut sites = Vec::new();
    for (n, s) in body.nodes.iter().enumerate() {
        let Some(s) = s else { continue };
        for (p, r) in s.params.iter().enumerate() {
            if r.as_ref().is_some_and(|r| r.same_object(object)) {
                sites.push((n, p));
            }
        }
    }
    sites
}
