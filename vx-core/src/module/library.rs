//! One opened kernel-module library: a private copy of the trusted module file (`copy.rs`: a sealed
//! memory file, or a private `mkdtemp` directory where there is none) opened with libloading
//! (abi_stable is used only for the header, version and layout checks — its own loaders never
//! unload), the module's root descriptor, and — when the last user lets go — the close, verified
//! with `RTLD_NOLOAD` so a library that stayed mapped is reported as a zombie, not pretended away.

use std::fmt;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use vx_plugin_abi::abi_stable::library::{AbiHeaderRef, LibraryError, ROOT_MODULE_LOADER_NAME_WITH_NUL};
use vx_plugin_abi::module_abi::{ABI_VERSION, ABI_VERSION_SYMBOL, BUILD_DEBUG_SYMBOL, VxModuleRef};

use crate::error::{Error, ErrorKind, Result};
use crate::module::copy::{PrivateCopy, loader_knows, run_before_map};
use crate::module::trust::{open_module, pin_refusal};
use crate::shared::ContextConfig;
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

/// The ELF machine of this host (`e_machine`).
const HOST_MACHINE: u16 = if cfg!(target_arch = "x86_64") {
    62
} else if cfg!(target_arch = "aarch64") {
    183
} else if cfg!(target_arch = "riscv64") {
    243
} else {
    0 // unknown: not checked
};

/// Most program headers a module may have (a real one has about ten).
const MAX_PROGRAM_HEADERS: u64 = 256;

/// Check that the open file `f` is a complete 64-bit little-endian ELF shared object for this
/// machine, reading only its header and program headers (a few KiB, whatever the file's size, by
/// offset: the file's own offset is left alone): type `ET_DYN`, a dynamic segment, every loadable
/// segment and the section header table inside the file. `dlopen` of a truncated file (one still
/// being written) can map segments past its end and fault on first touch instead of failing, and a
/// huge file that is no library must be refused before it is copied; so this runs on the opened
/// original and again on the private copy, the very bytes that are mapped.
pub(super) fn check_elf(f: &File) -> std::result::Result<(), String> {
    let len = f.metadata().map_err(|e| format!("cannot stat it: {e}"))?.len();
    let mut head = [0u8; 64];
    if len < 64 || f.read_exact_at(&mut head, 0).is_err() || &head[..4] != b"\x7fELF" {
        return Err("not an ELF file".into());
    }
    if head[4] != 2 || head[5] != 1 {
        return Err("not a 64-bit little-endian ELF file".into());
    }
    let u16_at = |b: &[u8], o: usize| u16::from_le_bytes([b[o], b[o + 1]]);
    let u32_at = |b: &[u8], o: usize| u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"));
    let u64_at = |b: &[u8], o: usize| u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"));
    if u16_at(&head, 0x10) != 3 {
        return Err("not a shared library (ELF type is not ET_DYN)".into());
    }
    let machine = u16_at(&head, 0x12);
    if HOST_MACHINE != 0 && machine != HOST_MACHINE {
        return Err(format!("built for another machine (ELF machine {machine}, this host is {HOST_MACHINE})"));
    }
    let truncated = || "truncated (still being written?)".to_string();
    let (phoff, phentsize, phnum) = (u64_at(&head, 0x20), u16_at(&head, 0x36) as u64, u16_at(&head, 0x38) as u64);
    let (shoff, shentsize, shnum) = (u64_at(&head, 0x28), u16_at(&head, 0x3A) as u64, u16_at(&head, 0x3C) as u64);
    if phnum == 0 || phnum > MAX_PROGRAM_HEADERS || phentsize < 56 {
        return Err(format!("no usable program headers ({phnum} of {phentsize} bytes)"));
    }
    let end = |off: u64, size: u64, n: u64| off.checked_add(size.checked_mul(n)?);
    if end(phoff, phentsize, phnum).is_none_or(|e| e > len) || end(shoff, shentsize, shnum).is_none_or(|e| e > len) {
        return Err(truncated());
    }
    let mut table = vec![0u8; (phentsize * phnum) as usize];
    f.read_exact_at(&mut table, phoff).map_err(|_| truncated())?;
    let (mut loads, mut dynamic) = (0, false);
    for ph in table.chunks_exact(phentsize as usize) {
        let (p_type, p_offset, p_filesz) = (u32_at(ph, 0), u64_at(ph, 8), u64_at(ph, 32));
        match p_type {
            1 => loads += 1,
            2 => dynamic = true,
            _ => {}
        }
        if p_type != 0 && p_offset.checked_add(p_filesz).is_none_or(|e| e > len) {
            return Err(truncated());
        }
    }
    if loads == 0 || !dynamic {
        return Err("no loadable or dynamic segment (not a shared library)".into());
    }
    Ok(())
}

