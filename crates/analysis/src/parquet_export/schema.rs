//! The file's schema: what each column holds, its Parquet type, and the writer's properties.

use super::FIXED;
use parquet::basic::{ConvertedType, Encoding, LogicalType, Repetition, Type as Physical};
use parquet::errors::ParquetError;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::schema::types::{ColumnPath, Type, TypePtr};
use std::sync::Arc;

/// What a column holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Field {
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
    pub(super) const FIXED: [Field; 12] = [
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
pub(super) fn schema(loops: &[&'static str]) -> Result<TypePtr, ParquetError> {
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
pub(super) fn properties(metadata: Vec<KeyValue>) -> WriterProperties {
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
