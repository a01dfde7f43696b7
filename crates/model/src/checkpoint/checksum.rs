//! The checkpoint's checksum: FNV-1a over the metadata and the tensors, as saving writes it
//! and loading checks it.

use std::collections::HashMap;

/// FNV-1a, 64-bit, over bytes: detects a flipped bit anywhere in what it covers.
fn fnv1a(h: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *h ^= b as u64;
        *h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// A length-prefixed piece of the checksum, so that moving bytes from one piece to the next
/// changes the sum.
fn fnv1a_piece(h: &mut u64, bytes: &[u8]) {
    fnv1a(h, &(bytes.len() as u64).to_le_bytes());
    fnv1a(h, bytes);
}

/// The checksum of a checkpoint: in the current format, every metadata entry but `checksum`
/// (sorted by key) and every tensor's name, shape and bytes, in the order given; in the first
/// format, the tensors' bytes alone.
pub(super) fn checksum<'a>(
    v1: bool,
    meta: &HashMap<String, String>,
    tensors: impl Iterator<Item = (&'a str, &'a [usize], &'a [u8])>,
) -> String {
    let mut h = FNV_OFFSET;
    if !v1 {
        let mut keys: Vec<&String> = meta.keys().filter(|k| *k != "checksum").collect();
        keys.sort();
        for k in keys {
            fnv1a_piece(&mut h, k.as_bytes());
            fnv1a_piece(&mut h, meta[k].as_bytes());
        }
    }
    for (name, shape, bytes) in tensors {
        if !v1 {
            fnv1a_piece(&mut h, name.as_bytes());
            let dims: Vec<u8> = shape.iter().flat_map(|&d| (d as u64).to_le_bytes()).collect();
            fnv1a_piece(&mut h, &dims);
        }
        fnv1a(&mut h, bytes);
    }
    format!("{h:016x}")
}
