//! Resource statistics and limits files (TIOVX's `tivxPrintAllResourceStats`,
//! `tivxQueryResourceStats`, `tivxExportAllResourceMaxUsedValueToFile`): every limit in the table,
//! the peaks exported as TOML and loaded back as exact limits, one object past a limit refused with
//! the limit's name and key, and a bad limits file refused with the reason.

use vx::*;

/// A private directory (made exclusively, mode 0700, removed when dropped) and `name`.toml in it.
fn temp(name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::Builder::new().prefix("vx-rs-limits-").tempdir().unwrap();
    let path = dir.path().join(format!("{name}.toml"));
    (dir, path)
}

#[test]
fn exported_peaks_load_back_as_exact_limits() {
    let ctx = Context::builder().threads(1).build().unwrap();
    let graphs: Vec<Graph> = (0..3).map(|_| Graph::new(&ctx).unwrap()).collect();
    let images: Vec<Image> = (0..5).map(|_| Image::new(&ctx, 64, 8, ImageFormat::U8).unwrap()).collect();
    for i in &images {
        i.copy_from(Rect::full(64, 8), 0, &[1u8; 512]).unwrap();
    }
    drop(images);
    // Peaks, not current values: 5 images were live at once, none is now.
    let stats = ctx.resource_stats();
    let names: Vec<&str> = stats.iter().map(|s| s.name).collect();
    assert_eq!(
        names,
        [
            "max_kernels",
            "max_modules",
            "max_graphs",
            "max_nodes",
            "max_data_objects",
            "max_buffer_bytes",
            "max_persistent_bytes",
            "max_scratch_bytes"
        ]
    );
    let objects = ctx.resource_stat("max_data_objects").unwrap();
    assert_eq!((objects.used, objects.peak, objects.required), (0, 5, 5));
    let bytes = ctx.resource_stat("max_buffer_bytes").unwrap();
    assert_eq!((bytes.used, bytes.peak, bytes.max), (0, 5 * 512, usize::MAX));
    let report = ctx.resource_report();
    for n in names {
        assert!(report.contains(n), "{report}");
    }
    assert!(report.lines().next().unwrap().split_whitespace().eq(["limit", "max", "used", "peak", "required"]));

    let (_dir, path) = temp("roundtrip");
    ctx.export_limits(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("max_data_objects = 5"), "{text}");
    assert!(text.contains("max_graphs = 3"), "{text}");
    assert_eq!(Limits::from_file(&path).unwrap(), ctx.peak_limits());

    let shipped = Context::builder().threads(1).limits_from_file(&path).unwrap().build().unwrap();
    let c = shipped.config();
    assert_eq!(
        (c.max_graphs, c.max_data_objects, c.max_buffer_bytes, c.max_kernels, c.max_nodes),
        (3, 5, 5 * 512, 0, 0),
        "the limits are the exported peaks"
    );
    let five: Vec<Image> = (0..5).map(|_| Image::new(&shipped, 64, 8, ImageFormat::U8).unwrap()).collect();
    let e = Image::new(&shipped, 64, 8, ImageFormat::U8).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoResources);
    assert!(e.message().contains("limit of 5 data objects"), "{e}");
    assert!(e.message().contains("`max_data_objects`"), "{e}");
    for i in &five {
        i.copy_from(Rect::full(64, 8), 0, &[1u8; 512]).unwrap();
    }
    drop(five);
    let _three: Vec<Graph> = (0..3).map(|_| Graph::new(&shipped).unwrap()).collect();
    let e = Graph::new(&shipped).unwrap_err();
    assert!(e.message().contains("`max_graphs`"), "{e}");
    drop(graphs);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn a_bad_limits_file_is_refused_with_the_reason() {
    let (_dir, path) = temp("bad");
    std::fs::write(&path, "max_graphs = 3\nmax_widgets = 4\n").unwrap();
    let e = Context::builder().limits_from_file(&path).map(|_| ()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParameters);
    assert!(e.message().contains("the limits file is not valid"), "{e}");
    assert!(e.message().contains("max_widgets"), "{e}");
    assert_eq!(e.context().object.as_deref(), Some(path.display().to_string().as_str()));
    std::fs::write(&path, "max_graphs = -1\n").unwrap();
    assert!(Context::builder().limits_from_file(&path).is_err());
    std::fs::remove_file(&path).unwrap();
    let e = Context::builder().limits_from_file(&path).map(|_| ()).unwrap_err();
    assert!(e.message().contains("cannot read the limits file"), "{e}");
}

#[test]
fn a_partial_file_keeps_the_other_limits() {
    let (_dir, path) = temp("partial");
    std::fs::write(&path, "max_nodes = 7\n").unwrap();
    let ctx = Context::builder().max_graphs(9).limits_from_file(&path).unwrap().build().unwrap();
    assert_eq!((ctx.config().max_nodes, ctx.config().max_graphs), (7, 9));
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn the_limits_file_is_written_whole_never_through_a_link_and_read_within_a_bound() {
    let ctx = Context::builder().threads(1).build().unwrap();
    let (dir, path) = temp("linked");
    // A link planted where the file goes: replaced by the file, its target untouched.
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    std::os::unix::fs::symlink(&victim, &path).unwrap();
    ctx.export_limits(&path).unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(!std::fs::symlink_metadata(&path).unwrap().file_type().is_symlink());
    assert_eq!(Limits::from_file(&path).unwrap(), ctx.peak_limits());
    // Nothing else is left in the directory (the file is written under another name first).
    let mut names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    assert_eq!(names, ["linked.toml", "victim"]);
    // A directory where the file goes: an error naming it, the directory as it was.
    let sub = dir.path().join("sub.toml");
    std::fs::create_dir(&sub).unwrap();
    let e = ctx.export_limits(&sub).unwrap_err();
    assert_eq!(e.context().object.as_deref(), Some(sub.display().to_string().as_str()), "{e}");
    assert!(sub.is_dir());
    let mut names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    assert_eq!(names, ["linked.toml", "sub.toml", "victim"], "the failed write left nothing");
    // A file that never ends, and one past the bound: refused, not read into memory.
    let e = Limits::from_file("/dev/zero").unwrap_err();
    assert!(e.to_string().contains("too large"), "{e}");
    let big = dir.path().join("big.toml");
    std::fs::write(&big, "# x\n".repeat((MAX_LIMITS_FILE_BYTES / 4) as usize + 1)).unwrap();
    assert!(Limits::from_file(&big).unwrap_err().to_string().contains("too large"));
}
