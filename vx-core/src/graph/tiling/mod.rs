//! Tiling nodes: at verify, the checks of the tiling extension (single-plane images of one size,
//! `Self_` needs a flexible function), the [`TilePlan`](crate::graph::tiling::plan::TilePlan) and the
//! per-worker tile-memory arenas; at process, the tiles shared out between the calling thread and the
//! context's crew helpers when the cost model says it pays (`split.rs`; otherwise in order on the
//! calling thread), each with its `repr(C)` descriptors built on the stack.

use std::hash::{Hash, Hasher};
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use vx_plugin_abi::{
    BorderMode, MAX_TILING_PARAMS, Neighborhood, Rect, TILE_ALIASED, TileArgs, TileBlockSize, TileDesc, TileParam,
    TileParamKind, tile_run_threads_flags,
};

use crate::data::buffer::RawBuf;
use crate::data::image::PlaneLease;
use crate::data::reference::Reference;
use crate::data::types::Direction;
use crate::error::{Error, ErrorKind, Result};
use crate::graph::{ActiveGuard, NodeSlot};
use crate::kernel::callbacks::TilingFn;
use crate::kernel::record::FinalKernel;
use crate::shared::ContextShared;
use crate::shared::Resources;
use crate::shared::crew::Crew;
pub(super) mod claims;
pub mod plan;
pub(super) mod split;

use crate::support::hash::FastHasher;
use crate::support::sync::lock;
use crate::support::time::ns_of;
use crate::support::unwind::catch_panic;
use plan::{PlannedTile, TileFunction, TileRequest, TilingPolicy, plan};

/// What a verified tiling node keeps for process.
pub(crate) struct TilingState {
    pub(super) tiles: Vec<PlannedTile>,
    /// The output pixels the tiles cover (what the node writes): its outputs' valid rectangles lie
    /// inside it (pass `valid regions`).
    pub(super) processed: Rect,
    /// Pixels left unprocessed only because the kernel has no flexible function: (safe region,
    /// aligned region), for verify's warning.
    pub(super) lost: Option<(Rect, Rect)>,
    /// The output size.
    pub(super) size: (u32, u32),
    /// One tile-memory arena per pool thread plus one for the calling thread, each as large as the
    /// largest tile needs.
    arenas: Vec<Mutex<RawBuf>>,
    pub(super) tile_memory_size: usize,
    block: TileBlockSize,
    neighborhood: Neighborhood,
    /// Bit `i`: parameter `i` shares its buffer with another (buffer aliasing; its tile
    /// descriptors carry `TILE_ALIASED`).
    aliased: u32,
    /// Aliased (input, output) pairs: the input is not leased, it is the output's buffer.
    alias_pairs: Vec<(u32, u32)>,
    /// Whether a run shares its tiles with the crew (the cost model).
    split: split::Split,
    /// What the cost model's estimates are estimates of.
    pub(in crate::graph) work: split::WorkKey,
}

impl TilingState {
    /// Take over `old`'s cost-model estimates when it planned the same work (same kernel, images
    /// and tile plan): what a re-verification that changed nothing of this node keeps.
    pub(super) fn inherit(&self, old: &TilingState) {
        if self.work == old.work && self.tiles == old.tiles {
            self.split.inherit(&old.split);
        }
    }
}

/// The [`split::WorkKey`] of node `s` planned at `size`: its kernel, the size, block,
/// neighborhood and border, and each parameter's image format or scalar type.
pub(super) fn work_key(s: &NodeSlot, block: TileBlockSize, size: (u32, u32)) -> split::WorkKey {
    let mut shape = FastHasher::default();
    (size, block, s.neighborhood, s.border).hash(&mut shape);
    for r in &s.params {
        let r = r.as_ref();
        (
            r.and_then(Reference::as_image).map(|i| i.format()),
            r.and_then(Reference::as_scalar).map(|v| v.scalar_type()),
        )
            .hash(&mut shape);
    }
    split::WorkKey::new(&s.kernel, shape.finish())
}

