//! Pass `parameters`: every required parameter is set; every set one has the signature's type and
//! belongs to the graph's context (and, when virtual, to this graph).
//! Cost: O(parameters).

use crate::data::types::ParamState;
use crate::error::{Error, ErrorKind, Result};
use crate::graph::verify::Verification;
use crate::graph::{GraphBody, check_param};

pub(super) fn run(v: &mut Verification<'_>, body: &mut GraphBody) -> Result<()> {
    if v.live.is_empty() {
        return Err(Error::new(ErrorKind::InvalidGraph, "the graph has no nodes").in_graph(&v.gname));
    }
    for &n in &v.live {
        let s = body.nodes[n].as_ref().expect("live");
        for (p, r) in s.params.iter().enumerate() {
            let spec = s.spec(p);
            match r {
                None if spec.state == ParamState::Required => {
                    return Err(v.at(
                        s,
                        Error::new(ErrorKind::InvalidParameters, "a required parameter is not set")
                            .at_parameter(p as u32)
                            .expected(format!("{} {}", spec.direction, spec.data_type)),
                    ));
                }
                None => {}
                Some(r) => check_param(v.graph, &s.kernel, p, spec, r).map_err(|e| v.at(s, e))?,
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::graph::verify::testkit::{copy_kernel, image, run_until};
    use crate::{ErrorKind, Graph, Reference};

    #[test]
    fn a_missing_required_parameter_is_named() {
        let (ctx, k) = copy_kernel();
        let g = Graph::with_name(&ctx, "g").unwrap();
        let input = image(&ctx);
        g.add_node(&k, [Some(Reference::from(&input)), None]).unwrap();
        let e = run_until(&g, "parameters").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidParameters);
        assert_eq!(e.context().parameter, Some(1));
        assert_eq!(e.context().graph.as_deref(), Some("g"));
    }

    #[test]
    fn an_empty_graph_is_refused() {
        let (ctx, _k) = copy_kernel();
        let g = Graph::new(&ctx).unwrap();
        assert_eq!(run_until(&g, "parameters").unwrap_err().kind(), ErrorKind::InvalidGraph);
    }

    #[test]
    fn a_complete_graph_passes() {
        let (ctx, k) = copy_kernel();
        let g = Graph::new(&ctx).unwrap();
        g.add_node(&k, [&image(&ctx), &image(&ctx)]).unwrap();
        run_until(&g, "parameters").unwrap();
    }
}
