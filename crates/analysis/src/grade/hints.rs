//! The hints in plain words: the divergent buffer's constant ratio and the scale it is, the
//! diagonal never written, a fused column read in place of another, a hidden cell left
//! unmasked, a loop variable the reads ignore.

use super::read::Learner;
use super::report::{Divergence, Source};
use super::results::Results;
use super::state::{Blocks, Mine};
use crate::learner::reference::Reference;
use attn_trace_core::trace::{Buf, MASKED};
use attn_trace_i18n::tr;

/// The hints for the first divergence `d`, in the order a learner needs them: the constant
/// ratio of its buffer and what scale it is, the diagonal never written, loop variables the
/// reads ignore, a fused column read in place of another, a hidden cell left unmasked.
pub(super) fn hints(
    r: &Reference,
    l: &Learner,
    results: &Results,
    d: Option<&Divergence>,
    files: &[String],
) -> Vec<String> {
    let mut hints = Vec::new();
    if let Some(d) = d
        && let Some(res) = results.buffers.iter().find(|res| res.buffer == d.cell.buffer)
        && let Some(ratio) = &res.ratio
    {
        let (name, factor) = (res.buffer.name(), format!("{:.4}", ratio.factor));
        hints.push(match &ratio.meaning {
            Some(meaning) => tr!(
                "your {name} are {factor}× the reference's: {meaning}",
                name,
                factor,
                meaning
            )
            .to_string(),
            None => tr!("your {name} are {factor}× the reference's", name, factor).to_string(),
        });
    }
    if let Some(d) = d
        && d.cell.mine.is_none()
        && results.diagonal.contains(&d.cell.buffer)
    {
        hints.push(
            tr!(
                "the {name} you never write are those of a query with its own key (j = i): the loop over the keys stops one short",
                name = d.cell.buffer.name()
            )
            .to_string(),
        );
    }
    hints.extend(ignored_loop_variables(r, &l.blocks));
    hints.extend(d.and_then(fused_column_read));
    hints.extend(d.and_then(|d| unmasked_read(r, l.all_mine(), d, files)));
    hints
}

/// A stray read of a fused q/k/v buffer in words: which of q, k, v, which head and channel the
/// column read is, beside the column the reference reads there: `qkv[b0 i0 c6] is k's head 1,
/// channel 0; the reference reads qkv[b0 i0 c4] there, k's head 0, channel 0`.
pub(super) fn fused_column_read(d: &Divergence) -> Option<String> {
    let mine = &d.cell.stray.as_ref()?.read;
    let (mine_cell, mine_note) = (mine.cell.as_deref()?, mine.note.as_deref()?);
    // the note's first part is the column's (`k h1 d0`); a hidden pair's note may follow it
    let column = |note: &str| -> Option<(String, String, String)> {
        let mut words = note.split("; ").next()?.split_whitespace();
        let part = words.next()?.to_string();
        let h = words.next()?.strip_prefix('h')?.to_string();
        let dd = words.next()?.strip_prefix('d')?.to_string();
        Some((part, h, dd))
    };
    let in_words = |(part, h, dd): (String, String, String)| tr!("{part}'s head {h}, channel {d}", part, h, d = dd);
    let ours = column(mine_note)?;
    let buffer = mine_cell.split('[').next()?;
    // the reference's read of the same buffer most like it: the same part, head or channel
    let (theirs, their_column) = d
        .reference_reads
        .iter()
        .filter(|t| t.cell.as_deref().and_then(|c| c.split('[').next()) == Some(buffer))
        .filter_map(|t| Some((t, column(t.note.as_deref()?)?)))
        .max_by_key(|(_, (part, h, dd))| {
            usize::from(*part == ours.0) * 4 + usize::from(*h == ours.1) * 2 + usize::from(*dd == ours.2)
        })?;
    let their_cell = theirs.cell.as_deref()?;
    Some(
        tr!(
            "{mine} is {ours}; the reference reads {theirs} there, {their_column}",
            mine = mine_cell,
            ours = in_words(ours),
            theirs = their_cell,
            their_column = in_words(their_column)
        )
        .to_string(),
    )
}

/// A hidden cell the divergent cell is computed from (a score at a masked pair) that the
/// learner left unmasked: `scores[b0 h0 i0 j1] is hidden (j > i), but yours is 0 (mine.py:30)`.
pub(super) fn unmasked_read(r: &Reference, mine: &[Option<Mine>], d: &Divergence, files: &[String]) -> Option<String> {
    r.reads_for(d.cell.buffer, d.cell.offset).into_iter().find_map(|n| {
        let (_, buf, off, value) = r.cell_event(n)?;
        let c = r.get(buf)?;
        let m = mine.get(buf as usize)?.as_ref()?;
        if !c.unneeded.get(off).copied().unwrap_or(false) || m.written_at[off] == 0 {
            return None;
        }
        // a masked score must stay at or below −1e9, a hidden probability at 0
        let masked = if value <= MASKED { m.value[off] <= MASKED } else { m.value[off] == value };
        if masked {
            return None;
        }
        let (file, line) = m.source[off];
        let at = Source::of(files, file, line, m.written_at[off]);
        Some(
            tr!(
                "{cell} is read though it is {hidden}: yours is {mine}, written at {file}:{line}, where the reference's is {value}, which gives it no weight",
                cell = r.cell_label(buf, off),
                hidden = r.hidden(buf, off).unwrap_or_default(),
                mine = crate::format::num(m.value[off]),
                file = at.file,
                line = at.line,
                value = crate::format::num(value)
            )
            .to_string(),
        )
    })
}

/// "your k reads are the same for every h": a coordinate the reference's reads follow that the
/// learner's never change, while the cell written runs over it.
pub(super) fn ignored_loop_variables(r: &Reference, blocks: &Blocks) -> Vec<String> {
    let mut keys: Vec<&(Buf, Buf, usize)> = blocks.ties.keys().collect();
    keys.sort();
    let mut out = Vec::new();
    for key in keys {
        let (wb, rb, t) = *key;
        let Some(u) = blocks.ties.get(key) else { continue };
        let (Some(ties), Some(wc), Some(rc)) = (r.ties(wb, rb), r.get(wb), r.get(rb)) else {
            continue;
        };
        let Some(tie) = ties.get(t) else { continue };
        if u.violated && u.x_values.len() >= 2 && u.y_values.len() == 1 {
            let x = wc.dims()[tie.write_dim].0;
            let y = rc.dims()[tie.read_dim].0;
            let text = tr!(
                "your {read} reads are the same for every {x} of {written} ({y} = {v} each time)",
                read = rb.name(),
                x,
                written = wb.name(),
                y,
                v = u.y_values[0]
            )
            .to_string();
            if !out.contains(&text) {
                out.push(text);
            }
        }
    }
    out
}
