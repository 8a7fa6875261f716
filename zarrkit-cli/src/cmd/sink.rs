//! Output files written safely, shared by the commands that write them
//! (`export`, `get`): a regular file appears whole or not at all, a special
//! file is written directly, `-` is standard output.

use anyhow::{Context, bail};
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Whether `path` means standard output.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Where an output file's bytes go, decided by what is at its path now.
///
/// `export` used to write every output to a temporary file and rename it
/// over the path, which replaced whatever was there: as root, `-o
/// /dev/full` turned the device into a regular file, and a symbolic link
/// or FIFO was replaced instead of written through. Now only a regular
/// file (or nothing) is replaced that way; a special file is written
/// directly, `-` is standard output, and a symbolic link is followed to
/// what it names, which gets the same treatment (the link stays). A link
/// to nothing is refused rather than creating a file somewhere else.
pub enum Sink {
    /// A regular file, or a new one: written whole, then renamed into place.
    Atomic(AtomicFile),
    /// A device, FIFO or socket: written directly, never replaced.
    Direct {
        path: PathBuf,
        file: BufWriter<File>,
    },
    /// Standard output.
    Stdout(BufWriter<std::io::Stdout>),
}

impl Sink {
    /// Opens `dest` for writing, as the type's documentation says.
    ///
    /// # Errors
    /// If `dest` is a link to nothing, a directory, or cannot be created.
    pub fn create(dest: &Path) -> anyhow::Result<Self> {
        if is_stdout(dest) {
            return Ok(Self::Stdout(BufWriter::with_capacity(
                1 << 20,
                std::io::stdout(),
            )));
        }
        let mut target = dest.to_path_buf();
        let metadata = match std::fs::symlink_metadata(dest) {
            Ok(m) if m.file_type().is_symlink() => {
                target = std::fs::canonicalize(dest).map_err(|error| {
                    let points_to = std::fs::read_link(dest)
                        .map_or_else(|_| "?".to_string(), |t| t.display().to_string());
                    anyhow::anyhow!(
                        "`{}` is a symbolic link to `{points_to}`, which cannot be resolved \
                         ({error}); refusing to write through it",
                        dest.display()
                    )
                })?;
                std::fs::metadata(&target).ok()
            }
            Ok(m) => Some(m),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                return Err(e).with_context(|| format!("cannot inspect `{}`", dest.display()));
            }
        };
        match metadata {
            Some(m) if !m.is_file() && !m.is_dir() => {
                let file = OpenOptions::new()
                    .write(true)
                    .open(&target)
                    .with_context(|| format!("cannot open `{}` for writing", dest.display()))?;
                Ok(Self::Direct {
                    path: dest.to_path_buf(),
                    file: BufWriter::with_capacity(1 << 20, file),
                })
            }
            _ => Ok(Self::Atomic(AtomicFile::create(&target)?)),
        }
    }

    /// Writes `bytes`.
    ///
    /// # Errors
    /// If writing fails.
    pub fn write_all(&mut self, bytes: &[u8]) -> anyhow::Result<()> {
        match self {
            Self::Atomic(file) => file.write_all(bytes),
            Self::Direct { path, file } => file
                .write_all(bytes)
                .with_context(|| format!("cannot write `{}`", path.display())),
            Self::Stdout(out) => Ok(out.write_all(bytes)?),
        }
    }

    /// Finishes the file: renames a regular file into place, flushes the others.
    ///
    /// # Errors
    /// If flushing or renaming fails.
    pub fn commit(self) -> anyhow::Result<()> {
        match self {
            Self::Atomic(file) => file.commit(),
            Self::Direct { path, mut file } => file
                .flush()
                .with_context(|| format!("cannot write `{}`", path.display())),
            Self::Stdout(mut out) => Ok(out.flush()?),
        }
    }
}

/// A file written under a temporary name in the destination's directory and
/// renamed over the destination on [`AtomicFile::commit`], so readers never
/// see a partial file; dropped uncommitted, the temporary file is removed.
///
/// On Linux the file is first written without any name (`O_TMPFILE`), so
/// that even a process that dies without unwinding (killed, or aborted)
/// leaves nothing behind; it gets its temporary name only when complete.
/// Where the filesystem cannot do that, it is named from the start.
pub struct AtomicFile {
    /// The temporary name; empty while the file has none, and once committed.
    temp: PathBuf,
    dest: PathBuf,
    dir: PathBuf,
    /// Whether the file was created without a name (`O_TMPFILE`).
    anonymous: bool,
    file: Option<BufWriter<File>>,
}

impl AtomicFile {
    fn create(dest: &Path) -> anyhow::Result<Self> {
        if dest.is_dir() {
            bail!("`{}` is a directory", dest.display());
        }
        if dest.file_name().is_none() {
            bail!("`{}` does not name a file", dest.display());
        }
        let dir = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        if let Some(file) = anonymous_file(dir) {
            return Ok(Self {
                temp: PathBuf::new(),
                dest: dest.to_path_buf(),
                dir: dir.to_path_buf(),
                anonymous: true,
                file: Some(BufWriter::with_capacity(1 << 20, file)),
            });
        }
        let (temp, file) = Self::named(dest, dir, |temp| {
            OpenOptions::new().write(true).create_new(true).open(temp)
        })?;
        Ok(Self {
            temp,
            dest: dest.to_path_buf(),
            dir: dir.to_path_buf(),
            anonymous: false,
            file: Some(BufWriter::with_capacity(1 << 20, file)),
        })
    }

