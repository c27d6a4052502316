//! Eight f32 lanes and the 3-vectors, quaternions and matrices built from them. Every
//! operation is a plain loop over the lanes, which LLVM turns into SIMD instructions.

use std::ops::{Add, AddAssign, Mul, Neg, Sub, SubAssign};

/// Bodies per block: eight f32 lanes fill two SSE or one AVX register.
pub(crate) const LANES: usize = 8;

/// One f32 per body of a block, aligned so a block field is one aligned 256-bit load.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(align(32))]
pub(crate) struct Lanes(pub [f32; LANES]);

// NOTE: the indexed loops below are deliberate: LLVM turns them into whole-register
// operations, while zipped iterators measured about 25% slower.
#[allow(clippy::needless_range_loop)]
impl Lanes {
    #[inline(always)]
    pub fn splat(value: f32) -> Self {
        Self([value; LANES])
    }

    #[inline(always)]
    pub fn map(self, f: impl Fn(f32) -> f32) -> Self {
        let mut out = [0.0; LANES];
        for i in 0..LANES {
            out[i] = f(self.0[i]);
        }
        Self(out)
    }

    #[inline(always)]
    fn zip(self, other: Self, f: impl Fn(f32, f32) -> f32) -> Self {
        let mut out = [0.0; LANES];
        for i in 0..LANES {
            out[i] = f(self.0[i], other.0[i]);
        }
        Self(out)
    }

    #[inline(always)]
    pub fn sqrt(self) -> Self {
        self.map(f32::sqrt)
    }

    #[inline(always)]
    pub fn recip(self) -> Self {
        self.map(|v| 1.0 / v)
    }

    /// Lane `lane` kept, every other lane zero: one body's share of a block-wide result.
    #[inline(always)]
    pub fn only(self, lane: usize) -> Self {
        let mut out = Self::default();
        out.0[lane] = self.0[lane];
        out
    }
}

impl Add for Lanes {
    type Output = Self;
    #[inline(always)]
    fn add(self, rhs: Self) -> Self {
        self.zip(rhs, |a, b| a + b)
    }
}

impl Sub for Lanes {
    type Output = Self;
    #[inline(always)]
    fn sub(self, rhs: Self) -> Self {
        self.zip(rhs, |a, b| a - b)
    }
}

impl Mul for Lanes {
    type Output = Self;
    #[inline(always)]
    fn mul(self, rhs: Self) -> Self {
        self.zip(rhs, |a, b| a * b)
    }
}

impl Mul<f32> for Lanes {
    type Output = Self;
    #[inline(always)]
    fn mul(self, rhs: f32) -> Self {
        self.map(|a| a * rhs)
    }
}

impl Neg for Lanes {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        self.map(|a| -a)
    }
}

/// A 3-vector per lane.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Vec3Lanes {
    pub x: Lanes,
    pub y: Lanes,
    pub z: Lanes,
}

impl Vec3Lanes {
    #[inline(always)]
    pub fn splat(v: [f32; 3]) -> Self {
        Self {
            x: Lanes::splat(v[0]),
            y: Lanes::splat(v[1]),
            z: Lanes::splat(v[2]),
        }
    }

    #[inline(always)]
    pub fn scale(self, s: Lanes) -> Self {
        Self {
            x: self.x * s,
            y: self.y * s,
            z: self.z * s,
        }
    }

    #[inline(always)]
    pub fn cross(self, o: Self) -> Self {
        Self {
            x: self.y * o.z - self.z * o.y,
            y: self.z * o.x - self.x * o.z,
            z: self.x * o.y - self.y * o.x,
        }
    }

    #[inline(always)]
    pub fn dot(self, o: Self) -> Lanes {
        self.x * o.x + self.y * o.y + self.z * o.z
    }

    #[inline(always)]
    pub fn only(self, lane: usize) -> Self {
        Self {
            x: self.x.only(lane),
            y: self.y.only(lane),
            z: self.z.only(lane),
        }
    }
}

