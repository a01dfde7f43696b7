//! One event as a JSON line or a CSV row: what is the same for many events rendered once per
//! trace, the loop variables once per loop iteration.

use super::super::cache::Addresses;
use super::numbers::{push_csv_field, push_debug_f32, push_hex, push_int, push_json_number};
use super::{Filter, Format};
use attn_trace_core::kernels::Variant;
use attn_trace_core::trace::{Buf, NO_FRAME, Op, Phase, Trace};

/// Everything about a trace that is the same for many events, rendered once.
pub(super) struct Tables {
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
    pub(super) fn new(trace: &Trace, variant: Variant, format: Format) -> Tables {
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
    pub(super) fn chunk(&self, trace: &Trace, filter: &Filter, start: usize, end: usize, out: &mut Vec<u8>) -> u64 {
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
