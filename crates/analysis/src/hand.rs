//! Arithmetic a learner redoes by hand. Every chain the panels and `explain` print
//! (`exp(-0.3123 − 0.6712) = 0.3740`, `Σ × 1/√3 = 5.5277 × 1/√3 = 3.1914`) holds on a
//! calculator: fed the printed operands, it gives the printed result to its last digit.
//!
//! A chain is its operands (values from the log), one or more forms that compute the result
//! from them ([`Expr`], in which a scale is the exact `1/√D` it is printed as), and the result
//! (the value the log holds). [`fit`] chooses the digits: each operand is printed as the
//! surface usually prints it ([`Digits`]), with more decimals only where the chain would not
//! hold otherwise, one operand at a time (`0.04 + 0.0885 = 0.1284` becomes
//! `0.03995 + 0.08847 = 0.1284` when the log's operands are 0.039953 and 0.088471), and the
//! result with more only when even the operands' every digit leave it on a rounding edge. The
//! caller writes the sentence; the numbers it puts in are the [`Fitted`] ones.

use crate::format;
use attn_trace_core::trace::MASKED;

/// How a surface writes its numbers, before a chain asks for more digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Digits {
    /// Four decimals (the panels' chains: [`format::four`]).
    Four,
    /// Four decimals and at least four significant digits (the panels' factors and products:
    /// [`format::exact`]).
    Exact,
    /// Two decimals (the panels' short numbers: [`format::num`]).
    Short,
    /// Up to four decimals with the trailing zeros dropped (`explain`: [`crate::format::plain`]).
    Plain,
}

/// How a chain's result is computed from its operands: what a reader types into a calculator.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// Operand `k` of the chain, as printed.
    Val(usize),
    /// A number printed exactly as it is (`1/√3`, `2`, `1/(1 − 0.1)`): its value.
    Lit(f64),
    Add(Box<Expr>, Box<Expr>),
    Sub(Box<Expr>, Box<Expr>),
    Mul(Box<Expr>, Box<Expr>),
    Div(Box<Expr>, Box<Expr>),
    Neg(Box<Expr>),
    Exp(Box<Expr>),
    Ln(Box<Expr>),
}

/// Operand `k` of a chain.
pub fn v(k: usize) -> Expr {
    Expr::Val(k)
}

/// A number the chain prints exactly (a scale `1/√D` as `lit(1.0 / (D as f64).sqrt())`).
pub fn lit(x: f64) -> Expr {
    Expr::Lit(x)
}

/// `1/√width`, exactly, as a chain prints a scale.
pub fn inv_sqrt(width: usize) -> Expr {
    Expr::Lit(1.0 / (width as f64).sqrt())
}

/// `e^x`.
pub fn exp(x: Expr) -> Expr {
    Expr::Exp(Box::new(x))
}

/// `ln x`.
pub fn ln(x: Expr) -> Expr {
    Expr::Ln(Box::new(x))
}

/// `Σ_k Π_f vals[…]`: the sum of products whose operands are numbered term by term, factor by
/// factor (`terms` factors each), after `first` operands that come before them.
pub fn sum_of_products(first: usize, terms: usize, factors: usize) -> Option<Expr> {
    (0..terms)
        .map(|t| (0..factors).map(|f| v(first + t * factors + f)).reduce(|a, b| a * b))
        .collect::<Option<Vec<_>>>()?
        .into_iter()
        .reduce(|a, b| a + b)
}

macro_rules! binary {
    ($trait:ident, $method:ident, $case:ident) => {
        impl std::ops::$trait for Expr {
            type Output = Expr;
            fn $method(self, rhs: Expr) -> Expr {
                Expr::$case(Box::new(self), Box::new(rhs))
            }
        }
    };
}
binary!(Add, add, Add);
binary!(Sub, sub, Sub);
binary!(Mul, mul, Mul);
binary!(Div, div, Div);

impl std::ops::Neg for Expr {
    type Output = Expr;
    fn neg(self) -> Expr {
        Expr::Neg(Box::new(self))
    }
}

