//! Graph files: a graph described in TOML (modules to load, images, scalars, nodes by kernel
//! name) and how it becomes a verified [`Graph`]. `${var}` in any string is replaced by the file's
//! `[vars]`, overridden by `--set var=value`.
//!
//! ```toml
//! name = "edges"
//! modules = ["vx_filters"]
//! frames = 10
//!
//! [vars]
//! input = "../data/astronaut.jpg"   # read/write paths in the file are relative to the file
//!
//! [images.src]
//! read = "${input}"                 # read with the `image` crate, converted to `format`
//! format = "U8"
//!
//! [images.blurred]
//! virtual = true                    # format and size completed at verify
//!
//! [images.edges]
//! like = "src"                      # src's size; or width/height
//! format = "U8"
//! write = "edges.png"               # written after the last frame
//!
//! [scalars.level]
//! type = "U8"
//! value = "100"
//!
//! [[nodes]]
//! name = "gaussian"
//! kernel = "filters.gaussian3x3"
//! params = ["src", "blurred"]       # object names; "-" leaves an optional parameter out
//! border = "replicate"              # undefined | replicate | constant:N (optional)
//! target = "dsp"                    # (optional)
//! ```

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use vx::{BorderMode, Context, Graph, Image, ImageFormat, Reference, Scalar, ScalarValue};

use crate::Failure;

/// The file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GraphFile {
    /// The graph's name.
    #[serde(default)]
    pub(crate) name: Option<String>,
    /// Modules to load (by name, from the search path).
    #[serde(default)]
    pub(crate) modules: Vec<String>,
    /// Frames to process (`--frames` overrides).
    #[serde(default)]
    pub(crate) frames: Option<u64>,
    /// Worker threads of the context (`--threads` overrides).
    #[serde(default)]
    pub(crate) threads: Option<usize>,
    #[serde(default)]
    vars: BTreeMap<String, toml::Value>,
    #[serde(default)]
    images: BTreeMap<String, ImageSpec>,
    #[serde(default)]
    scalars: BTreeMap<String, ScalarSpec>,
    #[serde(default)]
    nodes: Vec<NodeSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ImageSpec {
    #[serde(default, rename = "virtual")]
    is_virtual: bool,
    format: Option<String>,
    width: Option<u32>,
    height: Option<u32>,
    like: Option<String>,
    read: Option<String>,
    write: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScalarSpec {
    #[serde(rename = "type")]
    ty: String,
    value: toml::Value,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeSpec {
    name: Option<String>,
    kernel: String,
    params: Vec<String>,
    border: Option<String>,
    target: Option<String>,
}

/// A graph built from a file: the graph, and the images to write after the run.
pub(crate) struct BuiltGraph {
    pub(crate) graph: Graph,
    pub(crate) outputs: Vec<(String, Image, PathBuf)>,
}

impl GraphFile {
    /// Read and parse `path`.
    pub(crate) fn read(path: &Path) -> Result<GraphFile, Failure> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure::usage(format!("cannot read the graph file {}: {e}", path.display())))?;
        GraphFile::parse(&text, path)
    }

    /// Parse the text of a graph file (`path` names it in errors).
    pub(crate) fn parse(text: &str, path: &Path) -> Result<GraphFile, Failure> {
        toml::from_str(text).map_err(|e| Failure::usage(format!("{}: {e}", path.display())))
    }
}

/// `${var}` substitution with the file's vars and the command line's (which win); values from the
/// command line used as a whole path resolve against the working directory, the file's against
/// the file's directory.
pub(crate) struct Vars {
    file: HashMap<String, String>,
    set: HashMap<String, String>,
    base: PathBuf,
}

