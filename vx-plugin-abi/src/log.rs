//! Log lines from kernel code to the host's `tracing` subscriber.
//!
//! A module is a separate binary with its own copy of every crate: a `tracing` or `log` call
//! inside it would reach the module's own (absent) subscriber, never the application's. The host
//! passes a log function when it publishes the module ([`crate::module_abi::HostVtable::log`]);
//! these macros send lines through it, so they appear in the application's subscriber as events
//! of target `vx::module` with the module's `source` path. Panics caught by the SDK's guard
//! are logged at error level the same way. Before publish (or on a host without the function) a
//! line goes to standard error.
//!
//! ```
//! use vx_plugin_abi::{log, user_kernel, views};
//!
//! #[user_kernel(name = "doc.logged")]
//! fn logged(gain: u8, out: &mut views::Scalar<u8>) -> Result<(), vx_plugin_abi::AbiError> {
//!     if gain == 0 {
//!         log::warn!("gain 0: the output is all zero");
//!     }
//!     out.set(gain)
//! }
//! ```

use std::sync::OnceLock;

use crate::module_abi::{Host, LogFnPtr};
use crate::wire::log_level;

static HOST_LOG: OnceLock<LogFnPtr> = OnceLock::new();

/// The `source` of the line the SDK's guard logs for a panic it caught in module code. The panic
/// is also the error the guarded call returns, so the host marks the line as an echo of that error
/// (an `error` field, as its own echo events have), and a subscriber that shows the errors it gets
/// leaves it out: `vx` prints the panic once, in the error.
pub const PANIC_SOURCE: &str = "panic";

/// A log line's level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// An error.
    Error,
    /// A warning.
    Warn,
    /// Information.
    Info,
    /// Debugging detail.
    Debug,
    /// Tracing detail.
    Trace,
}

impl Level {
    /// The [`crate::wire::log_level`] code.
    pub const fn code(self) -> u32 {
        match self {
            Level::Error => log_level::ERROR,
            Level::Warn => log_level::WARN,
            Level::Info => log_level::INFO,
            Level::Debug => log_level::DEBUG,
            Level::Trace => log_level::TRACE,
        }
    }
}

/// Keep the host's log function (the generated `publish` calls this; the function stays valid for
/// the whole process).
pub fn connect(host: &Host) {
    if let Some(f) = host.log_fn() {
        let _ = HOST_LOG.set(f);
    }
}

/// True once the host's log function is known.
pub fn is_connected() -> bool {
    HOST_LOG.get().is_some()
}

/// Send one line to the host (what the macros call).
pub fn emit(level: Level, source: &str, message: &str) {
    match HOST_LOG.get() {
        // SAFETY: the host's log function takes any level code and two valid string views, and
        // stays valid for the whole process (its contract in `HostVtable::log`).
        Some(f) => unsafe { f(level.code(), source.into(), message.into()) },
        None => eprintln!("[{level:?}] {source}: {message}"),
    }
}

#[doc(hidden)]
#[macro_export]
macro_rules! __vx_log {
    ($level:expr, $($arg:tt)+) => {
        $crate::log::emit($level, ::core::module_path!(), &::std::format!($($arg)+))
    };
}

/// Log an error line (`format!` arguments).
#[doc(hidden)]
#[macro_export]
macro_rules! __vx_log_error { ($($arg:tt)+) => { $crate::__vx_log!($crate::log::Level::Error, $($arg)+) }; }
/// Log a warning (`format!` arguments).
#[doc(hidden)]
#[macro_export]
macro_rules! __vx_log_warn { ($($arg:tt)+) => { $crate::__vx_log!($crate::log::Level::Warn, $($arg)+) }; }
/// Log information (`format!` arguments).
#[doc(hidden)]
#[macro_export]
macro_rules! __vx_log_info { ($($arg:tt)+) => { $crate::__vx_log!($crate::log::Level::Info, $($arg)+) }; }
/// Log debugging detail (`format!` arguments).
#[doc(hidden)]
#[macro_export]
macro_rules! __vx_log_debug { ($($arg:tt)+) => { $crate::__vx_log!($crate::log::Level::Debug, $($arg)+) }; }
/// Log tracing detail (`format!` arguments).
#[doc(hidden)]
#[macro_export]
macro_rules! __vx_log_trace { ($($arg:tt)+) => { $crate::__vx_log!($crate::log::Level::Trace, $($arg)+) }; }

pub use __vx_log_debug as debug;
pub use __vx_log_error as error;
pub use __vx_log_info as info;
pub use __vx_log_trace as trace;
pub use __vx_log_warn as warn;