impl Expr {
    /// The value of the expression on the operands `xs`, as a calculator works it out.
    pub fn eval(&self, xs: &[f64]) -> f64 {
        match self {
            Expr::Val(k) => xs.get(*k).copied().unwrap_or(f64::NAN),
            Expr::Lit(x) => *x,
            Expr::Add(a, b) => a.eval(xs) + b.eval(xs),
            Expr::Sub(a, b) => a.eval(xs) - b.eval(xs),
            Expr::Mul(a, b) => a.eval(xs) * b.eval(xs),
            Expr::Div(a, b) => a.eval(xs) / b.eval(xs),
            Expr::Neg(a) => -a.eval(xs),
            Expr::Exp(a) => a.eval(xs).exp(),
            Expr::Ln(a) => a.eval(xs).ln(),
        }
    }
}

/// A chain's numbers as printed: `vals[k]` is operand `k`, `result` the result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fitted {
    pub vals: Vec<String>,
    pub result: String,
}

impl Fitted {
    /// Operand `k` as printed.
    pub fn val(&self, k: usize) -> String {
        self.vals.get(k).cloned().unwrap_or_default()
    }

    /// Operand `k` in parentheses when it is negative, for use after an operator:
    /// `0.5 − (-0.16)`, `0.2 × (-0.31)`.
    pub fn par(&self, k: usize) -> String {
        format::rhs(self.val(k))
    }
}

/// `v` as `digits` writes it, with `extra` more decimals (0: exactly as the surface writes it).
pub fn print(v: f32, digits: Digits, extra: usize) -> String {
    if v == MASKED || v.is_infinite() || v.is_nan() {
        return match digits {
            Digits::Plain => crate::format::plain(v),
            _ => format::four(v),
        };
    }
    if extra == 0 {
        return match digits {
            Digits::Four => format::four(v),
            Digits::Exact => format::exact(v),
            Digits::Short => format::num(v),
            Digits::Plain => crate::format::plain(v),
        };
    }
    if v.abs() >= 999.5 {
        return unsigned_zero(format!("{v:.prec$}", prec = extra - 1));
    }
    // more decimals are always there to print
    shifted(v, digits, extra.cast_signed()).unwrap_or_default()
}

/// `v` as `digits` writes it with `fewer` decimals less, while one significant digit is left:
/// a result whose last digits f32's rounding made, not the arithmetic (`None` past that).
fn print_fewer(v: f32, digits: Digits, fewer: usize) -> Option<String> {
    if v == 0.0 || !v.is_finite() || v.abs() >= 999.5 {
        return None;
    }
    let text = shifted(v, digits, -fewer.cast_signed())?;
    // a result rounded to zero says nothing of the value
    (parse(&text) != 0.0).then_some(text)
}

/// A finite `v` below 999.5 in `digits`' form with `shift` decimals more (fewer when negative)
/// than that form's own; `None` when fewer than none are asked for.
fn shifted(v: f32, digits: Digits, shift: isize) -> Option<String> {
    let prec = |own: usize| own.checked_add_signed(shift);
    Some(match digits {
        // explain writes the smallest and largest magnitudes in scientific notation
        Digits::Plain if v != 0.0 && v.abs() < 1e-4 => format!("{v:.p$e}", p = prec(3)?),
        Digits::Plain => {
            let text = unsigned_zero(format!("{v:.p$}", p = prec(4)?));
            text.trim_end_matches('0').trim_end_matches('.').to_string()
        }
        Digits::Short => unsigned_zero(format!("{v:.p$}", p = prec(2)?)),
        Digits::Four if v.abs() >= 0.00005 => unsigned_zero(format!("{v:.p$}", p = prec(4)?)),
        Digits::Four | Digits::Exact => unsigned_zero(format!("{v:.p$}", p = prec(format::exact_decimals(v))?)),
    })
}

/// `-0.0000` → `0.0000`: a value that rounds to zero carries no sign.
fn unsigned_zero(text: String) -> String {
    match text.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
        _ => text,
    }
}

