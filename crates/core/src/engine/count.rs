//! Counts derived from sizes a user gave (events, reads, writes, bytes): `u64` arithmetic that
//! cannot wrap. A sum or a product that does not fit is kept as [`Count::OVER`], "more than
//! `u64::MAX`", through every later sum and product, so a guard compares the true size with its
//! limit and a message never prints a wrapped number.
//!
//! ```
//! use attn_trace_core::engine::count::Count;
//! let big = Count::from(1u64 << 40);
//! assert_eq!((big * big).get(), None); // 2⁸⁰: over
//! assert!((big * big + 1).exceeds(u64::MAX - 1));
//! assert_eq!((3 * Count::from(5u64) + 1).get(), Some(16));
//! ```

use std::fmt;
use std::iter::Sum;
use std::ops::{Add, AddAssign, Mul};

/// A non-negative count, or "more than `u64::MAX`".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Count(Option<u64>);

impl Count {
    pub const ZERO: Count = Count(Some(0));
    /// More than `u64::MAX`.
    pub const OVER: Count = Count(None);

    /// The count, when it fits in a `u64`.
    pub const fn get(self) -> Option<u64> {
        self.0
    }

    /// Whether the count is larger than `limit` (always, when it does not fit in a `u64`).
    pub fn exceeds(self, limit: u64) -> bool {
        self.0.is_none_or(|n| n > limit)
    }

    /// The count as a `usize`, when it fits (for sizing a buffer already checked against a
    /// budget).
    pub fn to_usize(self) -> Option<usize> {
        self.0.and_then(|n| usize::try_from(n).ok())
    }
}

impl Default for Count {
    fn default() -> Self {
        Count::ZERO
    }
}

impl From<u64> for Count {
    fn from(n: u64) -> Self {
        Count(Some(n))
    }
}

impl From<usize> for Count {
    fn from(n: usize) -> Self {
        Count(u64::try_from(n).ok())
    }
}

impl From<u32> for Count {
    fn from(n: u32) -> Self {
        Count(Some(n as u64))
    }
}

impl From<bool> for Count {
    fn from(b: bool) -> Self {
        Count(Some(b as u64))
    }
}

impl Add for Count {
    type Output = Count;
    fn add(self, o: Count) -> Count {
        Count(self.0.zip(o.0).and_then(|(a, b)| a.checked_add(b)))
    }
}

impl Mul for Count {
    type Output = Count;
    fn mul(self, o: Count) -> Count {
        match (self.0, o.0) {
            // zero times anything, even an overflowed count, is zero
            (Some(0), _) | (_, Some(0)) => Count::ZERO,
            (Some(a), Some(b)) => Count(a.checked_mul(b)),
            _ => Count::OVER,
        }
    }
}

impl Add<u64> for Count {
    type Output = Count;
    fn add(self, o: u64) -> Count {
        self + Count::from(o)
    }
}

impl Mul<u64> for Count {
    type Output = Count;
    fn mul(self, o: u64) -> Count {
        self * Count::from(o)
    }
}

impl Add<Count> for u64 {
    type Output = Count;
    fn add(self, o: Count) -> Count {
        Count::from(self) + o
    }
}

impl Mul<Count> for u64 {
    type Output = Count;
    fn mul(self, o: Count) -> Count {
        Count::from(self) * o
    }
}

impl AddAssign for Count {
    fn add_assign(&mut self, o: Count) {
        *self = *self + o;
    }
}

impl Sum for Count {
    fn sum<I: Iterator<Item = Count>>(iter: I) -> Count {
        iter.fold(Count::ZERO, Add::add)
    }
}

impl fmt::Display for Count {
    /// The number, or `more than 18446744073709551615`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(n) => write!(f, "{n}"),
            None => f.write_str(&attn_trace_i18n::tr!("more than {max}", max = u64::MAX)),
        }
    }
}
