//! Bindings: how a learner's buffers lie over the reference's tensors, whatever their names and
//! layouts (docs/your_kernel.md, "Your names, your layout").
//!
//! A learner buffer is a set of strided **views** of reference tensors. A view of tensor `q`
//! with offset `O`, strides `S` and a slice `lo ≤ idx[dim] < hi` on some dimensions puts the
//! cell of logical index `idx` at the learner's offset `O + Σ (idx[dim] − lo[dim])·S[dim]`.
//! llm.c's `inp [B,T,3C]` is three views, of `q`, `k` and `v` at offsets `0`, `C` and `2C`
//! with strides `b = 3TC, i = 3C, h = D, d = 1`; llama2.c's `wk [L, kv_dim, dim]` is the slice
//! `o ∈ [C, C + kv_dim)` of our `w_qkv [c, o]`, transposed (`o` stride `dim`, `c` stride 1).
//! A stride of 0 on a dimension of several indices makes the buffer a scratch row reused along
//! it (llama2.c's `s->att`, one row of scores per step): which index it holds is what the
//! trace's last `{"op":"at","index":{…}}` line says.
//!
//! Bindings come from the trace's header (`"bind"`, JSON, what the Python recorder writes) or a
//! TOML file (`grade --bind FILE`); [`Binder`] checks them against the run's tensors (one line
//! naming the buffer for anything that does not fit) and maps each access to a reference cell.
//! A buffer without a binding that is named like one of ours keeps our layout. The format is
//! agreed with the recorders in `/work/scratch/bindings.md`'s terms and documented in
//! docs/your_kernel.md.

use super::reference::Reference;
use attn_trace_core::tensor::Level;
use attn_trace_core::trace::Buf;
use attn_trace_i18n::tr;
use std::collections::HashMap;

/// A small integer expression over the run's sizes: `3*C`, `T*3*C`, `(H*D)`, `C + 2*H_kv*D`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    Num(i64),
    Dim(String),
    Add(Box<Expr>, Box<Expr>),
    Sub(Box<Expr>, Box<Expr>),
    Mul(Box<Expr>, Box<Expr>),
}

impl Expr {
    /// Parses `text`; a problem is a message naming the character.
    pub fn parse(text: &str) -> Result<Expr, String> {
        let tokens = tokens(text)?;
        let mut k = 0;
        let e = sum(&tokens, &mut k)?;
        match tokens.get(k) {
            None => Ok(e),
            Some(t) => Err(tr!("\"{text}\": unexpected \"{t}\"", text, t = t.text())),
        }
    }

