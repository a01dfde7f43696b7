//! Writing a trace's events out, fast: JSON Lines and CSV (every field of every event), and the
//! address traces of cache simulators, Dinero's `din` and Valgrind lackey's. `attn-trace trace`
//! writes the header line and picks the output; this module writes the events.
//!
//! Speed: the events are cut into chunks that the cores format in parallel, each into a buffer of
//! its own, written out in order. Within a chunk nothing allocates per event: names are copied
//! from tables made once, numbers are written with `itoa` and `ryu`, and the loop variables of
//! consecutive events in the same loop iteration are rendered once. The bytes are exactly those
//! of the plain writer this replaced (`{:?}` for values, the `csv` crate's quoting), which a test
//! holds them to.

use super::cache::Addresses;
use attn_trace_core::kernels::Variant;
use attn_trace_core::tensor::Level;
use attn_trace_core::trace::{Buf, NO_FRAME, Op, Pass, Phase, Recorder, Trace};
use std::io::Write;

/// The CSV columns, also the JSON keys, in order.
pub const FIELDS: [&str; 14] = [
    "seq", "variant", "pass", "phase", "op", "buffer", "level", "offset", "index", "value", "vars", "derived", "file",
    "line",
];

/// What an export writes per event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// One JSON object per line.
    Jsonl,
    /// Comma-separated values ([`FIELDS`]).
    Csv,
    /// Dinero's format: `0 ADDR` for a read, `1 ADDR` for a write, hexadecimal.
    Din,
    /// Valgrind lackey's: ` L ADDR,4` for a load, ` S ADDR,4` for a store.
    Lackey,
}

/// Which events an export keeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    pub pass: Option<Pass>,
    pub phase: Option<Phase>,
    pub buffer: Option<Buf>,
    pub level: Option<Level>,
}

impl Filter {
    /// Does the filter keep the events of `phase` (its pass and phase)?
    pub(crate) fn keeps_phase(&self, phase: Phase) -> bool {
        self.phase.is_none_or(|p| p == phase) && self.pass.is_none_or(|p| p == phase.pass())
    }
}

/// Events per chunk, and chunks formatted at once (by the cores in turn).
const CHUNK: usize = 1 << 14;
const BATCH: usize = 16;

/// Writes the events of `trace` (a run of `variant`) that pass `filter` to `w` in `format`;
/// calls `progress(events looked at, bytes written)` now and then; returns how many it wrote.
pub fn write_events(
    trace: &Trace,
    variant: Variant,
    filter: &Filter,
    format: Format,
    w: &mut dyn Write,
    mut progress: impl FnMut(u64, u64),
) -> std::io::Result<u64> {
    use rayon::prelude::*;
    if trace.phases.is_empty() {
        return Ok(0);
    }
    let tables = Tables::new(trace, variant, format);
    let mut written = 0u64;
    let mut bytes = 0u64;
    let len = trace.len();
    let mut start = 0;
    // the chunks' buffers, kept from batch to batch (fresh ones cost a page fault per 4 KiB)
    let mut buffers: Vec<(Vec<u8>, u64)> = (0..BATCH).map(|_| (Vec::new(), 0)).collect();
    while start < len {
        let end = (start + CHUNK * BATCH).min(len);
        buffers.par_iter_mut().enumerate().for_each(|(k, (out, n))| {
            out.clear();
            let s = (start + k * CHUNK).min(end);
            *n = tables.chunk(trace, filter, s, (s + CHUNK).min(end), out);
        });
        for (buf, n) in &buffers {
            w.write_all(buf)?;
            written += n;
            bytes += buf.len() as u64;
        }
        start = end;
        progress(start as u64, bytes);
    }
    Ok(written)
}

/// How many events of `trace` pass `filter` (counted), and about how many bytes they make in
/// `format` (from up to four chunks spread over the trace): what an export announces before it
/// starts.
pub fn estimate(trace: &Trace, variant: Variant, filter: &Filter, format: Format) -> (u64, u64) {
    if trace.phases.is_empty() {
        return (0, 0);
    }
    let count = count(trace, filter);
    let tables = Tables::new(trace, variant, format);
    let len = trace.len();
    let (mut n, mut bytes) = (0u64, 0u64);
    let mut out = Vec::new();
    for start in [0, len / 4, len / 2, 3 * len / 4] {
        out.clear();
        n += tables.chunk(trace, filter, start, (start + CHUNK).min(len), &mut out);
        bytes += out.len() as u64;
    }
    (count, (count * bytes).checked_div(n).unwrap_or(0))
}

