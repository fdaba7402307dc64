//! Convert a picture to a binary greyscale PGM, the input of the C example (`examples/c/edges.c`,
//! which reads PGM to stay free of image libraries):
//!
//! ```text
//! cargo run -p vx-examples --bin to_pgm -- INPUT OUTPUT.pgm
//! ```

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(input), Some(output)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: to_pgm INPUT OUTPUT.pgm");
        std::process::exit(2);
    };
    let grey = match image::open(input) {
        Ok(p) => p.to_luma8(),
        Err(e) => {
            eprintln!("cannot read {input}: {e}");
            std::process::exit(2);
        }
    };
    let (w, h) = grey.dimensions();
    let mut bytes = format!("P5\n{w} {h}\n255\n").into_bytes();
    bytes.extend_from_slice(grey.as_raw());
    if let Err(e) = std::fs::write(output, bytes) {
        eprintln!("cannot write {output}: {e}");
        std::process::exit(1);
    }
}
