//! One opened kernel-module library: a unique shadow copy opened with libloading (abi_stable is
//! used only for the header, version and layout checks — its own loaders never unload), the
//! module's root descriptor, and — when the last user lets go — the close, verified with
//! `RTLD_NOLOAD` so a library that stayed mapped is reported as a zombie, not pretended away.

use std::ffi::CString;
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use vx_plugin_abi::abi_stable::library::{AbiHeaderRef, LibraryError, ROOT_MODULE_LOADER_NAME_WITH_NUL};
use vx_plugin_abi::module_abi::{ABI_VERSION, ABI_VERSION_SYMBOL, VxModuleRef};

use crate::error::{Error, ErrorKind, Result};
use crate::support::sync::lock;

/// Where a module is in its life.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModuleState {
    /// Loaded `count` times (`vxLoadKernels` calls not yet matched by unloads).
    Loaded {
        /// Loads not yet matched by unloads.
        count: usize,
        /// The module's version string.
        version: String,
    },
    /// Unloaded, but kernels, nodes or graphs from it still hold the library mapped.
    Draining {
        /// The module's version string.
        version: String,
    },
    /// The library was closed and is gone from the process.
    Unloaded,
    /// The library was closed but the dynamic loader kept it mapped.
    Zombie {
        /// Why the loader thinks it stayed (e.g. a pending thread-local destructor).
        reason: String,
    },
}

impl fmt::Display for ModuleState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModuleState::Loaded { count, version } => write!(f, "loaded ({count}x, version {version})"),
            ModuleState::Draining { version } => {
                write!(f, "unloaded, still mapped while its kernels are in use (version {version})")
            }
            ModuleState::Unloaded => f.write_str("unloaded"),
            ModuleState::Zombie { reason } => write!(f, "zombie: {reason}"),
        }
    }
}

static SHADOW_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Check that `bytes` is a complete 64-bit little-endian ELF file: every loadable segment and the
/// section header table lie inside it. `dlopen` of a truncated file (one still being written) can
/// map segments past its end and fault on first touch instead of failing, so this runs first.
pub(super) fn check_elf(bytes: &[u8]) -> std::result::Result<(), String> {
    let u16_at = |o: usize| bytes.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]) as u64);
    let u32_at = |o: usize| bytes.get(o..o + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64);
    let u64_at = |o: usize| bytes.get(o..o + 8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
    if bytes.len() < 64 || &bytes[..4] != b"\x7fELF" {
        return Err("not an ELF file".into());
    }
    if bytes[4] != 2 || bytes[5] != 1 {
        return Err("not a 64-bit little-endian ELF file".into());
    }
    let len = bytes.len() as u64;
    let truncated = || "truncated (still being written?)".to_string();
    let (phoff, phentsize, phnum) =
        (u64_at(0x20).ok_or_else(truncated)?, u16_at(0x36).ok_or_else(truncated)?, u16_at(0x38).ok_or_else(truncated)?);
    let (shoff, shentsize, shnum) =
        (u64_at(0x28).ok_or_else(truncated)?, u16_at(0x3A).ok_or_else(truncated)?, u16_at(0x3C).ok_or_else(truncated)?);
    let end = |off: u64, size: u64, n: u64| off.checked_add(size.checked_mul(n)?);
    if end(phoff, phentsize, phnum).is_none_or(|e| e > len) || end(shoff, shentsize, shnum).is_none_or(|e| e > len) {
        return Err(truncated());
    }
    for i in 0..phnum {
        let ph = (phoff + i * phentsize) as usize;
        let (p_type, p_offset, p_filesz) = (
            u32_at(ph).ok_or_else(truncated)?,
            u64_at(ph + 8).ok_or_else(truncated)?,
            u64_at(ph + 32).ok_or_else(truncated)?,
        );
        if p_type != 0 && p_offset.checked_add(p_filesz).is_none_or(|e| e > len) {
            return Err(truncated());
        }
    }
    Ok(())
}

/// The library of one loaded module version. Kernels from it hold an `Arc` of it.
pub(crate) struct ModuleLibrary {
    pub(super) module: VxModuleRef,
    pub(crate) name: String,
    pub(crate) version: String,
    shadow: PathBuf,
    library: Option<libloading::Library>,
    pub(crate) state: Arc<Mutex<ModuleState>>,
}

