//! Writing what `vx` produces, every failure reported with the path: image files (written to a new
//! file in the destination's directory, created exclusively, synced and closed with their errors
//! checked, then renamed over the destination — no partial file is left behind, and no link is
//! written through) and standard output (a full disk or a closed pipe is an error, not a panic).
//!
//! A destination that exists and is a device (`/dev/null`, `/dev/full`, a tape) or a FIFO is
//! written in place: it cannot be replaced. A symbolic link is refused: `vx` never writes through
//! one (name the file it points to) — except `/dev/stdout`, which (like `-`) means standard
//! output. An existing file the user may not write (no write permission for the effective user)
//! is refused, not replaced; an existing file that is replaced keeps its permission bits.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::IntoRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::Failure;

/// What is at a destination.
enum Destination {
    /// Nothing, or a regular file (its permission bits, which the new file gets): replaced by a
    /// rename.
    Replace(Option<u32>),
    /// A device or FIFO: written in place.
    InPlace,
    /// `-` or `/dev/stdout`: standard output.
    Stdout,
}

/// True when `path` names standard output: `-` or `/dev/stdout`.
pub(crate) fn is_stdout(path: &Path) -> bool {
    path == Path::new("-") || path == Path::new("/dev/stdout")
}

/// Whether the effective user may write the existing file `path` (`faccessat` with `AT_EACCESS`).
fn writable(path: &Path) -> std::io::Result<()> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "a path with a NUL byte"))?;
    // SAFETY: `c` is a NUL-terminated path that outlives the call; faccessat only reads it.
    let r = unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::W_OK, libc::AT_EACCESS) };
    if r == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}

fn destination(path: &Path) -> Result<Destination, String> {
    if is_stdout(path) {
        return Ok(Destination::Stdout);
    }
    let m = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Destination::Replace(None)),
        Err(e) => return Err(e.to_string()),
        Ok(m) => m,
    };
    let t = m.file_type();
    if t.is_symlink() {
        return Err("it is a symbolic link, and vx never writes through one (name the file it points to)".into());
    } else if t.is_dir() {
        return Err("it is a directory".into());
    }
    if !t.is_file() && !t.is_char_device() && !t.is_block_device() && !t.is_fifo() {
        return Err("it is neither a file nor a device".into());
    }
    match writable(path) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EACCES) => {
            return Err(format!(
                "it exists and you have no write permission on it (mode {:o}); vx does not replace a file you \
                 cannot write (make it writable, or write elsewhere)",
                m.permissions().mode() & 0o7777
            ));
        }
        Err(e) if e.raw_os_error() == Some(libc::EROFS) => {
            return Err(format!("it is on a read-only file system ({e})"));
        }
        Err(e) => return Err(e.to_string()),
    }
    Ok(if t.is_file() { Destination::Replace(Some(m.permissions().mode() & 0o777)) } else { Destination::InPlace })
}

