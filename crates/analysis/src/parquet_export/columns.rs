//! Rows gathered in batches and encoded column by column, the columns of a batch side by side
//! on the cores.

use super::super::export::Filter;
use super::names::for_each_kept;
use super::schema::Field;
use super::{BATCH, io_error};
use attn_trace_core::kernels::Variant;
use attn_trace_core::trace::{Buf, NO_FRAME, Op, Phase, Trace};
use bytes::Bytes;
use parquet::column::writer::ColumnWriter;
use parquet::data_type::{ByteArray, ByteArrayType, FloatType, Int32Type, Int64Type};
use parquet::errors::ParquetError;
use std::io;

/// What is the same for many rows, made once per trace: the strings as `Bytes` that clone
/// without allocating, the buffers' sizes, and per loop kind the loop column of each name.
pub(super) struct Tables {
    variant: ByteArray,
    pass: Vec<ByteArray>,
    phase: Vec<ByteArray>,
    op: [ByteArray; 2],
    buffer: Vec<ByteArray>,
    level: Vec<ByteArray>,
    /// Per loop kind its file, then `""` for an event outside every loop.
    file: Vec<ByteArray>,
    sizes: Vec<Option<Vec<usize>>>,
    /// Per loop kind, the loop column of each of its names (`None`: not a column).
    kind_columns: Vec<Vec<Option<usize>>>,
}

fn static_bytes(s: &'static str) -> ByteArray {
    ByteArray::from(Bytes::from_static(s.as_bytes()))
}

impl Tables {
    pub(super) fn new(trace: &Trace, variant: Variant, loops: &[&'static str]) -> Tables {
        Tables {
            variant: static_bytes(variant.name()),
            pass: Phase::ALL.iter().map(|p| static_bytes(p.pass().name())).collect(),
            phase: Phase::ALL.iter().map(|p| static_bytes(p.name())).collect(),
            op: [static_bytes(Op::Read.name()), static_bytes(Op::Write.name())],
            buffer: Buf::ALL.iter().map(|b| static_bytes(b.name())).collect(),
            level: Buf::ALL.iter().map(|&b| static_bytes(trace.level(b).name())).collect(),
            file: trace
                .kinds
                .iter()
                .map(|k| static_bytes(k.file))
                .chain([static_bytes("")])
                .collect(),
            sizes: Buf::ALL
                .iter()
                .map(|&b| trace.buffer(b).map(|i| i.layout().sizes()))
                .collect(),
            kind_columns: trace
                .kinds
                .iter()
                .map(|k| k.names.iter().map(|n| loops.iter().position(|l| l == n)).collect())
                .collect(),
        }
    }
}

/// Rows gathered for encoding: the events, their phases, and the values of the loop columns
/// in scope at each, a scope for each run of rows in the same loop iteration.
pub(super) struct Batch {
    pub(super) rows: Vec<usize>,
    phases: Vec<Phase>,
    /// Per row, its scope: an index into each of `scopes`.
    slots: Vec<u32>,
    /// Per loop column, its value in each scope (`None`: not in scope).
    scopes: Vec<Vec<Option<u32>>>,
    /// The last scope's values, and its frame.
    scope: Vec<Option<u32>>,
    frame: u32,
    chain: Vec<u32>,
}

impl Batch {
    pub(super) fn new(loops: usize) -> Batch {
        Batch {
            rows: Vec::with_capacity(BATCH),
            phases: Vec::with_capacity(BATCH),
            slots: Vec::with_capacity(BATCH),
            scopes: vec![Vec::new(); loops],
            scope: vec![None; loops],
            frame: NO_FRAME,
            chain: Vec::new(),
        }
    }

    /// The value of loop column `c` at each row, as definition levels and the defined values.
    fn loop_column(&self, c: usize, defs: &mut Vec<i16>, vals: &mut Vec<i64>) {
        defs.clear();
        vals.clear();
        let scopes = &self.scopes[c];
        for &slot in &self.slots {
            match scopes[slot as usize] {
                Some(v) => {
                    defs.push(1);
                    vals.push(i64::from(v));
                }
                None => defs.push(0),
            }
        }
    }

