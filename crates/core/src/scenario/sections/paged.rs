//! The `[paged]` table: a paged cache's block pool and block table.

use super::super::reader::{Doc, Result, Value};
use super::PAGED_KEYS;
use crate::kernels::decode::Paged;
use crate::tensor::Shape;
use attn_trace_i18n::tr;
use std::collections::BTreeMap;
use toml::de::DeValue;

/// `[paged]`: a pool of `num_blocks` blocks of `block_size` positions, and either the block
/// `table` (a row of `⌈T/BS⌉` block ids per sequence) or a `seed` that deals out blocks shuffled.
/// Two sequences may share a block only at the same place in their rows, as prefix caching
/// shares the blocks of a common prefix (their tokens there are checked once the values are).
pub(in crate::scenario) fn parse_paged(doc: &Doc<'_>, v: &Value<'_>, shape: Shape) -> Result<Paged> {
    let t = doc.table(v, "[paged]")?;
    doc.known_keys(t, PAGED_KEYS, "paged")?;
    let need = |key: &str| {
        t.get(key).ok_or_else(|| {
            doc.err(
                Some(v.span()),
                &format!("[paged].{key}"),
                tr!("missing: a paged cache needs block_size, num_blocks, and a table or a seed"),
            )
        })
    };
    let bs = doc.size(need("block_size")?, "[paged].block_size")?;
    let nb_v = need("num_blocks")?;
    let nb = doc.size(nb_v, "[paged].num_blocks")?;
    let (b, t_len) = (shape.b, shape.t);
    let mb = t_len.div_ceil(bs);
    match (t.get("table"), t.get("seed")) {
        (Some(_), Some(seed)) => Err(doc.err(
            Some(seed.span()),
            "[paged].seed",
            tr!("the table is given, so there is nothing to shuffle: remove seed or table"),
        )),
        (None, None) => Err(doc.err(
            Some(v.span()),
            "[paged].table",
            tr!("missing: give the block table (a row of ⌈T/BS⌉ block ids per sequence) or a seed to deal the blocks"),
        )),
        (None, Some(seed)) => {
            let seed = doc.integer(
                seed,
                "[paged].seed",
                0,
                i128::from(u64::MAX),
                tr!("a whole number from 0"),
            )? as u64;
            if b.saturating_mul(mb) > nb {
                return Err(doc.err(
                    Some(nb_v.span()),
                    "[paged].num_blocks",
                    tr!(
                        "the sequences need B·⌈T/BS⌉ = {b}·{mb} = {need} blocks, but the pool has {nb}",
                        b,
                        mb,
                        need = b * mb,
                        nb
                    ),
                ));
            }
            Ok(Paged::shuffled(bs, nb, b, t_len, seed))
        }
        (Some(table), None) => {
            let field = "[paged].table";
            let expected = tr!(
                "B = {b} rows of ⌈T/BS⌉ = ⌈{t}/{bs}⌉ = {mb} block ids below num_blocks = {nb}",
                b,
                t = t_len,
                bs,
                mb,
                nb
            );
            let DeValue::Array(rows) = table.get_ref() else {
                return Err(doc.err(Some(table.span()), field, tr!("expected {expected}", expected)));
            };
            if rows.len() != b {
                return Err(doc.err(
                    Some(table.span()),
                    field,
                    tr!("expected {expected}, found {n} rows", expected, n = rows.len()),
                ));
            }
            let mut ids = Vec::with_capacity(b * mb);
            // where each block is used: (sequence, place in its row)
            let mut used: BTreeMap<usize, (usize, usize)> = BTreeMap::new();
            for (bb, row) in rows.iter().enumerate() {
                let DeValue::Array(cells) = row.get_ref() else {
                    return Err(doc.err(Some(row.span()), field, tr!("expected {expected}", expected)));
                };
                if cells.len() != mb {
                    let why = if cells.len() < mb {
                        tr!(
                            "row {bb} is too short for T = {t}: {t} positions in blocks of {bs} need {mb} block ids, it lists {n}",
                            bb,
                            t = t_len,
                            bs,
                            mb,
                            n = cells.len()
                        )
                    } else {
                        tr!(
                            "row {bb} is too long: T = {t} positions in blocks of {bs} fill {mb} blocks, it lists {n}",
                            bb,
                            t = t_len,
                            bs,
                            mb,
                            n = cells.len()
                        )
                    };
                    return Err(doc.err(Some(row.span()), field, why));
                }
                for (blk, cell) in cells.iter().enumerate() {
                    let what = tr!("a block id below num_blocks = {nb}", nb);
                    let id = doc.integer(cell, field, 0, nb as i128 - 1, &what)? as usize;
                    match used.insert(id, (bb, blk)) {
                        Some((b0, k0)) if k0 != blk || b0 == bb => {
                            return Err(doc.err(
                                Some(cell.span()),
                                field,
                                tr!(
                                    "block {id} is already row {b0}'s block {k0}: a block holds one place of the sequences that share it (prefix caching shares the same place)",
                                    id,
                                    b0,
                                    k0
                                ),
                            ));
                        }
                        _ => {}
                    }
                    ids.push(id);
                }
            }
            Ok(Paged {
                block_size: bs,
                num_blocks: nb,
                table: ids,
            })
        }
    }
}
