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
    /// The GPU device reported an error (validation, out of memory, mapping).
    Gpu(String),
    /// The GPU device was lost (driver reset, GPU removed, device destroyed): nothing more
    /// can run on it; continue from the last checkpoint on a new device.
    DeviceLost(String),
    /// A body's state became NaN or infinite. The body keeps its last finite state (from the
    /// step before `step`) for inspection; the simulation refuses further steps.
    NonFinite {
        /// Index of the first offending body (the lowest index among those caught together).
        body: usize,
        /// The clock step whose integration produced the non-finite value.
        step: u64,
    },
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
            Error::Invalid { field, message } => write!(f, "{field}: {message}"),
            Error::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Error::NoAdapter(message) => write!(f, "{message}"),
            Error::CrowdTooLarge {
                bodies,
                largest,
                adapter,
            } => write!(
                f,
                "crowd of {bodies} bodies does not fit adapter `{adapter}`: the largest that fits is {largest}"
            ),
            Error::Gpu(message) => write!(f, "GPU error: {message}"),
            Error::DeviceLost(message) => write!(f, "GPU device lost: {message}"),
            Error::NonFinite { body, step } => write!(
                f,
                "body {body} became non-finite (NaN or infinite) in step {step}; its last finite state is kept"
            ),
        }
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
