//! Registration records: each kernel a crate defines with `#[tiling_kernel]` or `#[user_kernel]`
//! leaves one [`KernelRecord`] in the binary (through `inventory`), holding a function that adds
//! the kernel through a [`Host`]. A module's generated `publish` walks the records of *its own*
//! binary (inventory is per binary); an application publishes the records compiled into it with
//! `vx::Context::publish_in_process`.

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

/// The records of this binary, sorted by kernel name (a stable registration order).
pub fn records() -> Vec<&'static KernelRecord> {
    let mut v: Vec<&'static KernelRecord> = inventory::iter::<KernelRecord>.into_iter().collect();
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
