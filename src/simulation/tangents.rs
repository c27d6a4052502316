//! Tangents through the facade: which derivatives a simulation carries with its states,
//! and reading them into arrays the caller owns, like the states.
//!
//! Row `r` of a body's block is `y_r = (x, y, z, qw, qx, qy, qz, px, py, pz, lx, ly, lz)`
//! now; a column is the derivative along one direction of the inputs as they were when the
//! tangents started, the state `(x, q, P, L)` held fixed for every other direction (a
//! change of mass keeps `P`, not `v`).

use crate::assembly::crowd::Crowd;
use crate::checkpoint::TangentColumns;
use crate::model::error::{Error, Result};
use crate::model::force::ForceKind;
use crate::model::tangent::{STATE_COMPONENTS, TangentPlan};
use crate::simulation::facade::Simulation;

/// Why `crowd` cannot carry tangents, if it cannot: a custom force given as WGSL (with a
/// Rust twin or, from a scene file, without) has no derivatives. Checked before any work.
pub(crate) fn tangent_refusal(crowd: &Crowd) -> Option<&'static str> {
    if crowd.collisions.is_some() {
        return Some(
            "the crowd's bodies collide (`collisions`), and derivatives through collisions between bodies are not taken: run without `collisions`",
        );
    }
    let custom_called = crowd.forces.iter().any(|f| f.kind == ForceKind::Custom);
    let law = crowd.custom_force.as_ref().is_some_and(|c| c.is_law());
    (custom_called && !law).then_some(
        "the crowd's custom force is WGSL, which has no derivatives: write it once as a ForceLaw (CustomForce::from_law)",
    )
}

impl Simulation {
    /// Starts carrying the derivatives `names` names, from every body's state now: `state`
    /// (13 columns: the Jacobian `d y(now) / d y(start)`), `mass` (1), `inertia` (6, the body
    /// frame's `xx, yy, zz, xy, xz, yz`; an off-diagonal entry moves both of its places), a
    /// number of a force in the scene's path syntax (`forces[1].stiffness`: 1 column;
    /// `forces[0].acceleration`: 3), a keyframed force's table (`forces[2].keyframes`: two
    /// columns a keyframe, its time and its value, `t0, v0, t1, v1, ...`) or a number of a
    /// plane (`planes[0].friction`, `restitution`: 1;
    /// `planes[0].point`, and `planes[0].normal`, which turns the plane about its point: 3).
    /// A custom force written as a [`ForceLaw`](crate::ForceLaw) has
    /// derivatives from its one definition. A bad name, a name given twice, or a custom
    /// force given as WGSL is an error naming it.
    ///
    /// Orientation columns of `state`, and a plane's `normal` columns, are those of the
    /// normalized input: the simulation normalizes an orientation (and a normal) on load,
    /// so the Jacobian times `q(start)` is zero there. For a normal given with length `L`,
    /// divide its columns by `L`.
    /// [`set_states`](Self::set_states) starts a body's tangents again from its new state.
    pub fn start_tangents(&mut self, names: &[&str]) -> Result<()> {
        if names.is_empty() {
            return Err(Error::invalid("tangents", "name at least one"));
        }
        let plan = TangentPlan::parse(
            names,
            &self.settings.forces,
            &self.settings.planes,
            &self.settings.keyframes,
            "tangents",
        )?;
        self.carry_tangents(plan)
    }

    /// [`start_tangents`](Self::start_tangents) of a plan checked against this crowd.
    pub(crate) fn carry_tangents(&mut self, plan: TangentPlan) -> Result<()> {
        if let Some(why) = tangent_refusal(&self.settings) {
            return Err(Error::invalid("tangents", why));
        }
        self.finish()?;
        self.engine.start_tangents(&plan, &self.settings)?;
        self.tangents = Some(plan);
        Ok(())
    }

    /// The tangents carried, if any: their names and columns.
    pub fn tangent_plan(&self) -> Option<&TangentPlan> {
        self.tangents.as_ref()
    }