impl Add for Vec3Lanes {
    type Output = Self;
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Self {
            x: self.x + o.x,
            y: self.y + o.y,
            z: self.z + o.z,
        }
    }
}

impl Sub for Vec3Lanes {
    type Output = Self;
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        Self {
            x: self.x - o.x,
            y: self.y - o.y,
            z: self.z - o.z,
        }
    }
}

impl Mul<f32> for Vec3Lanes {
    type Output = Self;
    #[inline(always)]
    fn mul(self, s: f32) -> Self {
        Self {
            x: self.x * s,
            y: self.y * s,
            z: self.z * s,
        }
    }
}

impl Neg for Vec3Lanes {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        Self {
            x: -self.x,
            y: -self.y,
            z: -self.z,
        }
    }
}

impl AddAssign for Vec3Lanes {
    #[inline(always)]
    fn add_assign(&mut self, o: Self) {
        *self = *self + o;
    }
}

impl SubAssign for Vec3Lanes {
    #[inline(always)]
    fn sub_assign(&mut self, o: Self) {
        *self = *self - o;
    }
}

/// A quaternion per lane, `w` the scalar part.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct QuatLanes {
    pub w: Lanes,
    pub x: Lanes,
    pub y: Lanes,
    pub z: Lanes,
}

impl Add for QuatLanes {
    type Output = Self;
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Self {
            w: self.w + o.w,
            x: self.x + o.x,
            y: self.y + o.y,
            z: self.z + o.z,
        }
    }
}

impl Mul<f32> for QuatLanes {
    type Output = Self;
    #[inline(always)]
    fn mul(self, s: f32) -> Self {
        Self {
            w: self.w * s,
            x: self.x * s,
            y: self.y * s,
            z: self.z * s,
        }
    }
}

impl QuatLanes {
    #[inline(always)]
    pub fn normalize(self) -> Self {
        let inv = (self.w * self.w + self.x * self.x + self.y * self.y + self.z * self.z)
            .sqrt()
            .recip();
        Self {
            w: self.w * inv,
            x: self.x * inv,
            y: self.y * inv,
            z: self.z * inv,
        }
    }

    /// `[0, v] q`: the Hamilton product of a pure quaternion and `q`.
    #[inline(always)]
    pub fn pure_mul(v: Vec3Lanes, q: Self) -> Self {
        let qv = Vec3Lanes {
            x: q.x,
            y: q.y,
            z: q.z,
        };
        let vector = v.scale(q.w) + v.cross(qv);
        Self {
            w: -(v.x * q.x + v.y * q.y + v.z * q.z),
            x: vector.x,
            y: vector.y,
            z: vector.z,
        }
    }

    /// The Hamilton product `self o`.
    #[inline(always)]
    pub fn product(self, o: Self) -> Self {
        let (a, b) = (self.vector(), o.vector());
        let vector = b.scale(self.w) + a.scale(o.w) + a.cross(b);
        Self {
            w: self.w * o.w - a.dot(b),
            x: vector.x,
            y: vector.y,
            z: vector.z,
        }
    }

    /// `(-x, -y, -z, w)`: the inverse of a unit quaternion.
    #[inline(always)]
    pub fn conjugate(self) -> Self {
        Self {
            w: self.w,
            x: -self.x,
            y: -self.y,
            z: -self.z,
        }
    }

    /// The vector part `(x, y, z)`.
    #[inline(always)]
    pub fn vector(self) -> Vec3Lanes {
        Vec3Lanes {
            x: self.x,
            y: self.y,
            z: self.z,
        }
    }

