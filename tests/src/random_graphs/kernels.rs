//! The vx-rs kernels of a random graph: one kernel per node, made from its [`NodeSpec`]. Each
//! checks what the specs promise it (tiles aligned for the fast function, never reading or
//! writing outside what the tiling tables allow, tile memory of the promised size and its own)
//! and records what it saw (aliasing, executions, pixels computed) for the runner to check.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use vx::*;
use vx_plugin_abi::tile::{RowSink, RowTable, for_rows_from_table};
use vx_plugin_abi::{BorderFill, InPlaceRow, RowArgs, RowRegion};

use super::reference::{processed, weight};
use super::spec::*;

/// What kernels saw of their alias hints: (node, a, b) → (seen aliased, seen not aliased).
pub type Seen = HashMap<(usize, u32, u32), (bool, bool)>;

/// What the kernels of one graph report to the runner.
#[derive(Default)]
pub struct Shared {
    /// What the kernels saw of their alias hints since the last reset.
    pub seen: Mutex<Seen>,
    /// Broken promises seen inside kernels.
    pub violations: Mutex<Vec<String>>,
    /// Calls of row kernels' row entries (fused execution).
    pub row_calls: AtomicU64,
}

impl Shared {
    fn violation(&self, msg: String) -> TileError {
        let mut v = self.violations.lock().unwrap_or_else(|p| p.into_inner());
        if v.len() < 16 {
            v.push(msg.clone());
        }
        TileError::new(Status::Failure, msg)
    }
    fn saw(&self, node: usize, a: u32, b: u32, aliased: bool) {
        let mut s = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let e = s.entry((node, a, b)).or_default();
        if aliased {
            e.0 = true;
        } else {
            e.1 = true;
        }
    }
}

/// Per node: the border its tile functions must assume (changed by re-verification steps),
/// executions and pixels computed since the last reset.
#[derive(Default)]
pub struct NodeCounters {
    /// 0 = Undefined, 1 = Self_.
    pub border: AtomicU8,
    /// Process calls (user kernels).
    pub runs: AtomicU64,
    /// Output pixels computed by tile functions (tiling kernels).
    pub area: AtomicU64,
    /// The same per output row (grown on first use; cleared with `area`).
    pub rows: std::sync::Mutex<Vec<u64>>,
}

impl NodeCounters {
    /// Set the border the tile functions assume.
    pub fn set_border(&self, b: Border) {
        self.border.store((b == Border::SelfMode) as u8, SeqCst);
    }
    /// `width` pixels computed in each of rows `y0 .. y0 + count` of an image `height` rows high.
    fn add_rows(&self, height: u32, y0: u32, count: u32, width: u32) {
        self.area.fetch_add(count as u64 * width as u64, SeqCst);
        let mut rows = self.rows.lock().unwrap_or_else(|p| p.into_inner());
        if rows.len() < height as usize {
            rows.resize(height as usize, 0);
        }
        for y in y0..y0.saturating_add(count).min(height) {
            rows[y as usize] += width as u64;
        }
    }

    fn border(&self) -> Border {
        if self.border.load(SeqCst) == 1 { Border::SelfMode } else { Border::Undefined }
    }
}

fn pause(us: u32, spin: bool) {
    if us == 0 {
        return;
    }
    let d = Duration::from_micros(us as u64);
    if spin {
        let t0 = Instant::now();
        while t0.elapsed() < d {
            std::hint::spin_loop();
        }
    } else {
        std::thread::sleep(d);
    }
}

fn u8_op(op: Op) -> fn(u8, u8) -> u8 {
    match op {
        Op::Xor => |a, b| a ^ b,
        _ => |a, b| ((a as u16 + b as u16 + 1) >> 1) as u8,
    }
}

/// Everything a kernel's callbacks need, cloned into them.
#[derive(Clone)]
struct K {
    index: usize,
    name: String,
    op: Op,
    nb: Nb,
    tiling: Option<Tiling>,
    hints: Vec<Hint>,
    sleep_us: u32,
    spin: bool,
    out_w: u32,
    out_h: u32,
    shared: Arc<Shared>,
    counters: Arc<NodeCounters>,
}

/// The validator key of `op`'s validator (a pure function of the op, like a kernel macro's
/// generated validator of its declared signature): nonzero, one per op.
pub fn validator_key(op: Op) -> u64 {
    format!("rg-validator-{op:?}")
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
        .max(1)
}

