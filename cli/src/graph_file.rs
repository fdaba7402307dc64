//! Graph files: a graph described in TOML (modules to load, targets, images, scalars, nodes by
//! kernel name) and how it becomes a verified [`Graph`]. The format, key by key, is
//! `docs/book/src/graph-file.md`; every example there is a file under `examples/graphs/` that a test runs.
//!
//! Reading a file is two steps. [`GraphFile::parse`] checks *everything* that can be checked
//! without loading a module or reading an image — every key of every table (an unknown key is
//! named with the valid ones), every value (formats, sizes, borders, scalar values, object and
//! target names, output encodings), every `${var}` (defined, and every `--set` used by the file) —
//! and gives a plan. [`GraphFile::build`] then makes the graph in a context whose modules are
//! loaded, and verifies it.
//!
//! `${var}` is replaced in every string of the file outside `[vars]` — a whole value or a part of
//! one — by the file's `[vars]`, overridden by `--set var=value`. Numbers and booleans may be given
//! as strings, so `width = "${w}"` works.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use vx::{
    BorderMode, Context, Graph, HOST_TARGET, Image, ImageFormat, MAX_QUEUE_DEPTH, MAX_THREADS, Node, Reference, Scalar,
    ScalarValue, TARGET_ANY, TargetConfig,
};

use crate::Failure;

/// The keys of the file's top level.
pub(crate) const TOP_KEYS: &[&str] =
    &["name", "modules", "frames", "threads", "fusion", "vars", "targets", "images", "scalars", "nodes"];
/// The keys of a `[targets.NAME]` table.
pub(crate) const TARGET_KEYS: &[&str] = &["threads", "cores", "queue_depth"];
/// The keys of an `[images.NAME]` table.
pub(crate) const IMAGE_KEYS: &[&str] =
    &["virtual", "format", "width", "height", "like", "read", "write", "write_format"];
/// The keys of a `[scalars.NAME]` table.
pub(crate) const SCALAR_KEYS: &[&str] = &["type", "value"];
/// The keys of a `[[nodes]]` table.
pub(crate) const NODE_KEYS: &[&str] = &["name", "kernel", "params", "border", "target"];

const FORMATS: &str = "U8, U16, S16, U32, S32, RGB, RGBX, NV12, NV21, UYVY, YUYV, IYUV, YUV4";
const SCALAR_TYPES: &str = "U8, I8, U16, I16, U32, I32, U64, I64, F32, BOOL";

/// What the command line adds to a file: `--set`, `--target`, `--place`.
#[derive(Debug, Default, Clone)]
pub(crate) struct Overrides {
    /// `--set var=value`.
    pub(crate) set: Vec<(String, String)>,
    /// `--target NAME[:key=value]…`: declared beside (or instead of, same name) the file's.
    pub(crate) targets: Vec<TargetConfig>,
    /// `--place NODE=TARGET`: a node's target (instead of the file's `target`).
    pub(crate) place: Vec<(String, String)>,
}

/// A graph file, checked: what [`build`](GraphFile::build) makes.
#[derive(Debug)]
pub(crate) struct GraphFile {
    /// The graph's name (`name`, else the file's stem).
    pub(crate) name: String,
    /// Modules to load (by name from the search path, or paths to `lib<name>.so`).
    pub(crate) modules: Vec<String>,
    /// Frames to process (`--frames` overrides).
    pub(crate) frames: Option<u64>,
    /// Worker threads of the context (`--threads` overrides).
    pub(crate) threads: Option<usize>,
    /// Fuse the graph's tiling nodes (`fusion = true`; absent: the context's default).
    pub(crate) fusion: Option<bool>,
    /// Targets the context is made with.
    pub(crate) targets: Vec<TargetConfig>,
    /// Images in build order (an image `like` another after it).
    images: Vec<ImagePlan>,
    scalars: Vec<(String, ScalarValue)>,
    nodes: Vec<NodePlan>,
}

#[derive(Debug)]
struct ImagePlan {
    name: String,
    kind: ImageKind,
    write: Option<Output>,
}

#[derive(Debug)]
enum ImageKind {
    Virtual { width: u32, height: u32, format: ImageFormat },
    Read { path: PathBuf, format: ImageFormat },
    Sized { width: u32, height: u32, format: ImageFormat },
    Like { other: String, format: ImageFormat },
}

/// An image file written after the last frame.
#[derive(Debug, Clone)]
pub(crate) struct Output {
    /// Where.
    pub(crate) path: PathBuf,
    /// How it is encoded (from `write_format`, else the file name's extension).
    pub(crate) encoding: image::ImageFormat,
}

#[derive(Debug)]
struct NodePlan {
    what: String,
    name: Option<String>,
    kernel: String,
    params: Vec<Option<String>>,
    border: Option<BorderMode>,
    target: Option<String>,
}

/// A graph built from a file: the graph, its nodes, and the images to write after the run.
pub(crate) struct BuiltGraph {
    pub(crate) graph: Graph,
    /// Each node with its name (the file's `name`, else `#index`).
    pub(crate) nodes: Vec<(String, Node)>,
    pub(crate) outputs: Vec<(String, Image, Output)>,
}

/// `${var}` substitution with the file's vars and the command line's (which win).
struct Vars {
    file: HashMap<String, String>,
    set: HashMap<String, String>,
    base: PathBuf,
}

/// The `${name}` references of `s` (unclosed ones are left for [`Vars::expand`] to report).
fn references(s: &str) -> impl Iterator<Item = &str> {
    let mut rest = s;
    std::iter::from_fn(move || {
        let start = rest.find("${")?;
        let end = rest[start..].find('}')?;
        let name = &rest[start + 2..start + end];
        rest = &rest[start + end + 1..];
        Some(name)
    })
}

