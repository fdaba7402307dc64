//! Running a fused group ([`run_group`]): its outside images mapped once by the calling thread,
//! then the step table — of the whole image on the calling thread, or of bands shared with the
//! crew's helpers when the cost model says it pays (each thread with its own rings, recomputing
//! the few rows where bands meet) —, each step calling every member on its rows — a row kernel through its row
//! entry with tables of row pointers (into rings or images), any other member through tile
//! descriptors whose base addresses the ring slots of its rows (calls split where a ring wraps).
//! A materialized image (between members, but keeping its buffer) is mapped like an outside image
//! and read, like a ring, only in rows this band has written. Rows a writer never processes
//! (border `Undefined`, fast-only remainders) are undefined in both modes: a row table gets the
//! group's row of zeros for them (a materialized image's own row), a descriptor the ring slot.
//! Pointer tables and descriptors are built in preallocated pools and on the stack: no allocation.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use vx_plugin_abi::module_abi::{RowSinkDesc, RowSourceDesc};
use vx_plugin_abi::{
    MAX_TILING_PARAMS, Rect, RowArgs, RowRegion, Status, TILE_LINE_BUFFER, TileArgs, TileDesc, TileError, TileParam,
    TileParamKind, tile_run_threads_flags,
};

use super::group::{FusedGroup, GroupScratch, Member, ParamRole};
use super::plan::{BandPlan, MemberCalls, row_pieces, source_hull};
use crate::data::buffer::RawBuf;
use crate::data::image::PlaneLease;
use crate::data::reference::Reference;
use crate::error::{Error, ErrorKind, Result};
use crate::graph::tiling::claims::TileClaims;
use crate::graph::tiling::plan::TileFunction;
use crate::graph::tiling::{EMPTY_DESC, grow, split, value_of, value_param};
use crate::graph::{ActiveGuard, GraphBody, NodeSlot};
use crate::kernel::callbacks::KernelFunctions;
use crate::shared::ContextShared;
use crate::shared::crew::Crew;
use crate::support::sync::lock;
use crate::support::time::ns_of;
use crate::support::unwind::{catch_panic, panic_message};

use super::MAX_OUTSIDE_IMAGES;

/// An outside image mapped for the run.
#[derive(Clone, Copy)]
struct Mapped {
    base: *mut u8,
    stride_y: usize,
    stride_x: usize,
    fourcc: u32,
}

/// Each node's parameters as the running frame sees them (by node index): the nodes' own, or a
/// pipelined frame slot's table.
pub(super) type FrameParams<'p> = &'p dyn Fn(usize) -> &'p [Option<Reference>];

/// Run group `g` of `body` once, its members seeing `params`; every member's statistics record the
/// group's time.
pub(crate) fn run_group(
    shared: &ContextShared,
    graph: u64,
    body: &GraphBody,
    g: &FusedGroup,
    params: FrameParams<'_>,
) -> Result<()> {
    let _active = ActiveGuard::enter(graph);
    let t0 = Instant::now();
    let node = |n: usize| body.nodes[n].as_ref().expect("group members are live");
    let result = run(shared, graph, body, g, params, t0);
    let took = t0.elapsed();
    let status = match &result {
        Ok(()) => Status::Success,
        Err(e) => e.status(),
    };
    for m in &g.members {
        node(m.node).stats.record(status, took);
    }
    result
}