/// How many events of `trace` pass `filter`.
pub fn count(trace: &Trace, filter: &Filter) -> u64 {
    let mut count = 0u64;
    for k in 0..trace.phases.len() {
        if !filter.keeps_phase(trace.phases[k].1) {
            continue;
        }
        count += trace.events[trace.span_range(k)]
            .iter()
            .filter(|e| {
                filter.buffer.is_none_or(|b| b == e.buf) && filter.level.is_none_or(|l| l == trace.level(e.buf))
            })
            .count() as u64;
    }
    count
}

/// The bytes of a value as `{:?}` writes it, faster: `ryu` gives the same shortest digits, and
/// the same layout where both write plain decimals (from 1e-4 up to 1e13); outside that range,
/// for the non-finite, and for a tie between two shortest candidates (`-3.86328125`, which
/// `{:?}` rounds away from zero and `ryu` to even), `{:?}` itself.
#[inline]
pub fn push_debug_f32(out: &mut Vec<u8>, x: f32) {
    let a = x.abs();
    if x == 0.0 || (1e-4..1e13).contains(&a) {
        let mut b = ryu::Buffer::new();
        let s = b.format_finite(x);
        if !is_tie(x, s) {
            out.extend_from_slice(s.as_bytes());
            return;
        }
    }
    let _ = write!(out, "{x:?}");
}

/// Is `x` exactly halfway between two decimals of the length of `shortest` (its shortest form)?
/// Its exact decimal then has one significant digit more, and that digit is a 5. A shortest
/// form has at most 9 digits, so only exact values of at most 10 significant digits can tie:
/// `m·5^k` (for `x = m·2^-k`, `m` odd) has more once `k > 14`.
fn is_tie(x: f32, shortest: &str) -> bool {
    let bits = x.abs().to_bits();
    let exp = ((bits >> 23) & 0xff) as i32;
    let frac = bits & 0x7f_ffff;
    let (mut m, mut e) = if exp == 0 {
        (frac, -149)
    } else {
        (frac | 1 << 23, exp - 150)
    };
    if m == 0 {
        return false;
    }
    let tz = m.trailing_zeros();
    m >>= tz;
    e += tz as i32;
    // the exact value's significant digits: m·2^e (an integer below 1e13 here), or m·5^k
    // when e = -k (then it ends in 5)
    let mut d: u64 = if e >= 0 {
        if e > 40 {
            return false;
        }
        u64::from(m) << e
    } else {
        let k = e.unsigned_abs();
        if k > 14 {
            return false;
        }
        u64::from(m) * 5u64.pow(k)
    };
    while d.is_multiple_of(10) {
        d /= 10;
    }
    if d % 10 != 5 {
        return false;
    }
    let exact = d.ilog10() as usize + 1;
    let digits = shortest.as_bytes();
    let first = digits.iter().position(|&b| (b'1'..=b'9').contains(&b));
    let last = digits.iter().rposition(|&b| (b'1'..=b'9').contains(&b));
    let (Some(first), Some(last)) = (first, last) else {
        return false;
    };
    let significant = digits[first..=last].iter().filter(|b| b.is_ascii_digit()).count();
    exact == significant + 1
}

/// A JSON number for a value; JSON has no NaN or infinity: those are the strings `"nan"`,
/// `"inf"` and `"-inf"`, as the recorders write them and `grade` reads them.
#[inline]
fn push_json_number(out: &mut Vec<u8>, x: f32) {
    if x.is_finite() {
        push_debug_f32(out, x);
    } else if x.is_nan() {
        out.extend_from_slice(b"\"nan\"");
    } else if x > 0.0 {
        out.extend_from_slice(b"\"inf\"");
    } else {
        out.extend_from_slice(b"\"-inf\"");
    }
}

/// Decimal `n`; most of the numbers are loop variables and coordinates below 100.
#[inline]
fn push_int(out: &mut Vec<u8>, n: u64) {
    if n < 10 {
        out.push(b'0' + n as u8);
    } else if n < 100 {
        out.extend_from_slice(&[b'0' + (n / 10) as u8, b'0' + (n % 10) as u8]);
    } else {
        out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    }
}

