//! Flash's phases, counted loop by loop over the tile pairs the mask does not hide entirely
//! ([`TileSums`]).

use super::{Counted, Plan, pc};
use crate::engine::count::Count;
use crate::kernels::attention_flash::{FittedTiles, Tiles};
use crate::kernels::{Mask, Variant, kernel_shape};
use crate::trace::Phase;

/// Sums over the (query tile, key tile) pairs flash visits, those the mask does not hide
/// entirely: how many (`pairs`), and the sums of their rows `nr`, their columns `nc` and their
/// cells `nr·nc`. Every count of flash's loops is, per visited pair, a polynomial of degree one
/// in `nr` and in `nc`, so these four sums give any of them ([`TileSums::sum`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TileSums {
    pub pairs: Count,
    pub rows: Count,
    pub cols: Count,
    pub cells: Count,
}

impl TileSums {
    /// The sums for `S` queries and `T` keys cut into `tiles` under `mask`, without listing the
    /// pairs: in closed form without a mask, one step per query tile under the causal one, and
    /// one look at each cell of an explicit mask (which the scenario file holds).
    pub fn new(s: usize, t: usize, tiles: FittedTiles, mask: &Mask) -> TileSums {
        let Tiles { br, bc } = tiles.sizes();
        let (br, bc) = (br.max(1), bc.max(1));
        let (nq, nk) = (s.div_ceil(br), t.div_ceil(bc));
        let n = Count::from;
        match mask {
            Mask::None => TileSums {
                pairs: n(nq) * n(nk),
                rows: n(nk) * n(s),
                cols: n(nq) * n(t),
                cells: n(s) * n(t),
            },
            // the key tile starting at j0 is visited by the query tile ending at i1 when j0 < i1
            Mask::Causal => (0..nq).fold(TileSums::default(), |acc, q| {
                let (i0, i1) = (q * br, ((q + 1) * br).min(s));
                let nr = n(i1 - i0);
                let k = i1.div_ceil(bc).min(nk);
                let cols = n((k * bc).min(t));
                TileSums {
                    pairs: acc.pairs + n(k),
                    rows: acc.rows + nr * n(k),
                    cols: acc.cols + cols,
                    cells: acc.cells + nr * cols,
                }
            }),
            // the key tiles a query tile i0..i1 visits are those of the sinks and those from the
            // one holding i0 + 1 − w (the first key of its first row's band) to the one holding
            // i1 − 1: two ranges of tiles, so one step per query tile as under the causal mask
            Mask::Window { w, sinks } => (0..nq).fold(TileSums::default(), |acc, q| {
                let (i0, i1) = (q * br, ((q + 1) * br).min(s));
                let nr = n(i1 - i0);
                let end = i1.div_ceil(bc).min(nk);
                let band = ((i0 + 1).saturating_sub(*w) / bc).min(end);
                let sink_tiles = sinks.div_ceil(bc).min(band);
                // the keys of tiles a..b, the last tile holding fewer when T is not a multiple
                let width = |a: usize, b: usize| if a < b { (b * bc).min(t) - a * bc } else { 0 };
                let k = (end - band) + sink_tiles;
                let cols = n(width(band, end) + width(0, sink_tiles));
                TileSums {
                    pairs: acc.pairs + n(k),
                    rows: acc.rows + nr * n(k),
                    cols: acc.cols + cols,
                    cells: acc.cells + nr * cols,
                }
            }),
            Mask::Explicit { .. } => {
                let mut acc = TileSums::default();
                for q in 0..nq {
                    let rows = q * br..((q + 1) * br).min(s);
                    for k in 0..nk {
                        let cols = k * bc..((k + 1) * bc).min(t);
                        if !mask.hides_tile(rows.clone(), cols.clone()) {
                            let (nr, nc) = (n(rows.len()), n(cols.len()));
                            acc.pairs += n(1usize);
                            acc.rows += nr;
                            acc.cols += nc;
                            acc.cells += nr * nc;
                        }
                    }
                }
                acc
            }
        }
    }

    /// `Σ f(nr, nc)` over the visited pairs, for an `f` of degree one in each of `nr` and `nc`
    /// (`a + b·nr + c·nc + d·nr·nc`, its coefficients read off `f` at 0 and 1).
    pub fn sum(&self, f: impl Fn(u64, u64) -> u64) -> Count {
        let (f00, f10, f01, f11) = (f(0, 0) as i128, f(1, 0) as i128, f(0, 1) as i128, f(1, 1) as i128);
        let coef = |x: i128| Count::from(u64::try_from(x).unwrap_or(0));
        let (a, b, c, d) = (f00, f10 - f00, f01 - f00, f11 - f10 - f01 + f00);
        coef(a) * self.pairs + coef(b) * self.rows + coef(c) * self.cols + coef(d) * self.cells
    }
}

/// Flash's three phases (`flash`, `flash_delta`, `flash_back`), counted loop by loop of
/// `attention_flash.rs`: per `(b, h)` a sum over the query tiles (`nr` rows), the key tiles
/// (`nc` columns) and the tile pairs the mask does not hide entirely.
pub(super) fn flash_counts(plan: &Plan) -> [Counted; 3] {
    let sh = kernel_shape(plan.shape, Variant::Flash);
    let visited = TileSums::new(sh.s, sh.t, plan.tiles, &plan.mask);
    let (s, t, d) = (Count::from(sh.s), Count::from(sh.t), sh.d() as u64);
    let heads = Count::from(sh.b) * Count::from(sh.h);
    let sum = |f: &dyn Fn(u64, u64) -> u64| visited.sum(f);
    let per_head = |phase, reads: Count, writes: Count| pc(phase, heads * reads, heads * writes);
    // a sink logit read where each row starts (m = sink); P_sink = e^(sink − lse) recomputed
    // per row in backward (2 reads, a write)
    let sink = u64::from(plan.sink);
    // forward: load q (and start m, l, acc) per row; per visited tile load k and v, the score
    // tile (2D reads per score), the online softmax per row (m, max, exp, l, and acc per d
    // with its 2·nc products); write att and lse per row
    let fwd = per_head(
        Phase::Flash,
        s * (d + sink) + sum(&|nr, nc| 2 * nc * d + 2 * nr * nc * d + nr * (2 + 2 * nc + d + 2 * nc * d)) + s * (d + 2),
        s * (2 * d + 2) + sum(&|nr, nc| 2 * nc * d + nr * nc + nr * (nc + 2 + d)) + s * (d + 1),
    );
    // D_i: 2D reads per row; dQ = 0 and D_i written
    let delta = per_head(Phase::FlashDelta, s * (2 * d + 2 * sink), s * (d + 1 + sink));
    // per key tile: load k, v (and zero dK, dV), write dK, dV back; per visited tile: load q
    // and dO, recompute P (lse per row, 2D per score), dV, dS (D_i per row, 2D + 1 per entry),
    // dQ (2·nc products and a += per element), dK
    let back = per_head(
        Phase::FlashBack,
        4 * t * d
            + sum(&|nr, nc| {
                2 * nr * d
                    + nr * (1 + 2 * nc * d)
                    + nc * d * (1 + 2 * nr)
                    + nr * (1 + nc * (2 * d + 1))
                    + nr * d * (2 * nc + 1)
                    + nc * d * (1 + 2 * nr)
            }),
        6 * t * d + sum(&|nr, nc| 2 * nr * d + nr * nc + nc * d + nr * nc + nr * d + nc * d),
    );
    [fwd, delta, back]
}