    /// Rotation matrix of a unit quaternion (Baraff 4-3), as three columns.
    #[inline(always)]
    pub fn to_mat3(self) -> Mat3Lanes {
        let (x2, y2, z2) = (self.x + self.x, self.y + self.y, self.z + self.z);
        let (xx, xy, xz) = (self.x * x2, self.x * y2, self.x * z2);
        let (yy, yz, zz) = (self.y * y2, self.y * z2, self.z * z2);
        let (wx, wy, wz) = (self.w * x2, self.w * y2, self.w * z2);
        let one = Lanes::splat(1.0);
        Mat3Lanes {
            columns: [
                Vec3Lanes {
                    x: one - (yy + zz),
                    y: xy + wz,
                    z: xz - wy,
                },
                Vec3Lanes {
                    x: xy - wz,
                    y: one - (xx + zz),
                    z: yz + wx,
                },
                Vec3Lanes {
                    x: xz + wy,
                    y: yz - wx,
                    z: one - (xx + yy),
                },
            ],
        }
    }
}

/// A 3x3 matrix per lane, stored as columns.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Mat3Lanes {
    pub columns: [Vec3Lanes; 3],
}

impl Mat3Lanes {
    #[inline(always)]
    pub fn mul_vec(&self, v: Vec3Lanes) -> Vec3Lanes {
        let [a, b, c] = self.columns;
        a.scale(v.x) + b.scale(v.y) + c.scale(v.z)
    }

    /// `M^T v`: the dot product of each column with `v`.
    #[inline(always)]
    pub fn transpose_mul_vec(&self, v: Vec3Lanes) -> Vec3Lanes {
        let dot = |c: Vec3Lanes| c.x * v.x + c.y * v.y + c.z * v.z;
        Vec3Lanes {
            x: dot(self.columns[0]),
            y: dot(self.columns[1]),
            z: dot(self.columns[2]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{Mat3, Quat, Vec3};

    fn lanes_of(f: impl Fn(usize) -> f32) -> Lanes {
        Lanes(std::array::from_fn(f))
    }

    #[test]
    fn lane_quaternions_match_glam() {
        let q = QuatLanes {
            w: lanes_of(|i| 0.9 - 0.1 * i as f32),
            x: lanes_of(|i| 0.1 * i as f32),
            y: lanes_of(|i| -0.3 + 0.05 * i as f32),
            z: Lanes::splat(0.2),
        };
        let v = Vec3Lanes {
            x: lanes_of(|i| i as f32),
            y: lanes_of(|i| 1.0 - i as f32),
            z: Lanes::splat(0.5),
        };
        let n = q.normalize();
        let m = n.to_mat3();
        let spun = QuatLanes::pure_mul(v, q);
        for i in 0..LANES {
            let gq = Quat::from_xyzw(q.x.0[i], q.y.0[i], q.z.0[i], q.w.0[i]);
            let gv = Vec3::new(v.x.0[i], v.y.0[i], v.z.0[i]);
            let gm = Mat3::from_quat(gq.normalize());
            let rotated = m.mul_vec(v);
            let back = m.transpose_mul_vec(v);
            let expected = gm * gv;
            let expected_back = gm.transpose() * gv;
            let got = Vec3::new(rotated.x.0[i], rotated.y.0[i], rotated.z.0[i]);
            let got_back = Vec3::new(back.x.0[i], back.y.0[i], back.z.0[i]);
            assert!((got - expected).length() < 1e-5, "lane {i}");
            assert!((got_back - expected_back).length() < 1e-5, "lane {i}");
            let product = q.product(n.conjugate());
            let p = [
                product.x.0[i],
                product.y.0[i],
                product.z.0[i],
                product.w.0[i],
            ];
            let expected_product = gq * gq.normalize().conjugate();
            assert!((Quat::from_array(p) - expected_product).length() < 1e-5);
            let gs = Quat::from_xyzw(gv.x, gv.y, gv.z, 0.0) * gq;
            let s = [spun.x.0[i], spun.y.0[i], spun.z.0[i], spun.w.0[i]];
            assert!((Quat::from_array(s) - gs).length() < 1e-5, "lane {i}");
        }
    }
}
