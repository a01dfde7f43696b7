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

mod columns;
mod names;
mod schema;

pub use names::NameCollector;

use columns::{Batch, Column, Scratch, Tables, write_batch};
use schema::{Field, properties, schema};

use super::export::Filter;
use attn_trace_core::kernels::Variant;
use attn_trace_core::trace::Trace;
use bytes::Bytes;
use parquet::column::writer::{ColumnCloseResult, get_column_writer};
use parquet::errors::ParquetError;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterPropertiesPtr;
use parquet::file::writer::{SerializedFileWriter, SerializedPageWriter, TrackedWrite};
use parquet::schema::types::{ColumnDescPtr, SchemaDescriptor};
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
