//! A reader for the polygon part of Wavefront OBJ: `v` and `f` statements.
//!
//! Faces may have any number of corners (fan-triangulated from the first), corners may be
//! written `v`, `v/vt`, `v//vn` or `v/vt/vn`, and negative indices count back from the
//! latest vertex. Texture coordinates, normals, groups, objects, smoothing, materials,
//! lines, points and comments are skipped; any other statement is an error, so a file that
//! describes its solid some other way (curves, surfaces) is not silently misread.

use std::path::Path;

use glam::DVec3;

use super::triangle_mesh::TriangleMesh;
use crate::model::error::{Error, Result};

/// Statements that carry nothing about the solid's volume.
const SKIPPED: &[&str] = &[
    "vt", "vn", "vp", "o", "g", "s", "usemtl", "mtllib", "l", "p",
];

impl TriangleMesh {
    /// Reads an OBJ file. Errors are reported under `field` and name `path:line`.
    pub fn load_obj(path: impl AsRef<Path>, field: &str) -> Result<Self> {
        let path = path.as_ref();
        let text = crate::model::input_file::read_regular_file(path)
            .map_err(|e| Error::invalid(field, format!("{}: {e}", path.display())))?;
        Self::parse_obj(&text, &path.display().to_string(), field)
    }

    /// Parses OBJ text; `name` stands for the file in messages (`name:line: ...`), which are
    /// reported under `field`.
    pub fn parse_obj(text: &str, name: &str, field: &str) -> Result<Self> {
        let mut vertices = Vec::new();
        // Corners keep the line they came from until every vertex is known, because a
        // positive index may refer to a vertex defined further down.
        let mut faces: Vec<(usize, Vec<usize>)> = Vec::new();
        for (number, line) in text.lines().enumerate() {
            let number = number + 1;
            let fail =
                |message: String| Error::invalid(field, format!("{name}:{number}: {message}"));
            let content = line.split('#').next().unwrap_or_default();
            let mut words = content.split_whitespace();
            let Some(keyword) = words.next() else {
                continue;
            };
            match keyword {
                "v" => {
                    let numbers = words
                        .map(|w| {
                            w.parse::<f64>()
                                .ok()
                                .filter(|x| x.is_finite())
                                .ok_or_else(|| fail(format!("`{w}` is not a finite number")))
                        })
                        .collect::<Result<Vec<f64>>>()?;
                    match numbers.len() {
                        3 | 6 => {}                  // x y z, optionally followed by an r g b colour
                        4 if numbers[3] == 1.0 => {} // a homogeneous weight of 1
                        4 => {
                            return Err(fail(format!(
                                "vertex weight w = {} is not supported (only 1)",
                                numbers[3]
                            )));
                        }
                        n => {
                            return Err(fail(format!(
                                "a vertex needs 3 coordinates `v x y z` (got {n} numbers)"
                            )));
                        }
                    }
                    vertices.push(DVec3::new(numbers[0], numbers[1], numbers[2]));
                }
                "f" => {
                    let corners = words
                        .map(|w| resolve_corner(w, vertices.len()).map_err(&fail))
                        .collect::<Result<Vec<usize>>>()?;
                    if corners.len() < 3 {
                        return Err(fail(format!(
                            "a face needs at least 3 vertices (got {})",
                            corners.len()
                        )));
                    }
                    faces.push((number, corners));
                }
                other if SKIPPED.contains(&other) => {}
                other => return Err(fail(format!("unsupported statement `{other}`"))),
            }
        }
        let mut triangles = Vec::new();
        let mut face_lines = Vec::new();
        for (number, corners) in faces {
            if let Some(&bad) = corners.iter().find(|&&c| c >= vertices.len()) {
                return Err(Error::invalid(
                    field,
                    format!(
                        "{name}:{number}: vertex index {} is out of range (the file has {} vertices)",
                        bad + 1,
                        vertices.len()
                    ),
                ));
            }
            // A fan from the first corner; exact for the convex planar faces exporters write.
            for pair in corners[1..].windows(2) {
                triangles.push([corners[0], pair[0], pair[1]]);
                face_lines.push(number);
            }
        }
        Ok(Self {
            name: name.to_string(),
            vertices,
            triangles,
            face_lines: Some(face_lines),
        })
    }
}

/// The 0-based vertex of a face corner `v`, `v/vt`, `v//vn` or `v/vt/vn`; `defined` vertices
/// precede it, which is what negative indices count back from.
fn resolve_corner(word: &str, defined: usize) -> std::result::Result<usize, String> {
    let index = word.split('/').next().unwrap_or_default();
    let index: i64 = index
        .parse()
        .map_err(|_| format!("face corner `{word}` does not start with a vertex index"))?;
    match index {
        0 => Err("vertex index 0 is invalid (OBJ indices start at 1)".to_string()),
        i if i > 0 => Ok((i - 1) as usize),
        i => {
            let back = i.unsigned_abs() as usize;
            defined.checked_sub(back).ok_or_else(|| {
                format!(
                    "vertex index {i} reaches before the first vertex ({defined} defined so far)"
                )
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<TriangleMesh> {
        TriangleMesh::parse_obj(text, "t.obj", "m")
    }

    #[test]
    fn reads_every_index_form_and_fans_polygons() {
        let text = "# a square pyramid\n\
                    mtllib x.mtl\no pyramid\ng base\ns off\nusemtl grey\n\
                    v 0 0 0\nv 1 0 0\nv 1 1 0 1\nv 0 1 0 0.5 0.5 0.5\n\
                    vt 0 0\nvn 0 0 -1\n\
                    f 1/1/1 4//1 3/1 2   # quad, fanned\n\
                    v 0.5 0.5 1\n\
                    f -5 -4 -1\nf 2 3 5\nf 3/1 4/1 5/1\nf 4 1 5\n";
        let mesh = parse(text).unwrap();
        assert_eq!(mesh.vertices().len(), 5);
        assert_eq!(
            mesh.triangles(),
            &[
                [0, 3, 2],
                [0, 2, 1],
                [0, 1, 4],
                [1, 2, 4],
                [2, 3, 4],
                [3, 0, 4]
            ]
        );
        assert_eq!(
            mesh.face_lines.as_deref(),
            Some(&[13, 13, 15, 16, 17, 18][..])
        );
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let cases = [
            (
                "v 0 0 0\nv 1 0 x\n",
                "m: t.obj:2: `x` is not a finite number",
            ),
            ("v 0 0\n", "m: t.obj:1: a vertex needs 3 coordinates"),
            (
                "v 0 0 0 2\n",
                "m: t.obj:1: vertex weight w = 2 is not supported",
            ),
            (
                "v 0 0 0\n\nf 1 1\n",
                "m: t.obj:3: a face needs at least 3 vertices (got 2)",
            ),
            (
                "v 0 0 0\nf 0 1 1\n",
                "m: t.obj:2: vertex index 0 is invalid",
            ),
            (
                "v 0 0 0\nf 1 -2 1\n",
                "m: t.obj:2: vertex index -2 reaches before the first",
            ),
            (
                "v 0 0 0\nf 1 a/2 1\n",
                "m: t.obj:2: face corner `a/2` does not start",
            ),
            (
                "v 0 0 0\nf 1 1 7\n",
                "m: t.obj:2: vertex index 7 is out of range (the file has 1 vertices)",
            ),
            ("curv 0 1 2\n", "m: t.obj:1: unsupported statement `curv`"),
        ];
        for (text, expected) in cases {
            let message = parse(text).unwrap_err().to_string();
            assert!(message.starts_with(expected), "{text:?}: got `{message}`");
        }
    }
}
