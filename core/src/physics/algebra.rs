//! Vectors, quaternions and the symmetric matrix of the physics, generic over the number
//! type. Every product is written out component by component, so its order of operations
//! is part of the definition and the same on every backend.

use std::ops::{Add, Mul, Neg, Sub};

use super::scalar::{Carried, Scalar, carried_struct};

/// A 3-vector.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Vec3<R> {
    /// The x component.
    pub x: R,
    /// The y component.
    pub y: R,
    /// The z component.
    pub z: R,
}

/// A quaternion `w + x i + y j + z k`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Quat<R> {
    /// The scalar part.
    pub w: R,
    /// The i component.
    pub x: R,
    /// The j component.
    pub y: R,
    /// The k component.
    pub z: R,
}

/// A 3 x 3 matrix by rows.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Mat3<R> {
    pub rows: [Vec3<R>; 3],
}

/// A symmetric 3 x 3 matrix by its six distinct entries (an inverse inertia tensor).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SymMat3<R> {
    pub xx: R,
    pub yy: R,
    pub zz: R,
    pub xy: R,
    pub xz: R,
    pub yz: R,
}

impl<R: Copy> Vec3<R> {
    /// Each component through `f`: the vector in another number type.
    #[inline(always)]
    pub fn map<S>(self, f: impl Fn(R) -> S) -> Vec3<S> {
        Vec3 {
            x: f(self.x),
            y: f(self.y),
            z: f(self.z),
        }
    }
}

impl<R: Copy> Quat<R> {
    /// Each component through `f`: the quaternion in another number type.
    #[inline(always)]
    pub fn map<S>(self, f: impl Fn(R) -> S) -> Quat<S> {
        Quat {
            w: f(self.w),
            x: f(self.x),
            y: f(self.y),
            z: f(self.z),
        }
    }
}

impl<R: Copy> SymMat3<R> {
    /// The matrix of entries `xx, yy, zz, xy, xz, yz`.
    #[inline(always)]
    pub fn from_entries([xx, yy, zz, xy, xz, yz]: [R; 6]) -> Self {
        Self {
            xx,
            yy,
            zz,
            xy,
            xz,
            yz,
        }
    }

    /// Each entry through `f`: the matrix in another number type.
    #[inline(always)]
    pub fn map<S>(self, f: impl Fn(R) -> S) -> SymMat3<S> {
        SymMat3 {
            xx: f(self.xx),
            yy: f(self.yy),
            zz: f(self.zz),
            xy: f(self.xy),
            xz: f(self.xz),
            yz: f(self.yz),
        }
    }
}

impl<R: Scalar> Vec3<R> {
    /// `(x, y, z)`.
    #[inline(always)]
    pub fn new(x: R, y: R, z: R) -> Self {
        Self { x, y, z }
    }

    /// Every component `value`.
    #[inline(always)]
    pub fn splat(value: R) -> Self {
        Self::new(value, value, value)
    }

    /// `x1 x2 + y1 y2 + z1 z2`, summed left to right.
    #[inline(always)]
    pub fn dot(self, o: Self) -> R {
        self.x * o.x + self.y * o.y + self.z * o.z
    }

    /// `self x o`.
    #[inline(always)]
    pub fn cross(self, o: Self) -> Self {
        Self::new(
            self.y * o.z - self.z * o.y,
            self.z * o.x - self.x * o.z,
            self.x * o.y - self.y * o.x,
        )
    }

    /// `|self|^2`.
    #[inline(always)]
    pub fn length_squared(self) -> R {
        self.dot(self)
    }

    /// `|self|`.
    #[inline(always)]
    pub fn length(self) -> R {
        self.length_squared().sqrt()
    }
}

impl<R: Scalar> Add for Vec3<R> {
    type Output = Self;
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Self::new(self.x + o.x, self.y + o.y, self.z + o.z)
    }
}

impl<R: Scalar> Sub for Vec3<R> {
    type Output = Self;
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        Self::new(self.x - o.x, self.y - o.y, self.z - o.z)
    }
}

