//! How numbers and phases are written wherever a learner reads them: the TUI's panels,
//! `explain`, the mistakes report.

use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::{Buf, MASKED, Op, Pass, Phase};
use attn_trace_i18n::tr;
use std::borrow::Cow;

/// Columns `text` takes on a terminal: a CJK character takes two (`注意力` is 6 columns wide), so
/// the zh-CN interface is measured with this, never with `chars().count()`.
pub fn cols(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

/// Columns one character takes (0 for a control character).
pub fn char_cols(c: char) -> usize {
    unicode_width::UnicodeWidthChar::width(c).unwrap_or(0)
}

/// The longest start of `text` that fits `width` columns: never half of a wide character.
pub fn cut(text: &str, width: usize) -> &str {
    let mut used = 0;
    for (at, c) in text.char_indices() {
        used += char_cols(c);
        if used > width {
            return &text[..at];
        }
    }
    text
}

/// The longest end of `text` that fits `width` columns.
pub fn cut_start(text: &str, width: usize) -> &str {
    let mut used = 0;
    for (at, c) in text.char_indices().rev() {
        used += char_cols(c);
        if used > width {
            return &text[at + c.len_utf8()..];
        }
    }
    text
}

/// `text` padded with spaces to `width` columns (left-aligned), as `{:<width$}` does for
/// one-column characters.
pub fn pad(text: &str, width: usize) -> String {
    format!("{text}{}", " ".repeat(width.saturating_sub(cols(text))))
}

/// `text` padded on the left to `width` columns (right-aligned).
pub fn pad_left(text: &str, width: usize) -> String {
    format!("{}{text}", " ".repeat(width.saturating_sub(cols(text))))
}

/// `text` cut into lines of at most `width` columns, at spaces where it can, and between two
/// CJK characters (Chinese needs no space to break a line); a run wider than a line is cut.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut out = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        // the word's pieces: a run of one-column characters, or one wide character
        let mut pieces: Vec<&str> = Vec::new();
        let mut start = 0;
        for (at, c) in word.char_indices() {
            if char_cols(c) > 1 {
                if start < at {
                    pieces.push(&word[start..at]);
                }
                pieces.push(&word[at..at + c.len_utf8()]);
                start = at + c.len_utf8();
            }
        }
        if start < word.len() || word.is_empty() {
            pieces.push(&word[start..]);
        }
        for (k, piece) in pieces.into_iter().enumerate() {
            let sep = usize::from(k == 0 && !line.is_empty());
            let mut piece = piece;
            while cols(piece) > width {
                if !line.is_empty() {
                    out.push(std::mem::take(&mut line));
                }
                let head = cut(piece, width);
                let head = if head.is_empty() {
                    &piece[..piece.chars().next().map_or(0, char::len_utf8)]
                } else {
                    head
                };
                out.push(head.to_string());
                piece = &piece[head.len()..];
            }
            let len = cols(&line);
            if len > 0 && len + sep + cols(piece) > width {
                out.push(std::mem::take(&mut line));
            } else if sep == 1 {
                line.push(' ');
            }
            line.push_str(piece);
        }
    }
    if !line.is_empty() {
        out.push(line);
    }
    out
}

/// A value in at most 6 characters: `1.00`, `-0.71`, `-1e9` for the mask constant.
pub fn num(v: f32) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    if v.abs() >= 999.5 {
        format!("{v:.0e}")
    } else if v.abs() < 0.005 {
        // a negative zero (a masked pair's gradient) or a value that rounds to zero: no sign
        "0.00".to_string()
    } else {
        format!("{v:.2}")
    }
}

/// A count with its thousands separated by commas: `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (k, c) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A factor, product or sum with enough digits to check by hand: four decimals, and at least
/// four significant digits for small values (`0.0001234`, not `0.00`).
pub fn exact(v: f32) -> String {
    if v == 0.0 {
        return "0.0000".to_string();
    }
    if !v.is_finite() || v.abs() >= 999.5 {
        return num(v);
    }
    let digits = (3 - v.abs().log10().floor() as i32).clamp(4, 8) as usize;
    let text = format!("{v:.digits$}");
    // a value that rounds to zero even so carries no sign
    match text.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
        _ => text,
    }
}