fn readable(name: &str, path: &Path, e: &LibraryError) -> Error {
    let msg = match e {
        LibraryError::InvalidAbiHeader(h) => format!(
            "module '{name}' was built with an incompatible abi_stable (its ABI {}.{}, not the host's)",
            h.abi_major, h.abi_minor
        ),
        LibraryError::IncompatibleVersionNumber { library_name, expected_version, actual_version } => format!(
            "module '{name}' was built against {library_name} {actual_version}, which is incompatible with the host's \
             {expected_version}"
        ),
        LibraryError::AbiInstability(detail) => match layout_difference(&detail.to_string()) {
            Some(d) => format!(
                "module '{name}' describes its root module with a different layout than the host's vx-plugin-abi: in type \
                 {}, field `{}` is {} in the module (built against {} {}) but {} in the host ({} {}); rebuild it against \
                 this vx-plugin-abi",
                d.ty, d.field, d.found, d.package, d.found_version, d.expected, d.package, d.expected_version
            ),
            None => format!(
                "module '{name}' describes its root module with a different layout than the host's vx-plugin-abi \
                 (rebuild it against this vx-plugin-abi)"
            ),
        },
        other => {
            let first = other.to_string();
            format!("module '{name}' could not be initialized: {}", first.lines().next().unwrap_or(""))
        }
    };
    Error::new(ErrorKind::InvalidModule, msg).on_object(&path.display().to_string())
}

/// The first difference between the expected (host) and found (module) layouts in abi_stable's
/// layout report.
struct LayoutDifference {
    ty: String,
    field: String,
    expected: String,
    found: String,
    package: String,
    expected_version: String,
    found_version: String,
}

fn layout_difference(report: &str) -> Option<LayoutDifference> {
    let (_, rest) = report.split_once("Layout of expected type:")?;
    let (expected, found) = rest.split_once("Layout of found type:")?;
    let value = |line: &str, key: &str| line.trim().strip_prefix(key).map(|v| v.trim().to_owned());
    let ty = expected.lines().find_map(|l| value(l, "type:"))?;
    let package_of = |section: &str| {
        section.lines().find_map(|l| {
            let l = l.trim();
            let rest = l.strip_prefix("package:'")?;
            let (pkg, rest) = rest.split_once("' version:'")?;
            Some((pkg.to_owned(), rest.split('\'').next()?.to_owned()))
        })
    };
    let fields = |section: &str| -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut name = None;
        for l in section.lines() {
            if let Some(n) = value(l, "field_name:") {
                name = Some(n);
            } else if let (Some(t), Some(n)) = (value(l, "type:"), name.take()) {
                out.push((n, t));
            }
        }
        out
    };
    let (fe, ff) = (fields(expected), fields(found));
    let ((field, exp), (_, fnd)) = fe.into_iter().zip(ff).find(|(a, b)| a != b)?;
    let ((package, expected_version), (_, found_version)) = (package_of(expected)?, package_of(found)?);
    Some(LayoutDifference { ty, field, expected: exp, found: fnd, package, expected_version, found_version })
}

