//! `vx inspect`: what a kernel module holds — its version, ABI, and every kernel with its
//! parameters (names and element types as the kernel macros record them), tiling attributes, alias
//! hints, targets and summary — as text for people or JSON for machines — and the file's SHA-256,
//! as `ModuleTrust::pin` takes it. The module is loaded into a context of its own, which is what is
//! described. Also: every module of a plugin directory (or of the search path) in one line each,
//! and one kernel in detail.

use std::path::{Path, PathBuf};

use serde::Serialize;
use vx::{BorderMode, Context, Direction, Kernel, ModuleState, ParamState};

use crate::Failure;

/// A module as `vx inspect` describes it.
#[derive(Debug, Serialize)]
pub(crate) struct ModuleReport {
    pub(crate) module: String,
    pub(crate) version: String,
    pub(crate) abi_version: u32,
    pub(crate) file: PathBuf,
    /// SHA-256 of the module file (what `ModuleTrust::pin` takes).
    pub(crate) sha256: String,
    /// How the module was built: `release`, `debug` (unoptimized) or `unknown`.
    pub(crate) build: &'static str,
    pub(crate) kernels: Vec<KernelReport>,
}

/// A build's name in reports, and what a person should know of it.
fn build_of(b: vx::ModuleBuild) -> (&'static str, &'static str) {
    match b {
        vx::ModuleBuild::Release => ("release", ""),
        vx::ModuleBuild::Debug => {
            ("debug", " (unoptimized: its kernels run many times slower; cargo build --release for speed)")
        }
        _ => ("unknown", " (the module does not say: written against the ABI by hand, or an older SDK)"),
    }
}

#[derive(Debug, Serialize)]
pub(crate) struct KernelReport {
    pub(crate) name: String,
    pub(crate) enumeration: i32,
    pub(crate) kind: &'static str,
    pub(crate) summary: Option<String>,
    pub(crate) parameters: Vec<ParamReport>,
    pub(crate) tiling: Option<TilingReport>,
    pub(crate) alias_hints: Vec<AliasReport>,
    /// Targets with an implementation of their own (TIOVX target kernels).
    pub(crate) targets: Vec<String>,
    /// The kernel has a process function of its own: it runs on the host (and on any target).
    pub(crate) runs_anywhere: bool,
    /// `VX_KERNEL_LOCAL_DATA_SIZE`.
    pub(crate) local_data_size: usize,
    /// How its outputs' valid rectangles are decided.
    pub(crate) valid_rect: &'static str,
}

#[derive(Debug, Serialize)]
pub(crate) struct ParamReport {
    pub(crate) index: u32,
    pub(crate) name: Option<String>,
    pub(crate) direction: &'static str,
    #[serde(rename = "type")]
    pub(crate) data_type: String,
    pub(crate) element: Option<String>,
    pub(crate) required: bool,
    /// `required` or `optional`.
    pub(crate) state: &'static str,
}

#[derive(Debug, Serialize)]
pub(crate) struct TilingReport {
    pub(crate) block: [u32; 2],
    pub(crate) neighborhood: [i32; 4],
    /// The border as the attribute spells it: a row kernel's edge rule (`Reflect101`, `Replicate`,
    /// `Constant`), else `Undefined` or `Self_`.
    pub(crate) border: String,
    /// What it means and what a node may set.
    pub(crate) border_note: String,
    pub(crate) tile_memory: usize,
    /// What the kernel offers fused execution (`docs/book/src/fusion.md`).
    pub(crate) fusion: String,
}

#[derive(Debug, Serialize)]
pub(crate) struct AliasReport {
    pub(crate) a: u32,
    pub(crate) b: u32,
    pub(crate) kind: &'static str,
}

