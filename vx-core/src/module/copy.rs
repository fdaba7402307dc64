//! The private copy of a module that the dynamic loader maps. Where the kernel has `memfd_create`,
//! an anonymous memory file named `vx-rs-modules-<pid>-lib<name>.<n>.so`, sealed against any change
//! once written, which `dlopen` opens as `/proc/self/fd/<fd>`: no path in any shared directory, so no
//! other local user can name it, replace it or change its bytes between the checks and the mapping.
//! Elsewhere, a file created with `O_CREAT|O_EXCL|O_NOFOLLOW` in a directory of its own made by
//! `mkdtemp` (mode 0700, checked to be this user's), removed as soon as the library is mapped.
//!
//! The descriptor stays open for as long as the library is loaded: glibc recognizes an already
//! loaded library by its name, and `/proc/self/fd/<fd>` names another file once `<fd>` is reused.

use std::cell::{Cell, RefCell};
use std::ffi::{CString, OsString};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::module::trust::{Sha256Hasher, euid};

static COPY_COUNTER: AtomicU64 = AtomicU64::new(0);

/// The prefix of every private copy's name (memory file or fallback directory) in this process.
pub(super) fn copy_prefix() -> String {
    format!("vx-rs-modules-{}-", std::process::id())
}

/// Hooks for tests of the loader's guarantees, per thread (a load runs on its caller's thread).
/// Not part of the API.
#[doc(hidden)]
pub mod test_hooks {
    use super::*;

    /// A hook called with the path `dlopen` is about to open.
    pub type MapHook = Box<dyn Fn(&Path)>;

    thread_local! {
        pub(super) static BEFORE_MAP: RefCell<Option<MapHook>> = const { RefCell::new(None) };
        pub(super) static DIRECTORY_COPIES: Cell<bool> = const { Cell::new(false) };
    }

    /// Call `hook` with the path `dlopen` is about to open, after every check of the copy and
    /// before it is mapped (the window an attacker would use), on this thread's loads.
    pub fn before_map(hook: Option<MapHook>) {
        BEFORE_MAP.with(|h| *h.borrow_mut() = hook);
    }

    /// Make this thread's loads use the fallback (a `mkdtemp` directory) instead of a memory file.
    pub fn force_directory_copies(on: bool) {
        DIRECTORY_COPIES.with(|c| c.set(on));
    }
}

/// Run the `before_map` hook, if this thread has one.
pub(super) fn run_before_map(path: &Path) {
    let hook = test_hooks::BEFORE_MAP.with(|h| h.borrow_mut().take());
    if let Some(hook) = hook {
        hook(path);
        test_hooks::BEFORE_MAP.with(|h| {
            let mut slot = h.borrow_mut();
            if slot.is_none() {
                *slot = Some(hook);
            }
        });
    }
}

/// One private copy of a module file.
pub(super) struct PrivateCopy {
    /// The copy (the memory file, or the fallback's file), open for as long as the library is
    /// (`None` only once [`keep_open_forever`](Self::keep_open_forever) gave it up).
    file: Option<File>,
    /// What `dlopen` opens and `RTLD_NOLOAD` looks up.
    pub(super) dl_path: PathBuf,
    /// How the copy's mappings are named in `/proc/self/maps`.
    pub(super) maps_name: String,
    /// SHA-256 of the bytes copied, when asked for.
    pub(super) digest: Option<[u8; 32]>,
    /// The fallback's file and directory, removed once mapped (or when the copy is dropped).
    on_disk: Option<(PathBuf, PathBuf)>,
}