    /// Copies the columns of the tangents `name` names (as [`start_tangents`] was given it)
    /// into `out`: shape `(bodies, 13, k)` row-major, `k` the name's width, each entry
    /// `d y_r(now) / d direction`. Waits for queued steps.
    ///
    /// [`start_tangents`]: Self::start_tangents
    pub fn read_tangents(&mut self, name: &str, out: &mut [f64]) -> Result<()> {
        let Some(plan) = &self.tangents else {
            return Err(Error::invalid(
                "tangents",
                "none are carried: start them with start_tangents",
            ));
        };
        let Some(columns) = plan.columns(name) else {
            let carried: Vec<String> = plan.tangents().iter().map(|t| t.name()).collect();
            return Err(Error::invalid(
                "tangents",
                format!("`{name}` is not carried (carried: {})", carried.join(", ")),
            ));
        };
        let expected = self.body_count() * STATE_COMPONENTS * columns.len();
        if out.len() != expected {
            return Err(Error::invalid(
                "out",
                format!(
                    "holds {} numbers; {} bodies x 13 x {} need {expected}",
                    out.len(),
                    self.body_count(),
                    columns.len()
                ),
            ));
        }
        self.finish()?;
        self.engine.read_tangents(columns, out)?;
        without_negative_zeros(out);
        Ok(())
    }

    /// Every carried column as a checkpoint holds them, if tangents are carried.
    pub(crate) fn tangent_columns(&mut self) -> Result<Option<TangentColumns>> {
        let Some(plan) = &self.tangents else {
            return Ok(None);
        };
        let names: Vec<String> = plan.tangents().iter().map(|t| t.name()).collect();
        let mut columns = vec![0.0; self.body_count() * plan.body_len()];
        let all = 0..plan.width();
        self.finish()?;
        self.engine.read_tangents(all, &mut columns)?;
        without_negative_zeros(&mut columns);
        Ok(Some(TangentColumns { names, columns }))
    }

    /// Carries the tangents of a checkpoint on from its columns.
    pub(crate) fn restore_tangents(&mut self, tangents: &TangentColumns) -> Result<()> {
        let names: Vec<&str> = tangents.names.iter().map(String::as_str).collect();
        self.start_tangents(&names)?;
        // A checkpoint's columns along a law's numbers are counted only now, with the law.
        let expected = self.body_count() * self.tangent_plan().map_or(0, TangentPlan::body_len);
        if tangents.columns.len() != expected {
            return Err(Error::invalid(
                "tangents.columns",
                format!(
                    "holds {} numbers; {} bodies need {expected}",
                    tangents.columns.len(),
                    self.body_count()
                ),
            ));
        }
        self.engine.set_tangents(&tangents.columns)
    }

    /// The Jacobian `d y(now) / d y(start)` of every body, `(bodies, 13, 13)` row-major:
    /// [`read_tangents`](Self::read_tangents) of `state`.
    pub fn read_jacobian(&mut self, out: &mut [f64]) -> Result<()> {
        self.read_tangents("state", out)
    }
}

/// Every `-0` of `values` made `+0`, nothing else changed (`x + 0` is `x` for every other x).
/// The GPU's tangent kernels leave out the terms whose factor is a literal zero, which the
/// CPU's dual numbers add (`a' b + a 0`): a term that is a signed zero can only change the
/// sign of a zero sum, never a number, so the backends' tangents agree once zeros are +0.
fn without_negative_zeros(values: &mut [f64]) {
    for v in values {
        *v += 0.0;
    }
}

#[cfg(test)]
mod tests {
    use glam::{DQuat, DVec3};

    use crate::model::fault_rules::OnFault;
    use crate::{Backend, Body, BodyState, Crowd, Force, ForceKind, MassProperties, Simulation};

    /// Two tumbling bricks falling under gravity, the second faster.
    fn falling_pair() -> Crowd {
        let mass = MassProperties::from_principal(2.0, DVec3::new(0.3, 0.6, 0.8), "mass").unwrap();
        let bodies = (0..2)
            .map(|i| Body {
                mass,
                state: BodyState {
                    position: DVec3::new(i as f64, 0.0, 0.0),
                    orientation: DQuat::from_rotation_y(0.3 + i as f64),
                    linear_momentum: DVec3::new(0.0, 0.0, -2.0 - 10.0 * i as f64),
                    angular_momentum: DVec3::new(0.1, 0.7, -0.2),
                },
            })
            .collect();
        let mut crowd = Crowd::new(bodies, 0.01);
        crowd.forces = vec![Force::on_all(ForceKind::Gravity {
            acceleration: DVec3::new(0.0, 0.0, -9.81),
        })];
        crowd
    }