fn run(
    shared: &ContextShared,
    graph: u64,
    body: &GraphBody,
    g: &FusedGroup,
    params: FrameParams<'_>,
    start: Instant,
) -> Result<()> {
    let node = |n: usize| body.nodes[n].as_ref().expect("group members are live");
    let mut leases: [Option<PlaneLease<'_>>; MAX_OUTSIDE_IMAGES] = std::array::from_fn(|_| None);
    let mut mapped: [Option<Mapped>; MAX_OUTSIDE_IMAGES] = [None; MAX_OUTSIDE_IMAGES];
    // Outputs first, then inputs (an image is written by one member; read leases share).
    for outputs in [true, false] {
        for m in &g.members {
            let s = node(m.node);
            for (i, role) in m.params.iter().enumerate() {
                let Some((slot, output)) = role.mapped_slot() else { continue };
                if output != outputs || leases[slot].is_some() {
                    continue;
                }
                let Some(img) = params(m.node)[i].as_ref().and_then(Reference::as_image) else {
                    return Err(member_error(s, Error::new(ErrorKind::InvalidNode, "a fused member lost its image"))
                        .at_parameter(i as u32));
                };
                let lease = img.lease_plane0(output).map_err(|e| member_error(s, e.at_parameter(i as u32)))?;
                mapped[slot] = Some(Mapped {
                    base: lease.base,
                    stride_y: lease.stride_y,
                    stride_x: lease.stride_x,
                    fourcc: lease.format.fourcc(),
                });
                leases[slot] = Some(lease);
            }
        }
    }
    let mut scalars = lock(&g.scalars);
    for (mi, m) in g.members.iter().enumerate() {
        let s = node(m.node);
        for (i, role) in m.params.iter().enumerate() {
            if *role == ParamRole::Value {
                let Some(v) = params(m.node)[i].as_ref().and_then(value_of) else {
                    return Err(member_error(s, Error::new(ErrorKind::InvalidNode, "a fused member lost its value")));
                };
                scalars[mi * MAX_TILING_PARAMS + i] = v;
            }
        }
    }
    // The calling thread's set is the last; crew helper `i`'s is `sets[i]` (one set: everyone's).
    let set_of = |index: Option<usize>| index.filter(|&i| i + 1 < g.sets.len()).unwrap_or(g.sets.len() - 1);
    let (warm, cold, helpers_warm) = shared.crew.join_estimate();
    let decision = if g.bands.is_empty() {
        split::Decision::Alone { measure: false }
    } else {
        // The group's start stands for "now" (the model's stream check needs no finer time).
        g.split.decide(split::Joining { warm, cold, helpers_warm }, ns_of(start))
    };
    let run = GroupRun { g, body, mapped: &mapped, scalars: &scalars, run_threads: tile_run_threads_flags(1) };
    let result = match decision {
        split::Decision::Alone { measure } => {
            let t0 = Instant::now();
            let mut set = lock(&g.sets[set_of(Crew::current_index())]);
            let r = run.band(&mut set, &g.whole);
            if measure {
                let end = Instant::now();
                g.split.note_alone(end.saturating_duration_since(t0), ns_of(end));
            }
            r
        }
        split::Decision::Together => {
            let claims = TileClaims::new(g.bands.len(), shared.threads);
            let busy_ns = AtomicU64::new(0);
            let failure: Mutex<Option<Error>> = Mutex::new(None);
            let wall = Instant::now();
            // `invited`: the threads the crew asked to share the bands (1 when it runs them on the
            // caller alone), no more than there are bands: what the members are told.
            shared.crew.run_counted(shared.threads - 1, &|invited| {
                let run = run.with_threads(invited.min(g.bands.len()));
                let _active = ActiveGuard::enter(graph);
                let t0 = Instant::now();
                let index = Crew::current_index();
                let home = index.map_or(0, |i| i + 1);
                let mut set = lock(&g.sets[set_of(index)]);
                while let Some(b) = claims.next(home) {
                    if let Err(e) = run.band(&mut set, &g.bands[b]) {
                        claims.stop();
                        lock(&failure).get_or_insert(e);
                    }
                }
                busy_ns.fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
            });
            let end = Instant::now();
            let wall = end.saturating_duration_since(wall);
            g.split.note_together(Duration::from_nanos(busy_ns.into_inner()), wall, helpers_warm, ns_of(end));
            match failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
                Some(e) => Err(e),
                None => Ok(()),
            }
        }
    };
    drop(scalars);
    // The leases drop here, after every band returned (dropped in place: `drop(leases)` would
    // copy the array first).
    result
}

fn member_error(s: &NodeSlot, e: Error) -> Error {
    e.in_kernel(&s.kernel.name).in_node(&s.name)
}