    /// The value with the run's sizes `dims`; `None` for a name it lacks (the message lists
    /// them) or an overflow.
    pub fn eval(&self, dims: &[(&str, i64)]) -> Result<i64, String> {
        let v = match self {
            Expr::Num(n) => i128::from(*n),
            Expr::Dim(name) => match dims.iter().find(|(n, _)| n == name) {
                Some(&(_, v)) => i128::from(v),
                None => {
                    let names: Vec<&str> = dims.iter().map(|(n, _)| *n).collect();
                    return Err(tr!(
                        "unknown size \"{name}\"; the sizes are {names}",
                        name,
                        names = names.join(", ")
                    ));
                }
            },
            Expr::Add(a, b) => i128::from(a.eval(dims)?) + i128::from(b.eval(dims)?),
            Expr::Sub(a, b) => i128::from(a.eval(dims)?) - i128::from(b.eval(dims)?),
            Expr::Mul(a, b) => i128::from(a.eval(dims)?) * i128::from(b.eval(dims)?),
        };
        i64::try_from(v).map_err(|_| tr!("the value overflows").to_string())
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Num(i64),
    Name(String),
    Op(char),
}

impl Token {
    fn text(&self) -> String {
        match self {
            Token::Num(n) => n.to_string(),
            Token::Name(s) => s.clone(),
            Token::Op(c) => c.to_string(),
        }
    }
}

fn tokens(text: &str) -> Result<Vec<Token>, String> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some(&(k, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c.is_ascii_digit() {
            let mut end = k;
            while let Some(&(e, d)) = chars.peek().filter(|(_, d)| d.is_ascii_digit()) {
                end = e + d.len_utf8();
                chars.next();
            }
            let n = text[k..end]
                .parse::<i64>()
                .map_err(|_| tr!("\"{text}\": {n} is too large", text, n = &text[k..end]))?;
            out.push(Token::Num(n));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let mut end = k;
            while let Some(&(e, d)) = chars.peek().filter(|(_, d)| d.is_ascii_alphanumeric() || *d == '_') {
                end = e + d.len_utf8();
                chars.next();
            }
            out.push(Token::Name(text[k..end].to_string()));
        } else if "+-*()".contains(c) {
            out.push(Token::Op(c));
            chars.next();
        } else {
            return Err(tr!(
                "\"{text}\": \"{c}\" is not part of an expression (whole numbers, sizes such as C or H_kv, + - * and parentheses)",
                text,
                c
            ));
        }
    }
    if out.is_empty() {
        return Err(tr!("an empty expression").into());
    }
    Ok(out)
}

fn sum(t: &[Token], k: &mut usize) -> Result<Expr, String> {
    let mut e = product(t, k)?;
    while let Some(Token::Op(op @ ('+' | '-'))) = t.get(*k) {
        let op = *op;
        *k += 1;
        let r = product(t, k)?;
        e = if op == '+' {
            Expr::Add(Box::new(e), Box::new(r))
        } else {
            Expr::Sub(Box::new(e), Box::new(r))
        };
    }
    Ok(e)
}

fn product(t: &[Token], k: &mut usize) -> Result<Expr, String> {
    let mut e = factor(t, k)?;
    while let Some(Token::Op('*')) = t.get(*k) {
        *k += 1;
        e = Expr::Mul(Box::new(e), Box::new(factor(t, k)?));
    }
    Ok(e)
}

fn factor(t: &[Token], k: &mut usize) -> Result<Expr, String> {
    let token = t.get(*k).cloned();
    *k += 1;
    match token {
        Some(Token::Num(n)) => Ok(Expr::Num(n)),
        Some(Token::Name(s)) => Ok(Expr::Dim(s)),
        Some(Token::Op('(')) => {
            let e = sum(t, k)?;
            match t.get(*k) {
                Some(Token::Op(')')) => {
                    *k += 1;
                    Ok(e)
                }
                _ => Err(tr!("a \"(\" is never closed").into()),
            }
        }
        Some(other) => Err(tr!("unexpected \"{t}\"", t = other.text())),
        None => Err(tr!("the expression ends too early").into()),
    }
}

/// One view as declared: a reference tensor, the offset of its first cell, a stride per
/// dimension (none at all: the tensor's own layout), and slices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ViewDecl {
    pub tensor: String,
    pub offset: Expr,
    /// `None`: the reference's own layout (a rename, at `offset`).
    pub strides: Option<Vec<(String, Expr)>>,
    /// `dim: [lo, hi)`: the view holds those indices only.
    pub slice: Vec<(String, Expr, Expr)>,
}

/// One learner buffer's views, and where they were declared (for messages: `bind.toml:3`, or
/// the trace's header line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferDecl {
    pub name: String,
    pub views: Vec<ViewDecl>,
    pub origin: String,
}

/// Every learner buffer's declared views.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bindings {
    pub buffers: Vec<BufferDecl>,
}

/// A number or an expression, from JSON (`4`, `"3*C"`).
fn json_expr(v: &serde_json::Value, what: &str) -> Result<Expr, String> {
    match v {
        serde_json::Value::Number(n) => n
            .as_i64()
            .map(Expr::Num)
            .ok_or_else(|| tr!("{what}: expected a whole number, found {n}", what, n).to_string()),
        serde_json::Value::String(s) => Expr::parse(s).map_err(|e| format!("{what}: {e}")),
        other => Err(tr!(
            "{what}: expected a whole number or an expression such as \"3*C\", found {other}",
            what,
            other
        )),
    }
}

