//! The traffic screen's sweep: one head's attention over sequence lengths and flash's tile
//! sizes, each run through the caches.

use super::pass::Feed;
use super::*;

/// The misses of one run of the sweep.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MissCell {
    /// Misses per level.
    pub misses: Vec<u64>,
    /// Bytes read from plus written to memory.
    pub memory_bytes: u64,
}

/// One sequence length of the sweep.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MissRow {
    pub t: usize,
    pub naive: MissCell,
    /// Per tile size of [`CacheSweep::tiles`].
    pub flash: Vec<MissCell>,
}

/// Misses of the plain MHA kernel against flash as `T` and the tile size grow.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CacheSweep {
    pub d: usize,
    pub mask: Mask,
    pub levels: Vec<LevelSpec>,
    pub tile_mode: Tiles,
    pub tiles: Vec<usize>,
    /// Bytes of flash's tile-local working set in the forward pass, per tile size.
    pub tile_bytes: Vec<u64>,
    pub rows: Vec<MissRow>,
}

/// The forward pass of one head (`B = H = 1`, head size `d`) of `variant` at `t` with square
/// tiles of `tile`, through caches of `levels`, starting at `q, k, v`; it stops simulating soon
/// after `cancel` is set (its counts are then those of the accesses before: not to be shown).
#[allow(clippy::too_many_arguments, reason = "the run's sizes and the flag")]
pub(crate) fn one_head_until(
    variant: Variant,
    t: usize,
    d: usize,
    tile: usize,
    mask: &Mask,
    levels: &[LevelSpec],
    tiles: Tiles,
    cancel: &AtomicBool,
) -> Cache {
    let shape = Shape::new(1, t, d, 1);
    let n = t * d;
    // the values do not change which addresses are touched
    let values = |k: usize| {
        (0..n)
            .map(|i| ((i * 7 + k) % 13) as f32 / 13.0 - 0.5)
            .collect::<Vec<f32>>()
    };
    let start = Start::Qkv {
        q: values(1),
        k: values(2),
        v: values(3),
    };
    let given = Inputs::new(shape, mask.clone(), start, vec![0.0; n]).tiled(TileSizes { br: tile, bc: tile });
    let inputs: &Inputs = &given.for_variant(variant);
    let plan = inputs.plan();
    let passes = attn_trace_core::engine::Passes::FORWARD;
    let registry = Registry::new(&plan, variant, passes);
    let addrs = Addresses::of_registry(&registry);
    let mut t = Tensors::new(inputs, &registry);
    let mut feed = Feed {
        cache: Cache::new(levels),
        addrs: &addrs,
        tiles,
        cancel,
        until_check: Feed::CHECK,
    };
    attn_trace_core::engine::forward(&mut feed, &mut t, variant, inputs);
    feed.cache
}

/// The sequence lengths and square tile sizes of the sweep (`attn-trace cache --sweep`, and the
/// cache-misses view of the memory traffic screen).
pub const SWEEP_LENGTHS: [usize; 5] = [64, 128, 256, 512, 1024];
pub const SWEEP_TILES: [usize; 4] = [16, 32, 64, 128];

/// Bytes of flash's tile-local working set in the forward pass with square tiles of `tile` and
/// head size `d`: `4·(br·D + 2·bc·D + br·bc + 2·br + br·D)`.
pub fn tile_bytes(tile: usize, d: usize) -> u64 {
    TileSizes { br: tile, bc: tile }.forward_floats(d) as u64 * ELEMENT
}

/// The smallest of `levels` that holds `bytes` (its index), if one does.
pub fn smallest_fit(bytes: u64, levels: &[LevelSpec]) -> Option<usize> {
    levels.iter().position(|l| bytes <= l.size)
}

impl CacheSweep {
    /// A sweep's table from its rows (`rows` per `T`, each with a cell per tile size of
    /// `tiles`); the tile bytes follow from `tiles` and `d`.
    pub fn new(
        d: usize,
        mask: &Mask,
        levels: &[LevelSpec],
        tile_mode: Tiles,
        tiles: &[usize],
        rows: Vec<MissRow>,
    ) -> Self {
        CacheSweep {
            d,
            mask: mask.clone(),
            levels: levels.to_vec(),
            tile_mode,
            tiles: tiles.to_vec(),
            tile_bytes: tiles.iter().map(|&b| tile_bytes(b, d)).collect(),
            rows,
        }
    }

