//! The text helpers of the walkthroughs: numbers as a person writes them, long sums elided,
//! the mask's decision in words.

use attn_trace_core::kernels::Mask;
use attn_trace_i18n::tr;

/// A number as `explain` writes it: [`crate::format::plain`].
pub use crate::format::plain as num;

/// [`num`] in parentheses when negative, for use inside a product or a difference.
pub fn par(x: f32) -> String {
    let s = num(x);
    if s.starts_with('-') { format!("({s})") } else { s }
}

/// The file name of a kernel source path.
pub(super) fn short(file: &str) -> &str {
    file.rsplit(['/', '\\']).next().unwrap_or(file)
}

/// Shows at most `keep` items of a long list: the first ones, `…`, and the last two.
pub fn elide(items: Vec<String>, keep: usize, sep: &str) -> String {
    if items.len() <= keep {
        return items.join(sep);
    }
    let head = keep.saturating_sub(2);
    let mut shown: Vec<String> = items[..head].to_vec();
    shown.push(tr!("… ({n} terms in all)", n = items.len()));
    shown.extend_from_slice(&items[items.len() - 2..]);
    shown.join(sep)
}

/// Most terms or lines a sum shows before eliding.
pub(super) const KEEP: usize = 8;

/// Why the mask keeps or hides the score of query `i` for key `j`, in words.
pub(super) fn mask_reason(mask: &Mask, i: usize, j: usize) -> String {
    match (mask, mask.hides(i, j)) {
        (Mask::Causal, true) => tr!(
            "j={j} > i={i}: key {j} comes after query {i}, so the causal mask hides it;",
            i,
            j
        ),
        (Mask::Causal, false) => {
            tr!(
                "j={j} ≤ i={i}: key {j} is not in the future of query {i}, so the score is kept",
                i,
                j
            )
        }
        (Mask::Window { .. }, true) if j > i => tr!(
            "j={j} > i={i}: key {j} comes after query {i}, so the causal mask hides it;",
            i,
            j
        ),
        (Mask::Window { w, .. }, true) => tr!(
            "j={j} ≤ i−W = {i}−{w}: key {j} has slid out of query {i}'s window of {w} keys and is not a sink, so it is hidden;",
            i,
            j,
            w
        ),
        (Mask::Window { w, sinks }, false) if j < *sinks && j + w <= i => tr!(
            "j={j} < sinks = {sinks}: key {j} is an attention sink, which every query sees whatever its window, so the score is kept",
            j,
            sinks
        ),
        (Mask::Window { w, .. }, false) => tr!(
            "i−W < j ≤ i ({i}−{w} < {j} ≤ {i}): key {j} is in query {i}'s window, so the score is kept",
            i,
            j,
            w
        ),
        (Mask::None, _) => tr!("none: every key is visible to every query, so the score is kept").to_string(),
        (Mask::Explicit { .. }, true) => {
            tr!(
                "the explicit mask has 0 at row {i}, column {j}: query {i} may not see key {j};",
                i,
                j
            )
        }
        (Mask::Explicit { .. }, false) => {
            tr!(
                "the explicit mask has 1 at row {i}, column {j}: query {i} may see key {j}, so the score is kept",
                i,
                j
            )
        }
    }
}
