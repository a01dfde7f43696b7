//! Writing files so that nobody ever sees half of one: everything goes to a temporary file in the
//! target's own directory (so the final rename stays on one filesystem), which is renamed over
//! the target only once it is complete. An interrupted write leaves the previous file intact.
//!
//! What is at the destination is respected:
//! - a symbolic link is followed, and the file it points to is replaced (the link stays a link);
//! - an existing file the process may not write (`access(W_OK)`: a 0444 file of another user)
//!   is refused, as a shell's `>` refuses it, not replaced through the rename, which only needs
//!   the folder to be writable;
//! - an existing file keeps its permissions and its owner: when the process may not give the
//!   new file the old one's owner (only root may), the complete temporary file is copied into
//!   the target in place instead of renamed over it (as `>` would write it), and if that copy
//!   fails the temporary file is kept and named, so the new contents are never lost;
//! - a destination that cannot be looked up (a name too long, a folder in the path that is a
//!   file) is refused before anything is written;
//! - a FIFO or a character device (`/dev/null`, a terminal) is written to directly, as a shell's
//!   `>` would: it is a stream, not a file to replace (a FIFO that no process reads is an error
//!   at once, not a wait);
//! - a directory, a block device or a socket is refused.
//!
//! Temporary files are named `.NAME.attn-trace-PID.XXXXXX.tmp` beside the target `NAME`. They are
//! removed when a write fails or is dropped, on Ctrl-C and SIGTERM ([`remove_live_temps`], called
//! by the CLI's signal handler), and a later write to the same target removes those left by a
//! process that no longer runs (killed with SIGKILL, or a power cut).

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use tempfile::NamedTempFile;

/// The directory a file lives in (`.` for a bare file name).
pub fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// The temporary files being written right now, so a signal handler can remove them; and
/// whether the process is ending (then no new one may start).
static LIVE: Mutex<(Vec<PathBuf>, bool)> = Mutex::new((Vec::new(), false));

fn live() -> std::sync::MutexGuard<'static, (Vec<PathBuf>, bool)> {
    LIVE.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The temporary files this process is writing right now: those [`remove_live_temps`] would
/// remove.
pub fn live_temps() -> Vec<PathBuf> {
    live().0.clone()
}

/// Removes every temporary file this process is writing, and makes later writes fail. For a
/// signal handler that is about to end the process: the targets keep their previous contents.
pub fn remove_live_temps() {
    let mut live = live();
    live.1 = true;
    for path in live.0.drain(..) {
        let _ = std::fs::remove_file(path);
    }
}

/// The part of a temporary file's name before the process id: `.NAME.attn-trace-`.
fn temp_prefix(target: &Path) -> String {
    let name = target
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    // keep the whole name within the usual 255-byte limit
    let mut end = name.len().min(160);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    format!(".{}.attn-trace-", &name[..end])
}

