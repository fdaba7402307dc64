//! Kernel modules loaded for real: cdylibs from `plugins/` built by the test, opened from plugin
//! directories, published, used by graphs, unloaded — and the bad ones refused with clear errors,
//! leaving nothing registered.

use std::path::PathBuf;

use vx::*;
use vx_tests::{build_failure, build_module, is_mapped, plugin_dir, testmod};

fn ctx_with(tag: &str, modules: &[(&str, &std::path::Path)]) -> Context {
    let ctx = Context::builder().threads(2).build().unwrap();
    ctx.add_module_dir(plugin_dir(tag, modules));
    ctx
}

fn invert_graph(ctx: &Context, pixels: &[u8]) -> (Graph, Image) {
    let k = ctx.kernel_by_name("testmod.invert").unwrap();
    let g = Graph::new(ctx).unwrap();
    let src = Image::new(ctx, pixels.len() as u32, 1, ImageFormat::U8).unwrap();
    src.copy_from(Rect::full(pixels.len() as u32, 1), 0, pixels).unwrap();
    let dst = Image::new(ctx, pixels.len() as u32, 1, ImageFormat::U8).unwrap();
    g.add_node(&k, [&src, &dst]).unwrap();
    (g, dst)
}

#[test]
fn load_lookup_process_unload() {
    let lib = testmod("testmod", &[]);
    let ctx = ctx_with("basic", &[("testmod", &lib)]);
    let (k0, u0, m0) = (ctx.kernel_count(), ctx.unique_kernel_count(), ctx.module_count());
    ctx.load_module("testmod").unwrap();
    assert_eq!((ctx.kernel_count(), ctx.unique_kernel_count(), ctx.module_count()), (k0 + 4, u0 + 4, m0 + 1));
    assert_eq!(
        ctx.module_kernels("testmod"),
        ["testmod.invert", "testmod.panicky", "testmod.scale", "testmod.histogram"]
    );
    // The alias hint the module recorded during publish.
    assert_eq!(
        ctx.kernel_by_name("testmod.invert").unwrap().alias_hints(),
        [AliasHint { a: 0, b: 1, kind: AliasKind::Dense }]
    );
    assert_eq!(ctx.module_state("testmod"), Some(ModuleState::Loaded { count: 1, version: "1.0.0".into() }));

    let (g, dst) = invert_graph(&ctx, &[0, 10, 200]);
    g.process().unwrap();
    assert_eq!(dst.to_vec::<u8>().unwrap(), [255, 245, 55]);
    drop(g);

    ctx.unload_module("testmod").unwrap();
    assert_eq!(ctx.kernel_by_name("testmod.invert").unwrap_err().kind(), ErrorKind::InvalidReference);
    assert_eq!((ctx.kernel_count(), ctx.unique_kernel_count(), ctx.module_count()), (k0, u0, m0));
    assert_eq!(ctx.module_state("testmod"), Some(ModuleState::Unloaded));
    assert!(!is_mapped(&format!("vx-rs-modules-{}-libtestmod.", std::process::id())), "library still mapped");
    assert_eq!(ctx.unload_module("testmod").unwrap_err().kind(), ErrorKind::InvalidParameters, "already unloaded");
}

#[test]
fn loading_twice_and_unloading_once_keeps_the_kernels() {
    let lib = testmod("testmod_twice", &[]);
    let ctx = ctx_with("twice", &[("testmod_twice", &lib)]);
    ctx.load_module("testmod_twice").unwrap();
    ctx.load_module("testmod_twice").unwrap();
    assert_eq!(ctx.module_count(), 1, "one module, loaded twice");
    assert_eq!(ctx.unique_kernel_count(), 4, "not published twice");
    ctx.unload_module("testmod_twice").unwrap();
    assert!(ctx.kernel_by_name("testmod.invert").is_ok());
    assert_eq!(ctx.module_state("testmod_twice"), Some(ModuleState::Loaded { count: 1, version: "1.0.0".into() }));
    ctx.unload_module("testmod_twice").unwrap();
    assert!(ctx.kernel_by_name("testmod.invert").is_err());
}

