//! The passes of a run in order: the forward pass (projections, the variant's attention core,
//! dropout, the output projection), the backward pass in reverse, and decoding token by token.
//! Each op's forward stands beside its backward.

use super::*;

/// The forward pass: the input projections (or the split, or nothing when starting at q, k, v),
/// the attention core of the variant, dropout, and the output projection (when there is one).
pub fn forward<R: Recorder>(rec: &mut R, t: &mut Tensors, variant: Variant, inputs: &Inputs) {
    use Buf::*;
    if let Some(lat) = inputs.plan().latent() {
        return latent_forward(rec, t, lat, inputs);
    }
    if inputs.decode {
        return generate(rec, t, variant, inputs);
    }
    let sh = inputs.shape;
    let (mask, m) = (&inputs.mask, inputs.mistakes);
    let (queries, keys) = ([sh.b, sh.s], [sh.b, sh.t]);
    // keys and values come from memory in cross-attention, else from x
    let mem = if t.has(Memory) { Memory } else { X };

    // input projections: q = x·W_q + b_q, k = m·W_k + b_k, v = m·W_v + b_v (fused: one of 3C)
    if m.has(Mistake::NoInputProjection) && t.has(X) {
        t.write([Q, K, V], |t, [q, k, v]| {
            attention_mistakes::no_input_projection(rec, sh, t.arg(X), t.arg(mem), q, k, v);
        });
    } else if t.has(WQkv) {
        t.write([Qkv], |t, [y]| {
            linear::forward(
                rec,
                Phase::QkvProj,
                keys,
                t.arg(X),
                t.arg(WQkv),
                t.has(BQkv).then(|| t.arg(BQkv)),
                (Qkv, y),
            );
        });
        t.write([Q, K, V], |t, [q, k, v]| {
            dispatch::split(rec, variant, sh, t.get(Qkv), q, k, v);
        });
    } else if t.has(WQ) {
        t.write([Q], |t, [y]| {
            let b = t.has(BQ).then(|| t.arg(BQ));
            linear::forward(rec, Phase::QProj, queries, t.arg(X), t.arg(WQ), b, (Q, y));
        });
        t.write([K], |t, [y]| {
            let b = t.has(BK).then(|| t.arg(BK));
            linear::forward(rec, Phase::KProj, keys, t.arg(mem), t.arg(WK), b, (K, y));
        });
        t.write([V], |t, [y]| {
            let b = t.has(BV).then(|| t.arg(BV));
            linear::forward(rec, Phase::VProj, keys, t.arg(mem), t.arg(WV), b, (V, y));
        });
    }

    // rotary positions: q and k turned pair by pair, by an angle that grows with the position
    let ksh = kernel_shape(sh, variant);
    if let Some(r) = inputs.rope {
        t.write([Q, K], |t, [q, k]| {
            let tables = (t.get(RopeCos), t.get(RopeSin));
            rope::forward(rec, ksh, r.pairs, (0..sh.b, 0..sh.t), tables, q, (K, k));
        });
    }

    // the attention core: flash's tiled loop, or the passes of the plain kernels
    if variant.desc().tiled {
        t.write(
            [Att, Lse, QTile, KTile, VTile, STile, RowMax, RowSum, Acc],
            |t, [att, lse, q_t, k_t, v_t, s_t, m, l, acc]| {
                let qkv = (t.get(Q), t.get(K), t.get(V));
                let sink = t.has(Sink).then(|| t.get(Sink));
                let tiles = ForwardTiles {
                    q_t,
                    k_t,
                    v_t,
                    s_t,
                    m,
                    l,
                    acc,
                };
                dispatch::flash_forward(rec, ksh, inputs.tiles, mask, qkv, sink, att, lse, tiles);
            },
        );
    } else {
        core_forward(rec, t, variant, inputs);
    }

    out_proj(rec, t, queries);
}

/// The output projection, when there is one: out = att·W_proj + b_proj.
fn out_proj<R: Recorder>(rec: &mut R, t: &mut Tensors, queries: [usize; 2]) {
    use Buf::*;
    if t.has(WProj) {
        t.write([Out], |t, [y]| {
            let (att, w, b) = (t.arg(Att), t.arg(WProj), t.has(BProj).then(|| t.arg(BProj)));
            linear::forward(rec, Phase::OutProj, queries, att, w, b, (Out, y));
        });
    }
}