    fn jacobian(sim: &mut Simulation) -> Vec<f64> {
        let mut out = vec![0.0; sim.body_count() * 169];
        sim.read_jacobian(&mut out).unwrap();
        out
    }

    #[test]
    fn bad_requests_are_one_line_naming_them() {
        let crowd = falling_pair();
        let mut sim = Simulation::reference(&crowd).unwrap();
        let mut out = vec![0.0; 2 * 13];
        let message = |e: crate::Error| e.to_string();
        assert_eq!(
            message(sim.read_tangents("mass", &mut out).unwrap_err()),
            "tangents: none are carried: start them with start_tangents"
        );
        assert_eq!(
            message(sim.start_tangents(&[]).unwrap_err()),
            "tangents: name at least one"
        );
        assert_eq!(
            message(sim.start_tangents(&["mass", "mass"]).unwrap_err()),
            "tangents: `mass` is named twice"
        );
        sim.start_tangents(&["mass", "forces[0].acceleration"])
            .unwrap();
        assert_eq!(
            message(sim.read_tangents("inertia", &mut out).unwrap_err()),
            "tangents: `inertia` is not carried (carried: mass, forces[0].acceleration)"
        );
        assert_eq!(
            message(
                sim.read_tangents("forces[0].acceleration", &mut out)
                    .unwrap_err()
            ),
            "out: holds 26 numbers; 2 bodies x 13 x 3 need 78"
        );
        let mut custom = crowd.clone();
        custom.forces.push(Force::on_all(ForceKind::Custom));
        custom.custom_force = Some(crate::CustomForce::new("", |_| Default::default()));
        let mut sim = Simulation::reference(&custom).unwrap();
        assert_eq!(
            message(sim.start_tangents(&["state"]).unwrap_err()),
            "tangents: the crowd's custom force is WGSL, which has no derivatives: write it once as a ForceLaw (CustomForce::from_law)"
        );
        // The same force written once as a law has them, on every backend: the GPU's
        // (its law traced over duals) are the CPU's of its precision, bit for bit.
        custom.custom_force = Some(crate::CustomForce::from_law(
            crate::verify::test_crowds::Tether,
        ));
        let jacobian = |backend| {
            let mut sim = Simulation::new(&custom, backend).unwrap();
            sim.start_tangents(&["state"]).unwrap();
            sim.step(10).unwrap();
            let mut out = vec![0.0; 2 * 13 * 13];
            sim.read_tangents("state", &mut out).unwrap();
            out.into_iter().map(f64::to_bits).collect::<Vec<_>>()
        };
        assert_eq!(jacobian(Backend::GpuF64), jacobian(Backend::Reference));
        assert_eq!(jacobian(Backend::Gpu), jacobian(Backend::FastCpu));
    }

    /// A checkpoint holds the tangents: the run resumed from its file carries them on to
    /// the bits of the run never interrupted, on every backend.
    #[test]
    fn a_resumed_checkpoint_carries_the_tangents_on_bit_for_bit() {
        let crowd = falling_pair();
        let names = ["state", "mass", "forces[0].acceleration"];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.ckpt");
        for backend in Backend::ALL {
            let mut whole = Simulation::new(&crowd, backend).unwrap();
            whole.start_tangents(&names).unwrap();
            whole.step(50).unwrap();
            let mut first = Simulation::new(&crowd, backend).unwrap();
            first.start_tangents(&names).unwrap();
            first.step(20).unwrap();
            first.checkpoint().unwrap().write(&path).unwrap();
            let checkpoint = crate::Checkpoint::read(&path).unwrap();
            let mut resumed = Simulation::resume(&checkpoint, backend).unwrap();
            resumed.step(30).unwrap();
            assert_eq!(resumed.bodies().unwrap(), whole.bodies().unwrap());
            for name in names {
                let width = whole.tangent_plan().unwrap().columns(name).unwrap().len();
                let (mut a, mut b) = (vec![0.0; 2 * 13 * width], vec![0.0; 2 * 13 * width]);
                whole.read_tangents(name, &mut a).unwrap();
                resumed.read_tangents(name, &mut b).unwrap();
                assert_eq!(a, b, "{backend}: {name}");
                assert!(a.iter().any(|&t| t != 0.0 && t != 1.0), "{backend}: {name}");
            }
        }
    }

