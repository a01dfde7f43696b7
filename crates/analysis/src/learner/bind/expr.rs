//! The small integer expressions a binding's offsets, strides and slices are written in, parsed
//! and evaluated over the run's sizes.

use attn_trace_i18n::tr;

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
                        names = names.join(tr!(", "))
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
