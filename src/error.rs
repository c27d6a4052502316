//! The one error type of the crate: every message is a single line that names what was wrong.

use std::fmt;
use std::path::PathBuf;

/// Everything that can go wrong in rigid-crowd, each with a one-line message.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A value in a scene (or a command-line override) is invalid; `field` is its path,
    /// for example `bodies[3].mass`.
    Invalid {
        /// Path of the offending field, e.g. `forces[1].body`.
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// A file could not be read or written.
    Io {
        /// The file involved.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// No GPU adapter is available (or none matched `WGPU_ADAPTER_NAME`).
    NoAdapter(String),
    /// The crowd does not fit the adapter's limits.
    CrowdTooLarge {
        /// Bodies requested.
        bodies: usize,
        /// Largest crowd that fits the adapter.
        largest: usize,
        /// Adapter name.
        adapter: String,
    },
    /// The GPU device reported an error (validation, out of memory, lost device, mapping).
    Gpu(String),
}

impl Error {
    /// Shorthand for an [`Error::Invalid`] naming `field`.
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Invalid {
            field: field.into(),
            message: message.into(),
        }
    }

    /// Shorthand for an [`Error::Io`] on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Invalid { field, message } => {
                write!(f, "{}: {}", OneLine(field), OneLine(message))
            }
            Error::Io { path, source } => write!(
                f,
                "{}: {}",
                OneLine(&path.display().to_string()),
                OneLine(&source.to_string())
            ),
            Error::NoAdapter(message) => write!(f, "{}", OneLine(message)),
            Error::CrowdTooLarge {
                bodies,
                largest,
                adapter,
            } => write!(
                f,
                "crowd of {bodies} bodies does not fit adapter `{}`: the largest that fits is {largest}",
                OneLine(adapter)
            ),
            Error::Gpu(message) => write!(f, "GPU error: {}", OneLine(message)),
        }
    }
}

/// Text written on one line: messages echo what the user wrote (a JSON key, an integrator
/// name, a file name), which may hold a newline or a terminal escape; those characters are
/// written escaped (`\n`, `\u{1b}`) so that an error stays one line.
struct OneLine<'a>(&'a str);

impl fmt::Display for OneLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use fmt::Write;
        for c in self.0.chars() {
            if c.is_control() || c == '\u{2028}' || c == '\u{2029}' {
                write!(f, "{}", c.escape_default())?;
            } else {
                f.write_char(c)?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Result with the crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
