//! Cache levels: their geometry, parsed from `--levels`, read from the OS, or the default.

use super::*;

/// One cache level's geometry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct LevelSpec {
    pub name: String,
    /// Bytes.
    pub size: u64,
    /// Bytes of one line.
    pub line: u64,
    pub ways: u64,
}

impl LevelSpec {
    pub fn sets(&self) -> u64 {
        self.size / (self.line * self.ways)
    }

    /// `L1=32K/64/8`, as `--levels` takes it.
    pub fn short(&self) -> String {
        let size = match self.size {
            n if n >= 1 << 20 && n.is_multiple_of(1 << 20) => format!("{}M", n >> 20),
            n if n >= 1 << 10 && n.is_multiple_of(1 << 10) => format!("{}K", n >> 10),
            n => n.to_string(),
        };
        format!("{}={size}/{}/{}", self.name, self.line, self.ways)
    }

    /// `L1 32 KiB, 64-byte lines, 8-way (64 sets)`.
    pub fn describe(&self) -> String {
        format!(
            "{} {}, {}-byte lines, {}-way ({} sets)",
            self.name,
            size_text(self.size),
            self.line,
            self.ways,
            self.sets()
        )
    }
}

/// `32 KiB`, `1 MiB`, or bytes.
pub fn size_text(n: u64) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} B")
    }
}

/// The largest cache level accepted (bytes), so that a typo cannot ask for gigabytes of tags.
pub const MAX_SIZE: u64 = 1 << 30;
/// The most levels accepted.
pub const MAX_LEVELS: usize = 4;

/// Parses `L1=32K/64/8,L2=512K/64/8`: per level a name, its size (bytes, or with K or M), its
/// line size and its ways. The error names the part that is wrong.
pub fn parse_levels(s: &str) -> Result<Vec<LevelSpec>, String> {
    let mut out: Vec<LevelSpec> = Vec::new();
    for part in s.split(',').map(str::trim) {
        let (name, geometry) = part
            .split_once('=')
            .ok_or_else(|| format!("'{part}': expected NAME=SIZE/LINE/WAYS, e.g. L1=32K/64/8"))?;
        let name = name.trim();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(format!("'{part}': a level's name is letters and digits, e.g. L1"));
        }
        if out.iter().any(|l| l.name == name) {
            return Err(format!("'{part}': level {name} is given twice"));
        }
        let fields: Vec<&str> = geometry.split('/').map(str::trim).collect();
        let [size, line, ways] = fields[..] else {
            return Err(format!("'{part}': expected SIZE/LINE/WAYS, e.g. 32K/64/8"));
        };
        let size =
            bytes(size).ok_or_else(|| format!("'{part}': size '{size}' is not a number of bytes (e.g. 32K, 1M)"))?;
        let line: u64 = line
            .parse()
            .map_err(|_| format!("'{part}': line size '{line}' is not a whole number"))?;
        let ways: u64 = ways
            .parse()
            .map_err(|_| format!("'{part}': ways '{ways}' is not a whole number"))?;
        if !(ELEMENT..=4096).contains(&line) || !line.is_power_of_two() {
            return Err(format!(
                "'{part}': the line size must be a power of two from 4 to 4096 bytes"
            ));
        }
        if !(1..=64).contains(&ways) {
            return Err(format!("'{part}': ways must be from 1 to 64"));
        }
        if size == 0 || size > MAX_SIZE || !size.is_multiple_of(line * ways) {
            return Err(format!(
                "'{part}': the size must be a whole number of sets of {ways} lines of {line} bytes, at most 1G"
            ));
        }
        // a miss above fetches one line of the level above's size from here: a smaller line
        // here would bring in only part of it, and memory's traffic would be undercounted
        if let Some(above) = out.last()
            && line < above.line
        {
            return Err(format!(
                "'{part}': its lines ({line} bytes) are smaller than {name_above}'s ({above_line} bytes); a level's lines must be at least as large as the level above's",
                name_above = above.name,
                above_line = above.line
            ));
        }
        out.push(LevelSpec {
            name: name.to_string(),
            size,
            line,
            ways,
        });
    }
    if out.len() > MAX_LEVELS {
        return Err(format!("at most {MAX_LEVELS} levels"));
    }
    Ok(out)
}

/// `32K` → 32768, `1M` → 1048576, `4096` → 4096.
fn bytes(s: &str) -> Option<u64> {
    let (digits, scale) = match s.as_bytes().last()? {
        b'K' | b'k' => (&s[..s.len() - 1], 1 << 10),
        b'M' | b'm' => (&s[..s.len() - 1], 1 << 20),
        b'G' | b'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    digits.parse::<u64>().ok()?.checked_mul(scale)
}

/// The levels used when the OS does not report this machine's: a common L1d and L2.
pub const DEFAULT_LEVELS: &str = "L1=32K/64/8,L2=512K/64/8";

/// Where the OS describes CPU 0's caches (Linux).
pub const SYS_CACHE: &str = "/sys/devices/system/cpu/cpu0/cache";

/// This machine's L1 data cache and L2 as the OS reports them (`/sys/devices/system/cpu/cpu0/
/// cache/index*/`), or `None` when it does not (another OS, a container hiding them).
pub fn os_levels() -> Option<Vec<LevelSpec>> {
    let read = |dir: &std::path::Path, f: &str| std::fs::read_to_string(dir.join(f)).ok().map(|s| s.trim().to_string());
    let mut found: Vec<(u64, LevelSpec)> = Vec::new();
    let entries = std::fs::read_dir(SYS_CACHE).ok()?;
    for entry in entries.flatten() {
        let dir = entry.path();
        if !entry.file_name().to_string_lossy().starts_with("index") {
            continue;
        }
        let (Some(level), Some(kind)) = (read(&dir, "level"), read(&dir, "type")) else {
            continue;
        };
        let Ok(level) = level.parse::<u64>() else { continue };
        let wanted = matches!((level, kind.as_str()), (1, "Data") | (2, "Unified" | "Data"));
        if !wanted {
            continue;
        }
        let size = read(&dir, "size").and_then(|s| bytes(&s));
        let line = read(&dir, "coherency_line_size").and_then(|s| s.parse().ok());
        let ways = read(&dir, "ways_of_associativity").and_then(|s| s.parse().ok());
        if let (Some(size), Some(line), Some(ways)) = (size, line, ways) {
            let spec = LevelSpec {
                name: format!("L{level}"),
                size,
                line,
                ways,
            };
            // the same checks as --levels
            let text = format!("{}={}/{}/{}", spec.name, spec.size, spec.line, spec.ways);
            if parse_levels(&text).is_ok() && !found.iter().any(|(l, _)| *l == level) {
                found.push((level, spec));
            }
        }
    }
    found.sort_by_key(|(l, _)| *l);
    let levels: Vec<LevelSpec> = found.into_iter().map(|(_, s)| s).collect();
    // the two together, as --levels checks them (L2's lines at least L1's)
    let both: Vec<String> = levels
        .iter()
        .map(|l| format!("{}={}/{}/{}", l.name, l.size, l.line, l.ways))
        .collect();
    (levels.len() == 2 && parse_levels(&both.join(",")).is_ok()).then_some(levels)
}

/// The default levels and where they come from: this machine's (`true`), else
/// [`DEFAULT_LEVELS`].
pub fn default_levels() -> (Vec<LevelSpec>, bool) {
    match os_levels() {
        Some(l) => (l, true),
        None => (parse_levels(DEFAULT_LEVELS).unwrap_or_default(), false),
    }
}