/// Register, describe and finalize the kernel of node `index` (even indices declare their
/// validator by its key, odd ones do not).
pub fn build(
    ctx: &Context,
    prefix: &str,
    index: usize,
    node: &NodeSpec,
    out_size: (u32, u32),
    shared: Arc<Shared>,
    counters: Arc<NodeCounters>,
) -> Result<Kernel> {
    let key = if index.is_multiple_of(2) { validator_key(node.op) } else { 0 };
    build_version(ctx, prefix, index, node, out_size, shared, counters, key, None)
}

/// [`build`] with the validator key `key`, as the successor of `predecessor` when given (staged
/// as a module reload stages it: same name and enumeration, swapped in by the caller).
#[allow(clippy::too_many_arguments)]
pub fn build_version(
    ctx: &Context,
    prefix: &str,
    index: usize,
    node: &NodeSpec,
    out_size: (u32, u32),
    shared: Arc<Shared>,
    counters: Arc<NodeCounters>,
    key: u64,
    predecessor: Option<&Kernel>,
) -> Result<Kernel> {
    let k = K {
        index,
        name: node.name.clone(),
        op: node.op,
        nb: node.nb,
        tiling: node.tiling.clone(),
        hints: node.hints.clone(),
        sleep_us: node.sleep_us,
        spin: node.spin,
        out_w: out_size.0,
        out_h: out_size.1,
        shared,
        counters,
    };
    if let Some(t) = &node.tiling {
        k.counters.set_border(t.border());
    }
    let name = format!("{prefix}.{}", node.name);
    let id = match predecessor {
        Some(old) => old.enumeration(),
        None => ctx.allocate_user_kernel_id()?,
    };
    let n = node.op.num_params();
    let mut b = match &node.tiling {
        Some(_) => ctx.tiling_kernel(&name, id, n),
        None => ctx.user_kernel(&name, id, n),
    }
    .__reload_test_hook(key, predecessor.is_some());
    b = b.validate(validator(node.op));
    match &node.tiling {
        Some(t) => {
            if t.fast {
                let kk = k.clone();
                b = b.fast(move |args| kk.tile(args, true));
            }
            if t.flexible {
                let kk = k.clone();
                b = b.flexible(move |args| kk.tile(args, false));
            }
            // Fusable on descriptors (issue 34): `K::tile` reads and writes only through SDK views
            // (`TileArgs::input` / `output` / `in_place`, `Tile::get`, `Tile::for_rows`,
            // `TileMut::set`, rows of an `InPlace`), never raw addresses; the fused runner calls it
            // on row chunks of the tiles the plan would give, and its checks hold there too (see
            // `K::tile`). A row kernel gets a row entry instead (which implies fusable).
            match t.rows {
                Some(fill) => {
                    let kk = k.clone();
                    let rule = match fill {
                        Fill::Reflect101 => RowFill::Reflect101,
                        Fill::Replicate => RowFill::Replicate,
                        Fill::Constant(_) => RowFill::Constant,
                    };
                    b = b.rows(rule, (node.nb.b - node.nb.t + 1) as u32, move |args| kk.row_entry(args));
                }
                None => b = b.fusable(),
            }
        }
        None => {
            let kk = k.clone();
            b = b.process(move |p| kk.process(p));
        }
    }
    let kernel = b.add()?;
    for p in 0..n {
        let (dir, ty) = if p == node.op.output_param() {
            (ParamDirection::Output, DataType::Image)
        } else if Some(p) == node.op.scalar_param() {
            (ParamDirection::Input, DataType::Scalar)
        } else {
            (ParamDirection::Input, DataType::Image)
        };
        kernel.add_parameter(p, dir, ty, ParamState::Required)?;
    }
    if let Some(t) = &node.tiling {
        if !node.nb.is_zero() {
            let nb = node.nb;
            kernel.set_attribute(KernelAttribute::InputNeighborhood(Neighborhood::new(nb.l, nb.r, nb.t, nb.b)))?;
        }
        kernel.set_attribute(KernelAttribute::OutputTileBlockSize(TileBlockSize {
            width: t.block.0,
            height: t.block.1,
        }))?;
        kernel.set_attribute(KernelAttribute::Border(t.kernel_border.mode()))?;
        if t.tile_memory > 0 {
            kernel.set_attribute(KernelAttribute::TileMemorySize(t.tile_memory))?;
        }
    }
    for h in &node.hints {
        kernel.alias_parameter_index_hint(h.a, h.b, h.kind)?;
    }
    kernel.finalize()?;
    Ok(kernel)
}

