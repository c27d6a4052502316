//! A closed triangle mesh in the user's model frame.

use glam::DVec3;

/// A triangle mesh in the user's model frame, with where each triangle came from for errors.
#[derive(Clone, Debug, PartialEq)]
pub struct TriangleMesh {
    /// What the mesh is called in error messages (the OBJ path, or a name given in code).
    pub(super) name: String,
    pub(super) vertices: Vec<DVec3>,
    pub(super) triangles: Vec<[usize; 3]>,
    /// For meshes read from OBJ: the 1-based line of the face each triangle came from.
    pub(super) face_lines: Option<Vec<usize>>,
}

impl TriangleMesh {
    /// A mesh from vertices and triangles (0-based vertex indices, counter-clockwise seen
    /// from outside); `name` labels it in error messages.
    ///
    /// Nothing is checked here; [`TriangleMesh::integrals`] checks everything.
    pub fn new(name: impl Into<String>, vertices: Vec<DVec3>, triangles: Vec<[usize; 3]>) -> Self {
        Self {
            name: name.into(),
            vertices,
            triangles,
            face_lines: None,
        }
    }

    /// The name used in error messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Vertex positions, model frame.
    pub fn vertices(&self) -> &[DVec3] {
        &self.vertices
    }

    /// Triangles as 0-based vertex indices.
    pub fn triangles(&self) -> &[[usize; 3]] {
        &self.triangles
    }

    /// Every vertex multiplied by `factor` (a uniform scale about the model origin).
    pub fn scaled(mut self, factor: f64) -> Self {
        for v in &mut self.vertices {
            *v *= factor;
        }
        self
    }

    /// Where triangle `t` came from, for messages: its OBJ line or its index.
    pub(super) fn describe_triangle(&self, t: usize) -> String {
        match &self.face_lines {
            Some(lines) => format!("the face on line {}", lines[t]),
            None => format!("triangle {t}"),
        }
    }
}