/// Load `what` (a module name from the search path, or a path to `lib<name>.so`) into `ctx`;
/// returns the module's name.
pub(crate) fn load(ctx: &Context, what: &str) -> Result<String, Failure> {
    let p = Path::new(what);
    if !(what.contains('/') || what.ends_with(".so")) {
        if let Err(e) = ctx.load_module(what) {
            // Not found: the command's way to say where to look (the library's names its API).
            if e.kind() == vx::ErrorKind::InvalidModule && ctx.resolve_module(what).is_err() {
                let dirs: Vec<String> = ctx.module_search_path().iter().map(|d| d.display().to_string()).collect();
                return Err(Failure::module(format!(
                    "module '{what}' not found: no lib{what}.so in the search path ({}); give its directory with \
                     -M DIR (or in VX_MODULE_PATH, absolute directories separated by ':'), or the file itself \
                     (path/to/lib{what}.so)",
                    dirs.join(", ")
                )));
            }
            return Err(Failure::module(e.to_string()));
        }
        return Ok(what.to_owned());
    }
    let Some(name) = vx::module_name_of_file(p) else {
        return Err(Failure::usage(if p.exists() {
            format!("{what}: neither a plugin directory nor a module file (a module file is named lib<name>.so)")
        } else {
            format!(
                "{what}: no such file or directory (give a plugin directory, a module name, or a module file named \
                 lib<name>.so)"
            )
        }));
    };
    match std::fs::metadata(p) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Failure::module(format!("no file {what} (a module given as a path is loaded from that file)")));
        }
        Err(e) => return Err(Failure::module(format!("cannot read the module file {what}: {e}"))),
        Ok(m) if !m.is_file() => return Err(Failure::module(format!("{what} is not a module file (not a file)"))),
        Ok(_) => {}
    }
    let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    ctx.add_module_dir(dir.to_path_buf());
    // The name is looked up in the search path: the file given must be the one it finds.
    if let Ok(found) = ctx.resolve_module(&name) {
        let same = |a: &Path, b: &Path| std::fs::canonicalize(a).ok() == std::fs::canonicalize(b).ok();
        if !same(&found, p) {
            return Err(Failure::module(format!(
                "{what}: module '{name}' is found first as {} (earlier in the search path: -M, VX_MODULE_PATH); \
                 name that file, or remove it from the search path",
                found.display()
            )));
        }
    }
    ctx.load_module(&name).map_err(|e| Failure::module(e.to_string()))?;
    Ok(name)
}

/// How `vx inspect` names a kernel's kind: `tiling`, `target` (implementations on targets only,
/// none on the host) or `user`.
fn kind_of(k: &Kernel) -> &'static str {
    if k.is_tiling() {
        "tiling"
    } else if !k.runs_anywhere() && !k.target_names().is_empty() {
        "target"
    } else {
        "user"
    }
}

fn kernel_report(k: &Kernel) -> KernelReport {
    let docs = k.docs();
    let parameters = (0..k.num_params())
        .filter_map(|i| {
            let p = k.parameter(i)?;
            Some(ParamReport {
                index: i,
                name: docs.param_names[i as usize].clone(),
                direction: if p.direction == Direction::Output { "output" } else { "input" },
                data_type: p.data_type.to_string(),
                element: docs.param_elements[i as usize].clone(),
                required: p.state == ParamState::Required,
                state: if p.state == ParamState::Required { "required" } else { "optional" },
            })
        })
        .collect();
    let a = k.attributes();
    let border = border_report(a.border, k.fusion_support().and_then(|f| f.fill));
    let tiling = k.is_tiling().then(|| TilingReport {
        block: [a.block_size.width, a.block_size.height],
        neighborhood: [a.neighborhood.left, a.neighborhood.right, a.neighborhood.top, a.neighborhood.bottom],
        border: border.0,
        border_note: border.1,
        tile_memory: a.tile_memory_size,
        fusion: match k.fusion_support() {
            Some(vx::FusionSupport { fill: Some(fill), rows_n, .. }) => format!("row entry ({fill:?}, {rows_n} rows)"),
            Some(vx::FusionSupport { bounded: true, .. }) => {
                "tile views (fuses when it reads no row above or below)".into()
            }
            _ => "not fusable (no declaration: hand-written, an older SDK, or fusion = false)".into(),
        },
    });
    KernelReport {
        name: k.name().to_owned(),
        enumeration: k.enumeration(),
        kind: kind_of(k),
        summary: docs.summary,
        parameters,
        tiling,
        alias_hints: k
            .alias_hints()
            .into_iter()
            .map(|h| AliasReport {
                a: h.a,
                b: h.b,
                kind: if h.kind == vx::AliasKind::Sparse { "sparse" } else { "dense" },
            })
            .collect(),
        targets: k.target_names(),
        runs_anywhere: k.runs_anywhere(),
        local_data_size: k.local_data_size(),
        valid_rect: if k.is_tiling() { VALID_TILING } else { VALID_USER },
    }
}

