//! The per-block kernels of the JPEG fit (the planar decode's dequantisation and IDCT, the
//! writer's FDCT and coding) compiled a second time for AVX2 in a native x86-64 build and taken
//! where the CPU has it. The native build targets baseline x86-64, which has no multiply of 32-bit
//! lanes (SSE4.1), so the 32-bit lanes that the wasm build runs as simd128 fell apart into scalar
//! code natively; the wasm build is untouched (one form, simd128). The same Rust runs either way,
//! so the bytes are the same (the unit tests run whichever form the test machine takes).

/// `fn $name(args) -> ret`, calling `$as_built(args)` (which should be `#[inline(always)]`, so
/// that its body is compiled anew for AVX2): on x86-64 through a copy compiled with AVX2 where
/// the CPU has it (the check is one cached load), elsewhere straight.
macro_rules! with_avx2_where_present {
    ($(#[$meta:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? = $as_built:ident;) => {
        $(#[$meta])*
        fn $name($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2")]
                fn with_avx2($($arg: $ty),*) $(-> $ret)? {
                    $as_built($($arg),*)
                }
                if std::is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU has AVX2, the one feature `with_avx2` is compiled for.
                    return unsafe { with_avx2($($arg),*) };
                }
            }
            $as_built($($arg),*)
        }
    };
}

pub(crate) use with_avx2_where_present;
