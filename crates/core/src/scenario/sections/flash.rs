//! The `[flash]` table: flash's tile sizes.

use super::super::reader::{Doc, Result, Value};
use super::FLASH_KEYS;
use crate::kernels::attention_flash::Tiles;

/// The `[flash]` table: the tile sizes, `br` query rows and `bc` key columns (2 and 2 when
/// left out). Any positive size is allowed; one larger than the sequence makes a single tile.
pub(in crate::scenario) fn parse_flash(doc: &Doc<'_>, v: &Value<'_>) -> Result<Tiles> {
    let t = doc.table(v, "[flash]")?;
    doc.known_keys(t, FLASH_KEYS, "flash")?;
    let default = Tiles::default();
    let get = |key: &str, default: usize| match t.get(key) {
        Some(x) => doc.size(x, &format!("[flash].{key}")),
        None => Ok(default),
    };
    Ok(Tiles {
        br: get("br", default.br)?,
        bc: get("bc", default.bc)?,
    })
}