/// A tiling kernel's border as the attribute spells it, what it means and what a node may set
/// (`border` in a graph file, `Node::set_border`): a row kernel's declared edge rule, applied by
/// the SDK, or the kernel's tiling border.
fn border_report(border: BorderMode, row_rule: Option<vx::RowFill>) -> (String, String) {
    match (row_rule, border) {
        (Some(rule), _) => (
            format!("{rule:?}"),
            "row kernel: the SDK extends the image edge by this rule; nodes may set: undefined".into(),
        ),
        (None, BorderMode::Undefined) => (
            "Undefined".into(),
            "the image edge is left unwritten; nodes may set: self, if the kernel has a flexible function".into(),
        ),
        (None, BorderMode::Self_) => {
            ("Self_".into(), "the kernel handles the image edge itself; nodes may set: undefined".into())
        }
        (None, other) => (format!("{other:?}"), String::new()),
    }
}

/// The valid-rectangle rule of a tiling kernel's outputs.
const VALID_TILING: &str = "what its tiles cover: the whole output, less the neighborhood's border under border \
                            Undefined and the pixels past the last whole block when it has no flexible function";
/// The valid-rectangle rule of a user kernel from a module (ABI 5 carries no callback).
const VALID_USER: &str =
    "the whole output (a module kernel has no valid-rectangle callback: the module ABI carries none)";

/// Describe module `name`, loaded in `ctx`.
pub(crate) fn report(ctx: &Context, name: &str) -> Result<ModuleReport, Failure> {
    let version = match ctx.module_state(name) {
        Some(ModuleState::Loaded { version, .. }) => version,
        other => return Err(Failure::module(format!("module '{name}' is not loaded ({other:?})"))),
    };
    let info = ctx.module_info(name).ok_or_else(|| Failure::module(format!("module '{name}' is not loaded")))?;
    let file = info.file;
    let sha256 = vx::module_digest(&file).map_err(|e| Failure::module(e.to_string()))?;
    let build = build_of(info.build).0;
    let kernels = ctx
        .module_kernels(name)
        .iter()
        .map(|k| ctx.kernel_by_name(k).map(|k| kernel_report(&k)).map_err(|e| Failure::module(e.to_string())))
        .collect::<Result<_, _>>()?;
    Ok(ModuleReport {
        module: name.to_owned(),
        version,
        abi_version: vx::MODULE_ABI_VERSION,
        file,
        sha256,
        build,
        kernels,
    })
}

/// What `vx inspect` adds to a build's name.
fn build_note(build: &str) -> &'static str {
    match build {
        "debug" => build_of(vx::ModuleBuild::Debug).1,
        "unknown" => build_of(vx::ModuleBuild::Unknown).1,
        _ => "",
    }
}

