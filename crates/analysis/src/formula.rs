//! The offset formulas as the docs write them, and the same formulas with an event's numbers
//! substituted: `q_base = ((bb*S + i)*H + hh)*D = ((0*3 + 2)*2 + 1)*2 = 10`.
//!
//! The kernels compute these offsets in code and record the values; this table holds the text.
//! A test evaluates every formula for every recorded iteration and compares it with the value
//! the kernel recorded, so the text cannot drift from the code.

use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::{Buf, EventView, Phase};
use std::fmt;

/// `(kernel file, offset name, formula)`, spelt as the kernel spells it: the loops' `bb` and `hh`,
/// `S` the number of queries and `T` of keys (in self-attention `S` = `T`, and the kernels still
/// write `S`).
const FORMULAS: &[(&str, &str, &str)] = &[
    ("attention_1h.rs", "qi", "(bb*S + i)*C"),
    ("attention_1h.rs", "kj", "(bb*T + j)*C"),
    ("attention_1h.rs", "off", "(bb*S + i)*T + j"),
    ("attention_1h.rs", "row", "(bb*S + i)*T"),
    ("attention_1h.rs", "ai", "(bb*S + i)*C"),
    ("attention_1h.rs", "vj", "(bb*T + j)*C"),
    ("attention_mha.rs", "q_base", "((bb*S + i)*H + hh)*D"),
    ("attention_mha.rs", "k_base", "((bb*T + j)*H + hh)*D"),
    ("attention_mha.rs", "off", "((bb*H + hh)*S + i)*T + j"),
    // the sink logits' gradient walks rows (b, h, i), not pairs
    ("attention_mha.rs", "off", "(bb*H + hh)*S + i"),
    ("attention_mha.rs", "row", "((bb*H + hh)*S + i)*T"),
    ("attention_mha.rs", "a_base", "((bb*S + i)*H + hh)*D"),
    ("attention_mha.rs", "v_base", "((bb*T + j)*H + hh)*D"),
    ("attention_mistakes.rs", "qi", "(bb*S + i)*C"),
    ("attention_mistakes.rs", "kj", "(bb*T + j)*C"),
    ("attention_mistakes.rs", "q_base", "((bb*S + i)*H + hh)*D"),
    ("attention_mistakes.rs", "k_base", "((bb*T + j)*H + hh)*D"),
    ("attention_mistakes.rs", "off", "((bb*H + hh)*S + i)*T + j"),
    ("attention_mistakes.rs", "row", "(bb*H + hh)*S*T"),
    ("dropout.rs", "row", "((bb*H + hh)*S + i)*T"),
    ("dropout.rs", "off", "row + j"),
    // the merge of a split decode step takes the softmax of the parts' log-sum-exps
    ("softmax.rs", "off", "lse_row + p"),
    ("softmax.rs", "off", "row + j"),
    ("split.rs", "qi", "(bb*T + i)*C"),
    ("split.rs", "ri", "(bb*T + i)*3*C"),
    ("linear.rs", "xi", "(bb*T + i)*IC"),
    ("linear.rs", "yi", "(bb*T + i)*OC"),
    ("linear.rs", "w_off", "c*OC + o"),
    // flash names a query row i = i0 + ii inside a tile and i in its row-by-row pass; where one
    // name has two formulas, the one whose symbols are all in scope is the one that ran
    ("attention_flash.rs", "q_base", "((bb*S + i0 + ii)*H + hh)*D"),
    ("attention_flash.rs", "k_base", "((bb*T + j0 + jj)*H + hh)*D"),
    ("attention_flash.rs", "a_base", "((bb*S + i0 + ii)*H + hh)*D"),
    ("attention_flash.rs", "a_base", "((bb*S + i)*H + hh)*D"),
    ("attention_flash.rs", "off", "(bb*H + hh)*S + i0 + ii"),
    ("attention_flash.rs", "off", "(bb*H + hh)*S + i"),
    ("attention_gqa.rs", "kv_h", "hh/(H/H_kv)"),
    ("attention_gqa.rs", "q_base", "((bb*S + i)*H + hh)*D"),
    ("attention_gqa.rs", "k_base", "((bb*T + j)*H_kv + kv_h)*D"),
    ("attention_gqa.rs", "off", "((bb*H + hh)*S + i)*T + j"),
    ("attention_gqa.rs", "a_base", "((bb*S + i)*H + hh)*D"),
    ("attention_gqa.rs", "row", "((bb*H + hh)*S + i)*T"),
    ("attention_gqa.rs", "v_base", "((bb*T + j)*H_kv + kv_h)*D"),
    ("attention_gqa.rs", "kv_base", "((bb*T + j)*H_kv + kv_h)*D"),
    ("attention_gqa.rs", "ri", "(bb*T + i)*(C + 2*H_kv*D)"),
    ("attention_gqa.rs", "qi", "(bb*T + i)*C"),
    ("attention_gqa.rs", "ki", "(bb*T + i)*H_kv*D"),
    // multi-head latent attention turns only the DR rotary channels: q_pe after a query head's
    // D, and the one k_pe row per token (its own buffer, or, decoding, the cache row `ci` after
    // c_kv); DR is recorded only by an MLA run, so these are first where they are in scope
    ("rope.rs", "cs", "t*(DR/2)"),
    ("rope.rs", "q_base", "((bb*T + t)*H + hh)*(D + DR)"),
    ("rope.rs", "pe_base", "(bb*T + t)*DR"),
    ("rope.rs", "hi", "m + DR/2"),
    ("rope.rs", "cs", "t*(D/2)"),
    ("rope.rs", "q_base", "((bb*T + t)*H + hh)*D"),
    ("rope.rs", "k_base", "((bb*T + t)*H_kv + kv_h)*D"),
    ("rope.rs", "d0", "2*m"),
    ("rope.rs", "d1", "2*m + 1"),
    ("rope.rs", "lo", "m"),
    ("rope.rs", "hi", "m + D/2"),
    // a decode run's cache rows: paged (`phys`, `j_phys`, `BS`), a rolling window's slot `% W`
    // after the sinks (`N`, `W`) or a sink's own row, else contiguous; where several are in
    // scope, the one that gives the recorded value is the one that ran
    ("decode.rs", "xi", "(bb*T + t)*C"),
    ("decode.rs", "blk", "t / BS"),
    ("decode.rs", "j_blk", "j / BS"),
    ("decode.rs", "ci", "(phys*BS + t % BS)*H_kv*D"),
    ("decode.rs", "ci", "(bb*(N + W) + N + t % W)*H_kv*D"),
    ("decode.rs", "ci", "(bb*(N + W) + t)*H_kv*D"),
    ("decode.rs", "ci", "(bb*T + t)*H_kv*D"),
    ("decode.rs", "w_off", "c*(C + 2*H_kv*D) + o"),
    ("decode.rs", "kv_h", "hh/(H/H_kv)"),
    ("decode.rs", "q_base", "xi + hh*D"),
    ("decode.rs", "k_base", "((j_phys*BS + j % BS)*H_kv + kv_h)*D"),
    ("decode.rs", "k_base", "((bb*(N + W) + N + j % W)*H_kv + kv_h)*D"),
    ("decode.rs", "k_base", "((bb*(N + W) + j)*H_kv + kv_h)*D"),
    ("decode.rs", "k_base", "((bb*T + j)*H_kv + kv_h)*D"),
    ("decode.rs", "off", "((bb*H + hh)*T + t)*T + j"),
    ("decode.rs", "row", "((bb*H + hh)*T + t)*T"),
    ("decode.rs", "a_base", "xi + hh*D"),
    ("decode.rs", "v_base", "((j_phys*BS + j % BS)*H_kv + kv_h)*D"),
    ("decode.rs", "v_base", "((bb*(N + W) + N + j % W)*H_kv + kv_h)*D"),
    ("decode.rs", "v_base", "((bb*(N + W) + j)*H_kv + kv_h)*D"),
    ("decode.rs", "v_base", "((bb*T + j)*H_kv + kv_h)*D"),
    // a split step's parts: part p starts at lo = p*L, its log-sum-exp and output per head
    ("decode.rs", "lo", "p*L"),
    ("decode.rs", "lse_off", "((bb*H + hh)*T + t)*P + p"),
    ("decode.rs", "lse_row", "((bb*H + hh)*T + t)*P"),
    ("decode.rs", "o_base", "(lse_row + p)*D"),
    ("decode.rs", "o_base", "(((bb*H + hh)*T + t)*P + p)*D"),
    ("decode.rs", "wo_off", "c*C + o"),
    // multi-head latent attention: heads of D + DR query channels, the rotary channel e of k_pe,
    // and, decoding, a cache row of R + DR per token and R latent channels per head
    ("attention_mla.rs", "q_base", "((bb*S + i)*H + hh)*(D + DR)"),
    ("attention_mla.rs", "q_base", "((bb*T + t)*H + hh)*(D + DR)"),
    ("attention_mla.rs", "k_base", "((bb*T + j)*H + hh)*D"),
    ("attention_mla.rs", "pe_base", "(bb*T + j)*DR"),
    ("attention_mla.rs", "e", "d - D"),
    ("attention_mla.rs", "r", "R + d - D"),
    ("attention_mla.rs", "off", "((bb*H + hh)*S + i)*T + j"),
    ("attention_mla.rs", "off", "((bb*H + hh)*T + t)*T + j"),
    ("attention_mla.rs", "xi", "(bb*T + t)*C"),
    ("attention_mla.rs", "ci", "(bb*T + t)*(R + DR)"),
    ("attention_mla.rs", "qi", "(bb*T + t)*H*(D + DR)"),
    ("attention_mla.rs", "l_base", "((bb*T + t)*H + hh)*R"),
    ("attention_mla.rs", "kv_base", "(bb*T + j)*(R + DR)"),
    ("attention_mla.rs", "row", "((bb*H + hh)*T + t)*T"),
    ("attention_mla.rs", "a_base", "xi + hh*D"),
    ("attention_mla.rs", "w_off", "c*R + r"),
    ("attention_mla.rs", "w_off", "c*DR + r - R"),
    ("attention_mla.rs", "w_off", "c*H*(D + DR) + o"),
    ("attention_mla.rs", "w_off", "r*H*D + hh*D + d"),
    ("attention_mla.rs", "w_off", "c*C + o"),
];

