//! Assembling a crowd: the scene file, the generator, the bodies' sources, and the packed
//! tables (force records, mass constants) the backends read.

pub(crate) mod body_masses;
pub(crate) mod body_source;
pub(crate) mod crowd;
pub(crate) mod force_table;
pub(crate) mod generate;
pub(crate) mod scene;