/// The ELF pre-check over `bytes`, read through an anonymous file exactly as the loader reads a
/// module (for the fuzz target `fuzz/fuzz_targets/module_elf.rs`; not an API).
#[doc(hidden)]
pub fn check_elf_bytes(bytes: &[u8]) -> std::result::Result<(), String> {
    use std::io::{Seek, SeekFrom, Write};
    use std::os::fd::FromRawFd;
    // SAFETY: memfd_create takes a NUL-terminated name and flags; it returns a new descriptor (or
    // -1), which the File below owns alone.
    let fd = unsafe { libc::memfd_create(c"vx-rs-elf-check".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(format!("memfd_create: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: `fd` is a fresh descriptor owned by nothing else.
    let mut f = unsafe { File::from_raw_fd(fd) };
    f.write_all(bytes).and_then(|_| f.seek(SeekFrom::Start(0))).map_err(|e| e.to_string())?;
    check_elf(&f)
}

/// The library of one loaded module version. Kernels from it hold an `Arc` of it.
pub(super) struct ModuleLibrary {
    pub(super) entry: EntryPoints,
    pub(super) name: String,
    pub(super) version: String,
    /// The file it was loaded from (links resolved) and how it was built.
    pub(super) file: PathBuf,
    pub(super) build: ModuleBuild,
    /// The private copy the library was mapped from; its descriptor stays open while the library
    /// is loaded (the loader knows the library by the copy's `/proc/self/fd/<fd>` name).
    copy: PrivateCopy,
    library: Option<libloading::Library>,
    pub(super) state: Arc<Mutex<ModuleState>>,
}

/// `vx_publish_kernels_f` / `vx_unpublish_kernels_f`: `vx_status (*)(vx_context)` — an OpenVX C
/// module's entry points (`foreign.rs`).
pub type ForeignEntry = unsafe extern "C" fn(context: *mut std::ffi::c_void) -> i32;

/// The version string of an OpenVX C module (it declares none).
const FOREIGN_VERSION: &str = "(OpenVX C module)";

/// A module's entry points: vx-rs's root module, or an OpenVX C module's functions.
pub(super) enum EntryPoints {
    Vx(VxModuleRef),
    Foreign { publish: ForeignEntry, unpublish: Option<ForeignEntry> },
}

/// How a module was built, as it says itself (`vx_plugin_abi::module_abi::BUILD_DEBUG_SYMBOL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModuleBuild {
    /// Without debug assertions: cargo's `--release` (optimized).
    Release,
    /// With debug assertions: cargo's default `dev` profile, unoptimized — kernels run many times
    /// slower than in a release build.
    Debug,
    /// The module does not say (written against the ABI by hand, or by an older SDK).
    Unknown,
}

impl fmt::Display for ModuleBuild {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ModuleBuild::Release => "release build",
            ModuleBuild::Debug => "debug build",
            ModuleBuild::Unknown => "build unknown",
        })
    }
}

/// What a loaded module is: its name, version, the file it came from and how it was built
/// ([`Context::module_info`](crate::Context::module_info)).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ModuleInfo {
    /// The module's name.
    pub name: String,
    /// Its version string.
    pub version: String,
    /// The file it was loaded from (symbolic links resolved).
    pub file: PathBuf,
    /// How it was built.
    pub build: ModuleBuild,
}