/// `(kernel file, name, buffer, index formula)`: a name whose value the kernel reads from a
/// buffer rather than computes, such as a paged cache's block id `j_phys`, read from
/// `block_table` at `bb*MB + j_blk`.
const LOOKUPS: &[(&str, &str, Buf, &str)] = &[
    ("decode.rs", "phys", Buf::BlockTable, "bb*MB + blk"),
    ("decode.rs", "j_phys", Buf::BlockTable, "bb*MB + j_blk"),
];

/// The buffers the offsets around `view` were read from rather than computed: a paged cache's
/// `block_table`, whose block id `j_phys` the key's offset uses.
pub fn offsets_read_from(view: &EventView) -> Vec<Buf> {
    let file = view.file.rsplit(['/', '\\']).next().unwrap_or(view.file);
    let mut out: Vec<Buf> = LOOKUPS
        .iter()
        .filter(|(f, name, _, _)| *f == file && view.vars.iter().any(|(n, _)| n == name))
        .map(|l| l.2)
        .collect();
    out.dedup();
    out
}

/// The formula of offset `name` as computed in kernel `file` (a path ending in the file name);
/// the first, when the kernel computes the name in more than one way.
pub fn formula(file: &str, name: &str) -> Option<&'static str> {
    formulas(file, name).next()
}