/// Check a tiling node and plan its tiles (called at verify, after its output metas are applied).
pub(super) fn prepare(
    s: &NodeSlot,
    fin: &FinalKernel,
    has_fast: bool,
    has_flexible: bool,
    policy: &TilingPolicy,
    threads: usize,
    resources: &Arc<Resources>,
) -> Result<TilingState> {
    if s.border == BorderMode::Self_ && !has_flexible {
        return Err(Error::new(
            ErrorKind::NotSupported,
            "border mode Self_ requires a flexible function, and this tiling kernel has only a fast one",
        )
        .expected_found("border Undefined, or a flexible function", "border Self_ with a fast function only"));
    }
    let mut size: Option<(u32, u32, u32)> = None;
    let (mut in_bpp, mut out_bpp) = (0usize, 0usize);
    let mut has_output = false;
    for (i, r) in s.params.iter().enumerate() {
        let Some(img) = r.as_ref().and_then(Reference::as_image) else { continue };
        let f = img.format();
        if f.plane_count() != 1 {
            return Err(Error::new(ErrorKind::InvalidFormat, "tiling kernels take single-plane images only")
                .at_parameter(i as u32)
                .on_object(&img.name())
                .expected_found("a single-plane format", f));
        }
        let bpp = f.planes()[0].bytes_per_element as usize;
        if fin.params[i].direction == Direction::Output {
            has_output = true;
            out_bpp += bpp;
        } else {
            in_bpp += bpp;
        }
        match size {
            None => size = Some((img.width(), img.height(), i as u32)),
            Some((w, h, first)) if (w, h) != (img.width(), img.height()) => {
                return Err(Error::new(
                    ErrorKind::InvalidDimension,
                    "the images of a tiling node must all have the same size",
                )
                .at_parameter(i as u32)
                .on_object(&img.name())
                .expected_found(
                    format!("{w}x{h} (like parameter {first})"),
                    format!("{}x{}", img.width(), img.height()),
                ));
            }
            Some(_) => {}
        }
    }
    let Some((width, height, _)) = size.filter(|_| has_output) else {
        return Err(Error::new(ErrorKind::InvalidParameters, "a tiling node needs at least one output image"));
    };
    let req = TileRequest {
        width,
        height,
        block: fin.attrs.block_size,
        neighborhood: s.neighborhood,
        border: s.border,
        has_fast,
        has_flexible,
        input_bytes_per_pixel: in_bpp,
        output_bytes_per_pixel: out_bpp,
        threads,
    };
    let tiles = plan(&req, policy).tiles;
    let processed = plan::processed(&req);
    let lost = plan::unprocessed_for_lack_of_flexible(&req);
    let tile_memory_size = fin.attrs.tile_memory_size;
    let most_blocks = tiles.iter().map(|t| t.blocks).max().unwrap_or(0);
    let arena_bytes =
        (tile_memory_size as u64).checked_mul(most_blocks).filter(|b| *b <= isize::MAX as u64).ok_or_else(|| {
            Error::new(ErrorKind::NoMemory, "the tile memory of the largest tile overflows the address space")
                .found(format!("{tile_memory_size} bytes x {most_blocks} blocks"))
        })? as usize;
    let arenas = if arena_bytes == 0 {
        Vec::new()
    } else {
        // One per pool worker (by worker index) and one for a calling thread outside the pool (the
        // last), so the caller and worker 0 never share one and tiles with memory run in parallel.
        (0..=threads.max(1)).map(|_| RawBuf::new(arena_bytes, resources).map(Mutex::new)).collect::<Result<_>>()?
    };
    let aliased = s.aliased.iter().fold(0u32, |m, &(a, b)| m | 1 << a | 1 << b);
    let possible = threads > 1 && tiles.len() > 1 && width as usize * height as usize >= policy.min_parallel_pixels;
    tracing::debug!(node = %s.name, tiles = tiles.len(), arena_bytes, splittable = possible, "tiling node planned");
    Ok(TilingState {
        tiles,
        processed,
        lost,
        size: (width, height),
        arenas,
        tile_memory_size,
        block: fin.attrs.block_size,
        neighborhood: s.neighborhood,
        aliased,
        alias_pairs: s.aliased.clone(),
        split: split::Split::new(possible, policy.split_by_cost, threads),
        work: work_key(s, fin.attrs.block_size, (width, height)),
    })
}