impl<R: Scalar> Neg for Vec3<R> {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        Self::new(-self.x, -self.y, -self.z)
    }
}

/// Every component times `s`.
impl<R: Scalar> Mul<R> for Vec3<R> {
    type Output = Self;
    #[inline(always)]
    fn mul(self, s: R) -> Self {
        Self::new(self.x * s, self.y * s, self.z * s)
    }
}

impl<R: Scalar> Quat<R> {
    /// `w + x i + y j + z k`.
    #[inline(always)]
    pub fn new(w: R, x: R, y: R, z: R) -> Self {
        Self { w, x, y, z }
    }

    /// The vector part.
    #[inline(always)]
    pub fn vector(self) -> Vec3<R> {
        Vec3::new(self.x, self.y, self.z)
    }

    /// `w* = (w, -x, -y, -z)`.
    #[inline(always)]
    pub fn conjugate(self) -> Self {
        Self::new(self.w, -self.x, -self.y, -self.z)
    }

    /// `|q|^2`, summed `w, x, y, z`.
    #[inline(always)]
    pub fn length_squared(self) -> R {
        self.w * self.w + self.x * self.x + self.y * self.y + self.z * self.z
    }

    /// `q / |q|` as `q (1 / |q|)` (Baraff 4: the renormalization after each step).
    #[inline(always)]
    pub fn normalize(self) -> Self {
        self * (R::constant(1.0) / self.length_squared().sqrt())
    }

    /// The Hamilton product `self o`.
    #[inline(always)]
    pub fn product(self, o: Self) -> Self {
        let (a, b) = (self, o);
        Self::new(
            a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
            a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
            a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
            a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
        )
    }

    /// `[0, v] self`: the Hamilton product with a pure quaternion, without the terms of its
    /// zero scalar part (`0 x` is not `0` for every `x`, and compilers may fold it anyway).
    #[inline(always)]
    pub fn pure_product(v: Vec3<R>, q: Self) -> Self {
        Self::new(
            -(v.x * q.x) - v.y * q.y - v.z * q.z,
            v.x * q.w + v.y * q.z - v.z * q.y,
            v.y * q.w - v.x * q.z + v.z * q.x,
            v.x * q.y - v.y * q.x + v.z * q.w,
        )
    }

    /// The rotation matrix of a unit quaternion (Baraff 4-3).
    #[inline(always)]
    pub fn to_rotation(self) -> Mat3<R> {
        let q = self;
        let one = R::constant(1.0);
        let (x2, y2, z2) = (q.x + q.x, q.y + q.y, q.z + q.z);
        let (xx, xy, xz) = (q.x * x2, q.x * y2, q.x * z2);
        let (yy, yz, zz) = (q.y * y2, q.y * z2, q.z * z2);
        let (wx, wy, wz) = (q.w * x2, q.w * y2, q.w * z2);
        Mat3 {
            rows: [
                Vec3::new(one - (yy + zz), xy - wz, xz + wy),
                Vec3::new(xy + wz, one - (xx + zz), yz - wx),
                Vec3::new(xz - wy, yz + wx, one - (xx + yy)),
            ],
        }
    }
}

impl<R: Scalar> Add for Quat<R> {
    type Output = Self;
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Self::new(self.w + o.w, self.x + o.x, self.y + o.y, self.z + o.z)
    }
}

/// Every component times `s`.
impl<R: Scalar> Mul<R> for Quat<R> {
    type Output = Self;
    #[inline(always)]
    fn mul(self, s: R) -> Self {
        Self::new(self.w * s, self.x * s, self.y * s, self.z * s)
    }
}

impl<R: Scalar> Mat3<R> {
    /// Column `i`: the image of the `i`-th axis.
    #[inline(always)]
    pub fn column(&self, i: usize) -> Vec3<R> {
        let [a, b, c] = self.rows;
        let pick = |v: Vec3<R>| [v.x, v.y, v.z][i];
        Vec3::new(pick(a), pick(b), pick(c))
    }