/// The value a printed number is to a calculator.
fn parse(text: &str) -> f64 {
    match text {
        "−∞" | "-∞" => f64::NEG_INFINITY,
        _ => text.replace('−', "-").parse().unwrap_or(f64::NAN),
    }
}

/// The values a printed result stands for: those that round to it at its last digit.
fn stands_for(text: &str) -> (f64, f64) {
    let x = parse(text);
    if x.is_infinite() {
        return (x, x);
    }
    let (mantissa, exp) = match text.find(['e', 'E']) {
        Some(k) => (&text[..k], text[k + 1..].parse::<i32>().unwrap_or(0)),
        None => (text, 0),
    };
    let decimals = mantissa.split_once('.').map_or(0, |(_, f)| f.len() as i32);
    let half = 0.5 * 10f64.powi(exp - decimals);
    // a tie would round either way on a calculator: the chain keeps clear of it by a few parts
    // in 10¹⁰, more than f64's own rounding
    let margin = 1e-10 * x.abs().max(1e-30);
    (x - half + margin, x + half - margin)
}

/// How far the forms of the chain, worked out from `vals` as printed, land from the values
/// `result` stands for: 0 when every one rounds to it.
fn miss(vals: &[String], forms: &[Expr], result: &str) -> f64 {
    let xs: Vec<f64> = vals.iter().map(|t| parse(t)).collect();
    let (lo, hi) = stands_for(result);
    forms
        .iter()
        .map(|f| {
            let x = f.eval(&xs);
            if x.is_infinite() || lo.is_infinite() {
                if x == lo { 0.0 } else { f64::INFINITY }
            } else if x.is_nan() {
                f64::INFINITY
            } else {
                (lo - x).max(x - hi).max(0.0)
            }
        })
        .sum()
}

/// Most decimals a chain adds to an operand. f32's shortest form has about 8 significant
/// digits, but the value it stands for is an exact binary fraction with more: two operands
/// that agree in their first 7 digits (`dP − Σ_k dP·P` when P is all but 1) leave a difference
/// whose 4 digits come from the operands' 8th to 11th, so an operand may go on to 13.
const MORE_OPERAND_DIGITS: usize = 9;
/// Most decimals a chain adds to its result.
const MORE_RESULT_DIGITS: usize = 3;
/// Most decimals a chain adds to operand `v`: [`MORE_OPERAND_DIGITS`] significant digits more,
/// counted from its first one, so `0.000707174` can still go on to `0.00070717426` when two
/// nearly equal operands cancel (written in fixed point, its leading zeros are decimals too).
fn more_digits(v: f32) -> usize {
    let a = v.abs();
    if a == 0.0 || a >= 1.0 || !a.is_finite() {
        return MORE_OPERAND_DIGITS;
    }
    MORE_OPERAND_DIGITS + (-a.log10()).floor() as usize
}

/// Chains with more operands than this take more digits all at once, not one operand at a time.
const ONE_BY_ONE: usize = 16;

/// The operands printed so that the forms hold against the printed `result`, each with as few
/// more decimals as it can: one digit at a time, to the operand whose next digit brings the
/// chain nearest its result (a factor multiplied by 10 needs a digit more than one multiplied
/// by 0.1). The second value says whether the chain holds.
fn operands(vals: &[f32], digits: Digits, forms: &[Expr], result: &str) -> (Vec<String>, bool) {
    let printed =
        |extra: &[usize]| -> Vec<String> { vals.iter().zip(extra).map(|(&x, &e)| print(x, digits, e)).collect() };
    // operand k's next digits that print otherwise (`0.284` stays `0.284` at 5 decimals)
    let next = |extra: &[usize], k: usize| {
        let now = print(vals[k], digits, extra[k]);
        (extra[k] + 1..=more_digits(vals[k])).find(|&e| print(vals[k], digits, e) != now)
    };
    let mut extra = vec![0; vals.len()];
    let mut now = printed(&extra);
    let mut distance = miss(&now, forms, result);
    while distance > 0.0 {
        let one = |k: usize| {
            let mut more = extra.clone();
            more[k] = next(&extra, k)?;
            Some((miss(&printed(&more), forms, result), more))
        };
        let best = if vals.len() > ONE_BY_ONE {
            None
        } else {
            (0..vals.len())
                .filter_map(one)
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .filter(|(d, _)| *d < distance)
        };
        // no single operand's digit brings it nearer: every operand takes its next one
        let more = match best {
            Some((_, more)) => more,
            None => {
                let all: Vec<usize> = (0..vals.len()).map(|k| next(&extra, k).unwrap_or(extra[k])).collect();
                if all == extra {
                    return (now, false);
                }
                all
            }
        };
        extra = more;
        now = printed(&extra);
        distance = miss(&now, forms, result);
    }
    // a digit taken early may not be needed once later ones are: each operand gives back what
    // the chain holds without
    for k in 0..vals.len() {
        while extra[k] > 0 {
            let mut fewer = extra.clone();
            fewer[k] -= 1;
            let shorter = printed(&fewer);
            if miss(&shorter, forms, result) > 0.0 {
                break;
            }
            (extra, now) = (fewer, shorter);
        }
    }
    (now, true)
}