/// Lowercase hexadecimal of `n`, at least `width` digits.
#[inline]
fn push_hex(out: &mut Vec<u8>, n: u64, width: usize) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut tmp = [0u8; 16];
    let mut k = 16;
    let mut v = n;
    loop {
        k -= 1;
        tmp[k] = DIGITS[(v & 15) as usize];
        v >>= 4;
        if v == 0 {
            break;
        }
    }
    for _ in (16 - k)..width {
        out.push(b'0');
    }
    out.extend_from_slice(&tmp[k..]);
}

/// A CSV field as the `csv` crate writes it: in quotes, with quotes doubled, when it holds a
/// comma, a quote or a line break.
fn push_csv_field(out: &mut Vec<u8>, field: &str) {
    if field.bytes().any(|b| matches!(b, b',' | b'"' | b'\r' | b'\n')) {
        out.push(b'"');
        for b in field.bytes() {
            if b == b'"' {
                out.push(b'"');
            }
            out.push(b);
        }
        out.push(b'"');
    } else {
        out.extend_from_slice(field.as_bytes());
    }
}

/// Everything about a trace that is the same for many events, rendered once.
struct Tables {
    format: Format,
    /// Per buffer: the sizes its layout unravels an offset by (`None`: the index is the offset).
    sizes: Vec<Option<Vec<usize>>>,
    /// Per `[op][buf]`: `read","buffer":"q","level":"global","offset":` (JSON) or
    /// `read,q,global,` (CSV).
    op_buf: [Vec<Vec<u8>>; 2],
    /// Per phase: `,"variant":"mha","pass":"forward","phase":"scores","op":"` (JSON) or
    /// `,mha,forward,scores,` (CSV).
    phase: Vec<Vec<u8>>,
    /// Per loop kind: its file, as JSON (escaped) or as a CSV field.
    files: Vec<Vec<u8>>,
    addresses: Addresses,
}

impl Tables {
    fn new(trace: &Trace, variant: Variant, format: Format) -> Tables {
        let json = format == Format::Jsonl;
        let sizes = Buf::ALL
            .iter()
            .map(|&b| trace.buffer(b).map(|i| i.layout().sizes()))
            .collect();
        let op_buf = [Op::Read, Op::Write].map(|op| {
            Buf::ALL
                .iter()
                .map(|&b| {
                    let level = trace.level(b).name();
                    if json {
                        format!(
                            "{}\",\"buffer\":\"{}\",\"level\":\"{level}\",\"offset\":",
                            op.name(),
                            b.name()
                        )
                    } else {
                        format!("{},{},{level},", op.name(), b.name())
                    }
                    .into_bytes()
                })
                .collect()
        });
        let phase = Phase::ALL
            .iter()
            .map(|p| {
                if json {
                    format!(
                        ",\"variant\":\"{}\",\"pass\":\"{}\",\"phase\":\"{}\",\"op\":\"",
                        variant.name(),
                        p.pass().name(),
                        p.name()
                    )
                } else {
                    format!(",{},{},{},", variant.name(), p.pass().name(), p.name())
                }
                .into_bytes()
            })
            .collect();
        let files = trace
            .kinds
            .iter()
            .map(|k| {
                if json {
                    serde_json::to_string(k.file)
                        .unwrap_or_else(|_| "\"\"".to_string())
                        .into_bytes()
                } else {
                    let mut v = Vec::new();
                    push_csv_field(&mut v, k.file);
                    v
                }
            })
            .collect();
        Tables {
            format,
            sizes,
            op_buf,
            phase,
            files,
            addresses: Addresses::of_trace(trace),
        }
    }

    /// Events `start..end` that pass the filter, formatted into `out`; returns how many.
    fn chunk(&self, trace: &Trace, filter: &Filter, start: usize, end: usize, out: &mut Vec<u8>) -> u64 {
        if start >= end {
            return 0;
        }
        let mut n_out = 0u64;
        let mut frame_cache = FrameCache::default();
        let mut span = trace.phase_span(start);
        let mut n = start;
        while n < end {
            let range = trace.span_range(span);
            let stop = range.end.min(end);
            let phase = trace.phases[span].1;
            if filter.keeps_phase(phase) {
                for k in n..stop {
                    let e = &trace.events[k];
                    if filter.buffer.is_some_and(|b| b != e.buf)
                        || filter.level.is_some_and(|l| l != trace.level(e.buf))
                    {
                        continue;
                    }
                    self.event(out, &mut frame_cache, trace, k, phase);
                    n_out += 1;
                }
            }
            n = stop;
            span += 1;
            if span >= trace.phases.len() {
                break;
            }
        }
        n_out
    }

