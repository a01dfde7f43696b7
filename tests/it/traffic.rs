//! Memory traffic: the closed forms of `traffic.rs` against the counts of real traces, and the
//! traffic of flash and the plain kernels against formulas worked out by hand here.

use crate::support::inputs::{explicit, from_qkv, from_x, values};
use attn_trace_analysis::traffic::{closed_form, counted, sweep};
use attn_trace_core::engine::{Dropout, Passes, run};
use attn_trace_core::kernels::attention_flash::Tiles;
use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::tensor::{Level, Shape};
use attn_trace_core::trace::{Buf, Pass};

#[test]
fn closed_forms_count_what_the_traces_record_buffer_by_buffer() {
    let shapes = [
        Shape::new(1, 3, 4, 2),
        Shape::new(2, 5, 6, 3),
        Shape::new(1, 7, 4, 1),
        Shape::cross(2, 3, 5, 4, 2),
    ];
    let mut checked = 0;
    for sh in shapes {
        for mask in [Mask::Causal, Mask::None, explicit(sh.s, sh.t)] {
            for (br, bc) in [(1, 1), (2, 2), (2, 3), (3, 5), (8, 8)] {
                for dropout in [None, Some(Dropout { p: 0.3, seed: 2 })] {
                    let (n, kv) = (sh.b * sh.s * sh.c, sh.b * sh.t * sh.c);
                    let mut inputs = from_qkv(sh, mask.clone(), values(n, 1), values(kv, 2), values(kv, 3));
                    inputs.d_out = values(n, 4);
                    let inputs = inputs.tiled(Tiles { br, bc }).with_dropout(dropout);
                    for variant in Variant::STANDARD {
                        let r = run(&inputs, variant, Passes::BOTH, true);
                        let got = counted(&r);
                        assert_eq!(got.len(), 2, "{variant}: a forward and a backward pass");
                        for p in got {
                            let want = closed_form(&inputs.plan(), variant, p.pass);
                            assert_eq!(
                                p, want,
                                "{variant} {:?} {sh:?} {mask:?} ({br},{bc}) {dropout:?}",
                                p.pass
                            );
                            checked += 1;
                        }
                    }
                }
            }
        }
    }
    assert_eq!(checked, 4 * 3 * 5 * 2 * Variant::STANDARD.len() * 2);
}

/// Flash's forward on one head with no mask, the numbers worked out by hand from the loops of
/// `attention_flash.rs`: with `n = ⌈T/br⌉` query tiles, k and v are each read once per query
/// tile, q once; att and lse are written once; nothing of size T×T touches global memory.
#[test]
fn flash_forward_reads_k_and_v_once_per_query_tile_and_writes_only_att_and_lse() {
    let (t, d) = (7usize, 4usize);
    for (br, bc) in [(2, 2), (3, 2), (7, 7), (1, 3)] {
        let n = t.div_ceil(br) as u64;
        let (t64, d64) = (t as u64, d as u64);
        let q_tiles: Vec<u64> = (0..t).step_by(br).map(|i0| (br.min(t - i0)) as u64).collect();
        let k_tiles: Vec<u64> = (0..t).step_by(bc).map(|j0| (bc.min(t - j0)) as u64).collect();
        let sh = Shape::new(1, t, d, 1);
        let inputs =
            from_qkv(sh, Mask::None, values(t * d, 1), values(t * d, 2), values(t * d, 3)).tiled(Tiles { br, bc });
        let r = run(&inputs, Variant::Flash, Passes::FORWARD, true);
        let fwd = &counted(&r)[0];
        let rw = |b: Buf| fwd.get(b).map(|x| (x.reads, x.writes));
        assert_eq!(rw(Buf::Q), Some((t64 * d64, 0)));
        assert_eq!(rw(Buf::K), Some((n * t64 * d64, 0)), "({br},{bc})");
        assert_eq!(rw(Buf::V), Some((n * t64 * d64, 0)));
        assert_eq!(rw(Buf::Att), Some((0, t64 * d64)));
        assert_eq!(rw(Buf::Lse), Some((0, t64)));
        // the global writes are att and lse, and nothing else
        let global_writes: u64 = fwd
            .buffers
            .iter()
            .filter(|b| b.level == Level::Global)
            .map(|b| b.writes)
            .sum();
        assert_eq!(global_writes, t64 * d64 + t64);
        // the score tile: written twice per pair (S, then P in place); read twice per pair
        // (max, exp) and once per pair and channel (P·V)
        let pairs: u64 = q_tiles.iter().flat_map(|&a| k_tiles.iter().map(move |&c| a * c)).sum();
        assert_eq!(pairs, t64 * t64);
        assert_eq!(rw(Buf::STile), Some((2 * pairs + pairs * d64, 2 * pairs)));
        let totals = fwd.totals();
        assert_eq!(totals[0].level, Level::Global);
        assert_eq!(totals[0].reads, t64 * d64 + 2 * n * t64 * d64);
        assert_eq!(totals[1].level, Level::Tile);
    }
}