fn tile_error(e: TileError, what: &str, y0: u32, y1: u32) -> Error {
    Error::new(ErrorKind::from_status(e.status), format!("{} (rows {y0}..{y1}, {what}, fused group)", e.message))
}

fn panicked(payload: &(dyn std::any::Any + Send), what: &str, y0: u32, y1: u32) -> Error {
    Error::new(
        ErrorKind::Failure,
        format!("the {what} panicked on rows {y0}..{y1} (fused group): {}", panic_message(payload)),
    )
}

#[derive(Clone, Copy)]
struct GroupRun<'a> {
    g: &'a FusedGroup,
    body: &'a GraphBody,
    mapped: &'a [Option<Mapped>; MAX_OUTSIDE_IMAGES],
    scalars: &'a [([u8; 8], u32)],
    /// How many threads share this run's bands, as descriptor flags ([`tile_run_threads_flags`]).
    run_threads: u32,
}

// SAFETY: the mapped images' addresses are shared by the threads running the group's bands; each
// band writes only its own rows of the outside outputs and of the materialized images (verify
// keeps a group whose bands would write outside their rows from splitting), and reads a
// materialized image only in rows it wrote itself (`produced`, checked per call) or in rows its
// writer never processes, which nobody writes during the run; the rings are per thread, and the
// group's row of zeros is never written; the leases keep the images mapped until every band has
// returned.
unsafe impl Sync for GroupRun<'_> {}

