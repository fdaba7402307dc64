//! Sizes from callers, checked once: element counts × element size as bytes that fit the address
//! space (`isize::MAX`), and vectors reserved fallibly. Every allocation whose size a caller chose
//! goes through here before any memory is reserved (`vec![0; n]` with an unchecked `n`
//! aborts the process; no `Result`, no panic guard can catch it).

use crate::error::{Error, ErrorKind, Result};

/// `counts[0] × counts[1] × … × element` bytes, or `InvalidDimension` naming `what` when the
/// product overflows or exceeds `isize::MAX`.
pub(crate) fn checked_bytes(what: &str, counts: &[usize], element: usize) -> Result<usize> {
    counts.iter().try_fold(element, |acc, &n| acc.checked_mul(n)).filter(|&b| b <= isize::MAX as usize).ok_or_else(
        || {
            Error::new(ErrorKind::InvalidDimension, format!("the {what} overflows the addressable memory"))
                .found(format!("{counts:?} × {element} bytes"))
        },
    )
}

/// An empty vector with room for `n` elements, or `NoMemory` (never an abort) when the system
/// cannot give it.
pub(crate) fn try_vec<T>(what: &str, n: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|e| {
        Error::new(ErrorKind::NoMemory, format!("cannot reserve memory for the {what}: {e}"))
            .found(format!("{n} elements of {} bytes", std::mem::size_of::<T>()))
    })?;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_that_overflow_or_exceed_isize_are_refused() {
        assert_eq!(checked_bytes("x", &[3, 5], 8).unwrap(), 120);
        assert_eq!(checked_bytes("x", &[], 4).unwrap(), 4);
        assert_eq!(checked_bytes("x", &[0, usize::MAX], 8).unwrap(), 0);
        for counts in [[1usize << 31, 1 << 30], [usize::MAX, 2], [1 << 32, 1 << 31]] {
            assert_eq!(checked_bytes("remap", &counts, 8).unwrap_err().kind(), ErrorKind::InvalidDimension);
        }
        assert!(checked_bytes("x", &[isize::MAX as usize], 1).is_ok());
        assert!(checked_bytes("x", &[isize::MAX as usize + 1], 1).is_err());
    }

    #[test]
    fn a_vector_the_system_cannot_give_is_an_error() {
        assert_eq!(try_vec::<u64>("x", usize::MAX / 4).unwrap_err().kind(), ErrorKind::NoMemory);
        assert!(try_vec::<u8>("x", 16).unwrap().capacity() >= 16);
    }
}
