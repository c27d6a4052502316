//! Closed triangle meshes: reading OBJ files, checking that they bound a solid, and their
//! mass properties by the divergence theorem.

mod obj;
mod polyhedron;
mod triangle_mesh;

pub use polyhedron::MeshIntegrals;
pub use triangle_mesh::TriangleMesh;