/// Every formula of offset `name` in kernel `file`, in table order.
fn formulas<'a>(file: &'a str, name: &'a str) -> impl Iterator<Item = &'static str> + 'a {
    let file = file.rsplit(['/', '\\']).next().unwrap_or(file);
    FORMULAS
        .iter()
        .filter(move |(f, n, _)| *f == file && *n == name)
        .map(|(_, _, text)| *text)
}

/// The size symbols a formula may use in `phase`: `B, S, T, C, H, D, H_kv`, and a linear
/// layer's input and output widths `IC, OC`. In `linear.rs`, `T` is the layer's own row count:
/// the queries (`S`) for the query and output projections.
pub fn sizes(shape: Shape, phase: Phase) -> Vec<(&'static str, usize)> {
    let oc = match phase {
        Phase::QkvProj | Phase::QkvProjBack => shape.c + 2 * shape.kv_c(),
        Phase::KProj | Phase::KProjBack | Phase::VProj | Phase::VProjBack => shape.kv_c(),
        _ => shape.c,
    };
    let t = match phase {
        Phase::QProj | Phase::QProjBack | Phase::OutProj | Phase::OutProjBack => shape.s,
        _ => shape.t,
    };
    let sizes = [
        ("B", shape.b),
        ("S", shape.s),
        ("T", t),
        ("C", shape.c),
        ("H", shape.h),
        ("D", shape.d()),
        ("H_kv", shape.h_kv),
    ];
    [&sizes[..], &[("IC", shape.c), ("OC", oc)]].concat()
}