/// The module (name, version) kernel `k`'s code comes from, if it comes from one.
pub(crate) fn origin(k: &crate::kernel::record::KernelInner) -> Option<(String, String)> {
    let lib = k.keep_alive.as_deref()?.downcast_ref::<ModuleLibrary>()?;
    Some((lib.name.clone(), lib.version.clone()))
}

/// The module a library file holds by its name: `libfilters.so` → `filters` (else `None`).
pub fn module_name_of_file(path: &Path) -> Option<String> {
    let f = path.file_name()?.to_str()?;
    Some(f.strip_prefix("lib")?.strip_suffix(".so")?.to_owned())
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
    /// Open module `name` from `path` under `trust` (owner checks: `trust.rs`), copy it into a
    /// private copy (`copy.rs`) and check that copy — the bytes that are mapped — before mapping
    /// it: ELF headers, the pinned digest if any; then the header, abi_stable version, layout and
    /// vx-rs ABI version before anything in it is called.
    ///
    /// A file larger than `config.max_module_bytes` is refused before anything is copied (by its
    /// size) and while it is copied (by the bytes read: a file that grows meanwhile).
    pub(super) fn open(name: &str, path: &Path, config: &ContextConfig) -> Result<ModuleLibrary> {
        let trust = &config.module_trust;
        let invalid = |msg: String| Error::new(ErrorKind::InvalidModule, msg).on_object(&path.display().to_string());
        let not_loadable = |why: String| invalid(format!("module '{name}' is not a loadable library: {why}"));
        let (source, opened) = open_module(name, path, trust)?;
        let max = config.max_module_bytes;
        let too_large = |size: String| {
            invalid(format!(
                "module '{name}' is larger than the module size limit ({size} bytes, at most {max}); \
                 ContextBuilder::max_module_bytes raises it"
            ))
        };
        let size = source.metadata().map_err(|e| invalid(format!("module '{name}': cannot stat it: {e}")))?.len();
        if size > max {
            return Err(too_large(size.to_string()));
        }
        // A cheap refusal of what is no library (a huge sparse file is not copied), on the very
        // descriptor that is copied.
        check_elf(&source).map_err(not_loadable)?;
        let mut copy = PrivateCopy::new(name, &source, trust.pins_digests(), max).map_err(|e| {
            if e.kind() == std::io::ErrorKind::FileTooLarge {
                too_large(format!("more than {max}"))
            } else {
                invalid(format!("module '{name}': cannot make its private copy: {e}"))
            }
        })?;
        drop(source);
        // Again on the copy: the file may have changed while it was copied (a build in progress).
        check_elf(copy.file()).map_err(not_loadable)?;
        if let Some(digest) = copy.digest
            && !trust.allows_digest(name, &digest)
        {
            return Err(pin_refusal(name, &opened, &digest, trust));
        }
        run_before_map(&copy.dl_path);
        // SAFETY: opening a library runs its initializers; a vx-rs module's only link its kernel
        // records into the module's own static list (inventory). The path is our private copy, which
        // no other user can name or change (sealed memory file, or a file in our 0700 directory).
        let library = unsafe { libloading::Library::new(&copy.dl_path) }.map_err(|e| not_loadable(e.to_string()))?;
        copy.mapped();
        // SAFETY: ROOT_MODULE_LOADER_NAME is the abi_stable header static; reading its address as an
        // AbiHeaderRef is how abi_stable's own loader does it. It is checked (`upgrade`) before use.
        let header: Option<AbiHeaderRef> =
            unsafe { library.get::<AbiHeaderRef>(ROOT_MODULE_LOADER_NAME_WITH_NUL.as_bytes()) }.ok().map(|s| *s);
        let Some(header) = header else {
            // SAFETY: reading the addresses of the OpenVX module entry points, when present; their
            // type is the specification's `vx_publish_kernels_f` (`vx_status (*)(vx_context)`).
            let publish = unsafe { library.get::<ForeignEntry>(b"vxPublishKernels\0") }.ok().map(|s| *s);
            // SAFETY: as above, `vx_unpublish_kernels_f`.
            let unpublish = unsafe { library.get::<ForeignEntry>(b"vxUnpublishKernels\0") }.ok().map(|s| *s);
            if let Some(publish) = publish {
                tracing::debug!(module = %name, file = %opened.display(), "OpenVX C module opened");
                return Ok(ModuleLibrary {
                    entry: EntryPoints::Foreign { publish, unpublish },
                    name: name.to_owned(),
                    version: FOREIGN_VERSION.to_owned(),
                    file: opened,
                    build: ModuleBuild::Unknown,
                    copy,
                    library: Some(library),
                    state: Arc::new(Mutex::new(ModuleState::Loaded { count: 1, version: FOREIGN_VERSION.to_owned() })),
                });
            }
            drop(library);
            return Err(invalid(format!(
                "module '{name}' has no vx-rs entry point (no abi_stable root module) and no OpenVX one \
                 (vxPublishKernels); was it built with vx-plugin-abi's module export?"
            )));
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
            return Err(invalid(format!(
                "module '{name}' speaks vx-rs module ABI version {abi}, this host speaks version {ABI_VERSION}"
            )));
        }
        let module =
            header.upgrade().and_then(|h| h.init_root_module::<VxModuleRef>()).map_err(|e| readable(name, path, &e))?;
        let abi = module.abi_version();
        if abi != ABI_VERSION {
            drop(library);
            return Err(invalid(format!(
                "module '{name}' speaks vx-rs module ABI version {abi}, this host speaks version {ABI_VERSION}"
            )));
        }
        let declared = module.name().as_str().to_owned();
        if declared != name {
            drop(library);
            return Err(invalid(format!(
                "the file lib{name}.so holds module '{declared}', not '{name}': a module's file is lib<its name>.so; \
                 load it as '{declared}' (or rename the file)"
            )));
        }
        let version = module.version().as_str().to_owned();
        let symbol = format!("{BUILD_DEBUG_SYMBOL}\0");
        // SAFETY: the symbol, when present, is the `u8` static `vx_module!` exports under this name;
        // it is read once, while the library is open.
        let build = match unsafe { library.get::<*const u8>(symbol.as_bytes()).ok().map(|p| **p) } {
            Some(0) => ModuleBuild::Release,
            Some(_) => ModuleBuild::Debug,
            None => ModuleBuild::Unknown,
        };
        tracing::debug!(module = %name, declared = %declared, version = %version, file = %opened.display(), copy = %copy.maps_name, "module library opened");
        Ok(ModuleLibrary {
            entry: EntryPoints::Vx(module),
            name: name.to_owned(),
            version: version.clone(),
            file: opened.clone(),
            build,
            copy,
            library: Some(library),
            state: Arc::new(Mutex::new(ModuleState::Loaded { count: 1, version })),
        })
    }

    pub(super) fn set_state(&self, s: ModuleState) {
        *lock(&self.state) = s;
    }
}

