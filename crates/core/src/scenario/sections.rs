//! The tables of a scenario, one function each: `[shape]`, `[run]` (with an explicit mask),
//! `[init]`, `[values]` and `[focus]`. Each checks its own keys, types and ranges.

use super::reader::{Doc, Result, Value};
use super::{Dist, Focus, Init, Mode, Options, Qkv};
use crate::engine::registry::{GIVEN, given_shape};
use crate::engine::{Dropout, Passes};
use crate::kernels::attention_flash::Tiles;
use crate::kernels::attention_mistakes::{Mistake, Mistakes};
use crate::kernels::attention_mla::Latent;
use crate::kernels::decode::{CacheSpec, Paged};
use crate::kernels::rope::{DEFAULT_BASE, Pairs, Rope};
use crate::kernels::{Mask, Variant};
use crate::tensor::{Shape, checked_numel};
use crate::trace::{Buf, Pass};
use attn_trace_i18n::tr;
use std::collections::BTreeMap;
use toml::de::{DeTable, DeValue};

/// Keys of each table, in the order the docs list them.
pub(super) const ROOT_KEYS: &[&str] = &[
    "title", "about", "shape", "run", "init", "values", "focus", "flash", "paged",
];
pub(super) const SHAPE_KEYS: &[&str] = &["B", "S", "T", "C", "H", "H_kv", "kv_rank", "rope_dim", "L"];
pub(super) const RUN_KEYS: &[&str] = &[
    "variants",
    "passes",
    "mask",
    "window",
    "sinks",
    "sink_logit",
    "qkv",
    "dropout",
    "dropout_seed",
    "mode",
    "mistakes",
    "rope",
    "rope_base",
    "decode",
    "split_kv",
    "bias",
];
pub(super) const INIT_KEYS: &[&str] = &["seed", "dist", "std", "scale"];
pub(super) const FOCUS_KEYS: &[&str] = &["variant", "pass", "b", "h", "i", "j"];
pub(super) const FLASH_KEYS: &[&str] = &["br", "bc"];
pub(super) const PAGED_KEYS: &[&str] = &["block_size", "num_blocks", "table", "seed"];

/// The choices of a field that names one of `all`, each by its name.
fn named<T: Clone>(all: &[T], name: impl Fn(&T) -> &'static str) -> Vec<(&'static str, T)> {
    all.iter().map(|x| (name(x), x.clone())).collect()
}

pub(super) const DISTS: &[&str] = &["normal", "uniform", "zeros", "ones", "arange"];

/// The `[run]` table.
pub(super) struct RunTable {
    pub variants: Vec<Variant>,
    pub passes: Passes,
    pub mask: Mask,
    pub opts: Options,
}

/// The sizes, and whether `S` (cross-attention) was given.
pub(super) fn parse_shape(doc: &Doc<'_>, v: &Value<'_>) -> Result<(Shape, bool)> {
    let t = doc.table(v, "[shape]")?;
    doc.known_keys(t, SHAPE_KEYS, "shape")?;
    let get = |key: &str| -> Result<usize> {
        match t.get(key) {
            Some(x) => doc.size(x, &format!("[shape].{key}")),
            None => Err(doc.err(
                Some(v.span()),
                &format!("[shape].{key}"),
                tr!("missing: [shape] needs B, T and C (and optionally H, default 1)"),
            )),
        }
    };
    let (b, tt, c) = (get("B")?, get("T")?, get("C")?);
    let h = match t.get("H") {
        Some(x) => doc.size(x, "[shape].H")?,
        None => 1,
    };
    if c % h != 0 {
        let span = t.get("H").map(toml::Spanned::span);
        return Err(doc.err(
            span,
            "[shape].H",
            tr!(
                "C = {c} is not divisible by H = {h}: every head needs D = C/H whole channels",
                c,
                h
            ),
        ));
    }
    let h_kv = match t.get("H_kv") {
        Some(x) => {
            let h_kv = doc.size(x, "[shape].H_kv")?;
            if h % h_kv != 0 {
                return Err(doc.err(
                    Some(x.span()),
                    "[shape].H_kv",
                    tr!(
                        "H = {h} is not divisible by H_kv = {h_kv}: each key/value head serves H/H_kv query heads (try a divisor of {h})",
                        h,
                        h_kv
                    ),
                ));
            }
            h_kv
        }
        None => h,
    };
    let shape = match t.get("S") {
        Some(x) => (Shape::cross(b, doc.size(x, "[shape].S")?, tt, c, h), true),
        None => (Shape::new(b, tt, c, h), false),
    };
    Ok((shape.0.with_kv_heads(h_kv), shape.1))
}

