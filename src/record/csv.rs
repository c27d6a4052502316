//! The final-state CSV: one row per body, world frame, full precision.
//!
//! Position and orientation are the pose of the body's model frame ([`Body::model_pose`]):
//! for a mesh body, where its OBJ origin is and how its OBJ axes are turned, so the rows
//! place the mesh as the user wrote it; for closed-form shapes that is the centre of mass
//! and the body axes. Velocity is the centre of mass's, angular velocity and the momenta
//! (angular about the centre of mass) are frame-independent.
//!
//! The rows are formatted in parallel, a chunk of bodies per task, and written in order, so
//! the file is byte for byte what one thread writes. Numbers are the text of Rust's `{}`
//! (shortest round trip, no exponent), produced from ryu's shortest digits at a fraction of
//! the cost; `tests` below checks the two agree.

use std::io::{self, Write};

use rayon::prelude::*;

use crate::model::body::Body;
use crate::record::state_row;

/// Header of the state CSV; quaternions are `w, x, y, z` (scalar first). `x, y, z, q*` are
/// the model frame's pose, `v*` the centre of mass's velocity (see the module docs).
pub const CSV_HEADER: &str = "body,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz,px,py,pz,lx,ly,lz";

/// Writes the header and one row per body. Numbers use the shortest text that reads back
/// to the same f64, so nothing is lost. Large crowds are formatted on every core of rayon's
/// pool; the bytes do not depend on the number of threads.
pub fn write_states_csv(out: &mut impl Write, bodies: &[Body]) -> io::Result<()> {
    writeln!(out, "{CSV_HEADER}")?;
    let mut rows = BatchEncoder::new(out, encode_csv_rows);
    for body in bodies {
        rows.push(*body);
    }
    rows.finish()
}

/// The CSV rows of `chunk`, whose first body is body `first` of the crowd, appended to `text`.
pub(crate) fn encode_csv_rows(first: usize, chunk: &[Body], text: &mut Vec<u8>) {
    for (i, body) in (first..).zip(chunk) {
        push_usize(text, i);
        for value in state_row(body) {
            text.push(b',');
            push_f64(text, value);
        }
        text.push(b'\n');
    }
}

/// Bodies encoded by one task of a [`BatchEncoder`]: under a megabyte of CSV.
const BODIES_PER_CHUNK: usize = 2048;

/// Bytes reserved per body, enough for most CSV rows: a chunk's buffer rarely grows.
const BYTES_PER_BODY: usize = 512;

/// Takes bodies one at a time, in crowd order, and writes their encoding to `out`: each batch
/// of a few chunks per thread is encoded chunk by chunk on rayon's pool with
/// `encode(index of the chunk's first body, chunk, bytes to append to)`, then written in
/// order. Only one batch is held, whatever the crowd's size, and the bytes do not depend on
/// the number of threads. The first write error is kept and returned by
/// [`finish`](Self::finish); bodies pushed after it are dropped.
pub(crate) struct BatchEncoder<'o, W: Write + ?Sized, F> {
    out: &'o mut W,
    encode: F,
    batch: Vec<Body>,
    /// Index of the batch's first body.
    first: usize,
    written: io::Result<()>,
}

impl<'o, W, F> BatchEncoder<'o, W, F>
where
    W: Write + ?Sized,
    F: Fn(usize, &[Body], &mut Vec<u8>) + Sync,
{
    pub fn new(out: &'o mut W, encode: F) -> Self {
        let batch_len = BODIES_PER_CHUNK * 2 * rayon::current_num_threads();
        Self {
            out,
            encode,
            batch: Vec::with_capacity(batch_len),
            first: 0,
            written: Ok(()),
        }
    }

    /// Counts the bodies from crowd index `first` (an MPI rank's shard) rather than 0.
    #[cfg(feature = "cli")]
    pub fn starting_at(mut self, first: usize) -> Self {
        self.first = first;
        self
    }

    /// Appends `body`, encoding and writing the batch once it is full.
    pub fn push(&mut self, body: Body) {
        self.batch.push(body);
        if self.batch.len() == self.batch.capacity() {
            self.flush_batch();
        }
    }

    fn flush_batch(&mut self) {
        if self.written.is_ok() {
            let (first, encode) = (self.first, &self.encode);
            let chunks: Vec<Vec<u8>> = self
                .batch
                .par_chunks(BODIES_PER_CHUNK)
                .enumerate()
                .map(|(c, chunk)| {
                    let mut bytes = Vec::with_capacity(chunk.len() * BYTES_PER_BODY);
                    encode(first + c * BODIES_PER_CHUNK, chunk, &mut bytes);
                    bytes
                })
                .collect();
            self.written = chunks
                .iter()
                .try_for_each(|bytes| self.out.write_all(bytes));
        }
        self.first += self.batch.len();
        self.batch.clear();
    }

    /// Writes what is left and returns the first write error, if any.
    pub fn finish(mut self) -> io::Result<()> {
        self.flush_batch();
        self.written
    }
}