/// A formula with its numbers filled in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Substituted {
    pub name: &'static str,
    /// The formula as the kernel writes it, e.g. `((bb*S + i)*H + hh)*D`.
    pub formula: String,
    /// The formula with every symbol replaced by its value, e.g. `((0*3 + 2)*2 + 1)*2`.
    pub numbers: String,
    /// What the formula evaluates to.
    pub value: usize,
    /// For a name read from a buffer (a block id from `block_table`), the buffer and the offset
    /// the formula gives: `numbers` then ends in `= block_table[4]`, and `value` is what the
    /// kernel read there.
    pub read: Option<(Buf, usize)>,
}

impl fmt::Display for Substituted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} = {} = {} = {}",
            self.name, self.formula, self.numbers, self.value
        )
    }
}

/// Substitutes `symbols` into the formula of `name` in `file` and evaluates it.
pub fn substitute(file: &str, name: &'static str, symbols: &[(&str, usize)]) -> Option<Substituted> {
    formulas(file, name).find_map(|text| substitute_one(text, name, symbols))
}

/// [`substitute`] with one formula.
fn substitute_one(text: &'static str, name: &'static str, symbols: &[(&str, usize)]) -> Option<Substituted> {
    let lookup = |sym: &str| symbols.iter().rev().find(|(n, _)| *n == sym).map(|&(_, v)| v);
    let mut numbers = String::new();
    for tok in tokens(text) {
        match tok {
            Tok::Ident(id) => numbers.push_str(&lookup(id)?.to_string()),
            Tok::Other(s) | Tok::Num(s) => numbers.push_str(s),
        }
    }
    let value = Eval {
        toks: tokens(&numbers).filter(|t| !matches!(t, Tok::Other(" "))).collect(),
        at: 0,
    }
    .run()?;
    Some(Substituted {
        name,
        formula: text.to_string(),
        numbers,
        value,
        read: None,
    })
}