impl PrivateCopy {
    /// Copy `source` (from its current offset to its end) into a new private copy for module
    /// `name`, computing the bytes' SHA-256 when `digest`.
    /// More than `max` bytes read from `source` is `FileTooLarge`.
    pub(super) fn new(name: &str, source: &File, digest: bool, max: u64) -> std::io::Result<PrivateCopy> {
        let n = COPY_COUNTER.fetch_add(1, Ordering::Relaxed);
        if !test_hooks::DIRECTORY_COPIES.with(Cell::get) {
            match memory_file(name, n) {
                Ok(copy) => return copy.filled(source, digest, true, max),
                Err(e) if unavailable(&e) => {
                    static SAID: AtomicBool = AtomicBool::new(false);
                    if !SAID.swap(true, Ordering::Relaxed) {
                        tracing::info!(
                            "memfd_create is not available ({e}): module copies go to private mkdtemp directories"
                        );
                    }
                }
                Err(e) => return Err(e),
            }
        }
        in_private_directory(name, n)?.filled(source, digest, false, max)
    }

    /// The copy, open.
    pub(super) fn file(&self) -> &File {
        self.file.as_ref().expect("the copy is open until keep_open_forever, called last")
    }

    /// Never close the copy's descriptor: the dynamic loader still holds a library under the name
    /// `/proc/self/fd/<fd>` (a zombie), and a later copy given the same number would be taken for it.
    pub(super) fn keep_open_forever(&mut self) {
        if let Some(f) = self.file.take() {
            let _ = f.into_raw_fd();
        }
    }

    fn filled(mut self, source: &File, digest: bool, seal: bool, max: u64) -> std::io::Result<PrivateCopy> {
        self.digest = copy_bytes(source, self.file(), digest, max)?;
        if seal {
            seal_against_writes(self.file())?;
        }
        Ok(self)
    }

    /// The library is mapped: the fallback's file and directory are no longer needed (the loader
    /// keeps the path as the library's name), so nothing is left on disk even if the process dies.
    pub(super) fn mapped(&mut self) {
        if let Some((file, dir)) = self.on_disk.take() {
            let _ = std::fs::remove_file(file);
            let _ = std::fs::remove_dir(dir);
        }
    }
}

impl Drop for PrivateCopy {
    fn drop(&mut self) {
        self.mapped();
    }
}

/// Seal the memory file `f` against writes, growth and shrinking, and against removing the seals.
///
/// `F_SEAL_FUTURE_WRITE` rather than `F_SEAL_WRITE` where it works right (Linux 5.5; 5.1–5.4 let a
/// `MAP_PRIVATE` mapping write through to the file, kernel commit 05d351102dbe): both refuse every
/// `write` and every new writable mapping from now on; `F_SEAL_WRITE` also waits until no page of
/// the file has a reference beyond the page cache's, to rule out existing writable mappings — but
/// this file was never mapped and no other user can reach it, and that wait drains every CPU's LRU
/// batches and fails with `EBUSY` when a page stays referenced (reclaim under memory pressure did,
/// 1 copy in ~1,000 on a busy machine). Older kernels get `F_SEAL_WRITE`, retried.
fn seal_against_writes(f: &File) -> std::io::Result<()> {
    let add = |seals: libc::c_int| {
        // SAFETY: fcntl on a descriptor the caller owns, with an integer argument.
        if unsafe { libc::fcntl(f.as_raw_fd(), libc::F_ADD_SEALS, seals) } == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    };
    let others = libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_SEAL;
    if kernel_release().is_some_and(|r| r >= (5, 5)) {
        return add(others | libc::F_SEAL_FUTURE_WRITE);
    }
    let mut tries = 0;
    loop {
        match add(others | libc::F_SEAL_WRITE) {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && tries < 3 => tries += 1,
            r => return r,
        }
    }
}

/// The running kernel's (major, minor) version.
fn kernel_release() -> Option<(u32, u32)> {
    static RELEASE: std::sync::OnceLock<Option<(u32, u32)>> = std::sync::OnceLock::new();
    *RELEASE.get_or_init(|| {
        let r = std::fs::read_to_string("/proc/sys/kernel/osrelease").ok()?;
        parse_release(&r)
    })
}

/// `6.18.44-fc` → (6, 18).
fn parse_release(r: &str) -> Option<(u32, u32)> {
    let mut parts = r.trim().split(['.', '-']);
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.chars().take_while(char::is_ascii_digit).collect::<String>().parse().ok()?;
    Some((major, minor))
}

