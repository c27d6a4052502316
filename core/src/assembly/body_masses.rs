//! The mass properties of a whole crowd, held compactly on the host.
//!
//! A [`MassProperties`] is 240 bytes, most of it derived: a body of a closed-form shape is
//! fully described by its mass and its shape (33 bytes), and its inertia and inverse are
//! recomputed when asked for, with the same operations that made them, so they come back
//! bit for bit. Only bodies whose properties are not a shape's (meshes, inertia given
//! directly) keep the whole value.

use crate::assembly::body_source::SOURCE_CHUNK;
use crate::model::body::Body;
use crate::model::mass::MassProperties;
use crate::model::shape::{Shape, ShapeKind};

/// Which solid a body's four numbers describe (its [`ShapeKind`]'s position in
/// [`ShapeKind::EVERY`]), or [`STORED`].
type Kind = u8;

/// The body's properties are not a shape's: its numbers index [`MassChunk::stored`].
const STORED: Kind = u8::MAX;

/// `shape` as a kind and its three dimensions.
fn shape_numbers(shape: Shape) -> (Kind, [f64; 3]) {
    let kind = ShapeKind::EVERY.iter().position(|k| *k == shape.kind());
    (
        kind.expect("every kind is in EVERY") as Kind,
        shape.dimensions(),
    )
}

/// The shape of [`shape_numbers`]' kind and dimensions.
fn numbers_shape(kind: Kind, dimensions: [f64; 3]) -> Shape {
    Shape::from_dimensions(ShapeKind::EVERY[kind as usize], dimensions)
}

/// The mass properties of one chunk of [`SOURCE_CHUNK`] consecutive bodies: per body a kind
/// (one byte) and four numbers, the mass and the shape's dimensions (32 bytes), from which
/// `MassProperties::from_shape` is recomputed on demand; bodies that are not a shape's are
/// kept whole in `stored`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MassChunk {
    kinds: Vec<Kind>,
    numbers: Vec<[f64; 4]>,
    stored: Vec<MassProperties>,
}

impl MassChunk {
    /// The properties of `bodies`, in order.
    pub fn of(bodies: &[Body]) -> Self {
        let mut chunk = Self {
            kinds: Vec::with_capacity(bodies.len()),
            numbers: Vec::with_capacity(bodies.len()),
            stored: Vec::new(),
        };
        for body in bodies {
            chunk.push(&body.mass);
        }
        chunk
    }

    fn push(&mut self, properties: &MassProperties) {
        if let Some(shape) = properties.shape() {
            let mass = properties.mass();
            if MassProperties::rebuild_from_shape(mass, shape) == *properties {
                let (kind, [a, b, c]) = shape_numbers(shape);
                self.kinds.push(kind);
                self.numbers.push([mass, a, b, c]);
                return;
            }
        }
        self.kinds.push(STORED);
        self.numbers.push([self.stored.len() as f64, 0.0, 0.0, 0.0]);
        self.stored.push(*properties);
    }

    fn len(&self) -> usize {
        self.kinds.len()
    }

    /// Body `i` of the chunk's mass properties, exactly as given.
    fn get(&self, i: usize) -> MassProperties {
        let [mass, a, b, c] = self.numbers[i];
        match self.kinds[i] {
            STORED => self.stored[mass as usize],
            kind => MassProperties::rebuild_from_shape(mass, numbers_shape(kind, [a, b, c])),
        }
    }
}

/// Every body's mass properties, in crowd order, at 33 bytes a body: one
/// [`MassChunk`] per chunk of the crowd, so it is built in parallel without a final copy.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BodyMasses {
    chunks: Vec<MassChunk>,
    count: usize,
}

impl BodyMasses {
    /// The chunks of a crowd in order; each but the last holds [`SOURCE_CHUNK`] bodies.
    pub fn from_chunks(chunks: Vec<MassChunk>) -> Self {
        let count = chunks.iter().map(MassChunk::len).sum();
        debug_assert!(chunks.iter().rev().skip(1).all(|c| c.len() == SOURCE_CHUNK));
        Self { chunks, count }
    }