/// A name the kernel in `file` read from a buffer, with its index substituted:
/// `j_phys = block_table[bb*MB + j_blk] = block_table[1*3 + 1] = block_table[4] = 0`, where
/// `value` (what the kernel read) is the recorded one.
fn substitute_lookup(file: &str, name: &'static str, value: usize, symbols: &[(&str, usize)]) -> Option<Substituted> {
    let file = file.rsplit(['/', '\\']).next().unwrap_or(file);
    let &(_, _, buf, index) = LOOKUPS.iter().find(|(f, n, _, _)| *f == file && *n == name)?;
    let at = substitute_one(index, name, symbols)?;
    Some(Substituted {
        name,
        formula: format!("{buf}[{index}]"),
        numbers: format!("{buf}[{numbers}] = {buf}[{off}]", numbers = at.numbers, off = at.value),
        value,
        read: Some((buf, at.value)),
    })
}

/// An offset expression as a kernel line writes it (`q_base + d`, `ri + 2 * C + c`), with every
/// name replaced by its value in `symbols` (the last binding of a name wins) and evaluated:
/// `("10 + 1", 11)`.
pub fn evaluate(expr: &str, symbols: &[(&str, usize)]) -> Option<(String, usize)> {
    let lookup = |sym: &str| symbols.iter().rev().find(|(n, _)| *n == sym).map(|&(_, v)| v);
    let mut numbers = String::new();
    for tok in tokens(expr.trim()) {
        match tok {
            Tok::Ident(id) => numbers.push_str(&lookup(id)?.to_string()),
            Tok::Other(s) | Tok::Num(s) => numbers.push_str(s),
        }
    }
    let value = Eval {
        toks: tokens(&numbers).filter(|t| !matches!(t, Tok::Other(" "))).collect(),
        at: 0,
    }
    .run()?;
    Some((numbers, value))
}

/// The names an expression uses, in order, each once.
pub fn names(expr: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for tok in tokens(expr) {
        if let Tok::Ident(id) = tok
            && !out.contains(&id)
        {
            out.push(id);
        }
    }
    out
}

/// The input and output widths `IC, OC` of a multi-head latent attention projection, from the
/// latent sizes `R`, `DR` its run recorded; `None` for any other phase.
fn latent_widths(phase: Phase, shape: Shape, consts: &[(&str, usize)]) -> Option<(usize, usize)> {
    let size = |name: &str| consts.iter().find(|c| c.0 == name).map(|c| c.1);
    let (r, dr, c) = (size("R")?, size("DR")?, shape.c);
    Some(match phase {
        Phase::MlaQProj | Phase::MlaQProjBack => (c, shape.h * (shape.d() + dr)),
        Phase::LatentProj | Phase::LatentProjBack => (c, r),
        Phase::KPeProj | Phase::KPeProjBack => (c, dr),
        Phase::KUp | Phase::KUpBack | Phase::VUp | Phase::VUpBack => (r, c),
        _ => return None,
    })
}