/// U8 images; two inputs of one size; the scalar a U8; the output U8 of the input's size
/// (transposed for Transpose).
fn validator(op: Op) -> impl Fn(&ValidateContext<'_>, &mut MetaFormats) -> Result<()> + Send + Sync + 'static {
    move |v, metas| {
        let a = v.expect_image_format(0, ImageFormat::U8)?;
        let (w, h) = (a.width(), a.height());
        if op.num_inputs() == 2 {
            let b = v.expect_image_format(1, ImageFormat::U8)?;
            if (b.width(), b.height()) != (w, h) {
                return Err(Error::new(ErrorKind::InvalidDimension, "the two inputs differ in size")
                    .at_parameter(1)
                    .expected_found(format!("{w}x{h}"), format!("{}x{}", b.width(), b.height())));
            }
        }
        if let Some(s) = op.scalar_param()
            && v.scalar(s)?.scalar_type() != ScalarType::Uint8
        {
            return Err(Error::new(ErrorKind::InvalidType, "the constant must be a U8 scalar").at_parameter(s));
        }
        let (ow, oh) = if op == Op::Transpose { (h, w) } else { (w, h) };
        metas.get(op.output_param())?.set_image(ImageFormat::U8, ow, oh)?;
        Ok(())
    }
}

impl K {
    fn hint(&self, a: u32) -> Option<&Hint> {
        self.hints.iter().find(|h| h.a == a)
    }

    fn user_error(&self, msg: String) -> Error {
        let _ = self.shared.violation(msg.clone());
        Error::new(ErrorKind::Failure, msg)
    }

    /// A plain user kernel's process.
    fn process(&self, p: &mut ProcessContext<'_>) -> Result<()> {
        self.counters.runs.fetch_add(1, SeqCst);
        pause(self.sleep_us, self.spin);
        for h in &self.hints {
            self.shared.saw(self.index, h.a, h.b, p.is_parameter_aliased(h.a, h.b));
        }
        // With a hint, odd nodes use the in-place view even when not aliased (it copies first).
        let try_in_place = |a: u32| {
            p.is_parameter_aliased(a, self.op.output_param()) || (self.hint(a).is_some() && self.index % 2 == 1)
        };
        let out = self.op.output_param();
        match self.op {
            Op::AddC | Op::Copy => {
                let c: u8 = if self.op == Op::AddC { p.scalar(1)?.get::<u8>()? } else { 0 };
                if try_in_place(0) {
                    let mut io = p.map_in_place::<u8>(0, out)?;
                    if c != 0 {
                        for y in 0..io.height() {
                            io.row_mut(y).iter_mut().for_each(|v| *v = v.wrapping_add(c));
                        }
                    }
                } else {
                    let (i, mut o) = p.map_pair::<u8, u8>(0, out)?;
                    for y in 0..i.height() {
                        o.row_mut(y).iter_mut().zip(i.row(y)).for_each(|(o, &v)| *o = v.wrapping_add(c));
                    }
                }
            }
            Op::Xor | Op::Avg => {
                let f = u8_op(self.op);
                let io = if p.is_parameter_aliased(0, 2) {
                    Some(0)
                } else if p.is_parameter_aliased(1, 2) {
                    Some(1)
                } else if self.index % 2 == 1 {
                    self.hints.first().map(|h| h.a)
                } else {
                    None
                };
                match io {
                    Some(io) => {
                        let other = p.image(1 - io)?;
                        let b = other.map::<u8>(other.full_rect(), 0)?;
                        let mut o = p.map_in_place::<u8>(io, 2)?;
                        for y in 0..o.height() {
                            o.row_mut(y).iter_mut().zip(b.row(y)).for_each(|(o, &v)| *o = f(*o, v));
                        }
                    }
                    None => {
                        let (ia, ib, io) = (p.image(0)?, p.image(1)?, p.image(2)?);
                        let a = ia.map::<u8>(ia.full_rect(), 0)?;
                        let b = ib.map::<u8>(ib.full_rect(), 0)?;
                        let mut o = io.map_mut::<u8>(io.full_rect(), 0)?;
                        for y in 0..o.height() {
                            let (ra, rb) = (a.row(y), b.row(y));
                            for (x, v) in o.row_mut(y).iter_mut().enumerate() {
                                *v = f(ra[x], rb[x]);
                            }
                        }
                    }
                }
            }
            Op::Transpose => {
                let square = self.out_w == self.out_h;
                if p.is_parameter_aliased(0, 1) || (square && try_in_place(0)) {
                    let mut io = p.map_in_place::<u8>(0, 1)?;
                    if io.width() != io.height() {
                        return Err(self.user_error(format!(
                            "{}: aliased a {}x{} transpose in place",
                            self.name,
                            io.width(),
                            io.height()
                        )));
                    }
                    for y in 0..io.height() {
                        for x in y + 1..io.width() {
                            let (a, b) = (io.row(y)[x as usize], io.row(x)[y as usize]);
                            io.row_mut(y)[x as usize] = b;
                            io.row_mut(x)[y as usize] = a;
                        }
                    }
                } else {
                    let (i, mut o) = p.map_pair::<u8, u8>(0, 1)?;
                    for y in 0..o.height() {
                        for (x, v) in o.row_mut(y).iter_mut().enumerate() {
                            *v = i.row(x as u32)[y as usize];
                        }
                    }
                }
            }
            Op::Stencil => {
                let (i, mut o) = p.map_pair::<u8, u8>(0, 1)?;
                let (w, h) = (i.width() as i64, i.height() as i64);
                let nb = self.nb;
                let mut row = vec![0u8; o.width() as usize];
                for y in 0..o.height() {
                    for (x, v) in row.iter_mut().enumerate() {
                        let mut sum = 0u8;
                        for dy in nb.t..=nb.b {
                            let sy = (y as i64 + dy as i64).clamp(0, h - 1) as u32;
                            let r = i.row(sy);
                            for dx in nb.l..=nb.r {
                                let sx = (x as i64 + dx as i64).clamp(0, w - 1) as usize;
                                sum = sum.wrapping_add(r[sx].wrapping_mul(weight(nb, dx, dy)));
                            }
                        }
                        *v = sum;
                    }
                    o.row_mut(y).copy_from_slice(&row);
                }
            }
        }
        Ok(())
    }

    /// A tiling function (`fast` or flexible). Run fused (issue 34), it is called on row chunks of
    /// the planned tiles (the same functions on the same pixels, each once per frame): every check
    /// here is per call and holds for a chunk as for a tile (inside the processed rectangle, fast
    /// chunks block-aligned, reads inside the image and the view's readable rectangle); the
    /// runner's per-frame count of pixels computed is unchanged.
    fn tile(&self, args: &mut TileArgs<'_>, fast: bool) -> std::result::Result<(), TileError> {
        let t = self.tiling.as_ref().expect("tiling node");
        let border = self.counters.border();
        let mut tiling = t.clone();
        tiling.node_border = Some(border);
        let (px0, py0, px1, py1) = processed(Some(&tiling), self.nb, self.out_w, self.out_h);
        let out = self.op.output_param() as usize;
        let aliased = |a: u32| args.context().is_parameter_aliased(a as usize, out);
        for h in &self.hints {
            self.shared.saw(self.index, h.a, h.b, aliased(h.a));
        }
        // Which input (if any) is taken in place.
        let in_place = match self.op {
            Op::AddC | Op::Copy => self.hint(0).map(|_| 0),
            Op::Xor | Op::Avg => {
                if aliased(0) {
                    Some(0)
                } else if aliased(1) {
                    Some(1)
                } else {
                    self.hints.first().map(|h| h.a)
                }
            }
            _ => None,
        };
        // Tile memory: of the promised size, and this call's own (filled with a stamp of the tile
        // once the tile is known, checked at the end).
        let tm_size = args.tile_memory_size();
        let stamp_of = |x: u32, y: u32| (self.index as u8).wrapping_mul(31) ^ (x as u8).wrapping_mul(7) ^ (y as u8);
        let fill = |args: &mut TileArgs<'_>, stamp: u8| {
            args.tile_memory().iter_mut().enumerate().for_each(|(i, b)| *b = stamp ^ i as u8);
        };

        let rect = |x: u32, y: u32, w: u32, h: u32| (x, y, w, h);
        let (mut tx, mut ty, mut tw, mut th) = (0, 0, 0, 0);
        let mut check = |r: (u32, u32, u32, u32)| -> std::result::Result<(), TileError> {
            (tx, ty, tw, th) = r;
            let (x, y, w, h) = r;
            if w == 0 || h == 0 {
                return Err(self.shared.violation(format!("{}: an empty tile {w}x{h} at ({x}, {y})", self.name)));
            }
            if x < px0 || y < py0 || x + w > px1 || y + h > py1 {
                return Err(self.shared.violation(format!(
                    "{}: {} function called on tile ({x}, {y}) {w}x{h}, outside the pixels the tiling tables \
                     let it compute [{px0}, {px1}) x [{py0}, {py1}) (border {border:?}, image {}x{})",
                    self.name,
                    if fast { "fast" } else { "flexible" },
                    self.out_w,
                    self.out_h
                )));
            }
            let (bw, bh) = t.block;
            if fast && (x % bw != 0 || y % bh != 0 || w % bw != 0 || h % bh != 0) {
                return Err(self.shared.violation(format!(
                    "{}: fast function called on tile ({x}, {y}) {w}x{h}, not aligned to the {bw}x{bh} block",
                    self.name
                )));
            }
            if fast && t.tile_memory > 0 {
                let want = t.tile_memory * ((w / bw) * (h / bh)) as usize;
                if tm_size != want {
                    return Err(self.shared.violation(format!(
                        "{}: tile memory of {tm_size} bytes for a {w}x{h} tile of {bw}x{bh} blocks, {} per block \
                         (want {want})",
                        self.name, t.tile_memory
                    )));
                }
            }
            if x <= px0 && px0 < x + w && y <= py0 && py0 < y + h {
                pause(self.sleep_us, self.spin);
            }
            Ok(())
        };

        match (self.op, in_place) {
            (Op::AddC | Op::Copy, Some(_)) => {
                let c: u8 = if self.op == Op::AddC { args.scalar(1)? } else { 0 };
                let mut io = args.in_place::<u8>(0, out)?;
                let r = io.rect();
                check(rect(r.start_x, r.start_y, io.width(), io.height()))?;
                fill(args, stamp_of(r.start_x, r.start_y));
                let dense = self.hints[0].kind == AliasKind::Dense;
                for y in 0..io.height() {
                    if dense {
                        match io.rows(y).expect("row") {
                            InPlaceRow::Same(row) => row.iter_mut().for_each(|v| *v = v.wrapping_add(c)),
                            InPlaceRow::Apart(i, o) => {
                                o.iter_mut().zip(i).for_each(|(o, &v)| *o = v.wrapping_add(c));
                            }
                        }
                    } else {
                        let row = io.row_mut(y).expect("row");
                        if c != 0 {
                            row.iter_mut().for_each(|v| *v = v.wrapping_add(c));
                        }
                    }
                }
            }
            (Op::Xor | Op::Avg, Some(a)) => {
                let f = u8_op(self.op);
                let other = args.input::<u8>(1 - a as usize)?;
                let mut io = args.in_place::<u8>(a as usize, out)?;
                let r = io.rect();
                check(rect(r.start_x, r.start_y, io.width(), io.height()))?;
                fill(args, stamp_of(r.start_x, r.start_y));
                for y in 0..io.height() {
                    let row = io.row_mut(y).expect("row");
                    for (x, v) in row.iter_mut().enumerate() {
                        let b = other.get(x as u32, y, 0, 0).ok_or_else(|| {
                            self.shared
                                .violation(format!("{}: input pixel ({x}, {y}) of the tile not readable", self.name))
                        })?;
                        *v = f(*v, b);
                    }
                }
            }
            _ => {
                let n_in = self.op.num_inputs();
                let ins: Vec<Tile<'_, u8>> = (0..n_in).map(|i| args.input::<u8>(i)).collect::<Result<_, _>>()?;
                let c: u8 = if self.op == Op::AddC { args.scalar(1)? } else { 0 };
                let mut o = args.output::<u8>(out)?;
                check(rect(o.x(), o.y(), o.width(), o.height()))?;
                fill(args, stamp_of(o.x(), o.y()));
                let (iw, ih) = (ins[0].image_width() as i64, ins[0].image_height() as i64);
                let nb = self.nb;
                let self_border = border == Border::SelfMode;
                let read = |t: &Tile<'_, u8>, x: u32, y: u32, dx: i32, dy: i32| -> std::result::Result<u8, TileError> {
                    let (ax, ay) = (t.x() as i64 + x as i64 + dx as i64, t.y() as i64 + y as i64 + dy as i64);
                    let (cx, cy) = (ax.clamp(0, iw - 1), ay.clamp(0, ih - 1));
                    if (fast || !self_border) && (cx, cy) != (ax, ay) {
                        return Err(self.shared.violation(format!(
                            "{}: {} function must read ({ax}, {ay}), outside the {iw}x{ih} image (border {border:?})",
                            self.name,
                            if fast { "fast" } else { "flexible" }
                        )));
                    }
                    let (ox, oy) = ((cx - ax) as i32 + dx, (cy - ay) as i32 + dy);
                    t.get(x, y, ox, oy).ok_or_else(|| {
                        self.shared.violation(format!(
                            "{}: pixel ({cx}, {cy}) not readable from tile ({}, {}) (readable {:?})",
                            self.name,
                            t.x(),
                            t.y(),
                            t.readable()
                        ))
                    })
                };
                if let (Op::Stencil, Some(fill), false) = (self.op, t.rows, fast) {
                    // A row kernel's flexible function: the neighborhood through `Tile::for_rows`.
                    let input = &ins[0];
                    let mut put = |y: u32, x: u32, vals: &[u8]| {
                        for (i, &v) in vals.iter().enumerate() {
                            o.set(x + i as u32, y, v);
                        }
                    };
                    dispatch_rows(nb, |h| match h {
                        1 => tile_rows::<1>(input, nb, fill, &mut put),
                        2 => tile_rows::<2>(input, nb, fill, &mut put),
                        3 => tile_rows::<3>(input, nb, fill, &mut put),
                        4 => tile_rows::<4>(input, nb, fill, &mut put),
                        _ => tile_rows::<5>(input, nb, fill, &mut put),
                    })
                    .map_err(|e| self.shared.violation(format!("{}: Tile::for_rows failed: {e}", self.name)))?;
                } else {
                    for y in 0..o.height() {
                        for x in 0..o.width() {
                            let v = match self.op {
                                Op::AddC => read(&ins[0], x, y, 0, 0)?.wrapping_add(c),
                                Op::Copy => read(&ins[0], x, y, 0, 0)?,
                                Op::Xor | Op::Avg => {
                                    u8_op(self.op)(read(&ins[0], x, y, 0, 0)?, read(&ins[1], x, y, 0, 0)?)
                                }
                                Op::Stencil => {
                                    let mut sum = 0u8;
                                    for dy in nb.t..=nb.b {
                                        for dx in nb.l..=nb.r {
                                            let p = read(&ins[0], x, y, dx, dy)?;
                                            sum = sum.wrapping_add(p.wrapping_mul(weight(nb, dx, dy)));
                                        }
                                    }
                                    sum
                                }
                                Op::Transpose => unreachable!("transpose is a user kernel"),
                            };
                            o.set(x, y, v);
                        }
                    }
                }
            }
        }
        self.counters.add_rows(self.out_h, ty, th, tw);
        let stamp = stamp_of(tx, ty);
        let mem = args.tile_memory();
        if mem.len() != tm_size || mem.iter().enumerate().any(|(i, &b)| b != stamp ^ i as u8) {
            return Err(self.shared.violation(format!(
                "{}: tile memory changed under the tile function (shared with another tile?)",
                self.name
            )));
        }
        Ok(())
    }
}

