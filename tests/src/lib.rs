//! Workspace-level integration tests live in `tests/tests/`: ports of the Khronos conformance
//! behaviour (user nodes), and — with the module loader — tests that build and load real kernel
//! modules. This library is empty on purpose.
