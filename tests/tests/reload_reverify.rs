//! Re-verification proportional to the change (issue 35, `vx-core/src/graph/verify/rebound.rs`): a
//! reload whose new versions differ in code alone (one shape, one generated validator, no
//! lifecycle) moves the nodes in place with nothing re-verified; one that keeps every kernel's shape
//! and generated validator but has an init re-verifies the rebound nodes alone, and an input
//! replaced by a real image of the same meta data its node alone — the `verify` span names how many
//! — with exactly a full verification's result (with the check on, as here, every such re-verification, and
//! every move in place, is followed by the full path and compared, an error if they differ); a
//! re-verification trigger takes the full path.

use std::fmt::Write;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::{Arc, Mutex};

use tracing::Subscriber;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing_subscriber::layer::{Context as LayerContext, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use vx::*;
use vx_tests::versions::Calls;
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
    vx::__verify_check_always();
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

        let reloads = g.reloads().unwrap();
        ctx.reload_module("vx_filters").unwrap();
        // Every vx_filters kernel is generated (one validator key per signature) and has no init,
        // deinit or local data: the graph being idle, the 21 nodes move to the new code in place
        // within the reload, nothing re-verified — but the complete verification it is checked
        // against (this test binary turns the check on) — and the old version, used by no one now,
        // is unloaded.
        assert_eq!(g.reloads().unwrap(), reloads + 21);
        let history = ctx.module_history("vx_filters");
        assert!(history.last().is_some_and(|(_, s)| *s == ModuleState::Unloaded), "{history:?}");
        g.process().unwrap();
        let seen = verifies.take();
        assert!(seen.iter().all(|f| !f.contains("proportional")), "{seen:?}");
        assert_eq!(seen.len(), 1, "the check's complete verification alone: {seen:?}");
        assert_eq!(g.reloads().unwrap(), reloads + 21);
        assert_eq!((out.to_vec::<u8>().unwrap(), side.to_vec::<u8>().unwrap()), want);
        assert_eq!(format!("{:?}", g.memory_plan().unwrap()), plan);

        // Two reloads before a frame: the same at each.
        ctx.reload_module("vx_filters").unwrap();
        ctx.reload_module("vx_filters").unwrap();
        g.process().unwrap();
        assert!(verifies.take().iter().all(|f| !f.contains("proportional")));
        assert_eq!(g.reloads().unwrap(), reloads + 63);
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

/// The in-process kernel whose versions these tests swap in (`vx_tests::versions`).
fn adder(ctx: &Context, successor_of: Option<&Kernel>, add: u8, key: u64, init: bool, calls: &Calls) -> Kernel {
    vx_tests::versions::adder(ctx, "test.adder", successor_of, add, key, init, calls)
}

#[test]
fn a_new_version_differing_in_code_alone_moves_in_place_and_runs_its_new_code() {
    let verifies = Verifies::default();
    let _default = tracing::subscriber::set_default(tracing_subscriber::registry().with(verifies.clone()));
    let ctx = Context::builder().threads(1).build().unwrap();
    let calls: Calls = Arc::default();
    let count = |i: usize| calls[i].load(SeqCst);
    vx::__verify_check_always();
    // Every re-verification and move in place is followed by a complete verification (compared):
    // every validator and init once more.
    let debug = 1;
    let v1 = adder(&ctx, None, 1, 9, false, &calls);
    let g = Graph::new(&ctx).unwrap();
    let src = Image::new(&ctx, W, H, ImageFormat::U8).unwrap();
    let pixels: Vec<u8> = (0..W * H).map(|i| (i * 37 % 251) as u8).collect();
    src.copy_from(Rect::full(W, H), 0, &pixels).unwrap();
    let dst = Image::new(&ctx, W, H, ImageFormat::U8).unwrap();
    let (a, b) = (
        Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap(),
        Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap(),
    );
    g.add_node(&v1, [&src, &a]).unwrap();
    g.add_node(&v1, [&a, &b]).unwrap();
    g.add_node(&v1, [&b, &dst]).unwrap();
    let plus = |k: u8| pixels.iter().map(|p| p.wrapping_add(3 * k)).collect::<Vec<u8>>();
    g.process().unwrap();
    assert_eq!(dst.to_vec::<u8>().unwrap(), plus(1));
    assert_eq!(count(0), 3);
    verifies.take();

    // Code alone differs (+2): in place, no validator called (but by the check), the new
    // code runs.
    let v2 = adder(&ctx, Some(&v1), 2, 9, false, &calls);
    v1.__replace_in_process(&v2).unwrap();
    g.process().unwrap();
    assert_eq!(dst.to_vec::<u8>().unwrap(), plus(2));
    let seen = verifies.take();
    assert!(seen.iter().all(|f| !f.contains("proportional")), "{seen:?}");
    assert_eq!(seen.len(), debug as usize, "{seen:?}");
    assert_eq!(count(0), 3 + 3 * debug);
    assert_eq!(g.reloads().unwrap(), 3);

    // An init: another shape, the full path (every validator, every init).
    let (validated, inits) = (count(0), count(1));
    let v3 = adder(&ctx, Some(&v2), 1, 9, true, &calls);
    v2.__replace_in_process(&v3).unwrap();
    g.process().unwrap();
    assert_eq!(dst.to_vec::<u8>().unwrap(), plus(1));
    let seen = verifies.take();
    assert!(seen.len() == 1 && !seen[0].contains("proportional"), "{seen:?}");
    assert_eq!((count(0), count(1)), (validated + 3, inits + 3));

    // The same shape and validator, with an init: the rebound nodes alone, kept (no validator
    // called), their new inits run.
    let (validated, inits) = (count(0), count(1));
    let v4 = adder(&ctx, Some(&v3), 2, 9, true, &calls);
    v3.__replace_in_process(&v4).unwrap();
    g.process().unwrap();
    assert_eq!(dst.to_vec::<u8>().unwrap(), plus(2));
    let seen = verifies.take();
    assert!(seen.first().is_some_and(|f| f.contains("proportional=3")), "{seen:?}");
    assert_eq!((count(0), count(1)), (validated + 3 * debug, inits + 3 + 3 * debug));
    assert_eq!(g.reloads().unwrap(), 9);
}

#[test]
fn nodes_left_for_the_next_run_move_before_any_node_runs() {
    vx::__verify_check_always();
    // One node noted for re-verification (its input replaced) cannot move in place at the reload:
    // the other two move then; the noted one moves at the next run, before any node runs.
    let ctx = Context::builder().threads(1).build().unwrap();
    let calls: Calls = Arc::default();
    let v1 = adder(&ctx, None, 1, 9, false, &calls);
    let g = Graph::new(&ctx).unwrap();
    let pixels: Vec<u8> = (0..W * H).map(|i| (i * 37 % 251) as u8).collect();
    let image = |px: &[u8]| {
        let i = Image::new(&ctx, W, H, ImageFormat::U8).unwrap();
        i.copy_from(Rect::full(W, H), 0, px).unwrap();
        i
    };
    let (src, other, dst) = (image(&pixels), image(&pixels), image(&pixels));
    let (a, b) = (
        Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap(),
        Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap(),
    );
    let first = g.add_node(&v1, [&src, &a]).unwrap();
    g.add_node(&v1, [&a, &b]).unwrap();
    g.add_node(&v1, [&b, &dst]).unwrap();
    g.process().unwrap();
    first.set_parameter(0, Reference::from(&other)).unwrap();
    let v2 = adder(&ctx, Some(&v1), 2, 9, false, &calls);
    v1.__replace_in_process(&v2).unwrap();
    assert_eq!(g.reloads().unwrap(), 2, "two nodes moved at the swap");
    g.process().unwrap();
    assert_eq!(g.reloads().unwrap(), 3);
    assert_eq!(dst.to_vec::<u8>().unwrap(), pixels.iter().map(|p| p.wrapping_add(6)).collect::<Vec<u8>>());
}