/// Appends `value` in decimal.
pub(crate) fn push_usize(out: &mut Vec<u8>, mut value: usize) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[start..]);
}

/// 2^53: from here on every f64 is an integer and ties in the shortest digits are possible.
const TWO_TO_53: f64 = 9_007_199_254_740_992.0;

/// Appends `value` exactly as `write!(out, "{value}")` would: the shortest digits that read
/// back to `value`, in plain decimal notation (`1e-7` is `0.0000001`, `1.0` is `1`), `NaN`,
/// `inf`, `-inf`, `-0`.
///
/// ryu finds the same shortest digits as std, but for one case: when two candidates are
/// equally near (the value lies exactly halfway, as many f32 values widened to f64 do), ryu
/// takes the even one and std the larger. Both read back to `value`; the larger is chosen
/// here so the text stays std's, byte for byte.
pub(crate) fn push_f64(out: &mut Vec<u8>, value: f64) {
    if value.is_finite() {
        let mut buffer = ryu::Buffer::new();
        let text = buffer.format_finite(value).as_bytes();
        // The common case: ryu's `123.456` or `0.000123` form is std's text (less a `.0` on
        // an integer) unless a tie is possible, which needs the value's exact decimal
        // expansion to be one digit longer than the shortest.
        // One pass for the point and an exponent (`memchr` costs more on so short a text).
        let mut point = None;
        for (i, &c) in text.iter().enumerate() {
            match c {
                b'.' => point = Some(i),
                b'e' => {
                    point = None;
                    break;
                }
                _ => {}
            }
        }
        if let Some(point) = point {
            let fraction_digits = (text.len() - 1 - point) as i32;
            let no_tie = match binary(value.abs()) {
                None => true, // zero
                Some((_, exponent)) if exponent < 0 => fraction_digits != -exponent - 1,
                Some(_) => value.abs() < TWO_TO_53,
            };
            if no_tie {
                out.extend_from_slice(text.strip_suffix(b".0").unwrap_or(text));
                return;
            }
        }
    }
    push_f64_general(out, value);
}

/// [`push_f64`] for every value: ryu's digits taken apart, a tie rounded up, laid out again.
fn push_f64_general(out: &mut Vec<u8>, value: f64) {
    if value.is_nan() {
        out.extend_from_slice(b"NaN");
        return;
    }
    if value.is_sign_negative() {
        out.push(b'-');
    }
    if value.is_infinite() {
        out.extend_from_slice(b"inf");
        return;
    }
    let magnitude = value.abs();
    if magnitude == 0.0 {
        out.push(b'0');
        return;
    }
    let (mut digits, mut exponent) = shortest_digits(magnitude);
    if is_tie(magnitude, digits, exponent) {
        digits += 1;
    }
    while digits % 10 == 0 {
        digits /= 10;
        exponent += 1;
    }
    let mut text = [0u8; 20];
    let mut start = text.len();
    while digits > 0 {
        start -= 1;
        text[start] = b'0' + (digits % 10) as u8;
        digits /= 10;
    }
    let text = &text[start..];
    let len = text.len() as i32;
    // The decimal point sits `point` digits into `text` (before it when negative).
    let point = len + exponent;
    if point <= 0 {
        out.extend_from_slice(b"0.");
        out.resize(out.len() + (-point) as usize, b'0');
        out.extend_from_slice(text);
    } else if point < len {
        out.extend_from_slice(&text[..point as usize]);
        out.push(b'.');
        out.extend_from_slice(&text[point as usize..]);
    } else {
        out.extend_from_slice(text);
        out.resize(out.len() + (point - len) as usize, b'0');
    }
}

/// ryu's shortest digits of a positive finite `value` as `(digits, exponent)`:
/// `value ≈ digits × 10^exponent`.
fn shortest_digits(value: f64) -> (u64, i32) {
    let mut buffer = ryu::Buffer::new();
    let text = buffer.format_finite(value).as_bytes();
    let (mut digits, mut fraction_digits, mut after_point) = (0u64, 0i32, false);
    let mut chars = text.iter();
    for &c in chars.by_ref() {
        match c {
            b'.' => after_point = true,
            b'e' => break,
            _ => {
                digits = digits * 10 + u64::from(c - b'0');
                fraction_digits += i32::from(after_point);
            }
        }
    }
    let exponent = match chars.as_slice() {
        [] => 0,
        [b'-', rest @ ..] => -decimal(rest),
        rest => decimal(rest),
    };
    (digits, exponent - fraction_digits)
}

