//! Fitting a body's inertia to its observed tumbling with a few Gauss–Newton steps: the
//! residual is what was observed minus what the current guess gives, and the `inertia`
//! sensitivities say how the guess's final states move with each of its six entries.
//!
//! `cargo run --release --example fit_inertia`

use rigid_crowd::glam::{DMat3, DQuat, DVec3};
use rigid_crowd::{Body, BodyState, Crowd, MassProperties, Result, STATE_COMPONENTS, Simulation};

/// The inertia tensor of entries `xx, yy, zz, xy, xz, yz` (body frame).
pub fn inertia_of(e: [f64; 6]) -> DMat3 {
    let [xx, yy, zz, xy, xz, yz] = e;
    DMat3::from_cols(
        DVec3::new(xx, xy, xz),
        DVec3::new(xy, yy, yz),
        DVec3::new(xz, yz, zz),
    )
}

/// Four bodies of mass 2 and inertia `entries`, spun differently, torque-free: what is
/// observed, or what a guess predicts.
pub fn tumbling(entries: [f64; 6]) -> Result<Crowd> {
    let mass = MassProperties::new(2.0, inertia_of(entries), "inertia")?;
    let spins = [
        DVec3::new(0.3, 1.5, -0.4),
        DVec3::new(-1.0, 0.2, 0.8),
        DVec3::new(0.5, -0.6, 1.2),
        DVec3::new(1.1, 0.9, 0.1),
    ];
    let bodies = spins
        .iter()
        .enumerate()
        .map(|(i, &l)| Body {
            mass,
            state: BodyState {
                position: DVec3::new(i as f64, 0.0, 0.0),
                orientation: DQuat::from_rotation_z(0.4 * i as f64),
                linear_momentum: DVec3::ZERO,
                angular_momentum: l,
            },
        })
        .collect();
    Ok(Crowd::new(bodies, 0.01))
}

/// Each body's 13 state components after `steps` steps, and their derivatives by the six
/// inertia entries (`bodies x 13 x 6`, row-major).
pub fn predict(entries: [f64; 6], steps: u64) -> Result<(Vec<f64>, Vec<f64>)> {
    let mut sim = Simulation::reference(&tumbling(entries)?)?;
    sim.start_tangents(&["inertia"])?;
    sim.step(steps)?;
    let mut states = Vec::new();
    for body in sim.bodies()? {
        let s = body.state;
        states.extend(s.position.to_array());
        states.extend([
            s.orientation.w,
            s.orientation.x,
            s.orientation.y,
            s.orientation.z,
        ]);
        states.extend(s.linear_momentum.to_array());
        states.extend(s.angular_momentum.to_array());
    }
    let mut sensitivity = vec![0.0; sim.body_count() * STATE_COMPONENTS * 6];
    sim.read_tangents("inertia", &mut sensitivity)?;
    Ok((states, sensitivity))
}

/// Solves the 6 x 6 system `a x = b` by Gaussian elimination with partial pivoting.
fn solve(mut a: [[f64; 6]; 6], mut b: [f64; 6]) -> [f64; 6] {
    for col in 0..6 {
        let pivot = (col..6)
            .max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))
            .unwrap_or(col);
        a.swap(col, pivot);
        b.swap(col, pivot);
        let (above, below) = a.split_at_mut(col + 1);
        let pivot_row = above[col];
        for (offset, row) in below.iter_mut().enumerate() {
            let factor = row[col] / pivot_row[col];
            for (entry, p) in row.iter_mut().zip(pivot_row).skip(col) {
                *entry -= factor * p;
            }
            b[col + 1 + offset] -= factor * b[col];
        }
    }
    let mut x = [0.0; 6];
    for row in (0..6).rev() {
        let known: f64 = (row + 1..6).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - known) / a[row][row];
    }
    x
}

/// Fits the inertia entries to `observed` (the final states of [`tumbling`] after `steps`
/// steps) from `guess`: every Gauss–Newton step's entries and residual norm.
pub fn fit(
    observed: &[f64],
    guess: [f64; 6],
    steps: u64,
    iterations: usize,
) -> Result<Vec<([f64; 6], f64)>> {
    let mut entries = guess;
    let mut history = Vec::new();
    for _ in 0..iterations {
        let (predicted, sensitivity) = predict(entries, steps)?;
        let residual: Vec<f64> = observed
            .iter()
            .zip(&predicted)
            .map(|(o, p)| o - p)
            .collect();
        history.push((entries, residual.iter().map(|r| r * r).sum::<f64>().sqrt()));
        // The normal equations J^T J d = J^T r over every body's 13 rows.
        let (mut jtj, mut jtr) = ([[0.0; 6]; 6], [0.0; 6]);
        for (row, r) in sensitivity.chunks(6).zip(&residual) {
            for i in 0..6 {
                jtr[i] += row[i] * r;
                for j in 0..6 {
                    jtj[i][j] += row[i] * row[j];
                }
            }
        }
        let step = solve(jtj, jtr);
        for (e, d) in entries.iter_mut().zip(step) {
            *e += d;
        }
    }
    Ok(history)
}

/// The truth the observations come from, and the guess the fit starts from.
pub const TRUTH: [f64; 6] = [0.5, 0.7, 0.9, 0.05, -0.03, 0.02];
pub const GUESS: [f64; 6] = [0.6, 0.6, 0.8, 0.0, 0.0, 0.0];

pub fn main() -> Result<()> {
    let steps = 200;
    let (observed, _) = predict(TRUTH, steps)?;
    for (k, (entries, residual)) in fit(&observed, GUESS, steps, 6)?.iter().enumerate() {
        let shown: Vec<String> = entries.iter().map(|e| format!("{e:.9}")).collect();
        println!(
            "step {k}: inertia [{}], residual {residual:.2e}",
            shown.join(", ")
        );
    }
    Ok(())
}
