//! Positions in one log: the first event of a pass, and the cell `q[10]` or `q[0,2,1,0]` names
//! (for `g`, `tui --at` and a lesson's `at`; `tui::position` puts them together with the walk).

use attn_trace_core::trace::{Buf, Pass, Trace};
use attn_trace_i18n::tr;

/// A buffer cell: the buffer and a flat offset into it.
pub type CellRef = (Buf, usize);

/// The first access (read or write) of `cell` among the events `r`: a binary search of the
/// cell's index, so it costs the same on ten events as on ten million.
pub fn first_access_in(trace: &Trace, (buf, off): CellRef, r: &std::ops::Range<usize>) -> Option<usize> {
    if r.is_empty() {
        return None;
    }
    let first = |list: &[u32]| {
        let k = list.partition_point(|&e| (e as usize) < r.start);
        list.get(k).map(|&e| e as usize).filter(|&e| e < r.end)
    };
    let (reads, writes) = (first(trace.index.reads(buf, off)), first(trace.index.writes(buf, off)));
    reads.into_iter().chain(writes).min()
}

/// The first event of pass `p` in `trace`.
pub fn first_of_pass(trace: &Trace, p: Pass) -> Option<usize> {
    trace
        .phases
        .iter()
        .find(|(s, ph)| ph.pass() == p && (*s as usize) < trace.len())
        .map(|&(s, _)| s as usize)
}

/// The cell `name[rest` names: a flat offset (`q[10]`) or an index per dimension (`q[0,2,1,0]`).
pub fn cell(trace: &Trace, name: &str, rest: &str) -> Result<CellRef, String> {
    let inside = rest
        .strip_suffix(']')
        .ok_or(tr!("a cell is written like q[10] or scores[0,1,2,1]"))?;
    let buf = Buf::from_name(name).ok_or_else(|| tr!("no buffer named {name}", name = format!("{name:?}")))?;
    let info = trace
        .buffer(buf)
        .ok_or_else(|| tr!("{name} is not part of this trace", name))?;
    let nums: Vec<usize> = inside
        .split(',')
        .map(str::trim)
        .map(|p| {
            p.parse::<usize>()
                .map_err(|_| tr!("{p} is not a whole number", p = format!("{p:?}")))
        })
        .collect::<Result<_, _>>()?;
    let layout = info.layout();
    let off = match nums.as_slice() {
        [off] => *off,
        idx => layout.offset(idx).ok_or_else(|| {
            tr!(
                "{name}[{idx}] is not in {name} {sizes} ({names})",
                name,
                idx = inside.trim(),
                sizes = layout.sizes_text(),
                names = layout.names().join(",")
            )
        })?,
    };
    if off >= info.len() {
        return Err(tr!(
            "{name}[{off}] is out of range: {name} has {n} elements",
            name,
            off,
            n = info.len()
        ));
    }
    Ok((buf, off))
}
