//! Tests of the file helpers (`crates/core/src/files/`), one module per source file: what were the
//! `#[cfg(test)]` unit tests of those files, now through the library's public API.

/// `crates/core/src/files/atomic.rs`
mod atomic {
    use attn_trace_core::files::atomic::*;
    use std::io::Write;
    use std::path::Path;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    // `remove_live_temps` is tested through the binary (cli_hostile.rs): here it would end
    // the writes of the other tests running in this process.
    #[test]
    fn writes_whole_files_with_ordinary_permissions_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        write(&path, b"first").unwrap();
        write(&path, b"second").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        assert_eq!(names(dir.path()), ["out.txt"], "no temporary file is left");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let direct = dir.path().join("direct.txt");
            std::fs::write(&direct, b"x").unwrap();
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&path), mode(&direct), "same mode as a file written directly");
        }
        // a dropped file never reaches the target, and its temporary file is gone
        let mut f = AtomicFile::create(&path).unwrap();
        f.write_all(b"half").unwrap();
        drop(f);
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        let others = |dir: &Path| -> Vec<String> {
            names(dir)
                .into_iter()
                .filter(|n| n != "out.txt" && n != "direct.txt")
                .collect()
        };
        assert!(others(dir.path()).is_empty());
        assert!(!live_temps().iter().any(|p| p.starts_with(dir.path())));
        assert_eq!(dir_of(Path::new("bare.txt")), Path::new("."));

        // temporary files are named after the target and this process, and listed for the
        // signal handler while they live
        let path = dir.path().join("m.safetensors");
        let f = AtomicFile::create(&path).unwrap();
        let listed = others(dir.path());
        assert_eq!(listed.len(), 1);
        let want = format!(".m.safetensors.attn-trace-{}.", std::process::id());
        assert!(
            listed[0].starts_with(&want) && listed[0].ends_with(".tmp"),
            "{listed:?}"
        );
        assert!(live_temps().iter().any(|p| p.starts_with(dir.path())));
        drop(f);
        assert!(others(dir.path()).is_empty());
    }

    /// A folder that cannot take the temporary file: the error is the system's alone, without
    /// the ` at path ".x.attn-trace-N.…tmp"` tempfile adds (a name the user never chose).
    #[test]
    fn an_error_making_the_temporary_file_does_not_name_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing").join("out.txt");
        let Err(e) = AtomicFile::create(&path) else {
            panic!("a missing folder was accepted");
        };
        let text = e.to_string();
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound, "{text}");
        assert!(!text.contains("at path") && !text.contains(".tmp"), "{text}");
    }
}

/// `crates/core/src/files/input.rs`
mod input {
    use attn_trace_core::files::input::*;

    #[test]
    fn reads_regular_files_up_to_the_cap_and_refuses_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        std::fs::write(&path, b"hello").unwrap();
        assert_eq!(read(&path, 5, "a note").unwrap(), b"hello");
        let e = read(&path, 4, "a note").unwrap_err().to_string();
        assert_eq!(e, "5 bytes is larger than the 4 bytes a note may be");
        assert!(matches!(
            read(&dir.path().join("no"), 9, "a note"),
            Err(ReadError::NotFound)
        ));
        assert_eq!(
            read(dir.path(), 9, "a note").unwrap_err().to_string(),
            "is a directory, not a regular file"
        );
        assert_eq!(human_bytes(16 << 20), "16 MiB");
        assert_eq!(human_bytes(4 << 30), "4 GiB");
        assert_eq!(human_bytes(1000), "1000 bytes");
    }
}