/// Why the library copy the loader knows as `dl_path` (mapped as `maps_name` in
/// `/proc/self/maps`) is still in the process after `dlclose`, or `None` when it is gone, and
/// whether the dynamic loader itself still holds it. Evidence, not a guess: whether the dynamic
/// loader still knows the copy (`RTLD_NOLOAD`), and how it is still mapped (as code, or read-only by
/// something else).
fn still_mapped(dl_path: &Path, maps_name: &str) -> Option<(String, bool)> {
    let known = loader_knows(dl_path);
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    let mappings: Vec<&str> = maps
        .lines()
        .filter(|l| l.trim_end().trim_end_matches(" (deleted)").ends_with(maps_name))
        .map(|l| l.split_whitespace().nth(1).unwrap_or(""))
        .collect();
    let executable = mappings.iter().any(|perms| perms.contains('x'));
    let shown = maps_name;
    if known {
        Some((
            format!(
                "the dynamic loader still holds {shown} after dlclose: its reference count is not zero (code of the \
                 module registered a thread-local destructor on a thread that is still alive, or something else opened \
                 the same copy)"
            ),
            true,
        ))
    } else if executable {
        Some((
            format!(
                "{shown} is still mapped as code after dlclose although the dynamic loader let it go: glibc keeps the \
                 segments of a library with pending thread-local destructors until the threads that registered them end"
            ),
            false,
        ))
    } else if !mappings.is_empty() {
        Some((
            format!(
                "the dynamic loader unloaded {shown}, but {} read-only mapping(s) of its file remain, made by something \
                 other than the loader (e.g. a backtrace symbolizer that cached the file)",
                mappings.len()
            ),
            false,
        ))
    } else {
        None
    }
}

