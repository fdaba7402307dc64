//! `vx new`: a kernel-module crate that tests, builds, inspects and runs as made.
//!
//! `vx new PATH [--target NAME] [--app]` writes, into a directory that must not exist yet:
//!
//! - `Cargo.toml`: a `cdylib` (the module) + `rlib` (tests, other crates), the SDK by version
//!   (`vx-plugin-abi`, the runtime `vx-rs` as a dev-dependency for in-process tests), `rust-version`
//!   = the SDK's MSRV (edition 2024's resolver then picks dependency versions that build with it),
//!   and a `[patch.crates-io]` to a local checkout of vx-rs when this `vx` was built from one (or
//!   `--sdk-path`), commented out otherwise;
//! - `src/lib.rs`: `vx_module!`, one `#[tiling_kernel]`, one row kernel (`Rows<u8, 3>`, a 3×3
//!   sharpen under `border = Replicate`), one `#[user_kernel]`, and with `--target` one
//!   `#[target_kernel]` on that target;
//! - `src/tests.rs`: a test per kernel, run in process (`Context::publish_in_process`); the row
//!   kernel's against a reference computed in the test, image edge included;
//! - `graph.toml` and `data/input.png`: a graph `vx run` runs on the built module;
//! - `README.md` with the next commands, and `.gitignore`.
//!
//! With `--app` the same crate is the root of a cargo workspace whose second member, `app/`, is an
//! application (package `app`, a binary depending on `vx-rs`) that loads the module from the
//! directory it is built into (`target/debug` or `target/release`, the workspace's one target
//! directory), runs the graph of `graph.toml` on `data/input.png` and writes `out-app.png`. The
//! workspace root is the only place cargo reads `[patch]`, so the one `[patch.crates-io]` table
//! serves both members; both ask for `vx-rs` with the same features, so the runtime builds once
//! for the module's tests and the application.
//!
//! Every file is created exclusively (`create_new`): nothing existing is overwritten, and nothing
//! is written through a symlink. A crate made inside another cargo workspace gets an empty
//! `[workspace]` table so that it builds on its own (the note says how to join the workspace); a
//! `--app` workspace is refused where that workspace's `members` would claim it (a workspace cannot
//! be a member of another).

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::Failure;

/// The SDK version a new crate asks for.
const SDK_VERSION: &str = "0.1";
/// The SDK's minimum supported Rust version (the workspace's `rust-version`).
const MSRV: &str = env!("CARGO_PKG_RUST_VERSION");

/// `vx new PATH [--target TARGET] [--app]`.
#[derive(clap::Args, Debug)]
pub(crate) struct NewArgs {
    /// The directory to create; its last component is the crate's name (letters, digits, `-`, `_`).
    pub(crate) path: PathBuf,
    /// Also write a `#[target_kernel]` implemented on this target (a TIOVX user target kernel).
    #[arg(long, value_name = "TARGET")]
    pub(crate) target: Option<String>,
    /// The vx-rs checkout to build against (`[patch.crates-io]` to its crates). Default: the
    /// checkout this `vx` was built from, when it is still there.
    #[arg(long, value_name = "DIR", conflicts_with = "registry")]
    pub(crate) sdk_path: Option<PathBuf>,
    /// Depend on the SDK from crates.io only (the local-checkout patch is written commented out).
    /// The crates are not published yet: such a crate builds once they are.
    #[arg(long)]
    pub(crate) registry: bool,
    /// Make a cargo workspace: the module crate at its root and an application crate `app/` that
    /// loads the built module and runs its kernels on `data/input.png` (one target directory for
    /// both, so the runtime builds once).
    #[arg(long)]
    pub(crate) app: bool,
}

/// The package name of the application crate `vx new --app` writes (in `app/`).
const APP: &str = "app";

/// `vx new`.
pub(crate) fn new(args: &NewArgs) -> Result<(), Failure> {
    let made = make(args)?;
    let dir = args.path.display();
    let mut out = if args.app {
        format!(
            "Created the cargo workspace {dir}: kernel module crate `{}` at its root, application `{APP}` in \
             {dir}/app (one target directory for both)\n",
            made.crate_name
        )
    } else {
        format!("Created kernel module crate `{}` in {dir}\n", made.crate_name)
    };
    match (&made.sdk, &made.workspace) {
        (Some(sdk), Workspace::Member(_)) => {
            out += &format!(
                "  SDK: the vx-rs checkout at {} (its [patch.crates-io] lines belong at the workspace root: see below)\n",
                sdk.display()
            )
        }
        (Some(sdk), _) => {
            out += &format!("  SDK: the vx-rs checkout at {} ([patch.crates-io] in Cargo.toml)\n", sdk.display())
        }
        (None, _) => {
            out += &format!(
                "  SDK: vx-plugin-abi {SDK_VERSION} and vx-rs {SDK_VERSION} from crates.io, where they are not \
                 published yet: the crate builds once they are, or with the [patch.crates-io] table uncommented \
                 (or `vx new --sdk-path DIR`)\n"
            )
        }
    }
    match &made.workspace {
        Workspace::None => {}
        Workspace::Outside(ws) if args.app => {
            out += &format!(
                "  note: the workspace is inside the cargo workspace at {} but not one of its members, so it is a \
                 workspace of its own (its Cargo.toml has a `[workspace]` table).\n",
                ws.display()
            )
        }
        Workspace::Outside(ws) => {
            out += &format!(
                "  note: the crate is inside the cargo workspace at {} but not one of its members, so it stands \
                 alone (`[workspace]` in its Cargo.toml). To make it a member, delete that table, add the crate to \
                 the workspace's `members` and move its [patch.crates-io] table to the workspace's Cargo.toml.\n",
                ws.display()
            )
        }
        Workspace::Member(ws) => {
            let todo = match &made.sdk {
                Some(_) => format!(
                    "copy the [patch.crates-io] table written commented out in {}/Cargo.toml into {}/Cargo.toml \
                     before building (until vx-rs is on crates.io the crate does not build without it).",
                    args.path.display(),
                    ws.display()
                ),
                None => "nothing to do once the SDK comes from crates.io (it is not published yet).".to_owned(),
            };
            out += &format!(
                "  note: the crate is a member of the cargo workspace at {} (its `members` match it), and cargo \
                 reads [patch] only at a workspace's root: {todo}\n",
                ws.display()
            )
        }
    }
    let app = if args.app { "\n  cargo run -p app                       # writes out-app.png" } else { "" };
    out += &format!(
        "\nNext:\n  cd {dir}\n  cargo test\n  cargo build{app}\n  vx inspect target/debug/lib{}.so\n  \
         vx run -M target/debug graph.toml      # writes out.png\n",
        made.lib_name
    );
    crate::output::print(&out)
}

