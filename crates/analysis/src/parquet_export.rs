//! `attn-trace trace --format parquet`: the rows and fields of the JSON Lines export as typed
//! Parquet columns, for DuckDB, polars, pandas and the like.
//!
//! One row per event, in the order of the JSON Lines export: `seq` (INT64), `variant`, `pass`,
//! `phase`, `op`, `buffer`, `level` (strings), `offset` (INT64), `index` (a list of INT64),
//! `value` (FLOAT, the `f32` bit for bit), `file` (string), `line` (INT32), then one nullable
//! INT64 column per loop variable or derived offset that any exported event has in scope (`bb`,
//! `hh`, `i`, `j`, `d`, `q_base` ...), null where the event's loops do not define it. The
//! column of a name holds the value the innermost loop that sets it gave, as the JSON Lines'
//! `vars` and `derived` do. Which names are loop variables and which derived offsets is in the
//! file's key-value metadata (`attn-trace.vars`, `attn-trace.derived`), beside the JSON Lines
//! header line (`attn-trace`).
//!
//! The columns are fixed before the first row is written, so the names are gathered first: from
//! a recorded trace ([`LoopNames::add_trace`]) or, for a variant not recorded yet, from a run
//! that keeps no log ([`NameCollector`]). The rows go out in row groups of up to [`ROW_GROUP`]
//! rows, a variant's last one shorter; each row group's columns are encoded into memory, the
//! columns of a batch of rows side by side on the cores, then appended to the file. Memory is
//! what one row group's encoded columns take, however long the trace.

use super::export::Filter;
use attn_trace_core::kernels::Variant;
use attn_trace_core::kernels::names::RECORDED;
use attn_trace_core::tensor::Level;
use attn_trace_core::trace::{Buf, NO_FRAME, Op, Phase, Recorder, Trace};
use bytes::Bytes;
use parquet::basic::{ConvertedType, Encoding, LogicalType, Repetition, Type as Physical};
use parquet::column::writer::{ColumnCloseResult, ColumnWriter, get_column_writer};
use parquet::data_type::{ByteArray, ByteArrayType, FloatType, Int32Type, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{WriterProperties, WriterPropertiesPtr};
use parquet::file::writer::{SerializedFileWriter, SerializedPageWriter, TrackedWrite};
use parquet::schema::types::{ColumnDescPtr, ColumnPath, SchemaDescriptor, Type, TypePtr};
use std::io::{self, Write};
use std::sync::Arc;

/// Rows per row group (a variant's last one has fewer).
pub const ROW_GROUP: usize = 1 << 20;

/// Rows gathered, then encoded column by column on the cores, at a time.
const BATCH: usize = 1 << 15;

/// The columns every file has, in order; the loop variables and derived offsets follow.
pub const FIXED: [&str; 12] = [
    "seq", "variant", "pass", "phase", "op", "buffer", "level", "offset", "index", "value", "file", "line",
];

/// The loop variables and derived offsets that the exported events have in scope: the loop
/// columns of a file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoopNames {
    /// Loop variables (the first name of a loop iteration), each once.
    pub vars: Vec<&'static str>,
    /// Offsets derived in a loop iteration (its other names), each once.
    pub derived: Vec<&'static str>,
}

impl LoopNames {
    fn add_kind(&mut self, names: &[&'static str]) {
        for (k, &name) in names.iter().enumerate() {
            let list = if k == 0 { &mut self.vars } else { &mut self.derived };
            if !list.contains(&name) {
                list.push(name);
            }
        }
    }

    /// Adds the names in scope at the events of `trace` that pass `filter`.
    pub fn add_trace(&mut self, trace: &Trace, filter: &Filter) {
        let mut visited = vec![0u64; trace.frames.len().div_ceil(64)];
        let mut kinds = vec![false; trace.kinds.len()];
        let mut last = NO_FRAME;
        for_each_kept(trace, filter, 0, trace.len(), |n, _| {
            let frame = trace.events[n].frame;
            if frame == last {
                return true;
            }
            last = frame;
            // up the chain until a frame seen before: its ancestors were seen with it
            let mut id = frame;
            while let Some(f) = trace.frames.get(id as usize) {
                let (word, bit) = (id as usize / 64, 1u64 << (id % 64));
                if visited[word] & bit != 0 {
                    break;
                }
                visited[word] |= bit;
                if let Some(k) = kinds.get_mut(usize::from(f.kind)) {
                    *k = true;
                }
                id = f.parent;
            }
            true
        });
        for (kind, used) in trace.kinds.iter().zip(kinds) {
            if used {
                self.add_kind(kind.names);
            }
        }
    }

    /// Adds the names of `other`.
    pub fn merge(&mut self, other: &LoopNames) {
        for &name in &other.vars {
            if !self.vars.contains(&name) {
                self.vars.push(name);
            }
        }
        for &name in &other.derived {
            if !self.derived.contains(&name) {
                self.derived.push(name);
            }
        }
    }

    /// Every name once, the loop columns' order: as the kernels' list of names
    /// ([`RECORDED`]: `bb`, `hh`, `kv_h`, `i`, `j`, `d` ... then the derived offsets), any
    /// other name after them.
    pub fn columns(&self) -> Vec<&'static str> {
        let mut all: Vec<&'static str> = Vec::new();
        for &name in self.vars.iter().chain(&self.derived) {
            if !all.contains(&name) {
                all.push(name);
            }
        }
        // stable: names the list does not know keep the order they came in
        all.sort_by_key(|n| RECORDED.iter().position(|r| r == n).unwrap_or(RECORDED.len()));
        all
    }
}