/// The report as text, `gst-inspect` style.
pub(crate) fn text(r: &ModuleReport) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "Module {} {} (module ABI {})", r.module, r.version, r.abi_version);
    let _ = writeln!(s, "  file: {}", r.file.display());
    let _ = writeln!(s, "  sha256: {}", r.sha256);
    let _ = writeln!(s, "  build: {}{}", r.build, build_note(r.build));
    let _ = writeln!(s, "  kernels: {}", r.kernels.len());
    for k in &r.kernels {
        let _ = writeln!(s, "\n{}  [{} kernel, enumeration {:#x}]", k.name, k.kind, k.enumeration);
        if let Some(summary) = &k.summary {
            let _ = writeln!(s, "  {summary}");
        }
        let _ = writeln!(s, "  parameters:");
        let width = k.parameters.iter().filter_map(|p| p.name.as_ref().map(String::len)).max().unwrap_or(1);
        for p in &k.parameters {
            let _ = writeln!(
                s,
                "    {}  {:<width$}  {:<6}  {:<7} {:<6}  {}",
                p.index,
                p.name.as_deref().unwrap_or("-"),
                p.direction,
                p.data_type,
                p.element.as_deref().unwrap_or("-"),
                if p.required { "required" } else { "optional" },
            );
        }
        if let Some(t) = &k.tiling {
            let [l, rr, top, b] = t.neighborhood;
            let _ = writeln!(
                s,
                "  tiling: block {}x{}, neighborhood ({l}, {rr}, {top}, {b}), tile memory {} bytes",
                t.block[0], t.block[1], t.tile_memory
            );
            let _ = writeln!(s, "  border: {} ({})", t.border, t.border_note);
            let _ = writeln!(s, "  fusion: {}", t.fusion);
        }
        for h in &k.alias_hints {
            let _ = writeln!(s, "  alias hint: parameters {} and {} ({})", h.a, h.b, h.kind);
        }
        if !k.targets.is_empty() {
            let _ = writeln!(s, "  targets: {}", k.targets.join(", "));
        }
    }
    s
}

/// One module of a plugin directory, as `vx inspect DIR` lists it.
#[derive(Debug, Serialize)]
pub(crate) struct ListedModule {
    pub(crate) name: String,
    pub(crate) file: PathBuf,
    /// Its version (when it loaded).
    pub(crate) version: Option<String>,
    /// The module ABI it was built for (the host's, when it loaded).
    pub(crate) abi_version: Option<u32>,
    pub(crate) kernels: Vec<String>,
    /// Why it did not load.
    pub(crate) error: Option<String>,
}

/// A plugin directory's modules.
#[derive(Debug, Serialize)]
pub(crate) struct DirReport {
    pub(crate) directory: PathBuf,
    /// Why the directory could not be read (absent from the disk, not a directory, …).
    pub(crate) error: Option<String>,
    pub(crate) modules: Vec<ListedModule>,
}

/// Every directory of the search path.
#[derive(Debug, Serialize)]
pub(crate) struct SearchPath {
    pub(crate) search_path: Vec<DirReport>,
}

/// True when loading failed because the file is a shared library but no kernel module (no vx-rs
/// entry point: a proc-macro library beside the `vx` binary, say).
fn not_a_module(e: &vx::Error) -> bool {
    e.kind() == vx::ErrorKind::InvalidModule && e.to_string().contains("no vx-rs entry point")
}

/// What `vx inspect` says of a shared library that is no kernel module.
const NOT_A_MODULE: &str = "not a kernel module (it exports no vx-rs module entry point)";

