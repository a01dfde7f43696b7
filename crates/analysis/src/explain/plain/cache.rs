//! A decode run's cache: where query `i`'s step wrote its own key and value, and where key
//! `j`'s were written, whichever way the cache is kept.

use super::super::text::num;
use super::super::{Result, Section, missing};
use super::Ctx;
use attn_trace_core::kernels::Mask;
use attn_trace_core::trace::{Buf, Op, Phase};
use attn_trace_i18n::tr;

impl Ctx<'_> {
    /// A decode run: where query `i`'s step wrote its own key and value, and where key `j`'s
    /// were written, `j` steps in: found from the log, as the dot product reads them, whichever
    /// way the cache is kept (a row per position, a rolling window's slots, a paged pool).
    pub(super) fn cache(&self) -> Result<Section> {
        let t = self.trace;
        let (i, j) = (self.at.i, self.at.j);
        let w = self.write_in(Buf::Scores, self.off, self.phases[0])?;
        let pairs = self.products(w)?;
        // the key row j of the dot product, as the step read it
        let &(_, k_read) = pairs.first().ok_or_else(|| missing("the cached key read"))?;
        let paged = t.buffer(Buf::BlockTable).is_some();
        let mut lines = vec![if paged {
            tr!("generation runs step by step: step t projects token t once and writes its key and value into row t % BS of the block the block table lists for it").to_string()
        } else if let Mask::Window { .. } = self.mask {
            tr!("generation runs step by step: step t projects token t once and writes its key and value into its row of the rolling cache: a sink's own row, else slot t % W after the sinks").to_string()
        } else {
            tr!("generation runs step by step: step t projects token t once and writes its key and value into row t of k_cache and v_cache").to_string()
        }];
        // the step's own token: the first k_cache write of its step; key j: the last write of
        // the cell the dot product reads, before that read
        let mut own = t
            .index
            .writes(Buf::KCache, t.events[k_read].offset as usize)
            .iter()
            .map(|&n| n as usize);
        let key_write = own
            .rfind(|&n| n < k_read)
            .ok_or_else(|| missing("the write of the cached key"))?;
        let step_write = t
            .phases
            .iter()
            .filter(|(_, p)| *p == Phase::DecodeQkv)
            .map(|&(n, _)| n as usize)
            .rfind(|&n| n <= w)
            .and_then(|start| {
                // its first key write is channel 0 of its row; the head's row starts kv_h·D on
                let kv_h = self.at.h / (self.ksh.h / self.ksh.h_kv);
                let writes = (start..w).filter(|&n| t.events[n].buf == Buf::KCache && t.events[n].op == Op::Write);
                let first = writes.clone().next()?;
                let head = t.events[first].offset as usize + kv_h * self.ksh.d();
                writes.clone().find(|&n| t.events[n].offset as usize == head)
            })
            .ok_or_else(|| missing("the step's write of its own key"))?;
        for (what, row, n) in [
            (tr!("the query's own token "), i, step_write),
            (tr!("key j="), j, key_write),
        ] {
            // a paged cache's row: the block id read from the table, then the row in it
            let ci = self.formulas(n, &["blk", "phys", "ci"]).join(tr!("; "));
            lines.push(tr!(
                "{what}{row}: step {row} wrote k_cache.data[{off}] = {value}   ({place}); {ci}",
                what,
                row,
                off = t.events[n].offset,
                value = num(t.events[n].value),
                place = self.where_(n),
                ci
            ));
        }
        // where step i reads key j: the offsets of the read, with the slot or block worked out
        for line in self.formulas(k_read, &["j_blk", "j_phys", "k_base"]) {
            lines.push(tr!("step {i} reads it at {line}", i, line));
        }
        if let Mask::Window { w, sinks } = self.mask {
            lines.push(tr!(
                "step {i} reads only the keys it sees: the sinks 0..{sinks} and the window {lo}..={i}; the rows of the keys that slid out hold later positions now",
                i,
                sinks,
                lo = (i + 1).saturating_sub(w)
            ));
        } else {
            lines.push(tr!(
                "step {i} reads cached rows 0..={i}; row {j} has been in the cache since step {j}, nothing is computed again",
                i,
                j
            ));
        }
        Ok(Section {
            title: tr!("Before the scores: the key/value cache at step t={i}", i),
            lines,
        })
    }
}