#[test]
fn unload_while_a_graph_uses_a_kernel() {
    let lib = testmod("testmod_inuse", &[]);
    let ctx = ctx_with("inuse", &[("testmod_inuse", &lib)]);
    ctx.load_module("testmod_inuse").unwrap();
    let (g, dst) = invert_graph(&ctx, &[1, 2, 3]);
    g.verify().unwrap();
    ctx.unload_module("testmod_inuse").unwrap();
    // Gone from lookup, counted out, but the graph keeps working: its node holds the kernel, the
    // kernel holds the library.
    assert!(ctx.kernel_by_name("testmod.invert").is_err());
    assert_eq!(ctx.module_count(), 0);
    assert_eq!(ctx.module_state("testmod_inuse"), Some(ModuleState::Draining { version: "1.0.0".into() }));
    assert!(is_mapped("libtestmod_inuse."), "the library is still mapped for the graph");
    g.process().unwrap();
    assert_eq!(dst.to_vec::<u8>().unwrap(), [254, 253, 252]);
    drop(g);
    assert_eq!(ctx.module_state("testmod_inuse"), Some(ModuleState::Unloaded), "closed once the graph went");
    assert!(!is_mapped("libtestmod_inuse."), "and really unmapped");
}

#[test]
fn a_user_kernel_from_a_module_reaches_its_parameters() {
    let lib = testmod("testmod_user", &[]);
    let ctx = ctx_with("user", &[("testmod_user", &lib)]);
    ctx.load_module("testmod_user").unwrap();
    let k = ctx.kernel_by_name("testmod.scale").unwrap();
    let g = Graph::new(&ctx).unwrap();
    let src = Image::new(&ctx, 4, 2, ImageFormat::U8).unwrap();
    src.copy_from(Rect::full(4, 2), 0, &[1u8, 2, 3, 100, 5, 6, 7, 8]).unwrap();
    let factor = Scalar::new(&ctx, ScalarValue::Uint8(3)).unwrap();
    let v = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
    g.add_node(&k, [Reference::from(&src), Reference::from(&factor), Reference::from(&v)]).unwrap();
    let out = Image::new(&ctx, 4, 2, ImageFormat::U8).unwrap();
    g.add_node(&ctx.kernel_by_name("testmod.invert").unwrap(), [&v, &out]).unwrap();
    g.process().unwrap();
    assert_eq!(out.to_vec::<u8>().unwrap(), [252, 249, 246, 0, 240, 237, 234, 231]);
    // The module's validator speaks through the ABI too.
    let g2 = Graph::new(&ctx).unwrap();
    let s16 = Image::new(&ctx, 4, 2, ImageFormat::S16).unwrap();
    g2.add_node(&k, [Reference::from(&s16), Reference::from(&factor), Reference::from(&out)]).unwrap();
    let e = g2.verify().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidFormat);
    assert!(e.to_string().contains("parameter 0 must be a U8 image"), "{e}");
}

#[test]
fn bad_names_and_missing_modules() {
    let ctx = ctx_with("names", &[]);
    for bad in ["", "../etc/passwd", "a/b", "a\\b", "..", "x\0y"] {
        let e = ctx.load_module(bad).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidParameters, "{bad:?}: {e}");
    }
    let e = ctx.load_module("does_not_exist").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidModule);
    assert!(e.to_string().contains("libdoes_not_exist.so in one of:"), "{e}");
    // The empty name is not called a path; a file name gets a "did you mean".
    let e = ctx.load_module("").unwrap_err();
    assert!(e.message().contains("empty") && !e.message().contains("path"), "{e}");
    for given in ["libfilters.so", "libfilters", "filters.so"] {
        let e = ctx.load_module(given).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidModule);
        assert!(e.message().contains("did you mean 'filters'?"), "{given}: {e}");
    }
    assert!(!ctx.load_module("filters").unwrap_err().message().contains("did you mean"));
    assert_eq!(ctx.module_count(), 0);
}

#[test]
fn not_a_library_and_no_entry_point() {
    let dir = plugin_dir("junk", &[]);
    std::fs::write(dir.join("libjunk.so"), b"this is not an ELF file").unwrap();
    let noentry = build_module("vx-noentry", &[]);
    std::fs::copy(&noentry, dir.join("libnoentry.so")).unwrap();
    let ctx = Context::new().unwrap();
    ctx.add_module_dir(&dir);
    let e = ctx.load_module("junk").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidModule);
    assert!(e.message().contains("is not a loadable library"), "{e}");
    let e = ctx.load_module("noentry").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidModule);
    assert!(e.message().contains("has no vx-rs entry point"), "{e}");
    assert_eq!((ctx.module_count(), ctx.kernel_count()), (0, 0));
    assert!(!is_mapped("libnoentry."), "a refused library is closed");
}