/// Every module (`lib<name>.so`) of `dir`, in name order, each loaded in a context of its own.
/// `skip_other_libraries`: leave out shared libraries that are no kernel module (else they are
/// listed as such).
pub(crate) fn list_dir(dir: &Path, skip_other_libraries: bool) -> DirReport {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => return DirReport { directory: dir.to_path_buf(), error: Some(e.to_string()), modules: Vec::new() },
    };
    let mut files: Vec<(String, PathBuf)> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter_map(|p| vx::module_name_of_file(&p).map(|n| (n, p)))
        .collect();
    files.sort();
    let modules = files
        .into_iter()
        .filter_map(|(name, file)| {
            let mut m = ListedModule {
                name: name.clone(),
                file,
                version: None,
                abi_version: None,
                kernels: Vec::new(),
                error: None,
            };
            let loaded = Context::builder().threads(1).build().and_then(|ctx| {
                ctx.add_module_dir(dir);
                ctx.load_module(&name).map(|()| ctx)
            });
            match loaded {
                Ok(ctx) => {
                    if let Some(ModuleState::Loaded { version, .. }) = ctx.module_state(&name) {
                        m.version = Some(version);
                    }
                    m.abi_version = Some(vx::MODULE_ABI_VERSION);
                    m.kernels = ctx.module_kernels(&name);
                }
                Err(e) if not_a_module(&e) => {
                    if skip_other_libraries {
                        return None;
                    }
                    m.error = Some(NOT_A_MODULE.to_owned());
                }
                Err(e) => m.error = Some(e.to_string()),
            }
            Some(m)
        })
        .collect();
    DirReport { directory: dir.to_path_buf(), error: None, modules }
}

/// A directory's listing as text.
pub(crate) fn dir_text(d: &DirReport) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    if let Some(e) = &d.error {
        let _ = writeln!(s, "{}: not readable ({e})", d.directory.display());
        return s;
    }
    let _ = writeln!(s, "{}: {} module(s)", d.directory.display(), d.modules.len());
    let width = d.modules.iter().map(|m| m.name.len()).max().unwrap_or(0);
    for m in &d.modules {
        match (&m.version, &m.error) {
            (Some(v), _) => {
                let abi = m.abi_version.map(|a| a.to_string()).unwrap_or_default();
                let _ = writeln!(
                    s,
                    "  {:<width$}  {v:<8}  ABI {abi}  {} kernel(s): {}",
                    m.name,
                    m.kernels.len(),
                    m.kernels.join(", ")
                );
            }
            (None, Some(e)) if e == NOT_A_MODULE => {
                let _ = writeln!(s, "  {:<width$}  {e}", m.name);
            }
            (None, e) => {
                let _ = writeln!(s, "  {:<width$}  not loadable: {}", m.name, e.as_deref().unwrap_or("?"));
            }
        }
    }
    s
}

/// The search path's listing as text.
pub(crate) fn search_path_text(dirs: &[DirReport]) -> String {
    if dirs.is_empty() {
        return "the module search path is empty (give -M DIR or set VX_MODULE_PATH)\n".to_owned();
    }
    dirs.iter().map(dir_text).collect::<Vec<_>>().join("\n")
}

/// One kernel in detail: its module and its report.
#[derive(Debug, Serialize)]
pub(crate) struct KernelDetails<'a> {
    pub(crate) module: &'a str,
    pub(crate) version: &'a str,
    pub(crate) abi_version: u32,
    pub(crate) build: &'a str,
    pub(crate) kernel: &'a KernelReport,
}

/// `name` is a short name of the kernel `full`: the part of `full` after one of its dots.
pub(crate) fn short_name_of(full: &str, name: &str) -> bool {
    !name.is_empty() && full.strip_suffix(name).is_some_and(|head| head.ends_with('.'))
}

/// Kernel `name` of the module report `r`: its full name, or a unique short name — the part after
/// a `.` of the full name (`gaussian3x3` for `filters.gaussian3x3`). Refused, listing the
/// candidates, when a short name fits several kernels, and listing the module's kernels when it
/// fits none.
pub(crate) fn kernel_details<'a>(r: &'a ModuleReport, name: &str) -> Result<KernelDetails<'a>, Failure> {
    let kernel = match r.kernels.iter().find(|k| k.name == name) {
        Some(k) => k,
        None => {
            let fits: Vec<&'a KernelReport> = r.kernels.iter().filter(|k| short_name_of(&k.name, name)).collect();
            match fits.as_slice() {
                [one] => *one,
                [] => {
                    let names: Vec<&str> = r.kernels.iter().map(|k| k.name.as_str()).collect();
                    return Err(Failure::usage(format!(
                        "module '{}' has no kernel '{name}' (its kernels: {})",
                        r.module,
                        names.join(", ")
                    )));
                }
                many => {
                    let names: Vec<&str> = many.iter().map(|k| k.name.as_str()).collect();
                    return Err(Failure::usage(format!(
                        "kernel name '{name}' is ambiguous in module '{}': it could be {}; give the full name",
                        r.module,
                        names.join(" or ")
                    )));
                }
            }
        }
    };
    Ok(KernelDetails { module: &r.module, version: &r.version, abi_version: r.abi_version, build: r.build, kernel })
}