    #[inline]
    fn event(&self, out: &mut Vec<u8>, cache: &mut FrameCache, trace: &Trace, n: usize, phase: Phase) {
        let e = &trace.events[n];
        let op = usize::from(e.op == Op::Write);
        match self.format {
            Format::Din => {
                out.push(if op == 1 { b'1' } else { b'0' });
                out.push(b' ');
                push_hex(out, self.addresses.address(e.buf, e.offset as usize), 1);
                out.push(b'\n');
            }
            Format::Lackey => {
                out.extend_from_slice(if op == 1 { b" S " } else { b" L " });
                push_hex(out, self.addresses.address(e.buf, e.offset as usize), 8);
                out.extend_from_slice(b",4\n");
            }
            Format::Jsonl => {
                out.extend_from_slice(b"{\"seq\":");
                push_int(out, n as u64);
                out.extend_from_slice(&self.phase[phase as usize]);
                out.extend_from_slice(&self.op_buf[op][e.buf as usize]);
                push_int(out, u64::from(e.offset));
                out.extend_from_slice(b",\"index\":[");
                self.index(out, e.buf, e.offset as usize, b',');
                out.extend_from_slice(b"],\"value\":");
                push_json_number(out, e.value);
                cache.write(out, self, trace, e.frame, true);
                out.extend_from_slice(b",\"line\":");
                push_int(out, u64::from(e.line));
                out.extend_from_slice(b"}\n");
            }
            Format::Csv => {
                push_int(out, n as u64);
                out.extend_from_slice(&self.phase[phase as usize]);
                out.extend_from_slice(&self.op_buf[op][e.buf as usize]);
                push_int(out, u64::from(e.offset));
                out.push(b',');
                self.index(out, e.buf, e.offset as usize, b';');
                out.push(b',');
                push_debug_f32(out, e.value);
                cache.write(out, self, trace, e.frame, false);
                out.push(b',');
                push_int(out, u64::from(e.line));
                out.push(b'\n');
            }
        }
    }

    /// The logical index of `buf[offset]`, its coordinates separated by `sep`.
    #[inline]
    fn index(&self, out: &mut Vec<u8>, buf: Buf, offset: usize, sep: u8) {
        let Some(sizes) = &self.sizes[buf as usize] else {
            push_int(out, offset as u64);
            return;
        };
        let mut index = [0usize; 8];
        if sizes.len() > index.len() {
            // never for the registry's layouts; the plain way keeps it right anyway
            for (k, x) in attn_trace_core::tensor::unravel(sizes, offset).iter().enumerate() {
                if k > 0 {
                    out.push(sep);
                }
                push_int(out, *x as u64);
            }
            return;
        }
        let mut rest = offset;
        for k in (0..sizes.len()).rev() {
            let s = sizes[k].max(1);
            index[k] = rest % s;
            rest /= s;
        }
        for (k, x) in index[..sizes.len()].iter().enumerate() {
            if k > 0 {
                out.push(sep);
            }
            push_int(out, *x as u64);
        }
    }
}

/// `"name":value` (JSON) or `name=value` (CSV), after a separator when `sep`.
#[inline]
fn pair(out: &mut Vec<u8>, sep: bool, name: &str, value: u32, json: bool) {
    if sep {
        out.push(if json { b',' } else { b';' });
    }
    if json {
        out.push(b'"');
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b"\":");
    } else {
        out.extend_from_slice(name.as_bytes());
        out.push(b'=');
    }
    push_int(out, u64::from(value));
}