/// The decimals [`exact`] gives `v`: four, more for small values (`0.0001234`).
pub fn exact_decimals(v: f32) -> usize {
    if v == 0.0 || !v.is_finite() || v.abs() >= 999.5 {
        return 4;
    }
    (3 - v.abs().log10().floor() as i32).clamp(4, 8) as usize
}

/// `values` written with one number of decimals, the most any of them needs ([`exact`]): the
/// numbers of one panel side by side (`0.0419  1.5188` would hide a digit of the first,
/// `0.04189  1.5188` mixes precisions; `0.04189  1.51880` does neither). Zero is `0`-padded
/// alike; the mask constant and large values keep [`num`]'s form.
pub fn exact_all(values: &[f32]) -> Vec<String> {
    let d = values.iter().map(|&v| exact_decimals(v)).max().unwrap_or(4);
    values.iter().map(|&v| fixed(v, d)).collect()
}

/// `v` with `d` decimals (no sign on a negative zero); the mask constant and large values in
/// [`num`]'s form.
pub fn fixed(v: f32, d: usize) -> String {
    if !v.is_finite() || v.abs() >= 999.5 {
        num(v)
    } else {
        format!("{:.d$}", if v == 0.0 { 0.0 } else { v })
    }
}

/// A number in an arithmetic chain a reader checks by hand: four decimals (`0.0000` for zero,
/// `−∞` for an empty row's maximum; `-1e9` for a hidden score and other large values).
pub fn four(v: f32) -> String {
    if v == 0.0 {
        return "0.0000".to_string();
    }
    if v == f32::NEG_INFINITY {
        return "−∞".to_string();
    }
    if v.is_finite() && v.abs() < 0.00005 {
        // a value too small for four decimals keeps its digits: `-0.00003162`, not `-0.0000`
        return exact(v);
    }
    if v.is_finite() && v.abs() < 999.5 {
        return format!("{v:.4}");
    }
    num(v)
}

/// A number printed after `+` or `−`: in parentheses when it is negative, so that a chain
/// reads `0.5 − (-0.16)`, never `0.5 − -0.16`.
pub fn rhs(text: String) -> String {
    if text.starts_with('-') || text.starts_with('−') {
        format!("({text})")
    } else {
        text
    }
}

/// `causal mask`, `explicit mask`, `no mask`, `sliding window W=4, 1 sink`.
pub fn mask_words(mask: &Mask) -> Cow<'static, str> {
    match mask {
        Mask::Causal => tr!("causal mask").into(),
        Mask::Window { w, sinks: 0 } => tr!("sliding window W={w}", w).into(),
        Mask::Window { w, sinks } => tr!("sliding window W={w}, sinks={sinks}", w, sinks).into(),
        Mask::Explicit { .. } => tr!("explicit mask").into(),
        Mask::None => tr!("no mask").into(),
    }
}

/// `read`, `write` in the language in use.
pub fn op_text(op: Op) -> &'static str {
    match op {
        Op::Read => tr!("read"),
        Op::Write => tr!("write"),
    }
}

/// `forward`, `backward` in the language in use.
pub fn pass_text(pass: Pass) -> &'static str {
    match pass {
        Pass::Forward => tr!("forward"),
        Pass::Backward => tr!("backward"),
    }
}

/// What a phase computes ([`Phase::title`]) in the language in use. The titles are keys of the
/// catalog like the `tr!` messages; the i18n test reads them from `Phase::ALL`.
pub fn phase_text(phase: Phase) -> &'static str {
    attn_trace_i18n::text(phase.title())
}

/// What a phase computes, with the run's mask where it matters.
pub fn phase_title(phase: Phase, mask: &Mask) -> String {
    let title = phase_text(phase);
    match phase {
        Phase::Scores if *mask == Mask::None => tr!("{title}, no mask", title),
        Phase::Scores => format!("{title} + {}", mask_words(mask)),
        Phase::ScoresBack => format!("{title}, {}", mask_words(mask)),
        _ => title.to_string(),
    }
}