impl Vars {
    pub(crate) fn new(file: &GraphFile, file_path: &Path, set: &[(String, String)]) -> Vars {
        let text = |v: &toml::Value| match v {
            toml::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        Vars {
            file: file.vars.iter().map(|(k, v)| (k.clone(), text(v))).collect(),
            set: set.iter().cloned().collect(),
            base: file_path.parent().map(Path::to_path_buf).unwrap_or_default(),
        }
    }

    fn get(&self, name: &str) -> Option<&String> {
        self.set.get(name).or_else(|| self.file.get(name))
    }

    /// `s` with every `${var}` replaced.
    pub(crate) fn expand(&self, s: &str, what: &str) -> Result<String, Failure> {
        let mut out = String::new();
        let mut rest = s;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let Some(end) = rest[start..].find('}') else {
                return Err(Failure::usage(format!("{what}: unclosed `${{` in \"{s}\"")));
            };
            let name = &rest[start + 2..start + end];
            let value = self.get(name).ok_or_else(|| {
                Failure::usage(format!(
                    "{what}: unknown variable `{name}` (define it in [vars] or with --set {name}=...)"
                ))
            })?;
            out.push_str(value);
            rest = &rest[start + end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// A path: expanded, relative to the working directory if it is one `--set` variable, else to
    /// the file's directory.
    pub(crate) fn path(&self, s: &str, what: &str) -> Result<PathBuf, Failure> {
        let expanded = PathBuf::from(self.expand(s, what)?);
        let whole_var = s.strip_prefix("${").and_then(|r| r.strip_suffix('}'));
        if expanded.is_absolute() || whole_var.is_some_and(|v| self.set.contains_key(v)) {
            Ok(expanded)
        } else {
            Ok(self.base.join(expanded))
        }
    }
}

fn format_of(s: &str, what: &str) -> Result<ImageFormat, Failure> {
    Ok(match s.to_ascii_uppercase().as_str() {
        "U8" => ImageFormat::U8,
        "U16" => ImageFormat::U16,
        "S16" => ImageFormat::S16,
        "U32" => ImageFormat::U32,
        "S32" => ImageFormat::S32,
        "RGB" => ImageFormat::Rgb,
        "RGBX" => ImageFormat::Rgbx,
        "NV12" => ImageFormat::Nv12,
        other => {
            return Err(Failure::usage(format!(
                "{what}: unknown format `{other}` (U8, U16, S16, U32, S32, RGB, RGBX, NV12)"
            )));
        }
    })
}

fn scalar_of(ty: &str, value: &str, what: &str) -> Result<ScalarValue, Failure> {
    let bad = |e: &dyn std::fmt::Display| Failure::usage(format!("{what}: `{value}` is not a {ty}: {e}"));
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
        other => {
            return Err(Failure::usage(format!(
                "{what}: unknown scalar type `{other}` (U8, I8, U16, I16, U32, I32, U64, I64, F32, BOOL)"
            )));
        }
    })
}

fn border_of(s: &str, what: &str) -> Result<BorderMode, Failure> {
    let lower = s.to_ascii_lowercase();
    Ok(match lower.as_str() {
        "undefined" => BorderMode::Undefined,
        "replicate" => BorderMode::Replicate,
        _ => match lower.strip_prefix("constant:").map(str::parse::<u32>) {
            Some(Ok(v)) => BorderMode::Constant(v),
            _ => {
                return Err(Failure::usage(format!(
                    "{what}: unknown border `{s}` (undefined, replicate or constant:N)"
                )));
            }
        },
    })
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

/// Write `img` to `path` (the format decides the pixel type; S16 and the 32-bit formats are not
/// image-file formats).
pub(crate) fn write_image(img: &Image, path: &Path) -> Result<(), Failure> {
    let fail = |e: &dyn std::fmt::Display| Failure::process(format!("cannot write {}: {e}", path.display()));
    match img.format() {
        ImageFormat::U8 => img.to_image::<image::Luma<u8>>().map_err(|e| fail(&e))?.save(path).map_err(|e| fail(&e)),
        ImageFormat::U16 => img.to_image::<image::Luma<u16>>().map_err(|e| fail(&e))?.save(path).map_err(|e| fail(&e)),
        ImageFormat::Rgb => img.to_image::<image::Rgb<u8>>().map_err(|e| fail(&e))?.save(path).map_err(|e| fail(&e)),
        ImageFormat::Rgbx => img.to_image::<image::Rgba<u8>>().map_err(|e| fail(&e))?.save(path).map_err(|e| fail(&e)),
        other => Err(fail(&format!("{other} images cannot be written to image files (U8, U16, RGB, RGBX)"))),
    }
}

/// How a graph file's `read = "…"` images are read: path, format, what (for errors).
pub(crate) type ReadImage<'a> = dyn Fn(&Path, ImageFormat, &str) -> Result<Image, Failure> + 'a;

impl GraphFile {
    /// Build the graph in `ctx` (modules already loaded) and verify it.
    pub(crate) fn build(&self, ctx: &Context, vars: &Vars) -> Result<BuiltGraph, Failure> {
        self.build_with(ctx, vars, &|path, format, what| read_image(ctx, path, format, what))
    }

    /// [`build`](Self::build), reading images with `read`.
    pub(crate) fn build_with(&self, ctx: &Context, vars: &Vars, read: &ReadImage<'_>) -> Result<BuiltGraph, Failure> {
        let gname = self.name.clone().unwrap_or_else(|| "graph".into());
        let graph = Graph::with_name(ctx, &gname).map_err(|e| Failure::graph(e.to_string()))?;
        let mut objects: HashMap<String, Reference> = HashMap::new();
        let mut images: HashMap<String, Image> = HashMap::new();
        let mut outputs = Vec::new();
        // Images that read a file or give a size first, then those `like` another.
        let mut order: Vec<(&String, &ImageSpec)> = self.images.iter().collect();
        order.sort_by_key(|(_, s)| s.like.is_some());
        for (name, spec) in order {
            let what = format!("image '{name}'");
            let format = spec.format.as_deref().map(|f| format_of(f, &what)).transpose()?;
            let img = if spec.is_virtual {
                if spec.read.is_some() || spec.write.is_some() {
                    return Err(Failure::usage(format!("{what}: a virtual image cannot be read or written")));
                }
                Image::new_virtual(
                    &graph,
                    spec.width.unwrap_or(0),
                    spec.height.unwrap_or(0),
                    format.unwrap_or(ImageFormat::Virtual),
                )
                .map_err(|e| Failure::graph(format!("{what}: {e}")))?
            } else if let Some(path) = &spec.read {
                read(&vars.path(path, &what)?, format.unwrap_or(ImageFormat::U8), &what)?
            } else {
                let (w, h) = match (&spec.like, spec.width, spec.height) {
                    (Some(other), None, None) => {
                        let o = images.get(other).ok_or_else(|| {
                            Failure::usage(format!("{what}: `like = \"{other}\"` names no real image of the file"))
                        })?;
                        (o.width(), o.height())
                    }
                    (None, Some(w), Some(h)) => (w, h),
                    _ => {
                        return Err(Failure::usage(format!(
                            "{what}: give `read`, `like = \"image\"` or `width` and `height` (or `virtual = true`)"
                        )));
                    }
                };
                let format = format.ok_or_else(|| Failure::usage(format!("{what}: `format` is required")))?;
                Image::new(ctx, w, h, format).map_err(|e| Failure::graph(format!("{what}: {e}")))?
            };
            img.set_name(name);
            if let Some(write) = &spec.write {
                outputs.push((name.clone(), img.clone(), vars.path(write, &what)?));
            }
            objects.insert(name.clone(), Reference::from(&img));
            images.insert(name.clone(), img);
        }
        for (name, spec) in &self.scalars {
            let what = format!("scalar '{name}'");
            if objects.contains_key(name) {
                return Err(Failure::usage(format!("{what}: an image has this name too")));
            }
            let raw = match &spec.value {
                toml::Value::String(s) => vars.expand(s, &what)?,
                other => other.to_string(),
            };
            let s = Scalar::new(ctx, scalar_of(&spec.ty, raw.trim(), &what)?)
                .map_err(|e| Failure::graph(format!("{what}: {e}")))?;
            objects.insert(name.clone(), Reference::from(&s));
        }
        for (i, n) in self.nodes.iter().enumerate() {
            let what = format!("node {} ({})", n.name.as_deref().unwrap_or(&i.to_string()), n.kernel);
            let kernel = ctx.kernel_by_name(&n.kernel).map_err(|e| Failure::graph(format!("{what}: {e}")))?;
            let mut params: Vec<Option<Reference>> = Vec::new();
            for p in &n.params {
                if p == "-" {
                    params.push(None);
                } else {
                    let r = objects.get(p).ok_or_else(|| {
                        Failure::usage(format!("{what}: parameter `{p}` names no image or scalar of the file"))
                    })?;
                    params.push(Some(r.clone()));
                }
            }
            let node = graph.add_node(&kernel, params).map_err(|e| Failure::graph(format!("{what}: {e}")))?;
            if let Some(name) = &n.name {
                node.set_name(name).map_err(|e| Failure::graph(format!("{what}: {e}")))?;
            }
            if let Some(b) = &n.border {
                node.set_border(border_of(b, &what)?).map_err(|e| Failure::graph(format!("{what}: {e}")))?;
            }
            if let Some(t) = &n.target {
                node.set_target(t).map_err(|e| Failure::graph(format!("{what}: {e}")))?;
            }
        }
        graph.verify().map_err(|e| Failure::graph(e.to_string()))?;
        Ok(BuiltGraph { graph, outputs })
    }
}