/// Removes the temporary files beside `target` left by processes that no longer run. Only names
/// of exactly our pattern are touched, and only when the process id is known to be gone (Linux:
/// no `/proc/PID`); elsewhere nothing is removed.
fn remove_stale_temps(target: &Path) {
    if !cfg!(target_os = "linux") || !Path::new("/proc/self").exists() {
        return;
    }
    let prefix = temp_prefix(target);
    let Ok(entries) = std::fs::read_dir(dir_of(target)) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(rest) = name.strip_prefix(&prefix).and_then(|r| r.strip_suffix(".tmp")) else {
            continue;
        };
        let Some(pid) = rest.split_once('.').and_then(|(pid, _)| pid.parse::<u32>().ok()) else {
            continue;
        };
        let regular = entry.file_type().is_ok_and(|t| t.is_file());
        if regular && pid != std::process::id() && !Path::new("/proc").join(pid.to_string()).exists() {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Follows symbolic links from `path` to the file they lead to, which need not exist yet (a
/// dangling link names the file to create). Relative links are resolved from the link's folder.
fn resolve_links(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    // as many hops as the kernel allows before ELOOP
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&p)?;
                p = if to.is_absolute() { to } else { dir_of(&p).join(to) };
            }
            _ => return Ok(p),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// A file being written: a temporary file renamed over the target by [`AtomicFile::commit`], or
/// a stream (FIFO, character device) written in place. Dropping it uncommitted removes the
/// temporary file, so the target is never left half written.
#[derive(Debug)]
pub struct AtomicFile {
    inner: Option<Inner>,
}

#[derive(Debug)]
enum Inner {
    Temp {
        file: NamedTempFile,
        target: PathBuf,
        /// The replaced file's mode and owner, which the new file takes.
        old: Option<Kept>,
    },
    Stream(File),
}

impl AtomicFile {
    /// Starts writing `path` (see the module's documentation for what each kind of destination
    /// gets).
    pub fn create(path: &Path) -> io::Result<AtomicFile> {
        match std::fs::metadata(path) {
            // FIFOs and character devices, including /dev/stdout and /proc/self/fd/N: in place
            Ok(m) if is_stream(&m) => {
                return Ok(AtomicFile {
                    inner: Some(Inner::Stream(open_stream(path, &m)?)),
                });
            }
            // a file to create (its folder is checked when the temporary file is made)
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            // a name too long, a folder in the path that is a file or may not be searched: the
            // destination's fault, found now rather than at the rename
            Err(e) => return Err(e),
            Ok(_) => check_destination(path)?,
        }
        let target = resolve_links(path)?;
        let old = std::fs::metadata(&target).ok().map(|m| Kept::of(&m));
        remove_stale_temps(&target);
        let mut builder = tempfile::Builder::new();
        let prefix = format!("{}{}.", temp_prefix(&target), std::process::id());
        builder.prefix(&prefix).suffix(".tmp");
        #[cfg(unix)]
        {
            // temporary files are private (0600) by default; a new file gets the mode of a file
            // written directly (0666 less the umask), a replaced one its own mode from the start
            // (a 0600 file is never readable by others while it is written), all of it again
            // at commit, with its owner
            use std::os::unix::fs::PermissionsExt;
            let mode = old.as_ref().map_or(0o666, |k| k.permissions.mode() & 0o777);
            builder.permissions(std::fs::Permissions::from_mode(mode));
        }
        let file = builder.tempfile_in(dir_of(&target)).map_err(without_temp_path)?;
        {
            let mut live = live();
            if live.1 {
                // the process is ending on a signal: this file would outlive the clean-up
                drop(file);
                return Err(io::Error::other("the process is ending"));
            }
            live.0.push(file.path().to_path_buf());
        }
        Ok(AtomicFile {
            inner: Some(Inner::Temp { file, target, old }),
        })
    }

    /// Flushes to disk and moves the file into place (for a stream: flushes).
    pub fn commit(mut self) -> io::Result<()> {
        let Some(inner) = self.inner.take() else { return Ok(()) };
        match inner {
            Inner::Stream(mut f) => f.flush(),
            Inner::Temp { file, target, old } => {
                let temp_path = file.path().to_path_buf();
                let result = (|| {
                    if let Some(old) = &old
                        && !keep_mode_and_owner(file.as_file(), old)?
                    {
                        // a rename would give the file this process's owner: copied in place
                        return write_in_place(file, &target);
                    }
                    file.as_file().sync_all()?;
                    file.persist(&target).map_err(|e| e.error)?;
                    Ok(())
                })();
                // persisted or dropped (and so removed): no longer ours to clean up
                live().0.retain(|p| *p != temp_path);
                result
            }
        }
    }

    fn writer(&mut self) -> io::Result<&mut dyn Write> {
        match &mut self.inner {
            // the file itself: its errors name the target (by the caller), not the temporary path
            Some(Inner::Temp { file, .. }) => Ok(file.as_file_mut()),
            Some(Inner::Stream(f)) => Ok(f),
            None => Err(io::Error::other("the file was already committed")),
        }
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if let Some(Inner::Temp { file, .. }) = self.inner.take() {
            let path = file.path().to_path_buf();
            drop(file); // removes it
            live().0.retain(|p| *p != path);
        }
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer()?.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer()?.flush()
    }
}

/// The system's error under `tempfile`'s, which appends ` at path "…"` with the temporary
/// file's path: a message names the target, and the temporary name means nothing to the user.
fn without_temp_path(e: io::Error) -> io::Error {
    let text = e.to_string();
    match text.rfind(" at path ") {
        Some(k) => io::Error::new(e.kind(), text[..k].to_string()),
        None => e,
    }
}

/// Refuses a destination that cannot be written: a directory, a block device or a socket (an
/// error of kind `InvalidInput` saying what it is), or a file this process may not write (the
/// system's "permission denied"). For checking a path long before writing it.
pub fn check_destination(path: &Path) -> io::Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() && !is_stream(&m) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{}; refusing to replace it with a file",
                crate::files::input::kind_of(m.file_type())
            ),
        )),
        Ok(m) if m.is_file() => may_write(path),
        _ => Ok(()),
    }
}