/// The SDK's fill of a spec fill.
fn border_fill(fill: Fill) -> BorderFill<u8> {
    match fill {
        Fill::Reflect101 => BorderFill::Reflect101,
        Fill::Replicate => BorderFill::Replicate,
        Fill::Constant(c) => BorderFill::Constant(c),
    }
}

/// The stencil of one piece of output row from the `N` rows of its neighborhood (each starting at
/// the piece's column plus `nb.l`, `out.len() + nb.r - nb.l` pixels).
fn stencil_piece<const N: usize>(nb: Nb, rows: [&[u8]; N], out: &mut [u8]) {
    for (i, v) in out.iter_mut().enumerate() {
        let mut sum = 0u8;
        for (k, row) in rows.iter().enumerate() {
            for j in 0..=(nb.r - nb.l) as usize {
                let w = weight(nb, nb.l + j as i32, nb.t + k as i32);
                sum = sum.wrapping_add(row[i + j].wrapping_mul(w));
            }
        }
        *v = sum;
    }
}

/// Call `f` with the neighborhood's height (1 to 5 rows: the generator's neighborhoods).
fn dispatch_rows(nb: Nb, f: impl FnOnce(i32) -> Result<(), TileError>) -> Result<(), TileError> {
    let h = nb.b - nb.t + 1;
    if !(1..=5).contains(&h) {
        return Err(TileError::new(Status::Failure, format!("a neighborhood {h} rows high")));
    }
    f(h)
}