    /// Number of bodies.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there are no bodies.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Body `i`'s mass properties, exactly as given.
    pub fn get(&self, i: usize) -> MassProperties {
        self.chunks[i / SOURCE_CHUNK].get(i % SOURCE_CHUNK)
    }

    /// Hands each body's index and mass properties to `visit`, in crowd order.
    pub fn for_each(&self, mut visit: impl FnMut(usize, &MassProperties)) {
        let mut i = 0;
        for chunk in &self.chunks {
            for k in 0..chunk.len() {
                visit(i, &chunk.get(k));
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::body::Body;
    use crate::model::mesh::TriangleMesh;
    use glam::{DMat3, DVec3};

    fn store(properties: &[MassProperties]) -> BodyMasses {
        // Enough bodies for two chunks, so the lookup across chunks is tested too.
        let bodies: Vec<Body> = (0..SOURCE_CHUNK + 3)
            .map(|i| Body::at_rest(properties[i % properties.len()]))
            .collect();
        BodyMasses::from_chunks(bodies.chunks(SOURCE_CHUNK).map(MassChunk::of).collect())
    }

    #[test]
    fn every_kind_of_body_comes_back_bit_for_bit() {
        // A tetrahedron whose centre of mass is off the origin: a non-identity model frame.
        let mesh = TriangleMesh::new(
            "tetrahedron",
            vec![
                DVec3::new(1.0, 0.0, 0.0),
                DVec3::new(0.0, 2.0, 0.0),
                DVec3::new(0.0, 0.0, 3.0),
                DVec3::new(0.0, 0.0, 0.0),
            ],
            vec![[0, 1, 2], [0, 3, 1], [0, 2, 3], [1, 3, 2]],
        );
        let given = [
            MassProperties::from_shape(
                2.5,
                Shape::Box {
                    size: DVec3::new(0.3, 1.7, 0.9),
                },
                "b",
            )
            .unwrap(),
            MassProperties::from_shape(0.7, Shape::Sphere { radius: 0.31 }, "b").unwrap(),
            MassProperties::from_shape_density(
                1000.0,
                Shape::Capsule {
                    radius: 0.2,
                    length: 0.5,
                },
                "b",
            )
            .unwrap(),
            MassProperties::new(3.0, DMat3::from_diagonal(DVec3::new(1.0, 2.0, 2.5)), "b").unwrap(),
            MassProperties::from_mesh(1.5, &mesh, "b").unwrap(),
        ];
        let masses = store(&given);
        assert_eq!(masses.len(), SOURCE_CHUNK + 3);
        let mut visited = 0;
        masses.for_each(|i, properties| {
            assert_eq!(*properties, given[i % given.len()], "body {i}");
            assert_eq!(masses.get(i), *properties, "body {i}");
            visited += 1;
        });
        assert_eq!(visited, masses.len());
        // Shapes are kept as numbers, the rest whole.
        let stored: Vec<bool> = masses.chunks[0].kinds[..5]
            .iter()
            .map(|&k| k == STORED)
            .collect();
        assert_eq!(stored, [false, false, false, true, true]);
    }

    #[test]
    fn every_shape_kind_survives_its_numbers() {
        let shapes = [
            Shape::Box {
                size: DVec3::new(0.3, 1.7, 0.9),
            },
            Shape::Sphere { radius: 0.31 },
            Shape::Cylinder {
                radius: 0.2,
                height: 1.1,
            },
            Shape::Capsule {
                radius: 0.2,
                length: 0.5,
            },
            Shape::Ellipsoid {
                semi_axes: DVec3::new(0.4, 0.5, 0.6),
            },
        ];
        for shape in shapes {
            let (kind, numbers) = shape_numbers(shape);
            assert_eq!(numbers_shape(kind, numbers), shape);
        }
    }
}
