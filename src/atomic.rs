//! Writing files so that nobody ever sees half of one: everything goes to a temporary file in the
//! target's own directory (so the final rename stays on one filesystem), which is renamed over
//! the target only once it is complete. An interrupted write leaves the previous file intact.

use std::io::{self, Write};
use std::path::Path;
use tempfile::NamedTempFile;

/// The directory a file lives in (`.` for a bare file name).
pub fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// An empty temporary file beside `path`. Temporary files are private (0600); this one gets the
/// permissions of an ordinary file (0666 less the umask), as if `path` had been written directly.
/// `persist(path)` moves it into place; dropping it deletes it.
pub fn temp_beside(path: &Path) -> io::Result<NamedTempFile> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(".attn-trace-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    builder.tempfile_in(dir_of(path))
}

/// Writes `bytes` to `path` atomically, flushed to disk before the rename.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut tmp = temp_beside(path)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_whole_files_with_ordinary_permissions_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        write(&path, b"first").unwrap();
        write(&path, b"second").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary file is left"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let direct = dir.path().join("direct.txt");
            std::fs::write(&direct, b"x").unwrap();
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&path), mode(&direct), "same mode as a file written directly");
        }
        // a dropped temporary file never reaches the target
        let tmp = temp_beside(&path).unwrap();
        drop(tmp);
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        assert_eq!(dir_of(Path::new("bare.txt")), Path::new("."));
    }
}