fn json_view(v: &serde_json::Value, buffer: &str) -> Result<ViewDecl, String> {
    let obj = match v {
        serde_json::Value::String(t) => {
            return Ok(ViewDecl {
                tensor: t.clone(),
                offset: Expr::Num(0),
                strides: None,
                slice: Vec::new(),
            });
        }
        serde_json::Value::Object(o) => o,
        other => {
            return Err(tr!(
                "{buffer}: expected a view {{\"tensor\":…,\"offset\":…,\"strides\":{{…}}}} or a tensor's name, found {other}",
                buffer,
                other
            ));
        }
    };
    for key in obj.keys() {
        if !["tensor", "offset", "strides", "slice"].contains(&key.as_str()) {
            return Err(tr!(
                "{buffer}: unknown key \"{key}\" in a view; a view has tensor, offset, strides and slice",
                buffer,
                key
            ));
        }
    }
    let tensor = match obj.get("tensor") {
        Some(serde_json::Value::String(t)) => t.clone(),
        _ => {
            return Err(tr!(
                "{buffer}: a view needs \"tensor\", the reference tensor's name",
                buffer
            ));
        }
    };
    let offset = match obj.get("offset") {
        Some(o) => json_expr(o, &format!("{buffer} → {tensor}: offset"))?,
        None => Expr::Num(0),
    };
    let strides = match obj.get("strides") {
        None => None,
        Some(serde_json::Value::Object(s)) => Some(
            s.iter()
                .map(|(d, x)| Ok((d.clone(), json_expr(x, &format!("{buffer} → {tensor}: stride of {d}"))?)))
                .collect::<Result<Vec<_>, String>>()?,
        ),
        Some(other) => {
            return Err(tr!(
                "{buffer} → {tensor}: \"strides\" must be an object {{\"dimension\": stride, …}}, found {other}",
                buffer,
                tensor,
                other
            ));
        }
    };
    let slice = match obj.get("slice") {
        None => Vec::new(),
        Some(serde_json::Value::Object(s)) => s
            .iter()
            .map(|(d, x)| {
                let what = format!("{buffer} → {tensor}: slice of {d}");
                match x.as_array().map(Vec::as_slice) {
                    Some([lo, hi]) => Ok((d.clone(), json_expr(lo, &what)?, json_expr(hi, &what)?)),
                    _ => Err(tr!("{what}: expected [from, to]", what)),
                }
            })
            .collect::<Result<Vec<_>, String>>()?,
        Some(other) => {
            return Err(tr!(
                "{buffer} → {tensor}: \"slice\" must be an object {{\"dimension\": [from, to], …}}, found {other}",
                buffer,
                tensor,
                other
            ));
        }
    };
    Ok(ViewDecl {
        tensor,
        offset,
        strides,
        slice,
    })
}

/// Largest bindings file read: a few views per buffer take a few hundred bytes.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

impl Bindings {
    /// Reads a bindings file (`grade --bind FILE`): a regular file of at most
    /// [`MAX_FILE_BYTES`], UTF-8, TOML. Every problem is one line naming the file.
    pub fn load(path: &std::path::Path) -> Result<Bindings, String> {
        let shown = path.display().to_string();
        let bytes = attn_trace_core::files::input::read(path, MAX_FILE_BYTES, attn_trace_i18n::msg!("a bindings file"))
            .map_err(|e| format!("{shown}: {e}"))?;
        let text = String::from_utf8(bytes).map_err(|_| format!("{shown}: {}", tr!("not UTF-8 text")))?;
        Bindings::from_toml(text.strip_prefix('\u{feff}').unwrap_or(&text), &shown)
    }

    /// The trace header's `"bind"` object: learner buffer → a view, a tensor's name, or a list
    /// of them. `origin` names the header in messages.
    pub fn from_json(v: &serde_json::Value, origin: &str) -> Result<Bindings, String> {
        let serde_json::Value::Object(map) = v else {
            return Err(tr!(
                "expected an object {{\"your buffer\": view or [views], …}}, found {v}",
                v
            ));
        };
        let mut buffers = Vec::new();
        for (name, views) in map {
            let views = match views {
                serde_json::Value::Array(list) => list
                    .iter()
                    .map(|x| json_view(x, name))
                    .collect::<Result<Vec<_>, String>>()?,
                one => vec![json_view(one, name)?],
            };
            buffers.push(BufferDecl {
                name: name.clone(),
                views,
                origin: origin.to_string(),
            });
        }
        Ok(Bindings { buffers })
    }