    /// Per tile size, the smallest level its working set fits in ([`smallest_fit`]).
    pub fn fits(&self) -> Vec<Option<usize>> {
        self.tile_bytes.iter().map(|&b| smallest_fit(b, &self.levels)).collect()
    }

    /// One sentence per level on flash's tiles: which tile sizes outgrow it (their tile-local
    /// accesses start to miss there; past the last level they go to memory), or that every tile
    /// fits. What `cache --sweep` prints under its tables and the TUI's view shows under its plot.
    pub fn fit_notes(&self) -> Vec<String> {
        let last = self.levels.len().saturating_sub(1);
        self.levels
            .iter()
            .enumerate()
            .map(|(k, l)| {
                let outgrow: Vec<String> = self
                    .tiles
                    .iter()
                    .zip(&self.tile_bytes)
                    .filter(|&(_, &b)| b > l.size)
                    .map(|(t, _)| t.to_string())
                    .collect();
                let (level, size) = (l.name.as_str(), size_text(l.size));
                let tiles = outgrow.join(tr!(", "));
                if outgrow.is_empty() {
                    tr!("every tile fits in {level} ({size})", level, size)
                } else if k == last {
                    tr!(
                        "flash {tiles}: the tile outgrows {level} ({size}), tile-local accesses start to go to memory",
                        tiles,
                        level,
                        size
                    )
                } else {
                    tr!(
                        "flash {tiles}: the tile outgrows {level} ({size}), tile-local accesses start to miss there",
                        tiles,
                        level,
                        size
                    )
                }
            })
            .collect()
    }
}

/// The sweep: for each `t` of `lengths`, the plain MHA kernel and flash with each square tile
/// of `tile_sizes`, one head of size `d`, forward, through caches of `levels`. Runs in parallel.
pub fn sweep(
    lengths: &[usize],
    tile_sizes: &[usize],
    d: usize,
    mask: &Mask,
    levels: &[LevelSpec],
    tiles: Tiles,
) -> CacheSweep {
    sweep_counted(lengths, tile_sizes, d, mask, levels, tiles, &Progress::default())
}

/// [`sweep`], counting the runs finished (one kernel at one `T`) in `progress`. Once it is
/// cancelled, runs not started are skipped (their cells are empty) and those under way stop
/// simulating: a cancelled sweep's numbers are not to be shown.
pub fn sweep_counted(
    lengths: &[usize],
    tile_sizes: &[usize],
    d: usize,
    mask: &Mask,
    levels: &[LevelSpec],
    tiles: Tiles,
    progress: &Progress,
) -> CacheSweep {
    use rayon::prelude::*;
    let empty = || MissCell {
        misses: Vec::new(),
        memory_bytes: 0,
    };
    let cell = |c: &Cache| MissCell {
        misses: (0..c.specs.len()).map(|k| c.level(k).misses).collect(),
        memory_bytes: c.memory_read + c.memory_written,
    };
    // every (t, kernel) pair on its own, the largest first so the cores finish together
    let mut jobs: Vec<(usize, Option<usize>)> = Vec::new();
    for &t in lengths {
        jobs.push((t, None));
        for &tile in tile_sizes {
            jobs.push((t, Some(tile)));
        }
    }
    jobs.sort_by_key(|&(t, _)| std::cmp::Reverse(t));
    let done: Vec<((usize, Option<usize>), MissCell)> = jobs
        .par_iter()
        .map(|&(t, tile)| {
            if progress.cancelled() {
                return ((t, tile), empty());
            }
            let c = match tile {
                None => one_head_until(Variant::Mha, t, d, 1, mask, levels, tiles, progress.flag()),
                Some(b) => one_head_until(Variant::Flash, t, d, b, mask, levels, tiles, progress.flag()),
            };
            progress.add(1);
            ((t, tile), cell(&c))
        })
        .collect();
    let find = |key: (usize, Option<usize>)| {
        done.iter()
            .find(|(k, _)| *k == key)
            .map_or_else(empty, |(_, c)| c.clone())
    };
    let rows = lengths
        .iter()
        .map(|&t| MissRow {
            t,
            naive: find((t, None)),
            flash: tile_sizes.iter().map(|&b| find((t, Some(b)))).collect(),
        })
        .collect();
    CacheSweep::new(d, mask, levels, tiles, tile_sizes, rows)
}
