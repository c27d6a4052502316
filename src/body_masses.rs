//! The mass properties of a whole crowd, held compactly on the host.
//!
//! A [`MassProperties`] is 240 bytes, most of it derived: a body of a closed-form shape is
//! fully described by its mass and its shape (40 bytes), and its inertia and inverse are
//! recomputed when asked for, with the same operations that made them, so they come back
//! bit for bit. Only bodies whose properties are not a shape's (meshes, inertia given
//! directly) keep the whole value.

use crate::body::Body;
use crate::body_source::SOURCE_CHUNK;
use crate::mass::MassProperties;
use crate::shape::Shape;

/// How one body's mass properties are kept.
#[derive(Clone, Debug, PartialEq)]
enum MassRecipe {
    /// `MassProperties::from_shape(mass, shape)`, recomputed on demand.
    Shape { mass: f64, shape: Shape },
    /// Anything else, as given.
    Stored(Box<MassProperties>),
}

impl MassRecipe {
    fn of(properties: &MassProperties) -> Self {
        if let Some(shape) = properties.shape() {
            let rebuilt = MassProperties::rebuild_from_shape(properties.mass(), shape);
            if rebuilt == *properties {
                return Self::Shape {
                    mass: properties.mass(),
                    shape,
                };
            }
        }
        Self::Stored(Box::new(*properties))
    }

    fn properties(&self) -> MassProperties {
        match self {
            Self::Shape { mass, shape } => MassProperties::rebuild_from_shape(*mass, *shape),
            Self::Stored(properties) => **properties,
        }
    }
}

/// The mass properties of one chunk of [`SOURCE_CHUNK`] consecutive bodies.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct MassChunk(Vec<MassRecipe>);

impl MassChunk {
    /// The properties of `bodies`, in order.
    pub fn of(bodies: &[Body]) -> Self {
        Self(bodies.iter().map(|b| MassRecipe::of(&b.mass)).collect())
    }
}

/// Every body's mass properties, in crowd order, at about 40 bytes a body: one
/// [`MassChunk`] per chunk of the crowd, so it is built in parallel without a final copy.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct BodyMasses {
    chunks: Vec<MassChunk>,
    count: usize,
}

impl BodyMasses {
    /// The chunks of a crowd in order; each but the last holds [`SOURCE_CHUNK`] bodies.
    pub fn from_chunks(chunks: Vec<MassChunk>) -> Self {
        let count = chunks.iter().map(|c| c.0.len()).sum();
        debug_assert!(
            chunks
                .iter()
                .rev()
                .skip(1)
                .all(|c| c.0.len() == SOURCE_CHUNK)
        );
        Self { chunks, count }
    }

    /// Number of bodies.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Body `i`'s mass properties, exactly as given.
    pub fn get(&self, i: usize) -> MassProperties {
        self.chunks[i / SOURCE_CHUNK].0[i % SOURCE_CHUNK].properties()
    }

    /// Hands each body's index and mass properties to `visit`, in crowd order.
    pub fn for_each(&self, mut visit: impl FnMut(usize, &MassProperties)) {
        let recipes = self.chunks.iter().flat_map(|c| &c.0);
        for (i, recipe) in recipes.enumerate() {
            visit(i, &recipe.properties());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::Body;
    use crate::mesh::TriangleMesh;
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
        // Shapes are kept as recipes, the rest whole.
        let kinds: Vec<bool> = masses.chunks[0].0[..5]
            .iter()
            .map(|r| matches!(r, MassRecipe::Shape { .. }))
            .collect();
        assert_eq!(kinds, [true, true, true, false, false]);
    }

    #[test]
    fn a_shape_recipe_is_forty_bytes() {
        assert!(size_of::<MassRecipe>() <= 40, "{}", size_of::<MassRecipe>());
    }
}
