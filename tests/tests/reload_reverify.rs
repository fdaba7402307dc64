//! Re-verification proportional to the change (issue 35, `vx-core/src/graph/verify/rebound.rs`): a
//! reload that keeps every kernel's shape and generated validator re-verifies the rebound nodes
//! alone, and an input replaced by a real image of the same meta data its node alone — the `verify`
//! span names how many — with exactly a full verification's result (in debug builds every such
//! re-verification is followed by the full path and compared, an error if they differ); a
//! re-verification trigger takes the full path.

use std::fmt::Write;
use std::sync::{Arc, Mutex};

use tracing::Subscriber;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing_subscriber::layer::{Context as LayerContext, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use vx::*;
use vx_tests::{build_module, plugin_dir};

#[derive(Default)]
struct Fields(String);
impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let _ = write!(self.0, "{}={:?} ", field.name(), value);
    }
}

/// The fields of every `verify` span opened.
#[derive(Clone, Default)]
struct Verifies(Arc<Mutex<Vec<String>>>);

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Verifies {
    fn on_new_span(&self, attrs: &Attributes<'_>, _id: &Id, _ctx: LayerContext<'_, S>) {
        if attrs.metadata().name() == "verify" {
            let mut f = Fields::default();
            attrs.record(&mut f);
            self.0.lock().unwrap().push(f.0.trim_end().to_owned());
        }
    }
}

impl Verifies {
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

const W: u32 = 40;
const H: u32 = 12;

/// input → (not → gaussian3x3) × 10 → output, virtual intermediates, and a branch off the input
/// to a second output through `box3x3` (returned: its input has no alias hint).
fn graph(ctx: &Context) -> (Graph, Node, Image, Image, Image) {
    let g = Graph::new(ctx).unwrap();
    let input = Image::new(ctx, W, H, ImageFormat::U8).unwrap();
    let pixels: Vec<u8> = (0..W * H).map(|i| (i * 37 % 251) as u8).collect();
    input.copy_from(Rect::full(W, H), 0, &pixels).unwrap();
    let not = ctx.kernel_by_name("filters.not").unwrap();
    let gauss = ctx.kernel_by_name("filters.gaussian3x3").unwrap();
    let boxk = ctx.kernel_by_name("filters.box3x3").unwrap();
    let out = Image::new(ctx, W, H, ImageFormat::U8).unwrap();
    let side = Image::new(ctx, W, H, ImageFormat::U8).unwrap();
    let mut prev = input.clone();
    let mut first = None;
    for i in 0..10 {
        let a = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
        g.add_node(&not, [&prev, &a]).unwrap();
        if i == 0 {
            first.get_or_insert(g.add_node(&boxk, [&input, &side]).unwrap());
        }
        let b = if i == 9 { out.clone() } else { Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap() };
        g.add_node(&gauss, [&a, &b]).unwrap();
        prev = b;
    }
    (g, first.unwrap(), input, out, side)
}

#[test]
fn a_reload_keeping_every_shape_reverifies_the_rebound_nodes_alone_with_the_same_result() {
    let dir = plugin_dir("reload-reverify", &[("vx_filters", &build_module("vx-filters", &[]))]);
    let verifies = Verifies::default();
    let _default = tracing::subscriber::set_default(tracing_subscriber::registry().with(verifies.clone()));
    for memory_plan in [true, false] {
        let ctx = Context::builder().threads(1).memory_plan(memory_plan).build().unwrap();
        ctx.add_module_dir(dir.clone());
        ctx.load_module("vx_filters").unwrap();
        let (g, first, input, out, side) = graph(&ctx);
        g.process().unwrap();
        let want = (out.to_vec::<u8>().unwrap(), side.to_vec::<u8>().unwrap());
        let plan = format!("{:?}", g.memory_plan().unwrap());
        verifies.take();

        ctx.reload_module("vx_filters").unwrap();
        g.process().unwrap();
        let seen = verifies.take();
        // The rebound-only re-verification (21 nodes), then — debug builds — the full path it is
        // checked against; never the full path alone.
        assert!(seen.first().is_some_and(|f| f.contains("proportional=21")), "{seen:?}");
        assert_eq!(seen.len(), if cfg!(debug_assertions) { 2 } else { 1 }, "{seen:?}");
        assert_eq!((out.to_vec::<u8>().unwrap(), side.to_vec::<u8>().unwrap()), want);
        assert_eq!(format!("{:?}", g.memory_plan().unwrap()), plan);

        // Two reloads before a frame: still the rebound nodes alone, compared with their first version.
        ctx.reload_module("vx_filters").unwrap();
        ctx.reload_module("vx_filters").unwrap();
        g.process().unwrap();
        assert!(verifies.take().first().is_some_and(|f| f.contains("proportional=21")));
        assert_eq!((out.to_vec::<u8>().unwrap(), side.to_vec::<u8>().unwrap()), want);

        // An input replaced by a real image of the same meta data: that node alone.
        let other = Image::new(&ctx, W, H, ImageFormat::U8).unwrap();
        other.copy_from(Rect::full(W, H), 0, &input.to_vec::<u8>().unwrap()).unwrap();
        first.set_parameter(0, Reference::from(&other)).unwrap();
        g.process().unwrap();
        assert!(verifies.take().first().is_some_and(|f| f.contains("proportional=1")));
        assert_eq!((out.to_vec::<u8>().unwrap(), side.to_vec::<u8>().unwrap()), want);

        // A reload and a re-verification trigger (a border change): the full path.
        ctx.reload_module("vx_filters").unwrap();
        let border = first.border().unwrap();
        first
            .set_border(if border == BorderMode::Undefined { BorderMode::Self_ } else { BorderMode::Undefined })
            .unwrap();
        g.process().unwrap();
        let seen = verifies.take();
        assert!(seen.iter().all(|f| !f.contains("proportional")), "{seen:?}");
        assert_eq!((out.to_vec::<u8>().unwrap(), side.to_vec::<u8>().unwrap()), want);
    }
}