    /// Gathers up to `max` events from `start` on that pass `filter`; returns the event to go
    /// on from.
    pub(super) fn fill(
        &mut self,
        trace: &Trace,
        filter: &Filter,
        tables: &Tables,
        start: usize,
        max: usize,
    ) -> io::Result<usize> {
        self.rows.clear();
        self.phases.clear();
        self.slots.clear();
        for list in &mut self.scopes {
            list.clear();
        }
        let mut error = None;
        let next = for_each_kept(trace, filter, start, trace.len(), |n, phase| {
            if let Err(e) = self.add(trace, tables, n, phase) {
                error = Some(e);
                return false;
            }
            self.rows.len() < max
        });
        match error {
            Some(e) => Err(e),
            None => Ok(next),
        }
    }

    fn add(&mut self, trace: &Trace, tables: &Tables, n: usize, phase: Phase) -> io::Result<()> {
        let frame = trace.events[n].frame;
        if frame != self.frame || self.rows.is_empty() {
            self.frame = frame;
            let scope = &mut self.scope;
            scope.fill(None);
            self.chain.clear();
            let mut id = frame;
            while let Some(f) = trace.frames.get(id as usize) {
                self.chain.push(id);
                id = f.parent;
            }
            // outermost first: an inner loop's value of a name replaces an outer one's
            for &id in self.chain.iter().rev() {
                let f = &trace.frames[id as usize];
                let kind = usize::from(f.kind);
                for (k, column) in tables.kind_columns[kind].iter().enumerate() {
                    let Some(c) = *column else {
                        return Err(io::Error::other(format!(
                            "event {n}: the loop name {} has no column",
                            trace.kinds[kind].names[k]
                        )));
                    };
                    scope[c] = Some(f.vals[k]);
                }
            }
            for (list, value) in self.scopes.iter_mut().zip(&self.scope) {
                list.push(*value);
            }
        }
        self.rows.push(n);
        self.phases.push(phase);
        // the batch's first row makes a scope: there is one
        self.slots
            .push(self.scopes.first().map_or(0, |l| l.len().saturating_sub(1)) as u32);
        Ok(())
    }
}

/// A column being written, with buffers kept from batch to batch.
pub(super) struct Column<'a> {
    pub(super) field: Field,
    pub(super) writer: ColumnWriter<'a>,
    pub(super) scratch: Scratch,
}

#[derive(Default)]
pub(super) struct Scratch {
    ints: Vec<i64>,
    strings: Vec<ByteArray>,
    /// Per string in `strings`, its place in the table it came from.
    keys: Vec<usize>,
    defs: Vec<i16>,
    reps: Vec<i16>,
    smalls: Vec<i32>,
    floats: Vec<f32>,
}

impl Scratch {
    /// `strings[k] = table[key(k)]` for the `n` rows of a batch; a string already there from the
    /// batch before (the same key at the same row) is kept: the variant always is, the phase
    /// mostly, and a clone and a drop of a `Bytes` are calls through a table.
    #[inline]
    fn strings(&mut self, n: usize, key: impl Fn(usize) -> usize, table: &[ByteArray]) {
        self.strings.truncate(n);
        self.keys.truncate(n);
        for k in 0..n {
            let key = key(k).min(table.len() - 1);
            if k < self.keys.len() {
                if self.keys[k] != key {
                    self.keys[k] = key;
                    self.strings[k] = table[key].clone();
                }
            } else {
                self.keys.push(key);
                self.strings.push(table[key].clone());
            }
        }
    }
}