/// Multi-head latent attention (`attention_mla.rs`): the training form's projections from x
/// and up from the latent, its scores, MHA's softmax and weighted sum, and the output
/// projection; or, decoding, the absorbed form step by step from the latent cache.
fn latent_forward<R: Recorder>(rec: &mut R, t: &mut Tensors, lat: Latent, inputs: &Inputs) {
    use Buf::*;
    let sh = inputs.shape;
    let (queries, keys) = ([sh.b, sh.s], [sh.b, sh.t]);
    // the latent sizes, for the offsets and the scale 1/√(D + DR) the panels show
    rec.constants(&["R", "DR"], &[lat.r, lat.dr]);
    if inputs.decode {
        t.write(
            [KvCache, Q, QLat, Scores, Probs, OLat, Att, Out],
            |t, [kv_cache, q, q_lat, scores, probs, o_lat, att, out]| {
                let weights = attention_mla::Weights {
                    x: t.get(X),
                    w_q: t.get(WQ),
                    w_dkv: t.get(WDkv),
                    w_kr: t.get(WKr),
                    w_uk: t.get(WUk),
                    w_uv: t.get(WUv),
                    w_proj: t.get(WProj),
                    b_proj: t.has(BProj).then(|| t.get(BProj)),
                    rope: inputs.rope.map(|r| (r.pairs, t.get(RopeCos), t.get(RopeSin))),
                };
                let written = attention_mla::Written {
                    kv_cache,
                    q,
                    q_lat,
                    scores,
                    probs,
                    o_lat,
                    att,
                    out,
                };
                attention_mla::decode(rec, sh, lat, &weights, written);
            },
        );
        return;
    }
    // q, the latent c_kv and the rotary key k_pe from x; each head's k_nope and v up from c_kv
    let projections = [
        (Phase::MlaQProj, queries, X, WQ, Q),
        (Phase::LatentProj, keys, X, WDkv, CKv),
        (Phase::KPeProj, keys, X, WKr, KPe),
        (Phase::KUp, keys, CKv, WUk, KNope),
        (Phase::VUp, keys, CKv, WUv, V),
    ];
    for (phase, rows, x, w, y) in projections {
        t.write([y], |t, [out]| {
            linear::forward(rec, phase, rows, t.arg(x), t.arg(w), None, (y, out));
        });
    }
    // rotary positions turn q_pe and k_pe only: the latent, and so k_nope, holds no position
    if let Some(r) = inputs.rope {
        t.write([Q, KPe], |t, [q, k_pe]| {
            let (tables, rows) = ((t.get(RopeCos), t.get(RopeSin)), (0..sh.b, 0..sh.t));
            rope::forward_latent(rec, sh, lat.dr, r.pairs, rows, tables, q, (LatentKey::KPe, k_pe));
        });
    }
    t.write([Scores], |t, [s]| {
        let k = (t.get(KNope), t.get(KPe));
        attention_mla::scores(rec, sh, lat, &inputs.mask, t.get(Q), k, s);
    });
    t.write([Probs], |t, [p]| {
        attention_mha::softmax_rows(rec, sh, t.get(Scores), p, None);
    });
    t.write([Att], |t, [att]| {
        attention_mha::weighted_sum(rec, sh, t.arg(Probs), t.get(V), att);
    });
    out_proj(rec, t, queries);
}

/// [`latent_forward`]'s training form, backwards: the output projection, MHA's weighted sum
/// and softmax, the scores' three gradients, then the projections in reverse, `d_c_kv` from
/// both up-projections and `d_x` from all three of x's.
fn latent_backward<R: Recorder>(rec: &mut R, t: &mut Tensors, lat: Latent, inputs: &Inputs) {
    use Buf::*;
    let sh = inputs.shape;
    let (queries, keys) = ([sh.b, sh.s], [sh.b, sh.t]);
    out_proj_back(rec, t, queries);
    t.write([DProbs, DV], |t, [dp, d_v]| {
        attention_mha::weighted_sum_back(rec, sh, t.arg(Probs), t.get(V), t.get(DAtt), (DProbs, dp), d_v);
    });
    t.write([DScores], |t, [ds]| {
        attention_mha::softmax_rows_back(rec, sh, (t.get(Probs), t.get(DProbs)), ds, None);
    });
    t.write([DQ, DKNope, DKPe], |t, [d_q, d_k_nope, d_k_pe]| {
        let k = (t.get(KNope), t.get(KPe));
        let grads = (d_q, d_k_nope, d_k_pe);
        attention_mla::scores_back(rec, sh, lat, &inputs.mask, t.get(Q), k, t.get(DScores), grads);
    });
    if let Some(r) = inputs.rope {
        t.write([DQ, DKPe], |t, [d_q, d_k_pe]| {
            let tables = (t.get(RopeCos), t.get(RopeSin));
            rope::backward_latent(rec, sh, lat.dr, r.pairs, tables, d_q, d_k_pe);
        });
    }
    // (phase, rows, input, weight, output's gradient, input's gradient, weight's, `+=`)
    let projections = [
        (Phase::VUpBack, keys, CKv, WUv, DV, DCKv, DWUv, false),
        (Phase::KUpBack, keys, CKv, WUk, DKNope, DCKv, DWUk, true),
        (Phase::KPeProjBack, keys, X, WKr, DKPe, DX, DWKr, false),
        (Phase::LatentProjBack, keys, X, WDkv, DCKv, DX, DWDkv, true),
        (Phase::MlaQProjBack, queries, X, WQ, DQ, DX, DWQ, true),
    ];
    for (phase, rows, x, w, dy, dx, dw, add) in projections {
        t.write([dx, dw], |t, [d_x, d_w]| {
            let (x, w, dy) = (t.arg(x), t.arg(w), t.arg(dy));
            linear::backward_into(rec, phase, rows, x, w, dy, (dx, d_x), (dw, d_w), None, add);
        });
    }
}