    /// A bindings file in TOML: a table per learner buffer whose keys are reference tensors,
    /// each an inline table `{ offset, strides, slice }` (`{}`: the tensor's own layout), or a
    /// top-level `name = "tensor"` for a rename. Messages start `path:line:`.
    pub fn from_toml(text: &str, path: &str) -> Result<Bindings, String> {
        use toml::de::{DeTable, DeValue};
        let at = |span: Option<std::ops::Range<usize>>| match span {
            Some(s) => format!("{path}:{}", attn_trace_core::scenario::line_column(text, s.start).0),
            None => path.to_string(),
        };
        let root = DeTable::parse(text).map_err(|e| format!("{}: {}", at(e.span()), e.message().trim_end()))?;
        let expr = |v: &toml::Spanned<DeValue<'_>>, what: &str| -> Result<Expr, String> {
            match v.get_ref() {
                DeValue::Integer(n) => n
                    .as_str()
                    .parse::<i64>()
                    .map(Expr::Num)
                    .map_err(|_| format!("{}: {what}: {}", at(Some(v.span())), tr!("expected a whole number"))),
                DeValue::String(s) => Expr::parse(s).map_err(|e| format!("{}: {what}: {e}", at(Some(v.span())))),
                _ => Err(format!(
                    "{}: {what}: {}",
                    at(Some(v.span())),
                    tr!("expected a whole number or an expression such as \"3*C\"")
                )),
            }
        };
        let mut buffers = Vec::new();
        for (key, value) in root.get_ref() {
            let name = key.get_ref().to_string();
            let origin = at(Some(key.span()));
            match value.get_ref() {
                DeValue::String(t) => buffers.push(BufferDecl {
                    name,
                    views: vec![ViewDecl {
                        tensor: t.to_string(),
                        offset: Expr::Num(0),
                        strides: None,
                        slice: Vec::new(),
                    }],
                    origin,
                }),
                DeValue::Table(views) => {
                    let mut list = Vec::new();
                    for (tensor, view) in views {
                        let tensor_name = tensor.get_ref().to_string();
                        let what = format!("[{name}].{tensor_name}");
                        let DeValue::Table(v) = view.get_ref() else {
                            let why = if matches!(view.get_ref(), DeValue::String(_)) {
                                // TOML puts every key after [name] into that table
                                tr!(
                                    "expected a view { offset = …, strides = { … } }; a rename such as att = \"probs\" goes above the first [table], where it is not one of its keys"
                                )
                            } else {
                                tr!(
                                    "expected a view { offset = …, strides = { … } }, or {} for the tensor's own layout"
                                )
                            };
                            return Err(format!("{}: {what}: {why}", at(Some(view.span()))));
                        };
                        let mut decl = ViewDecl {
                            tensor: tensor_name.clone(),
                            offset: Expr::Num(0),
                            strides: None,
                            slice: Vec::new(),
                        };
                        for (k, x) in v {
                            match k.get_ref().as_ref() {
                                "offset" => decl.offset = expr(x, &format!("{what}.offset"))?,
                                "strides" => {
                                    let DeValue::Table(s) = x.get_ref() else {
                                        return Err(format!(
                                            "{}: {what}.strides: {}",
                                            at(Some(x.span())),
                                            tr!("expected { dimension = stride, … }")
                                        ));
                                    };
                                    let mut strides = Vec::new();
                                    for (d, sx) in s {
                                        let d = d.get_ref().to_string();
                                        strides.push((d.clone(), expr(sx, &format!("{what}.strides.{d}"))?));
                                    }
                                    decl.strides = Some(strides);
                                }
                                "slice" => {
                                    let DeValue::Table(s) = x.get_ref() else {
                                        return Err(format!(
                                            "{}: {what}.slice: {}",
                                            at(Some(x.span())),
                                            tr!("expected { dimension = [from, to], … }")
                                        ));
                                    };
                                    for (d, sx) in s {
                                        let d = d.get_ref().to_string();
                                        let field = format!("{what}.slice.{d}");
                                        let DeValue::Array(pair) = sx.get_ref() else {
                                            return Err(format!(
                                                "{}: {field}: {}",
                                                at(Some(sx.span())),
                                                tr!("expected [from, to]")
                                            ));
                                        };
                                        let items: Vec<&toml::Spanned<DeValue<'_>>> = pair.iter().collect();
                                        let [lo, hi] = items.as_slice() else {
                                            return Err(format!(
                                                "{}: {field}: {}",
                                                at(Some(sx.span())),
                                                tr!("expected [from, to]")
                                            ));
                                        };
                                        decl.slice.push((d, expr(lo, &field)?, expr(hi, &field)?));
                                    }
                                }
                                other => {
                                    return Err(format!(
                                        "{}: {what}: {}",
                                        at(Some(k.span())),
                                        tr!("unknown key \"{other}\"; a view has offset, strides and slice", other)
                                    ));
                                }
                            }
                        }
                        list.push(decl);
                    }
                    if list.is_empty() {
                        return Err(format!(
                            "{origin}: [{name}]: {}",
                            tr!(
                                "names no tensor; give one view per reference tensor, e.g. q = { offset = 0, strides = { … } }"
                            )
                        ));
                    }
                    buffers.push(BufferDecl {
                        name,
                        views: list,
                        origin,
                    });
                }
                _ => {
                    return Err(format!(
                        "{origin}: {name}: {}",
                        tr!(
                            "expected a table of views [{name}] or a tensor's name (a rename)",
                            name = &name
                        )
                    ));
                }
            }
        }
        Ok(Bindings { buffers })
    }
}