/// The library above, given kernels but still no `vx_module!` (feature `kernels`), would build
/// and then be refused at load like any library without the entry point: the kernel macros refuse
/// it at compile time, once (at the crate's first kernel, not at the second file's), saying what
/// to add and where.
#[test]
fn kernels_without_vx_module_do_not_compile() {
    let stderr = build_failure("vx-noentry", &["kernels"]);
    let message = "this crate builds a kernel module (`crate-type = [\"cdylib\"]`) but has no `vx_module!`";
    assert_eq!(stderr.matches(message).count(), 1, "{stderr}");
    assert!(stderr.contains("add `vx_plugin_abi::vx_module!(name = \"vx_noentry\");` to src/lib.rs"), "{stderr}");
    assert!(stderr.contains("plugins/vx-noentry/src/kernels.rs:7:4"), "at the first kernel's name: {stderr}");
    assert!(!stderr.contains("more.rs"), "{stderr}");
}

#[test]
fn a_module_for_another_abi_version_is_refused_in_one_sentence() {
    let lib = testmod("testmod_abi", &["abi-mismatch"]);
    let ctx = ctx_with("abi", &[("testmod_abi", &lib)]);
    let e = ctx.load_module("testmod_abi").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidModule);
    let (theirs, ours) = (vx_plugin_abi::module_abi::ABI_VERSION + 1, vx_plugin_abi::module_abi::ABI_VERSION);
    assert_eq!(
        e.message(),
        format!("module 'testmod_abi' speaks vx-rs module ABI version {theirs}, this host speaks version {ours}")
    );
    assert_eq!((ctx.module_count(), ctx.kernel_count()), (0, 0));
}

/// ABI 8 added the row entry of fused execution (`TileParamKind::InputRows` / `OutputRows`,
/// `declare_fusion`): a module built for 7 is refused before anything in it runs, naming both
/// versions.
#[test]
fn a_module_built_for_abi_version_7_is_refused_naming_both_versions() {
    assert_eq!(vx_plugin_abi::module_abi::ABI_VERSION, 8);
    let lib = testmod("testmod_abi7", &["abi-v7"]);
    let ctx = ctx_with("abi7", &[("testmod_abi7", &lib)]);
    let e = ctx.load_module("testmod_abi7").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidModule);
    assert_eq!(e.message(), "module 'testmod_abi7' speaks vx-rs module ABI version 7, this host speaks version 8");
    assert_eq!((ctx.module_count(), ctx.kernel_count()), (0, 0));
    assert!(!is_mapped("libtestmod_abi7."), "a refused library is closed");
}

#[test]
fn a_module_built_against_abi_version_1_is_refused_in_one_sentence() {
    let lib = testmod("testmod_abi1", &["abi-v1"]);
    let ctx = ctx_with("abi1", &[("testmod_abi1", &lib)]);
    let e = ctx.load_module("testmod_abi1").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidModule);
    assert_eq!(
        e.message(),
        format!(
            "module 'testmod_abi1' speaks vx-rs module ABI version 1, this host speaks version {}",
            vx_plugin_abi::module_abi::ABI_VERSION
        )
    );
    assert_eq!((ctx.module_count(), ctx.kernel_count()), (0, 0));
    assert!(!is_mapped("libtestmod_abi1."), "a refused library is closed");
}

#[test]
fn a_module_with_another_descriptor_layout_is_refused_before_any_call() {
    let lib = testmod("testmod_layout", &["layout-mismatch"]);
    let ctx = ctx_with("layout", &[("testmod_layout", &lib)]);
    let e = ctx.load_module("testmod_layout").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidModule);
    assert_eq!(
        e.message(),
        "module 'testmod_layout' describes its root module with a different layout than the host's vx-plugin-abi: in \
         type VxModule, field `abi_version` is u64 in the module (built against vx-plugin-abi 0.1.0) but u32 in the host \
         (vx-plugin-abi 0.1.0); rebuild it against this vx-plugin-abi"
    );
    assert!(!e.message().contains('\n'), "one sentence, not a layout dump: {e}");
    assert_eq!((ctx.module_count(), ctx.kernel_count()), (0, 0));
}

