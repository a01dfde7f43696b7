//! Each mistake's documented symptom, in numbers, read from the two runs' final tensors.

use super::{Note, number};
use attn_trace_core::engine::{Run, kernel_shape};
use attn_trace_core::kernels::Mask;
use attn_trace_core::kernels::attention_mistakes::Mistake;
use attn_trace_core::kernels::names;
use attn_trace_core::tensor::Layout;
use attn_trace_core::trace::Buf;
use attn_trace_i18n::tr;

fn heading(text: String) -> Note {
    Note { heading: true, text }
}

fn note(text: String) -> Note {
    Note { heading: false, text }
}

/// `0.12 0.40 …`: values with two decimals.
fn list(values: impl IntoIterator<Item = f32>) -> String {
    values
        .into_iter()
        // + 0.0 turns the −0.0 of an empty sum into 0.0
        .map(|v| format!("{:.2}", v + 0.0))
        .collect::<Vec<_>>()
        .join(" ")
}

/// For every mistake of the run, its documented symptom in numbers, read from the final tensors
/// of the correct run `good` and the mistaken run `bad` (the same inputs, the same variant).
pub fn downstream(good: &Run, bad: &Run, mask: &Mask) -> Vec<Note> {
    let sh = good.shape;
    let ksh = kernel_shape(sh, good.variant);
    let (B, S, T, C, H, D) = (sh.b, sh.s, sh.t, sh.c, ksh.h, ksh.d());
    let (g, w) = (&good.tensors, &bad.tensors);
    // score-shaped buffers, [B,S,T] or [B,H,S,T], as the registry lays them out
    let Some(pairs) = good.registry.layout(Buf::Scores) else {
        return Vec::new();
    };
    let at = |b: usize, h: usize, i: usize, j: usize| pair_offset(pairs, b, h, i, j);
    // (i, j) of a flat offset, for the mask
    let ij = |o: usize| query_key(pairs, o);
    let mut out = Vec::new();
    for m in bad.mistakes.list() {
        out.push(heading(format!(
            "MISTAKE {} {}: {}",
            number(m),
            m.name(),
            attn_trace_i18n::text(m.symptom())
        )));
        match m {
            Mistake::NoInputProjection => {
                let weights = if g.has(Buf::WQkv) { "w_qkv" } else { "w_q, w_k, w_v" };
                let q_is_x = w.has(Buf::Q) && w[Buf::Q] == w[Buf::X];
                out.push(note(if q_is_x {
                    tr!(
                        "the mistaken run has no {weights}: its q is x itself, so no weights decide what a token looks for",
                        weights
                    )
                } else {
                    tr!(
                        "the mistaken run has no {weights}: its q comes from x itself, so no weights decide what a token looks for",
                        weights
                    )
                }));
                if S != T || w.has(Buf::Memory) {
                    out.push(note(
                        tr!("cross-attention: q = x and k = v = memory, straight from the inputs").into(),
                    ));
                    continue;
                }
                // |S[i,j] − S[j,i]| over the pairs visible both ways
                let asym = |s: &[f32]| -> (f32, usize) {
                    let mut worst = (0.0f32, 0);
                    for b in 0..B {
                        for h in 0..H {
                            for i in 0..S {
                                for j in i + 1..T {
                                    if !mask.hides(i, j) && !mask.hides(j, i) {
                                        let d = (s[at(b, h, i, j)] - s[at(b, h, j, i)]).abs();
                                        worst = (worst.0.max(d), worst.1 + 1);
                                    }
                                }
                            }
                        }
                    }
                    worst
                };
                let ((bad_d, pairs), (good_d, _)) = (asym(&w[Buf::Scores]), asym(&g[Buf::Scores]));
                if pairs == 0 {
                    out.push(note(
                        tr!("this mask shows no pair (i, j) both ways, so the symmetry hides behind it").into(),
                    ));
                    continue;
                }
                out.push(note(tr!(
                    "the mistaken scores are symmetric: max |S[i,j] − S[j,i]| = {bad} over {pairs} pairs (correct run: {good})",
                    bad = format!("{bad_d:.4}"),
                    pairs,
                    good = format!("{good_d:.4}")
                )));
                if let Some((i, j)) = (0..S)
                    .flat_map(|i| (i + 1..T).map(move |j| (i, j)))
                    .find(|&(i, j)| !mask.hides(i, j) && !mask.hides(j, i))
                {
                    let s = |t: &[f32], i, j| t[at(0, 0, i, j)];
                    out.push(note(tr!(
                        "b0 h0: mistaken S[{i},{j}] = {wij}, S[{j},{i}] = {wji} · correct S[{i},{j}] = {gij}, S[{j},{i}] = {gji}",
                        i,
                        j,
                        wij = format!("{:.3}", s(&w[Buf::Scores], i, j)),
                        wji = format!("{:.3}", s(&w[Buf::Scores], j, i)),
                        gij = format!("{:.3}", s(&g[Buf::Scores], i, j)),
                        gji = format!("{:.3}", s(&g[Buf::Scores], j, i))
                    )));
                }
            }
            Mistake::ScaleBySeqLen => {
                let ratio = (D as f32).sqrt() / (T as f32).sqrt();
                out.push(note(tr!(
                    "scores × 1/√T = 1/√{T} = {st} instead of 1/√D = 1/√{D} = {sd}: each is √D/√T = {ratio} times the correct one",
                    T,
                    st = format!("{:.3}", 1.0 / (T as f32).sqrt()),
                    D,
                    sd = format!("{:.3}", 1.0 / (D as f32).sqrt()),
                    ratio = format!("{ratio:.3}")
                )));
                // the ratio measured on the visible scores the correct run does not have near 0
                let (gs, ws) = (&g[Buf::Scores], &w[Buf::Scores]);
                let ratios: Vec<f32> = (0..gs.len())
                    .filter(|&o| !hidden(mask, ij(o)) && gs[o].abs() > 1e-3)
                    .map(|o| ws[o] / gs[o])
                    .collect();
                if !ratios.is_empty() {
                    let mean = ratios.iter().sum::<f32>() / ratios.len() as f32;
                    out.push(note(tr!(
                        "measured on the two runs' scores: mistaken / correct = {mean} (over {n} scores)",
                        mean = format!("{mean:.3}"),
                        n = ratios.len()
                    )));
                }
                let row_max =
                    |p: &[f32], b: usize, h: usize, i: usize| (0..T).map(|j| p[at(b, h, i, j)]).fold(0.0f32, f32::max);
                let rows = B * H * S;
                let mean = |p: &[f32]| {
                    let sum: f32 = (0..B * H * S).map(|r| row_max(p, r / (H * S), r / S % H, r % S)).sum();
                    sum / rows.max(1) as f32
                };
                let verdict = match T.cmp(&D) {
                    std::cmp::Ordering::Greater => tr!("too flat (T = {T} > D = {D})", T, D),
                    std::cmp::Ordering::Less => tr!("too sharp (T = {T} < D = {D})", T, D),
                    std::cmp::Ordering::Equal => tr!("unchanged (T = D = {D})", D),
                };
                out.push(note(tr!(
                    "mean max probability over all {rows} rows: correct {good}, mistaken {bad}: the softmax is {verdict}",
                    rows,
                    good = format!("{:.3}", mean(&g[Buf::Probs])),
                    bad = format!("{:.3}", mean(&w[Buf::Probs])),
                    verdict
                )));
                out.push(note(tr!("max probability per row, b0 h0:").into()));
                out.push(note(tr!(
                    "  correct  {values}",
                    values = list((0..S).map(|i| row_max(&g[Buf::Probs], 0, 0, i)))
                )));
                out.push(note(tr!(
                    "  mistaken {values}",
                    values = list((0..S).map(|i| row_max(&w[Buf::Probs], 0, 0, i)))
                )));
            }
            Mistake::MaskByMultiply => {
                let hidden: Vec<usize> = (0..g[Buf::Probs].len()).filter(|&o| hidden(mask, ij(o))).collect();
                if hidden.is_empty() {
                    out.push(note(
                        tr!("this scenario hides no pair: multiplying by an all-ones mask changes nothing").into(),
                    ));
                    continue;
                }
                let (gp, wp) = (&g[Buf::Probs], &w[Buf::Probs]);
                let leak = hidden.iter().filter(|&&o| wp[o] > 0.0).count();
                let (worst, o) = hidden
                    .iter()
                    .map(|&o| (wp[o], o))
                    .fold((0.0f32, 0), |a, b| if b.0 > a.0 { b } else { a });
                let good_max = hidden.iter().map(|&o| gp[o]).fold(0.0f32, f32::max);
                out.push(note(tr!(
                    "{leak} of {n} masked probabilities are > 0 in the mistaken run, the largest {worst} at {at} (correct run: at most {good})",
                    leak,
                    n = hidden.len(),
                    worst = format!("{worst:.3}"),
                    at = pairs.label(o),
                    good = format!("{good_max:.3}")
                )));
                let future = |p: &[f32], i: usize| {
                    (0..T)
                        .filter(|&j| mask.hides(i, j))
                        .map(|j| p[at(0, 0, i, j)])
                        .sum::<f32>()
                };
                out.push(note(tr!(
                    "weight on hidden keys per row, b0 h0: correct {good} · mistaken {bad}",
                    good = list((0..S).map(|i| future(gp, i))),
                    bad = list((0..S).map(|i| future(wp, i)))
                )));
                if let Some(i) = (0..S).find(|&i| (0..T).any(|j| mask.hides(i, j))) {
                    let row = |p: &[f32]| list((0..T).map(|j| p[at(0, 0, i, j)]));
                    out.push(note(tr!(
                        "row i={i}, b0 h0: correct [{good}] · mistaken [{bad}]",
                        i,
                        good = row(gp),
                        bad = row(wp)
                    )));
                }
            }
            Mistake::NoOutputProjection => {
                out.push(note(
                    tr!("the mistaken run has no w_proj and no out_proj phase: its output is att itself").into(),
                ));
                if !g.has(Buf::WProj) {
                    out.push(note(
                        tr!("the correct run has no output projection either: nothing differs").into(),
                    ));
                    continue;
                }
                if H == 1 {
                    out.push(note(
                        tr!("one head: nothing to mix, but out = att skips the learned W_proj").into(),
                    ));
                    continue;
                }
                // what head hh adds to out[b0, i, c]: Σ over its channels c' of att[c']·W[c', c]
                let i = S - 1;
                let row = i * C;
                let part = |hh: usize, c: usize| -> f32 {
                    (hh * D..(hh + 1) * D)
                        .map(|cp| g[Buf::Att][row + cp] * g[Buf::WProj][cp * C + c])
                        .sum()
                };
                let mine = |hh: usize, c: usize| if c / D == hh { w[Buf::Att][row + c] } else { 0.0 };
                let heads = |f: &dyn Fn(usize, usize) -> f32| -> String {
                    (0..H)
                        .map(|hh| format!("h{hh} [{}]", list((0..C).map(|c| f(hh, c)))))
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                out.push(note(tr!("what each head adds to out[b0, i={i}, c], c = 0..{C}:", i, C)));
                out.push(note(tr!("  correct  {values}", values = heads(&part))));
                out.push(note(tr!("  mistaken {values}", values = heads(&mine))));
                let mixed = (0..C)
                    .filter(|&c| (0..H).filter(|&hh| part(hh, c) != 0.0).count() > 1)
                    .count();
                out.push(note(tr!(
                    "correct: {mixed} of {C} output channels mix several heads · mistaken: none, channel c comes only from head c/D (D = {D})",
                    mixed,
                    C,
                    D
                )));
            }
            Mistake::DropoutNotApplied => {
                if !g.has(Buf::DropMask) {
                    out.push(note(
                        tr!("dropout is off in this scenario (eval mode, or no [run].dropout): both runs compute the same")
                            .into(),
                    ));
                    continue;
                }
                let (keep, gp, gd, wp) = (&g[Buf::DropMask], &g[Buf::Probs], &g[Buf::ProbsDrop], &w[Buf::Probs]);
                let dropped: Vec<usize> = (0..keep.len()).filter(|&o| keep[o] == 0.0).collect();
                let rescale = (0..gp.len())
                    .find(|&o| keep[o] != 0.0 && gp[o] > 1e-6)
                    .map(|o| gd[o] / gp[o]);
                let scale = rescale.map_or(String::new(), |r| {
                    tr!(" and scales the kept ones by 1/(1 − p) = {r}", r = format!("{r:.3}"))
                });
                out.push(note(tr!(
                    "the correct run drops {n} of {total} probabilities (drop_mask = 0){scale}",
                    n = dropped.len(),
                    total = keep.len(),
                    scale
                )));
                let used = dropped.iter().filter(|&&o| wp[o] > 0.0).count();
                // the others are masked pairs: probability 0 whether dropped or not
                let rest = dropped.len() - used;
                out.push(note(if rest == 0 {
                    tr!(
                        "the mistaken run still uses {used} of those {n}: its weighted sum reads probs, never probs_drop",
                        used,
                        n = dropped.len()
                    )
                } else {
                    tr!(
                        "the mistaken run still uses {used} of those {n} (the other {rest} are masked: probability 0 in both runs): its weighted sum reads probs, never probs_drop",
                        used,
                        n = dropped.len(),
                        rest
                    )
                }));
                // the largest weights the mistaken run keeps that the correct one dropped
                let mut kept: Vec<usize> = dropped.iter().copied().filter(|&o| wp[o] > 0.0).collect();
                kept.sort_by(|&a, &b| wp[b].total_cmp(&wp[a]).then(a.cmp(&b)));
                let examples: Vec<String> = kept
                    .iter()
                    .take(3)
                    .map(|&o| {
                        tr!(
                            "{at}: correct {good}, mistaken {bad}",
                            at = pairs.label(o),
                            good = format!("{:.2}", gd[o]),
                            bad = format!("{:.2}", wp[o])
                        )
                    })
                    .collect();
                if !examples.is_empty() {
                    out.push(note(tr!("dropped weights: {list}", list = examples.join(" · "))));
                }
                let diff = g[Buf::Att]
                    .iter()
                    .zip(&w[Buf::Att])
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0f32, f32::max);
                out.push(note(tr!(
                    "att differs between the runs by up to {diff}",
                    diff = format!("{diff:.3}")
                )));
            }
            Mistake::OverwriteKvGrad => overwritten_kv_grad(good, bad, mask, &mut out),
            Mistake::SoftmaxOverTwoDims => {
                let sum_row = |p: &[f32], b: usize, h: usize, i: usize| (0..T).map(|j| p[at(b, h, i, j)]).sum::<f32>();
                for h in 0..H {
                    out.push(note(tr!(
                        "row sums, mistaken b0 h{h}: {sums}",
                        h,
                        sums = list((0..S).map(|i| sum_row(&w[Buf::Probs], 0, h, i)))
                    )));
                }
                let rows: Vec<(usize, usize, usize)> = (0..B)
                    .flat_map(|b| (0..H).flat_map(move |h| (0..S).map(move |i| (b, h, i))))
                    .collect();
                let off = rows
                    .iter()
                    .filter(|&&(b, h, i)| (sum_row(&w[Buf::Probs], b, h, i) - 1.0).abs() > 1e-3)
                    .count();
                let sums: Vec<f32> = rows.iter().map(|&(b, h, i)| sum_row(&g[Buf::Probs], b, h, i)).collect();
                let lo = sums.iter().copied().fold(f32::INFINITY, f32::min);
                let hi = sums.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                out.push(note(tr!(
                    "{off} of {n} mistaken rows are off 1 by more than 0.001 · correct rows sum to 1 (min {lo}, max {hi})",
                    off,
                    n = rows.len(),
                    lo = format!("{lo:.4}"),
                    hi = format!("{hi:.4}")
                )));
                let whole = (0..H)
                    .map(|h| {
                        let sum: f32 = (0..S).map(|i| sum_row(&w[Buf::Probs], 0, h, i)).sum();
                        format!("h{h} {sum:.3}")
                    })
                    .collect::<Vec<_>>()
                    .join(" · ");
                out.push(note(tr!(
                    "each head's whole S×T matrix sums to 1 instead, b0: {whole}",
                    whole
                )));
            }
        }
    }
    out
}