impl ModuleLibrary {
    /// Copy `path` to a unique shadow file, open it and check it (header, abi_stable version,
    /// layout, vx-rs ABI version) before calling anything in it.
    pub(super) fn open(name: &str, path: &Path, shadow_dir: &Path) -> Result<ModuleLibrary> {
        let invalid = |msg: String| Error::new(ErrorKind::InvalidModule, msg).on_object(&path.display().to_string());
        std::fs::create_dir_all(shadow_dir)
            .map_err(|e| invalid(format!("cannot create the shadow directory {}: {e}", shadow_dir.display())))?;
        let n = SHADOW_COUNTER.fetch_add(1, Ordering::Relaxed);
        let shadow = shadow_dir.join(format!("lib{name}.{}.{n}.so", std::process::id()));
        std::fs::copy(path, &shadow)
            .map_err(|e| invalid(format!("cannot copy the module to {}: {e}", shadow.display())))?;
        let cleanup = |e: Error| {
            let _ = std::fs::remove_file(&shadow);
            e
        };
        let bytes =
            std::fs::read(&shadow).map_err(|e| cleanup(invalid(format!("cannot read the module copy: {e}"))))?;
        check_elf(&bytes)
            .map_err(|why| cleanup(invalid(format!("module '{name}' is not a loadable library: {why}"))))?;
        drop(bytes);
        // SAFETY: opening a library runs its initializers; a vx-rs module's only link its kernel
        // records into the module's own static list (inventory). The path is our private shadow copy.
        let library = unsafe { libloading::Library::new(&shadow) }
            .map_err(|e| cleanup(invalid(format!("module '{name}' is not a loadable library: {e}"))))?;
        // SAFETY: ROOT_MODULE_LOADER_NAME is the abi_stable header static; reading its address as an
        // AbiHeaderRef is how abi_stable's own loader does it. It is checked (`upgrade`) before use.
        let header: Option<AbiHeaderRef> =
            unsafe { library.get::<AbiHeaderRef>(ROOT_MODULE_LOADER_NAME_WITH_NUL.as_bytes()) }.ok().map(|s| *s);
        let Some(header) = header else {
            drop(library);
            return Err(cleanup(invalid(format!(
                "module '{name}' has no vx-rs entry point (no abi_stable root module); was it built with vx-plugin-abi's \
                 module export?"
            ))));
        };
        // The ABI version first: a module of another version is refused for that reason, before
        // abi_stable's layout check would report the layouts that version changed.
        let symbol = format!("{ABI_VERSION_SYMBOL}\0");
        // SAFETY: the symbol, when present, is the `u32` static `vx_module!` exports under this name
        // (libloading hands out its address); it is read once, while the library is open.
        let abi = unsafe { library.get::<*const u32>(symbol.as_bytes()).ok().map(|p| **p) };
        let abi = abi.unwrap_or(1); // ABI version 1 had no such symbol
        if abi != ABI_VERSION {
            drop(library);
            return Err(cleanup(invalid(format!(
                "module '{name}' speaks vx-rs module ABI version {abi}, this host speaks version {ABI_VERSION}"
            ))));
        }
        let module = header
            .upgrade()
            .and_then(|h| h.init_root_module::<VxModuleRef>())
            .map_err(|e| cleanup(readable(name, path, &e)))?;
        let abi = module.abi_version();
        if abi != ABI_VERSION {
            drop(library);
            return Err(cleanup(invalid(format!(
                "module '{name}' speaks vx-rs module ABI version {abi}, this host speaks version {ABI_VERSION}"
            ))));
        }
        let declared = module.name().as_str().to_owned();
        let version = module.version().as_str().to_owned();
        tracing::debug!(module = %name, declared = %declared, version = %version, shadow = %shadow.display(), "module library opened");
        Ok(ModuleLibrary {
            module,
            name: name.to_owned(),
            version: version.clone(),
            shadow,
            library: Some(library),
            state: Arc::new(Mutex::new(ModuleState::Loaded { count: 1, version })),
        })
    }

    pub(super) fn set_state(&self, s: ModuleState) {
        *lock(&self.state) = s;
    }
}

/// True when the dynamic loader still knows `path` (`RTLD_NOLOAD`) or its pages are still mapped
/// (`/proc/self/maps`). Both are needed: glibc keeps a library with pending thread-local destructors
/// mapped while `RTLD_NOLOAD` no longer finds it (observed after a module panicked on a pool thread).
fn still_mapped(path: &Path) -> bool {
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else { return false };
    // SAFETY: RTLD_NOLOAD only looks the library up; it maps nothing new. A non-null handle bumps
    // the reference count, so it is closed again right away.
    let known = unsafe {
        let h = libc::dlopen(c.as_ptr(), libc::RTLD_NOLOAD | libc::RTLD_LAZY);
        if !h.is_null() {
            libc::dlclose(h);
        }
        !h.is_null()
    };
    known
        || std::fs::read_to_string("/proc/self/maps")
            .map(|maps| maps.lines().any(|l| l.ends_with(&*path.to_string_lossy())))
            .unwrap_or(false)
}

impl Drop for ModuleLibrary {
    fn drop(&mut self) {
        // The module descriptor points into the library: nothing of it is used past this point.
        let Some(library) = self.library.take() else { return };
        let closed = library.close();
        let state = match closed {
            Err(e) => ModuleState::Zombie { reason: format!("dlclose failed: {e}") },
            Ok(()) if still_mapped(&self.shadow) => ModuleState::Zombie {
                reason: format!(
                    "{} is still mapped after dlclose: code of the module registered a thread-local destructor on \
                     (or spawned) a thread that is still alive (a panic inside the module does this), so the dynamic \
                     loader keeps it until that thread ends",
                    self.shadow.display()
                ),
            },
            Ok(()) => {
                let _ = std::fs::remove_file(&self.shadow);
                ModuleState::Unloaded
            }
        };
        match &state {
            ModuleState::Zombie { reason } => {
                tracing::warn!(module = %self.name, "module library is a zombie: {reason}")
            }
            _ => tracing::debug!(module = %self.name, "module library closed"),
        }
        self.set_state(state);
    }
}

#[cfg(test)]
mod tests {
    use super::check_elf;

    #[test]
    fn elf_checks_refuse_junk_and_truncated_files() {
        let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        assert_eq!(check_elf(&exe), Ok(()));
        assert_eq!(check_elf(b"hello").unwrap_err(), "not an ELF file");
        assert!(check_elf(&exe[..exe.len() / 2]).unwrap_err().contains("truncated"));
        assert!(check_elf(&exe[..100]).unwrap_err().contains("truncated"));
    }
}