/// Calls `f(event, phase)` for each event of `start..end` that passes `filter`, in order,
/// until it returns false; returns the event after the last one looked at.
fn for_each_kept(
    trace: &Trace,
    filter: &Filter,
    start: usize,
    end: usize,
    mut f: impl FnMut(usize, Phase) -> bool,
) -> usize {
    if start >= end || trace.phases.is_empty() {
        return end.max(start);
    }
    let mut span = trace.phase_span(start);
    let mut n = start;
    while n < end {
        let stop = trace.span_range(span).end.min(end);
        let phase = trace.phases[span].1;
        if filter.keeps_phase(phase) {
            while n < stop {
                let e = &trace.events[n];
                n += 1;
                if filter.buffer.is_some_and(|b| b != e.buf) || filter.level.is_some_and(|l| l != trace.level(e.buf)) {
                    continue;
                }
                if !f(n - 1, phase) {
                    return n;
                }
            }
        }
        n = stop;
        span += 1;
        if span >= trace.phases.len() {
            break;
        }
    }
    end
}

/// A recorder that keeps no log, only the names of the loops around the accesses that pass a
/// filter: the loop columns of a variant that is not recorded yet ([`attn_trace_core::engine::run_into`]).
pub struct NameCollector {
    filter: Filter,
    levels: Vec<Level>,
    keep: bool,
    /// The open loop iterations' names, and whether they are in `names` yet.
    open: Vec<(&'static [&'static str], bool)>,
    /// Per depth, the names last added there (a loop enters the same names again and again).
    added: Vec<*const &'static str>,
    pub names: LoopNames,
}

impl NameCollector {
    /// A collector for a run of `registry`.
    pub fn new(registry: &attn_trace_core::engine::Registry, filter: Filter) -> Self {
        let mut levels = vec![Level::Global; Buf::ALL.len()];
        for (b, spec) in registry.iter() {
            levels[b as usize] = spec.level;
        }
        NameCollector {
            filter,
            levels,
            keep: filter.pass.is_none() && filter.phase.is_none(),
            open: Vec::new(),
            added: Vec::new(),
            names: LoopNames::default(),
        }
    }
}

impl Recorder for NameCollector {
    const ENABLED: bool = true;

    #[inline]
    fn log(&mut self, _: Op, buf: Buf, _: usize, _: f32, _: u32) {
        if !self.keep
            || self.filter.buffer.is_some_and(|b| b != buf)
            || self.filter.level.is_some_and(|l| l != self.levels[buf as usize])
        {
            return;
        }
        // the innermost iterations not added yet: those opened since the last kept access
        for depth in (0..self.open.len()).rev() {
            let (names, added) = &mut self.open[depth];
            if *added {
                break;
            }
            *added = true;
            if self.added.len() <= depth {
                self.added.resize(depth + 1, std::ptr::null());
            }
            if self.added[depth] != names.as_ptr() {
                self.added[depth] = names.as_ptr();
                self.names.add_kind(names);
            }
        }
    }

    fn phase(&mut self, phase: Phase) {
        self.keep = self.filter.keeps_phase(phase);
    }

    fn enter<const N: usize>(&mut self, names: &'static [&'static str; N], _: [usize; N]) {
        self.open.push((names, false));
    }

    fn exit(&mut self) {
        self.open.pop();
    }
}

/// A Parquet error as an I/O error: the writer's own error (a full disk, a closed pipe) as it
/// came, so that the caller can tell them apart.
fn io_error(e: ParquetError) -> io::Error {
    match e {
        ParquetError::External(e) => match e.downcast::<io::Error>() {
            Ok(e) => *e,
            Err(e) => io::Error::other(e),
        },
        e => io::Error::other(e),
    }
}

/// What a column holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Seq,
    Variant,
    Pass,
    Phase,
    Op,
    Buffer,
    Level,
    Offset,
    Index,
    Value,
    File,
    Line,
    /// The loop column of this number in the file's loop names.
    Loop(usize),
}