/// Encodes `batch` into every column, the columns shared out among the cores.
pub(super) fn write_batch(columns: &mut [Column<'_>], batch: &Batch, trace: &Trace, tables: &Tables) -> io::Result<()> {
    use rayon::prelude::*;
    columns
        .par_iter_mut()
        .try_for_each(|c| c.write(batch, trace, tables).map_err(io_error))
}

impl Column<'_> {
    fn write(&mut self, batch: &Batch, trace: &Trace, tables: &Tables) -> Result<(), ParquetError> {
        let s = &mut self.scratch;
        let events = batch.rows.iter().map(|&n| &trace.events[n]);
        let n = batch.rows.len();
        match self.field {
            Field::Seq => {
                s.ints.clear();
                s.ints.extend(batch.rows.iter().map(|&n| n as i64));
                typed::<Int64Type>(&mut self.writer)?.write_batch(&s.ints, None, None)?;
            }
            Field::Offset => {
                s.ints.clear();
                s.ints.extend(events.map(|e| i64::from(e.offset)));
                typed::<Int64Type>(&mut self.writer)?.write_batch(&s.ints, None, None)?;
            }
            Field::Line => {
                s.smalls.clear();
                s.smalls.extend(events.map(|e| i32::from(e.line)));
                typed::<Int32Type>(&mut self.writer)?.write_batch(&s.smalls, None, None)?;
            }
            Field::Value => {
                s.floats.clear();
                s.floats.extend(events.map(|e| e.value));
                typed::<FloatType>(&mut self.writer)?.write_batch(&s.floats, None, None)?;
            }
            Field::Index => {
                s.ints.clear();
                s.defs.clear();
                s.reps.clear();
                for e in events {
                    let start = s.ints.len();
                    match &tables.sizes[e.buf as usize] {
                        None => s.ints.push(i64::from(e.offset)),
                        Some(sizes) => {
                            // as tensor::unravel: the last dimension varies fastest
                            let mut rest = e.offset as usize;
                            for &size in sizes.iter().rev() {
                                let size = size.max(1);
                                s.ints.push((rest % size) as i64);
                                rest /= size;
                            }
                            s.ints[start..].reverse();
                        }
                    }
                    let len = s.ints.len() - start;
                    if len == 0 {
                        // an empty list: defined, no element
                        s.defs.push(0);
                        s.reps.push(0);
                    } else {
                        s.defs.extend(std::iter::repeat_n(1, len));
                        s.reps.push(0);
                        s.reps.extend(std::iter::repeat_n(1, len - 1));
                    }
                }
                typed::<Int64Type>(&mut self.writer)?.write_batch(&s.ints, Some(&s.defs), Some(&s.reps))?;
            }
            Field::Variant => {
                s.strings(n, |_| 0, std::slice::from_ref(&tables.variant));
                typed::<ByteArrayType>(&mut self.writer)?.write_batch(&s.strings, None, None)?;
            }
            Field::Pass => {
                s.strings(n, |k| batch.phases[k] as usize, &tables.pass);
                typed::<ByteArrayType>(&mut self.writer)?.write_batch(&s.strings, None, None)?;
            }
            Field::Phase => {
                s.strings(n, |k| batch.phases[k] as usize, &tables.phase);
                typed::<ByteArrayType>(&mut self.writer)?.write_batch(&s.strings, None, None)?;
            }
            Field::Op => {
                s.strings(
                    n,
                    |k| usize::from(trace.events[batch.rows[k]].op == Op::Write),
                    &tables.op,
                );
                typed::<ByteArrayType>(&mut self.writer)?.write_batch(&s.strings, None, None)?;
            }
            Field::Buffer => {
                s.strings(n, |k| trace.events[batch.rows[k]].buf as usize, &tables.buffer);
                typed::<ByteArrayType>(&mut self.writer)?.write_batch(&s.strings, None, None)?;
            }
            Field::Level => {
                s.strings(n, |k| trace.events[batch.rows[k]].buf as usize, &tables.level);
                typed::<ByteArrayType>(&mut self.writer)?.write_batch(&s.strings, None, None)?;
            }
            Field::File => {
                let none = tables.file.len() - 1;
                s.strings(
                    n,
                    |k| {
                        let frame = trace.events[batch.rows[k]].frame;
                        trace.frames.get(frame as usize).map_or(none, |f| usize::from(f.kind))
                    },
                    &tables.file,
                );
                typed::<ByteArrayType>(&mut self.writer)?.write_batch(&s.strings, None, None)?;
            }
            Field::Loop(c) => {
                batch.loop_column(c, &mut s.defs, &mut s.ints);
                typed::<Int64Type>(&mut self.writer)?.write_batch(&s.ints, Some(&s.defs), None)?;
            }
        }
        Ok(())
    }
}

/// The typed writer of a column whose physical type is `T`'s; an error for any other (never:
/// the schema and the fields are made together).
fn typed<'w, 'a, T: parquet::data_type::DataType>(
    w: &'w mut ColumnWriter<'a>,
) -> Result<&'w mut parquet::column::writer::ColumnWriterImpl<'a, T>, ParquetError> {
    T::get_column_writer_mut(w).ok_or_else(|| ParquetError::General(format!("not a {} column", T::get_physical_type())))
}