/// A value parameter (a scalar) as tile functions and row entries receive it: its bytes and type
/// code, read now (`None`: `r` is not one).
pub(super) fn value_of(r: &Reference) -> Option<([u8; 8], u32)> {
    let v = r.as_scalar()?.read();
    Some((v.to_ne_bytes(), v.scalar_type().code() as u32))
}

/// The tile parameter of a value read by [`value_of`] (pointing at its bytes).
pub(super) fn value_param(value: &([u8; 8], u32)) -> TileParam {
    TileParam { kind: TileParamKind::Scalar, type_code: value.1, ptr: value.0.as_ptr() as *mut _ }
}

/// Plain geometry of one image parameter for the duration of a node execution.
#[derive(Clone, Copy)]
struct ImageGeom {
    base: *mut u8,
    stride_x: i32,
    stride_y: i32,
    format: u32,
    width: u32,
    height: u32,
}

struct TileRun<'a> {
    n: usize,
    kinds: [(TileParamKind, u32); MAX_TILING_PARAMS],
    images: [Option<ImageGeom>; MAX_TILING_PARAMS],
    scalars: [[u8; 8]; MAX_TILING_PARAMS],
    state: &'a TilingState,
    fast: Option<&'a TilingFn>,
    flexible: Option<&'a TilingFn>,
}

// SAFETY: the raw image pointers are shared by the tiles of one node execution; each tile writes
// only its own (disjoint) output rectangle and reads inputs nobody writes during the node (or, when
// aliased, is denied slices by the views), and the leases keep the buffers mapped until every tile
// has returned.
unsafe impl Sync for TileRun<'_> {}