/// The plain kernels' attention core: S = Q·Kᵀ/√D + mask, P = softmax(S), (dropout), att = P·V.
fn core_forward<R: Recorder>(rec: &mut R, t: &mut Tensors, variant: Variant, inputs: &Inputs) {
    use Buf::*;
    let sh = inputs.shape;
    let (mask, m) = (&inputs.mask, inputs.mistakes);
    let ksh = kernel_shape(sh, variant);
    t.write([Scores], |t, [s]| {
        if m.has(Mistake::ScaleBySeqLen) || m.has(Mistake::MaskByMultiply) {
            attention_mistakes::scores(rec, ksh, mask, m, t.get(Q), t.get(K), s);
        } else {
            dispatch::scores(rec, variant, sh, mask, t.get(Q), t.get(K), s);
        }
    });
    // with sink logits (gpt-oss) each row's denominator has its head's sink, whose share of
    // the row goes to p_sink
    t.write([Probs, PSink], |t, [p, p_sink]| {
        if m.has(Mistake::SoftmaxOverTwoDims) {
            attention_mistakes::softmax_over_two_dims(rec, ksh, t.get(Scores), p);
        } else {
            let sink = t.has(Sink).then(|| Sinks {
                sink: t.get(Sink),
                p_sink,
            });
            dispatch::softmax_rows(rec, variant, sh, t.get(Scores), p, sink);
        }
    });
    let p = match inputs.dropout {
        Some(d) if t.has(ProbsDrop) => {
            t.write([ProbsDrop], |t, [pd]| {
                dropout::forward(rec, ksh, d.p, t.get(DropMask), t.get(Probs), pd);
            });
            ProbsDrop
        }
        _ => Probs,
    };
    t.write([Att], |t, [att]| {
        dispatch::weighted_sum(rec, variant, sh, t.arg(p), t.get(V), att);
    });
}

/// The backward pass from `d_out`, in the reverse order of [`forward`].
pub fn backward<R: Recorder>(rec: &mut R, t: &mut Tensors, variant: Variant, inputs: &Inputs) {
    use Buf::*;
    assert!(
        inputs.mistakes.allow_backward(),
        "only a backward mistake makes the backward pass"
    );
    let sh = inputs.shape;
    let mask = &inputs.mask;
    let queries = [sh.b, sh.s];
    if let Some(lat) = inputs.plan().latent() {
        return latent_backward(rec, t, lat, inputs);
    }

    out_proj_back(rec, t, queries);

    // the attention core, backwards: flash recomputes its tiles; the plain kernels walk back
    // their passes
    if variant.desc().tiled {
        let ksh = kernel_shape(sh, variant);
        t.write(
            [
                Delta, DQ, DK, DV, QTile, KTile, VTile, STile, DOTile, DSTile, DKTile, DVTile, PSink,
            ],
            |t, [delta, d_q, d_k, d_v, q_t, k_t, v_t, s_t, do_t, ds_t, dk_t, dv_t, p_sink]| {
                let qkv = (t.get(Q), t.get(K), t.get(V));
                let sink = t.has(Sink).then(|| Sinks {
                    sink: t.get(Sink),
                    p_sink,
                });
                let tiles = BackwardTiles {
                    q_t,
                    k_t,
                    v_t,
                    s_t,
                    do_t,
                    ds_t,
                    dk_t,
                    dv_t,
                };
                let saved = (t.get(Att), t.get(Lse));
                let grads = (d_q, d_k, d_v);
                dispatch::flash_backward(
                    rec,
                    ksh,
                    inputs.tiles,
                    mask,
                    qkv,
                    saved,
                    t.get(DAtt),
                    (delta, sink),
                    grads,
                    tiles,
                );
            },
        );
        if t.has(Sink) {
            t.write([DSink], |t, [d_sink]| {
                dispatch::sink_back(rec, variant, sh, (t.get(PSink), t.get(Delta)), d_sink);
            });
        }
    } else {
        core_backward(rec, t, variant, inputs);
    }
    rope_and_projections_backward(rec, t, variant, inputs);
}

