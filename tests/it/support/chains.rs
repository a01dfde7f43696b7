//! A test helper, not a test: checks that every arithmetic chain a line prints holds to the
//! digits it prints.
//!
//! A line such as `d_k[10] += Σ × 1/√D: -0.0304 + (-0.0259 × 0.7071) = -0.0487` is split at
//! its ` = `; every two neighbouring pieces that are made of numbers and operators only
//! (`+ − × · / ^ √ e^( ) exp( ) ln( )` and parentheses) are evaluated and must agree. Each printed
//! number stands for every value that prints as it: `-0.0487` for [-0.04875, -0.04865], an
//! integer for itself. Both sides are evaluated in interval arithmetic, so a side holds when
//! the two intervals meet; `-0.0563 × 0.7071 = -0.05` does not (-0.0398 is no -0.05).
//!
//! A piece with words in it (`d_k[10]`, `Σ × 1/√D`) is not a number and is skipped; the left
//! piece may end in numbers after a `: ` (`… 1/√D: -0.0304 + …`), and the right piece may be a
//! number followed by a note (`-0.0487   (event #5337)`).

/// `[lo, hi]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Iv(pub f64, pub f64);

impl Iv {
    fn exact(x: f64) -> Iv {
        Iv(x, x)
    }
    /// An exact whole number (a printed integer, or integers added, multiplied or divided).
    fn integer(self) -> bool {
        self.0 == self.1 && self.0.fract() == 0.0
    }
    fn add(self, o: Iv) -> Iv {
        Iv(self.0 + o.0, self.1 + o.1)
    }
    fn sub(self, o: Iv) -> Iv {
        Iv(self.0 - o.1, self.1 - o.0)
    }
    fn mul(self, o: Iv) -> Iv {
        let p = [self.0 * o.0, self.0 * o.1, self.1 * o.0, self.1 * o.1];
        Iv(
            p.iter().copied().fold(f64::INFINITY, f64::min),
            p.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        )
    }
    fn div(self, o: Iv) -> Iv {
        if o.0 <= 0.0 && o.1 >= 0.0 {
            return Iv(f64::NEG_INFINITY, f64::INFINITY);
        }
        self.mul(Iv(1.0 / o.1, 1.0 / o.0))
    }
    fn mono(self, f: fn(f64) -> f64) -> Iv {
        Iv(f(self.0), f(self.1))
    }
    /// Do the two meet, allowing f32's rounding (a few parts in 10⁷) on either side?
    fn meets(self, o: Iv) -> bool {
        let slack = 1e-6 * self.0.abs().max(self.1.abs()).max(o.0.abs()).max(o.1.abs()).max(1e-30);
        self.0 <= o.1 + slack && o.0 <= self.1 + slack
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(Iv),
    Op(char),
    Open,
    Close,
    /// `√`, `e^`, `exp`, `ln`: a function of the primary that follows.
    Fun(&'static str),
}

/// The printed number `text` as the interval of values that print as it.
fn number(text: &str) -> Option<Iv> {
    let x: f64 = text.replace('−', "-").parse().ok()?;
    let (mantissa, exp) = match text.find(['e', 'E']) {
        Some(k) => (&text[..k], text[k + 1..].replace('−', "-").parse::<i32>().ok()?),
        None => (text, 0),
    };
    let decimals = mantissa.split_once('.').map_or(0, |(_, f)| f.len() as i32);
    if decimals == 0 && exp == 0 {
        return Some(Iv::exact(x));
    }
    let half = 0.5 * 10f64.powi(exp - decimals);
    Some(Iv(x - half, x + half))
}

fn tokens(text: &str) -> Option<Vec<Tok>> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut k = 0;
    // a minus sign is a number's own where an operand is expected
    let operand_next = |out: &Vec<Tok>| matches!(out.last(), None | Some(Tok::Op(_) | Tok::Open | Tok::Fun(_)));
    while k < chars.len() {
        let c = chars[k];
        let rest: String = chars[k..].iter().collect();
        if c.is_whitespace() {
            k += 1;
        } else if c.is_ascii_digit() || ((c == '-' || c == '−') && operand_next(&out)) {
            let start = k;
            k += 1;
            while k < chars.len() {
                let d = chars[k];
                let exp_sign = (d == '-' || d == '+' || d == '−') && matches!(chars[k - 1], 'e' | 'E');
                if d.is_ascii_digit() || d == '.' || d == 'e' || d == 'E' || exp_sign {
                    k += 1;
                } else {
                    break;
                }
            }
            let text: String = chars[start..k].iter().collect();
            if text == "-" || text == "−" {
                // a unary minus before a parenthesis or function: -(x) = (-1)·(x)
                out.push(Tok::Num(Iv::exact(-1.0)));
                out.push(Tok::Op('×'));
                continue;
            }
            out.push(Tok::Num(number(&text)?));
        } else if rest.starts_with("e^") {
            out.push(Tok::Fun("exp"));
            k += 2;
        } else if rest.starts_with("exp(") {
            out.push(Tok::Fun("exp"));
            k += 3;
        } else if rest.starts_with("ln(") || rest.starts_with("ln ") {
            out.push(Tok::Fun("ln"));
            k += 2;
        } else if c == '√' {
            out.push(Tok::Fun("sqrt"));
            k += 1;
        } else if "+-−×·*/^".contains(c) {
            out.push(Tok::Op(c));
            k += 1;
        } else if c == '(' {
            out.push(Tok::Open);
            k += 1;
        } else if c == ')' {
            out.push(Tok::Close);
            k += 1;
        } else {
            return None;
        }
    }
    (!out.is_empty()).then_some(out)
}

/// Recursive descent over `sum := product (± product)*`, `product := power ((×|·|/) power)*`,
/// `power := unary (^ unary)?`, `unary := fun unary | number | ( sum )`.
struct Parser {
    toks: Vec<Tok>,
    at: usize,
    /// No function (`√`, `e^`, `ln`) or decimal number has been read: the piece is integer
    /// arithmetic, as the offset formulas are.
    ints: bool,
    /// How deep in exponents the parser is (an exponent divides as the reals do).
    exponent: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at)
    }
    fn sum(&mut self) -> Option<Iv> {
        let mut v = self.product()?;
        while let Some(Tok::Op(op @ ('+' | '-' | '−'))) = self.peek().cloned() {
            self.at += 1;
            let r = self.product()?;
            v = if op == '+' { v.add(r) } else { v.sub(r) };
        }
        Some(v)
    }
    fn product(&mut self) -> Option<Iv> {
        let mut v = self.power()?;
        while let Some(Tok::Op(op @ ('×' | '·' | '*' | '/'))) = self.peek().cloned() {
            self.at += 1;
            let int_before = self.ints;
            let r = self.power()?;
            // an offset formula's `/` between whole numbers is the kernels' integer division
            // (`kv_h = h/(H/H_kv) = 1/(4/2) = 0`); a scale's `1/√2` is not, nor rope's exponent
            // (`10000^(−2·1/4)`)
            v = if op == '/' && v.integer() && r.integer() && int_before && self.ints && self.exponent == 0 {
                Iv::exact((v.0 / r.0).floor())
            } else if op == '/' {
                v.div(r)
            } else {
                v.mul(r)
            };
        }
        Some(v)
    }
    fn power(&mut self) -> Option<Iv> {
        let base = self.unary()?;
        if let Some(Tok::Op('^')) = self.peek() {
            self.at += 1;
            self.exponent += 1;
            let e = self.unary();
            self.exponent -= 1;
            let e = e?;
            // only exact, positive bases and exponents are printed with ^ (10000^(−2·1/4))
            if base.0 != base.1 || base.0 <= 0.0 {
                return None;
            }
            return Some(Iv(base.0.powf(e.0), base.0.powf(e.1)).sorted());
        }
        Some(base)
    }
    fn unary(&mut self) -> Option<Iv> {
        match self.peek().cloned()? {
            Tok::Fun(f) => {
                self.at += 1;
                self.ints = false;
                let x = self.unary()?;
                Some(match f {
                    "sqrt" => x.mono(f64::sqrt),
                    "exp" => x.mono(f64::exp),
                    _ => x.mono(f64::ln),
                })
            }
            Tok::Num(v) => {
                self.at += 1;
                self.ints &= v.integer();
                Some(v)
            }
            Tok::Open => {
                self.at += 1;
                let v = self.sum()?;
                (self.peek() == Some(&Tok::Close)).then_some(())?;
                self.at += 1;
                Some(v)
            }
            _ => None,
        }
    }
}