/// Mistake 7's symptom in numbers: each key/value head's `d_v` (and `d_k`) is the share of the
/// group's last query head in the mistaken run, the sum of the group's shares in the correct
/// one. Each share is recomputed from the correct run's tensors, in the kernel's order.
fn overwritten_kv_grad(good: &Run, bad: &Run, mask: &Mask, out: &mut Vec<Note>) {
    let sh = good.shape;
    let (B, S, T, H, H_kv, D) = (sh.b, sh.s, sh.t, sh.h, sh.h_kv, sh.d());
    let G = H / H_kv.max(1);
    let (g, w, reg) = (&good.tensors, &bad.tensors, &good.registry);
    let (Some(kv), Some(rows), Some(pairs)) = (reg.layout(Buf::DV), reg.layout(Buf::Q), reg.layout(Buf::Scores)) else {
        return;
    };
    if !g.has(Buf::DV) {
        out.push(note(
            attn_trace_i18n::tr!("this run makes no backward pass: the mistake is in the gradients").to_string(),
        ));
        return;
    }
    let kv_at = |b, j, k, d| {
        kv.offset_of(&[(names::B, b), (names::J, j), (names::KV_H, k), (names::D, d)])
            .unwrap_or(0)
    };
    let row_at = |b, i, h, d| {
        rows.offset_of(&[(names::B, b), (names::I, i), (names::H, h), (names::D, d)])
            .unwrap_or(0)
    };
    let p = if g.has(Buf::ProbsDrop) {
        &g[Buf::ProbsDrop]
    } else {
        &g[Buf::Probs]
    };
    // the scale the kernel applied, as every other surface works it out
    let scale = crate::accum::Scale::of(good.variant, sh, 0).value;
    // head hh's share of d_v[b, j, ·, d] and of d_k[b, j, ·, d], summed over i as the kernel does
    let dv_share = |b, hh, j, d| {
        let mut s = 0.0f32;
        for i in 0..S {
            s += p[pair_offset(pairs, b, hh, i, j)] * g[Buf::DAtt][row_at(b, i, hh, d)];
        }
        s
    };
    let dk_share = |b, hh, j, d| {
        let mut s = 0.0f32;
        for i in (0..S).filter(|&i| !mask.hides(i, j)) {
            s += g[Buf::DScores][pair_offset(pairs, b, hh, i, j)] * g[Buf::Q][row_at(b, i, hh, d)];
        }
        s * scale
    };
    out.push(note(attn_trace_i18n::tr!(
        "{group} query heads share each key/value head (H = {heads}, H_kv = {kv_heads}): the correct run adds their shares into d_k and d_v, the mistaken run writes each over the last",
        group = G,
        heads = H,
        kv_heads = H_kv
    )));
    let show = |name: &str, buf: Buf, share: &dyn Fn(usize, usize, usize, usize) -> f32| -> Vec<Note> {
        let cells = |f: &dyn Fn(usize) -> f32| list((0..D).map(f));
        let mut lines = vec![note(attn_trace_i18n::tr!(
            "{name}[b0 j0 kv_h0 d0..{d_end}]: correct [{correct}] · mistaken [{mistaken}]",
            name,
            d_end = D,
            correct = cells(&|d| g[buf][kv_at(0, 0, 0, d)]),
            mistaken = cells(&|d| w[buf][kv_at(0, 0, 0, d)])
        ))];
        let heads = (0..G)
            .map(|hh| format!("h{hh} [{}]", cells(&|d| share(0, hh, 0, d))))
            .collect::<Vec<_>>()
            .join(" ");
        lines.push(note(attn_trace_i18n::tr!(
            "  the shares of query heads h0..h{last}: {heads}",
            last = G - 1,
            heads
        )));
        // over every cell: mistaken − last head's share, correct − the sum of the shares
        let (mut off_last, mut off_sum, mut cells_n) = (0.0f32, 0.0f32, 0);
        for b in 0..B {
            for j in 0..T {
                for k in 0..H_kv {
                    for d in 0..D {
                        let o = kv_at(b, j, k, d);
                        let sum = (k * G..(k + 1) * G).fold(0.0f32, |acc, hh| acc + share(b, hh, j, d));
                        off_last = off_last.max((w[buf][o] - share(b, (k + 1) * G - 1, j, d)).abs());
                        off_sum = off_sum.max((g[buf][o] - sum).abs());
                        cells_n += 1;
                    }
                }
            }
        }
        lines.push(note(attn_trace_i18n::tr!(
            "over all {cells} cells of {name}: mistaken − last head's share ≤ {off_last} · correct − sum of the shares ≤ {off_sum}",
            cells = cells_n,
            name,
            off_last = format!("{off_last:.1e}"),
            off_sum = format!("{off_sum:.1e}")
        )));
        lines
    };
    out.extend(show("d_v", Buf::DV, &dv_share));
    if good.rope.is_none() {
        out.extend(show("d_k", Buf::DK, &dk_share));
    }
    if g.has(Buf::DWQkv) && w.has(Buf::DWQkv) {
        let diff = g[Buf::DWQkv]
            .iter()
            .zip(&w[Buf::DWQkv])
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        out.push(note(attn_trace_i18n::tr!(
            "downstream, d_qkv, d_x and d_w_qkv are wrong too: d_w_qkv differs by up to {diff}",
            diff = format!("{diff:.3}")
        )));
    }
}

/// Offset of score `(b, h, i, j)` in a `[B,S,T]` or `[B,H,S,T]` layout (the baseline has no `h`).
fn pair_offset(pairs: &Layout, b: usize, h: usize, i: usize, j: usize) -> usize {
    pairs
        .offset_of(&[(names::B, b), (names::H, h), (names::I, i), (names::J, j)])
        .unwrap_or(usize::MAX)
}

/// `(i, j)` of a flat offset of a score-shaped layout.
fn query_key(pairs: &Layout, o: usize) -> (usize, usize) {
    (pairs.coord(o, names::I), pairs.coord(o, names::J))
}

fn hidden(mask: &Mask, (i, j): (usize, usize)) -> bool {
    mask.hides(i, j)
}
