//! Assembling a crowd: the scene file, the generator, the bodies' sources, and the packed
//! tables (force records, mass constants) the backends read.

pub mod body_masses;
pub mod body_source;
pub mod crowd;
pub mod force_laws;
pub mod force_table;
pub mod generate;
pub mod scene;