/// The output projection, backwards: dAtt = dOut·W_projᵀ, dW_proj = attᵀ·dOut,
/// db_proj = Σ dOut; without one, out is att and its gradient is d_out unchanged.
fn out_proj_back<R: Recorder>(rec: &mut R, t: &mut Tensors, queries: [usize; 2]) {
    use Buf::*;
    if t.has(WProj) {
        t.write([DAtt, DWProj, DBProj], |t, [d_att, d_w, d_b]| {
            let (att, w, d_out) = (t.arg(Att), t.arg(WProj), t.arg(DOut));
            let (d_att, d_w, d_b) = ((DAtt, d_att), (DWProj, d_w), bias_grad(DBProj, d_b));
            linear::backward(rec, Phase::OutProjBack, queries, att, w, d_out, d_att, d_w, d_b);
        });
    } else {
        t.write([DAtt], |t, [d_att]| d_att.copy_from_slice(t.get(DOut)));
    }
}

/// A bias's gradient buffer as the linear layer's backward takes it: `None` when the run has no
/// biases (the buffer is empty).
fn bias_grad(buf: Buf, d_b: &mut [f32]) -> Option<(Buf, &mut [f32])> {
    (!d_b.is_empty()).then_some((buf, d_b))
}

/// The plain kernels' attention core, backwards: dP and dV, (dropout), dS, then dQ and dK.
fn core_backward<R: Recorder>(rec: &mut R, t: &mut Tensors, variant: Variant, inputs: &Inputs) {
    use Buf::*;
    let sh = inputs.shape;
    let mask = &inputs.mask;
    let (p, d_p) = if t.has(ProbsDrop) {
        (ProbsDrop, DProbsDrop)
    } else {
        (Probs, DProbs)
    };
    // (mistake 7 runs the grouped kernels' passes with d_v and d_k overwritten, not added to)
    let overwrite = inputs.mistakes.has(Mistake::OverwriteKvGrad);
    t.write([d_p, DV], |t, [dp, d_v]| {
        if overwrite {
            attention_gqa::d_probs(rec, sh, t.get(V), t.get(DAtt), (d_p, dp));
            attention_mistakes::d_values_overwritten(rec, sh, t.arg(p), t.get(DAtt), d_v);
        } else {
            dispatch::weighted_sum_back(rec, variant, sh, t.arg(p), t.get(V), t.get(DAtt), (d_p, dp), d_v);
        }
    });
    if let Some(d) = inputs.dropout.filter(|_| t.has(DropMask)) {
        let ksh = kernel_shape(sh, variant);
        t.write([DProbs], |t, [dp]| {
            dropout::backward(rec, ksh, d.p, t.get(DropMask), t.get(DProbsDrop), dp);
        });
    }
    // with sink logits each row's Σ dP·P is kept in delta, and the sinks' gradient read from it
    let sink = t.has(Sink);
    t.write([DScores, Delta], |t, [ds, delta]| {
        let delta = sink.then_some(delta);
        dispatch::softmax_rows_back(rec, variant, sh, (t.get(Probs), t.get(DProbs)), ds, delta);
    });
    if sink {
        t.write([DSink], |t, [d_sink]| {
            dispatch::sink_back(rec, variant, sh, (t.get(PSink), t.get(Delta)), d_sink);
        });
    }
    t.write([DQ, DK], |t, [d_q, d_k]| {
        if overwrite {
            attention_gqa::d_queries(rec, sh, mask, t.get(K), t.get(DScores), d_q);
            attention_mistakes::d_keys_overwritten(rec, sh, mask, t.get(Q), t.get(DScores), d_k);
        } else {
            dispatch::scores_back(rec, variant, sh, mask, t.get(Q), t.get(K), t.get(DScores), d_q, d_k);
        }
    });
}