/// Most layers a scenario may have: `grade` runs the reference once per layer, and a few
/// layers are what a layer offset needs.
pub const MAX_LAYERS: usize = 64;

/// `[shape] L`: the layers `grade` and `inputs` run (1 when left out).
pub(super) fn parse_layers(doc: &Doc<'_>, v: &Value<'_>) -> Result<usize> {
    let t = doc.table(v, "[shape]")?;
    match t.get("L") {
        Some(x) => {
            let what = tr!("a number of layers from 1 to {max}", max = MAX_LAYERS);
            Ok(doc.integer(x, "[shape].L", 1, MAX_LAYERS as i128, &what)? as usize)
        }
        None => Ok(1),
    }
}

/// Multi-head latent attention's sizes, `[shape] kv_rank = R, rope_dim = DR`, when given: both
/// or neither, each at least 1.
pub(super) fn parse_latent(doc: &Doc<'_>, v: &Value<'_>) -> Result<Option<Latent>> {
    let t = doc.table(v, "[shape]")?;
    match (t.get("kv_rank"), t.get("rope_dim")) {
        (None, None) => Ok(None),
        (Some(r), Some(dr)) => Ok(Some(Latent {
            r: doc.size(r, "[shape].kv_rank")?,
            dr: doc.size(dr, "[shape].rope_dim")?,
        })),
        (Some(x), None) | (None, Some(x)) => {
            let field = if t.get("kv_rank").is_some() {
                "[shape].rope_dim"
            } else {
                "[shape].kv_rank"
            };
            Err(doc.err(
                Some(x.span()),
                field,
                tr!("missing: multi-head latent attention needs both kv_rank (R, the latent's channels) and rope_dim (DR, the rotary channels)"),
            ))
        }
    }
}

