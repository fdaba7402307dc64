//! Registration records: each kernel a crate defines with `#[tiling_kernel]` or `#[user_kernel]`
//! leaves one [`KernelRecord`] in the binary (through `inventory`), holding a function that adds
//! the kernel through a [`Host`]. A module's generated `publish` walks the records of *its own*
//! binary (inventory is per binary); an application publishes the records compiled into it with
//! `vx::Context::publish_in_process`.
//!
//! **Enumerations.** Records are registered in kernel-name order ([`in_name_order`]), never in the
//! order the linker laid them out (which `inventory` yields, and which moves between builds). A
//! kernel without `enumeration = N` gets the lowest free id of the context's user kernel id pool
//! (`VX_KERNEL_BASE(VX_ID_USER, 0)` + n) when it is registered, so what a user can rely on is: the
//! same kernels, published into a context in the same order of modules (a fresh context holding
//! one module, as `vx inspect` makes), get the same enumerations in every build. They move when
//! the module gains, loses or renames a kernel that sorts before them, or when other kernels took
//! ids first; a reload keeps each kernel's enumeration. A kernel that must keep one enumeration
//! everywhere declares it (`enumeration = N`).

use crate::module_abi::{AbiError, AbiResult, Host};
use crate::module_api::guard;
use crate::status::Status;

pub use inventory;

/// One kernel of this binary, ready to be registered.
pub struct KernelRecord {
    /// The kernel's name (also used by `unpublish` to remove it).
    pub name: &'static str,
    /// Adds, describes and finalizes the kernel through the host.
    pub register: fn(&Host) -> Result<(), AbiError>,
}

inventory::collect!(KernelRecord);

/// The records of this binary in registration order ([`in_name_order`]).
pub fn records() -> Vec<&'static KernelRecord> {
    in_name_order(inventory::iter::<KernelRecord>)
}

/// `records` sorted by kernel name: the registration order, the same whatever order they come in
/// (inventory yields them in link order, which moves between builds), so the enumerations the host
/// hands out in that order are too (see the module doc). Names are unique in a crate; two records
/// of one name from two crates of a binary keep their order, and the second is refused when
/// registered (a context has one kernel of a name).
pub fn in_name_order<'r>(records: impl IntoIterator<Item = &'r KernelRecord>) -> Vec<&'r KernelRecord> {
    let mut v: Vec<&'r KernelRecord> = records.into_iter().collect();
    v.sort_by_key(|r| r.name);
    v
}

/// Register every record of this binary through `host`: a module's `publish` (what `vx_module!`
/// exports).
pub extern "C" fn publish_records(host: &Host) -> AbiResult<()> {
    crate::log::connect(host);
    guard("publish", || {
        let records = records();
        if records.is_empty() {
            return Err(AbiError::new(Status::InvalidModule, "the module defines no kernels"));
        }
        for r in records {
            (r.register)(host).map_err(|e| {
                AbiError::new(
                    Status::from_code(e.status).unwrap_or(Status::Failure),
                    format!("kernel '{}': {}", r.name, e.message),
                )
            })?;
        }
        Ok(())
    })
}

/// Remove every record's kernel through `host`: a module's `unpublish` (what `vx_module!` exports).
pub extern "C" fn unpublish_records(host: &Host) -> AbiResult<()> {
    guard("unpublish", || records().into_iter().try_for_each(|r| host.remove_kernel(r.name)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn register(_: &Host) -> Result<(), AbiError> {
        Ok(())
    }

    #[test]
    fn records_in_any_order_are_registered_in_one_order_and_get_the_same_enumerations() {
        let records = ["example.sobel3x3", "example.box3x3", "example.add", "example.Box", "example.box"]
            .map(|name| KernelRecord { name, register });
        // The host hands the n-th kernel it registers the n-th free id: (name, id) per kernel.
        let enumerations = |order: Vec<&KernelRecord>| -> Vec<(&str, usize)> {
            order.into_iter().enumerate().map(|(id, r)| (r.name, id)).collect()
        };
        let want = enumerations(in_name_order(&records));
        assert_eq!(
            want.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
            ["example.Box", "example.add", "example.box", "example.box3x3", "example.sobel3x3"]
        );
        // Every rotation of every ordering that reversing and swapping give.
        let mut order: Vec<&KernelRecord> = records.iter().collect();
        for step in 0..2 * records.len() {
            order.rotate_left(1);
            if step % 2 == 1 {
                order.swap(0, 2);
            }
            assert_eq!(enumerations(in_name_order(order.iter().copied())), want, "step {step}");
            assert_eq!(enumerations(in_name_order(order.iter().rev().copied())), want, "step {step}, reversed");
        }
    }
}
