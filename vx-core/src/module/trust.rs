//! Whether a module file may be loaded under the context's [`ModuleTrust`]: a walk from `/` to the
//! file, symbolic links resolved by hand, that checks every directory, link and the file itself
//! (owner root or this process's user, writable by no one else; a root-owned sticky directory such
//! as `/tmp` accepted), then the file opened without following links and confirmed by `fstat` to be
//! the one checked. Also SHA-256 digests of module files (`module_digest`, for pinning).
//!
//! Checking top-down is what makes the walk race-free against other users: once a directory is known
//! to be writable only by root or us, nobody else can replace what is below it.

use std::ffi::OsString;
use std::fs::{File, Metadata};
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{Error, ErrorKind, Result};
use crate::shared::ModuleTrust;
use crate::shared::trust::hex;

/// Most symbolic links followed on the way to a module (as the kernel's `ELOOP` limit).
const MAX_LINKS: usize = 40;

/// This process's effective user id (the one files are created and opened as).
pub(super) fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// What a path on the way to a module is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Directory,
    Link,
    File,
}

/// Why `meta` (of a `role`) must not be trusted, or `None`.
fn verdict(role: Role, meta: &Metadata, euid: u32) -> Option<&'static str> {
    let (uid, mode) = (meta.uid(), meta.mode());
    if uid != 0 && uid != euid {
        return Some("owned by another user");
    }
    if role == Role::Link {
        return None; // a link's own mode is always 0777 and means nothing
    }
    // A directory owned by root with the sticky bit (/tmp): others may add entries, but not
    // rename or remove ours.
    let sticky_root = role == Role::Directory && uid == 0 && mode & 0o1000 != 0;
    if mode & 0o002 != 0 && !sticky_root {
        return Some("writable by others");
    }
    if mode & 0o020 != 0 && !sticky_root && !private_group(uid, meta.gid()) {
        return Some("writable by group");
    }
    None
}

/// Is `gid` the user-private group of `uid` — the one account whose primary group it is, with no
/// other member? That is the default on Debian, Ubuntu and Fedora, where `umask 002` makes a user's
/// files group-writable and no one else can write them. Read from /etc/passwd and /etc/group; an
/// unreadable file, a group listed twice or any other account in it means no (fail closed).
/// Accounts known only to other name services (LDAP, …) are not seen: such sites keep umask 022.
fn private_group(uid: u32, gid: u32) -> bool {
    match (std::fs::read_to_string("/etc/passwd"), std::fs::read_to_string("/etc/group")) {
        (Ok(passwd), Ok(group)) => private_group_in(uid, gid, &passwd, &group),
        _ => false,
    }
}

/// [`private_group`] over the text of `passwd` and `group` files.
fn private_group_in(uid: u32, gid: u32, passwd: &str, group: &str) -> bool {
    fn fields(line: &str) -> Option<Vec<&str>> {
        let f: Vec<&str> = line.split(':').collect();
        (f.len() >= 4 && !line.starts_with('#')).then_some(f)
    }
    let mut owner: Option<&str> = None;
    for f in passwd.lines().filter_map(fields) {
        let (Ok(u), Ok(g)) = (f[2].parse::<u32>(), f[3].parse::<u32>()) else { continue };
        if u == uid {
            if g != gid {
                return false; // not the owner's primary group
            }
            owner = Some(f[0]);
        } else if g == gid {
            return false; // another account's primary group too
        }
    }
    let Some(owner) = owner else { return false };
    let mut entries = group.lines().filter_map(fields).filter(|f| f[2].parse::<u32>() == Ok(gid));
    let (Some(entry), None) = (entries.next(), entries.next()) else { return false };
    entry[3].split(',').all(|m| m.is_empty() || m == owner)
}

