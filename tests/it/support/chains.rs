//! A test helper, not a test: checks that every arithmetic chain a line prints holds by hand.
//!
//! The standard (issue 53): every printed chain, recomputed on a calculator from the printed
//! operands, gives the printed result to its last digit. A line such as
//! `d_k[10] += Σ × 1/√D: -0.0304 + (-0.0259 × 1/√2) = -0.0487` is split at its ` = `; a run of
//! neighbouring pieces made of numbers and operators only (`+ − × · / ^ √ e^( ) exp( ) ln( )`
//! and parentheses) is a chain, and its last piece is its result. Every other piece of the
//! chain is evaluated from its printed numbers exactly as printed (a calculator's points, not
//! the values that print alike) and must round to the result at the result's last digit:
//! `-0.0487` holds for [-0.04875, -0.04865]; `exp(-0.31 − 0.67) = 0.3739` does not
//! (exp(−0.98) is 0.3753), nor `5.5277 × 0.5774 = 3.1914` (3.1917).
//!
//! A piece with words in it (`d_k[10]`, `Σ × 1/√D`) is not a number and is skipped; the left
//! piece may end in numbers after a `: ` (`… 1/√D: -0.0304 + …`), and the right piece may be a
//! number followed by a note (`-0.0487   (event #5337)`). Integers with `/` between them are
//! the kernels' integer division (`kv_h = hh/(H/H_kv) = 1/(4/2) = 0`).

/// `[lo, hi]`: a point, or the values a printed result stands for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Iv(pub f64, pub f64);

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    /// A printed number: its value and whether it is written as an integer (`12`, not `12.0`).
    Num(f64, bool),
    Op(char),
    Open,
    Close,
    /// `√`, `e^`, `exp`, `ln`: a function of the primary that follows.
    Fun(&'static str),
}

/// The printed number `text`, and whether it is an integer as written.
fn number(text: &str) -> Option<(f64, bool)> {
    let x: f64 = text.replace('−', "-").parse().ok()?;
    Some((x, !text.contains(['.', 'e', 'E'])))
}

/// The values a printed result stands for: every value that rounds to it at its last digit
/// (`-0.0487` for [-0.04875, -0.04865], `12` for [11.5, 12.5], `2.5e-5` for [2.45e-5, 2.55e-5]).
fn printed(text: &str) -> Option<Iv> {
    let text = text.trim();
    if text == "−∞" || text == "-∞" {
        return Some(Iv(f64::NEG_INFINITY, f64::NEG_INFINITY));
    }
    let (x, _) = number(text)?;
    let (mantissa, exp) = match text.find(['e', 'E']) {
        Some(k) => (&text[..k], text[k + 1..].replace('−', "-").parse::<i32>().ok()?),
        None => (text, 0),
    };
    let decimals = mantissa.split_once('.').map_or(0, |(_, f)| f.len() as i32);
    let half = 0.5 * 10f64.powi(exp - decimals);
    // a tie rounds either way on a calculator; a few parts in 10¹² absorb f64's own rounding
    let slack = 1e-12 * x.abs().max(1e-30);
    Some(Iv(x - half - slack, x + half + slack))
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
        } else if rest.starts_with("−∞") || rest.starts_with("-∞") {
            out.push(Tok::Num(f64::NEG_INFINITY, false));
            k += 2;
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
                out.push(Tok::Num(-1.0, true));
                out.push(Tok::Op('×'));
                continue;
            }
            let (x, int) = number(&text)?;
            out.push(Tok::Num(x, int));
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

/// A value and whether it is exact integer arithmetic so far.
#[derive(Clone, Copy, Debug)]
struct Val(f64, bool);

