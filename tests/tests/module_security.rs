//! Issue 31: module loading that other local users cannot subvert. Each attack is reproduced as it
//! worked before — a pre-created shadow directory with links, a copy swapped between its check and
//! its mapping, a world-writable plugin directory, a group-writable or foreign module file, a link
//! planted in a plugin directory — and refused with a clear error, the victim file unchanged.
//! Then digest pinning (load, refusal, a refused reload keeping the old version), and the fallback
//! for kernels without `memfd_create`.
//!
//! The tests run as root (here and in CI); the other user is uid 65534 (`nobody`), made with chown
//! and a child process that drops to it.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use vx::*;
use vx_tests::{plugin_dir, testmod};

const OTHER_USER: u32 = 65534;
/// `nogroup`: a group that is no account's own (only nobody's primary group).
const NOGROUP: u32 = 65534;

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn chown(p: &Path, uid: u32) {
    std::os::unix::fs::lchown(p, Some(uid), Some(uid)).unwrap();
}

fn chgrp(p: &Path, gid: u32) {
    std::os::unix::fs::lchown(p, None, Some(gid)).unwrap();
}

fn as_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// `testmod.invert` of 10 through a fresh graph: 245 for version 1, 246 for version 2.
fn invert_10(ctx: &Context) -> u8 {
    let k = ctx.kernel_by_name("testmod.invert").unwrap();
    let g = Graph::new(ctx).unwrap();
    let src = Image::new(ctx, 1, 1, ImageFormat::U8).unwrap();
    src.copy_from(Rect::full(1, 1), 0, &[10u8]).unwrap();
    let dst = Image::new(ctx, 1, 1, ImageFormat::U8).unwrap();
    g.add_node(&k, [&src, &dst]).unwrap();
    g.process().unwrap();
    dst.to_vec::<u8>().unwrap()[0]
}

fn install(dir: &Path, name: &str, lib: &Path) {
    let tmp = dir.join(format!(".{name}.tmp"));
    std::fs::copy(lib, &tmp).unwrap();
    std::fs::rename(&tmp, dir.join(format!("lib{name}.so"))).unwrap();
}

/// A file another user would like to see overwritten, in a directory of its own.
fn victim(tag: &str) -> (PathBuf, PathBuf) {
    let dir = plugin_dir(&format!("victim-{tag}"), &[]);
    let file = dir.join("precious.conf");
    std::fs::write(&file, b"the service's own configuration\n").unwrap();
    (dir, file)
}

fn loaded_version(ctx: &Context, name: &str) -> Option<String> {
    match ctx.module_state(name) {
        Some(ModuleState::Loaded { version, .. }) => Some(version),
        _ => None,
    }
}

