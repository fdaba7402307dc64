// Handles lent to a module are for one call on one thread: neither Send nor Sync (ABI v2).
use vx_plugin_abi::module_abi::{Host, Lifecycle, Processor, Validator};

fn assert_send<T: Send>() {}
fn assert_sync<T: Sync>() {}

fn main() {
    assert_sync::<Host>();
    assert_send::<Validator>();
    assert_sync::<Processor>();
    assert_send::<Lifecycle>();
}