/// The refusal of `path` (`subject`: what it was for, e.g. "module 'filters'").
fn refusal(subject: &str, path: &Path, role: Role, meta: &Metadata, why: &str, euid: u32) -> Error {
    let rule = match role {
        Role::Directory => format!(
            "every directory above a module must be owned by root or this process's user (uid {euid}) and writable by \
             no one else (a root-owned sticky directory such as /tmp is accepted, and so is the owner's own \
             user-private group)"
        ),
        Role::Link => {
            format!("a symbolic link on the way to a module must be owned by root or this process's user (uid {euid})")
        }
        Role::File => format!(
            "a module file must be owned by root or this process's user (uid {euid}) and writable by no one else \
             (the owner's own user-private group may write it)"
        ),
    };
    Error::new(
        ErrorKind::InvalidModule,
        format!(
            "{subject}: refusing {} (owner uid {}, group {}, mode {:04o}: {why}) — {rule}; `chmod go-w` on it fixes \
             this, and ContextBuilder::module_trust(ModuleTrust::any()) relaxes the rule for development",
            path.display(),
            meta.uid(),
            meta.gid(),
            meta.mode() & 0o7777,
        ),
    )
    .on_object(&path.display().to_string())
}

fn io_error(subject: &str, path: &Path, what: &str, e: std::io::Error) -> Error {
    Error::new(ErrorKind::InvalidModule, format!("{subject}: cannot {what} {}: {e}", path.display()))
        .on_object(&path.display().to_string())
}

/// The components of `path` to walk, first component last (a stack).
fn push_components(stack: &mut Vec<OsString>, path: &Path) {
    let parts: Vec<OsString> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_owned()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect();
    stack.extend(parts.into_iter().rev());
}

/// Walk from `/` to `path`, resolving symbolic links by hand and (when `check`) checking every
/// directory entered, every link followed and the final entry. Returns the canonical path and the
/// final entry's metadata (`lstat`). `want_dir`: the final entry must be a directory, else a file.
fn walk(subject: &str, path: &Path, want_dir: bool, check: bool) -> Result<(PathBuf, Metadata)> {
    let euid = euid();
    let start = if path.is_absolute() {
        path.to_path_buf()
    } else {
        let cwd = std::env::current_dir().map_err(|e| io_error(subject, path, "resolve (no working directory)", e))?;
        cwd.join(path)
    };
    let lstat = |p: &Path| std::fs::symlink_metadata(p).map_err(|e| io_error(subject, p, "examine", e));
    let mut cur = PathBuf::from("/");
    let mut meta = lstat(&cur)?;
    if check && let Some(why) = verdict(Role::Directory, &meta, euid) {
        return Err(refusal(subject, &cur, Role::Directory, &meta, why, euid));
    }
    let mut stack = Vec::new();
    push_components(&mut stack, &start);
    let mut links = 0;
    while let Some(c) = stack.pop() {
        if c == ".." {
            // `cur` is canonical and was checked on the way down.
            cur.pop();
            meta = lstat(&cur)?;
            continue;
        }
        let next = cur.join(&c);
        let m = lstat(&next)?;
        let kind = m.file_type();
        if kind.is_symlink() {
            links += 1;
            if links > MAX_LINKS {
                return Err(io_error(subject, path, "resolve", std::io::Error::from_raw_os_error(libc::ELOOP)));
            }
            if check && let Some(why) = verdict(Role::Link, &m, euid) {
                return Err(refusal(subject, &next, Role::Link, &m, why, euid));
            }
            let target = std::fs::read_link(&next).map_err(|e| io_error(subject, &next, "read the link", e))?;
            if target.is_absolute() {
                cur = PathBuf::from("/");
            }
            push_components(&mut stack, &target);
            continue;
        }
        if kind.is_dir() {
            if check && let Some(why) = verdict(Role::Directory, &m, euid) {
                return Err(refusal(subject, &next, Role::Directory, &m, why, euid));
            }
        } else if !stack.is_empty() {
            return Err(io_error(subject, &next, "enter", std::io::Error::from_raw_os_error(libc::ENOTDIR)));
        } else if !kind.is_file() {
            return Err(Error::new(
                ErrorKind::InvalidModule,
                format!("{subject}: {} is not a regular file", next.display()),
            )
            .on_object(&next.display().to_string()));
        } else if check && let Some(why) = verdict(Role::File, &m, euid) {
            return Err(refusal(subject, &next, Role::File, &m, why, euid));
        }
        cur = next;
        meta = m;
    }
    if meta.is_dir() != want_dir {
        let what = if want_dir { "not a directory" } else { "a directory, not a module file" };
        return Err(Error::new(ErrorKind::InvalidModule, format!("{subject}: {} is {what}", cur.display()))
            .on_object(&cur.display().to_string()));
    }
    Ok((cur, meta))
}

