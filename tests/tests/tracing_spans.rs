//! `tracing` as an application sees it, through a capturing subscriber: spans for module load,
//! publish and reload, verify (one per pass), process and each node, with their fields; an error
//! event for a failed load; a module's own log lines and a panic inside a module kernel arrive as
//! events of target `vx::module` — in the application's subscriber, not on the module's stderr.

use std::fmt::Write;
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context as LayerContext, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use vx::*;
use vx_tests::{plugin_dir, testmod};

#[derive(Default)]
struct Fields(String);
impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let _ = write!(self.0, "{}={:?} ", field.name(), value);
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        let _ = write!(self.0, "{}={} ", field.name(), value);
    }
}

/// Every span opened ("name: fields") and event ("LEVEL target: fields").
#[derive(Clone, Default)]
struct Capture {
    spans: Arc<Mutex<Vec<String>>>,
    events: Arc<Mutex<Vec<String>>>,
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, _id: &Id, _ctx: LayerContext<'_, S>) {
        let mut f = Fields::default();
        attrs.record(&mut f);
        self.spans.lock().unwrap().push(format!("{}: {}", attrs.metadata().name(), f.0.trim_end()));
    }
    fn on_event(&self, event: &Event<'_>, _ctx: LayerContext<'_, S>) {
        let mut f = Fields::default();
        event.record(&mut f);
        let m = event.metadata();
        self.events.lock().unwrap().push(format!("{} {}: {}", m.level(), m.target(), f.0.trim_end()));
    }
}

fn has(list: &[String], parts: &[&str]) -> bool {
    list.iter().any(|s| parts.iter().all(|p| s.contains(p)))
}

#[test]
fn spans_and_module_events_reach_the_application_subscriber() {
    let dir = plugin_dir("tracing", &[("tracing_tm", &testmod("tracing_tm", &[]))]);
    let capture = Capture::default();
    let _default = tracing::subscriber::set_default(tracing_subscriber::registry().with(capture.clone()));

    // One thread: every span and event of processing happens on this thread's subscriber.
    let ctx = Context::builder().threads(1).build().unwrap();
    ctx.add_module_dir(&dir);
    ctx.load_module("tracing_tm").unwrap();
    let e = ctx.load_module("no_such_module").unwrap_err();

    let graph = Graph::with_name(&ctx, "traced").unwrap();
    let (w, h) = (16, 4);
    let src = Image::new(&ctx, w, h, ImageFormat::U8).unwrap();
    src.copy_from(Rect::full(w, h), 0, &vec![7u8; (w * h) as usize]).unwrap();
    let mid = Image::new_virtual(&graph, 0, 0, ImageFormat::Virtual).unwrap();
    let dst = Image::new(&ctx, w, h, ImageFormat::U8).unwrap();
    graph.add_node(&ctx.kernel_by_name("testmod.invert").unwrap(), [&src, &mid]).unwrap().set_name("inv").unwrap();
    graph.add_node(&ctx.kernel_by_name("testmod.panicky").unwrap(), [&mid, &dst]).unwrap().set_name("pan").unwrap();
    graph.process().unwrap();
    // 255 - 242 = 13: the panicky kernel panics.
    src.copy_from(Rect::full(w, h), 0, &vec![242u8; (w * h) as usize]).unwrap();
    let panic_err = graph.process().unwrap_err();
    ctx.reload_module("tracing_tm").unwrap();

    let spans = capture.spans.lock().unwrap().clone();
    let events = capture.events.lock().unwrap().clone();
    let dump = || format!("spans:\n{}\nevents:\n{}", spans.join("\n"), events.join("\n"));
    // Module operations.
    assert!(has(&spans, &["module_load: module=tracing_tm"]), "{}", dump());
    assert!(has(&spans, &["module_publish: module=tracing_tm", "version=1.0.0", "staged=false"]), "{}", dump());
    assert!(has(&spans, &["module_reload: module=tracing_tm"]), "{}", dump());
    assert!(has(&spans, &["module_publish: module=tracing_tm", "staged=true"]), "{}", dump());
    // A failed load: an error event naming the module and why.
    assert!(has(&events, &["ERROR vx::module::loader", "module=no_such_module", "module load failed"]), "{}", dump());
    assert!(e.to_string().contains("no_such_module"));
    // Verification: one span, one per graph pass, one per node and node pass.
    assert!(has(&spans, &["verify: graph=traced"]), "{}", dump());
    for pass in ["parameters", "dataflow", "alias candidates", "nodes", "memory plan", "buffers"] {
        assert!(has(&spans, &[&format!("verify_pass: pass={pass}")]), "pass {pass} missing\n{}", dump());
    }
    assert!(has(&spans, &["verify_node: node=inv"]), "{}", dump());
    assert!(has(&spans, &["node_pass: pass=validate"]), "{}", dump());
    // Processing: a span per process call, one per node run, with the kernel.
    assert_eq!(spans.iter().filter(|s| s.starts_with("process: graph=traced")).count(), 2, "{}", dump());
    assert!(has(&spans, &["node: node=inv", "kernel=testmod.invert"]), "{}", dump());
    assert!(has(&spans, &["node: node=pan", "kernel=testmod.panicky"]), "{}", dump());
    // The module's own log lines (publish, twice with the reload; the kernel's warning) and its panic.
    assert_eq!(
        events.iter().filter(|e| e.contains("INFO vx::module:") && e.contains("publishing version 1.0.0")).count(),
        2,
        "{}",
        dump()
    );
    assert!(has(&events, &["WARN vx::module:", "source=vx_testmod", "a tile starts with pixel 13"]), "{}", dump());
    assert!(has(&events, &["ERROR vx::module:", "panicked in the module", "pixel 13 is unlucky"]), "{}", dump());
    assert!(panic_err.to_string().contains("pixel 13 is unlucky"), "{panic_err}");
}