/// Every `${name}` a value uses (arrays and tables walked).
fn collect_references<'a>(v: &'a toml::Value, out: &mut BTreeSet<&'a str>) {
    match v {
        toml::Value::String(s) => out.extend(references(s)),
        toml::Value::Array(a) => a.iter().for_each(|v| collect_references(v, out)),
        toml::Value::Table(t) => t.values().for_each(|v| collect_references(v, out)),
        _ => {}
    }
}

impl Vars {
    fn get(&self, name: &str) -> Option<&String> {
        self.set.get(name).or_else(|| self.file.get(name))
    }

    /// `s` with every `${var}` replaced.
    fn expand(&self, s: &str, what: &str) -> Result<String, String> {
        let mut out = String::new();
        let mut rest = s;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let Some(end) = rest[start..].find('}') else {
                return Err(format!("{what}: unclosed `${{` in \"{s}\""));
            };
            let name = &rest[start + 2..start + end];
            let value = self.get(name).ok_or_else(|| {
                format!("{what}: unknown variable `{name}` (define it in [vars] or with --set {name}=...)")
            })?;
            out.push_str(value);
            rest = &rest[start + end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// A path: expanded, relative to the working directory if it is one `--set` variable, else to
    /// the file's directory.
    fn path(&self, s: &str, what: &str) -> Result<PathBuf, String> {
        let expanded = PathBuf::from(self.expand(s, what)?);
        if expanded == Path::new("-") {
            return Ok(expanded); // standard output (`write = "-"`)
        }
        let whole_var = s.strip_prefix("${").and_then(|r| r.strip_suffix('}'));
        if expanded.is_absolute() || whole_var.is_some_and(|v| self.set.contains_key(v)) {
            Ok(expanded)
        } else {
            Ok(self.base.join(expanded))
        }
    }
}

/// The type a value has, for errors.
fn kind(v: &toml::Value) -> &'static str {
    match v {
        toml::Value::String(_) => "a string",
        toml::Value::Integer(_) => "an integer",
        toml::Value::Float(_) => "a float",
        toml::Value::Boolean(_) => "a boolean",
        toml::Value::Datetime(_) => "a date",
        toml::Value::Array(_) => "an array",
        toml::Value::Table(_) => "a table",
    }
}

/// Reads the values of one table, every string `${var}`-expanded, with errors naming the table
/// and the key.
struct Reader<'a> {
    vars: &'a Vars,
}

type Check<T> = Result<T, String>;

/// How messages name the file's top level (`what` of its keys).
const TOP: &str = "the top level";

/// A key of table `what`, as messages name it: `[images.a] width`, `top-level key \`frames\``.
fn at(what: &str, key: &str) -> String {
    if what == TOP { format!("top-level key `{key}`") } else { format!("{what} {key}") }
}

impl Reader<'_> {
    fn keys(&self, t: &toml::Table, what: &str, valid: &[&str]) -> Check<()> {
        match t.keys().find(|k| !valid.contains(&k.as_str())) {
            Some(k) => Err(format!("unknown key `{k}` in {what} (valid keys: {})", valid.join(", "))),
            None => Ok(()),
        }
    }

    /// A string (expanded); `None` when absent.
    fn string(&self, t: &toml::Table, key: &str, what: &str) -> Check<Option<String>> {
        match t.get(key) {
            None => Ok(None),
            Some(toml::Value::String(s)) => self.vars.expand(s, &at(what, key)).map(Some),
            Some(v) => Err(format!("{}: expected a string, found {} ({v})", at(what, key), kind(v))),
        }
    }

    /// A path (expanded and resolved, see [`Vars::path`]).
    fn path(&self, t: &toml::Table, key: &str, what: &str) -> Check<Option<PathBuf>> {
        match t.get(key) {
            None => Ok(None),
            Some(toml::Value::String(s)) if s.is_empty() => Err(format!("{}: an empty path", at(what, key))),
            Some(toml::Value::String(s)) => self.vars.path(s, &at(what, key)).map(Some),
            Some(v) => Err(format!("{}: expected a path (a string), found {} ({v})", at(what, key), kind(v))),
        }
    }

    /// The text of a scalar-like value: a string (expanded), a number or a boolean.
    fn text(&self, v: &toml::Value, what: &str) -> Check<String> {
        match v {
            toml::Value::String(s) => self.vars.expand(s, what),
            toml::Value::Integer(_) | toml::Value::Float(_) | toml::Value::Boolean(_) => Ok(v.to_string()),
            v => Err(format!("{what}: expected a string, number or boolean, found {} ({v})", kind(v))),
        }
    }

    /// A whole number in `min..=max`, given as an integer or a string of one.
    fn number_of(&self, v: &toml::Value, what: &str, min: u64, max: u64) -> Check<u64> {
        let range = format!("a whole number from {min} to {max}");
        let (n, shown) = match v {
            toml::Value::Integer(i) => (u64::try_from(*i).ok(), i.to_string()),
            toml::Value::String(s) => {
                let e = self.vars.expand(s, what)?;
                let written = if e == *s { String::new() } else { format!(" (written \"{s}\")") };
                (e.trim().parse::<u64>().ok(), format!("\"{e}\"{written}"))
            }
            v => return Err(format!("{what}: expected {range}, found {} ({v})", kind(v))),
        };
        match n {
            Some(n) if (min..=max).contains(&n) => Ok(n),
            _ => Err(format!("{what}: expected {range}, found {shown}")),
        }
    }

    fn number(&self, t: &toml::Table, key: &str, what: &str, min: u64, max: u64) -> Check<Option<u64>> {
        t.get(key).map(|v| self.number_of(v, &at(what, key), min, max)).transpose()
    }

    /// A boolean, or a string `true` / `false`.
    fn boolean(&self, t: &toml::Table, key: &str, what: &str) -> Check<Option<bool>> {
        let what = at(what, key);
        match t.get(key) {
            None => Ok(None),
            Some(toml::Value::Boolean(b)) => Ok(Some(*b)),
            Some(toml::Value::String(s)) => match self.vars.expand(s, &what)?.trim() {
                "true" => Ok(Some(true)),
                "false" => Ok(Some(false)),
                other => Err(format!("{what}: expected true or false, found \"{other}\"")),
            },
            Some(v) => Err(format!("{what}: expected true or false, found {} ({v})", kind(v))),
        }
    }

    fn array<'t>(&self, t: &'t toml::Table, key: &str, what: &str) -> Check<Option<&'t Vec<toml::Value>>> {
        match t.get(key) {
            None => Ok(None),
            Some(toml::Value::Array(a)) => Ok(Some(a)),
            Some(v) => Err(format!("{}: expected an array, found {} ({v})", at(what, key), kind(v))),
        }
    }

    fn strings(&self, t: &toml::Table, key: &str, what: &str) -> Check<Option<Vec<String>>> {
        let Some(a) = self.array(t, key, what)? else { return Ok(None) };
        a.iter()
            .enumerate()
            .map(|(i, v)| match v {
                toml::Value::String(s) => self.vars.expand(s, &format!("{}[{i}]", at(what, key))),
                v => Err(format!("{}[{i}]: expected a string, found {} ({v})", at(what, key), kind(v))),
            })
            .collect::<Check<Vec<_>>>()
            .map(Some)
    }

    fn table<'t>(&self, t: &'t toml::Table, key: &str, what: &str) -> Check<Option<&'t toml::Table>> {
        match t.get(key) {
            None => Ok(None),
            Some(toml::Value::Table(t)) => Ok(Some(t)),
            Some(v) => {
                Err(format!("{}: must be a table ([{key}.NAME] sections), found {} ({v})", at(what, key), kind(v)))
            }
        }
    }
}

