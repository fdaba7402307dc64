//! Writing what `vx` produces, every failure reported with the path: image files (written to a new
//! file in the destination's directory, created exclusively, synced and closed with their errors
//! checked, then renamed over the destination — no partial file is left behind, and no link is
//! written through) and standard output (a full disk or a closed pipe is an error, not a panic).
//!
//! A destination that exists and is a device (`/dev/null`, `/dev/full`, a tape) or a FIFO is
//! written in place: it cannot be replaced. A symbolic link is refused: `vx` never writes through
//! one (name the file it points to).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::IntoRawFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::Failure;

/// What is at a destination.
enum Destination {
    /// Nothing, or a regular file: replaced by a rename.
    Replace,
    /// A device or FIFO: written in place.
    InPlace,
}

fn destination(path: &Path) -> Result<Destination, String> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Destination::Replace),
        Err(e) => Err(e.to_string()),
        Ok(m) => {
            let t = m.file_type();
            if t.is_symlink() {
                Err("it is a symbolic link, and vx never writes through one (name the file it points to)".into())
            } else if t.is_dir() {
                Err("it is a directory".into())
            } else if t.is_file() {
                Ok(Destination::Replace)
            } else if t.is_char_device() || t.is_block_device() || t.is_fifo() {
                Ok(Destination::InPlace)
            } else {
                Err("it is neither a file nor a device".into())
            }
        }
    }
}

/// The directory a file at `path` lives in.
fn directory(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
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

/// Check, before any work, that `path` can be written: not a link or directory, and its directory
/// takes a new file (one is created and removed). Exit code 2 when not.
pub(crate) fn check_writable(path: &Path, what: &str) -> Result<(), Failure> {
    let fail = |e: &dyn std::fmt::Display| Failure::usage(format!("{what}: cannot write {}: {e}", path.display()));
    match destination(path).map_err(|e| fail(&e))? {
        Destination::InPlace => Ok(()),
        Destination::Replace => {
            let (tmp, f) = temp_beside(path).map_err(|e| fail(&e))?;
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
        Destination::Replace => {
            let (tmp, mut f) = temp_beside(path).map_err(|e| fail(&e))?;
            let written =
                f.write_all(bytes).and_then(|()| f.flush()).and_then(|()| f.sync_all()).and_then(|()| close(f));
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