/// Where the new crate stands with respect to an enclosing cargo workspace.
#[derive(Debug)]
pub(crate) enum Workspace {
    /// No workspace above it.
    None,
    /// Inside a workspace's directory but not a member: it gets a `[workspace]` table of its own.
    Outside(PathBuf),
    /// A member of that workspace (its `members` globs match, `exclude` does not).
    Member(PathBuf),
}

/// What `make` wrote.
#[derive(Debug)]
pub(crate) struct Made {
    crate_name: String,
    lib_name: String,
    sdk: Option<PathBuf>,
    workspace: Workspace,
}

/// Write the crate; on failure remove what was written (the directory was made by us).
fn make(args: &NewArgs) -> Result<Made, Failure> {
    let path = &args.path;
    let crate_name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| {
            Failure::usage(format!("vx new: `{}` has no directory name to use as the crate's name", path.display()))
        })?
        .to_owned();
    check_crate_name(&crate_name)
        .map_err(|why| Failure::usage(format!("vx new: invalid crate name `{crate_name}`: {why}")))?;
    if args.app && crate_name.replace('-', "_") == APP {
        return Err(Failure::usage(format!(
            "vx new: invalid crate name `{crate_name}`: with --app it is the name of the application crate \
             (`{APP}/`); choose another directory name"
        )));
    }
    if let Some(t) = &args.target {
        check_target_name(t).map_err(|why| Failure::usage(format!("vx new: invalid target name `{t}`: {why}")))?;
    }
    if fs::symlink_metadata(path).is_ok() {
        return Err(Failure::usage(format!(
            "vx new: `{}` already exists; choose a new directory (vx new never writes into an existing one)",
            path.display()
        )));
    }
    let sdk = match (&args.sdk_path, args.registry) {
        (_, true) => None,
        (Some(p), false) => Some(checkout(p).ok_or_else(|| {
            Failure::usage(format!(
                "vx new: --sdk-path `{}` is not a vx-rs checkout (no vx-plugin-abi/Cargo.toml and vx-core/Cargo.toml in it)",
                p.display()
            ))
        })?),
        // The checkout this `vx` was built from, if it is still there and only its owner (or
        // root) can change it: its path is fixed at build time, and a checkout in a shared
        // directory that was deleted could be made again by another user, whose build scripts the
        // new crate would then run.
        (None, false) => checkout(&Path::new(env!("CARGO_MANIFEST_DIR")).join("..")).and_then(|dir| {
            match untrusted_by(&dir) {
                None => Some(dir),
                Some(why) => {
                    eprintln!(
                        "vx new: not using the SDK checkout `{}` this vx was built from: {why}; the crate depends \
                         on the crates by version, which are not on crates.io yet (--sdk-path uses a checkout anyway)",
                        dir.display()
                    );
                    None
                }
            }
        }),
    };
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // The parents this call creates, to remove again (when still empty) if writing fails.
    let created: Vec<PathBuf> = parent
        .ancestors()
        .take_while(|a| !a.as_os_str().is_empty() && fs::symlink_metadata(a).is_err())
        .map(Path::to_path_buf)
        .collect();
    let undo = |created: &[PathBuf]| {
        let _ = fs::remove_dir_all(path);
        for dir in created {
            let _ = fs::remove_dir(dir);
        }
    };
    fs::create_dir_all(&parent)
        .map_err(|e| Failure::usage(format!("vx new: cannot create `{}`: {e}", parent.display())))?;
    let workspace = workspace_of(&parent, &crate_name);
    if let (true, Workspace::Member(ws)) = (args.app, &workspace) {
        undo(&created);
        return Err(Failure::usage(format!(
            "vx new: --app makes a cargo workspace, and `{}` would be a member of the cargo workspace at {} (its \
             `members` match it), which cannot hold another workspace: choose a directory outside it, add the path \
             to its `exclude`, or leave out --app",
            path.display(),
            ws.display()
        )));
    }
    if let Err(e) = fs::create_dir(path) {
        undo(&created);
        return Err(Failure::usage(format!("vx new: cannot create `{}`: {e}", path.display())));
    }
    let lib_name = crate_name.replace('-', "_");
    let files = Files {
        crate_name: &crate_name,
        lib_name: &lib_name,
        target: args.target.as_deref(),
        sdk: sdk.as_deref(),
        app: args.app,
    };
    if let Err(e) = files.write_all(path, &workspace) {
        // Only what this call created: the directory did not exist before.
        undo(&created);
        return Err(Failure::usage(format!("vx new: writing `{}` failed: {e}", path.display())));
    }
    Ok(Made { crate_name, lib_name, sdk, workspace })
}

/// Cargo's rules for a package name that is also a library name, plus the names the library cannot
/// take.
pub(crate) fn check_crate_name(name: &str) -> Result<(), String> {
    const RESERVED: &[&str] = &[
        // Rust keywords (strict and reserved) and the names of the standard crates.
        "abstract",
        "as",
        "async",
        "await",
        "become",
        "box",
        "break",
        "const",
        "continue",
        "crate",
        "do",
        "dyn",
        "else",
        "enum",
        "extern",
        "false",
        "final",
        "fn",
        "for",
        "gen",
        "if",
        "impl",
        "in",
        "let",
        "loop",
        "macro",
        "match",
        "mod",
        "move",
        "mut",
        "override",
        "priv",
        "pub",
        "ref",
        "return",
        "self",
        "Self",
        "static",
        "struct",
        "super",
        "trait",
        "true",
        "try",
        "type",
        "typeof",
        "unsafe",
        "unsized",
        "use",
        "virtual",
        "where",
        "while",
        "yield",
        "std",
        "core",
        "alloc",
        "proc_macro",
        "proc-macro",
        "test",
    ];
    // The SDK's own packages and libraries: a crate of one of these names collides with its dependency.
    const SDK: &[&str] = &["vx", "vx_rs", "vx_plugin_abi", "vx_macros", "vx_rs_cli", "vx_cli"];
    let first = name.chars().next().ok_or("it is empty")?;
    if !first.is_ascii_alphabetic() {
        return Err(format!("it must start with an ASCII letter, not `{first}`"));
    }
    if let Some(c) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_')) {
        return Err(format!("`{c}` is not allowed: use ASCII letters, digits, `-` and `_`"));
    }
    if name.len() > 64 {
        return Err(format!("it is {} characters long; at most 64", name.len()));
    }
    if RESERVED.contains(&name) || RESERVED.contains(&name.replace('-', "_").as_str()) {
        return Err("it is a Rust keyword or the name of a standard crate".into());
    }
    if SDK.contains(&name.replace('-', "_").as_str()) {
        return Err("it is the name of one of the SDK's own crates, which the new crate depends on".into());
    }
    Ok(())
}

/// A target name the kernel attribute and the runtime accept.
fn check_target_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("it is empty".into());
    }
    if let Some(c) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-' || *c == '.')) {
        return Err(format!("`{c}` is not allowed: use ASCII letters, digits, `_`, `-` and `.`"));
    }
    if name.eq_ignore_ascii_case("any") || name.eq_ignore_ascii_case("host") {
        return Err("`any` and `host` are the runtime's own targets".into());
    }
    Ok(())
}

