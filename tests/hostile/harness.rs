//! The rules every reader of untrusted input must keep, checked one input at a time: it
//! returns (never panics), within a time limit, and a rejection is one clear line that says
//! where the problem is. Any reader (scene files, OBJ meshes, checkpoints) is one more target.

use std::fmt::Display;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc;
use std::time::Duration;

/// Cases per CI run, in total over every target, unless `RIGID_CROWD_FUZZ_CASES` says otherwise.
pub const DEFAULT_TOTAL_CASES: u32 = 3000;

/// How long one input may take. Every generated input is small (a few kB, at most a few
/// hundred bodies), so a reader that needs this long is looping; the slack covers a loaded
/// 2-core machine.
pub const TIME_LIMIT: Duration = Duration::from_secs(10);

/// The generators' seed: fixed, so a CI run is reproducible and cannot fail on a case no one
/// can replay; `RIGID_CROWD_FUZZ_SEED=N` picks another, `random` a fresh one (campaigns).
pub fn rng_seed() -> proptest::test_runner::RngSeed {
    use proptest::test_runner::RngSeed;
    match std::env::var("RIGID_CROWD_FUZZ_SEED").as_deref() {
        Err(_) => RngSeed::Fixed(0x5eed_c0de),
        Ok("random") => RngSeed::Random,
        Ok(text) => RngSeed::Fixed(text.parse().unwrap_or_else(|_| {
            panic!("RIGID_CROWD_FUZZ_SEED must be a number or `random`, got `{text}`")
        })),
    }
}

/// This target's share of the run's cases: `share` of `RIGID_CROWD_FUZZ_CASES` (default
/// [`DEFAULT_TOTAL_CASES`]), at least 1.
pub fn cases(share: f64) -> u32 {
    let total = match std::env::var("RIGID_CROWD_FUZZ_CASES") {
        Ok(text) => text
            .parse::<u32>()
            .unwrap_or_else(|_| panic!("RIGID_CROWD_FUZZ_CASES must be a count, got `{text}`")),
        Err(_) => DEFAULT_TOTAL_CASES,
    };
    ((total as f64 * share).round() as u32).max(1)
}

/// What a reader made of one input that it handled cleanly.
#[derive(Debug)]
pub enum Outcome<T> {
    /// The input was accepted.
    Accepted(T),
    /// The input was rejected with this (checked) message.
    Rejected(String),
}

/// Runs `parse(input)` on its own thread and checks the rules: no panic, done within
/// [`TIME_LIMIT`], and an error's `Display` is one non-empty line `LOCATION: DETAIL` whose
/// location `names_location(location, detail)` accepts (a field path, `file:line`, a byte
/// offset...).
///
/// Panics (failing the test, with `what` and the offending input in the message) when a rule
/// is broken.
pub fn check_cleanly<I, T, E, F>(
    what: &str,
    input: I,
    parse: F,
    names_location: impl Fn(&str, &str) -> bool,
) -> Outcome<T>
where
    I: std::fmt::Debug + Clone + Send + 'static,
    T: Send + 'static,
    E: Display,
    F: FnOnce(I) -> Result<T, E> + Send + 'static,
{
    let shown = input.clone();
    let (sender, receiver) = mpsc::channel();
    // NOTE: a thread per input, so that a reader stuck in a loop fails the test with the
    // input that did it instead of hanging the run; a stuck thread is simply abandoned.
    std::thread::Builder::new()
        .name("hostile-input".into())
        .spawn(move || {
            let outcome =
                catch_unwind(AssertUnwindSafe(|| parse(input).map_err(|e| e.to_string())));
            let _ = sender.send(outcome);
        })
        .expect("spawn a reader thread");
    let result = match receiver.recv_timeout(TIME_LIMIT) {
        Ok(Ok(result)) => result,
        Ok(Err(payload)) => panic!(
            "{what} panicked ({}) on input {shown:?}",
            panic_message(payload.as_ref())
        ),
        Err(_) => panic!("{what} did not finish within {TIME_LIMIT:?} on input {shown:?}"),
    };
    match result {
        Ok(value) => Outcome::Accepted(value),
        Err(message) => {
            if let Err(problem) = check_message(&message, &names_location) {
                panic!("{what}: unclear error `{message}` ({problem}) on input {shown:?}");
            }
            log_rejection(&message);
            Outcome::Rejected(message)
        }
    }
}

/// One line (no control characters, no Unicode line or paragraph separator) of at most 1200
/// characters, `LOCATION: DETAIL` with both parts non-empty and the location accepted.
pub fn check_message(
    message: &str,
    names_location: impl Fn(&str, &str) -> bool,
) -> Result<(), String> {
    if let Some(c) = message
        .chars()
        .find(|&c| c.is_control() || c == '\u{2028}' || c == '\u{2029}')
    {
        return Err(format!("contains the line-breaking character {c:?}"));
    }
    // Echoed input is shortened (core/src/model/error.rs keeps 500 characters of a field or message).
    let length = message.chars().count();
    if length > 1200 {
        return Err(format!("is {length} characters long"));
    }
    let Some((location, detail)) = split_location(message) else {
        return Err("does not have the form `LOCATION: DETAIL`".into());
    };
    if location.trim().is_empty() || detail.trim().is_empty() {
        return Err("an empty location or detail".into());
    }
    if !names_location(location, detail) {
        return Err(format!("`{location}` names no field, file or line"));
    }
    Ok(())
}

/// `LOCATION: DETAIL` split at the first `": "` outside a quoted key, for a location such as
/// `forces[3]."a: b"`.
fn split_location(message: &str) -> Option<(&str, &str)> {
    let (mut quoted, mut escaped) = (false, false);
    for (i, c) in message.char_indices() {
        if quoted {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => quoted = false,
                _ => {}
            }
        } else if c == '"' {
            quoted = true;
        } else if message[i..].starts_with(": ") {
            return Some((&message[..i], &message[i + 2..]));
        }
    }
    None
}

/// With `RIGID_CROWD_FUZZ_LOG=FILE`, every rejection is appended to FILE, so that a long
/// campaign's messages can be read for sense, not only for form.
fn log_rejection(message: &str) {
    use std::io::Write;
    if let Some(path) = std::env::var_os("RIGID_CROWD_FUZZ_LOG") {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .expect("open RIGID_CROWD_FUZZ_LOG");
        // One write per message: appends from the test threads do not interleave.
        file.write_all(format!("{message}\n").as_bytes())
            .expect("write RIGID_CROWD_FUZZ_LOG");
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a non-string payload".into()
    }
}

#[test]
fn the_harness_catches_panics_multi_line_errors_and_nameless_errors() {
    let names_field = |location: &str, _: &str| location == "field";
    let caught = |f: fn(u8) -> Result<(), String>| {
        std::panic::catch_unwind(|| check_cleanly("t", 0u8, f, names_field)).is_err()
    };
    assert!(caught(|_| panic!("boom")));
    assert!(caught(|_| Err("field: two\nlines".into())));
    assert!(caught(|_| Err("field: a \u{1b}[31m escape".into())));
    assert!(caught(|_| Err("no location at all".into())));
    assert!(caught(|_| Err("elsewhere: wrong location".into())));
    assert!(caught(|_| Err("field: ".into())));
    assert!(!caught(|_| Err("field: must be > 0 (got -1)".into())));
    assert!(!caught(|_| Ok(())));
    assert_eq!(
        split_location(r#"forces[3]."a: \"b": unknown field"#),
        Some((r#"forces[3]."a: \"b""#, "unknown field"))
    );
}
