//! The NumPy `.npy` format, version 1.0: a magic string, a Python-literal header naming the
//! dtype and shape, then the little-endian data in C order.
//! (<https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html>)

use std::io::{self, Write};

/// Element types this crate writes.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Dtype {
    /// `<f4`: little-endian float32 (the final states of the f32 backends).
    #[cfg_attr(not(feature = "cli"), allow(dead_code))]
    F32,
    /// `<f8`: little-endian float64.
    F64,
    /// `<i8`: little-endian int64.
    #[cfg_attr(not(feature = "npz"), allow(dead_code))] // the .npz archive's steps
    I64,
    /// `|u1`: one byte (the `.npz` archive's per-body status).
    #[cfg_attr(not(feature = "npz"), allow(dead_code))]
    U8,
}

/// The `.npy` header for a C-ordered array of `shape`: magic, version 1.0, header length
/// and the dictionary, padded with spaces so the data starts at a multiple of 64 bytes.
pub(crate) fn header(dtype: Dtype, shape: &[usize]) -> Vec<u8> {
    let descr = match dtype {
        Dtype::F32 => "<f4",
        Dtype::F64 => "<f8",
        Dtype::I64 => "<i8",
        Dtype::U8 => "|u1",
    };
    let shape = match shape {
        [one] => format!("({one},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // magic (6) + version (2) + length (2) + dict + '\n', a multiple of 64.
    let unpadded = 10 + dict.len() + 1;
    dict.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    dict.push('\n');
    let mut out = Vec::with_capacity(10 + dict.len());
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    // Under 200 bytes for any shape of three usizes: fits version 1.0's u16.
    out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out
}

/// A whole one-dimensional array of `dtype`: header, then each value's little-endian bytes.
#[cfg_attr(not(feature = "npz"), allow(dead_code))]
fn write_1d<T: Copy, const N: usize>(
    out: &mut impl Write,
    dtype: Dtype,
    values: &[T],
    le_bytes: fn(T) -> [u8; N],
) -> io::Result<()> {
    out.write_all(&header(dtype, &[values.len()]))?;
    for &v in values {
        out.write_all(&le_bytes(v))?;
    }
    Ok(())
}

/// A whole one-dimensional float64 array: header and data.
#[cfg_attr(not(feature = "npz"), allow(dead_code))] // the .npz archive's times
pub(crate) fn write_f64s(out: &mut impl Write, values: &[f64]) -> io::Result<()> {
    write_1d(out, Dtype::F64, values, f64::to_le_bytes)
}

/// A whole one-dimensional int64 array: header and data.
#[cfg_attr(not(feature = "npz"), allow(dead_code))] // the .npz archive's steps
pub(crate) fn write_i64s(out: &mut impl Write, values: &[i64]) -> io::Result<()> {
    write_1d(out, Dtype::I64, values, i64::to_le_bytes)
}

/// A zero-dimensional int64 array (a scalar): header and value.
#[cfg(feature = "cli")] // the final states' .npz
pub(crate) fn write_i64_scalar(out: &mut impl Write, value: i64) -> io::Result<()> {
    out.write_all(&header(Dtype::I64, &[]))?;
    out.write_all(&value.to_le_bytes())
}

/// A zero-dimensional float64 array (a scalar): header and value.
#[cfg(feature = "cli")] // the final states' .npz
pub(crate) fn write_f64_scalar(out: &mut impl Write, value: f64) -> io::Result<()> {
    out.write_all(&header(Dtype::F64, &[]))?;
    out.write_all(&value.to_le_bytes())
}

/// A whole float array of `shape` (C order) from `values`: float64, or float32 when
/// `single` (each value, computed in f32, converts exactly).
#[cfg(feature = "cli")] // the final states' tangents
pub(crate) fn write_floats(
    out: &mut impl Write,
    shape: &[usize],
    values: &[f64],
    single: bool,
) -> io::Result<()> {
    let dtype = if single { Dtype::F32 } else { Dtype::F64 };
    out.write_all(&header(dtype, shape))?;
    let mut bytes = Vec::with_capacity(values.len().min(1 << 16) * 8);
    for chunk in values.chunks(1 << 16) {
        bytes.clear();
        for &v in chunk {
            match single {
                true => bytes.extend_from_slice(&(v as f32).to_le_bytes()),
                false => bytes.extend_from_slice(&v.to_le_bytes()),
            }
        }
        out.write_all(&bytes)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_padded_to_64_bytes_and_name_the_shape() {
        let h = header(Dtype::F64, &[3, 1000, 19]);
        assert_eq!(h.len() % 64, 0);
        assert_eq!(&h[..8], b"\x93NUMPY\x01\x00");
        assert_eq!(u16::from_le_bytes([h[8], h[9]]) as usize, h.len() - 10);
        let dict = std::str::from_utf8(&h[10..]).unwrap();
        assert!(
            dict.starts_with("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 1000, 19), }")
        );
        assert!(dict.ends_with('\n'));
        let one = header(Dtype::I64, &[7]);
        assert!(std::str::from_utf8(&one[10..]).unwrap().contains("'<i8'"));
        assert!(
            std::str::from_utf8(&one[10..])
                .unwrap()
                .contains("'shape': (7,)")
        );
        let scalar = header(Dtype::F32, &[]);
        assert_eq!(scalar.len() % 64, 0);
        let dict = std::str::from_utf8(&scalar[10..]).unwrap();
        assert!(dict.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (), }"));
    }
}