    #[test]
    fn a_new_state_starts_its_bodys_tangents_again_and_a_frozen_body_keeps_them() {
        let mut crowd = falling_pair();
        crowd.fault_rules.on_fault = OnFault::Freeze;
        // The second brick passes 20 m/s after about a second; the first never does.
        crowd.fault_rules.envelope.max_speed = Some(20.0);
        for backend in Backend::ALL {
            let mut sim = Simulation::new(&crowd, backend).unwrap();
            sim.start_tangents(&["state"]).unwrap();
            let at_start = jacobian(&mut sim);
            sim.step(150).unwrap();
            assert_eq!(
                sim.quarantined().unwrap().len(),
                1,
                "{backend}: the fast brick froze"
            );
            let frozen = jacobian(&mut sim);
            sim.step(50).unwrap();
            let later = jacobian(&mut sim);
            assert_eq!(
                later[169..],
                frozen[169..],
                "{backend}: the frozen body's columns stay"
            );
            assert_ne!(
                later[..169],
                frozen[..169],
                "{backend}: the other body's columns move on"
            );
            assert_ne!(frozen[169..], at_start[169..]);
            // A new state for body 1: its block is the start's again (the orientation block
            // projected with the new q), body 0's is untouched.
            let state = crowd.bodies[1].state;
            sim.set_states(&[1], &[state]).unwrap();
            let again = jacobian(&mut sim);
            assert_eq!(again[..169], later[..169]);
            assert_eq!(again[169..], at_start[169..], "{backend}");
        }
    }

    /// The f32 tangents of `cpu` against the reference's f64 ones over 1,000 steps of the
    /// cross-check crowd (every force kind, own forces, keyframes) at `check`'s step, 1e-3,
    /// under each integrator: every column of every body within 1e-3 of its largest entry
    /// (measured: 8.6e-4).
    #[test]
    fn f32_tangents_stay_within_1e_3_of_f64_over_1000_steps() {
        let names = [
            "state",
            "mass",
            "inertia",
            "forces[0].acceleration",
            "forces[1].linear",
        ];
        let mut worst: f64 = 0.0;
        for integrator in crate::Integrator::ALL {
            let mut crowd =
                crate::verify::check_crowd::cross_check_crowd(24, 5, integrator, 1e-3).unwrap();
            crowd.forces.retain(|f| f.kind != ForceKind::Custom);
            crowd.custom_force = None;
            let run = |backend: Backend| {
                let mut sim = Simulation::new(&crowd, backend).unwrap();
                sim.start_tangents(&names).unwrap();
                sim.step(1_000).unwrap();
                names.map(|name| {
                    let k = sim.tangent_plan().unwrap().columns(name).unwrap().len();
                    let mut out = vec![0.0; sim.body_count() * 13 * k];
                    sim.read_tangents(name, &mut out).unwrap();
                    (k, out)
                })
            };
            let (double, single) = (run(Backend::Reference), run(Backend::FastCpu));
            for (name, ((k, d), (_, s))) in names.iter().zip(double.iter().zip(&single)) {
                for (body, (d, s)) in d.chunks(13 * k).zip(s.chunks(13 * k)).enumerate() {
                    for c in 0..*k {
                        let column = |block: &[f64]| -> Vec<f64> {
                            (0..13).map(|r| block[r * k + c]).collect()
                        };
                        let (d, s) = (column(d), column(s));
                        let scale = d.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
                        let error = d.iter().zip(&s).fold(0.0_f64, |m, (d, s)| {
                            crate::verify::compare::largest(m, (d - s).abs())
                        });
                        let relative = if scale == 0.0 { error } else { error / scale };
                        assert!(
                            relative <= 1e-3,
                            "{integrator}: body {body}, {name} column {c}: {relative:e}"
                        );
                        worst = worst.max(relative);
                    }
                }
            }
        }
        println!("f32 tangents after 1,000 steps: worst {worst:.2e} of their column");
    }

