//! Entry points for the fuzz targets in `fuzz/`: what `vx run` does with a graph file
//! and with an image file, on bytes instead of files. Not a stable API.
//!
//! - [`graph_file`]: the TOML parser and checks, `${var}` expansion and the graph built and verified from it,
//!   in a context with one in-process kernel (`fuzz.copy`), target `dsp` and 64 MiB of buffers; `read = "…"`
//!   images are 8×8 images made in memory (a fuzz input never opens files).
//! - [`image_file`]: an image file decoded and converted to a vx image of the format the first
//!   byte picks, exactly as `read = "…"` does.
//!
//! Both return the error `vx run` would print; neither may panic or abort.

use std::path::Path;

use vx::{Context, DataType, Image, ImageFormat, ParamDirection, ParamState};

use crate::graph_file::{GraphFile, Overrides, decode_image};

/// Buffer bytes of the fuzz context: a file asking for more is refused (`NoResources`).
pub const MAX_BUFFER_BYTES: usize = 64 << 20;

/// A context for the fuzz targets: one thread, [`MAX_BUFFER_BYTES`], target `dsp` (a file's own
/// `[targets]` are checked but not created: the context is made once), and the kernel `fuzz.copy`
/// (image in, image out of the same format and size, an optional scalar).
pub fn context() -> Context {
    let ctx = Context::builder()
        .threads(1)
        .max_buffer_bytes(MAX_BUFFER_BYTES)
        .target(vx::TargetConfig::new("dsp"))
        .build()
        .expect("a context");
    let id = ctx.allocate_user_kernel_id().expect("a kernel id");
    let k = ctx
        .user_kernel("fuzz.copy", id, 3)
        .validate(|v, metas| {
            let i = v.image(0)?;
            metas.get(1)?.set_image(i.format(), i.width(), i.height())?;
            Ok(())
        })
        .process(|_| Ok(()))
        .add()
        .expect("the kernel");
    k.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required).expect("parameter 0");
    k.add_parameter(1, ParamDirection::Output, DataType::Image, ParamState::Required).expect("parameter 1");
    k.add_parameter(2, ParamDirection::Input, DataType::Scalar, ParamState::Optional).expect("parameter 2");
    k.finalize().expect("finalize");
    ctx
}

/// Parse `data` as a graph file and build and verify its graph in `ctx` (from [`context`]).
pub fn graph_file(ctx: &Context, data: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(data).map_err(|e| e.to_string())?;
    let path = Path::new("fuzz/graph.toml");
    // `--set set=…` as `vx run` would be given it, when the file uses `${set}` (a `--set` of a
    // variable the file never uses is refused).
    let set =
        if text.contains("${set}") { vec![("set".to_owned(), "from-the-command-line".to_owned())] } else { vec![] };
    let file = GraphFile::parse(text, path, &Overrides { set, ..Overrides::default() }).map_err(|f| f.message)?;
    let read = |_: &Path, format: ImageFormat, what: &str| match format {
        ImageFormat::U8 | ImageFormat::U16 | ImageFormat::Rgb | ImageFormat::Rgbx => {
            let img = Image::new(ctx, 8, 8, format).map_err(|e| crate::Failure::graph(format!("{what}: {e}")))?;
            Ok(img)
        }
        other => {
            Err(crate::Failure::usage(format!("{what}: image files are read as U8, U16, RGB or RGBX, not {other}")))
        }
    };
    file.build_with(ctx, &read).map_err(|f| f.message)?;
    Ok(())
}

/// The formats `vx run` reads image files as, and one it refuses, picked by a fuzz input's first
/// byte.
const FORMATS: [ImageFormat; 5] =
    [ImageFormat::U8, ImageFormat::U16, ImageFormat::Rgb, ImageFormat::Rgbx, ImageFormat::S16];

/// Decode `data[1..]` as an image file (format guessed from its bytes) into a vx image of the
/// format `data[0]` picks, as a graph file's `read = "…"` does.
pub fn image_file(ctx: &Context, data: &[u8]) -> Result<(), String> {
    let Some((&pick, bytes)) = data.split_first() else { return Err("empty".into()) };
    let format = FORMATS[pick as usize % FORMATS.len()];
    let reader =
        image::ImageReader::new(std::io::Cursor::new(bytes)).with_guessed_format().map_err(|e| e.to_string())?;
    let img = decode_image(ctx, reader, format, "image 'fuzz'", "the input").map_err(|f| f.message)?;
    assert_eq!(img.format(), format);
    assert!(img.width() > 0 && img.height() > 0);
    Ok(())
}
