//! `vx inspect`: what a kernel module holds — its version, ABI, and every kernel with its
//! parameters (names and element types as the kernel macros record them), tiling attributes, alias
//! hints and summary — as text for people or JSON for machines — and the file's SHA-256, as
//! `ModuleTrust::pin` takes it. The module is loaded into a context of its own, which is what is
//! described.

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
    pub(crate) kernels: Vec<KernelReport>,
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
    pub(crate) targets: Vec<String>,
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
}

#[derive(Debug, Serialize)]
pub(crate) struct TilingReport {
    pub(crate) block: [u32; 2],
    pub(crate) neighborhood: [i32; 4],
    pub(crate) border: String,
    pub(crate) tile_memory: usize,
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
    let name = if what.contains('/') || what.ends_with(".so") {
        let name = vx::module_name_of_file(p)
            .ok_or_else(|| Failure::usage(format!("{what}: a module file is named lib<name>.so")))?;
        let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        ctx.add_module_dir(dir.to_path_buf());
        name
    } else {
        what.to_owned()
    };
    ctx.load_module(&name).map_err(|e| Failure::module(e.to_string()))?;
    Ok(name)
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
            })
        })
        .collect();
    let a = k.attributes();
    let tiling = k.is_tiling().then(|| TilingReport {
        block: [a.block_size.width, a.block_size.height],
        neighborhood: [a.neighborhood.left, a.neighborhood.right, a.neighborhood.top, a.neighborhood.bottom],
        border: match a.border {
            BorderMode::Undefined => "Undefined".into(),
            BorderMode::Self_ => "Self".into(),
            BorderMode::Replicate => "Replicate".into(),
            BorderMode::Constant(v) => format!("Constant({v})"),
        },
        tile_memory: a.tile_memory_size,
    });
    KernelReport {
        name: k.name().to_owned(),
        enumeration: k.enumeration(),
        kind: if k.is_tiling() { "tiling" } else { "user" },
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
    }
}

/// Describe module `name`, loaded in `ctx`.
pub(crate) fn report(ctx: &Context, name: &str) -> Result<ModuleReport, Failure> {
    let version = match ctx.module_state(name) {
        Some(ModuleState::Loaded { version, .. }) => version,
        other => return Err(Failure::module(format!("module '{name}' is not loaded ({other:?})"))),
    };
    let file = ctx.resolve_module(name).map_err(|e| Failure::module(e.to_string()))?;
    let sha256 = vx::module_digest(&file).map_err(|e| Failure::module(e.to_string()))?;
    let kernels = ctx
        .module_kernels(name)
        .iter()
        .map(|k| ctx.kernel_by_name(k).map(|k| kernel_report(&k)).map_err(|e| Failure::module(e.to_string())))
        .collect::<Result<_, _>>()?;
    Ok(ModuleReport { module: name.to_owned(), version, abi_version: vx::MODULE_ABI_VERSION, file, sha256, kernels })
}

/// The report as text, `gst-inspect` style.
pub(crate) fn text(r: &ModuleReport) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "Module {} {} (module ABI {})", r.module, r.version, r.abi_version);
    let _ = writeln!(s, "  file: {}", r.file.display());
    let _ = writeln!(s, "  sha256: {}", r.sha256);
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
                "  tiling: block {}x{}, neighborhood ({l}, {rr}, {top}, {b}), border {}, tile memory {} bytes",
                t.block[0], t.block[1], t.border, t.tile_memory
            );
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