/// A row kernel's flexible function over tile `input`: `put(y, x, values)` for each piece.
fn tile_rows<const N: usize>(
    input: &Tile<'_, u8>,
    nb: Nb,
    fill: Fill,
    put: &mut impl FnMut(u32, u32, &[u8]),
) -> Result<(), TileError> {
    let mut buf = Vec::new();
    input.for_rows::<N>(border_fill(fill), |y, x, n, rows| {
        buf.clear();
        buf.resize(n as usize, 0);
        stencil_piece::<N>(nb, rows, &mut buf);
        put(y, x, &buf);
    })
}

/// A row kernel's row entry over `region` (`vx_plugin_abi::tile::for_rows_from_table`).
fn table_rows<const N: usize>(
    input: &RowTable<'_, u8>,
    output: &mut RowSink<'_, u8>,
    region: RowRegion,
    nb: Nb,
    fill: Fill,
) -> Result<(), TileError> {
    let nbh = Neighborhood::new(nb.l, nb.r, nb.t, nb.b);
    for_rows_from_table::<u8, u8, N>(input, output, region, nbh, border_fill(fill), |rows, out| {
        stencil_piece::<N>(nb, rows, out)
    })
}

impl K {
    /// A row kernel's row entry (fused execution): the output rows of `args.region()`, checked
    /// inside the rectangle the tiling tables let the node compute and inside its image, counted
    /// like tiles' pixels.
    fn row_entry(&self, args: &RowArgs<'_>) -> std::result::Result<(), TileError> {
        let t = self.tiling.as_ref().expect("tiling node");
        let fill = t.rows.expect("a row kernel");
        let border = self.counters.border();
        let mut tiling = t.clone();
        tiling.node_border = Some(border);
        let (px0, py0, px1, py1) = processed(Some(&tiling), self.nb, self.out_w, self.out_h);
        let r = args.region();
        let (y1, x1) = (r.y0 + r.count, r.x1);
        if (r.image_width, r.image_height) != (self.out_w, self.out_h) {
            return Err(self.shared.violation(format!(
                "{}: row entry for a {}x{} image, the node's is {}x{}",
                self.name, r.image_width, r.image_height, self.out_w, self.out_h
            )));
        }
        if r.count == 0 || r.x0 >= x1 || r.x0 < px0 || r.y0 < py0 || x1 > px1 || y1 > py1 {
            return Err(self.shared.violation(format!(
                "{}: row entry called on rows [{}, {y1}) x columns [{}, {x1}), outside the pixels the tiling \
                 tables let it compute [{px0}, {px1}) x [{py0}, {py1}) (border {border:?}), or empty",
                self.name, r.y0, r.x0
            )));
        }
        if r.x0 <= px0 && px0 < x1 && r.y0 <= py0 && py0 < y1 {
            pause(self.sleep_us, self.spin);
        }
        let input = args.input::<u8>(0)?;
        let mut output = args.output::<u8>(1)?;
        let nb = self.nb;
        dispatch_rows(nb, |h| match h {
            1 => table_rows::<1>(&input, &mut output, r, nb, fill),
            2 => table_rows::<2>(&input, &mut output, r, nb, fill),
            3 => table_rows::<3>(&input, &mut output, r, nb, fill),
            4 => table_rows::<4>(&input, &mut output, r, nb, fill),
            _ => table_rows::<5>(&input, &mut output, r, nb, fill),
        })
        .map_err(|e| self.shared.violation(format!("{}: row entry over {r:?} failed: {e}", self.name)))?;
        self.counters.add_rows(self.out_h, r.y0, r.count, x1 - r.x0);
        self.shared.row_calls.fetch_add(1, SeqCst);
        Ok(())
    }
}