/// Every derived offset of an event, substituted: the lines of the TUI's variables panel.
/// `shape` is the shape the kernel ran with (`engine::kernel_shape`: one head for the baseline).
pub fn derived_lines(view: &EventView, shape: Shape) -> Vec<Substituted> {
    let mut symbols: Vec<(&str, usize)> = sizes(shape, view.phase);
    // multi-head latent attention's projections are as wide as its latent sizes say
    if let Some((ic, oc)) = latent_widths(view.phase, shape, &view.consts) {
        for (name, v) in &mut symbols {
            match *name {
                "IC" => *v = ic,
                "OC" => *v = oc,
                _ => {}
            }
        }
    }
    symbols.extend(view.consts.iter().copied());
    symbols.extend(view.vars.iter().copied());
    let mut lines = Vec::new();
    // names the kernel read from a buffer (a paged cache's block ids) are loop frames' first
    // values, not derived ones: each is shown just before the first offset that uses it
    let mut looked_up: Vec<(&'static str, usize)> = view
        .vars
        .iter()
        .copied()
        .filter(|(n, _)| LOOKUPS.iter().any(|l| l.1 == *n))
        .collect();
    let emit =
        |lines: &mut Vec<Substituted>, file: &str, (name, value): (&'static str, usize), symbols: &[(&str, usize)]| {
            if let Some(s) = substitute_lookup(file, name, value, symbols) {
                lines.push(s);
            }
        };
    for d in &view.derived {
        let used: Vec<(&'static str, usize)> = looked_up
            .iter()
            .copied()
            .filter(|(n, _)| formulas(d.file, d.name).any(|f| names(f).contains(n)))
            .collect();
        for l in used {
            emit(&mut lines, d.file, l, &symbols);
            looked_up.retain(|x| *x != l);
        }
        // of several formulas in scope (a sink's row or a window slot), the one that ran gives
        // the recorded value; a formula that gives none is still shown, so a test sees it
        let ran = formulas(d.file, d.name)
            .find_map(|text| substitute_one(text, d.name, &symbols).filter(|s| s.value == d.value));
        if let Some(s) = ran.or_else(|| substitute(d.file, d.name, &symbols)) {
            lines.push(s);
        }
        // later formulas may use earlier offsets (softmax's `row + j`)
        symbols.push((d.name, d.value));
    }
    for l in looked_up {
        emit(&mut lines, view.file, l, &symbols);
    }
    lines
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Tok<'a> {
    Ident(&'a str),
    Num(&'a str),
    Other(&'a str),
}

fn tokens(text: &str) -> impl Iterator<Item = Tok<'_>> {
    let mut rest = text;
    std::iter::from_fn(move || {
        let first = rest.chars().next()?;
        let len = if first.is_ascii_alphabetic() || first == '_' {
            rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len())
        } else if first.is_ascii_digit() {
            rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len())
        } else {
            first.len_utf8()
        };
        let (tok, tail) = rest.split_at(len);
        rest = tail;
        Some(if first.is_ascii_alphabetic() || first == '_' {
            Tok::Ident(tok)
        } else if first.is_ascii_digit() {
            Tok::Num(tok)
        } else {
            Tok::Other(tok)
        })
    })
}

/// Evaluates `+`, `*`, `/` (rounding down), `%` and parentheses over whole numbers.
struct Eval<'a> {
    toks: Vec<Tok<'a>>,
    at: usize,
}

impl<'a> Eval<'a> {
    fn run(mut self) -> Option<usize> {
        let v = self.sum()?;
        (self.at == self.toks.len()).then_some(v)
    }

    fn peek(&self) -> Option<Tok<'a>> {
        self.toks.get(self.at).copied()
    }

    fn sum(&mut self) -> Option<usize> {
        let mut v = self.product()?;
        loop {
            match self.peek() {
                Some(Tok::Other("+")) => {
                    self.at += 1;
                    v = v.checked_add(self.product()?)?;
                }
                // latent attention's rotary channel `d - D`
                Some(Tok::Other("-")) => {
                    self.at += 1;
                    v = v.checked_sub(self.product()?)?;
                }
                _ => return Some(v),
            }
        }
    }

    fn product(&mut self) -> Option<usize> {
        let mut v = self.atom()?;
        loop {
            match self.peek() {
                Some(Tok::Other("*")) => {
                    self.at += 1;
                    v = v.checked_mul(self.atom()?)?;
                }
                // whole-number division, as the kernels' `hh / (H / H_kv)`
                Some(Tok::Other("/")) => {
                    self.at += 1;
                    v = v.checked_div(self.atom()?)?;
                }
                // a rolling cache's slot `j % W`, a block's row `j % BS`
                Some(Tok::Other("%")) => {
                    self.at += 1;
                    v = v.checked_rem(self.atom()?)?;
                }
                _ => return Some(v),
            }
        }
    }

    fn atom(&mut self) -> Option<usize> {
        let tok = self.peek()?;
        self.at += 1;
        match tok {
            Tok::Num(n) => n.parse().ok(),
            Tok::Other("(") => {
                let v = self.sum()?;
                (self.peek() == Some(Tok::Other(")"))).then(|| self.at += 1)?;
                Some(v)
            }
            _ => None,
        }
    }
}