/// Why `dir` (canonical) and its ancestors could be changed by someone other than this user or
/// root, if they could: a directory owned by another user, or writable by others without the
/// sticky bit (`/tmp` itself is fine; what another user made inside it is not).
fn untrusted_by(dir: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    for d in dir.ancestors() {
        let m = match fs::metadata(d) {
            Ok(m) => m,
            Err(e) => return Some(format!("`{}`: {e}", d.display())),
        };
        if m.uid() != me && m.uid() != 0 {
            return Some(format!("`{}` belongs to user {}", d.display(), m.uid()));
        }
        if m.mode() & 0o022 != 0 && m.mode() & 0o1000 == 0 {
            return Some(format!("`{}` is writable by others ({:o})", d.display(), m.mode() & 0o7777));
        }
    }
    None
}

/// The vx-rs checkout at `dir` (canonical), if it is one.
fn checkout(dir: &Path) -> Option<PathBuf> {
    let dir = dir.canonicalize().ok()?;
    (dir.join("vx-plugin-abi/Cargo.toml").is_file() && dir.join("vx-core/Cargo.toml").is_file()).then_some(dir)
}

/// How a crate `name` made in `parent` relates to the nearest enclosing workspace (the nearest
/// directory at or above `parent` whose `Cargo.toml` has a `[workspace]` table), by cargo's rules:
/// a member when a `members` glob matches its path and no `exclude` entry is a prefix of it.
fn workspace_of(parent: &Path, name: &str) -> Workspace {
    let Ok(parent) = parent.canonicalize() else { return Workspace::None };
    let found = parent.ancestors().find_map(|d| {
        let text = fs::read_to_string(d.join("Cargo.toml")).ok()?;
        let doc: toml::Table = text.parse().ok()?;
        let ws = doc.get("workspace")?.as_table()?.clone();
        Some((d.to_path_buf(), ws))
    });
    let Some((root, ws)) = found else { return Workspace::None };
    let path = parent.join(name);
    let Ok(relative) = path.strip_prefix(&root) else { return Workspace::Outside(root) };
    let entries = |key: &str| -> Vec<String> {
        ws.get(key).and_then(|v| v.as_array()).map_or_else(Vec::new, |a| {
            a.iter().filter_map(|v| v.as_str()).map(|s| s.trim_end_matches('/').to_owned()).collect()
        })
    };
    let options = glob::MatchOptions { require_literal_separator: true, ..Default::default() };
    let member =
        entries("members").iter().any(|m| glob::Pattern::new(m).is_ok_and(|p| p.matches_path_with(relative, options)));
    let excluded = entries("exclude").iter().any(|e| relative.starts_with(e));
    if member && !excluded { Workspace::Member(root) } else { Workspace::Outside(root) }
}

/// The files of a new crate.
struct Files<'a> {
    crate_name: &'a str,
    lib_name: &'a str,
    target: Option<&'a str>,
    sdk: Option<&'a Path>,
    /// `--app`: the crate is the root of a workspace with the application crate `app/`.
    app: bool,
}