/// Run every tile of a verified tiling node, alone or with the crew, for a node run that started
/// at `start`; returns when it ended if it read the clock at the end (the caller's end time then,
/// one clock read less).
#[allow(clippy::too_many_arguments)]
pub(super) fn run(
    shared: &ContextShared,
    graph: u64,
    s: &NodeSlot,
    params: &[Option<Reference>],
    fin: &FinalKernel,
    fast: Option<&TilingFn>,
    flexible: Option<&TilingFn>,
    start: Instant,
) -> Result<Option<Instant>> {
    let state =
        s.tiling.as_ref().ok_or_else(|| Error::new(ErrorKind::InvalidNode, "the tiling node has no tile plan"))?;
    let n = params.len();
    let mut leases: [Option<PlaneLease<'_>>; MAX_TILING_PARAMS] = Default::default();
    let mut run = TileRun {
        n,
        kinds: [(TileParamKind::Absent, 0); MAX_TILING_PARAMS],
        images: [None; MAX_TILING_PARAMS],
        scalars: [[0; 8]; MAX_TILING_PARAMS],
        state,
        fast,
        flexible,
    };
    // Outputs first: an aliased input is then given its output's lease (one writable mapping of
    // the shared buffer, not a reader and a writer that would exclude each other).
    let outputs_first = (0..params.len())
        .filter(|&i| fin.params[i].direction == Direction::Output)
        .chain((0..params.len()).filter(|&i| fin.params[i].direction != Direction::Output));
    for i in outputs_first {
        let aliased_output = state.alias_pairs.iter().find(|p| p.0 as usize == i).map(|p| p.1 as usize);
        match (&params[i], aliased_output) {
            (None, _) => {}
            (Some(Reference::Image(_)), Some(o)) => {
                let Some(g) = run.images[o] else {
                    return Err(
                        Error::new(ErrorKind::InvalidNode, "the aliased output has no mapping").at_parameter(i as u32)
                    );
                };
                run.images[i] = Some(g);
                run.kinds[i] = (TileParamKind::InputImage, g.format);
            }
            (Some(Reference::Image(img)), None) => {
                let write = fin.params[i].direction == Direction::Output;
                let lease = img.lease_plane0(write).map_err(|e| e.at_parameter(i as u32))?;
                run.images[i] = Some(ImageGeom {
                    base: lease.base,
                    stride_x: lease.stride_x as i32,
                    stride_y: lease.stride_y as i32,
                    format: lease.format.fourcc(),
                    width: lease.width,
                    height: lease.height,
                });
                run.kinds[i] =
                    (if write { TileParamKind::OutputImage } else { TileParamKind::InputImage }, lease.format.fourcc());
                leases[i] = Some(lease);
            }
            (Some(Reference::Scalar(sc)), _) => {
                let v = sc.read();
                run.scalars[i] = v.to_ne_bytes();
                run.kinds[i] = (TileParamKind::Scalar, v.scalar_type().code() as u32);
            }
            (Some(other), _) => {
                return Err(Error::new(ErrorKind::InvalidType, "tiling kernels take images and scalars only")
                    .at_parameter(i as u32)
                    .found(other.data_type()));
            }
        }
    }
    // Alone: the tiles in order on the calling thread. Together: the calling thread and the
    // `threads - 1` crew helpers pull tiles from a shared counter; the caller starts at once and
    // helpers join as they wake, so a slow wake-up costs little. The crew allocates nothing per use
    // (see `shared::crew`). Which one is the cost model's choice (`split.rs`).
    let (warm_join, cold_join, warm) = shared.crew.join_estimate();
    let joining = split::Joining { warm: warm_join, cold: cold_join, helpers_warm: warm };
    // The node's start stands for "now" (the model's stream check needs no finer time).
    let result = match state.split.decide(joining, ns_of(start)) {
        split::Decision::Together => {
            let claims = claims::TileClaims::new(state.tiles.len(), shared.threads);
            let busy_ns = AtomicU64::new(0);
            let failure: Mutex<Option<Error>> = Mutex::new(None);
            // `invited`: the threads the crew asked to share the tiles (1 when it runs them on the
            // caller alone), no more than there are tiles: what the kernel is told.
            let work = |invited: usize| {
                let t0 = Instant::now();
                let threads = invited.min(state.tiles.len()).max(1);
                // The caller's home range is the first, helper i's the (i + 1)th (`claims.rs`).
                let home = Crew::current_index().map_or(0, |i| i + 1);
                while let Some(tile) = claims.next(home) {
                    if let Err(e) = run_tile(&run, &state.tiles[tile], threads) {
                        claims.stop();
                        lock(&failure).get_or_insert(e);
                    }
                }
                busy_ns.fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
            };
            let wall = Instant::now();
            shared.crew.run_counted(shared.threads - 1, &|invited| {
                // Helpers run the graph's code too: a tile function re-entering its graph gets an
                // error there as well, not a deadlock.
                let _active = ActiveGuard::enter(graph);
                work(invited)
            });
            let end = Instant::now();
            let wall = end.saturating_duration_since(wall);
            state.split.note_together(Duration::from_nanos(busy_ns.into_inner()), wall, warm, ns_of(end));
            match failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
                Some(e) => Err(e),
                None => Ok(Some(end)),
            }
        }
        split::Decision::Alone { measure: false } => {
            state.tiles.iter().try_for_each(|t| run_tile(&run, t, 1)).map(|()| None)
        }
        split::Decision::Alone { measure: true } => {
            let t0 = Instant::now();
            let r = state.tiles.iter().try_for_each(|t| run_tile(&run, t, 1));
            let end = Instant::now();
            state.split.note_alone(end.saturating_duration_since(t0), ns_of(end));
            r.map(|()| Some(end))
        }
    };
    // The leases drop here, after every tile returned (dropped in place: `drop(leases)` would
    // copy the array first).
    result
}

/// A descriptor of nothing (the unused entries of a call's array).
pub(super) const EMPTY_DESC: TileDesc = TileDesc {
    base: std::ptr::null_mut(),
    format: 0,
    tile_x: 0,
    tile_y: 0,
    width: 0,
    height: 0,
    stride_x: 0,
    stride_y: 0,
    block: TileBlockSize { width: 1, height: 1 },
    neighborhood: Neighborhood { left: 0, right: 0, top: 0, bottom: 0 },
    image_width: 0,
    image_height: 0,
    readable: Rect { start_x: 0, start_y: 0, end_x: 0, end_y: 0 },
    flags: 0,
};

/// `tile` grown by `nb`, clipped to the `w`×`h` image: an input's readable rectangle.
pub(super) fn grow(tile: Rect, nb: Neighborhood, w: u32, h: u32) -> Rect {
    let c = |v: i64, max: u32| v.clamp(0, max as i64) as u32;
    Rect::new(
        c(tile.start_x as i64 + nb.left as i64, w),
        c(tile.start_y as i64 + nb.top as i64, h),
        c(tile.end_x as i64 + nb.right as i64, w),
        c(tile.end_y as i64 + nb.bottom as i64, h),
    )
}