/// Whether this process may write the existing file `path` (`access(2)` with `W_OK`: its mode,
/// its owner, a read-only filesystem; root may write any file).
fn may_write(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other)?;
        // SAFETY: access reads a NUL-terminated path and touches no other memory.
        #[allow(unsafe_code)]
        let rc = unsafe { libc::access(c.as_ptr(), libc::W_OK) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    #[cfg(not(unix))]
    if std::fs::metadata(path)?.permissions().readonly() {
        return Err(io::Error::from(io::ErrorKind::PermissionDenied));
    }
    Ok(())
}

/// Writes the complete temporary file `file` into `target` in place (its owner and mode stay),
/// then removes the temporary file. A failure keeps the temporary file and names it.
fn write_in_place(file: NamedTempFile, target: &Path) -> io::Result<()> {
    use std::io::{Seek, SeekFrom};
    let copy = (|| {
        let mut from = file.as_file();
        from.seek(SeekFrom::Start(0))?;
        let mut to = std::fs::OpenOptions::new().write(true).open(target)?;
        let n = io::copy(&mut from, &mut to)?;
        to.set_len(n)?;
        to.sync_all()
    })();
    match copy {
        Ok(()) => Ok(()),
        Err(e) => {
            let kept = file.keep().map_or_else(|k| k.file.path().to_path_buf(), |(_, p)| p);
            Err(io::Error::new(
                e.kind(),
                attn_trace_i18n::tr!("{e}; the whole new file is kept in {kept}", e, kept = kept.display()).to_string(),
            ))
        }
    }
}

/// Opens a FIFO or a character device for writing. A FIFO nobody reads is an error at once
/// rather than a wait without end (a program that hangs on its output looks broken).
fn open_stream(path: &Path, m: &std::fs::Metadata) -> io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
        if m.file_type().is_fifo() {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(path)
                .map_err(|e| match e.raw_os_error() {
                    Some(libc::ENXIO) => io::Error::other("a FIFO that no process is reading: start the reader first"),
                    _ => e,
                })?;
            // writes wait for the reader as usual from here on
            use std::os::fd::AsRawFd;
            let fd = file.as_raw_fd();
            // SAFETY: fcntl on a descriptor this function owns, with flags it just read.
            #[allow(unsafe_code)]
            let ok = unsafe {
                let flags = libc::fcntl(fd, libc::F_GETFL);
                flags >= 0 && libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) == 0
            };
            if !ok {
                return Err(io::Error::last_os_error());
            }
            return Ok(file);
        }
    }
    let _ = m;
    std::fs::OpenOptions::new().write(true).open(path)
}

/// What a replaced file passes on to its successor.
#[derive(Debug)]
struct Kept {
    permissions: std::fs::Permissions,
    #[cfg(unix)]
    owner: (u32, u32),
}

impl Kept {
    fn of(m: &std::fs::Metadata) -> Kept {
        Kept {
            permissions: m.permissions(),
            #[cfg(unix)]
            owner: {
                use std::os::unix::fs::MetadataExt;
                (m.uid(), m.gid())
            },
        }
    }
}

/// A destination written in place rather than replaced.
fn is_stream(m: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        m.file_type().is_fifo() || m.file_type().is_char_device()
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        false
    }
}

/// Gives the new file the replaced one's permissions, and its owner when that differs and the
/// process may change it (root). `false` when the owner could not be kept: the file must not
/// be renamed over the old one then.
fn keep_mode_and_owner(file: &File, old: &Kept) -> io::Result<bool> {
    file.set_permissions(old.permissions.clone())?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let now = file.metadata()?;
        if (now.uid(), now.gid()) != old.owner {
            if std::os::unix::fs::fchown(file, Some(old.owner.0), Some(old.owner.1)).is_err() {
                return Ok(false);
            }
            // chown clears set-id bits: put the mode back
            file.set_permissions(old.permissions.clone())?;
        }
    }
    Ok(true)
}

/// Writes `bytes` to `path` atomically, flushed to disk before the rename.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = AtomicFile::create(path)?;
    f.write_all(bytes)?;
    f.commit()
}