/// An image format by name.
fn format_of(s: &str, what: &str) -> Check<ImageFormat> {
    Ok(match s.to_ascii_uppercase().as_str() {
        "U8" => ImageFormat::U8,
        "U16" => ImageFormat::U16,
        "S16" => ImageFormat::S16,
        "U32" => ImageFormat::U32,
        "S32" => ImageFormat::S32,
        "RGB" => ImageFormat::Rgb,
        "RGBX" => ImageFormat::Rgbx,
        "NV12" => ImageFormat::Nv12,
        "NV21" => ImageFormat::Nv21,
        "UYVY" => ImageFormat::Uyvy,
        "YUYV" => ImageFormat::Yuyv,
        "IYUV" => ImageFormat::Iyuv,
        "YUV4" => ImageFormat::Yuv4,
        _ => return Err(format!("{what}: unknown format `{s}` ({FORMATS})")),
    })
}

/// A scalar value of type `ty` from its text.
pub(crate) fn scalar_of(ty: &str, value: &str, what: &str) -> Check<ScalarValue> {
    let bad = |e: &dyn std::fmt::Display| format!("{what}: `{value}` is not a {ty}: {e}");
    Ok(match ty.to_ascii_uppercase().as_str() {
        "U8" => ScalarValue::Uint8(value.parse().map_err(|e| bad(&e))?),
        "I8" => ScalarValue::Int8(value.parse().map_err(|e| bad(&e))?),
        "U16" => ScalarValue::Uint16(value.parse().map_err(|e| bad(&e))?),
        "I16" => ScalarValue::Int16(value.parse().map_err(|e| bad(&e))?),
        "U32" => ScalarValue::Uint32(value.parse().map_err(|e| bad(&e))?),
        "I32" => ScalarValue::Int32(value.parse().map_err(|e| bad(&e))?),
        "U64" => ScalarValue::Uint64(value.parse().map_err(|e| bad(&e))?),
        "I64" => ScalarValue::Int64(value.parse().map_err(|e| bad(&e))?),
        "F32" => ScalarValue::Float32(value.parse().map_err(|e| bad(&e))?),
        "BOOL" => ScalarValue::Bool(value.parse().map_err(|e| bad(&e))?),
        _ => return Err(format!("{what}: unknown scalar type `{ty}` ({SCALAR_TYPES})")),
    })
}

/// A node's border mode by name: `undefined`, `self` (tiling kernels), `replicate`,
/// `constant:N` (user kernels). A row kernel's own edge rules (`reflect101`, …) are declared in
/// its source, and the refusal says so.
fn border_of(s: &str, what: &str) -> Check<BorderMode> {
    let lower = s.to_ascii_lowercase();
    Ok(match lower.as_str() {
        "undefined" => BorderMode::Undefined,
        "self" => BorderMode::Self_,
        "replicate" => BorderMode::Replicate,
        "reflect101" | "reflect-101" | "reflect_101" => {
            return Err(format!(
                "{what}: `{s}` is a row kernel's edge rule, declared in the kernel's source (`border = Reflect101`) \
                 and applied by the SDK; a node cannot set it (a node's border: undefined, self, replicate or \
                 constant:N; `vx inspect MODULE KERNEL` shows what a kernel allows)"
            ));
        }
        _ => match lower.strip_prefix("constant:").map(str::parse::<u32>) {
            Some(Ok(v)) => BorderMode::Constant(v),
            _ => return Err(format!("{what}: unknown border `{s}` (undefined, self, replicate or constant:N)")),
        },
    })
}