impl Iv {
    fn sorted(self) -> Iv {
        Iv(self.0.min(self.1), self.0.max(self.1))
    }
}

/// The value of `text` if it is wholly numbers and operators.
pub fn eval(text: &str) -> Option<Iv> {
    let mut p = Parser {
        toks: tokens(text.trim())?,
        at: 0,
        ints: true,
        exponent: 0,
    };
    let v = p.sum()?;
    (p.at == p.toks.len() && v.0.is_finite() && v.1.is_finite()).then_some(v)
}

/// The numeric end of a left-hand piece: all of it, else what follows its last `: `.
fn left(piece: &str) -> Option<Iv> {
    eval(piece).or_else(|| eval(piece.rsplit_once(": ")?.1))
}

/// The numeric start of a right-hand piece: all of it, else what precedes a note (two spaces,
/// ` (`, `;` or `,`), else a number followed by a unit or words (`16 floats`, `15 rows`).
fn right(piece: &str) -> Option<Iv> {
    eval(piece)
        .or_else(|| {
            let end = ["  ", " (", ";", ", "].iter().filter_map(|s| piece.find(s)).min()?;
            eval(&piece[..end])
        })
        .or_else(|| {
            let (number, words) = piece.trim_start().split_once(' ')?;
            words.starts_with(char::is_alphabetic).then(|| eval(number))?
        })
}