/// Open module `name`'s file at `path` for reading under `trust`: with owner checks, the walk above,
/// then the canonical path opened with `O_NOFOLLOW` and confirmed (device, inode, owner, mode) to be
/// the file checked. Returns the open file and the path it was opened at.
pub(super) fn open_module(name: &str, path: &Path, trust: &ModuleTrust) -> Result<(File, PathBuf)> {
    let subject = format!("module '{name}'");
    let open = |p: &Path, flags: i32| {
        std::fs::OpenOptions::new().read(true).custom_flags(flags).open(p).map_err(|e| io_error(&subject, p, "open", e))
    };
    if !trust.checks_owners() {
        return Ok((open(path, 0)?, path.to_path_buf()));
    }
    let (canonical, checked) = walk(&subject, path, false, true)?;
    let file = open(&canonical, libc::O_NOFOLLOW)?;
    let meta = file.metadata().map_err(|e| io_error(&subject, &canonical, "examine", e))?;
    if (meta.dev(), meta.ino()) != (checked.dev(), checked.ino()) {
        return Err(Error::new(
            ErrorKind::InvalidModule,
            format!("{subject}: {} was replaced between its check and its opening; not loaded", canonical.display()),
        )
        .on_object(&canonical.display().to_string()));
    }
    let euid = euid();
    if let Some(why) = verdict(Role::File, &meta, euid) {
        return Err(refusal(&subject, &canonical, Role::File, &meta, why, euid));
    }
    Ok((file, canonical))
}

/// The refusal of module `name`'s file `path`, whose SHA-256 `digest` is not pinned.
pub(super) fn pin_refusal(name: &str, path: &Path, digest: &[u8; 32], trust: &ModuleTrust) -> Error {
    let pinned = trust.pinned(name);
    let listed = if pinned.is_empty() { "none".to_owned() } else { pinned.join(", ") };
    let d = hex(digest);
    Error::new(
        ErrorKind::InvalidModule,
        format!(
            "module '{name}': {} has SHA-256 {d}, which is not pinned for it (pinned: {listed}); if this build is meant \
             to run, add it with ModuleTrust::pin(\"{name}\", \"{d}\")",
            path.display()
        ),
    )
    .on_object(&path.display().to_string())
}

/// Whether module `name`'s file at `path` passes `trust` — owners and modes, and the pinned digest
/// (of the file as it is now) — without loading it (the watcher's look before it loads).
pub(crate) fn vet(name: &str, path: &Path, trust: &ModuleTrust) -> Result<()> {
    let (mut file, opened) = open_module(name, path, trust)?;
    if trust.pins_digests() {
        let digest = sha256_of(&mut file).map_err(|e| io_error(&format!("module '{name}'"), &opened, "read", e))?;
        if !trust.allows_digest(name, &digest) {
            return Err(pin_refusal(name, &opened, &digest, trust));
        }
    }
    Ok(())
}

/// Check that `dir` and every directory above it would pass `trust` (e.g. a watched plugin
/// directory; `subject` says what for in errors); returns its canonical path.
pub(crate) fn check_dir(subject: &str, dir: &Path, trust: &ModuleTrust) -> Result<PathBuf> {
    Ok(walk(subject, dir, true, trust.checks_owners())?.0)
}