/// Check a target's configuration (name and ranges), as the context would, naming `what`.
pub(crate) fn check_target(t: &TargetConfig, what: &str) -> Check<()> {
    if t.name.is_empty() || t.name.eq_ignore_ascii_case(HOST_TARGET) || t.name.eq_ignore_ascii_case(TARGET_ANY) {
        return Err(format!(
            "{what}: a target's name must be non-empty and neither `{HOST_TARGET}` nor `{TARGET_ANY}` (found `{}`)",
            t.name
        ));
    }
    if !(1..=MAX_THREADS).contains(&t.threads) {
        return Err(format!("{what}: threads must be from 1 to {MAX_THREADS} (found {})", t.threads));
    }
    if !(1..=MAX_QUEUE_DEPTH).contains(&t.queue_depth) {
        return Err(format!("{what}: queue_depth must be from 1 to {MAX_QUEUE_DEPTH} (found {})", t.queue_depth));
    }
    Ok(())
}

/// How an output is encoded: `write_format`, else the file name's extension; refused when the
/// encoding cannot hold the image's format.
fn encoding_of(path: &Path, write_format: Option<&str>, format: ImageFormat, what: &str) -> Check<image::ImageFormat> {
    let by_name = |s: &str| match s.to_ascii_lowercase().as_str() {
        "png" => Some(image::ImageFormat::Png),
        "jpg" | "jpeg" => Some(image::ImageFormat::Jpeg),
        _ => None,
    };
    let enc = match write_format {
        Some(f) => by_name(f).ok_or_else(|| format!("{what} write_format: unknown encoding `{f}` (png, jpeg)"))?,
        None => path.extension().and_then(|e| e.to_str()).and_then(by_name).ok_or_else(|| {
            format!(
                "{what} write: cannot tell how to encode {} from its name (.png, .jpg, .jpeg); set write_format = \
                 \"png\" or \"jpeg\"",
                path.display()
            )
        })?,
    };
    match (enc, format) {
        (image::ImageFormat::Png, ImageFormat::U8 | ImageFormat::U16 | ImageFormat::Rgb | ImageFormat::Rgbx)
        | (image::ImageFormat::Jpeg, ImageFormat::U8 | ImageFormat::Rgb) => Ok(enc),
        (image::ImageFormat::Jpeg, ImageFormat::U16 | ImageFormat::Rgbx) => {
            Err(format!("{what} write: JPEG holds U8 and RGB images, not {format}; write it as PNG"))
        }
        _ => Err(format!("{what} write: {format} images cannot be written to image files (U8, U16, RGB, RGBX)")),
    }
}

/// A name the file gives an object (image, scalar) or node.
fn check_name(name: &str, what: &str) -> Check<()> {
    if name.is_empty() || name == "-" {
        return Err(format!("{what}: `{name}` cannot be a name (\"-\" leaves a parameter out)"));
    }
    Ok(())
}