/// Whether `e` from `memfd_create` means "not here" (then the fallback is used) rather than a failure.
fn unavailable(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::EPERM | libc::EACCES | libc::EINVAL | libc::ENOENT))
}

/// A new memory file for module `name`, copy `n`, executable and sealable.
fn memory_file(name: &str, n: u64) -> std::io::Result<PrivateCopy> {
    // memfd names are at most 249 bytes; module names are not bounded.
    let mut label = format!("{}lib{name}", copy_prefix());
    let suffix = format!(".{n}.so");
    while label.len() + suffix.len() > 249 {
        label.pop();
    }
    label.push_str(&suffix);
    let c = CString::new(label.as_bytes()).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    let base = libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING;
    // SAFETY: memfd_create reads the NUL-terminated name and returns a new descriptor or -1.
    // MFD_EXEC (Linux 6.3) keeps the file executable under vm.memfd_noexec=1; older kernels refuse
    // the flag with EINVAL, and their memory files are always executable.
    let mut fd = unsafe { libc::memfd_create(c.as_ptr(), base | libc::MFD_EXEC) };
    if fd < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL) {
        // SAFETY: as above.
        fd = unsafe { libc::memfd_create(c.as_ptr(), base) };
    }
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by memfd_create and is owned by nobody else.
    let mut file = unsafe { File::from_raw_fd(fd) };
    // The dynamic loader opens it by path: /proc must be there, and the name must not already be a
    // loaded library's (someone else's `/proc/self/fd/<fd>` from a descriptor since closed).
    let mut dl_path = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
    if !dl_path.exists() {
        return Err(std::io::Error::from_raw_os_error(libc::ENOENT));
    }
    let mut parked = Vec::new();
    while loader_knows(&dl_path) {
        if parked.len() >= 8 {
            return Err(std::io::Error::other("the dynamic loader holds libraries under every descriptor tried"));
        }
        let other = file.try_clone()?; // a new descriptor number for the same file
        parked.push(std::mem::replace(&mut file, other));
        dl_path = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
    }
    drop(parked);
    Ok(PrivateCopy { file: Some(file), dl_path, maps_name: format!("/memfd:{label}"), digest: None, on_disk: None })
}

/// Whether the dynamic loader has a library loaded under the name `path`.
pub(super) fn loader_knows(path: &Path) -> bool {
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else { return false };
    // SAFETY: RTLD_NOLOAD only looks the library up; it maps nothing new. A non-null handle bumps
    // the reference count, so it is closed again right away.
    unsafe {
        let h = libc::dlopen(c.as_ptr(), libc::RTLD_NOLOAD | libc::RTLD_LAZY);
        if !h.is_null() {
            libc::dlclose(h);
        }
        !h.is_null()
    }
}

/// The fallback: a directory made by `mkdtemp` in the temp directory (mode 0700, checked to be
/// ours) and the copy created in it exclusively, never through a link.
fn in_private_directory(name: &str, n: u64) -> std::io::Result<PrivateCopy> {
    let template = std::env::temp_dir().join(format!("{}XXXXXX", copy_prefix()));
    let mut bytes = CString::new(template.into_os_string().into_vec())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?
        .into_bytes_with_nul();
    // SAFETY: mkdtemp replaces the trailing XXXXXX of the NUL-terminated buffer in place.
    if unsafe { libc::mkdtemp(bytes.as_mut_ptr().cast()) }.is_null() {
        return Err(std::io::Error::last_os_error());
    }
    bytes.pop(); // the NUL
    let dir = PathBuf::from(OsString::from_vec(bytes));
    let remove_dir = |e: std::io::Error| {
        let _ = std::fs::remove_dir(&dir);
        e
    };
    check_private_dir(&dir).map_err(remove_dir)?;
    let path = dir.join(format!("lib{name}.{}.{n}.so", std::process::id()));
    let file = create_exclusive(&path).map_err(remove_dir)?;
    let maps_name = path.to_string_lossy().into_owned();
    Ok(PrivateCopy { file: Some(file), dl_path: path.clone(), maps_name, digest: None, on_disk: Some((path, dir)) })
}