    /// The Jacobian against the variational equations `Phi' = Df(y) Phi`, solved apart from
    /// the library: its own derivative `f` (glam only, `R` from the normalized `q`), `Df`
    /// by central differences of it, and RK4 at a sixteenth of the step. The two agree to
    /// the reference's truncation error; starting `Phi` at the identity instead of
    /// projecting the orientation block (`I - q q^T`) would not.
    #[test]
    fn the_jacobian_solves_the_variational_equations() {
        use glam::DMat3;
        let inertia = DMat3::from_cols(
            DVec3::new(0.5, 0.05, -0.03),
            DVec3::new(0.05, 0.7, 0.02),
            DVec3::new(-0.03, 0.02, 0.9),
        );
        let (m, g, drag, spin_drag) = (2.0, DVec3::new(0.0, 0.0, -9.81), 0.3, 0.05);
        let (push, point) = (DVec3::new(0.5, -1.0, 0.3), DVec3::new(0.2, 0.1, -0.4));
        let q0 = DQuat::from_xyzw(0.3, -0.4, 0.5, 0.7).normalize();
        let start = BodyState {
            position: DVec3::new(0.1, 0.2, 3.0),
            orientation: q0,
            linear_momentum: DVec3::new(1.0, 0.5, -0.2),
            angular_momentum: DVec3::new(0.4, 1.3, -0.6),
        };
        let mut crowd = Crowd::new(
            vec![Body {
                mass: MassProperties::new(m, inertia, "inertia").unwrap(),
                state: start,
            }],
            0.01,
        );
        crowd.integrator = crate::Integrator::Rk4;
        crowd.forces = vec![
            Force::on_all(ForceKind::Gravity { acceleration: g }),
            Force::on_all(ForceKind::LinearDrag {
                linear: drag,
                angular: spin_drag,
            }),
            Force::on_all(ForceKind::PointForce { force: push, point }),
        ];
        let steps = 100;
        let mut sim = Simulation::reference(&crowd).unwrap();
        sim.start_tangents(&["state"]).unwrap();
        sim.step(steps).unwrap();
        let ours = jacobian(&mut sim);

        // y = (x, q wxyz, P, L); f(y) as Baraff writes it.
        let inv_inertia = inertia.inverse();
        let f = |y: &[f64; 13]| -> [f64; 13] {
            let q = DQuat::from_xyzw(y[4], y[5], y[6], y[3]);
            let r = DMat3::from_quat(q.normalize());
            let (p, l) = (
                DVec3::new(y[7], y[8], y[9]),
                DVec3::new(y[10], y[11], y[12]),
            );
            let v = p / m;
            let w = r * inv_inertia * r.transpose() * l;
            let dq = DQuat::from_xyzw(w.x, w.y, w.z, 0.0) * q * 0.5;
            let force = g * m - v * drag + push;
            let torque = -w * spin_drag + (r * point).cross(push);
            [
                v.x, v.y, v.z, dq.w, dq.x, dq.y, dq.z, force.x, force.y, force.z, torque.x,
                torque.y, torque.z,
            ]
        };
        // The augmented system: y, then Phi row-major.
        let augmented = |z: &[f64]| -> Vec<f64> {
            let y: [f64; 13] = z[..13].try_into().unwrap();
            let mut out = f(&y).to_vec();
            let mut df = [[0.0; 13]; 13];
            for c in 0..13 {
                let h = 1e-6 * y[c].abs().max(1.0);
                let (mut plus, mut minus) = (y, y);
                plus[c] += h;
                minus[c] -= h;
                let (fp, fm) = (f(&plus), f(&minus));
                for (row, (p, m)) in df.iter_mut().zip(fp.iter().zip(&fm)) {
                    row[c] = (p - m) / (2.0 * h);
                }
            }
            for row in &df {
                for c in 0..13 {
                    out.push((0..13).map(|k| row[k] * z[13 + k * 13 + c]).sum());
                }
            }
            out
        };
        let solve = |projected: bool| -> Vec<f64> {
            let y0 = [
                start.position.x,
                start.position.y,
                start.position.z,
                q0.w,
                q0.x,
                q0.y,
                q0.z,
                start.linear_momentum.x,
                start.linear_momentum.y,
                start.linear_momentum.z,
                start.angular_momentum.x,
                start.angular_momentum.y,
                start.angular_momentum.z,
            ];
            let q = [q0.w, q0.x, q0.y, q0.z];
            let mut z = y0.to_vec();
            for r in 0..13 {
                for c in 0..13 {
                    let identity = if r == c { 1.0 } else { 0.0 };
                    let both_q = (3..7).contains(&r) && (3..7).contains(&c);
                    let projection = if projected && both_q {
                        q[r - 3] * q[c - 3]
                    } else {
                        0.0
                    };
                    z.push(identity - projection);
                }
            }
            let h = 0.01 / 16.0;
            for _ in 0..steps * 16 {
                let at = |z: &[f64], k: &[f64], s: f64| -> Vec<f64> {
                    z.iter().zip(k).map(|(a, b)| a + s * b).collect()
                };
                let k1 = augmented(&z);
                let k2 = augmented(&at(&z, &k1, h / 2.0));
                let k3 = augmented(&at(&z, &k2, h / 2.0));
                let k4 = augmented(&at(&z, &k3, h));
                for i in 0..z.len() {
                    z[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
                }
            }
            z[13..].to_vec()
        };
        let worst_against = |phi: &[f64]| -> f64 {
            (0..13)
                .map(|c| {
                    let scale = (0..13).fold(1e-300_f64, |s, r| s.max(phi[r * 13 + c].abs()));
                    (0..13).fold(0.0_f64, |w, r| {
                        w.max((ours[r * 13 + c] - phi[r * 13 + c]).abs() / scale)
                    })
                })
                .fold(0.0, f64::max)
        };
        let projected = worst_against(&solve(true));
        let unprojected = worst_against(&solve(false));
        println!(
            "variational equations: worst {projected:.1e} of a column ({unprojected:.1e} unprojected)"
        );
        assert!(projected < 1e-8, "{projected:e}");
        assert!(unprojected > 1e-2, "{unprojected:e}");
    }

    /// A chunk whose columns overflow one storage binding carries them in pieces, each in
    /// a binding of its own: the GPU's tangents are still the CPU's bit for bit, through the
    /// restart of a run of bodies across pieces and of a lone one, and a checkpoint resumed
    /// on the same pieces.
    #[test]
    fn tangents_past_one_binding_are_carried_in_pieces_bit_for_bit() {
        let ctx = crate::backends::gpu::GpuContext::new().expect("GPU tests need an adapter");
        // 4 KiB bindings: a chunk of 64 f32 (32 f64) records, whose 14 columns of 13 rows
        // (728 bytes a body in f32) take 5 bodies (2 in f64) a piece.
        let small = ctx.with_max_binding_bytes(64 * 64);
        let mut crowd = Crowd::new(crate::CrowdSpec::new(150, 4).generate().unwrap(), 0.01);
        crowd.forces = falling_pair().forces;
        crowd.forces.push(Force::on_body(
            77,
            ForceKind::Thrust {
                force: DVec3::new(0.0, 1.0, 2.0),
                torque: DVec3::new(0.1, 0.0, 0.0),
            },
        ));
        let names = ["state", "forces[1].force"];
        // Bodies 128 to 133 cross pieces (of 5 in f32, 2 in f64); each starts again from
        // an orientation of its own, so a block written to another body's place shows.
        let restarted = [128, 129, 130, 131, 132, 133, 140];
        let restarts: Vec<BodyState> = (0..restarted.len())
            .map(|i| BodyState {
                position: DVec3::new(1.0, 2.0, 3.0),
                orientation: DQuat::from_rotation_z(0.4 + 0.3 * i as f64)
                    * DQuat::from_rotation_x(0.2 * i as f64),
                linear_momentum: DVec3::new(0.5, 0.0, -1.0),
                angular_momentum: DVec3::new(0.0, 0.3, 0.1 * i as f64),
            })
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pieces.ckpt");
        let columns = |backend| {
            let mut sim = Simulation::on_backend(&crowd, backend, &small).unwrap();
            sim.start_tangents(&names).unwrap();
            sim.step(4).unwrap();
            sim.set_states(&restarted, &restarts).unwrap();
            sim.step(3).unwrap();
            sim.checkpoint().unwrap().write(&path).unwrap();
            let checkpoint = crate::Checkpoint::read(&path).unwrap();
            let mut sim = match backend.gpu_precision() {
                Some(_) => Simulation::resume_on_gpu(&checkpoint, &small).unwrap(),
                None => Simulation::resume(&checkpoint, backend).unwrap(),
            };
            sim.step(3).unwrap();
            let mut out = vec![0.0; 150 * 13 * 16];
            sim.read_tangents("state", &mut out[..150 * 13 * 13])
                .unwrap();
            sim.read_tangents("forces[1].force", &mut out[150 * 13 * 13..])
                .unwrap();
            out.into_iter().map(f64::to_bits).collect::<Vec<_>>()
        };
        // The numbers at which two runs' bits differ, a few of them.
        let differing = |a: &[u64], b: &[u64]| -> Vec<usize> {
            assert_eq!(a.len(), b.len());
            (0..a.len()).filter(|&i| a[i] != b[i]).take(8).collect()
        };
        let reference = columns(Backend::Reference);
        let gpu_f64 = differing(&columns(Backend::GpuF64), &reference);
        assert!(gpu_f64.is_empty(), "gpu-f64 differs at {gpu_f64:?}");
        let gpu = differing(&columns(Backend::Gpu), &columns(Backend::FastCpu));
        assert!(gpu.is_empty(), "gpu differs at {gpu:?}");
        // The thrust on body 77 moved its columns, and only its.
        let thrust = &reference[150 * 13 * 13..];
        let moved: Vec<usize> = (0..150)
            .filter(|b| {
                thrust[b * 39..(b + 1) * 39]
                    .iter()
                    .any(|&t| f64::from_bits(t) != 0.0)
            })
            .collect();
        assert_eq!(moved, [77]);
    }

    /// The reference simulation's tangents across a crowd, through the facade, against
    /// Richardson differences of whole runs.
    #[test]
    fn a_crowds_tangents_match_differences_of_the_reference_simulation() {
        use crate::model::tangent::STATE_COMPONENTS;
        use crate::physics::motion::State;
        use crate::physics::scalar::Carried;
        use crate::verify::test_crowds::tumbling_brick;

        let (state, mass) = tumbling_brick();
        let bodies = (0..3)
            .map(|i| {
                let mut body = Body { mass, state };
                body.state.position.x += i as f64;
                body.state.linear_momentum.y += 0.3 * i as f64;
                body
            })
            .collect();
        let mut crowd = Crowd::new(bodies, 0.01);
        let v = DVec3::new;
        crowd.forces = vec![
            Force::on_all(ForceKind::Gravity {
                acceleration: v(0.1, 0.0, -9.81),
            }),
            Force::on_body(
                1,
                ForceKind::Spring {
                    anchor: v(0.0, 1.0, 2.0),
                    attach: v(0.3, 0.2, -0.5),
                    stiffness: 5.0,
                    damping: 0.4,
                },
            ),
            Force::on_all(ForceKind::LinearDrag {
                linear: 0.4,
                angular: 0.3,
            }),
            Force::on_all(ForceKind::Attractor {
                centre: v(3.0, 1.0, -1.0),
                strength: 8.0,
                softening: 0.5,
            }),
        ];
        let names = [
            "state",
            "mass",
            "forces[1].stiffness",
            "forces[0].acceleration",
            "forces[3].centre",
        ];
        let steps = 30;
        let mut sim = Simulation::reference(&crowd).unwrap();
        sim.start_tangents(&names).unwrap();
        // Two calls, so that the columns are carried from one to the next.
        sim.step(12).unwrap();
        sim.step(steps - 12).unwrap();
        let plan = sim.tangent_plan().unwrap().clone();
        let k = plan.width();
        let mut jacobians = vec![0.0; 3 * STATE_COMPONENTS * k];
        for name in names {
            let columns = plan.columns(name).unwrap();
            let mut read = vec![0.0; 3 * STATE_COMPONENTS * columns.len()];
            sim.read_tangents(name, &mut read).unwrap();
            for (row, values) in read.chunks(columns.len()).enumerate() {
                jacobians[row * k + columns.start..row * k + columns.end].copy_from_slice(values);
            }
        }
        let column = |body: usize, c: usize| -> Vec<f64> {
            (0..STATE_COMPONENTS)
                .map(|r| jacobians[(body * STATE_COMPONENTS + r) * k + c])
                .collect()
        };
        let ends = |crowd: &Crowd| -> Vec<Vec<f64>> {
            let mut sim = Simulation::reference(crowd).unwrap();
            sim.step(steps).unwrap();
            let bodies = sim.bodies().unwrap();
            bodies
                .iter()
                .map(|b| State::from(&b.state).to_scalars())
                .collect()
        };
        // Each checked column and how to nudge the crowd along it (the state and the mass of
        // one body; a force's number, which moves every body it acts on).
        type Nudge = Box<dyn Fn(&mut Crowd, usize, f64)>;
        let mut columns: Vec<(usize, bool, Nudge)> = Vec::new();
        // q too, normalized after the nudge as a scene or set_states would.
        for c in 0..STATE_COMPONENTS {
            let nudge = move |crowd: &mut Crowd, body: usize, h: f64| {
                let mut y = State::from(&crowd.bodies[body].state).to_scalars();
                y[c] += h;
                let mut state: BodyState = State::from_scalars(&mut y.into_iter()).into();
                if (3..7).contains(&c) {
                    // As a scene or set_states would give it.
                    state.orientation = state.orientation.normalize();
                }
                crowd.bodies[body].state = state;
            };
            columns.push((c, true, Box::new(nudge)));
        }
        columns.push((
            13,
            true,
            Box::new(|crowd: &mut Crowd, body: usize, h: f64| {
                let m = crowd.bodies[body].mass;
                crowd.bodies[body].mass =
                    MassProperties::new(m.mass() + h, m.inertia_body(), "mass").unwrap();
            }),
        ));
        columns.push((
            14,
            false,
            Box::new(|crowd: &mut Crowd, _, h: f64| {
                if let ForceKind::Spring { stiffness, .. } = &mut crowd.forces[1].kind {
                    *stiffness += h;
                }
            }),
        ));
        for component in 0..3 {
            columns.push((
                15 + component,
                false,
                Box::new(move |crowd: &mut Crowd, _, h: f64| {
                    if let ForceKind::Gravity { acceleration } = &mut crowd.forces[0].kind {
                        acceleration[component] += h;
                    }
                }),
            ));
            columns.push((
                18 + component,
                false,
                Box::new(move |crowd: &mut Crowd, _, h: f64| {
                    if let ForceKind::Attractor { centre, .. } = &mut crowd.forces[3].kind {
                        centre[component] += h;
                    }
                }),
            ));
        }
        let h = 1e-4;
        let mut worst: f64 = 0.0;
        for (c, per_body, nudge) in &columns {
            let central = |h: f64, body: usize| -> Vec<Vec<f64>> {
                let (mut plus, mut minus) = (crowd.clone(), crowd.clone());
                nudge(&mut plus, body, h);
                nudge(&mut minus, body, -h);
                let (p, m) = (ends(&plus), ends(&minus));
                p.iter()
                    .zip(&m)
                    .map(|(p, m)| p.iter().zip(m).map(|(p, m)| (p - m) / (2.0 * h)).collect())
                    .collect()
            };
            for body in 0..3 {
                let nudged = if *per_body { body } else { 0 };
                let (coarse, fine) = (central(h, nudged), central(h / 2.0, nudged));
                let expected: Vec<f64> = (coarse[body].iter().zip(&fine[body]))
                    .map(|(c, f)| (4.0 * f - c) / 3.0)
                    .collect();
                let got = column(body, *c);
                let scale = expected.iter().fold(1e-300_f64, |m, e| m.max(e.abs()));
                for r in 0..STATE_COMPONENTS {
                    let error = (got[r] - expected[r]).abs() / scale;
                    worst = crate::verify::compare::largest(worst, error);
                    assert!(
                        error <= 1e-8 || (got[r] == 0.0 && expected[r].abs() < 1e-12),
                        "body {body}, column {c}, row {r}: {:e} against {:e}",
                        got[r],
                        expected[r]
                    );
                }
            }
        }
        // Carrying tangents leaves the states' bits as they are.
        let mut plain = Simulation::reference(&crowd).unwrap();
        plain.step(steps).unwrap();
        assert_eq!(plain.bodies().unwrap(), sim.bodies().unwrap());
        // The orientation columns are those of the normalized input: along q itself, zero.
        for body in 0..3 {
            let q = State::from(&crowd.bodies[body].state).to_scalars();
            for r in 0..STATE_COMPONENTS {
                let along_q: f64 = (0..4).map(|c| column(body, 3 + c)[r] * q[3 + c]).sum();
                assert!(along_q.abs() < 1e-13, "body {body}, row {r}: {along_q:e}");
            }
        }
        // The spring acts on body 1 alone: the other bodies' stiffness column is zero.
        assert!(column(0, 14).iter().all(|&t| t == 0.0));
        assert!(column(1, 14).iter().any(|&t| t != 0.0));
        println!("crowd tangents: worst {worst:.1e} of their column");
    }
}