impl Files<'_> {
    fn write_all(&self, dir: &Path, workspace: &Workspace) -> std::io::Result<()> {
        fs::create_dir(dir.join("src"))?;
        fs::create_dir(dir.join("data"))?;
        create(&dir.join("Cargo.toml"), self.cargo_toml(workspace).as_bytes())?;
        create(&dir.join("src/lib.rs"), self.lib_rs().as_bytes())?;
        create(&dir.join("src/tests.rs"), self.tests_rs().as_bytes())?;
        let mut sources = vec![dir.join("src/lib.rs"), dir.join("src/tests.rs")];
        if self.app {
            fs::create_dir(dir.join(APP))?;
            fs::create_dir(dir.join(APP).join("src"))?;
            create(&dir.join(APP).join("Cargo.toml"), self.app_cargo_toml().as_bytes())?;
            create(&dir.join(APP).join("src/main.rs"), self.app_main_rs().as_bytes())?;
            sources.push(dir.join(APP).join("src/main.rs"));
        }
        // Formatted as `cargo fmt` would (names of any length); skipped quietly without rustfmt.
        let _ = std::process::Command::new("rustfmt")
            .args(["--edition", "2024"])
            .args(&sources)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
        create(&dir.join("graph.toml"), self.graph_toml().as_bytes())?;
        create(&dir.join("README.md"), self.readme().as_bytes())?;
        // An application's Cargo.lock belongs in version control; a library's need not.
        let ignore: &[u8] =
            if self.app { b"/target\n/out.png\n/out-app.png\n" } else { b"/target\n/Cargo.lock\n/out.png\n" };
        create(&dir.join(".gitignore"), ignore)?;
        create(&dir.join("data/input.png"), &input_png()?)?;
        Ok(())
    }

    fn cargo_toml(&self, workspace: &Workspace) -> String {
        let Files { crate_name, .. } = self;
        let member = matches!(workspace, Workspace::Member(_));
        let patch = match self.sdk {
            Some(sdk) if member => {
                let p = |c: &str| toml_string(&sdk.join(c).display().to_string());
                format!(
                    "# This crate is a member of a workspace, and cargo reads [patch] only at the workspace's\n\
                     # root: these lines (the SDK from a local checkout of vx-rs) belong in its Cargo.toml.\n\
                     # [patch.crates-io]\n\
                     # vx-plugin-abi = {{ path = {} }}\n\
                     # vx-macros = {{ path = {} }}\n\
                     # vx-rs = {{ path = {} }}\n",
                    p("vx-plugin-abi"),
                    p("vx-macros"),
                    p("vx-core")
                )
            }
            Some(sdk) => {
                let p = |c: &str| toml_string(&sdk.join(c).display().to_string());
                format!(
                    "# The SDK from a local checkout of vx-rs instead of crates.io (written by `vx new`; delete\n\
                     # this table once the crates are published: they are not on crates.io yet).\n\
                     [patch.crates-io]\n\
                     vx-plugin-abi = {{ path = {} }}\n\
                     vx-macros = {{ path = {} }}\n\
                     vx-rs = {{ path = {} }}\n",
                    p("vx-plugin-abi"),
                    p("vx-macros"),
                    p("vx-core")
                )
            }
            None => "# To build against a local checkout of vx-rs instead of crates.io:\n\
                     # [patch.crates-io]\n\
                     # vx-plugin-abi = { path = \"/path/to/vx-rs/vx-plugin-abi\" }\n\
                     # vx-macros = { path = \"/path/to/vx-rs/vx-macros\" }\n\
                     # vx-rs = { path = \"/path/to/vx-rs/vx-core\" }\n"
                .to_owned(),
        };
        let workspace = if self.app {
            "\n# The workspace: this module crate and the application in app/. Cargo reads [patch] only here,\n\
             # at the root, so the table above serves both; one target directory (target/) holds both builds,\n\
             # so the runtime compiles once for the module's tests and the application.\n\
             [workspace]\n\
             members = [\".\", \"app\"]\n\
             # `cargo build` and `cargo test` here build both (`-p NAME` picks one).\n\
             default-members = [\".\", \"app\"]\n"
        } else if matches!(workspace, Workspace::Outside(_)) {
            "\n# This crate was made inside another cargo workspace and stands alone; to make it a member,\n\
             # delete this table and add the crate to that workspace's `members`.\n[workspace]\n"
        } else {
            ""
        };
        format!(
            "[package]\n\
             name = \"{crate_name}\"\n\
             version = \"0.1.0\"\n\
             edition = \"2024\"\n\
             # The SDK's minimum Rust; edition 2024's resolver picks dependency versions that build with it.\n\
             rust-version = \"{MSRV}\"\n\
             \n\
             [lib]\n\
             # cdylib: the kernel module the runtime loads (lib{lib}.so); rlib: for tests and other crates.\n\
             crate-type = [\"cdylib\", \"rlib\"]\n\
             \n\
             [dependencies]\n\
             vx-plugin-abi = \"{SDK_VERSION}\"   # the kernel SDK; a module never links the runtime\n\
             \n\
             [dev-dependencies]\n\
             vx-rs = \"{SDK_VERSION}\"           # the runtime, to test the kernels in process\n\
             \n\
             {patch}{workspace}",
            lib = self.lib_name,
        )
    }

    fn lib_rs(&self) -> String {
        let Files { lib_name, .. } = self;
        let mut uses =
            vec!["ImageIn", "ImageOut", "Rows", "Tile", "TileMut", "tiling_kernel", "user_kernel", "vx_module"];
        let mut target_part = String::new();
        if let Some(t) = self.target {
            uses.push("target_kernel");
            target_part = format!(
                r#"
/// The gain of one `{lib_name}.gain` node: made by `create` on the target's thread, changed by
/// commands (`Node::send_command`), dropped at release.
#[derive(Default)]
pub struct Gain {{
    gain: u8,
}}

fn gain_create(g: &mut Gain) -> Result<(), AbiError> {{
    g.gain = 1;
    Ok(())
}}

/// Command `n` sets the gain to `n`.
fn gain_control(c: &Controller, g: &mut Gain) -> Result<(), AbiError> {{
    g.gain = u8::try_from(c.command()).map_err(|_| AbiError::new(Status::InvalidValue, "the gain is 0..=255"))?;
    Ok(())
}}

/// Multiply every pixel by the node's gain (saturating), on target `{t}` only.
#[target_kernel(name = "{lib_name}.gain", target = "{t}", local = Gain, create = gain_create, control = gain_control)]
fn gain(input: &ImageIn<u8>, output: &mut ImageOut<u8>, g: &mut Gain) {{
    for y in 0..input.height() {{
        for (o, &i) in output.row_mut(y).iter_mut().zip(input.row(y)) {{
            *o = i.saturating_mul(g.gain);
        }}
    }}
}}
"#
            );
        }
        let abi_use = if self.target.is_some() {
            "use vx_plugin_abi::module_abi::{AbiError, Controller};\nuse vx_plugin_abi::Status;\n"
        } else {
            ""
        };
        format!(
            r#"//! {crate_name}: a vx-rs kernel module.
//!
//! `cargo build` makes `target/debug/lib{lib_name}.so`, which an application loads with
//! `ctx.add_module_dir(dir)` and `ctx.load_module("{lib_name}")`, and `vx inspect` describes.

{abi_use}use vx_plugin_abi::{{{uses}}};

vx_module!(name = "{lib_name}");

#[cfg(test)]
mod tests;

/// Brighten every pixel by `amount` (saturating), tile by tile. The fast function gets whole
/// 16×1 blocks; the flexible one the columns at the right edge that do not fill a block.
#[tiling_kernel(name = "{lib_name}.brighten", block = 16x1, flexible = brighten_any)]
fn brighten(input: &Tile<u8>, amount: u8, out: &mut TileMut<u8>) {{
    brighten_any(input, amount, out)
}}

/// `brighten` on a tile of any size.
fn brighten_any(input: &Tile<u8>, amount: u8, out: &mut TileMut<u8>) {{
    for y in 0..out.height() {{
        for x in 0..out.width() {{
            out.set(x, y, input.pixel(x, y, 0, 0).saturating_add(amount));
        }}
    }}
}}

/// Sharpen with the 3×3 kernel (0 −1 0 / −1 5 −1 / 0 −1 0), clamped to 0..=255.
///
/// A row kernel: for each output row the SDK hands it the three input rows around it, each one
/// pixel wider than the output on both sides, and past the image edge it repeats the edge pixel
/// (`border = Replicate`), so this one loop computes the edge too.
#[tiling_kernel(name = "{lib_name}.sharpen", nbhd = (-1, 1, -1, 1), border = Replicate)]
fn sharpen([above, row, below]: Rows<u8, 3>, out: &mut [u8]) {{
    for (x, o) in out.iter_mut().enumerate() {{
        // Output pixel `x` sits over column `x + 1` of the input rows (they start one pixel left).
        let around = i16::from(above[x + 1]) + i16::from(row[x]) + i16::from(row[x + 2]) + i16::from(below[x + 1]);
        *o = (5 * i16::from(row[x + 1]) - around).clamp(0, 255) as u8;
    }}
}}

/// Invert every pixel (255 − p), the whole image in one call.
#[user_kernel(name = "{lib_name}.invert")]
fn invert(input: &ImageIn<u8>, output: &mut ImageOut<u8>) {{
    for y in 0..input.height() {{
        for (o, &i) in output.row_mut(y).iter_mut().zip(input.row(y)) {{
            *o = 255 - i;
        }}
    }}
}}
{target_part}"#,
            crate_name = self.crate_name,
            uses = uses.join(", "),
        )
    }

    fn tests_rs(&self) -> String {
        let Files { lib_name, .. } = self;
        let target_test = match self.target {
            Some(t) => format!(
                r#"
#[test]
fn gain_runs_on_its_target_and_takes_commands() -> vx::Result<()> {{
    let ctx = Context::builder().target(TargetConfig::new("{t}")).build()?;
    ctx.publish_in_process()?;
    let gain = ctx.kernel_by_name("{lib_name}.gain")?;
    let input = u8_image(&ctx, 3, 1, &[1, 2, 100])?;
    let output = Image::new(&ctx, 3, 1, ImageFormat::U8)?;
    let graph = Graph::new(&ctx)?;
    let node = graph.add_node(&gain, [&input, &output])?;
    graph.process()?;
    assert_eq!(node.target()?, "{t}");
    assert_eq!(output.to_vec::<u8>()?, [1, 2, 100], "create set the gain to 1");
    node.send_command(3, &[], Duration::from_secs(10))?;
    graph.process()?;
    assert_eq!(output.to_vec::<u8>()?, [3, 6, 255]);
    Ok(())
}}
"#
            ),
            None => String::new(),
        };
        let (extra_use, duration_use) =
            if self.target.is_some() { (", TargetConfig", "use std::time::Duration;\n\n") } else { ("", "") };
        format!(
            r#"//! The kernels tested in process, no shared library: `publish_in_process` registers the kernels
//! compiled into this test binary through the interface a loaded module uses.

{duration_use}use vx::{{Context, Graph, Image, ImageFormat, Rect, Reference, Scalar, ScalarValue{extra_use}}};

fn u8_image(ctx: &Context, width: u32, height: u32, px: &[u8]) -> vx::Result<Image> {{
    let image = Image::new(ctx, width, height, ImageFormat::U8)?;
    image.copy_from(Rect::full(width, height), 0, px)?;
    Ok(image)
}}

#[test]
fn brighten_saturates_on_blocks_and_at_the_right_edge() -> vx::Result<()> {{
    let ctx = Context::new()?;
    ctx.publish_in_process()?;
    let brighten = ctx.kernel_by_name("{lib_name}.brighten")?;
    // 20 columns: one 16×1 block for the fast function, 4 columns for the flexible one.
    let px: Vec<u8> = (0..40).map(|i| i * 6).collect();
    let input = u8_image(&ctx, 20, 2, &px)?;
    let amount = Scalar::new(&ctx, ScalarValue::Uint8(50))?;
    let output = Image::new(&ctx, 20, 2, ImageFormat::U8)?;
    let graph = Graph::new(&ctx)?;
    graph.add_node(&brighten, [Reference::from(&input), Reference::from(&amount), Reference::from(&output)])?;
    graph.process()?;
    let want: Vec<u8> = px.iter().map(|p| p.saturating_add(50)).collect();
    assert_eq!(output.to_vec::<u8>()?, want);
    Ok(())
}}

/// The 3×3 sharpen computed here, pixel by pixel, with the image edge extended as the kernel's
/// `border = Replicate` says: a coordinate past the edge reads the nearest edge pixel.
fn sharpen_reference(px: &[u8], width: usize, height: usize) -> Vec<u8> {{
    let at = |x: isize, y: isize| {{
        let (x, y) = (x.clamp(0, width as isize - 1) as usize, y.clamp(0, height as isize - 1) as usize);
        i32::from(px[y * width + x])
    }};
    let mut out = Vec::with_capacity(width * height);
    for y in 0..height as isize {{
        for x in 0..width as isize {{
            let v = 5 * at(x, y) - at(x - 1, y) - at(x + 1, y) - at(x, y - 1) - at(x, y + 1);
            out.push(v.clamp(0, 255) as u8);
        }}
    }}
    out
}}

#[test]
fn sharpen_matches_the_reference_up_to_the_replicated_edge() -> vx::Result<()> {{
    let ctx = Context::new()?;
    ctx.publish_in_process()?;
    let sharpen = ctx.kernel_by_name("{lib_name}.sharpen")?;
    let (width, height) = (37, 9);
    // Pixels in 60..=139: some outputs clamp at 0 or 255, most do not.
    let mut px: Vec<u8> = (0..width * height).map(|i| 60 + (i * 37 % 80) as u8).collect();
    // The top-left corner, where the rule shows: replicated, its missing left and top neighbors
    // are the corner itself, so it is 5·90 − 90 − 80 − 90 − 70 = 120 (reflect-101 would give 150).
    (px[0], px[1], px[width]) = (90, 80, 70);
    let input = u8_image(&ctx, width as u32, height as u32, &px)?;
    let output = Image::new(&ctx, width as u32, height as u32, ImageFormat::U8)?;
    let graph = Graph::new(&ctx)?;
    graph.add_node(&sharpen, [&input, &output])?;
    graph.process()?;
    let got = output.to_vec::<u8>()?;
    assert_eq!(got[0], 120, "the corner, under Replicate");
    let want = sharpen_reference(&px, width, height);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {{
        assert_eq!(g, w, "pixel ({{}}, {{}})", i % width, i / width);
    }}
    assert_eq!(got.len(), want.len());
    Ok(())
}}

#[test]
fn invert_maps_p_to_255_minus_p() -> vx::Result<()> {{
    let ctx = Context::new()?;
    ctx.publish_in_process()?;
    let invert = ctx.kernel_by_name("{lib_name}.invert")?;
    let input = u8_image(&ctx, 3, 2, &[0, 1, 2, 127, 128, 255])?;
    let output = Image::new(&ctx, 3, 2, ImageFormat::U8)?;
    let graph = Graph::new(&ctx)?;
    graph.add_node(&invert, [&input, &output])?;
    graph.process()?;
    assert_eq!(output.to_vec::<u8>()?, [255, 254, 253, 128, 127, 0]);
    Ok(())
}}

#[test]
fn a_wrong_input_format_is_refused_at_verify() -> vx::Result<()> {{
    let ctx = Context::new()?;
    ctx.publish_in_process()?;
    let invert = ctx.kernel_by_name("{lib_name}.invert")?;
    let input = Image::new(&ctx, 4, 4, ImageFormat::S16)?;
    let output = Image::new(&ctx, 4, 4, ImageFormat::U8)?;
    let graph = Graph::new(&ctx)?;
    graph.add_node(&invert, [&input, &output])?;
    let err = graph.verify().expect_err("an S16 input to a U8 kernel");
    assert_eq!(err.kind(), vx::ErrorKind::InvalidFormat, "{{err}}");
    Ok(())
}}
{target_test}"#
        )
    }

    fn graph_toml(&self) -> String {
        let Files { lib_name, crate_name, .. } = self;
        let (chain, target_part, last) = match self.target {
            Some(t) => (
                " → gain (on target `".to_owned() + t + "`)",
                format!(
                    r#"
# The target the gain kernel runs on: threads of its own and a queue.
[targets.{t}]
threads = 1

[images.inverted]
virtual = true
"#
                ),
                format!(
                    r#"
[[nodes]]
name = "gain"
kernel = "{lib_name}.gain"
params = ["inverted", "output"]
target = "{t}"
"#
                ),
            ),
            None => (String::new(), String::new(), String::new()),
        };
        let invert_out = if self.target.is_some() { "inverted" } else { "output" };
        format!(
            r#"# {crate_name}'s kernels as a graph: input.png → sharpen → brighten → invert{chain} → out.png.
#   cargo build && vx run -M target/debug graph.toml --set amount=80
# Paths are relative to this file; see vx-rs's docs/book/src/graph-file.md for every key.

name = "{crate_name}"
modules = ["{lib_name}"]

[vars]
amount = 40
{target_part}
[images.input]
read = "data/input.png"
format = "U8"

[images.sharp]
virtual = true

[images.bright]
virtual = true

[images.output]
like = "input"
format = "U8"
write = "out.png"

[scalars.amount]
type = "U8"
value = "${{amount}}"

[[nodes]]
name = "sharpen"
kernel = "{lib_name}.sharpen"
params = ["input", "sharp"]

[[nodes]]
name = "brighten"
kernel = "{lib_name}.brighten"
params = ["sharp", "amount", "bright"]

[[nodes]]
name = "invert"
kernel = "{lib_name}.invert"
params = ["bright", "{invert_out}"]
{last}"#
        )
    }

    fn readme(&self) -> String {
        let Files { crate_name, lib_name, .. } = self;
        let target_note = match self.target {
            Some(t) => format!(
                "- `{lib_name}.gain` — a target kernel on target `{t}`: a context that declares the target\n  \
                 (`Context::builder().target(TargetConfig::new(\"{t}\"))`, or `[targets.{t}]` in a graph file, as\n  \
                 `graph.toml` does) runs it there; commands (`Node::send_command`) set its gain.\n"
            ),
            None => String::new(),
        };
        let kernels = format!(
            "- `{lib_name}.brighten` — a tiling kernel: adds a U8 scalar to every pixel, saturating;\n\
             - `{lib_name}.sharpen` — a row kernel: a 3×3 sharpen written over `Rows<u8, 3>`, the image edge\n  \
             extended by `border = Replicate`;\n\
             - `{lib_name}.invert` — a user kernel: 255 − p, the whole image per call;\n\
             {target_note}"
        );
        let chain = match self.target {
            Some(_) => "sharpen → brighten → invert → gain",
            None => "sharpen → brighten → invert",
        };
        let watch = "Change a kernel, `cargo build` again, and a running `vx watch target/debug graph.toml` picks the\n\
                     new code up at its next frame.\n";
        if !self.app {
            return format!(
                r#"# {crate_name}

A vx-rs kernel module (made by `vx new`):

{kernels}
The next commands:

```sh
cargo test                                   # the kernels, in process (src/tests.rs)
cargo build                                  # target/debug/lib{lib_name}.so, the module
vx inspect target/debug/lib{lib_name}.so     # what the module holds
vx run -M target/debug graph.toml            # data/input.png → {chain} → out.png
```

{watch}"#
            );
        }
        let nested: String = kernels.lines().map(|l| format!("  {l}\n")).collect();
        format!(
            r#"# {crate_name}

A vx-rs kernel module and an application that loads it (made by `vx new --app`), one cargo
workspace of two members:

- the module crate `{crate_name}` at the root (`Cargo.toml`, `src/`), with its kernels:
{nested}- the application `app/` (package `app`): it loads the module from the directory it is built into,
  runs {chain} on `data/input.png`, as `graph.toml` does, and writes `out-app.png`.

The vx-rs crates are not on crates.io: the `[patch.crates-io]` table of the root `Cargo.toml`
points both members at a checkout of vx-rs (cargo reads `[patch]` only at a workspace's root). Both
build into the one `target/`, so the runtime compiles once, for the module's tests and the
application alike.

The next commands, at the root:

```sh
cargo test                                   # the kernels, in process (src/tests.rs)
cargo build                                  # target/debug/lib{lib_name}.so (the module) and target/debug/app
cargo run -p app                             # loads the module: data/input.png → … → out-app.png
vx inspect target/debug/lib{lib_name}.so     # what the module holds
vx run -M target/debug graph.toml            # the same graph, from its file → out.png
```

`cargo run -p app -- INPUT OUTPUT AMOUNT` takes another picture (any size; colour is made gray),
output file and brighten amount (0 to 255, default 40). In release: `cargo build --release &&
cargo run --release -p app` (the module is then target/release/lib{lib_name}.so).

{watch}"#
        )
    }

    fn app_cargo_toml(&self) -> String {
        format!(
            "[package]\n\
             name = \"{APP}\"\n\
             version = \"0.1.0\"\n\
             edition = \"2024\"\n\
             rust-version = \"{MSRV}\"\n\
             publish = false\n\
             \n\
             [dependencies]\n\
             # The runtime. The kernel module is loaded at run time (lib{lib}.so), not linked; the same\n\
             # requirement and features as the module's dev-dependency, so one build of vx-rs serves both.\n\
             vx-rs = \"{SDK_VERSION}\"\n\
             # Reads and writes the PNG pictures.\n\
             image = {{ version = \"0.25\", default-features = false, features = [\"png\"] }}\n\
             \n\
             # [patch.crates-io] is in the workspace's Cargo.toml (../Cargo.toml): cargo reads it only there.\n",
            lib = self.lib_name,
        )
    }

    fn app_main_rs(&self) -> String {
        let Files { crate_name, lib_name, .. } = self;
        let (chain, uses, context, gain) = match self.target {
            Some(t) => (
                format!("sharpen → brighten → invert → gain (on target `{t}`)"),
                ", TargetConfig",
                format!(
                    "// The gain kernel runs on target `{t}`, which the context declares (a thread of its own).\n    \
                     let ctx = Context::builder().target(TargetConfig::new(\"{t}\")).build()?;"
                ),
                format!(
                    r#"
    let inverted = Image::new_virtual(&graph, 0, 0, ImageFormat::Virtual)?;
    graph.add_node(&kernel("invert")?, [&bright, &inverted])?.set_name("invert")?;
    // Placed on `{t}`, the one target that implements it; its gain is 1 until a command sets it.
    graph.add_node(&kernel("gain")?, [&inverted, &output])?.set_name("gain")?;"#
                ),
            ),
            None => (
                "sharpen → brighten → invert".to_owned(),
                "",
                "let ctx = Context::new()?;".to_owned(),
                r#"
    graph.add_node(&kernel("invert")?, [&bright, &output])?.set_name("invert")?;"#
                    .to_owned(),
            ),
        };
        format!(
            r#"//! The application of {crate_name}'s workspace: loads the kernel module `{lib_name}` that the
//! workspace builds, runs {chain} on a picture in a graph (the graph of
//! `graph.toml`), and writes the result.
//!
//! ```text
//! cargo build                                       # the module and this application
//! cargo run -p app [-- INPUT [OUTPUT [AMOUNT]]]
//! ```
//!
//! INPUT defaults to the workspace's `data/input.png`, OUTPUT to `out-app.png` at the workspace's
//! root, AMOUNT (brighten's) to 40.

use std::error::Error;
use std::path::{{Path, PathBuf}};

use vx::{{Context, Graph, Image, ImageFormat, Rect, Reference, Scalar, ScalarValue{uses}}};

fn main() -> Result<(), Box<dyn Error>> {{
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().ok_or("app/ is in the workspace")?;
    let mut args = std::env::args_os().skip(1);
    let input = args.next().map_or_else(|| root.join("data/input.png"), PathBuf::from);
    let output_file = args.next().map_or_else(|| root.join("out-app.png"), PathBuf::from);
    let amount: u8 = match args.next() {{
        Some(a) => a.to_str().and_then(|a| a.parse().ok()).ok_or("AMOUNT is a number from 0 to 255")?,
        None => 40,
    }};

    // Cargo builds the module and this program into one directory: target/debug, or target/release
    // with --release. (The runtime also searches VX_MODULE_PATH.)
    let exe = std::env::current_exe()?;
    let modules = exe.parent().ok_or("the executable is in a directory")?;
    if !modules.join("lib{lib_name}.so").is_file() {{
        return Err(format!(
            "{{}} holds no lib{lib_name}.so: run `cargo build` at the workspace's root first (with --release for a release run)",
            modules.display()
        )
        .into());
    }}
    {context}
    ctx.add_module_dir(modules);
    ctx.load_module("{lib_name}")?;
    let kernel = |name: &str| ctx.kernel_by_name(&format!("{lib_name}.{{name}}"));

    let picture = image::open(&input).map_err(|e| format!("cannot read {{}}: {{e}}", input.display()))?.to_luma8();
    let (width, height) = picture.dimensions();
    let graph = Graph::with_name(&ctx, "{lib_name}-app")?;
    let source = Image::new(&ctx, width, height, ImageFormat::U8)?;
    source.copy_from(Rect::full(width, height), 0, picture.as_raw())?;
    // Virtual images between the nodes: the graph owns them, and verify may fuse the nodes they join.
    let sharp = Image::new_virtual(&graph, 0, 0, ImageFormat::Virtual)?;
    let bright = Image::new_virtual(&graph, 0, 0, ImageFormat::Virtual)?;
    let amount = Scalar::new(&ctx, ScalarValue::Uint8(amount))?;
    let output = Image::new(&ctx, width, height, ImageFormat::U8)?;
    graph.add_node(&kernel("sharpen")?, [&source, &sharp])?.set_name("sharpen")?;
    graph
        .add_node(&kernel("brighten")?, [Reference::from(&sharp), Reference::from(&amount), Reference::from(&bright)])?
        .set_name("brighten")?;{gain}
    graph.process()?;

    let pixels = output.to_vec::<u8>()?;
    image::GrayImage::from_raw(width, height, pixels)
        .ok_or("the output has width × height pixels")?
        .save(&output_file)
        .map_err(|e| format!("cannot write {{}}: {{e}}", output_file.display()))?;
    println!("{{}} ({{width}}×{{height}}) → {{}}", input.display(), output_file.display());
    print!("{{}}", graph.perf_table()?);
    Ok(())
}}
"#
        )
    }
}

