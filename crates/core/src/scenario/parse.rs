//! From TOML text to a validated [`Scenario`], in three steps: the reader (`reader.rs`) gives
//! typed values with their positions, each table is parsed on its own (`sections/`), then the
//! checks across tables (`validate.rs`) and the memory budget run before anything is filled.

use super::reader::{Doc, Result, toml_error};
use super::sections::{
    ROOT_KEYS, RunTable, parse_flash, parse_focus, parse_init, parse_latent, parse_layers, parse_paged, parse_run,
    parse_shape, parse_values,
};
use super::validate::{
    check_bias, check_flash, check_latent, check_mistakes, check_modern, check_shared_blocks, check_sink, check_start,
};
use super::{Init, Mode, Options, Qkv, Scenario, ScenarioError, budget_error};
use crate::engine::Passes;
use crate::kernels::attention_flash::Tiles;
use crate::kernels::attention_mistakes::Mistakes;
use crate::kernels::decode::CacheSpec;
use crate::kernels::{Mask, Variant};
use attn_trace_i18n::tr;
use std::collections::BTreeMap;
use std::ops::Range;
use toml::de::DeTable;

pub use super::reader::MAX_SIZE;

/// The first syntax error in the file. The parser reports one, not always the first (an
/// unterminated string on line 1 came out as an unclosed table on line 2), and keeping all of
/// them costs hundreds of bytes per byte of a file made of errors: so the text up to the end of
/// the reported error's line is parsed again with every error kept, and the earliest before the
/// reported one wins. (Cutting the text there can add errors of its own, but only at its end.)
fn first_error(text: &str, reported: toml::de::Error) -> (String, Option<Range<usize>>) {
    let Some(at) = reported.span().map(|s| s.start) else {
        let span = located(text, reported.message());
        return (reported.message().to_string(), span);
    };
    let end = text[at..].find('\n').map_or(text.len(), |n| at + n);
    let (_, errors) = DeTable::parse_recoverable(&text[..end]);
    errors
        .into_iter()
        .filter_map(|e| Some((e.span()?, e)))
        .filter(|(span, _)| span.start < at)
        .min_by_key(|(span, _)| span.start)
        .map_or_else(
            || (reported.message().to_string(), reported.span()),
            |(span, e)| (e.message().to_string(), Some(span)),
        )
}

/// Where an error the parser gives no position for lies (a dotted key of more parts than its
/// recursion limit): the first line whose prefix of the text has the same error, found by
/// bisection (a handful of parses of prefixes), from its first non-blank character.
fn located(text: &str, message: &str) -> Option<Range<usize>> {
    let has_it = |end: usize| DeTable::parse(&text[..end]).is_err_and(|f| f.span().is_none() && f.message() == message);
    // the ends of the lines; the error is in the first prefix that has it
    let ends: Vec<usize> = text
        .match_indices('\n')
        .map(|(k, _)| k)
        .chain(std::iter::once(text.len()))
        .collect();
    let k = ends.partition_point(|&end| !has_it(end));
    let end = *ends.get(k)?;
    let start = if k == 0 { 0 } else { ends[k - 1] + 1 };
    let line = &text[start..end];
    Some(start + (line.len() - line.trim_start().len())..end)
}

/// Parses and validates a whole scenario document.
pub(super) fn parse(text: &str, source: &str) -> Result<Scenario> {
    let doc = Doc { text, source };
    if text.trim().is_empty() {
        return Err(ScenarioError::file(
            source,
            tr!("empty file: a scenario needs at least a title = \"…\" and a [shape] table with B, T and C"),
        ));
    }
    let root = match DeTable::parse(text) {
        Ok(root) => root,
        Err(reported) => {
            let (message, span) = first_error(text, reported);
            return Err(toml_error(&doc, &message, span));
        }
    };
    let root = root.get_ref();
    doc.known_keys(root, ROOT_KEYS, "")?;

    let title = match root.get("title") {
        Some(v) => {
            let t = doc.string(v, "title")?;
            if t.trim().is_empty() {
                return Err(doc.err(Some(v.span()), "title", tr!("expected a non-empty string")));
            }
            t.to_string()
        }
        None => {
            return Err(ScenarioError {
                field: Some("title".into()),
                ..ScenarioError::file(source, tr!("missing: every scenario needs a title = \"…\" at the top"))
            });
        }
    };
    let about = root
        .get("about")
        .map(|v| doc.string(v, "about"))
        .transpose()?
        .map(str::to_string);

    let Some(shape_v) = root.get("shape") else {
        return Err(ScenarioError {
            field: Some("[shape]".into()),
            ..ScenarioError::file(
                source,
                tr!("missing: every scenario needs a [shape] table with B, T and C"),
            )
        });
    };
    let (shape, cross) = parse_shape(&doc, shape_v)?;
    let latent = parse_latent(&doc, shape_v)?;
    let layers = parse_layers(&doc, shape_v)?;

    let RunTable {
        variants,
        passes,
        mask,
        mut opts,
    } = match root.get("run") {
        Some(v) => parse_run(&doc, v, shape, cross)?,
        None => RunTable {
            variants: Variant::DEFAULT.to_vec(),
            passes: Passes::BOTH,
            mask: Mask::Causal,
            opts: Options {
                cross,
                qkv: Qkv::Fused,
                dropout: None,
                mode: Mode::Train,
                mistakes: Mistakes::NONE,
                rope: None,
                decode: false,
                cache: CacheSpec::default(),
                sink_logit: false,
                latent: None,
                tiles: Tiles::default(),
                bias: true,
            },
        },
    };
    opts.latent = latent;
    if let Some(v) = root.get("flash") {
        opts.tiles = parse_flash(&doc, v)?;
    }
    if let Some(v) = root.get("paged") {
        opts.cache.paged = Some(parse_paged(&doc, v, shape)?);
    }
    check_flash(&doc, root, &variants, &opts)?;

    let init = match root.get("init") {
        Some(v) => parse_init(&doc, v)?,
        None => Init::default(),
    };
    let values = match root.get("values") {
        Some(v) => parse_values(&doc, v, shape, latent, passes)?,
        None => BTreeMap::new(),
    };
    // where the run starts and what it projects decide which options make sense together
    check_start(&doc, root, shape_v, &values, &opts)?;
    check_shared_blocks(&doc, root, shape, &init, &values, &opts)?;
    let plan = super::plan_of(shape, mask.clone(), &values, &opts);
    check_mistakes(&doc, root, &plan, &opts)?;
    check_modern(&doc, root, &plan, &variants, passes, &opts)?;
    check_sink(&doc, root, &plan, &variants, &values, &opts)?;
    check_latent(&doc, root, &variants, &values, &opts)?;
    check_bias(&doc, root, &values, &opts)?;
    // decide on the size before a single tensor is filled or a buffer allocated
    if let Some(message) = budget_error(plan, &variants, passes, opts.mistakes) {
        return Err(doc.err(Some(shape_v.span()), "[shape]", message));
    }
    let focus = root
        .get("focus")
        .map(|v| parse_focus(&doc, v, shape, &variants, passes))
        .transpose()?;

    Ok(Scenario {
        source: source.to_string(),
        title,
        about,
        shape,
        cross,
        variants,
        passes,
        mask,
        qkv: opts.qkv,
        dropout: opts.dropout,
        mode: opts.mode,
        mistakes: opts.mistakes,
        rope: opts.rope,
        decode: opts.decode,
        cache: opts.cache,
        sink_logit: opts.sink_logit,
        latent: opts.latent,
        tiles: opts.tiles,
        bias: opts.bias,
        layers,
        init,
        values,
        focus,
    })
}