/// [`phase_title`] for the kernel `variant`, its scale named as that kernel has it: the
/// baseline divides by `√C` (one head over every channel), latent attention by `√(D + DR)` (its
/// query heads are `[q_nope | q_pe]`), the others by `√D`.
pub fn phase_title_of(phase: Phase, mask: &Mask, variant: Variant) -> String {
    phase_title_pair(phase, mask, (variant, variant), true)
}

/// [`phase_title`] over two kernels side by side (Compare): the scale named once when both
/// divide by the same width, else each one's, `/√C or /√D`. `with_mask` false leaves out what
/// the mask adds (`+ causal mask`), for a narrow header.
pub fn phase_title_pair(phase: Phase, mask: &Mask, (left, right): (Variant, Variant), with_mask: bool) -> String {
    let title = if with_mask {
        phase_title(phase, mask)
    } else {
        phase_text(phase).to_string()
    };
    let (l, r) = (left.desc().width, right.desc().width);
    let scale = if l == r {
        l.sqrt().to_string()
    } else {
        tr!("{left} or /{right}", left = l.sqrt(), right = r.sqrt()).to_string()
    };
    title.replace("√d", &scale)
}

/// The sizes a run of `variant` on `sh` is made of, as its descriptor names them:
/// `B=1, T=3, C=4, H=2, D=2`. `S` is named only for cross-attention; latent attention's `R` and
/// `DR` are its kernel's `constant`s.
pub fn sizes_text(variant: Variant, sh: Shape, constant: impl Fn(&str) -> Option<usize>) -> String {
    variant
        .desc()
        .sizes
        .iter()
        .filter(|&&name| name != "S" || sh.is_cross())
        .map(|&name| {
            let value = match name {
                "B" => sh.b,
                "S" => sh.s,
                "T" => sh.t,
                "C" => sh.c,
                "H" => sh.h,
                "H_kv" => sh.h_kv,
                "D" => sh.d(),
                other => constant(other).unwrap_or(0),
            };
            format!("{name}={value}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Why the mask hides the pair (`i`, `j`): `j=3 > i=1` for the causal mask, `j=0 ≤ i−W = 3−2`
/// for a key that slid out of the window, the matrix entry for an explicit one.
pub fn hidden_because(mask: &Mask, i: usize, j: usize) -> String {
    match mask {
        Mask::Causal => format!("j={j} > i={i}"),
        Mask::Window { .. } if j > i => format!("j={j} > i={i}"),
        Mask::Window { w, .. } => format!("j={j} ≤ i−W = {i}−{w}"),
        Mask::Explicit { .. } => tr!("the explicit mask has 0 at row i={i}, column j={j}", i, j),
        Mask::None => tr!("no mask hides it").to_string(),
    }
}

/// A whole number held as f32 (a block id) as the integer it is: `5`; `None` for any other.
fn integer(buf: Buf, v: f32) -> Option<String> {
    (buf.holds_integers() && v.is_finite() && v.fract() == 0.0 && v.abs() < 1e15).then(|| format!("{}", v as i64))
}

/// A value of `buf` as [`num`] writes it, but a block id as the integer it is (`5`, not `5.00`).
pub fn num_of(buf: Buf, v: f32) -> String {
    integer(buf, v).unwrap_or_else(|| num(v))
}

/// A value of `buf` as [`exact`] writes it, but a block id as the integer it is (`0`, not
/// `0.0000`).
pub fn exact_of(buf: Buf, v: f32) -> String {
    integer(buf, v).unwrap_or_else(|| exact(v))
}

/// A number as a person writes it: up to 4 decimals, trailing zeros dropped, `-1e9` for the
/// mask value, and scientific notation for very large or very small magnitudes.
pub fn plain(x: f32) -> String {
    if x == MASKED {
        return "-1e9".to_string();
    }
    if x != 0.0 && (x.abs() >= 1e6 || x.abs() < 1e-4) {
        return format!("{x:.3e}");
    }
    let s = format!("{x:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".to_string() } else { s.to_string() }
}