/// Every ` = ` of `line` between two numeric pieces holds. Returns how many were checked.
pub fn check_line(line: &str) -> Result<usize, String> {
    let pieces: Vec<&str> = line.split(" = ").collect();
    let mut checked = 0;
    for w in pieces.windows(2) {
        let (Some(a), Some(b)) = (left(w[0]), right(w[1])) else {
            continue;
        };
        if !a.meets(b) {
            return Err(format!(
                "`{} = {}` does not hold: the left side is in [{:.6}, {:.6}], the right in [{:.6}, {:.6}] (line: {line})",
                w[0].trim(),
                w[1].trim(),
                a.0,
                a.1,
                b.0,
                b.1
            ));
        }
        checked += 1;
    }
    Ok(checked)
}

/// [`check_line`] on every line; how many equalities were checked in all.
pub fn check_lines<S: AsRef<str>>(lines: &[S]) -> Result<usize, String> {
    lines.iter().map(|l| check_line(l.as_ref())).sum()
}

#[test]
fn chains_hold_to_their_printed_digits() {
    // the case: printed by the equation panel of a grouped d_k += before the fix
    let wrong = "d_k[10] = Σ × 1/√D = -0.0563 × 0.7071 = -0.05";
    assert!(check_line(wrong).is_err(), "{wrong}");
    assert_eq!(
        check_line("d_k[10] += Σ × 1/√D: -0.0304 + (-0.0259 × 0.7071) = -0.0487"),
        Ok(1)
    );
    assert_eq!(check_line("term 1/2: q[8]·k[4] = 1.0000 × 0.5000 = 0.5000"), Ok(1));
    // a number followed by its unit
    assert_eq!(check_line("  MHA  2·H·D = 2·4·2 = 16 floats, 64 bytes"), Ok(1));
    assert!(check_line("  MHA  2·H·D = 2·4·2 = 15 floats, 64 bytes").is_err());
    assert_eq!(
        check_line("q_base = ((b*T + i)*H + h)*D = ((0*3 + 2)*2 + 1)*2 = 10"),
        Ok(1)
    );
    assert!(check_line("q_base = ((0*3 + 2)*2 + 1)*2 = 11").is_err());
    assert_eq!(check_line("e^(m_old − m_new) = e^(0.5000 − 0.7000) = 0.8187"), Ok(1));
    assert!(check_line("e^(0.5000 − 0.7000) = 0.8").is_ok());
    assert!(check_line("e^(0.5000 − 0.7000) = 0.9").is_err());
    assert_eq!(
        check_line("scores[7] = 0.5000   (event #12, attention_1h.rs:40)"),
        Ok(0)
    );
    assert_eq!(check_line("P = 0.1 / 0.4 = 0.25   (event #3)"), Ok(1));
    assert_eq!(
        check_line("dS = P (dP − Σ) = 0.2500 × (1.0000 − 0.5000) = 0.1250"),
        Ok(1)
    );
    assert!(check_line("0.2500 × (1.0000 − 0.5000) = 0.1300").is_err());
    assert_eq!(check_line("x = -1e9"), Ok(0));
    assert_eq!(eval("1/√4"), Some(Iv(0.5, 0.5)));
    // the offset formulas divide whole numbers as the kernels do
    assert_eq!(check_line("kv_h = h/(H/H_kv) = 1/(4/2) = 0"), Ok(1));
    assert!(check_line("kv_h = 3/(4/2) = 2").is_err());
    assert_eq!(check_line("angle t·θ_m = 1 × 10000^(−2·1/4) = 0.01000"), Ok(1));
    assert!(eval("1/2.0").is_some_and(|v| v.0 > 0.48 && v.1 < 0.52));
    assert_eq!(eval("−(2)"), Some(Iv(-2.0, -2.0)));
}