#[test]
fn a_publish_that_fails_half_way_leaves_nothing() {
    let lib = testmod("testmod_pubfail", &["publish-fails"]);
    let ctx = ctx_with("pubfail", &[("testmod_pubfail", &lib)]);
    let e = ctx.load_module("testmod_pubfail").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParameters, "{e}");
    assert!(e.message().starts_with("publishing module 'testmod_pubfail' failed:"), "{e}");
    assert!(e.message().contains("the 2 kernel(s) it had added were removed"), "{e}");
    assert_eq!((ctx.module_count(), ctx.kernel_count(), ctx.unique_kernel_count()), (0, 0, 0));
    assert!(ctx.kernel_by_name("testmod.invert").is_err());
    assert!(!is_mapped("libtestmod_pubfail."));
}

#[test]
fn a_publish_that_panics_leaves_the_host_alive_and_nothing_registered() {
    let lib = testmod("testmod_pubpanic", &["publish-panics"]);
    let ctx = ctx_with("pubpanic", &[("testmod_pubpanic", &lib)]);
    let e = ctx.load_module("testmod_pubpanic").unwrap_err();
    assert_eq!(e.status(), Status::Failure);
    assert!(e.message().contains("publish panicked in the module at plugins/vx-testmod/src/lib.rs:"), "{e}");
    assert!(e.message().contains(": publish is broken on purpose;"), "{e}");
    assert_eq!((ctx.module_count(), ctx.kernel_count()), (0, 0));
}

#[test]
fn a_kernel_that_panics_during_process_is_a_node_error() {
    let lib = testmod("testmod_procpanic", &[]);
    let ctx = ctx_with("procpanic", &[("testmod_procpanic", &lib)]);
    ctx.load_module("testmod_procpanic").unwrap();
    let k = ctx.kernel_by_name("testmod.panicky").unwrap();
    let g = Graph::with_name(&ctx, "unlucky").unwrap();
    let src = Image::new(&ctx, 2, 2, ImageFormat::U8).unwrap();
    src.copy_from(Rect::full(2, 2), 0, &[13u8, 1, 2, 3]).unwrap();
    let dst = Image::new(&ctx, 2, 2, ImageFormat::U8).unwrap();
    g.add_node(&k, [&src, &dst]).unwrap();
    let e = g.process().unwrap_err();
    assert_eq!(e.status(), Status::Failure);
    // Message and place, recorded by the module's own panic hook (no backtrace captured).
    assert!(e.message().contains("panicked in the module at plugins/vx-testmod/src/lib.rs:"), "{e}");
    assert!(e.message().contains(": pixel 13 is unlucky"), "{e}");
    assert_eq!(e.context().kernel.as_deref(), Some("testmod.panicky"));
    src.copy_from(Rect::full(2, 2), 0, &[0u8, 1, 2, 3]).unwrap();
    g.process().unwrap();
    assert_eq!(dst.to_vec::<u8>().unwrap(), [0, 1, 2, 3]);
    drop((g, k));
    ctx.unload_module("testmod_procpanic").unwrap();
    // The module's panic hook keeps its std from touching thread-locals with destructors (the
    // default hook looks up the current thread), so the panic leaves nothing that pins the library.
    assert_eq!(ctx.module_state("testmod_procpanic").unwrap(), ModuleState::Unloaded);
    assert!(!is_mapped("libtestmod_procpanic."));
}

#[test]
fn search_order_context_dirs_then_env_then_exe_dir() {
    let one = testmod("testmod_order", &[]);
    let two = testmod("testmod_order", &["v2"]);
    let env_only = testmod("testmod_envonly", &["v2"]);
    let ctx_dir = plugin_dir("order-ctx", &[("testmod_order", &one)]);
    let env_dir = plugin_dir("order-env", &[("testmod_order", &two), ("testmod_envonly", &env_only)]);
    // SAFETY: this is the only test touching VX_MODULE_PATH, and it sets it before any thread of
    // this test reads it; other tests only read it through the loader and find their modules in
    // context directories first.
    unsafe { std::env::set_var(MODULE_PATH_VAR, format!("/nonexistent:{}", env_dir.display())) };
    let ctx = Context::new().unwrap();
    ctx.add_module_dir(&ctx_dir);
    assert_eq!(ctx.resolve_module("testmod_order").unwrap(), ctx_dir.join("libtestmod_order.so"));
    assert_eq!(ctx.resolve_module("testmod_envonly").unwrap(), env_dir.join("libtestmod_envonly.so"));
    let path = ctx.module_search_path();
    assert_eq!(path[0], ctx_dir);
    assert_eq!(path[1], PathBuf::from("/nonexistent"));
    assert_eq!(path[2], env_dir);
    assert_eq!(path.last().unwrap(), &std::env::current_exe().unwrap().parent().unwrap().to_path_buf());
    ctx.load_module("testmod_envonly").unwrap();
    assert_eq!(ctx.module_state("testmod_envonly"), Some(ModuleState::Loaded { count: 1, version: "2.0.0".into() }));
    // Version 2 inverts and adds one.
    let (g, dst) = invert_graph(&ctx, &[0, 10]);
    g.process().unwrap();
    assert_eq!(dst.to_vec::<u8>().unwrap(), [0, 246]);
}