pub(super) fn parse_run(doc: &Doc<'_>, v: &Value<'_>, shape: Shape, cross: bool) -> Result<RunTable> {
    let t = doc.table(v, "[run]")?;
    doc.known_keys(t, RUN_KEYS, "run")?;
    let variants = match t.get("variants") {
        Some(x) => doc.names(x, "[run].variants", &named(&Variant::ALL, |v| v.name()), tr!("variant"))?,
        None => Variant::DEFAULT.to_vec(),
    };
    let passes = match t.get("passes") {
        Some(x) => {
            let list = doc.names(x, "[run].passes", &named(&Pass::ALL, |p| p.name()), tr!("pass"))?;
            Passes {
                forward: list.contains(&Pass::Forward),
                backward: list.contains(&Pass::Backward),
            }
        }
        None => Passes::BOTH,
    };
    let mask = match t.get("mask") {
        Some(x) if matches!(x.get_ref(), DeValue::Array(_)) => mask_matrix(doc, x, shape)?,
        Some(x) => doc.choice(x, "[run].mask", &named(&Mask::NAMED, Mask::name), tr!("mask"))?,
        None => Mask::Causal,
    };
    let mask = parse_window(doc, t, mask, shape, cross)?;
    let qkv = match t.get("qkv") {
        Some(x) => doc.choice(x, "[run].qkv", &named(&Qkv::ALL, |q| q.name()), tr!("qkv"))?,
        None => Qkv::Fused,
    };
    let dropout = match t.get("dropout") {
        Some(x) => {
            let p = doc.number(x, "[run].dropout")?;
            if !(0.0..1.0).contains(&p) {
                return Err(doc.err(
                    Some(x.span()),
                    "[run].dropout",
                    tr!("expected a probability in [0, 1), found {p}", p),
                ));
            }
            let seed = match t.get("dropout_seed") {
                Some(s) => doc.integer(
                    s,
                    "[run].dropout_seed",
                    0,
                    i64::MAX as i128,
                    tr!("a non-negative integer"),
                )? as u64,
                None => 0,
            };
            (p > 0.0).then_some(Dropout { p, seed })
        }
        None => {
            if let Some(s) = t.get("dropout_seed") {
                return Err(doc.err(
                    Some(s.span()),
                    "[run].dropout_seed",
                    tr!("there is no dropout to seed: set [run].dropout too"),
                ));
            }
            None
        }
    };
    let mode = match t.get("mode") {
        Some(x) => doc.choice(x, "[run].mode", &named(&Mode::ALL, |m| m.name()), tr!("mode"))?,
        None => Mode::Train,
    };
    let mistakes = match t.get("mistakes") {
        Some(x) => {
            let table = named(&Mistake::ALL, |m| m.name());
            Mistakes::of(&doc.names(x, "[run].mistakes", &table, tr!("mistake"))?)
        }
        None => Mistakes::NONE,
    };
    let rope = match t.get("rope") {
        Some(x) => {
            let pairs = doc.choice(x, "[run].rope", &named(&Pairs::ALL, |p| p.name()), "rope")?;
            let base = match t.get("rope_base") {
                Some(b) => {
                    let base = doc.number(b, "[run].rope_base")?;
                    if base <= 1.0 {
                        return Err(doc.err(
                            Some(b.span()),
                            "[run].rope_base",
                            tr!(
                                "expected a number above 1 (θ_m = base^(−2m/D) must shrink with m), found {base}",
                                base
                            ),
                        ));
                    }
                    base
                }
                None => DEFAULT_BASE,
            };
            Some(Rope { pairs, base })
        }
        None => {
            if let Some(b) = t.get("rope_base") {
                return Err(doc.err(
                    Some(b.span()),
                    "[run].rope_base",
                    "there is no rotation to set the base of: set [run].rope = \"interleaved\" or \"half\" too",
                ));
            }
            None
        }
    };
    let decode = match t.get("decode") {
        Some(x) => doc.boolean(x, "[run].decode")?,
        None => false,
    };
    // a split decode step: P parts of at least one position each
    let split = match t.get("split_kv") {
        Some(x) => {
            let max = shape.t as i128;
            let what = tr!("a number of parts from 1 to T = {max}", max);
            Some(doc.integer(x, "[run].split_kv", 1, max, &what)? as usize)
        }
        None => None,
    };
    let sink_logit = match t.get("sink_logit") {
        Some(x) => doc.boolean(x, "[run].sink_logit")?,
        None => false,
    };
    let bias = match t.get("bias") {
        Some(x) => doc.boolean(x, "[run].bias")?,
        None => true,
    };
    // a decode run generates: forward only, so its default is the forward pass alone
    let passes = if decode && t.get("passes").is_none() {
        Passes::FORWARD
    } else {
        passes
    };
    Ok(RunTable {
        variants,
        passes,
        mask,
        opts: Options {
            cross,
            qkv,
            dropout,
            mode,
            mistakes,
            rope,
            decode,
            cache: CacheSpec { paged: None, split },
            sink_logit,
            latent: None,
            tiles: Tiles::default(),
            bias,
        },
    })
}

/// `[run] window = W` and `sinks = N`: the causal mask narrowed to a band of `W` keys, with the
/// first `N` positions kept visible to every query. A window is causal by definition, so it
/// refuses another mask and cross-attention (whose keys are not positions of the queries').
fn parse_window(doc: &Doc<'_>, t: &DeTable<'_>, mask: Mask, shape: Shape, cross: bool) -> Result<Mask> {
    let Some(x) = t.get("window") else {
        if let Some(n) = t.get("sinks") {
            return Err(doc.err(
                Some(n.span()),
                "[run].sinks",
                tr!("sink tokens stay visible when a window would hide them: set [run].window too"),
            ));
        }
        return Ok(mask);
    };
    let w = doc.size(x, "[run].window")?;
    let why = if mask != Mask::Causal {
        tr!("a sliding window narrows the causal mask: remove [run].mask or set it to \"causal\"")
    } else if cross {
        tr!("a sliding window counts positions of one sequence: remove [shape].S (cross-attention)")
    } else {
        ""
    };
    if !why.is_empty() {
        return Err(doc.err(Some(x.span()), "[run].window", why));
    }
    let sinks = match t.get("sinks") {
        Some(n) => {
            let max = shape.t as i128;
            doc.integer(n, "[run].sinks", 0, max, &tr!("an integer from 0 to T = {max}", max))? as usize
        }
        None => 0,
    };
    Ok(Mask::Window { w, sinks })
}