/// Run `script` with `sh -c` as the other user; true when it succeeded.
fn as_other_user(script: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", script])
        .uid(OTHER_USER)
        .gid(OTHER_USER)
        .stderr(std::process::Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

#[test]
fn a_precreated_shadow_directory_full_of_links_is_never_written_through() {
    // Before: the copy went to $TMPDIR/vx-rs-modules-<pid>-ctx<id>/lib<name>.<pid>.<n>.so, made
    // with create_dir_all + fs::copy, both of which follow what another user planted there.
    let (victim_dir, victim) = victim("links");
    let before = std::fs::read(&victim).unwrap();
    let lib = testmod("testmod_planted", &[]);
    let dir = plugin_dir("planted", &[("testmod_planted", &lib)]);
    let ctx = Context::new().unwrap();
    let id: String =
        format!("{ctx:?}").split("id: ").nth(1).unwrap().chars().take_while(char::is_ascii_digit).collect();
    let pid = std::process::id();
    let trap = std::env::temp_dir().join(format!("vx-rs-modules-{pid}-ctx{id}"));
    let _ = std::fs::remove_dir_all(&trap);
    std::fs::create_dir(&trap).unwrap();
    for n in 0..512 {
        let link = trap.join(format!("libtestmod_planted.{pid}.{n}.so"));
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        if as_root() {
            chown(&link, OTHER_USER);
        }
    }
    chmod(&trap, 0o777);
    if as_root() {
        chown(&trap, OTHER_USER);
    }
    ctx.add_module_dir(&dir);
    ctx.load_module("testmod_planted").unwrap();
    ctx.reload_module("testmod_planted").unwrap();
    // The fallback (no memfd_create) does not go there either: its directory is mkdtemp's.
    vx::__test_hooks::force_directory_copies(true);
    let fallback = ctx.reload_module("testmod_planted");
    vx::__test_hooks::force_directory_copies(false);
    fallback.unwrap();
    assert_eq!(invert_10(&ctx), 245);
    assert_eq!(std::fs::read(&victim).unwrap(), before, "the victim file is unchanged");
    let planted = std::fs::read_dir(&trap).unwrap().flatten().filter(|e| e.path().is_symlink()).count();
    assert_eq!(std::fs::read_dir(&trap).unwrap().count(), 512, "nothing added to the planted directory");
    assert_eq!(planted, 512, "every planted link is still a link");
    ctx.unload_module("testmod_planted").unwrap();
    std::fs::remove_dir_all(trap).unwrap();
    std::fs::remove_dir_all(victim_dir).unwrap();
    std::fs::remove_dir_all(dir).unwrap();
}

/// What happened in the window between the checks and `dlopen`.
#[derive(Debug, Default)]
struct Window {
    path: Option<PathBuf>,
    /// This process (root) writing the copy: the error.
    own_write: Option<std::io::Error>,
    /// The other user writing the copy: whether it succeeded.
    other_user_wrote: Option<bool>,
}

/// Load `name` with a hook in the window that tries to change the copy (as this process, when
/// `own_write`, and as the other user) and swaps the original file for `swap_in`.
fn load_with_attacks(ctx: &Context, name: &str, dir: &Path, swap_in: &Path, own_write: bool) -> (Result<()>, Window) {
    let seen = Arc::new(Mutex::new(Window::default()));
    let (s, evil, dir, name_) = (seen.clone(), swap_in.to_path_buf(), dir.to_path_buf(), name.to_owned());
    vx::__test_hooks::before_map(Some(Box::new(move |path: &Path| {
        let mut w = s.lock().unwrap();
        w.path = Some(path.to_path_buf());
        let bytes = std::fs::read(&evil).unwrap();
        if own_write {
            let r = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .and_then(|mut f| std::io::Write::write_all(&mut f, &bytes));
            w.own_write = r.err();
        }
        // The other user reaches this process's descriptors through /proc/<pid>/fd.
        let other = path.to_string_lossy().replace("/proc/self/", &format!("/proc/{}/", std::process::id()));
        if as_root() {
            w.other_user_wrote = Some(as_other_user(&format!("cat '{}' > '{other}'", evil.display())));
        }
        // And the original is replaced after it was checked (its owner's build, or anyone's).
        install(&dir, &name_, &evil);
    })));
    let r = ctx.load_module(name);
    vx::__test_hooks::before_map(None);
    let w = std::mem::take(&mut *seen.lock().unwrap());
    (r, w)
}

#[test]
fn a_copy_swapped_between_its_check_and_its_mapping_cannot_be_changed() {
    let (v1, v2) = (testmod("testmod_swap", &[]), testmod("testmod_swap", &["v2"]));
    let dir = plugin_dir("swap", &[("testmod_swap", &v1)]);
    let ctx = Context::new().unwrap();
    ctx.add_module_dir(&dir);
    let (r, w) = load_with_attacks(&ctx, "testmod_swap", &dir, &v2, true);
    r.unwrap();
    let path = w.path.expect("the hook ran");
    assert!(path.starts_with("/proc/self/fd/"), "a memory file: {}", path.display());
    // The copy is sealed: not even this process can write it.
    let e = w.own_write.expect("writing the sealed copy failed");
    assert_eq!(e.raw_os_error(), Some(libc::EPERM), "{e}");
    if as_root() {
        assert_eq!(w.other_user_wrote, Some(false), "the other user cannot reach the copy");
    }
    // What was checked is what runs: version 1, though the file now holds version 2.
    assert_eq!(loaded_version(&ctx, "testmod_swap").as_deref(), Some("1.0.0"));
    assert_eq!(invert_10(&ctx), 245);
    ctx.reload_module("testmod_swap").unwrap();
    assert_eq!(invert_10(&ctx), 246, "the next reload takes the new file, checked in turn");
    ctx.unload_module("testmod_swap").unwrap();

    // The fallback's copy lives in a 0700 directory of this user's: the other user cannot reach it.
    install(&dir, "testmod_swap", &v1);
    vx::__test_hooks::force_directory_copies(true);
    let (r, w) = load_with_attacks(&ctx, "testmod_swap", &dir, &v2, false);
    vx::__test_hooks::force_directory_copies(false);
    r.unwrap();
    let path = w.path.expect("the hook ran");
    let prefix = format!("vx-rs-modules-{}-", std::process::id());
    let parent = path.parent().unwrap();
    assert!(parent.file_name().unwrap().to_string_lossy().starts_with(&prefix), "{}", path.display());
    assert!(!parent.exists(), "the fallback directory is removed once mapped");
    if as_root() {
        assert_eq!(w.other_user_wrote, Some(false), "the other user cannot write into the private directory");
    }
    assert_eq!(loaded_version(&ctx, "testmod_swap").as_deref(), Some("1.0.0"));
    assert_eq!(invert_10(&ctx), 245);
    ctx.unload_module("testmod_swap").unwrap();
    assert_eq!(ctx.module_state("testmod_swap"), Some(ModuleState::Unloaded));
    std::fs::remove_dir_all(dir).unwrap();
}

/// The refusal of loading `name` in a fresh default context searching `dir`.
fn refusal(dir: &Path, name: &str) -> Error {
    let ctx = Context::new().unwrap();
    ctx.add_module_dir(dir);
    let e = ctx.load_module(name).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidModule, "{e}");
    assert_eq!(ctx.module_state(name), None, "nothing loaded");
    assert_eq!(ctx.kernel_count(), 0, "nothing registered");
    e
}

fn assert_refused(e: &Error, path: &Path, detail: &str) {
    let m = e.to_string();
    eprintln!("refused: {m}");
    assert!(m.contains(&format!("refusing {} (", path.display())), "names the path: {m}");
    assert!(m.contains(detail), "says why ({detail}): {m}");
    assert!(m.contains("ContextBuilder::module_trust(ModuleTrust::any())"), "names the setting: {m}");
}

#[test]
fn a_plugin_directory_others_can_write_is_refused() {
    let lib = testmod("testmod_ww", &[]);
    let outer = plugin_dir("ww", &[]);
    let dir = outer.join("plugins");
    std::fs::create_dir(&dir).unwrap();
    chmod(&dir, 0o755);
    install(&dir, "testmod_ww", &lib);
    let file = dir.join("libtestmod_ww.so");
    let digest = module_digest(&file).unwrap();

    chmod(&dir, 0o777);
    let e = refusal(&dir, "testmod_ww");
    assert_refused(&e, &dir, "owner uid 0, group 0, mode 0777: writable by others");
    assert!(e.to_string().contains("every directory above a module"), "{e}");
    // Group-writable: refused for a group others are in (nogroup: nobody's primary group), accepted
    // for the owner's own user-private group (umask 002; module::trust's unit tests pin the rule).
    chmod(&dir, 0o775);
    chgrp(&dir, NOGROUP);
    assert_refused(&refusal(&dir, "testmod_ww"), &dir, "group 65534, mode 0775: writable by group");
    chgrp(&dir, 0);
    // Any directory above counts.
    chmod(&dir, 0o755);
    chmod(&outer, 0o777);
    assert_refused(&refusal(&dir, "testmod_ww"), &outer, "mode 0777: writable by others");
    // A root-owned sticky directory (like /tmp) is fine: others cannot rename or remove our entries.
    if as_root() {
        chmod(&outer, 0o1777);
        let ctx = Context::new().unwrap();
        ctx.add_module_dir(&dir);
        ctx.load_module("testmod_ww").unwrap();
        // Owned by another user: refused even with the sticky bit.
        chown(&outer, OTHER_USER);
        assert_refused(
            &refusal(&dir, "testmod_ww"),
            &outer,
            &format!("owner uid {OTHER_USER}, group {OTHER_USER}, mode 1777"),
        );
        chown(&outer, 0);
        chmod(&outer, 0o755);
        chown(&dir, OTHER_USER);
        assert_refused(&refusal(&dir, "testmod_ww"), &dir, "mode 0755: owned by another user");
        chown(&dir, 0);
    }
    // The development setting relaxes it.
    chmod(&dir, 0o777);
    let ctx = Context::builder().module_trust(ModuleTrust::any()).build().unwrap();
    ctx.add_module_dir(&dir);
    ctx.load_module("testmod_ww").unwrap();
    assert_eq!(invert_10(&ctx), 245);
    assert_eq!(module_digest(&file).unwrap(), digest, "the module file is unchanged");
    chmod(&dir, 0o755);
    std::fs::remove_dir_all(outer).unwrap();
}

#[test]
fn a_module_file_others_can_write_or_own_is_refused() {
    let lib = testmod("testmod_gw", &[]);
    let dir = plugin_dir("gw", &[("testmod_gw", &lib)]);
    let file = dir.join("libtestmod_gw.so");
    let digest = module_digest(&file).unwrap();
    chmod(&file, 0o664);
    chgrp(&file, NOGROUP);
    let e = refusal(&dir, "testmod_gw");
    assert_refused(&e, &file, "owner uid 0, group 65534, mode 0664: writable by group");
    chgrp(&file, 0);
    assert!(e.to_string().contains("a module file must be owned by root or this process's user"), "{e}");
    chmod(&file, 0o757);
    assert_refused(&refusal(&dir, "testmod_gw"), &file, "mode 0757: writable by others");
    chmod(&file, 0o755);
    if as_root() {
        chown(&file, OTHER_USER);
        assert_refused(
            &refusal(&dir, "testmod_gw"),
            &file,
            &format!("owner uid {OTHER_USER}, group {OTHER_USER}, mode 0755: owned by another user"),
        );
        chown(&file, 0);
    }
    assert_eq!(module_digest(&file).unwrap(), digest, "the module file is unchanged");
    let ctx = Context::new().unwrap();
    ctx.add_module_dir(&dir);
    ctx.load_module("testmod_gw").unwrap();
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_link_in_a_plugin_directory_is_checked_where_it_leads() {
    let lib = testmod("testmod_link", &[]);
    let dir = plugin_dir("link", &[]);
    let elsewhere = plugin_dir("link-target", &[("testmod_link", &lib)]);
    std::os::unix::fs::symlink(elsewhere.join("libtestmod_link.so"), dir.join("libtestmod_link.so")).unwrap();
    let ctx = Context::new().unwrap();
    ctx.add_module_dir(&dir);
    ctx.load_module("testmod_link").unwrap();
    ctx.unload_module("testmod_link").unwrap();
    chmod(&elsewhere, 0o777);
    assert_refused(&refusal(&dir, "testmod_link"), &elsewhere, "writable by others");
    chmod(&elsewhere, 0o755);
    if as_root() {
        // A link planted by another user (as it could in a sticky directory) is not followed.
        chown(&dir.join("libtestmod_link.so"), OTHER_USER);
        let e = refusal(&dir, "testmod_link");
        assert!(e.to_string().contains("a symbolic link on the way to a module must be owned"), "{e}");
    }
    std::fs::remove_dir_all(dir).unwrap();
    std::fs::remove_dir_all(elsewhere).unwrap();
}

#[test]
fn pinned_digests_decide_which_builds_run() {
    let (v1, v2) = (testmod("testmod_pin", &[]), testmod("testmod_pin", &["v2"]));
    let other = testmod("testmod_unpinned", &[]);
    let dir = plugin_dir("pin", &[("testmod_pin", &v1), ("testmod_unpinned", &other)]);
    let (d1, d2) = (module_digest(&v1).unwrap(), module_digest(&v2).unwrap());
    assert_eq!(module_digest(dir.join("libtestmod_pin.so")).unwrap(), d1);
    let ctx = Context::builder().module_trust(ModuleTrust::owner().pin("testmod_pin", &d1).unwrap()).build().unwrap();
    ctx.add_module_dir(&dir);
    // Listed: loads.
    ctx.load_module("testmod_pin").unwrap();
    assert_eq!(invert_10(&ctx), 245);
    // Unlisted module: refused, with its digest and how to pin it.
    let e = ctx.load_module("testmod_unpinned").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidModule);
    let m = e.to_string();
    eprintln!("refused: {m}");
    let du = module_digest(&other).unwrap();
    assert!(m.contains(&format!("has SHA-256 {du}, which is not pinned for it (pinned: none)")), "{m}");
    assert!(m.contains(&format!("ModuleTrust::pin(\"testmod_unpinned\", \"{du}\")")), "{m}");
    assert_eq!(ctx.module_state("testmod_unpinned"), None);
    // A changed file: the reload is refused and the old version keeps running.
    install(&dir, "testmod_pin", &v2);
    let e = ctx.reload_module("testmod_pin").unwrap_err();
    assert!(e.to_string().contains(&format!("has SHA-256 {d2}, which is not pinned for it (pinned: {d1})")), "{e}");
    assert_eq!(loaded_version(&ctx, "testmod_pin").as_deref(), Some("1.0.0"));
    assert_eq!(invert_10(&ctx), 245, "version 1 still serves");
    assert!(ctx.module_history("testmod_pin").is_empty(), "no version was replaced");
    ctx.unload_module("testmod_pin").unwrap();
    assert!(ctx.load_module("testmod_pin").is_err(), "nor does it load afresh");
    // Both builds pinned: the reload goes through.
    let both = ModuleTrust::owner().pin("testmod_pin", &d1).unwrap().pin("testmod_pin", &d2).unwrap();
    let ctx = Context::builder().module_trust(both).build().unwrap();
    ctx.add_module_dir(&dir);
    install(&dir, "testmod_pin", &v1);
    ctx.load_module("testmod_pin").unwrap();
    install(&dir, "testmod_pin", &v2);
    ctx.reload_module("testmod_pin").unwrap();
    assert_eq!(invert_10(&ctx), 246);
    // Pinning applies with the ownership rule relaxed too.
    chmod(&dir, 0o777);
    let ctx = Context::builder().module_trust(ModuleTrust::any().pin("testmod_pin", &d1).unwrap()).build().unwrap();
    ctx.add_module_dir(&dir);
    assert!(ctx.load_module("testmod_pin").unwrap_err().to_string().contains("not pinned"));
    chmod(&dir, 0o755);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_fallback_loads_from_a_private_directory_and_leaves_nothing() {
    let lib = testmod("testmod_fallback", &[]);
    let dir = plugin_dir("fallback", &[("testmod_fallback", &lib)]);
    let ctx = Context::new().unwrap();
    ctx.add_module_dir(&dir);
    vx::__test_hooks::force_directory_copies(true);
    ctx.load_module("testmod_fallback").unwrap();
    ctx.reload_module("testmod_fallback").unwrap();
    vx::__test_hooks::force_directory_copies(false);
    assert_eq!(invert_10(&ctx), 245);
    // Mapped from a file of a mkdtemp directory, both already gone from the disk.
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let temp = std::env::temp_dir().join(format!("vx-rs-modules-{}-", std::process::id()));
    let line = maps.lines().find(|l| l.contains("libtestmod_fallback.")).expect("mapped");
    assert!(line.contains(&*temp.to_string_lossy()) && line.ends_with("(deleted)"), "{line}");
    let left: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.path().to_string_lossy().starts_with(&*temp.to_string_lossy()))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    ctx.unload_module("testmod_fallback").unwrap();
    assert_eq!(ctx.module_state("testmod_fallback"), Some(ModuleState::Unloaded));
    assert_eq!(ctx.module_history("testmod_fallback")[0].1, ModuleState::Unloaded, "the replaced version too");
    std::fs::remove_dir_all(dir).unwrap();
}