/// One kernel in detail as text.
pub(crate) fn kernel_text(d: &KernelDetails<'_>) -> String {
    use std::fmt::Write;
    let k = d.kernel;
    let mut s = String::new();
    let _ = writeln!(s, "Kernel {}  [{} kernel, enumeration {:#x}]", k.name, k.kind, k.enumeration);
    let _ = writeln!(
        s,
        "  module: {} {} (module ABI {}), {} build{}",
        d.module,
        d.version,
        d.abi_version,
        d.build,
        build_note(d.build)
    );
    if let Some(summary) = &k.summary {
        let _ = writeln!(s, "  summary: {summary}");
    }
    let _ = writeln!(s, "  parameters ({}):", k.parameters.len());
    let _ =
        writeln!(s, "    {:<5}  {:<12}  {:<9}  {:<7}  {:<7}  state", "index", "name", "direction", "type", "element");
    for p in &k.parameters {
        let _ = writeln!(
            s,
            "    {:<5}  {:<12}  {:<9}  {:<7}  {:<7}  {}",
            p.index,
            p.name.as_deref().unwrap_or("-"),
            p.direction,
            p.data_type,
            p.element.as_deref().unwrap_or("-"),
            p.state
        );
    }
    match &k.tiling {
        Some(t) => {
            let [l, r, top, b] = t.neighborhood;
            let _ = writeln!(s, "  tiling:");
            let _ = writeln!(s, "    output block: {}x{}", t.block[0], t.block[1]);
            let _ = writeln!(s, "    input neighborhood: left {l}, right {r}, top {top}, bottom {b}");
            let _ = writeln!(s, "    border: {} ({})", t.border, t.border_note);
            let _ = writeln!(s, "    tile memory: {} bytes", t.tile_memory);
            let _ = writeln!(s, "    fusion: {}", t.fusion);
        }
        None => {
            let _ = writeln!(s, "  tiling: none (a {} kernel)", k.kind);
        }
    }
    if k.alias_hints.is_empty() {
        let _ = writeln!(s, "  alias hints: none");
    }
    for h in &k.alias_hints {
        let _ = writeln!(s, "  alias hint: parameters {} and {} ({})", h.a, h.b, h.kind);
    }
    let mut targets: Vec<String> = Vec::new();
    if k.runs_anywhere {
        targets.push("host (its own process function: any target)".into());
    }
    targets.extend(k.targets.iter().cloned());
    let _ = writeln!(s, "  targets: {}", targets.join(", "));
    let _ = writeln!(s, "  local data: {} bytes", k.local_data_size);
    let _ = writeln!(s, "  valid rectangle: {}", k.valid_rect);
    s
}

#[cfg(test)]
mod tests {
    use super::short_name_of;

    #[test]
    fn a_short_name_is_what_follows_a_dot() {
        assert!(short_name_of("filters.gaussian3x3", "gaussian3x3"));
        assert!(short_name_of("a.b.c", "c") && short_name_of("a.b.c", "b.c"));
        assert!(!short_name_of("filters.gaussian3x3", "ussian3x3"));
        assert!(!short_name_of("filters.gaussian3x3", "filters.gaussian3x3"));
        assert!(!short_name_of("gaussian3x3", "gaussian3x3"));
        assert!(!short_name_of("filters.gaussian3x3", ""));
    }
}