/// The directory a file at `path` lives in.
fn directory(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// What two destinations that are the same file have in common: the canonical directory plus the
/// file name (`./o.png` and `o.png`, or a path through a symbolic link to the directory, are one
/// file); `-` for standard output. `None` when the directory cannot be resolved (reported by
/// [`check_writable`]).
pub(crate) fn identity(path: &Path) -> Option<PathBuf> {
    if is_stdout(path) {
        return Some(PathBuf::from("-"));
    }
    let name = path.file_name()?;
    std::fs::canonicalize(directory(path)).ok().map(|d| d.join(name))
}

/// A new file beside `path`, created exclusively (`O_EXCL`: never an existing file or link).
fn temp_beside(path: &Path) -> std::io::Result<(PathBuf, File)> {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let stem = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let tmp = directory(path).join(format!(".{stem}.vx-{}-{n}.tmp", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).mode(0o666).open(&tmp) {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Close `f`, reporting the error `close(2)` gives (dropping a `File` ignores it).
fn close(f: File) -> std::io::Result<()> {
    let fd = f.into_raw_fd();
    // SAFETY: `fd` was just released by the `File` that owned it; it is closed exactly once here.
    if unsafe { libc::close(fd) } == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}

/// Why a new file could not be created beside `path`, in words that say what is wrong.
fn cannot_create(path: &Path, e: &std::io::Error) -> String {
    let dir = directory(path);
    if e.kind() == std::io::ErrorKind::NotFound {
        if dir.is_dir() {
            // The directory is there, yet takes no new file: a file system such as /proc or /sys.
            return format!(
                "{} takes no new files ({e}); vx writes an output as a new file in the destination's directory, \
                 renamed over it",
                dir.display()
            );
        }
        return format!("the directory {} does not exist ({e})", dir.display());
    }
    if e.kind() == std::io::ErrorKind::PermissionDenied {
        return format!("cannot create a file in {} ({e})", dir.display());
    }
    e.to_string()
}

/// Check, before any work, that `path` can be written: not a link or directory, not a file the user
/// may not write, and its directory takes a new file (one is created and removed). Exit code 2
/// when not.
pub(crate) fn check_writable(path: &Path, what: &str) -> Result<(), Failure> {
    let fail = |e: &dyn std::fmt::Display| Failure::usage(format!("{what}: cannot write {}: {e}", path.display()));
    match destination(path).map_err(|e| fail(&e))? {
        Destination::InPlace | Destination::Stdout => Ok(()),
        Destination::Replace(_) => {
            let (tmp, f) = temp_beside(path).map_err(|e| fail(&cannot_create(path, &e)))?;
            drop(f);
            std::fs::remove_file(&tmp).map_err(|e| fail(&e))
        }
    }
}

/// Write `bytes` to `path` as a whole: a new file beside it, synced, closed, renamed over it (or a
/// device written in place). On failure nothing is left behind, and the error names the path.
pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let fail = |e: &dyn std::fmt::Display| format!("cannot write {}: {e}", path.display());
    match destination(path).map_err(|e| fail(&e))? {
        Destination::InPlace => {
            let mut f =
                OpenOptions::new().write(true).custom_flags(libc::O_NOFOLLOW).open(path).map_err(|e| fail(&e))?;
            f.write_all(bytes).and_then(|()| f.flush()).map_err(|e| fail(&e))?;
            close(f).map_err(|e| fail(&e))
        }
        Destination::Stdout => {
            let mut out = std::io::stdout().lock();
            out.write_all(bytes).and_then(|()| out.flush()).map_err(|e| format!("cannot write to standard output: {e}"))
        }
        Destination::Replace(mode) => {
            let (tmp, mut f) = temp_beside(path).map_err(|e| fail(&cannot_create(path, &e)))?;
            // The file replaced keeps its permission bits (the new one is made with 0666 & umask).
            let kept = match mode {
                Some(m) => f.set_permissions(std::fs::Permissions::from_mode(m)),
                None => Ok(()),
            };
            let written = kept
                .and_then(|()| f.write_all(bytes))
                .and_then(|()| f.flush())
                .and_then(|()| f.sync_all())
                .and_then(|()| close(f));
            let renamed = written.and_then(|()| std::fs::rename(&tmp, path));
            if let Err(e) = renamed {
                let _ = std::fs::remove_file(&tmp);
                return Err(fail(&e));
            }
            Ok(())
        }
    }
}

/// Print `s` on standard output, flushed; a failed write is an error (exit code 1).
pub(crate) fn print(s: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    out.write_all(s.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| Failure::process(format!("cannot write to standard output: {e}")))
}

/// Print `s` on standard error (`vx`'s report when an image goes to standard output); a failed
/// write is an error (exit code 1).
pub(crate) fn eprint(s: &str) -> Result<(), Failure> {
    let mut err = std::io::stderr().lock();
    err.write_all(s.as_bytes())
        .and_then(|()| err.flush())
        .map_err(|e| Failure::process(format!("cannot write to standard error: {e}")))
}

/// Write a line to standard error, ignoring a failure (a message about the run must not end it;
/// `eprintln!` would panic on a full standard error).
pub(crate) fn note(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(line.as_bytes()).and_then(|()| err.write_all(b"\n")).and_then(|()| err.flush());
}