fn decimal(text: &[u8]) -> i32 {
    text.iter()
        .fold(0, |value, &c| value * 10 + i32::from(c - b'0'))
}

/// A positive finite `value` as `odd × 2^exponent` (`None` for zero).
fn binary(value: f64) -> Option<(u64, i32)> {
    let bits = value.to_bits();
    let fraction = bits & ((1 << 52) - 1);
    let biased = (bits >> 52) as i32;
    let (mantissa, exponent) = match biased {
        0 => (fraction, -1074),
        _ => (fraction | 1 << 52, biased - 1075),
    };
    if mantissa == 0 {
        return None;
    }
    let zeros = mantissa.trailing_zeros();
    Some((mantissa >> zeros, exponent + zeros as i32))
}

/// Whether a positive finite `value` is exactly `(digits + 1/2) × 10^exponent`, that is
/// `(10 digits + 5) × 10^(exponent - 1)`. An odd number times a power of ten equals
/// `odd × 2^e` only if the powers of two match, which settles almost every value at once.
fn is_tie(value: f64, digits: u64, exponent: i32) -> bool {
    let Some((odd, e)) = binary(value) else {
        return false;
    };
    let j = exponent - 1;
    if e != j {
        return false;
    }
    let candidate = u128::from(digits) * 10 + 5;
    let five_to = |power: u32| (power <= 50).then(|| 5u128.pow(power));
    // (10 digits + 5) × 5^j × 2^j = odd × 2^j, or (10 digits + 5) = odd × 5^-j.
    if j >= 0 {
        five_to(j as u32).and_then(|f| candidate.checked_mul(f)) == Some(u128::from(odd))
    } else {
        five_to(j.unsigned_abs()).and_then(|f| u128::from(odd).checked_mul(f)) == Some(candidate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::xorshift::Xorshift64;

    fn std_text(value: f64) -> String {
        format!("{value}")
    }

    fn ours(value: f64) -> String {
        let mut out = Vec::new();
        push_f64(&mut out, value);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn numbers_are_std_text_byte_for_byte() {
        let special = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.1,
            0.3,
            2.7,
            1e-5,
            1e-6,
            1e-7,
            1.5e-300,
            5e-324,
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::MIN,
            1e15,
            1e16,
            1e17,
            1e22,
            1e23,
            TWO_TO_53,
            TWO_TO_53 + 2.0,
            123456789.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            // f32 values widened, exactly halfway between two shortest candidates: ryu's
            // own text ends in ...62, std's in ...63.
            -87.766_021_728_515_63,
            662_936_471_232_937.2,
        ];
        for value in special {
            assert_eq!(ours(value), std_text(value), "{value:e}");
        }
        // Random bit patterns, f64 and f32 values in physical ranges, integers.
        let mut rng = Xorshift64(0x9E37_79B9_7F4A_7C15);
        for i in 0..600_000u64 {
            let s = rng.next_bits();
            let unit = (s >> 11) as f64 / (1u64 << 53) as f64;
            let value = match i % 5 {
                0 => f64::from_bits(s),
                1 => unit * 200.0 - 100.0,
                2 => f64::from(f32::from_bits(s as u32)),
                3 => f64::from((unit * 200.0 - 100.0) as f32),
                _ => (s >> (s % 64)) as f64 / (1u64 << (s % 60)) as f64,
            };
            assert_eq!(ours(value), std_text(value), "{:#x}", value.to_bits());
        }
    }

    #[test]
    fn indices_are_decimal() {
        for i in [0, 7, 10, 99, 1_000_000, usize::MAX] {
            let mut out = Vec::new();
            push_usize(&mut out, i);
            assert_eq!(out, i.to_string().as_bytes());
        }
    }

    #[test]
    fn chunks_are_written_in_crowd_order_whatever_the_threads() {
        use crate::{CrowdSpec, record::state_row};
        let bodies = CrowdSpec::new(3 * BODIES_PER_CHUNK * 2 * 3 + 17, 3)
            .generate()
            .unwrap();
        // The writer of before: one thread, std's formatting.
        let mut expected = format!("{CSV_HEADER}\n").into_bytes();
        for (i, body) in bodies.iter().enumerate() {
            write!(expected, "{i}").unwrap();
            for value in state_row(body) {
                write!(expected, ",{value}").unwrap();
            }
            expected.push(b'\n');
        }
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let mut written = Vec::new();
            pool.install(|| write_states_csv(&mut written, &bodies))
                .unwrap();
            assert!(written == expected, "{threads} threads");
        }
    }
}