impl GroupRun<'_> {
    /// The same run, its members told that `threads` threads share its bands.
    fn with_threads(&self, threads: usize) -> GroupRun<'_> {
        GroupRun { run_threads: tile_run_threads_flags(threads.max(1)), ..*self }
    }

    /// Every step of band `plan` with the rings of `scratch`.
    fn band(&self, scratch: &mut GroupScratch, plan: &BandPlan) -> Result<()> {
        let node = |n: usize| self.body.nodes[n].as_ref().expect("group members are live");
        scratch.produced.fill((0, 0));
        for j in 0..plan.step_count() {
            for (mi, rows) in plan.step(j).iter().enumerate() {
                if rows.is_empty() {
                    continue;
                }
                let m = &self.g.members[mi];
                let s = node(m.node);
                let (y0, y1) = (rows.start, rows.end);
                let called = match m.calls {
                    MemberCalls::RowEntry(_) => self.rows(scratch, mi, s, y0, y1),
                    MemberCalls::Descriptors => self.descriptors(scratch, mi, s, y0, y1),
                };
                called.map_err(|e| member_error(s, e))?;
                for role in &m.params {
                    if let ParamRole::Fused { image, output: true }
                    | ParamRole::Materialized { image, output: true, .. } = *role
                    {
                        let p = &mut scratch.produced[image];
                        *p = if p.0 == p.1 { (y0, y1) } else { (p.0, y1) };
                    }
                }
            }
        }
        Ok(())
    }

    fn outside(&self, slot: usize) -> Result<Mapped> {
        self.mapped[slot].ok_or_else(|| Error::new(ErrorKind::InvalidNode, "a fused member's image is not mapped"))
    }

    /// Where rows `first .. first + out.len()` of parameter `role` are, into `out`: a fused
    /// image's ring slots (the first slot divided, then stepped with a wrap), a materialized or
    /// outside image's rows. For an input, a row its writer never processes (undefined in both
    /// modes) is the group's row of zeros for a fused image and its own row for a materialized
    /// one; any other row not readable now is null: a ring row not written in this band or no
    /// longer held, a materialized row not written in this band, a row outside an outside image.
    fn fill_rows<P: Copy>(
        &self,
        (rings, produced): (&[RawBuf], &[(u32, u32)]),
        role: ParamRole,
        first: i64,
        out: &mut [P],
        ptr: fn(*mut u8) -> P,
    ) -> Result<()> {
        let null = ptr(std::ptr::null_mut());
        let output = role.is_output();
        match role {
            ParamRole::Fused { image, .. } => {
                let ring = &self.g.rings[image];
                let (from, end, cap) = (produced[image].0 as i64, produced[image].1 as i64, ring.capacity as i64);
                let (w0, w1) = (ring.written.0 as i64, ring.written.1 as i64);
                let base = rings[image].as_ptr();
                // Present whenever a fused image's writer leaves rows unprocessed (`build`).
                let zeros = self.g.zero_row.as_ref().map_or(null, |z| ptr(z.as_ptr()));
                let mut slot = first.rem_euclid(cap) as usize;
                for (r, o) in (first..).zip(out.iter_mut()) {
                    let held = output || (r >= from && r < end && r >= end - cap);
                    // Within the ring: slot < capacity, and the ring holds capacity · pitch bytes.
                    // A row its writer never processes is undefined: the group's row of zeros.
                    *o = if held {
                        ptr(base.wrapping_add(slot * ring.pitch))
                    } else if r < w0 || r >= w1 {
                        zeros
                    } else {
                        null
                    };
                    slot += 1;
                    if slot == ring.capacity as usize {
                        slot = 0;
                    }
                }
            }
            ParamRole::Outside { slot, .. } | ParamRole::Materialized { slot, .. } => {
                let m = self.outside(slot)?;
                let height = self.g.height as i64;
                for (r, o) in (first..).zip(out.iter_mut()) {
                    let held = output
                        || (0..height).contains(&r)
                            && match role {
                                ParamRole::Materialized { image, .. } => {
                                    self.g.rings[image].may_read(produced[image], r as u32, r as u32 + 1)
                                }
                                _ => true,
                            };
                    *o = if held { ptr(m.base.wrapping_add(r as usize * m.stride_y)) } else { null };
                }
            }
            ParamRole::Absent | ParamRole::Value => out.fill(null),
        }
        Ok(())
    }

    fn fourcc(&self, role: ParamRole) -> Result<u32> {
        Ok(match role {
            ParamRole::Fused { image, .. } => self.g.rings[image].fourcc,
            ParamRole::Outside { slot, .. } | ParamRole::Materialized { slot, .. } => self.outside(slot)?.fourcc,
            _ => 0,
        })
    }

    /// Member `mi` (a row kernel) computes rows `y0..y1` through its row entry.
    fn rows(&self, scratch: &mut GroupScratch, mi: usize, s: &NodeSlot, y0: u32, y1: u32) -> Result<()> {
        let m: &Member = &self.g.members[mi];
        let f = s
            .kernel
            .functions
            .rows()
            .ok_or_else(|| Error::new(ErrorKind::InvalidNode, "a fused row kernel has no row entry"))?;
        let h = self.g.height as i64;
        let nb = m.neighborhood;
        // Fill the pools first, then take their addresses (no write after a pointer is taken).
        let GroupScratch { rings, tables: tables_pool, sinks: sinks_pool, produced } = scratch;
        let pools = (&rings[..], &produced[..]);
        let mut spans = [(0usize, 0u32, 0i64); MAX_TILING_PARAMS];
        let (mut t, mut o) = (0usize, 0usize);
        for (i, &role) in m.params.iter().enumerate() {
            match role {
                ParamRole::Absent | ParamRole::Value => {}
                _ if role.is_output() => {
                    spans[i] = (o, y1 - y0, 0);
                    let end = o + (y1 - y0) as usize;
                    self.fill_rows(pools, role, y0 as i64, &mut sinks_pool[o..end], |p| p)?;
                    o = end;
                }
                _ => {
                    let (a, b) = (y0 as i64 + nb.top as i64, y1 as i64 - 1 + nb.bottom as i64);
                    let Some((s0, s1)) = source_hull(m.calls, a, b, h) else {
                        spans[i] = (t, 0, 0);
                        continue;
                    };
                    spans[i] = (t, (s1 - s0 + 1) as u32, s0);
                    let end = t + (s1 - s0 + 1) as usize;
                    self.fill_rows(pools, role, s0, &mut tables_pool[t..end], |p| p as *const u8)?;
                    t = end;
                }
            }
        }
        let mut sources =
            [RowSourceDesc { first_row: 0, rows: std::ptr::null(), len: 0, format: 0 }; MAX_TILING_PARAMS];
        let mut sinks = [RowSinkDesc { rows: std::ptr::null(), format: 0 }; MAX_TILING_PARAMS];
        let tables = tables_pool.as_ptr();
        let outs = sinks_pool.as_ptr();
        for (i, &role) in m.params.iter().enumerate() {
            let (at, len, first) = spans[i];
            match role {
                ParamRole::Absent | ParamRole::Value => {}
                _ if role.is_output() => {
                    sinks[i] = RowSinkDesc { rows: outs.wrapping_add(at), format: self.fourcc(role)? };
                }
                _ => {
                    sources[i] = RowSourceDesc {
                        first_row: first,
                        rows: tables.wrapping_add(at),
                        len,
                        format: self.fourcc(role)?,
                    };
                }
            }
        }
        let mut params = [TileParam::ABSENT; MAX_TILING_PARAMS];
        for (i, &role) in m.params.iter().enumerate() {
            params[i] = match role {
                ParamRole::Absent => TileParam::ABSENT,
                ParamRole::Value => value_param(&self.scalars[mi * MAX_TILING_PARAMS + i]),
                _ if role.is_output() => TileParam {
                    kind: TileParamKind::OutputRows,
                    type_code: sinks[i].format,
                    ptr: &sinks[i] as *const RowSinkDesc as *mut _,
                },
                _ => TileParam {
                    kind: TileParamKind::InputRows,
                    type_code: sources[i].format,
                    ptr: &sources[i] as *const RowSourceDesc as *mut _,
                },
            };
        }
        let region = RowRegion {
            y0,
            count: y1 - y0,
            x0: m.processed.start_x,
            x1: m.processed.end_x,
            image_width: self.g.width,
            image_height: self.g.height,
        };
        // SAFETY: every input table's non-null rows point to `width` pixels of its format in a ring
        // slot holding a row this band wrote and the ring still holds, in a row of a materialized
        // image this band wrote, in an image mapped for the run, or — for a row its writer never
        // processes — in the group's row of zeros (at least a ring's pitch, never written) or that
        // row of the materialized image, which nobody writes during the run (`fill_rows` checks
        // each), none written during the call; every output row is a ring slot or an
        // image row of another buffer than every input (outputs are this member's own images:
        // no member aliases); scalar entries point to their bytes; everything outlives the call.
        let args = unsafe { RowArgs::new(&params[..m.params.len()], region) };
        match catch_panic(|| f(&args)) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(tile_error(e, "row entry", y0, y1)),
            Err(p) => Err(panicked(&*p, "row entry", y0, y1)),
        }
    }

    /// Member `mi` (no vertical neighbourhood) computes rows `y0..y1` through tile descriptors:
    /// the pieces the tile plan would give, split where one of its rings wraps.
    fn descriptors(&self, scratch: &mut GroupScratch, mi: usize, s: &NodeSlot, y0: u32, y1: u32) -> Result<()> {
        let m = &self.g.members[mi];
        let KernelFunctions::Tiling { fast, flexible, .. } = &s.kernel.functions else {
            return Err(Error::new(ErrorKind::InvalidNode, "a fused member is not a tiling kernel"));
        };
        let mut y = y0;
        while y < y1 {
            let mut end = y1;
            for role in &m.params {
                if let ParamRole::Fused { image, .. } = *role {
                    let cap = self.g.rings[image].capacity;
                    end = end.min((y / cap + 1) * cap);
                }
            }
            let pieces = row_pieces(&m.regions, m.block, m.has_fast, m.has_flexible, y..end);
            for &(rect, function) in pieces.as_slice() {
                let (f, which) = match function {
                    TileFunction::Fast => (fast.as_deref(), "fast function"),
                    TileFunction::Flexible => (flexible.as_deref(), "flexible function"),
                };
                let f =
                    f.ok_or_else(|| Error::new(ErrorKind::InvalidNode, "the plan names a function the kernel lacks"))?;
                self.tile(scratch, mi, rect, f, which)?;
            }
            y = end;
        }
        Ok(())
    }

    fn tile(
        &self,
        scratch: &GroupScratch,
        mi: usize,
        rect: Rect,
        f: &crate::kernel::callbacks::TilingFn,
        which: &str,
    ) -> Result<()> {
        let m = &self.g.members[mi];
        let (w, h) = (self.g.width, self.g.height);
        let mut descs = [EMPTY_DESC; MAX_TILING_PARAMS];
        for (i, &role) in m.params.iter().enumerate() {
            let (base, stride_x, stride_y, fourcc, flags) = match role {
                ParamRole::Absent | ParamRole::Value => continue,
                ParamRole::Fused { image, .. } => {
                    let ring = &self.g.rings[image];
                    let slot = (rect.start_y % ring.capacity) as usize;
                    // Row y of the piece at slot(start) + (y - start): the piece does not wrap.
                    let first = scratch.rings[image].as_ptr().wrapping_add(slot * ring.pitch);
                    let base = first.wrapping_sub(rect.start_y as usize * ring.pitch);
                    (base, ring.bytes_per_pixel, ring.pitch, ring.fourcc, TILE_LINE_BUFFER)
                }
                ParamRole::Materialized { slot, image, output } => {
                    // Read only rows this band has written (its reader has no vertical
                    // neighbourhood: the piece's rows are all it reads).
                    let (from, end) = scratch.produced[image];
                    if !output && !self.g.rings[image].may_read((from, end), rect.start_y, rect.end_y) {
                        return Err(Error::new(
                            ErrorKind::InvalidNode,
                            format!(
                                "a fused member would read rows {}..{} of materialized image '{}' before they are written (rows {from}..{end} are)",
                                rect.start_y, rect.end_y, self.g.rings[image].name
                            ),
                        ));
                    }
                    let mp = self.outside(slot)?;
                    (mp.base, mp.stride_x, mp.stride_y, mp.fourcc, 0)
                }
                ParamRole::Outside { slot, .. } => {
                    let mp = self.outside(slot)?;
                    (mp.base, mp.stride_x, mp.stride_y, mp.fourcc, 0)
                }
            };
            let input = !role.is_output();
            descs[i] = TileDesc {
                base,
                format: fourcc,
                tile_x: rect.start_x,
                tile_y: rect.start_y,
                width: rect.width(),
                height: rect.height(),
                stride_x: stride_x as i32,
                stride_y: stride_y as i32,
                block: m.block,
                neighborhood: m.neighborhood,
                image_width: w,
                image_height: h,
                readable: if input { grow(rect, m.neighborhood, w, h) } else { rect },
                flags: flags | self.run_threads,
            };
        }
        let mut params = [TileParam::ABSENT; MAX_TILING_PARAMS];
        for (i, &role) in m.params.iter().enumerate() {
            params[i] = match role {
                ParamRole::Absent => TileParam::ABSENT,
                ParamRole::Value => value_param(&self.scalars[mi * MAX_TILING_PARAMS + i]),
                _ => TileParam {
                    kind: if role.is_output() { TileParamKind::OutputImage } else { TileParamKind::InputImage },
                    type_code: descs[i].format,
                    ptr: &descs[i] as *const TileDesc as *mut _,
                },
            };
        }
        // SAFETY: each descriptor addresses, for the piece's rows (and its readable rectangle, the
        // piece grown sideways only: no vertical neighbourhood), either an image mapped for the run
        // (a materialized input only in rows this band wrote or its writer never processes,
        // which nobody writes during the run; checked above) or ring slots that the piece's rows
        // occupy without wrapping (the caller split the rows at every wrap; a slot of a row its
        // writer never processes holds bytes of this thread's earlier rows, undefined but
        // initialized, and not written during the call); output pieces are this member's own
        // images, disjoint from its inputs;
        // scalar pointers point to their bytes; no tile memory is asked for (refused at verify).
        let mut args = unsafe { TileArgs::new(&params[..m.params.len()], std::ptr::null_mut(), 0) };
        match catch_panic(|| f(&mut args)) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(tile_error(e, which, rect.start_y, rect.end_y)),
            Err(p) => Err(panicked(&*p, which, rect.start_y, rect.end_y)),
        }
    }
}