impl Field {
    const FIXED: [Field; 12] = [
        Field::Seq,
        Field::Variant,
        Field::Pass,
        Field::Phase,
        Field::Op,
        Field::Buffer,
        Field::Level,
        Field::Offset,
        Field::Index,
        Field::Value,
        Field::File,
        Field::Line,
    ];
}

/// The name of the loop column for `name`: the name itself, unless a fixed column has it.
fn loop_column_name(name: &str) -> String {
    if FIXED.contains(&name) {
        format!("loop_{name}")
    } else {
        name.to_string()
    }
}

/// The schema: [`FIXED`], then a nullable INT64 for each of `loops`.
fn schema(loops: &[&'static str]) -> Result<TypePtr, ParquetError> {
    let string = |name: &str| {
        Type::primitive_type_builder(name, Physical::BYTE_ARRAY)
            .with_repetition(Repetition::REQUIRED)
            .with_logical_type(Some(LogicalType::String))
            .build()
    };
    let int = |name: &str, physical, repetition| {
        Type::primitive_type_builder(name, physical)
            .with_repetition(repetition)
            .build()
    };
    let mut fields = Vec::new();
    for field in Field::FIXED {
        let name = FIXED[field_position(field)];
        let t = match field {
            Field::Seq | Field::Offset => int(name, Physical::INT64, Repetition::REQUIRED)?,
            Field::Line => int(name, Physical::INT32, Repetition::REQUIRED)?,
            Field::Value => Type::primitive_type_builder(name, Physical::FLOAT)
                .with_repetition(Repetition::REQUIRED)
                .build()?,
            // the three-level list of the format's spec: index (LIST) { repeated list { element } }
            Field::Index => {
                let element = int("element", Physical::INT64, Repetition::REQUIRED)?;
                let list = Type::group_type_builder("list")
                    .with_repetition(Repetition::REPEATED)
                    .with_fields(vec![Arc::new(element)])
                    .build()?;
                Type::group_type_builder(name)
                    .with_repetition(Repetition::REQUIRED)
                    .with_logical_type(Some(LogicalType::List))
                    .with_converted_type(ConvertedType::LIST)
                    .with_fields(vec![Arc::new(list)])
                    .build()?
            }
            _ => string(name)?,
        };
        fields.push(Arc::new(t));
    }
    for name in loops {
        fields.push(Arc::new(int(
            &loop_column_name(name),
            Physical::INT64,
            Repetition::OPTIONAL,
        )?));
    }
    Ok(Arc::new(
        Type::group_type_builder("attn_trace_event")
            .with_fields(fields)
            .build()?,
    ))
}

fn field_position(field: Field) -> usize {
    Field::FIXED.iter().position(|&f| f == field).unwrap_or(0)
}

/// The writer's settings: no compression (the strings and small integers are dictionary- and
/// run-length encoded, and the values, most of the bytes, hardly compress); `seq`, `offset` and
/// `index` delta-encoded (`seq` counts up by one, and the others step through a buffer: as small
/// as a dictionary, without hashing every value into one); `value` plain (a dictionary of floats
/// that rarely repeat would only be dropped again).
fn properties(metadata: Vec<KeyValue>) -> WriterProperties {
    let element = ColumnPath::new(vec!["index".into(), "list".into(), "element".into()]);
    let mut builder = WriterProperties::builder()
        .set_created_by(format!("attn-trace {} (parquet-rs)", env!("CARGO_PKG_VERSION")))
        .set_key_value_metadata(Some(metadata))
        .set_column_dictionary_enabled("value".into(), false);
    for column in [ColumnPath::from("seq"), ColumnPath::from("offset"), element] {
        builder = builder
            .set_column_dictionary_enabled(column.clone(), false)
            .set_column_encoding(column, Encoding::DELTA_BINARY_PACKED);
    }
    builder.build()
}

/// Writes events as Parquet rows to a `W`; [`ParquetWriter::finish`] writes the footer, without
/// which the file is not Parquet.
pub struct ParquetWriter<W: Write + Send> {
    file: SerializedFileWriter<W>,
    loops: Vec<&'static str>,
    columns: Vec<(Field, ColumnDescPtr)>,
    props: WriterPropertiesPtr,
    row_group: usize,
}

impl<W: Write + Send> ParquetWriter<W> {
    /// A file with a loop column for each of `names`, and `metadata` (key, value) beside the
    /// loop names in its key-value metadata.
    pub fn new(w: W, names: &LoopNames, metadata: Vec<(String, String)>) -> io::Result<Self> {
        let loops = names.columns();
        let schema = schema(&loops).map_err(io_error)?;
        let descr = SchemaDescriptor::new(schema.clone());
        let mut kv: Vec<KeyValue> = metadata.into_iter().map(|(k, v)| KeyValue::new(k, v)).collect();
        kv.push(KeyValue::new("attn-trace.vars".into(), names.vars.join(",")));
        kv.push(KeyValue::new("attn-trace.derived".into(), names.derived.join(",")));
        let props = Arc::new(properties(kv));
        let file = SerializedFileWriter::new(w, schema, props.clone()).map_err(io_error)?;
        let columns = Field::FIXED
            .into_iter()
            .chain((0..loops.len()).map(Field::Loop))
            .zip(descr.columns().iter().cloned())
            .collect();
        Ok(ParquetWriter {
            file,
            loops,
            columns,
            props,
            row_group: ROW_GROUP,
        })
    }

    /// Row groups of up to `rows` rows instead of [`ROW_GROUP`] (at least one).
    #[must_use]
    pub fn with_row_group(mut self, rows: usize) -> Self {
        self.row_group = rows.max(1);
        self
    }

    /// Bytes written to the file so far.
    pub(crate) fn bytes_written(&self) -> u64 {
        self.file.bytes_written() as u64
    }

    /// Writes the events of `trace` (a run of `variant`) that pass `filter`; calls
    /// `progress(events looked at, bytes written)` now and then; returns how many it wrote.
    /// An event with a loop name that is not a column is an error (the names were gathered
    /// from another run than this one).
    pub fn write_trace(
        &mut self,
        trace: &Trace,
        variant: Variant,
        filter: &Filter,
        mut progress: impl FnMut(u64, u64),
    ) -> io::Result<u64> {
        let tables = Tables::new(trace, variant, &self.loops);
        let mut batch = Batch::new(self.loops.len());
        let mut next = 0;
        let mut written = 0u64;
        let mut sinks: Vec<TrackedWrite<Vec<u8>>> =
            self.columns.iter().map(|_| TrackedWrite::new(Vec::new())).collect();
        loop {
            next = batch.fill(trace, filter, &tables, next, BATCH.min(self.row_group))?;
            if batch.rows.is_empty() {
                break;
            }
            // a row group: each column encoded into a buffer of its own, then appended
            let mut columns: Vec<Column<'_>> = sinks
                .iter_mut()
                .zip(&self.columns)
                .map(|(sink, (field, descr))| Column {
                    field: *field,
                    writer: get_column_writer(
                        descr.clone(),
                        self.props.clone(),
                        Box::new(SerializedPageWriter::new(sink)),
                    ),
                    scratch: Scratch::default(),
                })
                .collect();
            let mut rows = 0;
            loop {
                write_batch(&mut columns, &batch, trace, &tables)?;
                rows += batch.rows.len();
                written += batch.rows.len() as u64;
                progress(next as u64, self.bytes_written());
                if rows >= self.row_group {
                    break;
                }
                next = batch.fill(trace, filter, &tables, next, BATCH.min(self.row_group - rows))?;
                if batch.rows.is_empty() {
                    break;
                }
            }
            let closed: Vec<ColumnCloseResult> = columns
                .into_iter()
                .map(|c| c.writer.close())
                .collect::<Result<_, _>>()
                .map_err(io_error)?;
            let mut group = self.file.next_row_group().map_err(io_error)?;
            for (sink, close) in sinks.iter_mut().zip(closed) {
                let bytes = std::mem::replace(sink, TrackedWrite::new(Vec::new()))
                    .into_inner()
                    .map_err(io_error)?;
                group.append_column(&Bytes::from(bytes), close).map_err(io_error)?;
            }
            group.close().map_err(io_error)?;
            progress(next as u64, self.bytes_written());
            if next >= trace.len() {
                break;
            }
        }
        Ok(written)
    }

    /// Writes the footer (the schema, where each row group is, the metadata) and flushes.
    pub fn finish(mut self) -> io::Result<()> {
        self.file.finish().map_err(io_error)?;
        self.file.flush()
    }
}

/// What is the same for many rows, made once per trace: the strings as `Bytes` that clone
/// without allocating, the buffers' sizes, and per loop kind the loop column of each name.
struct Tables {
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
    fn new(trace: &Trace, variant: Variant, loops: &[&'static str]) -> Tables {
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
struct Batch {
    rows: Vec<usize>,
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
    fn new(loops: usize) -> Batch {
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
    fn fill(&mut self, trace: &Trace, filter: &Filter, tables: &Tables, start: usize, max: usize) -> io::Result<usize> {
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
struct Column<'a> {
    field: Field,
    writer: ColumnWriter<'a>,
    scratch: Scratch,
}

#[derive(Default)]
struct Scratch {
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
fn write_batch(columns: &mut [Column<'_>], batch: &Batch, trace: &Trace, tables: &Tables) -> io::Result<()> {
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