/// The `[flash]` table: the tile sizes, `br` query rows and `bc` key columns (2 and 2 when
/// left out). Any positive size is allowed; one larger than the sequence makes a single tile.
pub(super) fn parse_flash(doc: &Doc<'_>, v: &Value<'_>) -> Result<Tiles> {
    let t = doc.table(v, "[flash]")?;
    doc.known_keys(t, FLASH_KEYS, "flash")?;
    let default = Tiles::default();
    let get = |key: &str, default: usize| match t.get(key) {
        Some(x) => doc.size(x, &format!("[flash].{key}")),
        None => Ok(default),
    };
    Ok(Tiles {
        br: get("br", default.br)?,
        bc: get("bc", default.bc)?,
    })
}

/// `[paged]`: a pool of `num_blocks` blocks of `block_size` positions, and either the block
/// `table` (a row of `⌈T/BS⌉` block ids per sequence) or a `seed` that deals out blocks shuffled.
/// Two sequences may share a block only at the same place in their rows, as prefix caching
/// shares the blocks of a common prefix (their tokens there are checked once the values are).
pub(super) fn parse_paged(doc: &Doc<'_>, v: &Value<'_>, shape: Shape) -> Result<Paged> {
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

/// An explicit mask: `S` rows of `T` entries, 1 (or true) where query `i` may see key `j`.
pub(super) fn mask_matrix(doc: &Doc<'_>, v: &Value<'_>, shape: Shape) -> Result<Mask> {
    let (s, t) = (shape.s, shape.t);
    let field = "[run].mask";
    let expected = tr!(
        "an S×T = {s}×{t} matrix of 0 and 1 (1: the query may see the key)",
        s,
        t
    );
    let DeValue::Array(rows) = v.get_ref() else {
        return Err(doc.err(Some(v.span()), field, tr!("expected {expected}", expected)));
    };
    if rows.len() != s {
        return Err(doc.err(
            Some(v.span()),
            field,
            tr!("expected {expected}, found {n} rows", expected, n = rows.len()),
        ));
    }
    let mut keep = Vec::with_capacity(s);
    for (i, row) in rows.iter().enumerate() {
        let f = format!("{field}[{i}]");
        let DeValue::Array(items) = row.get_ref() else {
            return Err(doc.err(
                Some(row.span()),
                &f,
                tr!(
                    "expected a row of {t} entries, found {found}",
                    t,
                    found = doc.found(row)
                ),
            ));
        };
        if items.len() != t {
            return Err(doc.err(
                Some(row.span()),
                &f,
                tr!("expected a row of {t} entries, found {found}", t, found = items.len()),
            ));
        }
        let mut out = Vec::with_capacity(t);
        for (j, item) in items.iter().enumerate() {
            let visible = match item.get_ref() {
                DeValue::Boolean(b) => *b,
                DeValue::Integer(n) if matches!(n.as_str(), "0" | "1") => n.as_str() == "1",
                _ => {
                    return Err(doc.err(
                        Some(item.span()),
                        &format!("{f}[{j}]"),
                        tr!("expected 0 or 1, found {found}", found = doc.found(item)),
                    ));
                }
            };
            out.push(visible);
        }
        if !out.contains(&true) {
            return Err(doc.err(
                Some(row.span()),
                &f,
                tr!(
                    "query {i} may see no key: softmax of a row of −1e9 is uniform, not zero; give it at least one 1",
                    i
                ),
            ));
        }
        keep.push(out);
    }
    Ok(Mask::explicit(&keep))
}

pub(super) fn parse_init(doc: &Doc<'_>, v: &Value<'_>) -> Result<Init> {
    let t = doc.table(v, "[init]")?;
    doc.known_keys(t, INIT_KEYS, "init")?;
    let seed = match t.get("seed") {
        Some(x) => doc.integer(x, "[init].seed", 0, i64::MAX as i128, tr!("a non-negative integer"))? as u64,
        None => 0,
    };
    let dist_name = match t.get("dist") {
        Some(x) => {
            let name = doc.string(x, "[init].dist")?;
            if !DISTS.contains(&name) {
                let quoted: Vec<String> = DISTS.iter().map(|d| format!("\"{d}\"")).collect();
                return Err(doc.err(
                    Some(x.span()),
                    "[init].dist",
                    tr!(
                        "unknown dist \"{name}\"; expected one of {choices}",
                        name,
                        choices = quoted.join(", ")
                    ),
                ));
            }
            name
        }
        None => "normal",
    };
    // each dist takes at most its own parameter; another one is a mistake, not a no-op
    let param = |key: &str, default: f32, non_negative: bool| -> Result<f32> {
        let field = format!("[init].{key}");
        match t.get(key) {
            Some(x) => {
                let p = doc.number(x, &field)?;
                if non_negative && p < 0.0 {
                    return Err(doc.err(
                        Some(x.span()),
                        &field,
                        tr!("expected a non-negative number, found {p}", p),
                    ));
                }
                Ok(p)
            }
            None => Ok(default),
        }
    };
    let reject = |key: &str| -> Result<()> {
        match t.get(key) {
            Some(x) => Err(doc.err(
                Some(x.span()),
                &format!("[init].{key}"),
                tr!("dist = \"{dist_name}\" takes no {key}; std goes with \"normal\", scale with \"uniform\" and \"arange\"", dist_name, key),
            )),
            None => Ok(()),
        }
    };
    let dist = match dist_name {
        "normal" => {
            reject("scale")?;
            Dist::Normal {
                std: param("std", super::DEFAULT_STD, true)?,
            }
        }
        "uniform" => {
            reject("std")?;
            Dist::Uniform {
                scale: param("scale", 1.0, true)?,
            }
        }
        "arange" => {
            reject("std")?;
            Dist::Arange {
                scale: param("scale", 1.0, false)?,
            }
        }
        other => {
            reject("std")?;
            reject("scale")?;
            if other == "zeros" { Dist::Zeros } else { Dist::Ones }
        }
    };
    Ok(Init { seed, dist })
}

pub(super) fn parse_values(
    doc: &Doc<'_>,
    v: &Value<'_>,
    sh: Shape,
    latent: Option<Latent>,
    passes: Passes,
) -> Result<BTreeMap<Buf, Vec<f32>>> {
    let t = doc.table(v, "[values]")?;
    let names = GIVEN.map(Buf::name);
    doc.known_keys(t, &names, "values")?;
    let mut values = BTreeMap::new();
    // in file order, so the first bad tensor reported is the first one the reader meets
    let mut entries: Vec<_> = t.iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    for (key, x) in entries {
        let Some(buf) = Buf::from_name(key.get_ref()) else {
            continue;
        };
        // latent attention's weights have no shape without its sizes
        if latent.is_none() && matches!(buf, Buf::WDkv | Buf::WKr | Buf::WUk | Buf::WUv) {
            return Err(doc.err(
                Some(x.span()),
                &field(buf),
                tr!("only the \"mla\" variant reads this weight: add \"mla\" to [run].variants with [shape].kv_rank and rope_dim, or remove it"),
            ));
        }
        let shape = given_shape(buf, sh, latent);
        values.insert(buf, tensor(doc, x, &field(buf), &shape)?);
    }

    // where the run starts decides which tensors may be given together
    let has = |b: Buf| t.get(b.name());
    let core: Vec<Buf> = [Buf::Q, Buf::K, Buf::V]
        .into_iter()
        .filter(|&b| has(b).is_some())
        .collect();
    if !core.is_empty() {
        if core.len() < 3 {
            let missing: Vec<&str> = [Buf::Q, Buf::K, Buf::V]
                .into_iter()
                .filter(|&b| has(b).is_none())
                .map(Buf::name)
                .collect();
            let first = has(core[0]).map(toml::Spanned::span);
            return Err(doc.err(
                first,
                &field(core[0]),
                tr!(
                    "q, k and v start the run at the attention core and must be given together; missing {missing}",
                    missing = missing.join(tr!(" and "))
                ),
            ));
        }
        let projections = [
            Buf::X,
            Buf::WQkv,
            Buf::BQkv,
            Buf::WQ,
            Buf::BQ,
            Buf::WK,
            Buf::BK,
            Buf::WV,
            Buf::BV,
        ];
        if let Some(b) = projections.into_iter().find(|&b| has(b).is_some()) {
            return Err(doc.err(
                has(b).map(toml::Spanned::span),
                &field(b),
                tr!("not used when q, k and v are given (the run starts at the attention core, after the input projection)"),
            ));
        }
        let (w, b) = (has(Buf::WProj), has(Buf::BProj));
        if w.is_some() != b.is_some() {
            let (given, missing, span) = match w {
                Some(w) => (Buf::WProj, Buf::BProj, w.span()),
                None => (Buf::BProj, Buf::WProj, b.map_or(0..0, toml::Spanned::span)),
            };
            return Err(doc.err(
                Some(span),
                &field(given),
                tr!(
                    "the output projection needs both w_proj and b_proj; missing {missing}",
                    missing = missing.name()
                ),
            ));
        }
    }
    if let Some(x) = has(Buf::DOut)
        && !passes.backward
    {
        return Err(doc.err(
            Some(x.span()),
            &field(Buf::DOut),
            tr!("only the backward pass reads d_out; add \"backward\" to [run].passes or remove d_out"),
        ));
    }
    Ok(values)
}

/// The field of a given buffer: `[values].NAME`.
pub(super) fn field(buf: Buf) -> String {
    format!("[values].{}", buf.name())
}

/// One tensor: a flat array of `numel(shape)` numbers, or nested arrays whose inner levels are
/// the trailing dimensions of `shape` and whose outer level holds all the leading ones (so a
/// `[B,T,C]` tensor may be written flat, as `B*T` rows of `C`, or fully nested).
pub(super) fn tensor(doc: &Doc<'_>, v: &Value<'_>, field: &str, shape: &[usize]) -> Result<Vec<f32>> {
    let dims_text = shape.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
    let Some(expected) = checked_numel(shape) else {
        return Err(doc.err(
            Some(v.span()),
            field,
            tr!(
                "shape [{dims_text}] has more elements than memory can address: use smaller sizes",
                dims_text
            ),
        ));
    };
    let DeValue::Array(_) = v.get_ref() else {
        return Err(doc.err(
            Some(v.span()),
            field,
            tr!(
                "expected an array of {expected} numbers (shape [{dims_text}]), found {found}",
                expected,
                dims_text,
                found = doc.found(v)
            ),
        ));
    };
    // the nesting, read down the first elements; every other branch must match it
    let mut dims = Vec::new();
    let mut probe = v;
    while let DeValue::Array(a) = probe.get_ref() {
        dims.push(a.len());
        match a.first() {
            Some(first) => probe = first,
            None => break,
        }
    }
    let mut out = Vec::with_capacity(expected.min(1 << 20));
    collect(doc, v, field, &dims, &mut out)?;

    let n = dims.len();
    let fits = n <= shape.len()
        && dims[1..] == shape[shape.len() + 1 - n..]
        && checked_numel(&shape[..shape.len() + 1 - n]) == Some(dims[0]);
    if !fits {
        let found = if n == 1 {
            tr!("{n} numbers", n = dims[0])
        } else {
            tr!(
                "nesting [{dims}]",
                dims = dims.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
            )
        };
        return Err(doc.err(
            Some(v.span()),
            field,
            tr!(
                "expected shape [{dims_text}] ({expected} numbers, flat or nested), found {found}",
                dims_text,
                expected,
                found
            ),
        ));
    }
    Ok(out)
}

/// Walks nested arrays whose level `k` must hold `dims[k]` entries, appending the numbers.
pub(super) fn collect(doc: &Doc<'_>, v: &Value<'_>, field: &str, dims: &[usize], out: &mut Vec<f32>) -> Result<()> {
    let items: &[Value<'_>] = match v.get_ref() {
        DeValue::Array(items) => items,
        _ => &[],
    };
    let (len, inner) = (dims[0], &dims[1..]);
    if items.len() != len {
        return Err(doc.err(
            Some(v.span()),
            field,
            tr!(
                "ragged nesting: expected {len} entries like the first row at this level, found {found}",
                len,
                found = items.len()
            ),
        ));
    }
    for (k, item) in items.iter().enumerate() {
        let f = format!("{field}[{k}]");
        match (item.get_ref(), inner.is_empty()) {
            (DeValue::Array(_), false) => collect(doc, item, &f, inner, out)?,
            (DeValue::Array(_), true) => {
                return Err(doc.err(
                    Some(item.span()),
                    &f,
                    tr!("ragged nesting: expected a number here like the other entries at this level, found an array"),
                ));
            }
            (_, false) => {
                return Err(doc.err(
                    Some(item.span()),
                    &f,
                    tr!(
                        "ragged nesting: expected an array of {n} entries like the first row, found {found}",
                        n = inner[0],
                        found = doc.found(item)
                    ),
                ));
            }
            (_, true) => out.push(doc.number(item, &f)?),
        }
    }
    Ok(())
}

pub(super) fn parse_focus(
    doc: &Doc<'_>,
    v: &Value<'_>,
    sh: Shape,
    variants: &[Variant],
    passes: Passes,
) -> Result<Focus> {
    let t = doc.table(v, "[focus]")?;
    doc.known_keys(t, FOCUS_KEYS, "focus")?;
    let variant = match t.get("variant") {
        Some(x) => {
            let var = doc.choice(
                x,
                "[focus].variant",
                &named(&Variant::ALL, |v| v.name()),
                tr!("variant"),
            )?;
            if !variants.contains(&var) {
                return Err(doc.err(
                    Some(x.span()),
                    "[focus].variant",
                    tr!("variant \"{var}\" is not among [run].variants", var),
                ));
            }
            Some(var)
        }
        None => None,
    };
    let pass = match t.get("pass") {
        Some(x) => {
            let p = doc.choice(x, "[focus].pass", &named(&Pass::ALL, |p| p.name()), tr!("pass"))?;
            let runs = match p {
                Pass::Forward => passes.forward,
                Pass::Backward => passes.backward,
            };
            if !runs {
                return Err(doc.err(
                    Some(x.span()),
                    "[focus].pass",
                    tr!("pass \"{pass}\" is not among [run].passes", pass = p.name()),
                ));
            }
            Some(p)
        }
        None => None,
    };
    let index = |key: &str, size: usize, what: String| -> Result<usize> {
        match t.get(key) {
            Some(x) => Ok(doc.integer(x, &format!("[focus].{key}"), 0, size as i128 - 1, &what)? as usize),
            None => Ok(0),
        }
    };
    let range = |size: usize, dim: &str| {
        if size == 1 {
            tr!("0 (the only index, since {dim} = 1)", dim)
        } else {
            tr!("an index in 0..{size} ({dim} = {size})", size, dim)
        }
    };
    // the baseline has a single head, so a focus on it can only name head 0
    let (heads, h_what) = match variant {
        Some(Variant::Baseline) => (1, tr!("0 (the baseline has a single head)").to_string()),
        _ => (sh.h, range(sh.h, "H")),
    };
    Ok(Focus {
        variant,
        pass,
        b: index("b", sh.b, range(sh.b, "B"))?,
        h: index("h", heads, h_what)?,
        i: index("i", sh.s, range(sh.s, if sh.is_cross() { "S" } else { "T" }))?,
        j: index("j", sh.t, range(sh.t, "T"))?,
    })
}
