//! `hello.brighten` tested in process, no shared library: `publish_in_process` registers the
//! kernels compiled into this test binary through the interface a loaded module uses.

use vx::{Context, Graph, Image, ImageFormat, Rect, Reference, Scalar, ScalarValue};

#[test]
fn brighten_saturates_on_blocks_and_at_the_right_edge() -> vx::Result<()> {
    let ctx = Context::new()?;
    ctx.publish_in_process()?;
    let brighten = ctx.kernel_by_name("hello.brighten")?;
    // 20 columns: one 16×1 block for the fast function, 4 columns for the flexible one.
    let px: Vec<u8> = (0..20).map(|i| i * 12).collect();
    let input = Image::new(&ctx, 20, 1, ImageFormat::U8)?;
    input.copy_from(Rect::full(20, 1), 0, &px)?;
    let amount = Scalar::new(&ctx, ScalarValue::Uint8(50))?;
    let output = Image::new(&ctx, 20, 1, ImageFormat::U8)?;
    let graph = Graph::new(&ctx)?;
    graph.add_node(&brighten, [Reference::from(&input), Reference::from(&amount), Reference::from(&output)])?;
    graph.process()?;
    let want: Vec<u8> = px.iter().map(|p| p.saturating_add(50)).collect();
    assert_eq!(output.to_vec::<u8>()?, want);
    Ok(())
}