impl Drop for ModuleLibrary {
    fn drop(&mut self) {
        // The module descriptor points into the library: nothing of it is used past this point.
        let Some(library) = self.library.take() else { return };
        let (state, held) = match library.close() {
            Err(e) => (ModuleState::Zombie { reason: format!("dlclose failed: {e}") }, true),
            Ok(()) => match still_mapped(&self.copy.dl_path, &self.copy.maps_name) {
                Some((reason, held)) => (ModuleState::Zombie { reason }, held),
                None => (ModuleState::Unloaded, false),
            },
        };
        if held {
            // The loader still knows the library as `/proc/self/fd/<fd>`: were the descriptor
            // closed, a later copy could get the same number and `dlopen` would hand back this
            // library instead. The descriptor stays open for the life of the process.
            self.copy.keep_open_forever();
        }
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

    /// A shared library of this machine to cut up: the C library the test binary links.
    fn a_shared_library() -> std::path::PathBuf {
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let path = maps.lines().filter_map(|l| l.split_whitespace().nth(5)).find(|p| p.contains("libc.so")).unwrap();
        std::path::PathBuf::from(path)
    }

    fn write(dir: &std::path::Path, name: &str, bytes: &[u8]) -> std::fs::File {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        std::fs::File::open(p).unwrap()
    }

    #[test]
    fn elf_checks_refuse_junk_truncated_files_and_executables() {
        let tmp = tempfile::Builder::new().prefix("vx-rs-elf-test-").tempdir().unwrap();
        let dir = tmp.path();
        let lib = std::fs::read(a_shared_library()).unwrap();
        assert_eq!(check_elf(&write(dir, "whole.so", &lib)), Ok(()));
        assert_eq!(check_elf(&write(dir, "hello.so", b"hello")).unwrap_err(), "not an ELF file");
        assert!(check_elf(&write(dir, "half.so", &lib[..lib.len() / 2])).unwrap_err().contains("truncated"));
        assert!(check_elf(&write(dir, "head.so", &lib[..100])).unwrap_err().contains("truncated"));
        // The test binary is an executable (ET_DYN when PIE: then it has PT_INTERP but is still
        // accepted by the type check; a non-PIE one is ET_EXEC): either way no panic, a clear answer.
        let _ = check_elf(&std::fs::File::open(std::env::current_exe().unwrap()).unwrap());
    }

    #[test]
    fn a_huge_sparse_file_with_an_elf_header_is_refused_reading_only_its_header() {
        let tmp = tempfile::Builder::new().prefix("vx-rs-elf-sparse-").tempdir().unwrap();
        let dir = tmp.path();
        let lib = std::fs::read(a_shared_library()).unwrap();
        let path = dir.join("huge.so");
        let f = std::fs::File::create(&path).unwrap();
        std::io::Write::write_all(&mut &f, &lib[..64]).unwrap();
        f.set_len(512 << 20).unwrap(); // 512 MiB, sparse: nothing else is written
        let why = check_elf(&std::fs::File::open(&path).unwrap()).unwrap_err();
        assert!(why.contains("truncated") || why.contains("program headers") || why.contains("segment"), "{why}");
    }
}