/// Run one tile; `threads`: how many threads share this run's tiles (told to the kernel in the
/// descriptors' flags, [`tile_run_threads_flags`]).
fn run_tile(run: &TileRun<'_>, tile: &PlannedTile, threads: usize) -> Result<()> {
    let st = run.state;
    let run_threads = tile_run_threads_flags(threads);
    // Only the image parameters' descriptors are written, and only theirs are pointed to (no
    // copy of sixteen empty descriptors per tile).
    let mut descs = [const { MaybeUninit::<TileDesc>::uninit() }; MAX_TILING_PARAMS];
    for (i, ((desc, image), (kind, _))) in descs.iter_mut().zip(&run.images).zip(&run.kinds).take(run.n).enumerate() {
        let Some(g) = image else { continue };
        let input = *kind == TileParamKind::InputImage;
        desc.write(TileDesc {
            base: g.base,
            format: g.format,
            tile_x: tile.rect.start_x,
            tile_y: tile.rect.start_y,
            width: tile.rect.width(),
            height: tile.rect.height(),
            stride_x: g.stride_x,
            stride_y: g.stride_y,
            block: st.block,
            neighborhood: st.neighborhood,
            image_width: g.width,
            image_height: g.height,
            readable: if input { grow(tile.rect, st.neighborhood, g.width, g.height) } else { tile.rect },
            flags: run_threads | if st.aliased & (1 << i) != 0 { TILE_ALIASED } else { 0 },
        });
    }
    let mut params = [TileParam::ABSENT; MAX_TILING_PARAMS];
    for i in 0..run.n {
        let (kind, type_code) = run.kinds[i];
        let ptr = match (kind, run.images[i].is_some()) {
            (TileParamKind::Scalar, _) => run.scalars[i].as_ptr() as *mut _,
            // An image parameter: its descriptor was written above (exactly where `images[i]` is set).
            (TileParamKind::InputImage | TileParamKind::OutputImage, true) => descs[i].as_ptr() as *mut _,
            _ => std::ptr::null_mut(),
        };
        params[i] = TileParam { kind, type_code, ptr };
    }
    let function = match tile.function {
        TileFunction::Fast => run.fast,
        TileFunction::Flexible => run.flexible,
    }
    .ok_or_else(|| Error::new(ErrorKind::InvalidNode, "the tile plan names a function the kernel lacks"))?;

    let mem_size = st.tile_memory_size * tile.blocks as usize;
    let mut arena = match mem_size {
        0 => None,
        _ => {
            let caller = st.arenas.len() - 1;
            let idx = Crew::current_index().map_or(caller, |w| w % caller);
            Some(lock(&st.arenas[idx]))
        }
    };
    let mem_ptr = arena.as_mut().map_or(std::ptr::null_mut(), |a| a.as_mut_slice().as_mut_ptr());
    // SAFETY: every image parameter points at a descriptor written above (no uninitialized one
    // is pointed to); descriptors describe the leased image buffers (mapped until `run` returns); input
    // `readable` rectangles are inside their images and not written during the node unless flagged
    // aliased; output tiles of concurrently running calls are disjoint (the plan's tiles are); scalar
    // pointers point to their value bytes; the arena is locked for this call and holds at least
    // mem_size bytes (sized for the plan's largest tile).
    let mut args = unsafe { TileArgs::new(&params[..run.n], mem_ptr, mem_size) };
    let outcome = catch_panic(|| function(&mut args));
    drop(arena);
    let which = match tile.function {
        TileFunction::Fast => "fast",
        TileFunction::Flexible => "flexible",
    };
    match outcome {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(Error::new(
            ErrorKind::from_status(e.status),
            format!("{} (tile {}, {which} function)", e.message, tile.rect),
        )),
        Err(payload) => Err(Error::new(
            ErrorKind::Failure,
            format!(
                "the {which} function panicked on tile {}: {}",
                tile.rect,
                crate::support::unwind::panic_message(&*payload)
            ),
        )),
    }
}
