//! Throughput measurement shared by `rigid-crowd bench`, `rigid-crowd demo` and the
//! criterion benches: the workload, the timing of each backend, the report and its plot.

mod labels;
mod measure;
pub mod plot;
mod recording;
mod workload;

#[cfg(feature = "mpi")]
pub use labels::describe_options;
pub use measure::{
    BYTES_PER_BODY_STEP, BenchPlan, BenchReport, FLOP_PER_BODY_STEP, Measurement,
    arithmetic_intensity, cpu_description,
};
pub use recording::{RecordingCost, measure_recording};
pub use workload::{Workload, workload};
