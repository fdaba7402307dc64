//! Run-time SIMD dispatch for row loops: `multiversion!` compiles a row function twice — for
//! baseline x86-64 and with AVX2 enabled — and picks the AVX2 one when the CPU has it (the check is
//! a cached atomic load). Portable code, no per-machine build flags.

macro_rules! multiversion {
    ($(#[$m:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $body:block) => {
        $(#[$m])*
        fn $name($($arg: $ty),*) {
            #[inline(always)]
            fn imp($($arg: $ty),*) $body
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2")]
                unsafe fn avx2($($arg: $ty),*) {
                    imp($($arg),*)
                }
                if std::is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of
                    // calling a function compiled with it enabled.
                    return unsafe { avx2($($arg),*) };
                }
            }
            imp($($arg),*)
        }
    };
}
pub(crate) use multiversion;
