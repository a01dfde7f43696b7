//! Numbers and fields written into a byte buffer without allocating: a value as `{:?}` and as
//! JSON writes it, integers, hexadecimal addresses, CSV's quoting.

use std::io::Write;

/// The bytes of a value as `{:?}` writes it, faster: `ryu` gives the same shortest digits, and
/// the same layout where both write plain decimals (from 1e-4 up to 1e13); outside that range,
/// for the non-finite, and for a tie between two shortest candidates (`-3.86328125`, which
/// `{:?}` rounds away from zero and `ryu` to even), `{:?}` itself.
#[inline]
pub fn push_debug_f32(out: &mut Vec<u8>, x: f32) {
    let a = x.abs();
    if x == 0.0 || (1e-4..1e13).contains(&a) {
        let mut b = ryu::Buffer::new();
        let s = b.format_finite(x);
        if !is_tie(x, s) {
            out.extend_from_slice(s.as_bytes());
            return;
        }
    }
    let _ = write!(out, "{x:?}");
}

/// Is `x` exactly halfway between two decimals of the length of `shortest` (its shortest form)?
/// Its exact decimal then has one significant digit more, and that digit is a 5. A shortest
/// form has at most 9 digits, so only exact values of at most 10 significant digits can tie:
/// `m·5^k` (for `x = m·2^-k`, `m` odd) has more once `k > 14`.
fn is_tie(x: f32, shortest: &str) -> bool {
    let bits = x.abs().to_bits();
    let exp = ((bits >> 23) & 0xff) as i32;
    let frac = bits & 0x7f_ffff;
    let (mut m, mut e) = if exp == 0 {
        (frac, -149)
    } else {
        (frac | 1 << 23, exp - 150)
    };
    if m == 0 {
        return false;
    }
    let tz = m.trailing_zeros();
    m >>= tz;
    e += tz as i32;
    // the exact value's significant digits: m·2^e (an integer below 1e13 here), or m·5^k
    // when e = -k (then it ends in 5)
    let mut d: u64 = if e >= 0 {
        if e > 40 {
            return false;
        }
        u64::from(m) << e
    } else {
        let k = e.unsigned_abs();
        if k > 14 {
            return false;
        }
        u64::from(m) * 5u64.pow(k)
    };
    while d.is_multiple_of(10) {
        d /= 10;
    }
    if d % 10 != 5 {
        return false;
    }
    let exact = d.ilog10() as usize + 1;
    let digits = shortest.as_bytes();
    let first = digits.iter().position(|&b| (b'1'..=b'9').contains(&b));
    let last = digits.iter().rposition(|&b| (b'1'..=b'9').contains(&b));
    let (Some(first), Some(last)) = (first, last) else {
        return false;
    };
    let significant = digits[first..=last].iter().filter(|b| b.is_ascii_digit()).count();
    exact == significant + 1
}

/// A JSON number for a value; JSON has no NaN or infinity: those are the strings `"nan"`,
/// `"inf"` and `"-inf"`, as the recorders write them and `grade` reads them.
#[inline]
pub(super) fn push_json_number(out: &mut Vec<u8>, x: f32) {
    if x.is_finite() {
        push_debug_f32(out, x);
    } else if x.is_nan() {
        out.extend_from_slice(b"\"nan\"");
    } else if x > 0.0 {
        out.extend_from_slice(b"\"inf\"");
    } else {
        out.extend_from_slice(b"\"-inf\"");
    }
}

/// Decimal `n`; most of the numbers are loop variables and coordinates below 100.
#[inline]
pub(super) fn push_int(out: &mut Vec<u8>, n: u64) {
    if n < 10 {
        out.push(b'0' + n as u8);
    } else if n < 100 {
        out.extend_from_slice(&[b'0' + (n / 10) as u8, b'0' + (n % 10) as u8]);
    } else {
        out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    }
}

/// Lowercase hexadecimal of `n`, at least `width` digits.
#[inline]
pub(super) fn push_hex(out: &mut Vec<u8>, n: u64, width: usize) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut tmp = [0u8; 16];
    let mut k = 16;
    let mut v = n;
    loop {
        k -= 1;
        tmp[k] = DIGITS[(v & 15) as usize];
        v >>= 4;
        if v == 0 {
            break;
        }
    }
    for _ in (16 - k)..width {
        out.push(b'0');
    }
    out.extend_from_slice(&tmp[k..]);
}

/// A CSV field as the `csv` crate writes it: in quotes, with quotes doubled, when it holds a
/// comma, a quote or a line break.
pub(super) fn push_csv_field(out: &mut Vec<u8>, field: &str) {
    if field.bytes().any(|b| matches!(b, b',' | b'"' | b'\r' | b'\n')) {
        out.push(b'"');
        for b in field.bytes() {
            if b == b'"' {
                out.push(b'"');
            }
            out.push(b);
        }
        out.push(b'"');
    } else {
        out.extend_from_slice(field.as_bytes());
    }
}
