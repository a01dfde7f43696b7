//! One element of the attention matrix, `(b, h, i, j)`: what `explain --at` and the tracer's
//! goto name, parsed once here.

use crate::tensor::Layout;
use crate::tr;

/// The score element to explain: batch `b`, head `h` (0 for the baseline), query `i`, key `j`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Element {
    pub b: usize,
    pub h: usize,
    pub i: usize,
    pub j: usize,
}

impl Element {
    /// `b=0,h=1,i=2,j=1` (or separated by spaces, as the tracer's goto takes it) → an element;
    /// `b` and `h` may be left out. The one parser of `explain --at` and the tracer's `g`.
    pub fn parse(text: &str) -> std::result::Result<Element, String> {
        let mut at = Element { b: 0, h: 0, i: 0, j: 0 };
        let mut seen: Vec<&str> = Vec::new();
        for part in text.split([',', ' ']).map(str::trim).filter(|p| !p.is_empty()) {
            let Some((key, value)) = part.split_once('=') else {
                return Err(tr!("\"{part}\" is not key=value; write e.g. b=0,h=1,i=2,j=1", part));
            };
            let (key, value) = (key.trim(), value.trim());
            let value: usize = value
                .parse()
                .map_err(|_| tr!("{key}={value}: expected a non-negative integer", key, value))?;
            if seen.contains(&key) {
                return Err(tr!("{key} is given twice", key));
            }
            match key {
                "b" => at.b = value,
                "h" => at.h = value,
                "i" => at.i = value,
                "j" => at.j = value,
                other => return Err(tr!("unknown index \"{other}\"; expected b, h, i and j", other)),
            }
            seen.push(key);
        }
        if !(seen.contains(&"i") && seen.contains(&"j")) {
            return Err(tr!("i and j are required, e.g. b=0,h=1,i=2,j=1").to_string());
        }
        Ok(at)
    }

    /// The element's offset in a score-shaped layout (`[B,S,T]`, or `[B,H,S,T]` in MHA), or
    /// `None` when it lies outside.
    pub fn offset(&self, scores: &Layout) -> Option<usize> {
        scores.offset_of(&[("b", self.b), ("h", self.h), ("i", self.i), ("j", self.j)])
    }
}