/// Where an access lands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A cell of a reference tensor: the tensor and the cell's offset in it, layer-major when
    /// the scenario has several layers.
    Cell { buf: Buf, off: usize },
    /// An offset outside the buffer (no binding: our layout's size) or that no view covers.
    Outside,
    /// A buffer named like one of flash's on-chip tiles: the learner's own locals.
    Local,
}

/// What is wrong with an access the binder cannot place; the caller says where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unplaced {
    /// Neither bound nor named like a buffer of the run.
    Unknown(String),
    /// A scratch dimension no `at` line has given an index (or one out of its range).
    Index(String),
}

/// One learner buffer, resolved.
#[derive(Clone, Debug)]
enum Resolved {
    /// Our layout (layer-major with several layers).
    Ours(Buf),
    Views(Box<Views>),
    Local,
    Unknown(String),
}

/// A scratch dimension of a view: its name, size, and stride in the tensor's cell offsets.
#[derive(Clone, Debug)]
struct Scratch {
    name: String,
    size: usize,
    stride: usize,
}

#[derive(Clone, Debug)]
struct ViewInfo {
    buf: Buf,
    scratch: Vec<Scratch>,
}

/// Learner offset → (view + 1) << 32 | cell, 0 where no view is.
#[derive(Clone, Debug)]
enum OffsetMap {
    Dense { base: i64, cells: Vec<u64> },
    Sparse(Vec<(i64, u64)>),
}

#[derive(Clone, Debug)]
struct Views {
    views: Vec<ViewInfo>,
    map: OffsetMap,
}

impl Views {
    fn get(&self, offset: i64) -> Option<u64> {
        match &self.map {
            OffsetMap::Dense { base, cells } => {
                let k = usize::try_from(offset.checked_sub(*base)?).ok()?;
                cells.get(k).copied().filter(|&c| c != 0)
            }
            OffsetMap::Sparse(list) => list
                .binary_search_by_key(&offset, |&(o, _)| o)
                .ok()
                .and_then(|k| list.get(k).map(|&(_, c)| c)),
        }
    }
}

/// The run's sizes an expression may name: those of the inputs file.
pub fn sizes(r: &Reference) -> Vec<(&'static str, i64)> {
    let sh = r.run.shape;
    let v = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    vec![
        ("B", v(sh.b)),
        ("T", v(sh.t)),
        ("S", v(sh.s)),
        ("C", v(sh.c)),
        ("H", v(sh.h)),
        ("D", v(sh.d())),
        ("H_kv", v(sh.h_kv)),
        ("L", v(r.layers)),
    ]
}

/// Most cells one learner buffer's views may hold all together: a binding is checked by
/// listing them, so a hostile one must not list more than the run's tensors have.
fn max_cells(r: &Reference) -> usize {
    r.iter().map(|c| c.len()).sum::<usize>().max(1)
}

/// Maps a learner's accesses to reference cells through their buffers' bindings.
#[derive(Debug)]
pub struct Binder {
    /// Per declared learner buffer name, its resolution.
    declared: HashMap<String, Resolved>,
    /// Per learner buffer id (the reader's), its resolution, filled as names appear.
    by_id: Vec<Option<Resolved>>,
}

