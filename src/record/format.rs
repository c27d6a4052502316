//! Which file format a trajectory is written in, chosen by the file's extension.

use std::path::Path;

/// The formats of a recorded trajectory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrajectoryFormat {
    /// `.csv`: a header, then one row per body per frame: `step,time,body,` and the
    /// [`TRAJECTORY_COLUMNS`](crate::record::TRAJECTORY_COLUMNS).
    Csv,
    /// `.npy`: one float64 array of shape `(frames, bodies, 19)`, the last axis the
    /// [`TRAJECTORY_COLUMNS`](crate::record::TRAJECTORY_COLUMNS).
    Npy,
    /// `.npz`: an uncompressed NumPy archive of `states` (as `.npy`), `steps` (int64,
    /// `(frames,)`) and `times` (float64, `(frames,)`).
    Npz,
}

impl TrajectoryFormat {
    /// The format named by `path`'s extension (`csv`, `npy` or `npz`, any case), or a
    /// one-line message saying which extensions are known.
    pub fn from_path(path: &Path) -> Result<Self, String> {
        let extension = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match extension.as_deref() {
            Some("csv") => Ok(Self::Csv),
            Some("npy") => Ok(Self::Npy),
            Some("npz") => Ok(Self::Npz),
            _ => Err(format!(
                "cannot tell the format of `{}`: the file name must end in .csv, .npy or .npz",
                path.display()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extension_names_the_format() {
        let format = |p: &str| TrajectoryFormat::from_path(Path::new(p));
        assert_eq!(format("a/run.csv"), Ok(TrajectoryFormat::Csv));
        assert_eq!(format("run.NPY"), Ok(TrajectoryFormat::Npy));
        assert_eq!(format("run.npz"), Ok(TrajectoryFormat::Npz));
        for bad in ["run", "run.json", "run.npz.bak", "csv"] {
            assert!(
                format(bad).unwrap_err().contains(".csv, .npy or .npz"),
                "{bad}"
            );
        }
    }
}