/// `dir` is a directory (not a link) of this process's user with mode 0700.
pub(super) fn check_private_dir(dir: &Path) -> std::io::Result<()> {
    let m = std::fs::symlink_metadata(dir)?;
    let (uid, mode, me) = (m.uid(), m.mode() & 0o7777, euid());
    if !m.file_type().is_dir() || uid != me || mode != 0o700 {
        return Err(std::io::Error::other(format!(
            "{} is not a private directory (owner uid {uid}, mode {mode:04o}; expected a directory of uid {me}, mode 0700)",
            dir.display()
        )));
    }
    Ok(())
}

/// Create `path` for writing: a new file only (`O_CREAT|O_EXCL`), never through a link
/// (`O_NOFOLLOW`), readable and executable by this user only.
pub(super) fn create_exclusive(path: &Path) -> std::io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o700)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| std::io::Error::new(e.kind(), format!("cannot create {}: {e}", path.display())))
}

/// Copy `source` from its offset to its end into `dest`; with `digest`, through a buffer that is
/// hashed on the way, else in the kernel (`copy_file_range` / `sendfile`).
/// More than `max` bytes is `FileTooLarge` (the file grew past the limit after its size was checked).
fn copy_bytes(source: &File, dest: &File, digest: bool, max: u64) -> std::io::Result<Option<[u8; 32]>> {
    let too_large = || std::io::Error::new(std::io::ErrorKind::FileTooLarge, format!("more than {max} bytes"));
    let mut limited = source.take(max.saturating_add(1));
    if !digest {
        let copied = std::io::copy(&mut limited, &mut &*dest)?;
        return if copied > max { Err(too_large()) } else { Ok(None) };
    }
    let mut h = Sha256Hasher::new();
    let mut buf = vec![0u8; 1 << 18];
    let mut copied = 0u64;
    loop {
        let n = match limited.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        copied += n as u64;
        if copied > max {
            return Err(too_large());
        }
        h.update(&buf[..n]);
        (&*dest).write_all(&buf[..n])?;
    }
    Ok(Some(h.finish()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn source(bytes: &[u8]) -> (File, PathBuf) {
        let (mut f, p) = tempfile::Builder::new().prefix("vx-rs-copy-src-").tempfile().unwrap().keep().unwrap();
        std::io::Write::write_all(&mut f, bytes).unwrap();
        (File::open(&p).unwrap(), p)
    }

    #[test]
    fn a_source_longer_than_the_limit_is_refused_while_it_is_copied() {
        for digest in [false, true] {
            let (src, path) = source(&[7u8; 1000]);
            let e = PrivateCopy::new("limited", &src, digest, 999).err().expect("over the limit");
            assert_eq!(e.kind(), std::io::ErrorKind::FileTooLarge, "digest {digest}");
            let (src, _) = source(&[7u8; 1000]);
            assert!(PrivateCopy::new("limited", &src, digest, 1000).is_ok(), "digest {digest}");
            let _ = std::fs::remove_file(path);
        }
    }

    #[test]
    fn kernel_releases_parse() {
        assert_eq!(parse_release("6.18.44-fc-v669\n"), Some((6, 18)));
        assert_eq!(parse_release("5.4.0-150-generic"), Some((5, 4)));
        assert_eq!(parse_release("5.10"), Some((5, 10)));
        assert_eq!(parse_release("4.19rc1"), Some((4, 19)));
        assert_eq!(parse_release("junk"), None);
        assert!(kernel_release().is_some());
    }

    #[test]
    fn a_memory_copy_is_sealed_against_every_change() {
        let (src, p) = source(b"module bytes");
        let copy = PrivateCopy::new("sealed", &src, true, u64::MAX).unwrap();
        assert!(copy.on_disk.is_none(), "no file anywhere");
        assert!(copy.maps_name.starts_with(&format!("/memfd:{}libsealed.", copy_prefix())), "{}", copy.maps_name);
        assert_eq!(std::fs::read(&copy.dl_path).unwrap(), b"module bytes", "dlopen's path reads the copy");
        // Not even this process can write, grow or shrink it.
        let w = std::fs::OpenOptions::new().read(true).write(true).open(&copy.dl_path).unwrap();
        assert_eq!((&w).write(b"evil").unwrap_err().raw_os_error(), Some(libc::EPERM));
        assert!(w.set_len(0).is_err() && w.set_len(1 << 20).is_err());
        // Nor map it for writing and write through the mapping.
        // SAFETY: a fresh mapping request of 4096 bytes of our own descriptor; only its result is read.
        let m = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                w.as_raw_fd(),
                0,
            )
        };
        assert_eq!(m, libc::MAP_FAILED, "a writable shared mapping is refused");
        // SAFETY: fcntl on our own descriptor with no argument.
        let seals = unsafe { libc::fcntl(w.as_raw_fd(), libc::F_GET_SEALS) };
        assert_eq!(seals & libc::F_SEAL_SEAL, libc::F_SEAL_SEAL, "and the seals cannot be removed");
        assert_eq!(std::fs::read(&copy.dl_path).unwrap(), b"module bytes");
        let want = crate::module::trust::module_digest(&p).unwrap();
        assert_eq!(crate::shared::trust::hex(&copy.digest.unwrap()), want);
        let _ = std::fs::remove_file(p);
    }

    #[test]
    fn the_fallback_uses_a_private_mkdtemp_directory_and_leaves_nothing() {
        let (src, p) = source(b"fallback bytes!");
        test_hooks::force_directory_copies(true);
        let mut copy = PrivateCopy::new("fallback", &src, false, u64::MAX).unwrap();
        test_hooks::force_directory_copies(false);
        let (file, dir) = copy.on_disk.clone().expect("on disk");
        assert!(dir.file_name().unwrap().to_string_lossy().starts_with(&copy_prefix()));
        let m = std::fs::symlink_metadata(&dir).unwrap();
        assert_eq!((m.uid(), m.mode() & 0o7777), (euid(), 0o700));
        assert_eq!(std::fs::read(&file).unwrap(), b"fallback bytes!");
        assert_eq!(copy.dl_path, file);
        assert_eq!(copy.digest, None);
        copy.mapped();
        assert!(!file.exists() && !dir.exists(), "removed once mapped");
        drop(copy);
        // Dropped before it was mapped (a refused module): removed too.
        test_hooks::force_directory_copies(true);
        let copy = PrivateCopy::new("fallback", &src, false, u64::MAX).unwrap();
        test_hooks::force_directory_copies(false);
        let (_, dir) = copy.on_disk.clone().unwrap();
        drop(copy);
        assert!(!dir.exists());
        let _ = std::fs::remove_file(p);
    }

    #[test]
    fn the_fallback_never_writes_through_a_planted_link_nor_into_a_directory_not_its_own() {
        let base = tempfile::Builder::new().prefix("vx-rs-copy-attack-").tempdir().unwrap().keep();
        let victim = base.join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let dir = base.join("shadow");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        check_private_dir(&dir).unwrap();
        let planted = dir.join("libm.1.2.so");
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        let e = create_exclusive(&planted).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists, "{e}");
        assert!(e.to_string().contains(&planted.display().to_string()), "{e}");
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious", "the victim is unchanged");
        // A directory someone else could write, or that is not ours, is refused.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = check_private_dir(&dir).unwrap_err().to_string();
        assert!(e.contains("mode 0777") && e.contains("expected a directory of uid"), "{e}");
        if euid() == 0 {
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
            std::os::unix::fs::lchown(&dir, Some(65534), Some(65534)).unwrap();
            let e = check_private_dir(&dir).unwrap_err().to_string();
            assert!(e.contains("owner uid 65534"), "{e}");
        }
        let link = base.join("link");
        std::os::unix::fs::symlink(&dir, &link).unwrap();
        assert!(check_private_dir(&link).is_err(), "a link to a directory is not one");
        std::fs::remove_dir_all(&base).unwrap();
    }
}