impl GraphFile {
    /// Read and check `path` (see [`parse`](Self::parse)); at most [`MAX_GRAPH_FILE_BYTES`] are
    /// read (a larger file, or a device that never ends, is refused).
    pub(crate) fn read(path: &Path, over: &Overrides) -> Result<GraphFile, Failure> {
        use std::io::Read;
        let cannot = |e: String| Failure::usage(format!("cannot read the graph file {}: {e}", path.display()));
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(MAX_GRAPH_FILE_BYTES + 1).read_to_end(&mut bytes))
            .map_err(|e| cannot(e.to_string()))?;
        if bytes.len() as u64 > MAX_GRAPH_FILE_BYTES {
            return Err(cannot(format!("it is larger than {MAX_GRAPH_FILE_BYTES} bytes")));
        }
        let text = String::from_utf8(bytes).map_err(|e| cannot(format!("it is not UTF-8 ({e})")))?;
        GraphFile::parse(&text, path, over)
    }

    /// Parse and check the text of a graph file (`path` names it in errors; relative paths in it
    /// are relative to its directory). Touches no file.
    pub(crate) fn parse(text: &str, path: &Path, over: &Overrides) -> Result<GraphFile, Failure> {
        let fail = |m: String| Failure::usage(format!("{}: {m}", path.display()));
        let top: toml::Table = toml::from_str(text).map_err(|e| fail(e.to_string().trim_end().to_owned()))?;
        Self::check(&top, path, over).map_err(fail)
    }

    fn check(top: &toml::Table, path: &Path, over: &Overrides) -> Check<GraphFile> {
        // Variables first: the file's, then which ones the file uses, then the command line's.
        let empty = toml::Table::new();
        let file_vars = match top.get("vars") {
            None => &empty,
            Some(toml::Value::Table(t)) => t,
            Some(v) => return Err(format!("`vars` must be a table ([vars]), found {} ({v})", kind(v))),
        };
        let mut vars = Vars {
            file: HashMap::new(),
            set: over.set.iter().cloned().collect(),
            base: path.parent().map(Path::to_path_buf).unwrap_or_default(),
        };
        for (k, v) in file_vars {
            let text = match v {
                toml::Value::String(s) => s.clone(),
                toml::Value::Integer(_) | toml::Value::Float(_) | toml::Value::Boolean(_) => v.to_string(),
                v => return Err(format!("[vars] {k}: expected a string, number or boolean, found {} ({v})", kind(v))),
            };
            vars.file.insert(k.clone(), text);
        }
        let mut used = BTreeSet::new();
        for (k, v) in top {
            if k != "vars" {
                collect_references(v, &mut used);
            }
        }
        for (k, _) in &over.set {
            if !used.contains(k.as_str()) {
                let uses = if used.is_empty() {
                    "it uses none".to_owned()
                } else {
                    format!("it uses: {}", used.iter().copied().collect::<Vec<_>>().join(", "))
                };
                return Err(format!("--set {k}: the graph file uses no variable `{k}` ({uses})"));
            }
        }
        let r = Reader { vars: &vars };
        r.keys(top, TOP, TOP_KEYS)?;
        let name = match r.string(top, "name", TOP)? {
            Some(n) => n,
            None => path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "graph".into()),
        };
        let mut modules = r.strings(top, "modules", TOP)?.unwrap_or_default();
        if modules.iter().any(String::is_empty) {
            return Err(format!("{}: an empty module name", at(TOP, "modules")));
        }
        // A module given as a path is relative to the file, like every path in it.
        for m in &mut modules {
            if (m.contains('/') || m.ends_with(".so")) && Path::new(m.as_str()).is_relative() {
                *m = vars.base.join(&*m).display().to_string();
            }
        }
        let frames = r.number(top, "frames", TOP, 1, u64::MAX)?;
        let threads = r.number(top, "threads", TOP, 1, MAX_THREADS as u64)?.map(|n| n as usize);
        let fusion = r.boolean(top, "fusion", TOP)?;

        // Targets: the file's, then the command line's (which replace one of the same name).
        let mut targets: Vec<TargetConfig> = Vec::new();
        for (tname, v) in r.table(top, "targets", TOP)?.unwrap_or(&empty) {
            let what = format!("[targets.{tname}]");
            let toml::Value::Table(t) = v else {
                return Err(format!("{what}: expected a table, found {} ({v})", kind(v)));
            };
            r.keys(t, &what, TARGET_KEYS)?;
            let mut c = TargetConfig::new(tname);
            if let Some(n) = r.number(t, "threads", &what, 1, MAX_THREADS as u64)? {
                c = c.threads(n as usize);
            }
            if let Some(n) = r.number(t, "queue_depth", &what, 1, MAX_QUEUE_DEPTH as u64)? {
                c = c.queue_depth(n as usize);
            }
            if let Some(a) = r.array(t, "cores", &what)? {
                let cores = a
                    .iter()
                    .enumerate()
                    .map(|(i, v)| r.number_of(v, &format!("{what} cores[{i}]"), 0, 65535).map(|n| n as usize))
                    .collect::<Check<Vec<_>>>()?;
                c = c.pin_to_cores(&cores);
            }
            check_target(&c, &what)?;
            targets.push(c);
        }
        for (i, t) in over.targets.iter().enumerate() {
            check_target(t, &format!("--target {}", t.name))?;
            if over.targets[..i].iter().any(|o| o.name.eq_ignore_ascii_case(&t.name)) {
                return Err(format!("--target {}: named twice on the command line (give each target once)", t.name));
            }
            targets.retain(|f| !f.name.eq_ignore_ascii_case(&t.name));
            targets.push(t.clone());
        }

        // Images: checked one by one, then ordered so that an image comes after the one it is like.
        let mut objects: BTreeMap<String, &'static str> = BTreeMap::new();
        let mut plans: Vec<ImagePlan> = Vec::new();
        for (iname, v) in r.table(top, "images", TOP)?.unwrap_or(&empty) {
            let what = format!("[images.{iname}]");
            check_name(iname, &what)?;
            let toml::Value::Table(t) = v else {
                return Err(format!("{what}: expected a table, found {} ({v})", kind(v)));
            };
            r.keys(t, &what, IMAGE_KEYS)?;
            let format = r.string(t, "format", &what)?.map(|f| format_of(&f, &format!("{what} format"))).transpose()?;
            let is_virtual = r.boolean(t, "virtual", &what)?.unwrap_or(false);
            let width = r.number(t, "width", &what, 1, u64::from(u32::MAX))?.map(|n| n as u32);
            let height = r.number(t, "height", &what, 1, u64::from(u32::MAX))?.map(|n| n as u32);
            let like = r.string(t, "like", &what)?;
            let read = r.path(t, "read", &what)?;
            let write = r.path(t, "write", &what)?;
            let write_format = r.string(t, "write_format", &what)?;
            fn given<'k>(keys: &[(&'k str, bool)]) -> Vec<&'k str> {
                keys.iter().filter(|(_, g)| *g).map(|(k, _)| *k).collect()
            }
            let kind = if is_virtual {
                let extra = given(&[
                    ("like", like.is_some()),
                    ("read", read.is_some()),
                    ("write", write.is_some()),
                    ("write_format", write_format.is_some()),
                ]);
                if !extra.is_empty() {
                    return Err(format!(
                        "{what}: a virtual image has no {} (it lives inside the graph; make it real to read or write it)",
                        extra.join(", ")
                    ));
                }
                ImageKind::Virtual {
                    width: width.unwrap_or(0),
                    height: height.unwrap_or(0),
                    format: format.unwrap_or(ImageFormat::Virtual),
                }
            } else if let Some(path) = read {
                let extra =
                    given(&[("width", width.is_some()), ("height", height.is_some()), ("like", like.is_some())]);
                if !extra.is_empty() {
                    return Err(format!(
                        "{what}: an image read from a file has that file's size: no {}",
                        extra.join(", ")
                    ));
                }
                let format = format.unwrap_or(ImageFormat::U8);
                if !matches!(format, ImageFormat::U8 | ImageFormat::U16 | ImageFormat::Rgb | ImageFormat::Rgbx) {
                    return Err(format!("{what} format: image files are read as U8, U16, RGB or RGBX, not {format}"));
                }
                ImageKind::Read { path, format }
            } else {
                let format = format.ok_or_else(|| format!("{what}: `format` is required (one of {FORMATS})"))?;
                match (like, width, height) {
                    (Some(other), None, None) => ImageKind::Like { other, format },
                    (None, Some(width), Some(height)) => ImageKind::Sized { width, height, format },
                    (Some(_), _, _) => {
                        return Err(format!("{what}: `like` gives the size: no width or height with it"));
                    }
                    _ => {
                        return Err(format!(
                            "{what}: give `read`, `like = \"image\"` or both `width` and `height` (or `virtual = true`)"
                        ));
                    }
                }
            };
            let write = match write {
                None if write_format.is_some() => return Err(format!("{what}: write_format without write")),
                None => None,
                Some(path) => {
                    let format = match &kind {
                        ImageKind::Read { format, .. }
                        | ImageKind::Sized { format, .. }
                        | ImageKind::Like { format, .. } => *format,
                        ImageKind::Virtual { .. } => unreachable!("refused above"),
                    };
                    let encoding = encoding_of(&path, write_format.as_deref(), format, &what)?;
                    Some(Output { path, encoding })
                }
            };
            objects.insert(iname.clone(), "image");
            plans.push(ImagePlan { name: iname.clone(), kind, write });
        }
        let images = order_images(plans)?;
        if let Some((a, b)) =
            images.iter().filter_map(|i| i.write.as_ref().map(|o| (&i.name, &o.path))).find_map(|(n, p)| {
                images
                    .iter()
                    .find(|j| &j.name != n && j.write.as_ref().is_some_and(|o| &o.path == p))
                    .map(|j| (n, &j.name))
            })
        {
            return Err(format!("[images.{a}] and [images.{b}] write the same file"));
        }

        let mut scalars = Vec::new();
        for (sname, v) in r.table(top, "scalars", TOP)?.unwrap_or(&empty) {
            let what = format!("[scalars.{sname}]");
            check_name(sname, &what)?;
            if objects.contains_key(sname) {
                return Err(format!("{what}: an image has this name too"));
            }
            let toml::Value::Table(t) = v else {
                return Err(format!("{what}: expected a table, found {} ({v})", kind(v)));
            };
            r.keys(t, &what, SCALAR_KEYS)?;
            let ty =
                r.string(t, "type", &what)?.ok_or_else(|| format!("{what}: `type` is required ({SCALAR_TYPES})"))?;
            let value = t.get("value").ok_or_else(|| format!("{what}: `value` is required"))?;
            let text = r.text(value, &format!("{what} value"))?;
            scalars.push((sname.clone(), scalar_of(&ty, text.trim(), &format!("{what} value"))?));
            objects.insert(sname.clone(), "scalar");
        }

        let target_names: Vec<&str> =
            [HOST_TARGET, TARGET_ANY].into_iter().chain(targets.iter().map(|t| t.name.as_str())).collect();
        let check_node_target = |t: &str, what: &str| -> Check<()> {
            if target_names.iter().any(|n| n.eq_ignore_ascii_case(t)) {
                Ok(())
            } else {
                Err(format!(
                    "{what}: no target `{t}` (declare it in [targets.{t}] or with --target {t}; targets: {})",
                    target_names.join(", ")
                ))
            }
        };
        let mut nodes: Vec<NodePlan> = Vec::new();
        let node_tables = match top.get("nodes") {
            None => &[][..],
            Some(toml::Value::Array(a)) => &a[..],
            Some(v) => return Err(format!("`nodes` must be an array of tables ([[nodes]]), found {} ({v})", kind(v))),
        };
        for (i, v) in node_tables.iter().enumerate() {
            let toml::Value::Table(t) = v else {
                return Err(format!("[[nodes]] #{i}: expected a table, found {} ({v})", kind(v)));
            };
            let mut what = format!("[[nodes]] #{i}");
            let name = r.string(t, "name", &what)?;
            if let Some(n) = &name {
                check_name(n, &what)?;
                if nodes.iter().any(|o| o.name.as_ref() == Some(n)) {
                    return Err(format!("{what}: two nodes are named `{n}`"));
                }
                what = format!("[[nodes]] #{i} ({n})");
            }
            r.keys(t, &what, NODE_KEYS)?;
            let kernel = r.string(t, "kernel", &what)?.ok_or_else(|| format!("{what}: `kernel` is required"))?;
            if kernel.is_empty() {
                return Err(format!("{what} kernel: an empty kernel name"));
            }
            let params = r
                .strings(t, "params", &what)?
                .ok_or_else(|| format!("{what}: `params` is required (object names; \"-\" leaves one out)"))?;
            let params = params
                .into_iter()
                .enumerate()
                .map(|(p, o)| {
                    if o == "-" {
                        Ok(None)
                    } else if objects.contains_key(&o) {
                        Ok(Some(o))
                    } else {
                        let known: Vec<&str> = objects.keys().map(String::as_str).collect();
                        Err(format!(
                            "{what} params[{p}]: `{o}` names no image or scalar of the file (they are: {})",
                            if known.is_empty() { "none".to_owned() } else { known.join(", ") }
                        ))
                    }
                })
                .collect::<Check<Vec<_>>>()?;
            let border = r.string(t, "border", &what)?.map(|b| border_of(&b, &format!("{what} border"))).transpose()?;
            let target = r.string(t, "target", &what)?;
            if let Some(tg) = &target {
                check_node_target(tg, &format!("{what} target"))?;
            }
            nodes.push(NodePlan { what, name, kernel, params, border, target });
        }
        for (node, target) in &over.place {
            let what = format!("--place {node}={target}");
            let Some(n) = nodes.iter().position(|n| n.name.as_deref() == Some(node)) else {
                let named: Vec<&str> = nodes.iter().filter_map(|n| n.name.as_deref()).collect();
                return Err(format!(
                    "{what}: the file has no node named `{node}` (named nodes: {})",
                    if named.is_empty() { "none".to_owned() } else { named.join(", ") }
                ));
            };
            check_node_target(target, &what)?;
            nodes[n].target = Some(target.clone());
        }
        Ok(GraphFile { name, modules, frames, threads, fusion, targets, images, scalars, nodes })
    }

    /// The image files the graph reads.
    pub(crate) fn inputs(&self) -> impl Iterator<Item = (&str, &Path)> {
        self.images.iter().filter_map(|i| match &i.kind {
            ImageKind::Read { path, .. } => Some((i.name.as_str(), path.as_path())),
            _ => None,
        })
    }

    /// The image files the graph writes.
    pub(crate) fn outputs(&self) -> impl Iterator<Item = (&str, &Output)> {
        self.images.iter().filter_map(|i| i.write.as_ref().map(|o| (i.name.as_str(), o)))
    }
}

