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
    /// A body left the envelope of the run's fault rules (speed, angular speed or distance)
    /// under the `stop` policy. The body keeps its last state inside; the simulation refuses
    /// further steps.
    OutsideEnvelope {
        /// Index of the first offending body (the lowest index among those caught together).
        body: usize,
        /// The clock step whose integration took it out.
        step: u64,
        /// The limit it passed.
        fault: crate::model::fault::Fault,
    },
    /// An error on one rank of a run spread over MPI ranks, which every rank reports alike
    /// (feature `mpi`): a body's fault names its crowd-wide index.
    OnRank {
        /// The rank it happened on.
        rank: usize,
        /// Ranks in the run.
        ranks: usize,
        /// What happened there (on the other ranks, its message).
        error: Box<Error>,
    },
    /// The ranks of an MPI run cannot go on together: they disagree about the scene, the
    /// rank count does not fit the crowd or the checkpoint, or another rank failed.
    Mpi(String),
}

impl Error {
    /// Shorthand for an [`Error::Invalid`] naming `field`.
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Invalid {
            field: field.into(),
            message: message.into(),
        }
    }

    /// The same error with `context` put before an [`Error::Invalid`]'s field, e.g. the file
    /// it came from (`scene.json: ` + `bodies[3].mass`); other errors pass through.
    pub fn within(self, context: impl fmt::Display) -> Self {
        match self {
            Error::Invalid { field, message } => Error::Invalid {
                field: format!("{context}{field}"),
                message,
            },
            other => other,
        }
    }

    /// A crowd of `count` bodies does not fit in this machine's memory.
    pub(crate) fn too_many_bodies(count: usize) -> Self {
        Self::invalid(
            "bodies",
            format!("{count} bodies do not fit in this machine's memory"),
        )
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
            Error::DeviceLost(message) => write!(f, "GPU device lost: {}", OneLine(message)),
            Error::NonFinite { body, step } => write!(
                f,
                "body {body} became non-finite (NaN or infinite) in step {step}; its last finite state is kept"
            ),
            Error::OutsideEnvelope { body, step, fault } => write!(
                f,
                "body {body} passed its {} limit in step {step}; its last state inside is kept",
                fault.name()
            ),
            Error::OnRank { rank, ranks, error } => {
                write!(f, "{error} (on MPI rank {rank} of {ranks})")
            }
            Error::Mpi(message) => write!(f, "{}", OneLine(message)),
        }
    }
}

/// Text written on one short line: messages echo what the user wrote (a JSON key, an
/// integrator name, a file name, a string value), which may hold a newline or a terminal
/// escape, and may be 100 kB long. Those characters are written escaped (`\n`, `\u{1b}`)
/// so that an error stays one line, and the middle of a text longer than [`LONGEST_PART`]
/// characters is left out, keeping its start and its end (where serde says line and column).
struct OneLine<'a>(&'a str);

/// Longest field or message written whole, in characters.
const LONGEST_PART: usize = 500;

impl fmt::Display for OneLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let escaped: Vec<char> = self
            .0
            .chars()
            .flat_map(|c| {
                let escape = c.is_control() || c == '\u{2028}' || c == '\u{2029}';
                let mut out = String::new();
                if escape {
                    out.extend(c.escape_default());
                } else {
                    out.push(c);
                }
                out.chars().collect::<Vec<_>>()
            })
            .collect();
        if escaped.len() <= LONGEST_PART {
            return f.write_str(&escaped.iter().collect::<String>());
        }
        let keep = LONGEST_PART / 2 - 20;
        let head: String = escaped[..keep].iter().collect();
        let tail: String = escaped[escaped.len() - keep..].iter().collect();
        let left_out = escaped.len() - 2 * keep;
        write!(f, "{head}[... {left_out} characters ...]{tail}")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echoed_text_is_escaped_and_a_long_one_shortened() {
        let error = Error::invalid("a\nb", "got `\u{1b}[2J` and \u{2028}");
        assert_eq!(error.to_string(), r"a\nb: got `\u{1b}[2J` and \u{2028}");
        let long = format!(
            "invalid type: string \"{}\", expected f64 at line 1 column 100007",
            "x".repeat(100_000)
        );
        let shown = Error::invalid("dt", long).to_string();
        assert!(shown.len() < 600, "{} characters", shown.len());
        assert!(
            shown.starts_with("dt: invalid type: string \"xxx"),
            "{shown}"
        );
        assert!(shown.contains("[... 99"), "{shown}");
        assert!(
            shown.ends_with("xxx\", expected f64 at line 1 column 100007"),
            "{shown}"
        );
    }
}