/// Rotary positions and the input projections, backwards: from d_q, d_k, d_v to the inputs and
/// weights.
fn rope_and_projections_backward<R: Recorder>(rec: &mut R, t: &mut Tensors, variant: Variant, inputs: &Inputs) {
    use Buf::*;
    let sh = inputs.shape;
    let (queries, keys) = ([sh.b, sh.s], [sh.b, sh.t]);
    // rotary positions, backwards: dQ and dK turned back into the gradients of q and k as
    // they were before the rotation
    if let Some(r) = inputs.rope {
        let ksh = kernel_shape(sh, variant);
        t.write([DQ, DK], |t, [d_q, d_k]| {
            rope::backward(rec, ksh, r.pairs, (t.get(RopeCos), t.get(RopeSin)), d_q, d_k);
        });
    }

    // input projections, backwards
    if t.has(WQkv) {
        t.write([DQkv], |t, [d]| {
            dispatch::split_back(rec, variant, sh, t.get(DQ), t.get(DK), t.get(DV), d);
        });
        t.write([DX, DWQkv, DBQkv], |t, [d_x, d_w, d_b]| {
            let (x, w, dy) = (t.arg(X), t.arg(WQkv), t.arg(DQkv));
            linear::backward(
                rec,
                Phase::QkvProjBack,
                keys,
                x,
                w,
                dy,
                (DX, d_x),
                (DWQkv, d_w),
                bias_grad(DBQkv, d_b),
            );
        });
    } else if t.has(WQ) {
        // k and v read memory (cross-attention) or x: their input gradients add up there,
        // and in self-attention the query projection's adds to the same d_x
        let cross = t.has(Memory);
        let (mem, d_mem) = if cross { (Memory, DMemory) } else { (X, DX) };
        t.write([d_mem, DWV, DBV], |t, [d_m, d_w, d_b]| {
            let (m, w, dy) = (t.arg(mem), t.arg(WV), t.arg(DV));
            let (d_m, d_w, d_b) = ((d_mem, d_m), (DWV, d_w), bias_grad(DBV, d_b));
            linear::backward_into(rec, Phase::VProjBack, keys, m, w, dy, d_m, d_w, d_b, false);
        });
        t.write([d_mem, DWK, DBK], |t, [d_m, d_w, d_b]| {
            let (m, w, dy) = (t.arg(mem), t.arg(WK), t.arg(DK));
            let (d_m, d_w, d_b) = ((d_mem, d_m), (DWK, d_w), bias_grad(DBK, d_b));
            linear::backward_into(rec, Phase::KProjBack, keys, m, w, dy, d_m, d_w, d_b, true);
        });
        t.write([DX, DWQ, DBQ], |t, [d_x, d_w, d_b]| {
            let (x, w, dy) = (t.arg(X), t.arg(WQ), t.arg(DQ));
            let (d_x, d_w, d_b) = ((DX, d_x), (DWQ, d_w), bias_grad(DBQ, d_b));
            linear::backward_into(rec, Phase::QProjBack, queries, x, w, dy, d_x, d_w, d_b, !cross);
        });
    }
}

/// A decode run: every sequence generated token by token from the key/value cache
/// (`kernels/decode.rs`), in the kernel shape of the variant.
fn generate<R: Recorder>(rec: &mut R, t: &mut Tensors, variant: Variant, inputs: &Inputs) {
    use Buf::*;
    let ksh = kernel_shape(inputs.shape, variant);
    let pairs = inputs.rope.map(|r| r.pairs);
    t.write(
        [Q, KCache, VCache, Scores, Probs, PPart, LsePart, OPart, WPart, Att, Out],
        |t,
         [
            q,
            k_cache,
            v_cache,
            scores,
            probs,
            p_part,
            lse_part,
            o_part,
            w_part,
            att,
            out,
        ]| {
            let cache = match (&inputs.cache.paged, &inputs.mask) {
                (Some(p), _) => decode::Cache::Paged {
                    bs: p.block_size,
                    mb: p.per_row(ksh.t),
                    table: t.get(BlockTable),
                },
                (None, &Mask::Window { w, sinks }) => decode::Cache::Rolling { w, sinks },
                (None, _) => decode::Cache::Contiguous,
            };
            let given = decode::Given {
                x: t.get(X),
                w_qkv: t.get(WQkv),
                b_qkv: t.has(BQkv).then(|| t.get(BQkv)),
                w_proj: t.get(WProj),
                b_proj: t.has(BProj).then(|| t.get(BProj)),
                rope: pairs.map(|p| (p, t.get(RopeCos), t.get(RopeSin))),
                cache,
                split: inputs.cache.split,
            };
            let written = decode::Written {
                q,
                k_cache,
                v_cache,
                scores,
                probs,
                p_part,
                lse_part,
                o_part,
                w_part,
                att,
                out,
            };
            decode::generate(rec, ksh, &given, written);
        },
    );
}
