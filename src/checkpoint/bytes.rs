//! Little-endian byte encoding for checkpoints: a writer that cannot fail and a reader that
//! checks every length against what is left, so a hostile file can neither panic it nor make
//! it allocate more than the file holds.

use glam::{DMat3, DQuat, DVec3};

use crate::model::error::{Error, Result};

/// Appends little-endian values to a byte vector.
#[derive(Default)]
pub(crate) struct ByteWriter {
    pub bytes: Vec<u8>,
}

impl ByteWriter {
    pub fn u8(&mut self, v: u8) {
        self.bytes.push(v);
    }

    pub fn u32(&mut self, v: u32) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    pub fn u64(&mut self, v: u64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    /// A length or an index (always stored in 64 bits).
    pub fn len(&mut self, v: usize) {
        self.u64(v as u64);
    }

    /// The exact bits, NaN payloads and signed zeros included.
    pub fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }

    pub fn vec3(&mut self, v: DVec3) {
        v.to_array().into_iter().for_each(|x| self.f64(x));
    }

    /// `w, x, y, z`, the project's order at every boundary.
    pub fn quat(&mut self, q: DQuat) {
        [q.w, q.x, q.y, q.z].into_iter().for_each(|x| self.f64(x));
    }

    pub fn mat3(&mut self, m: DMat3) {
        m.to_cols_array().into_iter().for_each(|x| self.f64(x));
    }

    pub fn string(&mut self, s: &str) {
        self.len(s.len());
        self.bytes.extend_from_slice(s.as_bytes());
    }

    pub fn bool(&mut self, v: bool) {
        self.u8(v as u8);
    }
}

/// Reads little-endian values; every error names the field being read.
pub(crate) struct ByteReader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> ByteReader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, at: 0 }
    }

    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.at
    }

    fn take(&mut self, n: usize, field: &str) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(Error::invalid(
                field,
                format!(
                    "the checkpoint ends early (needs {n} more bytes at byte {}, has {})",
                    self.at,
                    self.remaining()
                ),
            ));
        }
        let slice = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(slice)
    }

    fn array<const N: usize>(&mut self, field: &str) -> Result<[u8; N]> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N, field)?);
        Ok(out)
    }

    pub fn u8(&mut self, field: &str) -> Result<u8> {
        Ok(self.array::<1>(field)?[0])
    }

    pub fn u32(&mut self, field: &str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array(field)?))
    }

    pub fn u64(&mut self, field: &str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array(field)?))
    }

    pub fn f64(&mut self, field: &str) -> Result<f64> {
        Ok(f64::from_bits(self.u64(field)?))
    }

    pub fn vec3(&mut self, field: &str) -> Result<DVec3> {
        Ok(DVec3::new(
            self.f64(field)?,
            self.f64(field)?,
            self.f64(field)?,
        ))
    }

    pub fn quat(&mut self, field: &str) -> Result<DQuat> {
        let [w, x, y, z] = [
            self.f64(field)?,
            self.f64(field)?,
            self.f64(field)?,
            self.f64(field)?,
        ];
        Ok(DQuat::from_xyzw(x, y, z, w))
    }

    pub fn mat3(&mut self, field: &str) -> Result<DMat3> {
        let mut cols = [0.0; 9];
        for c in &mut cols {
            *c = self.f64(field)?;
        }
        Ok(DMat3::from_cols_array(&cols))
    }

    pub fn bool(&mut self, field: &str) -> Result<bool> {
        match self.u8(field)? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(Error::invalid(
                field,
                format!("must be 0 or 1 (got {other})"),
            )),
        }
    }

    /// An index or count that must fit `usize`.
    pub fn index(&mut self, field: &str) -> Result<usize> {
        let v = self.u64(field)?;
        usize::try_from(v).map_err(|_| Error::invalid(field, format!("{v} is out of range")))
    }

    /// A count of records of at least `record_bytes` each: refused when the rest of the
    /// checkpoint is too short to hold them, before anything is allocated.
    pub fn count(&mut self, record_bytes: usize, field: &str) -> Result<usize> {
        let n = self.index(field)?;
        if n.saturating_mul(record_bytes.max(1)) > self.remaining() {
            return Err(Error::invalid(
                field,
                format!(
                    "claims {n} entries, more than the {} bytes left can hold",
                    self.remaining()
                ),
            ));
        }
        Ok(n)
    }

    /// A list: its length ([`count`](Self::count), each entry at least `record_bytes`), then
    /// each entry, read by `entry` with its field's name (`name[i]`).
    pub fn list<T>(
        &mut self,
        record_bytes: usize,
        name: &str,
        mut entry: impl FnMut(&mut Self, &str) -> Result<T>,
    ) -> Result<Vec<T>> {
        let n = self.count(record_bytes, name)?;
        (0..n)
            .map(|i| entry(self, &format!("{name}[{i}]")))
            .collect()
    }

    pub fn string(&mut self, field: &str) -> Result<String> {
        let n = self.count(1, field)?;
        let bytes = self.take(n, field)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| Error::invalid(field, "is not valid UTF-8"))
    }
}