/// Images in an order where each comes after the image it is `like`; a `like` naming no real
/// image, or a loop, is refused.
fn order_images(plans: Vec<ImagePlan>) -> Check<Vec<ImagePlan>> {
    let virtual_or_real: HashMap<String, bool> =
        plans.iter().map(|p| (p.name.clone(), matches!(p.kind, ImageKind::Virtual { .. }))).collect();
    for p in &plans {
        if let ImageKind::Like { other, .. } = &p.kind {
            match virtual_or_real.get(other) {
                None => {
                    let known: Vec<&str> = plans.iter().map(|p| p.name.as_str()).collect();
                    return Err(format!(
                        "[images.{}] like: `{other}` names no image of the file (images: {})",
                        p.name,
                        known.join(", ")
                    ));
                }
                Some(true) => {
                    return Err(format!(
                        "[images.{}] like: `{other}` is virtual (its size is known only at verify); give width and height",
                        p.name
                    ));
                }
                Some(false) => {}
            }
        }
    }
    let (mut done, mut pending): (Vec<ImagePlan>, Vec<ImagePlan>) =
        plans.into_iter().partition(|p| !matches!(p.kind, ImageKind::Like { .. }));
    while !pending.is_empty() {
        let before = pending.len();
        let mut i = 0;
        while i < pending.len() {
            let ImageKind::Like { other, .. } = &pending[i].kind else { unreachable!("only `like` images wait") };
            if done.iter().any(|d| &d.name == other) {
                done.push(pending.remove(i));
            } else {
                i += 1;
            }
        }
        if pending.len() == before {
            let names: Vec<&str> = pending.iter().map(|p| p.name.as_str()).collect();
            return Err(format!(
                "[images.{}] like: the images {} are `like` each other in a loop",
                names[0],
                names.join(", ")
            ));
        }
    }
    Ok(done)
}