impl Binder {
    /// Checks every declared binding against the run `r`: one line, naming the buffer and
    /// where it was declared, for the first that does not fit.
    pub fn new(bindings: &Bindings, r: &Reference) -> Result<Binder, String> {
        let mut declared = HashMap::new();
        for decl in &bindings.buffers {
            if declared.contains_key(&decl.name) {
                return Err(format!(
                    "{}: {}",
                    decl.origin,
                    tr!("{name} is bound twice", name = &decl.name)
                ));
            }
            // a file may bind both passes' buffers (llm.c's datt in a forward pass): tensors this
            // pass has not are an error only if the trace touches the buffer
            let known: Vec<Option<Buf>> = decl.views.iter().map(|v| Buf::from_name(&v.tensor)).collect();
            if known.iter().all(|b| b.is_some_and(|b| r.get(b).is_none())) {
                let tensors: Vec<&str> = decl.views.iter().map(|v| v.tensor.as_str()).collect();
                declared.insert(
                    decl.name.clone(),
                    Resolved::Unknown(tr!(
                        "\"buffer\": {name} is bound to {tensors}, which the {variant} {pass} pass has not ({origin})",
                        name = &decl.name,
                        tensors = tensors.join(", "),
                        variant = r.variant.name(),
                        pass = r.pass.name(),
                        origin = &decl.origin
                    )),
                );
                continue;
            }
            let views = resolve(decl, r).map_err(|e| format!("{}: {}: {e}", decl.origin, decl.name))?;
            declared.insert(decl.name.clone(), Resolved::Views(Box::new(views)));
        }
        Ok(Binder {
            declared,
            by_id: Vec::new(),
        })
    }

    /// Is learner buffer `name` declared in the bindings?
    pub fn is_bound(&self, name: &str) -> bool {
        self.declared.contains_key(name)
    }

    /// The tensors a bound buffer's views hold, `q, k, v`.
    pub fn holds(&self, name: &str) -> Option<String> {
        match self.declared.get(name) {
            Some(Resolved::Views(v)) => {
                let mut names: Vec<&str> = Vec::new();
                for view in &v.views {
                    if !names.contains(&view.buf.name()) {
                        names.push(view.buf.name());
                    }
                }
                Some(names.join(", "))
            }
            _ => None,
        }
    }

    /// Where learner buffer `name` (the reader's id `id`) at `offset` lands, with the scratch
    /// dimensions' indices `index` (the trace's `at` lines so far).
    pub fn map(
        &mut self,
        r: &Reference,
        id: u32,
        name: &str,
        offset: i64,
        index: &[(String, u64)],
    ) -> Result<Target, Unplaced> {
        let k = id as usize;
        if self.by_id.len() <= k {
            self.by_id.resize(k + 1, None);
        }
        if self.by_id[k].is_none() {
            let resolved = match self.declared.get(name) {
                Some(v) => v.clone(),
                None => ours(r, name),
            };
            self.by_id[k] = Some(resolved);
        }
        match &self.by_id[k] {
            Some(Resolved::Ours(buf)) => {
                let len = r.get(*buf).map_or(0, |c| c.len());
                Ok(match usize::try_from(offset).ok().filter(|&o| o < len) {
                    Some(off) => Target::Cell { buf: *buf, off },
                    None => Target::Outside,
                })
            }
            Some(Resolved::Local) => Ok(Target::Local),
            Some(Resolved::Unknown(why)) => Err(Unplaced::Unknown(why.clone())),
            Some(Resolved::Views(v)) => {
                let Some(packed) = v.get(offset) else {
                    return Ok(Target::Outside);
                };
                let view = (packed >> 32) as usize - 1;
                let mut cell = (packed & 0xffff_ffff) as usize;
                let Some(info) = v.views.get(view) else {
                    return Ok(Target::Outside);
                };
                for s in &info.scratch {
                    let at = index.iter().find(|(n, _)| *n == s.name).map(|&(_, x)| x);
                    match at.and_then(|x| usize::try_from(x).ok()).filter(|&x| x < s.size) {
                        Some(x) => cell += x * s.stride,
                        None => {
                            return Err(Unplaced::Index(match at {
                                None => tr!(
                                    "\"{name}\" is reused along {dim} (a stride of 0 in its binding), but no \"at\" line has said which {dim} it holds: record {{\"op\":\"at\",\"index\":{{\"{dim}\":…}}}} before its accesses",
                                    name,
                                    dim = &s.name
                                ),
                                Some(x) => tr!(
                                    "\"{name}\": the last \"at\" line says {dim} = {x}, outside {dim}'s {size} indices",
                                    name,
                                    dim = &s.name,
                                    x,
                                    size = s.size
                                ),
                            }));
                        }
                    }
                }
                Ok(Target::Cell {
                    buf: info.buf,
                    off: cell,
                })
            }
            None => Ok(Target::Outside),
        }
    }
}

