//! Range checks of input numbers, shared by every input type (crowd, mass, plane, scene):
//! a leaf module, so none of them imports another for its checks.

use crate::model::error::{Error, Result};

/// Largest magnitude any input number may have: the f32 backends must hold it.
pub const MAX_MAGNITUDE: f64 = f32::MAX as f64;

/// A number must be finite and within the f32 range the GPU uses.
pub(crate) fn check_number(field: &str, value: f64) -> Result<()> {
    if !value.is_finite() {
        return Err(Error::invalid(
            field,
            format!("must be finite (got {value})"),
        ));
    }
    if value.abs() > MAX_MAGNITUDE {
        return Err(Error::invalid(
            field,
            format!("{value} is out of range (magnitude must be <= {MAX_MAGNITUDE:e})"),
        ));
    }
    Ok(())
}

/// Finite and within the f32 range.
pub(crate) fn in_range(value: f64) -> bool {
    value.is_finite() && value.abs() <= MAX_MAGNITUDE
}

pub fn check_vector<const N: usize>(field: &str, values: [f64; N]) -> Result<()> {
    for (i, v) in values.into_iter().enumerate() {
        if !in_range(v) {
            check_number(&format!("{field}[{i}]"), v)?;
        }
    }
    Ok(())
}

pub(crate) fn check_non_negative(field: &str, value: f64) -> Result<()> {
    check_number(field, value)?;
    if value < 0.0 {
        return Err(Error::invalid(field, format!("must be >= 0 (got {value})")));
    }
    Ok(())
}