/// Read an image file into a new image of `format`.
fn read_image(ctx: &Context, path: &Path, format: ImageFormat, what: &str) -> Result<Image, Failure> {
    let reader = image::ImageReader::open(path)
        .map_err(|e| Failure::usage(format!("{what}: cannot read {}: {e}", path.display())))?;
    decode_image(ctx, reader, format, what, &path.display().to_string())
}

/// The most bytes an image file may decode to, and the most its pixels may take once converted to
/// the image's format (`read = "…"`): the `image` crate's default allocation limit. A file of a
/// few hundred bytes can claim 16384 × 16384 pixels; this bounds what reading it costs.
pub(crate) const MAX_IMAGE_FILE_BYTES: u64 = 512 << 20;

/// The largest graph file read (graph files are a few kilobytes).
pub(crate) const MAX_GRAPH_FILE_BYTES: u64 = 16 << 20;

/// Decode an image file (its format from `reader`: the file's extension, or guessed from its
/// bytes) into a new image of `format`; `name` names the file in errors. The decoded pixels and
/// their conversion each stay within [`MAX_IMAGE_FILE_BYTES`].
pub(crate) fn decode_image<R: std::io::BufRead + std::io::Seek>(
    ctx: &Context,
    mut reader: image::ImageReader<R>,
    format: ImageFormat,
    what: &str,
    name: &str,
) -> Result<Image, Failure> {
    let bytes_per_pixel: u64 = match format {
        ImageFormat::U8 => 1,
        ImageFormat::U16 => 2,
        ImageFormat::Rgb => 3,
        ImageFormat::Rgbx => 4,
        other => {
            return Err(Failure::usage(format!("{what}: image files are read as U8, U16, RGB or RGBX, not {other}")));
        }
    };
    let mut limits = image::Limits::default();
    limits.max_alloc = Some(MAX_IMAGE_FILE_BYTES);
    reader.limits(limits);
    let cannot = |e: image::ImageError| Failure::usage(format!("{what}: cannot read {name}: {e}"));
    // The size from the header first: refused before a pixel is decoded.
    let decoder = reader.into_decoder().map_err(cannot)?;
    let (w, h) = image::ImageDecoder::dimensions(&decoder);
    let decoded = image::ImageDecoder::total_bytes(&decoder);
    let converted = u64::from(w) * u64::from(h) * bytes_per_pixel;
    if decoded.max(converted) > MAX_IMAGE_FILE_BYTES {
        return Err(Failure::usage(format!(
            "{what}: {name} is {w}x{h}: {} bytes decoded or as {format}, more than the {MAX_IMAGE_FILE_BYTES} \
             bytes an image file is read up to",
            decoded.max(converted)
        )));
    }
    let img = image::DynamicImage::from_decoder(decoder).map_err(cannot)?;
    // `into_*` converts (or moves the pixels when they already have the type).
    let r = match format {
        ImageFormat::U8 => Image::from_image(ctx, &img.into_luma8()),
        ImageFormat::U16 => Image::from_image(ctx, &img.into_luma16()),
        ImageFormat::Rgb => Image::from_image(ctx, &img.into_rgb8()),
        _ => Image::from_image(ctx, &img.into_rgba8()),
    };
    r.map_err(|e| Failure::graph(format!("{what}: {e}")))
}