    /// Calls `make` with fresh temporary names in `dir` beside `dest`
    /// (`.NAME.<pid>.<n>.tmp`) until one is free.
    fn named<T>(
        dest: &Path,
        dir: &Path,
        mut make: impl FnMut(&Path) -> std::io::Result<T>,
    ) -> anyhow::Result<(PathBuf, T)> {
        let name = dest
            .file_name()
            .with_context(|| format!("`{}` does not name a file", dest.display()))?;
        for attempt in 0u32.. {
            let mut temp_name = std::ffi::OsString::from(".");
            temp_name.push(name);
            temp_name.push(format!(".{}.{attempt}.tmp", std::process::id()));
            let temp = dir.join(temp_name);
            match make(&temp) {
                Ok(made) => return Ok((temp, made)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 100 => {}
                Err(e) => {
                    return Err(e).with_context(|| {
                        format!("cannot create a temporary file in `{}`", dir.display())
                    });
                }
            }
        }
        bail!("cannot create a temporary file in `{}`", dir.display())
    }

    fn write_all(&mut self, bytes: &[u8]) -> anyhow::Result<()> {
        let file = self.file.as_mut().context("the file is already closed")?;
        file.write_all(bytes)
            .with_context(|| format!("cannot write a temporary file in `{}`", self.dir.display()))
    }

    fn commit(mut self) -> anyhow::Result<()> {
        let file = self.file.take().context("the file is already closed")?;
        let file = file
            .into_inner()
            .map_err(std::io::IntoInnerError::into_error)
            .with_context(|| {
                format!("cannot write a temporary file in `{}`", self.dir.display())
            })?;
        file.sync_all().with_context(|| {
            format!("cannot write a temporary file in `{}`", self.dir.display())
        })?;
        if self.anonymous {
            // A name of its own first: a link cannot replace an existing file.
            let (temp, ()) =
                Self::named(&self.dest, &self.dir, |temp| link_anonymous(&file, temp))?;
            self.temp = temp;
        }
        drop(file);
        std::fs::rename(&self.temp, &self.dest).with_context(|| {
            format!("cannot move the finished file to `{}`", self.dest.display())
        })?;
        // Committed: nothing left for `drop` to remove.
        self.temp = PathBuf::new();
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        drop(self.file.take());
        if !self.temp.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// A new file in `dir` without a name (`O_TMPFILE`), or `None` where the
/// system or filesystem cannot make one.
#[cfg(target_os = "linux")]
fn anonymous_file(dir: &Path) -> Option<File> {
    use rustix::fs::{Mode, OFlags};
    rustix::fs::open(
        dir,
        OFlags::TMPFILE | OFlags::WRONLY | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o666),
    )
    .ok()
    .map(File::from)
}

#[cfg(not(target_os = "linux"))]
fn anonymous_file(_dir: &Path) -> Option<File> {
    None
}

/// Gives the anonymous `file` the name `temp`, through `/proc/self/fd`
/// (`linkat(2)`: `AT_EMPTY_PATH` would need a capability).
#[cfg(target_os = "linux")]
fn link_anonymous(file: &File, temp: &Path) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd_path = format!("/proc/self/fd/{}", file.as_raw_fd());
    rustix::fs::linkat(
        rustix::fs::CWD,
        fd_path.as_str(),
        rustix::fs::CWD,
        temp,
        rustix::fs::AtFlags::SYMLINK_FOLLOW,
    )
    .map_err(std::io::Error::from)
}

#[cfg(not(target_os = "linux"))]
fn link_anonymous(_file: &File, _temp: &Path) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_being_written_has_no_name_where_the_system_allows() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("x.npy");
        let mut file = AtomicFile::create(&dest).unwrap();
        file.write_all(b"partial").unwrap();
        // Anonymous (Linux, O_TMPFILE): nothing in the directory to leave
        // behind if the process dies; otherwise the named temporary file.
        let expected = usize::from(!file.anonymous);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), expected);
        // Wherever the directory can hold one (ext4, xfs, btrfs, tmpfs).
        assert_eq!(file.anonymous, anonymous_file(dir.path()).is_some());
        file.commit().unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"partial");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        // A second commit replaces the file.
        let mut file = AtomicFile::create(&dest).unwrap();
        file.write_all(b"second").unwrap();
        file.commit().unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"second");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn an_uncommitted_file_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("x.npy");
        let mut file = AtomicFile::create(&dest).unwrap();
        file.write_all(b"partial").unwrap();
        drop(file);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

        let mut file = AtomicFile::create(&dest).unwrap();
        file.write_all(b"complete").unwrap();
        file.commit().unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"complete");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
