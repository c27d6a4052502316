//! Hostile input: thousands of generated scene files and OBJ meshes per run, each of which
//! must be read or refused cleanly (no panic, no hang, a one-line error naming the field,
//! file or line). `RIGID_CROWD_FUZZ_CASES` sets the number of cases for a longer campaign
//! (see docs/reliability.md).

mod harness;
mod obj_text;
mod regressions;
mod scene_bytes;
mod scene_fields;
mod scene_target;
mod scene_values;