/// `s` as a TOML basic string.
fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

/// Create `path` exclusively (never through a symlink, never over a file) and write `bytes`.
fn create(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = OpenOptions::new().write(true).create_new(true).open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// A 64×48 U8 test picture (a gradient with a bright square) as PNG.
fn input_png() -> std::io::Result<Vec<u8>> {
    let img = image::GrayImage::from_fn(64, 48, |x, y| {
        let square = (24..40).contains(&x) && (16..32).contains(&y);
        image::Luma([if square { 230 } else { (x * 3 + y) as u8 }])
    });
    let mut png = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png).map_err(std::io::Error::other)?;
    Ok(png)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crate_names_follow_cargo_rules() {
        for ok in ["mymod", "my-mod", "my_mod2", "a", "Vx"] {
            assert_eq!(check_crate_name(ok), Ok(()), "{ok}");
        }
        for (bad, why) in [
            ("", "empty"),
            ("2mod", "start with an ASCII letter"),
            ("_mod", "start with an ASCII letter"),
            ("my mod", "` ` is not allowed"),
            ("my.mod", "`.` is not allowed"),
            ("mödul", "`ö` is not allowed"),
            ("fn", "keyword"),
            ("self", "keyword"),
            ("std", "standard crate"),
            ("proc-macro", "standard crate"),
            ("test", "standard crate"),
            ("vx", "SDK's own crates"),
            ("vx-rs", "SDK's own crates"),
            ("vx_plugin_abi", "SDK's own crates"),
            ("vx-macros", "SDK's own crates"),
        ] {
            let e = check_crate_name(bad).expect_err(bad);
            assert!(e.contains(why), "{bad}: {e}");
        }
        assert!(check_crate_name(&"a".repeat(65)).unwrap_err().contains("at most 64"));
        assert_eq!(check_crate_name(&"a".repeat(64)), Ok(()));
    }

    #[test]
    fn target_names_exclude_the_runtimes_own() {
        assert_eq!(check_target_name("dsp"), Ok(()));
        assert_eq!(check_target_name("vpac.1"), Ok(()));
        assert!(check_target_name("ANY").is_err());
        assert!(check_target_name("host").is_err());
        assert!(check_target_name("a\"b").is_err());
        assert!(check_target_name("").is_err());
    }

    #[test]
    fn the_generated_files_parse_and_name_the_crate() {
        for target in [None, Some("dsp")] {
            let f = Files {
                crate_name: "my-mod",
                lib_name: "my_mod",
                target,
                sdk: Some(Path::new("/x/vx \"rs")),
                app: false,
            };
            let cargo: toml::Table =
                f.cargo_toml(&Workspace::Outside(PathBuf::from("/ws"))).parse().expect("Cargo.toml parses");
            assert_eq!(cargo["package"]["name"].as_str(), Some("my-mod"));
            assert_eq!(cargo["package"]["rust-version"].as_str(), Some(MSRV));
            let types = cargo["lib"]["crate-type"].as_array().unwrap();
            assert_eq!(types.iter().map(|t| t.as_str().unwrap()).collect::<Vec<_>>(), ["cdylib", "rlib"]);
            assert_eq!(cargo["patch"]["crates-io"]["vx-plugin-abi"]["path"].as_str(), Some("/x/vx \"rs/vx-plugin-abi"));
            assert!(cargo.contains_key("workspace"));
            let graph: toml::Table = f.graph_toml().parse().expect("graph.toml parses");
            assert_eq!(graph.contains_key("targets"), target.is_some(), "the target is declared for the gain node");
            assert_eq!(graph["modules"].as_array().unwrap()[0].as_str(), Some("my_mod"));
            let lib = f.lib_rs();
            assert!(lib.contains("vx_module!(name = \"my_mod\")"));
            assert_eq!(lib.contains("#[target_kernel(name = \"my_mod.gain\", target = \"dsp\""), target.is_some());
            assert!(
                lib.contains("#[tiling_kernel(name = \"my_mod.sharpen\", nbhd = (-1, 1, -1, 1), border = Replicate)]")
            );
            assert!(lib.contains("fn sharpen([above, row, below]: Rows<u8, 3>, out: &mut [u8])"));
            let tests = f.tests_rs();
            assert_eq!(tests.contains("TargetConfig::new(\"dsp\")"), target.is_some());
            assert!(tests.contains("fn sharpen_matches_the_reference_up_to_the_replicated_edge()"));
            let nodes = graph["nodes"].as_array().unwrap();
            assert_eq!(nodes[0]["kernel"].as_str(), Some("my_mod.sharpen"), "the graph starts with the row kernel");
            assert!(f.readme().contains("`my_mod.sharpen` — a row kernel") && !f.readme().contains("cargo run -p app"));
            let registry = Files { sdk: None, ..f };
            let cargo: toml::Table = registry.cargo_toml(&Workspace::None).parse().unwrap();
            assert!(!cargo.contains_key("patch") && !cargo.contains_key("workspace"));
        }
    }

    #[test]
    fn with_app_the_crate_is_the_root_of_a_workspace_with_the_application() {
        for target in [None, Some("dsp")] {
            let f = Files { crate_name: "my-mod", lib_name: "my_mod", target, sdk: Some(Path::new("/sdk")), app: true };
            for ws in [Workspace::None, Workspace::Outside(PathBuf::from("/ws"))] {
                let root: toml::Table = f.cargo_toml(&ws).parse().expect("Cargo.toml parses");
                assert_eq!(root["package"]["name"].as_str(), Some("my-mod"), "the module crate is the root package");
                let members = |key: &str| -> Vec<&str> {
                    root["workspace"][key].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect()
                };
                assert_eq!(members("members"), [".", APP]);
                assert_eq!(members("default-members"), [".", APP]);
                assert_eq!(
                    root["patch"]["crates-io"]["vx-rs"]["path"].as_str(),
                    Some("/sdk/vx-core"),
                    "one patch, here"
                );
                // The runtime asked for alike by both members: one build of it.
                assert_eq!(root["dev-dependencies"]["vx-rs"].as_str(), Some(SDK_VERSION));
            }
            let app: toml::Table = f.app_cargo_toml().parse().expect("app/Cargo.toml parses");
            assert_eq!(app["package"]["name"].as_str(), Some(APP));
            assert_eq!(app["package"]["rust-version"].as_str(), Some(MSRV));
            assert_eq!(app["dependencies"]["vx-rs"].as_str(), Some(SDK_VERSION));
            assert!(!app.contains_key("patch") && !app.contains_key("workspace"), "cargo reads both at the root only");
            let main = f.app_main_rs();
            assert!(main.contains("ctx.load_module(\"my_mod\")?;") && main.contains("libmy_mod.so"));
            for k in ["sharpen", "brighten", "invert"] {
                assert!(main.contains(&format!("kernel(\"{k}\")")), "{k}");
            }
            assert_eq!(
                main.contains("TargetConfig::new(\"dsp\")") && main.contains("kernel(\"gain\")"),
                target.is_some()
            );
            let readme = f.readme();
            for c in ["cargo test", "cargo build", "cargo run -p app", "vx run -M target/debug graph.toml"] {
                assert!(readme.contains(c), "{c}");
            }
            assert!(readme.contains("not on crates.io"));
        }
    }

    #[test]
    fn the_input_picture_is_a_png_of_64_by_48() {
        let img = image::load_from_memory(&input_png().unwrap()).unwrap();
        assert_eq!((img.width(), img.height()), (64, 48));
    }

    #[test]
    fn the_build_time_checkout_is_used_only_when_no_one_else_can_change_it() {
        use std::os::unix::fs::PermissionsExt;
        let root = vx_tests::scratch_dir("new-trust").canonicalize().unwrap();
        let sdk = root.join("sdk");
        fs::create_dir(&sdk).unwrap();
        fs::set_permissions(&sdk, fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(untrusted_by(&sdk), None, "the user's own 0755 directory under a 0700 one, under sticky /tmp");
        fs::set_permissions(&sdk, fs::Permissions::from_mode(0o777)).unwrap();
        assert!(untrusted_by(&sdk).is_some_and(|why| why.contains("writable by others")));
        fs::set_permissions(&sdk, fs::Permissions::from_mode(0o755)).unwrap();
        // A parent others can write (no sticky bit): someone could swap the checkout.
        fs::set_permissions(&root, fs::Permissions::from_mode(0o777)).unwrap();
        assert!(untrusted_by(&sdk).is_some_and(|why| why.contains("writable by others")));
        fs::set_permissions(&root, fs::Permissions::from_mode(0o1777)).unwrap();
        assert_eq!(untrusted_by(&sdk), None, "sticky, as /tmp");
        // Another user's directory (only root can make one here).
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            let c = std::ffi::CString::new(sdk.as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: `c` is a NUL-terminated path that outlives the call.
            assert_eq!(unsafe { libc::chown(c.as_ptr(), 65534, 65534) }, 0);
            assert!(untrusted_by(&sdk).is_some_and(|why| why.contains("belongs to user 65534")));
        }
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_crate_in_a_workspace_is_a_member_exactly_when_members_match_and_exclude_does_not() {
        let root = vx_tests::scratch_dir("new-ws");
        fs::create_dir_all(root.join("crates/deep")).unwrap();
        fs::create_dir_all(root.join("tools")).unwrap();
        fs::write(
            root.join("Cargo.toml"),
            "[workspace]\nmembers = [\"crates/*\", \"tools/one\"]\nexclude = [\"crates/skip\"]\n",
        )
        .unwrap();
        let ws = root.canonicalize().unwrap();
        let is = |parent: &str, name: &str| match workspace_of(&root.join(parent), name) {
            Workspace::Member(r) => {
                assert_eq!(r, ws);
                "member"
            }
            Workspace::Outside(r) => {
                assert_eq!(r, ws);
                "outside"
            }
            Workspace::None => "none",
        };
        assert_eq!(is("crates", "km"), "member", "crates/* matches");
        assert_eq!(is("crates/deep", "km"), "outside", "* does not cross a /");
        assert_eq!(is("crates", "skip"), "outside", "excluded");
        assert_eq!(is("tools", "one"), "member", "listed");
        assert_eq!(is("tools", "two"), "outside");
        assert_eq!(is("", "top"), "outside");
        assert!(matches!(workspace_of(Path::new("/"), "x"), Workspace::None));
        // The Cargo.toml of each: a member has no [workspace] and its patch commented out.
        let f = Files { crate_name: "km", lib_name: "km", target: None, sdk: Some(Path::new("/sdk")), app: false };
        let member: toml::Table = f.cargo_toml(&Workspace::Member(ws.clone())).parse().unwrap();
        assert!(!member.contains_key("workspace") && !member.contains_key("patch"));
        assert!(
            f.cargo_toml(&Workspace::Member(ws.clone()))
                .contains("# vx-plugin-abi = { path = \"/sdk/vx-plugin-abi\" }")
        );
        let alone: toml::Table = f.cargo_toml(&Workspace::Outside(ws)).parse().unwrap();
        assert!(alone.contains_key("workspace") && alone.contains_key("patch"));
        fs::remove_dir_all(&root).unwrap();
    }
}
