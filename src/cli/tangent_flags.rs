//! `run --jacobian` and `--sensitivity NAME,...`: which derivatives a run carries into its
//! `.npz` final states, checked against the scene and the other flags before any work.

use clap::Args;

use crate::model::tangent::TangentPlan;
use crate::record::TrajectoryFormat;
use crate::simulation::tangent_refusal;
use crate::{Crowd, Error, Result};

#[derive(Args, Debug, Default)]
pub struct TangentArgs {
    /// Add `jacobian` to the `.npz` final states: shape (bodies, 13, 13), row r and column c
    /// the derivative of the final state's component r by the initial state's component c,
    /// the state `y = (x, y, z, qw, qx, qy, qz, px, py, pz, lx, ly, lz)` (docs/derivatives.md).
    /// Float64 on `cpu-ref` and `gpu-f64`, float32 on `cpu` and `gpu`.
    #[arg(long)]
    jacobian: bool,
    /// Add one array per name to the `.npz` final states, stored under that name, shape
    /// (bodies, 13, k): `mass` (k = 1), `inertia` (k = 6: body-frame xx, yy, zz, xy, xz, yz)
    /// or a force's number in the scene's path syntax, `forces[1].stiffness` (k = 1),
    /// `forces[0].acceleration` (k = 3) or a keyframed force's table `forces[2].keyframes`
    /// (k = 2 per keyframe: t0, v0, t1, v1, ...), or a plane's, `planes[0].friction`.
    /// Comma-separated.
    #[arg(long, value_name = "NAME,...")]
    sensitivity: Option<String>,
}

impl TangentArgs {
    /// The tangents to start, `None` if none is asked for. Refused in one line: a bad name,
    /// an output that is not `.npz`, a custom force without derivatives.
    pub(crate) fn plan(&self, crowd: &Crowd, out: &std::path::Path) -> Result<Option<TangentPlan>> {
        let mut names: Vec<&str> = Vec::new();
        if self.jacobian {
            names.push("state");
        }
        if let Some(list) = &self.sensitivity {
            for name in list.split(',').map(str::trim) {
                if name == "state" {
                    return Err(Error::invalid(
                        "--sensitivity",
                        "`state` is the Jacobian: ask for it with --jacobian",
                    ));
                }
                names.push(name);
            }
        }
        if names.is_empty() {
            return Ok(None);
        }
        let flag = match self.sensitivity {
            Some(_) => "--sensitivity",
            None => "--jacobian",
        };
        let plan =
            TangentPlan::parse(&names, &crowd.forces, &crowd.planes, &crowd.keyframes, flag)?;
        if !matches!(TrajectoryFormat::from_path(out), Ok(TrajectoryFormat::Npz)) {
            return Err(Error::invalid(
                flag,
                format!(
                    "needs `.npz` output, which holds the arrays beside the states (--out is {})",
                    out.display()
                ),
            ));
        }
        if let Some(why) = tangent_refusal(crowd) {
            return Err(Error::invalid(flag, why));
        }
        Ok(Some(plan))
    }
}