fn sha256_of(f: &mut File) -> std::io::Result<[u8; 32]> {
    let mut h = Sha256Hasher::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match f.read(&mut buf) {
            Ok(0) => return Ok(h.finish()),
            Ok(n) => h.update(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// A SHA-256 computed over bytes as they are copied.
pub(super) struct Sha256Hasher(Sha256);

impl Sha256Hasher {
    pub(super) fn new() -> Sha256Hasher {
        Sha256Hasher(Sha256::new())
    }
    pub(super) fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
    pub(super) fn finish(self) -> [u8; 32] {
        self.0.finalize().into()
    }
}

/// The SHA-256 of a module file, as [`ModuleTrust::pin`] takes it (64 lower-case hex digits).
pub fn module_digest(path: impl AsRef<Path>) -> Result<String> {
    let path = path.as_ref();
    let fail = |e: std::io::Error| {
        Error::new(ErrorKind::InvalidParameters, format!("cannot read {}: {e}", path.display()))
            .on_object(&path.display().to_string())
    };
    let mut f = File::open(path).map_err(fail)?;
    Ok(hex(&sha256_of(&mut f).map_err(fail)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn scratch(tag: &str) -> PathBuf {
        let d = tempfile::Builder::new().prefix(&format!("vx-rs-trust-{tag}-")).tempdir().unwrap().keep();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        d
    }

    fn chmod(p: &Path, mode: u32) {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    fn chown(p: &Path, uid: u32) {
        std::os::unix::fs::lchown(p, Some(uid), None).unwrap();
    }

    #[test]
    fn owner_and_mode_decide_the_verdict() {
        let d = scratch("verdict");
        let f = d.join("libm.so");
        std::fs::write(&f, b"x").unwrap();
        chmod(&f, 0o644);
        let trust = ModuleTrust::owner();
        let (file, canonical) = open_module("m", &f, &trust).unwrap();
        assert_eq!(canonical, f.canonicalize().unwrap());
        drop(file);
        chmod(&f, 0o664);
        // A group shared with another account (nogroup is nobody's primary group) may not write it.
        std::os::unix::fs::lchown(&f, None, Some(65534)).unwrap();
        let e = open_module("m", &f, &trust).unwrap_err().to_string();
        assert!(e.contains("group 65534, mode 0664: writable by group") && e.contains("chmod go-w"), "{e}");
        assert!(e.contains("ModuleTrust::any()"), "{e}");
        // The owner's user-private group may (umask 002), as the system's account files say.
        let own_gid = std::fs::metadata(&d).unwrap().gid();
        std::os::unix::fs::lchown(&f, None, Some(own_gid)).unwrap();
        assert_eq!(
            open_module("m", &f, &trust).is_ok(),
            private_group(euid(), own_gid),
            "group-writable is accepted exactly when the group is the owner's own"
        );
        chmod(&f, 0o646);
        assert!(open_module("m", &f, &trust).unwrap_err().to_string().contains("writable by others"));
        assert!(open_module("m", &f, &ModuleTrust::any()).is_ok(), "any: no owner checks");
        chmod(&f, 0o644);
        if euid() == 0 {
            chown(&f, 65534);
            let e = open_module("m", &f, &trust).unwrap_err().to_string();
            assert!(e.contains("owner uid 65534, group ") && e.contains("mode 0644: owned by another user"), "{e}");
            chown(&f, 0);
            chmod(&d, 0o777);
            let e = open_module("m", &f, &trust).unwrap_err().to_string();
            assert!(
                e.contains(&format!(
                    "refusing {} (owner uid 0, group {own_gid}, mode 0777: writable by others)",
                    d.display()
                )),
                "{e}"
            );
            chmod(&d, 0o1777);
            assert!(open_module("m", &f, &trust).is_ok(), "a root-owned sticky directory is accepted");
            chmod(&d, 0o755);
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_user_private_group_is_one_account_s_primary_group_with_no_other_member() {
        let passwd = "root:x:0:0:root:/root:/bin/bash\n\
                      # a comment\n\
                      ann:x:1000:1000:Ann:/home/ann:/bin/sh\n\
                      bob:x:1001:1001::/home/bob:/bin/sh\n\
                      web:x:33:1002::/var/www:/usr/sbin/nologin\n\
                      nobody:x:65534:65534::/nonexistent:/usr/sbin/nologin\n";
        let group = "root:x:0:\nann:x:1000:\nbob:x:1001:bob,ann\nshared:x:1002:\n\
                     staff:x:50:ann\nnogroup:x:65534:\n";
        assert!(private_group_in(1000, 1000, passwd, group), "ann's own group, no members");
        assert!(private_group_in(0, 0, passwd, group), "root's own group");
        assert!(!private_group_in(1001, 1001, passwd, group), "ann is a member of bob's group");
        assert!(!private_group_in(1000, 50, passwd, group), "staff is not ann's primary group");
        assert!(private_group_in(33, 1002, passwd, group), "shared is web's primary group alone, no members");
        assert!(!private_group_in(1000, 65534, passwd, group), "nobody's group");
        assert!(!private_group_in(4242, 4242, passwd, group), "an unknown owner");
        // The group listed twice, or another account with it as primary group: not private.
        assert!(!private_group_in(1000, 1000, passwd, &format!("{group}dup:x:1000:\n")));
        let twin = format!("{passwd}ann2:x:1002:1000::/home/ann2:/bin/sh\n");
        assert!(!private_group_in(1000, 1000, &twin, group));
        // Members naming only the owner are fine.
        assert!(private_group_in(1000, 1000, passwd, &group.replace("ann:x:1000:", "ann:x:1000:ann")));
        assert!(!private_group_in(1000, 1000, "garbage", group), "no passwd entry: no");
    }

    #[test]
    fn links_are_followed_by_hand_and_checked_where_they_lead() {
        let d = scratch("links");
        let real = d.join("real");
        std::fs::create_dir(&real).unwrap();
        chmod(&real, 0o755);
        std::fs::write(real.join("libm.so"), b"x").unwrap();
        chmod(&real.join("libm.so"), 0o644);
        std::os::unix::fs::symlink("real", d.join("plugins")).unwrap();
        std::os::unix::fs::symlink("../real/libm.so", real.join("liblink.so")).unwrap();
        let trust = ModuleTrust::owner();
        let (_, c) = open_module("m", &d.join("plugins/libm.so"), &trust).unwrap();
        assert_eq!(c, real.canonicalize().unwrap().join("libm.so"));
        let (_, c) = open_module("m", &d.join("plugins/liblink.so"), &trust).unwrap();
        assert_eq!(c, real.canonicalize().unwrap().join("libm.so"));
        // The directory a link leads to is checked like any other.
        chmod(&real, 0o777);
        let e = open_module("m", &d.join("plugins/libm.so"), &trust).unwrap_err().to_string();
        assert!(e.contains("writable by others"), "{e}");
        chmod(&real, 0o755);
        if euid() == 0 {
            // A link owned by another user (in a sticky directory it could have planted it).
            chown(&d.join("plugins"), 65534);
            let e = open_module("m", &d.join("plugins/libm.so"), &trust).unwrap_err().to_string();
            assert!(e.contains("a symbolic link on the way to a module"), "{e}");
        }
        std::os::unix::fs::symlink("loop", d.join("loop")).unwrap();
        assert!(open_module("m", &d.join("loop"), &trust).is_err());
        assert!(check_dir("plugins", &real, &trust).is_ok());
        assert!(check_dir("plugins", &real.join("libm.so"), &trust).is_err(), "not a directory");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn digests_are_sha256() {
        let d = scratch("digest");
        std::fs::write(d.join("f"), b"test").unwrap();
        assert_eq!(
            module_digest(d.join("f")).unwrap(),
            "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }
}