/// The loop variables, derived offsets and file of one frame, rendered for the last frame asked.
#[derive(Default)]
struct FrameCache {
    frame: Option<u32>,
    text: Vec<u8>,
    /// The parent iteration whose loop variables and derived offsets `head` and `middle` hold.
    parent: Option<u32>,
    /// JSON `,"vars":{"bb":0,"hh":1` or CSV `,bb=0;hh=1`: the parent's variables.
    head: Vec<u8>,
    /// JSON `},"derived":{"q_base":10` or CSV `,q_base=10`: the parent's derived offsets.
    middle: Vec<u8>,
    parent_vars: Vec<(&'static str, u32)>,
    parent_derived: Vec<(&'static str, u32)>,
    chain: Vec<u32>,
    vars: Vec<(&'static str, u32)>,
    derived: Vec<(&'static str, u32)>,
}

impl FrameCache {
    /// Writes the loop variables, derived offsets and file of an event in `frame`: the parent
    /// iteration's part as rendered for the events before, and the innermost iteration's own
    /// values after it. When the innermost loop reuses a name of an enclosing one (rope inside
    /// a decode step), the whole chain is rendered again ([`FrameCache::render`]).
    fn write(&mut self, out: &mut Vec<u8>, tables: &Tables, trace: &Trace, frame: u32, json: bool) {
        let Some(f) = trace.frames.get(frame as usize) else {
            self.render(tables, trace, frame, json);
            out.extend_from_slice(&self.text);
            return;
        };
        if self.parent != Some(f.parent) {
            self.parent = Some(f.parent);
            self.render(tables, trace, f.parent, json);
            self.parent_vars.clone_from(&self.vars);
            self.parent_derived.clone_from(&self.derived);
            let (head, middle) = (&mut self.head, &mut self.middle);
            head.clear();
            middle.clear();
            for (part, start, list) in [
                (
                    &mut *head,
                    if json { &b",\"vars\":{"[..] } else { &b","[..] },
                    &self.parent_vars,
                ),
                (
                    &mut *middle,
                    if json { &b"},\"derived\":{"[..] } else { &b","[..] },
                    &self.parent_derived,
                ),
            ] {
                part.extend_from_slice(start);
                for (k, &(name, value)) in list.iter().enumerate() {
                    pair(part, k > 0, name, value, json);
                }
            }
        }
        let kind = &trace.kinds[f.kind as usize];
        let reused = self.parent_vars.iter().any(|(n, _)| *n == kind.names[0])
            || kind.names[1..]
                .iter()
                .any(|d| self.parent_derived.iter().any(|(n, _)| n == d));
        if reused {
            // the parent's `text` is stale now: `render` starts again from this frame
            self.frame = None;
            self.render(tables, trace, frame, json);
            out.extend_from_slice(&self.text);
            self.frame = None;
            self.parent = None;
            return;
        }
        out.extend_from_slice(&self.head);
        pair(out, !self.parent_vars.is_empty(), kind.names[0], f.vals[0], json);
        out.extend_from_slice(&self.middle);
        for (k, name) in kind.names.iter().enumerate().skip(1) {
            pair(out, !self.parent_derived.is_empty() || k > 1, name, f.vals[k], json);
        }
        if json {
            out.extend_from_slice(b"},\"file\":");
        } else {
            out.push(b',');
        }
        out.extend_from_slice(&tables.files[f.kind as usize]);
    }

    /// JSON: `,"vars":{…},"derived":{…},"file":"…"`; CSV: `,bb=0;hh=1,q_base=10,file`.
    fn render(&mut self, tables: &Tables, trace: &Trace, frame: u32, json: bool) {
        if self.frame == Some(frame) {
            return;
        }
        self.frame = Some(frame);
        self.text.clear();
        // the chain of iterations, innermost first
        let chain = &mut self.chain;
        chain.clear();
        let mut id = frame;
        while id != NO_FRAME {
            let Some(f) = trace.frames.get(id as usize) else { break };
            chain.push(id);
            id = f.parent;
        }
        let (vars, derived) = (&mut self.vars, &mut self.derived);
        vars.clear();
        derived.clear();
        // each name once, at its first place, with the innermost value (as in the code)
        let put = |list: &mut Vec<(&'static str, u32)>, name: &'static str, value: u32| match list
            .iter_mut()
            .find(|(n, _)| *n == name)
        {
            Some(seen) => seen.1 = value,
            None => list.push((name, value)),
        };
        for &id in chain.iter().rev() {
            let f = &trace.frames[id as usize];
            let kind = &trace.kinds[f.kind as usize];
            put(vars, kind.names[0], f.vals[0]);
            for (k, name) in kind.names.iter().enumerate().skip(1) {
                put(derived, name, f.vals[k]);
            }
        }
        let file = chain.first().map(|&id| trace.frames[id as usize].kind as usize);
        let out = &mut self.text;
        if json {
            for (key, list) in [(&b",\"vars\":{"[..], &*vars), (&b"},\"derived\":{"[..], &*derived)] {
                out.extend_from_slice(key);
                for (k, (name, value)) in list.iter().enumerate() {
                    if k > 0 {
                        out.push(b',');
                    }
                    out.push(b'"');
                    out.extend_from_slice(name.as_bytes());
                    out.extend_from_slice(b"\":");
                    push_int(out, u64::from(*value));
                }
            }
            out.extend_from_slice(b"},\"file\":");
            match file {
                Some(k) => out.extend_from_slice(&tables.files[k]),
                None => out.extend_from_slice(b"\"\""),
            }
        } else {
            for list in [&*vars, &*derived] {
                out.push(b',');
                let mut field = String::new();
                for (k, (name, value)) in list.iter().enumerate() {
                    if k > 0 {
                        field.push(';');
                    }
                    field.push_str(name);
                    field.push('=');
                    field.push_str(itoa::Buffer::new().format(*value));
                }
                push_csv_field(out, &field);
            }
            out.push(b',');
            if let Some(k) = file {
                out.extend_from_slice(&tables.files[k]);
            }
        }
    }
}

/// A recorder that writes each access as a line of an address trace (`din` or lackey) as the
/// kernels make it, keeping no log: the address traces need neither loop variables nor values,
/// so they skip recording (`engine::run_into`). The same accesses in the same order as the
/// trace's events, at the same addresses ([`Addresses::of_registry`]).
pub struct AddressWriter<'a> {
    addresses: Addresses,
    filter: Filter,
    din: bool,
    phase: Option<Phase>,
    keep: bool,
    out: Vec<u8>,
    w: &'a mut dyn Write,
    /// Accesses written.
    pub written: u64,
    /// The first write error; nothing more is written after it.
    pub error: Option<std::io::Error>,
}

impl<'a> AddressWriter<'a> {
    /// Bytes gathered before they go to the writer.
    const FLUSH: usize = 1 << 20;

    /// A writer of `format` (din or lackey; anything else writes din) for a run of `registry`.
    pub fn new(
        registry: &attn_trace_core::engine::Registry,
        filter: Filter,
        format: Format,
        w: &'a mut dyn Write,
    ) -> Self {
        AddressWriter {
            addresses: Addresses::of_registry(registry),
            filter,
            din: format != Format::Lackey,
            phase: None,
            keep: filter.pass.is_none() && filter.phase.is_none(),
            out: Vec::with_capacity(Self::FLUSH + 64),
            w,
            written: 0,
            error: None,
        }
    }

    /// Writes what is gathered; returns the first error met.
    pub fn finish(mut self) -> std::io::Result<u64> {
        self.flush();
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.written),
        }
    }

    fn flush(&mut self) {
        if self.error.is_none()
            && let Err(e) = self.w.write_all(&self.out)
        {
            self.error = Some(e);
        }
        self.out.clear();
    }
}

impl Recorder for AddressWriter<'_> {
    const ENABLED: bool = true;

    #[inline]
    fn log(&mut self, op: Op, buf: Buf, offset: usize, _: f32, _: u32) {
        if !self.keep
            || self.filter.buffer.is_some_and(|b| b != buf)
            || self
                .filter
                .level
                .is_some_and(|l| (l == Level::Tile) != self.addresses.is_tile(buf))
        {
            return;
        }
        let address = self.addresses.address(buf, offset);
        let write = op == Op::Write;
        if self.din {
            self.out.push(if write { b'1' } else { b'0' });
            self.out.push(b' ');
            push_hex(&mut self.out, address, 1);
            self.out.push(b'\n');
        } else {
            self.out.extend_from_slice(if write { b" S " } else { b" L " });
            push_hex(&mut self.out, address, 8);
            self.out.extend_from_slice(b",4\n");
        }
        self.written += 1;
        if self.out.len() >= Self::FLUSH {
            self.flush();
        }
    }

    fn phase(&mut self, phase: Phase) {
        self.phase = Some(phase);
        self.keep = self.filter.keeps_phase(phase);
    }

    fn enter<const N: usize>(&mut self, _: &'static [&'static str; N], _: [usize; N]) {}

    fn exit(&mut self) {}
}
