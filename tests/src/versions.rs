//! Kernels whose versions the reload tests swap in process (`Kernel::__replace_in_process`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering::SeqCst};

use vx::*;

/// Validator calls (`[0]`) and init calls (`[1]`) of a kernel's versions.
pub type Calls = Arc<[AtomicU32; 2]>;

/// `in → out = in + add` (wrapping): a U8 user kernel `name` with validator key `key` and, when
/// `init`, an init; its validator and init calls counted in `calls`. `successor_of`: staged as that
/// kernel's next version. Versions differing in `add` alone (same key, no init) move nodes in place.
pub fn adder(
    ctx: &Context,
    name: &str,
    successor_of: Option<&Kernel>,
    add: u8,
    key: u64,
    init: bool,
    calls: &Calls,
) -> Kernel {
    let id = successor_of.map_or_else(|| ctx.allocate_user_kernel_id().unwrap(), Kernel::enumeration);
    let (v, i) = (Arc::clone(calls), Arc::clone(calls));
    let mut b = ctx
        .user_kernel(name, id, 2)
        .__reload_test_hook(key, successor_of.is_some())
        .validate(move |c, metas| {
            v[0].fetch_add(1, SeqCst);
            let a = c.expect_image_format(0, ImageFormat::U8)?;
            metas.get(1)?.set_image(ImageFormat::U8, a.width(), a.height())?;
            Ok(())
        })
        .process(move |p| {
            let (i, mut o) = p.map_pair::<u8, u8>(0, 1)?;
            for y in 0..o.height() {
                for (o, i) in o.row_mut(y).iter_mut().zip(i.row(y)) {
                    *o = i.wrapping_add(add);
                }
            }
            Ok(())
        });
    if init {
        b = b.init(move |_| {
            i[1].fetch_add(1, SeqCst);
            Ok(())
        });
    }
    let k = b.add().unwrap();
    k.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required).unwrap();
    k.add_parameter(1, ParamDirection::Output, DataType::Image, ParamState::Required).unwrap();
    k.finalize().unwrap();
    k
}
