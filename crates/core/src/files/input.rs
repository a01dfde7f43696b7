//! Reading the files a user names (scenarios, training data, checkpoints): regular files only,
//! never more than a stated number of bytes, and never blocking. A FIFO, a terminal or a device
//! such as `/dev/zero` is refused with one line instead of being read until memory runs out or
//! waited on forever.

use attn_trace_i18n::{msg, tr};
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{}", tr!("no such file"))]
    NotFound,
    /// A directory, FIFO, device or socket; the text says which.
    #[error("{}", tr!("{kind}, not a regular file", kind = attn_trace_i18n::text(.0)))]
    NotRegular(&'static str),
    #[error("{}", tr!("{size} bytes is larger than the {max} {what} may be", size, max = human_bytes(*max), what = attn_trace_i18n::text(what)))]
    TooLarge { size: u64, max: u64, what: &'static str },
    #[error("{}", tr!("cannot read: {e}", e = .0))]
    Io(io::Error),
}

/// `n` bytes in words: "16 MiB", "4 GiB", or the number itself below 1 KiB.
pub fn human_bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 && n.is_multiple_of(1 << 30) => format!("{} GiB", n >> 30),
        n if n >= 1 << 20 && n.is_multiple_of(1 << 20) => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n.is_multiple_of(1 << 10) => format!("{} KiB", n >> 10),
        n => tr!("{n} bytes", n),
    }
}

/// What a file that is not regular is, for a message.
pub fn kind_of(file_type: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return msg!("is a FIFO (named pipe)");
        }
        if file_type.is_char_device() {
            return msg!("is a character device");
        }
        if file_type.is_block_device() {
            return msg!("is a block device");
        }
        if file_type.is_socket() {
            return msg!("is a socket");
        }
    }
    if file_type.is_dir() {
        msg!("is a directory")
    } else {
        msg!("is not a file")
    }
}

/// Opens `path` for reading if it is a regular file (symbolic links followed), and returns it
/// with its size. The file is opened without blocking, so a FIFO that slipped past the check is
/// not waited on; the type is checked on the opened file itself.
pub fn open_regular(path: &Path) -> Result<(File, u64), ReadError> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    // a directory opens on Unix; a FIFO or a device opens without waiting: both are refused below
    let file = options.open(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => ReadError::NotFound,
        _ => ReadError::Io(e),
    })?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular(kind_of(meta.file_type())));
    }
    Ok((file, meta.len()))
}

/// The whole of a regular file of at most `max` bytes; `what` names such a file for the message
/// ("a scenario file").
pub fn read(path: &Path, max: u64, what: &'static str) -> Result<Vec<u8>, ReadError> {
    let (file, size) = open_regular(path)?;
    if size > max {
        return Err(ReadError::TooLarge { size, max, what });
    }
    let mut bytes = Vec::with_capacity(size as usize);
    // the file may grow while it is read: never take more than the cap
    file.take(max + 1).read_to_end(&mut bytes).map_err(ReadError::Io)?;
    if bytes.len() as u64 > max {
        return Err(ReadError::TooLarge {
            size: bytes.len() as u64,
            max,
            what,
        });
    }
    Ok(bytes)
}
