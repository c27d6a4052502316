//! How the command line writes to the terminal.

/// Writes `line` to stderr in one write: under an MPI launcher, which forwards what it
/// reads, a line written in pieces can be cut by another process's output.
pub(crate) fn say(line: &str) {
    use std::io::Write;
    let _ = std::io::stderr().write_all(format!("{line}\n").as_bytes());
}

/// `12.3 M` style rate with three significant digits.
pub(crate) fn rate(per_second: f64) -> String {
    let (value, unit) = if per_second >= 1e9 {
        (per_second / 1e9, " G")
    } else if per_second >= 1e6 {
        (per_second / 1e6, " M")
    } else if per_second >= 1e3 {
        (per_second / 1e3, " k")
    } else {
        (per_second, " ")
    };
    format!("{value:.3}{unit}")
}
