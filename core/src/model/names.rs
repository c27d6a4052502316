//! Parsing the names of a closed list (backends, integrators, workloads, ...).

/// The member of `all` called `text`, or, as the error, every name of `all` joined by `, `
/// for the caller's message.
pub fn parse_name<T: Copy>(
    all: &[T],
    name: impl Fn(T) -> &'static str,
    text: &str,
) -> Result<T, String> {
    all.iter()
        .copied()
        .find(|&m| name(m) == text)
        .ok_or_else(|| {
            let names: Vec<&str> = all.iter().map(|&m| name(m)).collect();
            names.join(", ")
        })
}
