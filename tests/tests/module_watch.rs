//! The plugin-directory watcher: a module rebuilt in place is picked up without a restart, a file
//! caught half-written is refused (not crashed on) and retried, and every outcome is reported.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use vx_core::*;
use vx_tests::{plugin_dir, testmod};

/// (module, was a reload, outcome) of each watcher event.
type EventLog = Arc<Mutex<Vec<(String, bool, std::result::Result<(), String>)>>>;

#[test]
fn a_module_rewritten_in_place_is_reloaded_even_when_caught_half_written() {
    let (v1, v2) = (testmod("testmod_watch", &[]), testmod("testmod_watch", &["v2"]));
    let dir = plugin_dir("watch", &[("testmod_watch", &v1)]);
    let ctx = Context::builder().threads(2).build().unwrap();
    let events: EventLog = Arc::default();
    let log = events.clone();
    let options = WatchOptions { debounce: Duration::from_millis(150), retries: 20, load_new: false };
    let watcher = ModuleWatcher::start(&ctx, &dir, options, move |e| {
        log.lock().unwrap().push((
            e.module.clone(),
            e.reload,
            e.result.as_ref().map(|_| ()).map_err(|e| e.to_string()),
        ));
    })
    .unwrap();
    ctx.load_module("testmod_watch").unwrap();
    let k = ctx.kernel_by_name("testmod.invert").unwrap();
    let g = Graph::new(&ctx).unwrap();
    let src = Image::new(&ctx, 2, 1, ImageFormat::U8).unwrap();
    src.copy_from(Rect::full(2, 1), 0, &[0u8, 100]).unwrap();
    let dst = Image::new(&ctx, 2, 1, ImageFormat::U8).unwrap();
    g.add_node(&k, [&src, &dst]).unwrap();
    g.process().unwrap();
    assert_eq!(dst.to_vec::<u8>().unwrap(), [255, 155]);

    // Rewrite the file in place, pausing half-way for longer than the debounce interval: the
    // watcher sees a quiet, truncated file and must refuse it without harm, then take the rest.
    let bytes = std::fs::read(&v2).unwrap();
    let mut f = std::fs::File::create(dir.join("libtestmod_watch.so")).unwrap();
    f.write_all(&bytes[..bytes.len() / 2]).unwrap();
    f.flush().unwrap();
    std::thread::sleep(Duration::from_millis(700));
    f.write_all(&bytes[bytes.len() / 2..]).unwrap();
    drop(f);

    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        g.process().unwrap();
        if dst.to_vec::<u8>().unwrap() == [0, 156] {
            break;
        }
        assert!(Instant::now() < deadline, "the new version was not picked up; events: {:?}", events.lock().unwrap());
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(watcher);
    let events = events.lock().unwrap();
    assert!(events.iter().all(|(m, reload, _)| m == "testmod_watch" && *reload), "{events:?}");
    let (ok, failed): (Vec<_>, Vec<_>) = events.iter().partition(|(_, _, r)| r.is_ok());
    eprintln!("watcher events: {} failed attempt(s) on the half-written file, then {} reload", failed.len(), ok.len());
    assert_eq!(ok.len(), 1, "exactly one successful reload: {events:?}");
    for (_, _, r) in &failed {
        let msg = r.as_ref().unwrap_err();
        assert!(msg.contains("truncated") || msg.contains("not a loadable library"), "{msg}");
    }
    assert_eq!(ctx.module_state("testmod_watch"), Some(ModuleState::Loaded { count: 1, version: "2.0.0".into() }));
}