    /// `M^T`.
    #[inline(always)]
    pub fn transpose(&self) -> Self {
        Self {
            rows: [self.column(0), self.column(1), self.column(2)],
        }
    }

    /// `self o`: each entry a row of `self` dotted with a column of `o`, left to right.
    #[inline(always)]
    pub fn product(&self, o: &Self) -> Self {
        let columns = [o.column(0), o.column(1), o.column(2)];
        Self {
            rows: self.rows.map(|row| {
                Vec3::new(
                    row.dot(columns[0]),
                    row.dot(columns[1]),
                    row.dot(columns[2]),
                )
            }),
        }
    }

    /// `M v`, each row's dot product summed left to right.
    #[inline(always)]
    pub fn mul_vec(&self, v: Vec3<R>) -> Vec3<R> {
        let [a, b, c] = self.rows;
        Vec3::new(a.dot(v), b.dot(v), c.dot(v))
    }

    /// `M^T v`, column by column, each summed top to bottom.
    #[inline(always)]
    pub fn transpose_mul_vec(&self, v: Vec3<R>) -> Vec3<R> {
        let [a, b, c] = self.rows;
        Vec3::new(
            a.x * v.x + b.x * v.y + c.x * v.z,
            a.y * v.x + b.y * v.y + c.y * v.z,
            a.z * v.x + b.z * v.y + c.z * v.z,
        )
    }
}

impl<R: Scalar> SymMat3<R> {
    /// The full matrix.
    #[inline(always)]
    pub fn to_mat3(self) -> Mat3<R> {
        Mat3 {
            rows: [
                Vec3::new(self.xx, self.xy, self.xz),
                Vec3::new(self.xy, self.yy, self.yz),
                Vec3::new(self.xz, self.yz, self.zz),
            ],
        }
    }

    /// `M v`, each row summed left to right.
    #[inline(always)]
    pub fn mul_vec(&self, v: Vec3<R>) -> Vec3<R> {
        Vec3::new(
            self.xx * v.x + self.xy * v.y + self.xz * v.z,
            self.xy * v.x + self.yy * v.y + self.yz * v.z,
            self.xz * v.x + self.yz * v.y + self.zz * v.z,
        )
    }
}

impl<R: Scalar> Carried<R> for Vec3<R> {
    #[inline(always)]
    fn push_scalars(&self, out: &mut Vec<R>) {
        out.extend([self.x, self.y, self.z]);
    }
    #[inline(always)]
    fn from_scalars(s: &mut impl Iterator<Item = R>) -> Self {
        let [x, y, z] = <[R; 3]>::from_scalars(s);
        Self::new(x, y, z)
    }
}

carried_struct!(Mat3 { rows });
carried_struct!(SymMat3 {
    xx,
    yy,
    zz,
    xy,
    xz,
    yz
});

impl<R: Scalar> Carried<R> for Quat<R> {
    #[inline(always)]
    fn push_scalars(&self, out: &mut Vec<R>) {
        out.extend([self.w, self.x, self.y, self.z]);
    }
    #[inline(always)]
    fn from_scalars(s: &mut impl Iterator<Item = R>) -> Self {
        let [w, x, y, z] = <[R; 4]>::from_scalars(s);
        Self::new(w, x, y, z)
    }
}

impl From<glam::DVec3> for Vec3<f64> {
    #[inline(always)]
    fn from(v: glam::DVec3) -> Self {
        Self::new(v.x, v.y, v.z)
    }
}

impl From<Vec3<f64>> for glam::DVec3 {
    #[inline(always)]
    fn from(v: Vec3<f64>) -> Self {
        Self::new(v.x, v.y, v.z)
    }
}

impl From<glam::DQuat> for Quat<f64> {
    #[inline(always)]
    fn from(q: glam::DQuat) -> Self {
        Self::new(q.w, q.x, q.y, q.z)
    }
}

impl From<Quat<f64>> for glam::DQuat {
    #[inline(always)]
    fn from(q: Quat<f64>) -> Self {
        Self::from_xyzw(q.x, q.y, q.z, q.w)
    }
}