/// The numbers of a chain whose operands are `vals` and whose result is `result`, printed in
/// `digits` with the fewest more decimals that make every form in `forms` hold by hand.
pub fn fit(vals: &[f32], forms: &[Expr], result: f32, digits: Digits) -> Fitted {
    fit_as(vals, digits, forms, result, digits)
}

/// The operands of a chain whose result is already printed (`result`, the operand of a chain
/// printed before), in `digits` with the fewest more decimals that make every form hold.
pub fn fit_to(vals: &[f32], forms: &[Expr], result: &str, digits: Digits) -> Fitted {
    Fitted {
        vals: operands(vals, digits, forms, result).0,
        result: result.to_string(),
    }
}

/// [`fit`] with the operands written one way (`Short`) and the result another (`Four`).
///
/// The result takes more digits when the operands' every digit leave it on a rounding edge,
/// and fewer when the kernel's own f32 rounding (products of 0.07 that cancel to 2e-6) made
/// its last ones: exact arithmetic on the operands cannot give those, so it shows the digits
/// that are true of both.
pub fn fit_as(vals: &[f32], val_digits: Digits, forms: &[Expr], result: f32, result_digits: Digits) -> Fitted {
    let more = (0..=MORE_RESULT_DIGITS).map(|more| Some(print(result, result_digits, more)));
    let fewer = (1..).map(|fewer| print_fewer(result, result_digits, fewer));
    // when none holds, the most digits
    let mut most = None;
    for (k, printed) in more.chain(fewer).map_while(|p| p).enumerate() {
        let (vals, holds) = operands(vals, val_digits, forms, &printed);
        let fitted = Fitted { vals, result: printed };
        if holds {
            return fitted;
        }
        if k <= MORE_RESULT_DIGITS {
            most = Some(fitted);
        }
    }
    most.unwrap_or(Fitted {
        vals: Vec::new(),
        result: print(result, result_digits, 0),
    })
}

/// One chain's arithmetic: its operands (values from the log), the forms that compute its
/// result from them, and the result (the value the log holds).
#[derive(Clone, Debug, PartialEq)]
pub struct Calc {
    pub vals: Vec<f32>,
    pub forms: Vec<Expr>,
    pub result: f32,
}

impl Calc {
    pub fn new(vals: Vec<f32>, form: Expr, result: f32) -> Calc {
        Calc {
            vals,
            forms: vec![form],
            result,
        }
    }

    /// The same chain printed a second way (`e^(a − b)·c + d = α × c + d = l`).
    #[must_use]
    pub fn also(mut self, form: Expr) -> Calc {
        self.forms.push(form);
        self
    }

    /// Its numbers in `digits` ([`fit`]).
    pub fn fit(&self, digits: Digits) -> Fitted {
        fit(&self.vals, &self.forms, self.result, digits)
    }

    /// Its numbers, the operands in `vals` and the result in `result` ([`fit_as`]).
    pub fn fit_as(&self, vals: Digits, result: Digits) -> Fitted {
        fit_as(&self.vals, vals, &self.forms, self.result, result)
    }
}