/// A learner buffer without a binding: ours when it has one of our names.
fn ours(r: &Reference, name: &str) -> Resolved {
    let Some(buf) = Buf::from_name(name) else {
        return Resolved::Unknown(tr!(
            "\"buffer\": \"{name}\" is neither one of ours nor bound; bind it to the reference's tensors (grade --bind FILE, or \"bind\" in the header: docs/your_kernel.md), or name it as in the inputs file (x, q, k, v, scores, probs, att, out, d_q, …)",
            name
        ));
    };
    if r.get(buf).is_some() {
        return Resolved::Ours(buf);
    }
    if r.registry().get(buf).is_some_and(|s| s.level == Level::Tile) {
        // a tile-level buffer (flash's on-chip working set): the learner's own locals
        return Resolved::Local;
    }
    Resolved::Unknown(tr!(
        "\"buffer\": the {variant} {pass} pass of this scenario has no buffer \"{name}\"; its buffers are {names}",
        variant = r.variant.name(),
        pass = r.pass.name(),
        name,
        names = r.iter().map(|c| c.buf.name()).collect::<Vec<_>>().join(", ")
    ))
}

/// Checks a declared buffer's views and lists the offsets they cover.
fn resolve(decl: &BufferDecl, r: &Reference) -> Result<Views, String> {
    let sizes = sizes(r);
    let eval = |e: &Expr, what: &str| -> Result<i64, String> {
        let v = e.eval(&sizes).map_err(|m| format!("{what}: {m}"))?;
        if v < 0 {
            return Err(tr!("{what} is {v}: offsets and strides are never negative", what, v));
        }
        Ok(v)
    };
    let limit = max_cells(r);
    let mut views = Vec::new();
    // (learner offset, packed view and cell)
    let mut cells: Vec<(i64, u64)> = Vec::new();
    for (vi, v) in decl.views.iter().enumerate() {
        let Some(buf) = Buf::from_name(&v.tensor).filter(|&b| r.get(b).is_some()) else {
            return Err(tr!(
                "no tensor \"{tensor}\" in the {variant} {pass} pass; its tensors are {names}",
                tensor = &v.tensor,
                variant = r.variant.name(),
                pass = r.pass.name(),
                names = r.iter().map(|c| c.buf.name()).collect::<Vec<_>>().join(", ")
            ));
        };
        let Some(c) = r.get(buf) else { continue };
        let name = buf.name();
        // the tensor's dimensions: the layer, then its layout's (with their strides in the
        // cell offsets)
        let per_layer = c.spec.layout.len();
        let mut dims: Vec<(&str, usize, usize)> = vec![("l", c.layers, per_layer)];
        for (k, d) in c.spec.layout.dims.iter().enumerate() {
            dims.push((d.name, d.size, c.spec.layout.stride(k)));
        }
        let dim_names = || dims.iter().map(|d| d.0).collect::<Vec<_>>().join(", ");
        // slices
        let mut lo = vec![0usize; dims.len()];
        let mut hi: Vec<usize> = dims.iter().map(|d| d.1).collect();
        for (dname, a, b) in &v.slice {
            let Some(k) = dims.iter().position(|d| d.0 == dname) else {
                return Err(tr!(
                    "{name} has no dimension \"{dname}\" to slice; its dimensions are {dims}",
                    name,
                    dname,
                    dims = dim_names()
                ));
            };
            let what = format!("{name}: slice of {dname}");
            let (a, b) = (eval(a, &what)?, eval(b, &what)?);
            let size = dims[k].1;
            let (a, b) = (
                usize::try_from(a).unwrap_or(usize::MAX),
                usize::try_from(b).unwrap_or(usize::MAX),
            );
            if a >= b || b > size {
                return Err(tr!(
                    "{name}: the slice {dname} ∈ [{a}, {b}) is not within its {size} indices",
                    name,
                    dname,
                    a,
                    b,
                    size
                ));
            }
            lo[k] = a;
            hi[k] = b;
        }
        // strides: given, or the tensor's own layout
        let mut strides = vec![0i64; dims.len()];
        match &v.strides {
            None => {
                // a rename keeps our layout over the slice, and the layers one after another
                let mut s = 1i64;
                for k in (0..dims.len()).rev() {
                    strides[k] = s;
                    s = s.saturating_mul(i64::try_from(hi[k] - lo[k]).unwrap_or(i64::MAX));
                }
            }
            Some(given) => {
                for (dname, e) in given {
                    let Some(k) = dims.iter().position(|d| d.0 == dname) else {
                        return Err(tr!(
                            "{name} has no dimension \"{dname}\"; its dimensions are {dims} (l: the layer)",
                            name,
                            dname,
                            dims = dim_names()
                        ));
                    };
                    strides[k] = eval(e, &format!("{name}: stride of {dname}"))?;
                }
                if let Some(k) =
                    (0..dims.len()).find(|&k| hi[k] - lo[k] > 1 && !given.iter().any(|(n, _)| n == dims[k].0))
                {
                    return Err(tr!(
                        "{name}: no stride for its dimension {dname} ({n} indices); give one (0 reuses the buffer along it, as a scratch row)",
                        name,
                        dname = dims[k].0,
                        n = hi[k] - lo[k]
                    ));
                }
            }
        }
        let offset = eval(&v.offset, &format!("{name}: offset"))?;
        // scratch dimensions (stride 0, several indices) are not in the offsets
        let scratch: Vec<Scratch> = (0..dims.len())
            .filter(|&k| strides[k] == 0 && hi[k] - lo[k] > 1)
            .map(|k| Scratch {
                name: dims[k].0.to_string(),
                size: dims[k].1,
                stride: dims[k].2,
            })
            .collect();
        let walked: Vec<usize> = (0..dims.len())
            .filter(|&k| !(strides[k] == 0 && hi[k] - lo[k] > 1))
            .collect();
        // the largest offset must be a number
        let mut largest = i128::from(offset);
        for &k in &walked {
            largest += i128::from(strides[k]) * (hi[k] - lo[k] - 1) as i128;
        }
        if largest > i128::from(i64::MAX / 2) {
            return Err(tr!(
                "{name}: the view's largest offset, {largest}, is beyond any buffer",
                name,
                largest
            ));
        }
        let count: usize = walked.iter().map(|&k| hi[k] - lo[k]).product();
        if cells.len().saturating_add(count) > limit {
            return Err(tr!(
                "{name}: the views hold more cells than the run's tensors have ({limit})",
                name,
                limit
            ));
        }
        // a scratch dimension's index is added to the cell of its first index: it is not sliced
        if let Some(s) = scratch.iter().find(|s| {
            dims.iter()
                .position(|d| d.0 == s.name)
                .is_some_and(|k| lo[k] != 0 || hi[k] != dims[k].1)
        }) {
            return Err(tr!(
                "{name}: {dim} is reused (stride 0) and sliced; reuse the whole dimension or give it a stride",
                name,
                dim = &s.name
            ));
        }
        // every cell of the view, the scratch dimensions at index 0
        let mut idx: Vec<usize> = walked.iter().map(|&k| lo[k]).collect();
        'cells: loop {
            let mut at = offset;
            let mut cell = 0usize;
            for (w, &k) in walked.iter().enumerate() {
                at += strides[k] * (idx[w] - lo[k]) as i64;
                cell += idx[w] * dims[k].2;
            }
            let view = (vi as u64 + 1) << 32;
            cells.push((at, view | cell as u64));
            // next index, the last dimension fastest
            let mut w = walked.len();
            loop {
                if w == 0 {
                    break 'cells;
                }
                w -= 1;
                let k = walked[w];
                idx[w] += 1;
                if idx[w] < hi[k] {
                    break;
                }
                idx[w] = lo[k];
            }
        }
        views.push(ViewInfo { buf, scratch });
    }
    cells.sort_unstable_by_key(|&(o, _)| o);
    if let Some(w) = cells.windows(2).find(|w| w[0].0 == w[1].0) {
        let label = |packed: u64| {
            let view = (packed >> 32) as usize - 1;
            let cell = (packed & 0xffff_ffff) as usize;
            views.get(view).map_or_else(String::new, |v| {
                let text = r.get(v.buf).map_or_else(String::new, |c| c.label(cell));
                format!("{}[{text}]", v.buf.name())
            })
        };
        return Err(tr!(
            "{a} and {b} are both at offset {offset}: two cells of one buffer cannot share a place (reuse a buffer with a stride of 0)",
            a = label(w[0].1),
            b = label(w[1].1),
            offset = w[0].0
        ));
    }
    let map = match (cells.first(), cells.last()) {
        (Some(&(min, _)), Some(&(max, _))) if (max - min) as usize <= 4 * cells.len() + 64 => {
            let mut dense = vec![0u64; (max - min) as usize + 1];
            for &(o, c) in &cells {
                if let Some(slot) = dense.get_mut((o - min) as usize) {
                    *slot = c;
                }
            }
            OffsetMap::Dense {
                base: min,
                cells: dense,
            }
        }
        _ => OffsetMap::Sparse(cells),
    };
    Ok(Views { views, map })
}