#[test]
fn the_sample_module_posterizes_and_thresholds() {
    let lib = build_module("vx-sample", &[]);
    let ctx = ctx_with("sample", &[("vx_sample", &lib)]);
    ctx.load_module("vx_sample").unwrap();
    assert_eq!(ctx.module_kernels("vx_sample"), ["sample.posterize", "sample.threshold"]);
    // 14 wide: the 4x1 fast function covers 12 columns, the flexible one the last 2.
    let pixels: Vec<u8> = (0..14 * 3).map(|i| (i * 6) as u8).collect();
    let g = Graph::new(&ctx).unwrap();
    let src = Image::new(&ctx, 14, 3, ImageFormat::U8).unwrap();
    src.copy_from(Rect::full(14, 3), 0, &pixels).unwrap();
    let post = Image::new(&ctx, 14, 3, ImageFormat::U8).unwrap();
    let level = Scalar::new(&ctx, ScalarValue::Uint8(100)).unwrap();
    let mask = Image::new(&ctx, 14, 3, ImageFormat::U8).unwrap();
    g.add_node(&ctx.kernel_by_name("sample.posterize").unwrap(), [&src, &post]).unwrap();
    g.add_node(
        &ctx.kernel_by_name("sample.threshold").unwrap(),
        [Reference::from(&post), Reference::from(&level), Reference::from(&mask)],
    )
    .unwrap();
    g.process().unwrap();
    let want_post: Vec<u8> = pixels.iter().map(|p| p & 0xC0).collect();
    assert_eq!(post.to_vec::<u8>().unwrap(), want_post);
    let want_mask: Vec<u8> = want_post.iter().map(|&p| if p > 100 { 255 } else { 0 }).collect();
    assert_eq!(mask.to_vec::<u8>().unwrap(), want_mask);
}

#[test]
fn a_user_kernel_from_a_module_with_init_local_data_and_an_array() {
    let lib = testmod("testmod_hist", &[]);
    let ctx = ctx_with("histogram", &[("testmod_hist", &lib)]);
    ctx.load_module("testmod_hist").unwrap();
    let k = ctx.kernel_by_name("testmod.histogram").unwrap();
    let g = Graph::new(&ctx).unwrap();
    let img = Image::new(&ctx, 4, 2, ImageFormat::U8).unwrap();
    img.copy_from(Rect::full(4, 2), 0, &[0u8, 70, 130, 200, 10, 20, 255, 64]).unwrap();
    let hist = Array::new(&ctx, ArrayItemType::Scalar(ScalarType::Uint32), 4).unwrap();
    let node = g.add_node(&k, [Reference::from(&img), Reference::from(&hist)]).unwrap();
    g.process().unwrap();
    assert_eq!(hist.read_items::<u32>().unwrap(), [3, 2, 1, 2]);
    // Init asked for 16 bytes; the host allocated them after init (the spec's step 4).
    assert_eq!(node.local_data_size().unwrap(), 16);
    assert!(!node.local_data_ptr().unwrap().is_null());
    // Re-verification runs the module's deinit (which checks the host refuses it a pointer change).
    g.verify().unwrap();
    g.process().unwrap();
    assert_eq!(hist.read_items::<u32>().unwrap(), [3, 2, 1, 2]);
    drop((g, node));
}

