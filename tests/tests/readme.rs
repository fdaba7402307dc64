//! The README's "Write a kernel" walk-through cannot rot: its module source and test are the sources of
//! `plugins/vx-hello` (compared here, compiled by the README doctest), and that module is built,
//! loaded and run exactly as the README's application does.

use vx::*;
use vx_tests::{build_module, plugin_dir, workspace_root};

/// The code block after `marker` in the README.
fn readme_block(readme: &str, marker: &str) -> String {
    let start = readme.find(marker).unwrap_or_else(|| panic!("the README marks {marker}"));
    let block = &readme[start..];
    let fence = block.find("```rust").expect("a rust block follows the marker");
    let code_start = fence + block[fence..].find('\n').unwrap() + 1;
    block[code_start..code_start + block[code_start..].find("```").unwrap()].to_string()
}

#[test]
fn the_readme_module_is_the_vx_hello_plugin() {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).unwrap();
    for file in ["lib.rs", "tests.rs"] {
        let code = readme_block(&readme, &format!("<!-- vx_hello/src/{file}"));
        let plugin = std::fs::read_to_string(workspace_root().join("plugins/vx-hello/src").join(file)).unwrap();
        assert_eq!(code, plugin, "README.md and plugins/vx-hello/src/{file} differ");
    }
}

#[test]
fn the_readme_walkthrough_runs() {
    let lib = build_module("vx-hello", &[]);
    let ctx = Context::new().unwrap();
    ctx.add_module_dir(plugin_dir("hello", &[("vx_hello", &lib)]));
    ctx.load_module("vx_hello").unwrap();
    let brighten = ctx.kernel_by_name("hello.brighten").unwrap();
    let graph = Graph::new(&ctx).unwrap();
    let input = Image::new(&ctx, 20, 1, ImageFormat::U8).unwrap();
    input.copy_from(Rect::full(20, 1), 0, &[100u8; 20]).unwrap();
    let amount = Scalar::new(&ctx, ScalarValue::Uint8(50)).unwrap();
    let output = Image::new(&ctx, 20, 1, ImageFormat::U8).unwrap();
    graph.add_node(&brighten, [Reference::from(&input), Reference::from(&amount), Reference::from(&output)]).unwrap();
    graph.process().unwrap();
    assert_eq!(output.to_vec::<u8>().unwrap(), [150u8; 20]);
}
