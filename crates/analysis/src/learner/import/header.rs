//! The trace's header line read: its format and version, the scenario, variant, pass and
//! input it was recorded on, its dimensions and bindings.

use super::super::bind::Bindings;
use super::super::{TRACE_FORMAT, TRACE_VERSION};
use super::{DIMS, HEADER_FIELDS, Header, ImportError, MAX_NAME, Reader, echo, echo_value, json_error};
use crate::format::thousands;
use attn_trace_core::kernels::Variant;
use attn_trace_core::trace::Pass;
use attn_trace_i18n::tr;
use serde_json::Value;
use std::io::BufRead;

impl<R: BufRead> Reader<R> {
    pub(super) fn parse_header(&self) -> Result<Header, ImportError> {
        let at = self.at;
        let err = |message: String| self.error(at, message);
        let h: serde_json::Map<String, Value> = serde_json::from_str(self.text.trim_end()).map_err(|e| {
            err(tr!(
                "the first line must be the header {\"format\":\"{format}\",\"version\":{version},…}: {e}",
                format = TRACE_FORMAT,
                version = TRACE_VERSION,
                e = json_error(&e)
            )
            .to_string())
        })?;
        let none = || tr!("none").to_string();
        let format = h.get("format");
        if format.and_then(Value::as_str) != Some(TRACE_FORMAT) {
            return Err(err(tr!(
                "\"format\": expected \"{format}\" in the header line, found {found}",
                format = TRACE_FORMAT,
                found = format.map_or_else(none, echo_value)
            )
            .to_string()));
        }
        let version = h.get("version");
        if version.and_then(Value::as_u64) != Some(u64::from(TRACE_VERSION)) {
            return Err(err(tr!(
                "\"version\": this attn-trace reads version {version} of the trace format, the trace is version {found}",
                version = TRACE_VERSION,
                found = version.map_or_else(none, echo_value)
            )
            .to_string()));
        }
        if let Some(key) = h.keys().find(|k| !HEADER_FIELDS.contains(&k.as_str())) {
            return Err(err(tr!(
                "\"{key}\": not a field of the header; its fields are {fields}",
                key = echo(key),
                fields = HEADER_FIELDS.join(tr!(", "))
            )
            .to_string()));
        }
        // a string, or null for "not said" (an export of several variants has "variant":null)
        let text = |name: &str| -> Result<Option<&str>, ImportError> {
            match h.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s)),
                Some(other) => Err(err(tr!(
                    "\"{name}\": expected a string, found {found}",
                    name,
                    found = echo_value(other)
                )
                .to_string())),
            }
        };
        let scenario = text("scenario")?;
        if scenario.is_some_and(|s| s.len() > MAX_NAME) {
            return Err(err(tr!(
                "\"scenario\": longer than {max} bytes, the most a path may be",
                max = thousands(MAX_NAME as u64)
            )
            .to_string()));
        }
        let variant = match text("variant")? {
            None => None,
            Some(v) => Some(
                Variant::from_name(v)
                    .ok_or_else(|| err(tr!("\"variant\": unknown variant \"{v}\"", v = echo(v)).to_string()))?,
            ),
        };
        let pass = match text("pass")? {
            None => None,
            Some(p) => Some(Pass::from_name(p).ok_or_else(|| {
                err(tr!("\"pass\": expected forward or backward, found \"{p}\"", p = echo(p)).to_string())
            })?),
        };
        let input = match h.get("input") {
            None | Some(Value::Null) => 0,
            Some(v) => v.as_u64().ok_or_else(|| {
                err(tr!(
                    "\"input\": expected a whole number, found {found}",
                    found = echo_value(v)
                )
                .to_string())
            })?,
        };
        let dims = self.parse_dims(h.get("dims"))?;
        let bind = match h.get("bind") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                Bindings::from_json(v, &format!("{}:{at}: \"bind\"", self.path))
                    .map_err(|e| err(format!("\"bind\": {e}")))?,
            ),
        };
        Ok(Header {
            version: TRACE_VERSION,
            scenario: scenario.map(str::to_string),
            variant,
            pass,
            input,
            dims,
            bind,
        })
    }

    /// The header's `dims`: every one of [`DIMS`], each a whole number, and nothing else.
    fn parse_dims(&self, dims: Option<&Value>) -> Result<Vec<(String, u64)>, ImportError> {
        let err = |message: String| self.error(self.at, message);
        let all = DIMS.join(tr!(", "));
        let Some(dims) = dims else {
            return Err(err(tr!(
                "\"dims\": missing; the header gives the sizes the recorder saw ({all}), as the inputs file's dim lines do",
                all
            )
            .to_string()));
        };
        let Some(map) = dims.as_object() else {
            return Err(err(tr!(
                "\"dims\": expected an object of sizes ({all}), found {found}",
                all,
                found = echo_value(dims)
            )
            .to_string()));
        };
        if let Some(name) = map.keys().find(|k| !DIMS.contains(&k.as_str())) {
            return Err(err(tr!(
                "\"dims\": unknown size \"{name}\"; the sizes are {all}",
                name = echo(name),
                all
            )
            .to_string()));
        }
        let mut out = Vec::with_capacity(DIMS.len());
        for name in DIMS {
            let Some(v) = map.get(name) else {
                return Err(err(tr!(
                    "\"dims\": no {name}; the header gives every size: {all}",
                    name,
                    all
                )
                .to_string()));
            };
            let n = v.as_u64().ok_or_else(|| {
                err(tr!(
                    "\"dims\": {name} must be a whole number, found {found}",
                    name,
                    found = echo_value(v)
                )
                .to_string())
            })?;
            out.push((name.to_string(), n));
        }
        out.sort();
        Ok(out)
    }
}