#[test]
fn a_huge_file_is_refused_by_its_size_and_one_with_an_elf_header_by_its_headers_before_it_is_copied() {
    let dir = plugin_dir("huge", &[]);
    let lib = testmod("testmod_huge", &[]);
    let head = std::fs::read(&lib).unwrap();
    let f = std::fs::File::create(dir.join("libhuge.so")).unwrap();
    std::io::Write::write_all(&mut &f, &head[..64]).unwrap();
    f.set_len(3 << 30).unwrap(); // 3 GiB, sparse: over the default module size limit
    drop(f);
    let ctx = Context::new().unwrap();
    ctx.add_module_dir(&dir);
    let e = ctx.load_module("huge").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidModule);
    assert!(e.message().starts_with("module 'huge' is larger than the module size limit"), "{e}");
    assert!(e.message().contains("max_module_bytes"), "{e}");
    // Under the limit (512 MiB allowed), the ELF check refuses it by its headers, still uncopied.
    std::fs::File::options().write(true).open(dir.join("libhuge.so")).unwrap().set_len(512 << 20).unwrap();
    let ctx = Context::builder().max_module_bytes(1 << 30).build().unwrap();
    ctx.add_module_dir(&dir);
    let e = ctx.load_module("huge").unwrap_err();
    assert!(e.message().starts_with("module 'huge' is not a loadable library"), "{e}");
    // A real module over a small limit: refused by its size, a clear error naming the setting.
    let small = Context::builder().max_module_bytes(4096).build().unwrap();
    let real = plugin_dir("huge-real", &[("testmod_huge", &lib)]);
    small.add_module_dir(&real);
    let e = small.load_module("testmod_huge").unwrap_err();
    assert!(e.message().contains("at most 4096"), "{e}");
    std::fs::remove_dir_all(real).unwrap();
    // No private copy is left (memory file or fallback directory): no descriptor points at one.
    let copies = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .filter(|t| t.to_string_lossy().contains("libhuge."))
        .count();
    assert_eq!(copies, 0, "no copy was made");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_module_kernel_allocates_in_init_and_reaches_its_blocks_in_process() {
    // testmod.scale: out = in * factor + frames so far, through a scratch row, the frame count in a
    // persistent block; its process checks that allocating there is refused, its deinit frees.
    for leak in [false, true] {
        let name = if leak { "testmod_memleak" } else { "testmod_mem" };
        let lib = testmod(name, if leak { &["leak"] } else { &[] });
        let ctx = ctx_with(name, &[(name, &lib)]);
        ctx.load_module(name).unwrap();
        let k = ctx.kernel_by_name("testmod.scale").unwrap();
        let g = Graph::new(&ctx).unwrap();
        let src = Image::new(&ctx, 4, 1, ImageFormat::U8).unwrap();
        src.copy_from(Rect::full(4, 1), 0, &[1u8, 2, 3, 100]).unwrap();
        let factor = Scalar::new(&ctx, ScalarValue::Uint8(2)).unwrap();
        let (v, out) = (
            Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap(),
            Image::new(&ctx, 4, 1, ImageFormat::U8).unwrap(),
        );
        g.add_node(&k, [Reference::from(&src), Reference::from(&factor), Reference::from(&v)]).unwrap();
        g.add_node(&k, [Reference::from(&v), Reference::from(&factor), Reference::from(&out)])
            .unwrap()
            .set_name("second")
            .unwrap();
        g.verify().unwrap();
        let mem = g.kernel_memory().unwrap();
        assert_eq!(mem.nodes.iter().map(|n| (n.persistent_bytes, n.scratch_bytes)).collect::<Vec<_>>(), [(4, 4096); 2]);
        assert_eq!(mem.scratch_arena_bytes, 4096, "the two nodes' scratch rows share one arena per executor");
        assert_eq!(ctx.usage(ResourceKind::ScratchBytes).current, 4096 * ctx.threads());
        assert_eq!(ctx.usage(ResourceKind::PersistentBytes).current, 8);
        for frame in 0..3u8 {
            g.process().unwrap();
            let want: Vec<u8> =
                [1u8, 2, 3, 100].iter().map(|&p| (p * 2 + frame).saturating_mul(2).saturating_add(frame)).collect();
            assert_eq!(out.to_vec::<u8>().unwrap(), want, "frame {frame}: the counters persisted");
        }
        drop(g);
        assert_eq!(ctx.usage(ResourceKind::PersistentBytes).current, 0, "freed at deinit (by the host if leaked)");
        let leaks = ctx.memory_leaks();
        if leak {
            assert_eq!(leaks.len(), 2, "{leaks:?}");
            assert_eq!(
                (leaks[1].node.as_str(), leaks[1].kernel.as_str(), leaks[1].bytes),
                ("second", "testmod.scale", 4)
            );
        } else {
            assert!(leaks.is_empty(), "{leaks:?}");
        }
    }
}