/// Recursive descent over `sum := product (± product)*`, `product := power ((×|·|/) power)*`,
/// `power := unary (^ unary)?`, `unary := fun unary | number | ( sum )`, on the printed numbers
/// as a calculator takes them.
struct Parser {
    toks: Vec<Tok>,
    at: usize,
    /// How deep in exponents the parser is (an exponent divides as the reals do).
    exponent: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at)
    }
    fn sum(&mut self) -> Option<Val> {
        let mut v = self.product()?;
        while let Some(Tok::Op(op @ ('+' | '-' | '−'))) = self.peek().cloned() {
            self.at += 1;
            let r = self.product()?;
            v = Val(if op == '+' { v.0 + r.0 } else { v.0 - r.0 }, v.1 && r.1);
        }
        Some(v)
    }
    fn product(&mut self) -> Option<Val> {
        let mut v = self.power()?;
        while let Some(Tok::Op(op @ ('×' | '·' | '*' | '/'))) = self.peek().cloned() {
            self.at += 1;
            let r = self.power()?;
            // an offset formula's `/` between whole numbers is the kernels' integer division
            // (`kv_h = hh/(H/H_kv) = 1/(4/2) = 0`); a scale's `1/√2` is not, nor rope's exponent
            // (`10000^(−2·1/4)`)
            let ints = v.1 && r.1;
            v = if op == '/' && ints && self.exponent == 0 {
                if r.0 == 0.0 {
                    return None;
                }
                Val((v.0 / r.0).floor(), true)
            } else if op == '/' {
                Val(v.0 / r.0, false)
            } else {
                Val(v.0 * r.0, ints)
            };
        }
        Some(v)
    }
    fn power(&mut self) -> Option<Val> {
        let base = self.unary()?;
        if let Some(Tok::Op('^')) = self.peek() {
            self.at += 1;
            self.exponent += 1;
            let e = self.unary();
            self.exponent -= 1;
            let e = e?;
            // only positive bases are printed with ^ (10000^(−2·1/4))
            if base.0 <= 0.0 {
                return None;
            }
            return Some(Val(base.0.powf(e.0), false));
        }
        Some(base)
    }
    fn unary(&mut self) -> Option<Val> {
        match self.peek().cloned()? {
            Tok::Fun(f) => {
                self.at += 1;
                let x = self.unary()?.0;
                Some(Val(
                    match f {
                        "sqrt" => x.sqrt(),
                        "exp" => x.exp(),
                        _ => x.ln(),
                    },
                    false,
                ))
            }
            Tok::Num(x, int) => {
                self.at += 1;
                Some(Val(x, int))
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

/// The value of `text`, from its printed numbers, if it is wholly numbers and operators.
pub(crate) fn eval(text: &str) -> Option<f64> {
    let mut p = Parser {
        toks: tokens(text.trim())?,
        at: 0,
        exponent: 0,
    };
    let v = p.sum()?;
    (p.at == p.toks.len() && !v.0.is_nan() && v.0 != f64::INFINITY).then_some(v.0)
}

/// The numeric end of a left-hand piece: all of it, else what follows its last `: `.
fn left(piece: &str) -> Option<f64> {
    eval(piece).or_else(|| eval(piece.rsplit_once(": ")?.1))
}

/// The numeric start of a right-hand piece: all of it, else what precedes a note (two spaces,
/// ` (`, `;` or `,`), else a number followed by a unit or words (`16 floats`, `15 rows`).
fn right_text(piece: &str) -> Option<&str> {
    if eval(piece).is_some() {
        return Some(piece);
    }
    let end = ["  ", " (", ";", ", "].iter().filter_map(|s| piece.find(s)).min();
    if let Some(end) = end
        && eval(&piece[..end]).is_some()
    {
        return Some(&piece[..end]);
    }
    let (number, words) = piece.trim_start().split_once(' ')?;
    (words.starts_with(char::is_alphabetic) && eval(number).is_some()).then_some(number)
}

/// What a chain's last piece stands for: a printed number, every value that rounds to it; an
/// expression (`… = 10 + 1` before words), its value.
fn result(text: &str) -> Option<Iv> {
    let toks = tokens(text.trim())?;
    if let [Tok::Num(..)] = toks.as_slice() {
        return printed(text);
    }
    let x = eval(text)?;
    let slack = 1e-12 * x.abs().max(1e-30);
    Some(Iv(x - slack, x + slack))
}

/// Every chain of `line` holds by hand: each of its pieces, computed from the printed numbers,
/// rounds to its printed result. Returns how many ` = ` of chains were checked.
pub(crate) fn check_line(line: &str) -> Result<usize, String> {
    let pieces: Vec<&str> = line.split(" = ").collect();
    let mut checked = 0;
    let mut k = 0;
    while k + 1 < pieces.len() {
        let (Some(first), Some(_)) = (left(pieces[k]), right_text(pieces[k + 1])) else {
            k += 1;
            continue;
        };
        // the chain runs on while its middle pieces are wholly numbers
        let mut values = vec![(first, pieces[k].trim())];
        let mut m = k + 1;
        while m + 1 < pieces.len()
            && let Some(x) = eval(pieces[m])
            && right_text(pieces[m + 1]).is_some()
        {
            values.push((x, pieces[m].trim()));
            m += 1;
        }
        let last = right_text(pieces[m]).ok_or("unreachable")?;
        let want = result(last).ok_or_else(|| format!("`{last}` is not a number (line: {line})"))?;
        for (x, text) in values {
            let holds = if x.is_infinite() || want.0.is_infinite() {
                x == want.0
            } else {
                want.0 <= x && x <= want.1
            };
            if !holds {
                return Err(format!(
                    "`{text} = {last}` does not hold by hand: {text} is {x:.8} from its printed numbers, \
                     {last} stands for [{:.8}, {:.8}] (line: {line})",
                    want.0, want.1
                ));
            }
            checked += 1;
        }
        k = m;
    }
    Ok(checked)
}

/// [`check_line`] on every line; how many equalities were checked in all.
pub(crate) fn check_lines<S: AsRef<str>>(lines: &[S]) -> Result<usize, String> {
    lines.iter().map(|l| check_line(l.as_ref())).sum()
}

#[test]
fn chains_hold_by_hand_to_their_last_digit() {
    // the cases (53, item 4): operands printed with fewer digits than the result needs,
    // and a scale printed as a rounded decimal
    for wrong in [
        "pass b: e_1 = exp(-0.31 − 0.67) = 0.3739",
        "S = Σ × 1/√3 = 5.5277 × 0.5774 = 3.1914",
        "0.04 + 0.0885 = 0.1284",
        "d_k[10] = Σ × 1/√D = -0.0563 × 0.7071 = -0.05",
    ] {
        assert!(check_line(wrong).is_err(), "{wrong}");
    }
    assert_eq!(check_line("S = Σ × 1/√3 = 5.5277 × 1/√3 = 3.1914"), Ok(1));
    assert_eq!(check_line("pass b: e_1 = exp(-0.3123 − 0.6712) = 0.3740"), Ok(1));
    assert_eq!(
        check_line("d_k[10] += Σ × 1/√D: -0.0304 + (-0.0259 × 0.7071) = -0.0487"),
        Ok(1)
    );
    assert_eq!(check_line("term 1/2: q[8]·k[4] = 1.0000 × 0.5000 = 0.5000"), Ok(1));
    // a number followed by its unit
    assert_eq!(check_line("  MHA  2·H·D = 2·4·2 = 16 floats, 64 bytes"), Ok(1));
    assert!(check_line("  MHA  2·H·D = 2·4·2 = 15 floats, 64 bytes").is_err());
    assert_eq!(
        check_line("q_base = ((bb*S + i)*H + hh)*D = ((0*3 + 2)*2 + 1)*2 = 10"),
        Ok(1)
    );
    assert!(check_line("q_base = ((0*3 + 2)*2 + 1)*2 = 11").is_err());
    // every piece of a chain against its last: e^(0.5 − 0.7) = 0.8187 to four decimals
    assert_eq!(check_line("e^(m_old − m_new) = e^(0.5000 − 0.7000) = 0.8187"), Ok(1));
    assert!(check_line("e^(0.5000 − 0.7000) = 0.8").is_ok());
    assert!(check_line("e^(0.5000 − 0.7000) = 0.9").is_err());
    assert!(check_line("e^(0.5 − 0.7) = 0.8187 × 1 = 0.8188").is_err());
    assert_eq!(check_line("e^(0.5 − 0.7) × 2 = 0.81873 × 2 = 1.6375"), Ok(2));
    assert!(check_line("e^(0.5 − 0.7) × 2 = 0.8187 × 2 = 1.6375").is_err());
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
    assert_eq!(eval("1/√4"), Some(0.5));
    // the offset formulas divide whole numbers as the kernels do
    assert_eq!(check_line("kv_h = hh/(H/H_kv) = 1/(4/2) = 0"), Ok(1));
    assert!(check_line("kv_h = 3/(4/2) = 2").is_err());
    assert_eq!(check_line("angle t·θ_m = 1 × 10000^(−2·1/4) = 0.01000"), Ok(1));
    assert!(eval("1/2.0").is_some_and(|v| v == 0.5));
    assert_eq!(eval("−(2)"), Some(-2.0));
    // an empty row's maximum
    assert_eq!(check_line("l = e^(−∞ − 0.5000)·0.0000 + 1.2000 = 1.2000"), Ok(1));
}