/// The plain MHA kernel's forward on the same head: every product reads its operands from
/// global memory, and the T×T scores and probabilities are written and read back.
#[test]
fn naive_forward_writes_scores_and_probs_to_global_memory() {
    let (t, d) = (7u64, 4u64);
    let inputs = from_qkv(
        Shape::new(1, 7, 4, 1),
        Mask::None,
        values(28, 1),
        values(28, 2),
        values(28, 3),
    );
    let r = run(&inputs, Variant::Mha, Passes::FORWARD, true);
    let fwd = &counted(&r)[0];
    let rw = |b: Buf| fwd.get(b).map(|x| (x.level, x.reads, x.writes));
    assert_eq!(rw(Buf::Q), Some((Level::Global, t * t * d, 0)));
    assert_eq!(rw(Buf::K), Some((Level::Global, t * t * d, 0)));
    assert_eq!(rw(Buf::Scores), Some((Level::Global, 2 * t * t, t * t)));
    // softmax writes each probability twice (e^, then normalised); the weighted sum reads
    // each once per channel, and softmax once to normalise it
    assert_eq!(rw(Buf::Probs), Some((Level::Global, t * t + t * t * d, 2 * t * t)));
    assert_eq!(rw(Buf::V), Some((Level::Global, t * t * d, 0)));
    assert_eq!(rw(Buf::Att), Some((Level::Global, 0, t * d)));
    assert_eq!(fwd.totals().len(), 1, "no tile level in the plain kernels");
    assert_eq!(
        fwd.accesses(Level::Global),
        3 * t * t * d + t * t * d + 6 * t * t + t * d
    );
}

#[test]
fn flash_moves_less_global_memory_than_naive_and_less_with_bigger_tiles() {
    let inputs = from_x(Shape::new(2, 16, 8, 2), Mask::Causal, 3);
    let global = |v: Variant, tile: usize, pass: Pass| {
        let plan = inputs.clone().tiled(Tiles { br: tile, bc: tile }).plan();
        closed_form(&plan, v, pass).accesses(Level::Global)
    };
    for pass in [Pass::Forward, Pass::Backward] {
        let naive = global(Variant::Mha, 1, pass);
        let mut last = u64::MAX;
        for tile in [1, 2, 4, 8, 16] {
            let flash = global(Variant::Flash, tile, pass);
            assert!(
                flash < last,
                "{pass:?}: tile {tile} moves {flash}, smaller tiles {last}"
            );
            last = flash;
        }
        assert!(global(Variant::Flash, 2, pass) < naive, "{pass:?}");
    }
}

#[test]
fn the_sweep_shows_naive_growing_with_t_squared_and_flash_shrinking_with_the_tile() {
    let s = sweep(&[64, 128, 256], &[16, 32], 16, Mask::None);
    assert_eq!(
        s.tile_floats,
        [
            16 * 16 + 2 * 16 * 16 + 16 * 16 + 2 * 16 + 16 * 16,
            32 * 16 * 4 + 32 * 32 + 64
        ]
    );
    for w in s.rows.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        // doubling T: the T×T traffic exactly ×4, the rest of naive ×4 with its T·D terms ×2
        assert_eq!(b.naive_scores_probs, 4 * a.naive_scores_probs);
        assert!(b.naive > 3 * a.naive && b.naive < 4 * a.naive);
    }
    // one head, no mask, the forward pass: naive 4T²D + (D + 6)T²... per the loops
    let (t, d) = (64u64, 16u64);
    let row = &s.rows[0];
    assert_eq!(row.naive_scores_probs, 3 * t * t + 3 * t * t + t * t * d);
    assert_eq!(row.naive, 3 * t * t * d + row.naive_scores_probs + t * d);
    // flash: q and att once, k and v once per query tile (T/br tiles), lse once
    for (k, &tile) in s.tiles.iter().enumerate() {
        let n = t / tile as u64;
        assert_eq!(row.flash[k], t * d + 2 * n * t * d + t * d + t);
    }
}