/// `img` encoded as `encoding` (the formats were checked against the encoding when the file was
/// parsed).
pub(crate) fn encode_image(img: &Image, encoding: image::ImageFormat) -> Result<Vec<u8>, String> {
    let dynamic: image::DynamicImage = match img.format() {
        ImageFormat::U8 => img.to_image::<image::Luma<u8>>().map_err(|e| e.to_string())?.into(),
        ImageFormat::U16 => img.to_image::<image::Luma<u16>>().map_err(|e| e.to_string())?.into(),
        ImageFormat::Rgb => img.to_image::<image::Rgb<u8>>().map_err(|e| e.to_string())?.into(),
        ImageFormat::Rgbx => img.to_image::<image::Rgba<u8>>().map_err(|e| e.to_string())?.into(),
        other => return Err(format!("{other} images cannot be written to image files (U8, U16, RGB, RGBX)")),
    };
    let mut bytes = std::io::Cursor::new(Vec::new());
    dynamic.write_to(&mut bytes, encoding).map_err(|e| e.to_string())?;
    Ok(bytes.into_inner())
}

/// How a graph file's `read = "…"` images are read: path, format, what (for errors).
pub(crate) type ReadImage<'a> = dyn Fn(&Path, ImageFormat, &str) -> Result<Image, Failure> + 'a;

impl GraphFile {
    /// Build the graph in `ctx` (modules already loaded) and verify it.
    pub(crate) fn build(&self, ctx: &Context) -> Result<BuiltGraph, Failure> {
        self.build_with(ctx, &|path, format, what| read_image(ctx, path, format, what))
    }

    /// [`build`](Self::build), reading images with `read`.
    pub(crate) fn build_with(&self, ctx: &Context, read: &ReadImage<'_>) -> Result<BuiltGraph, Failure> {
        let graph = Graph::with_name(ctx, &self.name).map_err(|e| Failure::graph(e.to_string()))?;
        if let Some(on) = self.fusion {
            graph.set_fusion(Some(on)).map_err(|e| Failure::graph(e.to_string()))?;
        }
        let mut objects: HashMap<&str, Reference> = HashMap::new();
        let mut images: HashMap<&str, Image> = HashMap::new();
        let mut outputs = Vec::new();
        for spec in &self.images {
            let what = format!("image '{}'", spec.name);
            let fail = |e: vx::Error| Failure::graph(format!("{what}: {e}"));
            let img = match &spec.kind {
                ImageKind::Virtual { width, height, format } => {
                    Image::new_virtual(&graph, *width, *height, *format).map_err(fail)?
                }
                ImageKind::Read { path, format } => read(path, *format, &what)?,
                ImageKind::Sized { width, height, format } => {
                    Image::new(ctx, *width, *height, *format).map_err(fail)?
                }
                ImageKind::Like { other, format } => {
                    let o = &images[other.as_str()];
                    Image::new(ctx, o.width(), o.height(), *format).map_err(fail)?
                }
            };
            img.set_name(&spec.name);
            if let Some(out) = &spec.write {
                outputs.push((spec.name.clone(), img.clone(), out.clone()));
            }
            objects.insert(&spec.name, Reference::from(&img));
            images.insert(&spec.name, img);
        }
        for (name, value) in &self.scalars {
            let s = Scalar::new(ctx, *value).map_err(|e| Failure::graph(format!("scalar '{name}': {e}")))?;
            objects.insert(name, Reference::from(&s));
        }
        let mut nodes = Vec::new();
        for n in &self.nodes {
            let what = format!("{} ({})", n.what, n.kernel);
            let fail = |e: vx::Error| Failure::graph(format!("{what}: {e}"));
            let kernel = ctx.kernel_by_name(&n.kernel).map_err(fail)?;
            let params: Vec<Option<Reference>> =
                n.params.iter().map(|p| p.as_ref().map(|p| objects[p.as_str()].clone())).collect();
            let node = graph.add_node(&kernel, params).map_err(fail)?;
            if let Some(name) = &n.name {
                node.set_name(name).map_err(fail)?;
            }
            if let Some(b) = n.border {
                node.set_border(b).map_err(fail)?;
            }
            if let Some(t) = &n.target {
                node.set_target(t).map_err(fail)?;
            }
            // By the graph's own name for it (the file's `name`, else `<kernel>#<index>`), as the
            // time table names it.
            nodes.push((node.name().map_err(fail)?, node));
        }
        graph.verify().map_err(|e| Failure::graph(e.to_string()))?;
        Ok(BuiltGraph { graph, nodes, outputs })
    }
}
