//! A number that records the operations applied to it and prints them as WGSL: the physics,
//! run on [`Traced`] inputs, writes the body of the kernel function that computes the same
//! thing on the GPU, operation for operation.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Add, Div, Mul, Neg, Sub};

use super::scalar::{Carried, FirstSweep, Scalar};

/// A value of the function being traced, in the precision of `F` (`f32` or `f64`): a WGSL
/// `let` or a literal.
pub struct Traced<F> {
    node: Node,
    precision: PhantomData<F>,
}

/// The outcome of a traced comparison: a WGSL `let` of type `bool`.
#[derive(Clone, Copy, Debug)]
pub struct TracedBool(u32);

impl TracedBool {
    /// A condition read from WGSL `expression` (a comparison of the kernel's own values).
    pub fn input(expression: &str) -> Self {
        TracedBool(bind(expression.to_string(), 'b'))
    }
}

impl fmt::Display for TracedBool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "b{}", self.0)
    }
}

#[derive(Clone, Copy, Debug)]
enum Node {
    /// `let v{n}`.
    Var(u32),
    /// A constant, already rounded to the precision.
    Literal(f64),
}

impl<F> Clone for Traced<F> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<F> Copy for Traced<F> {}

impl<F> fmt::Debug for Traced<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

/// The WGSL expression of the value: its `let`'s name or the literal. A literal prints
/// its shortest round-trip decimal, which WGSL reads as that exact f64 before converting it
/// to `real`: an f32 constant is an f64 exactly, so the conversion does not round.
impl<F> fmt::Display for Traced<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.node {
            Node::Var(n) => write!(f, "v{n}"),
            Node::Literal(value) => write!(f, "real({value:e})"),
        }
    }
}

/// The statements of the function being traced.
#[derive(Default)]
struct Tape {
    lines: Vec<String>,
    next: u32,
    /// How many blocks (`if`, `for`) the next statement is inside.
    depth: usize,
}

impl Tape {
    fn push(&mut self, statement: &str) {
        let indent = "    ".repeat(self.depth + 1);
        self.lines.push(format!("{indent}{statement}\n"));
    }
}

fn with_tape<T>(f: impl FnOnce(&mut Tape) -> T) -> T {
    TAPE.with(|tape| {
        let mut tape = tape.borrow_mut();
        f(tape
            .as_mut()
            .expect("a traced value is used outside `trace_function`"))
    })
}

thread_local! {
    static TAPE: RefCell<Option<Tape>> = const { RefCell::new(None) };
    static F32_DIVISIONS_IN_F64: Cell<bool> = const { Cell::new(false) };
}

/// Runs `generate` with the f32 traces it prints taking each division and square root in
/// f64 and rounding the result to f32, when `in_f64` is set. Rounding through f64's 53 bits
/// gives the correctly rounded f32 quotient and root (twice 24 bits and 2 fit in 53), so a
/// driver whose f64 `/` and `sqrt` are exact and whose f32 ones are not (NVIDIA's, measured
/// in BENCHMARKS.md) computes the CPU's f32 bits. f64 traces are unchanged.
pub fn f32_divisions_in_f64<T>(in_f64: bool, generate: impl FnOnce() -> T) -> T {
    with_setting(&F32_DIVISIONS_IN_F64, in_f64, generate)
}

/// Runs `generate` with the trace setting `setting` at `value`, then restores it.
pub(crate) fn with_setting<S: Copy, T>(
    setting: &'static std::thread::LocalKey<Cell<S>>,
    value: S,
    generate: impl FnOnce() -> T,
) -> T {
    let previous = setting.with(|s| s.replace(value));
    let generated = generate();
    setting.with(|s| s.set(previous));
    generated
}

/// `operation` applied to the WGSL `operands`, through f64 when an f32 trace asks for it
/// ([`f32_divisions_in_f64`]).
fn rounded<F: Scalar>(operands: &[String], operation: impl Fn(&[String]) -> String) -> String {
    if !F::IS_F64 && F32_DIVISIONS_IN_F64.with(Cell::get) {
        let wide: Vec<String> = operands.iter().map(|x| format!("f64({x})")).collect();
        format!("f32({})", operation(&wide))
    } else {
        operation(operands)
    }
}

/// Binds `expression` to a new `let` of the traced function; returns its number.
fn bind(expression: String, prefix: char) -> u32 {
    declare("let", expression, prefix)
}

/// Declares `keyword` (`let` or `var`) `{prefix}{n} = expression`; returns `n`.
#[inline(never)]
fn declare(keyword: &str, expression: String, prefix: char) -> u32 {
    with_tape(|tape| {
        let n = tape.next;
        tape.next += 1;
        tape.push(&format!("{keyword} {prefix}{n} = {expression};"));
        n
    })
}

/// A WGSL `var` for each of `values`, holding them: what a block assigns its results to.
fn variables<F>(values: Vec<Traced<F>>) -> Vec<Traced<F>> {
    values
        .into_iter()
        .map(|value| Traced::var(declare("var", value.to_string(), 'v')))
        .collect()
}

/// Assigns `results` to `variables`, each result first bound to a `let`, so that no
/// assignment reads a variable an earlier one of them changed.
fn assign<F>(variables: &[Traced<F>], results: Vec<Traced<F>>) {
    let fixed: Vec<Traced<F>> = results
        .into_iter()
        .map(|r| match r.node {
            Node::Var(_) => Traced::var(bind(r.to_string(), 'v')),
            Node::Literal(_) => r,
        })
        .collect();
    with_tape(|tape| {
        for (variable, result) in variables.iter().zip(fixed) {
            tape.push(&format!("{variable} = {result};"));
        }
    });
}

/// Runs `body` inside the WGSL block that `opening` opens (`if b3 {`, say), the values it
/// carries in and out held in `var`s declared before the block.
fn block<F, V: Carried<Traced<F>>>(opening: String, value: V, body: impl FnOnce(V) -> V) -> V {
    let held = block_of_scalars(opening, value.to_scalars(), |held| {
        body(V::from_scalars(&mut held.iter().copied())).to_scalars()
    });
    V::from_scalars(&mut held.into_iter())
}

/// [`block`] over the scalars themselves: `body` reads the `var`s holding `values` and hands
/// out what they hold after the block, in the same order.
fn block_of_scalars<F>(
    opening: String,
    values: Vec<Traced<F>>,
    body: impl FnOnce(&[Traced<F>]) -> Vec<Traced<F>>,
) -> Vec<Traced<F>> {
    let held = variables(values);
    with_tape(|tape| {
        tape.push(&opening);
        tape.depth += 1;
    });
    let result = body(&held);
    assign(&held, result);
    with_tape(|tape| {
        tape.depth -= 1;
        tape.push("}");
    });
    held
}

/// A new loop counter's number.
fn counter() -> u32 {
    with_tape(|tape| {
        tape.next += 1;
        tape.next - 1
    })
}

impl<F> Traced<F> {
    /// A value read from WGSL `expression` (a parameter's field, say).
    pub fn input(expression: &str) -> Self {
        Self::var(bind(expression.to_string(), 'v'))
    }

    fn var(n: u32) -> Self {
        Self {
            node: Node::Var(n),
            precision: PhantomData,
        }
    }
}

/// Binds a WGSL expression of another type (a struct returned by a call) to a new `let`,
/// and returns the `let`'s name, whose fields [`Traced::input`] then reads.
pub fn bind_value(expression: String) -> String {
    format!("c{}", bind(expression, 'c'))
}

/// The WGSL function `signature { <traced statements> <tail> }`, where `body` runs the
/// physics on traced inputs and returns the statements that hand its results out.
pub fn trace_function(signature: &str, body: impl FnOnce() -> String) -> String {
    TAPE.with(|tape| {
        let previous = tape.borrow_mut().replace(Tape::default());
        assert!(previous.is_none(), "traces do not nest");
    });
    let tail = body();
    let tape = TAPE
        .with(|tape| tape.borrow_mut().take())
        .expect("the tape is set");
    format!("{signature} {{\n{}{tail}}}\n", tape.lines.concat())
}

// Every traced operation is a call, never inlined: the physics inlines its own functions
// (the lanes need that), and a trace that inlined each operation's `format!` as well made
// the kernel generators megabytes of machine code, most of a release build's time.
macro_rules! binary {
    ($trait:ident, $method:ident, $op:literal) => {
        impl<F: Scalar> $trait for Traced<F> {
            type Output = Self;
            #[inline(never)]
            fn $method(self, o: Self) -> Self {
                Self::var(bind(format!(concat!("{} ", $op, " {}"), self, o), 'v'))
            }
        }
    };
}
binary!(Add, add, "+");
binary!(Sub, sub, "-");
binary!(Mul, mul, "*");

impl<F: Scalar> Div for Traced<F> {
    type Output = Self;
    #[inline(never)]
    fn div(self, o: Self) -> Self {
        let quotient = rounded::<F>(&[self.to_string(), o.to_string()], |x| {
            format!("{} / {}", x[0], x[1])
        });
        Self::var(bind(quotient, 'v'))
    }
}

impl<F: Scalar> Neg for Traced<F> {
    type Output = Self;
    #[inline(never)]
    fn neg(self) -> Self {
        Self::var(bind(format!("-{self}"), 'v'))
    }
}

/// `F` is the precision the trace is printed for: its constants are rounded as `F` rounds
/// them, and the physics picks `F`'s series.
impl<F: Scalar + Into<f64>> Scalar for Traced<F> {
    type Bool = TracedBool;
    const IS_F64: bool = F::IS_F64;

    fn constant(value: f64) -> Self {
        Self {
            node: Node::Literal(F::constant(value).into()),
            precision: PhantomData,
        }
    }
    const HOLDS_LITERALS: bool = true;
    fn is_zero_by_construction(self) -> bool {
        matches!(self.node, Node::Literal(v) if v == 0.0)
    }
    #[inline(never)]
    fn sqrt(self) -> Self {
        let root = rounded::<F>(&[self.to_string()], |x| format!("sqrt({})", x[0]));
        Self::var(bind(root, 'v'))
    }
    #[inline(never)]
    fn floor(self) -> Self {
        Self::var(bind(format!("floor({self})"), 'v'))
    }
    #[inline(never)]
    fn less(self, other: Self) -> TracedBool {
        TracedBool(bind(format!("{self} < {other}"), 'b'))
    }
    #[inline(never)]
    fn equals(self, other: Self) -> TracedBool {
        TracedBool(bind(format!("{self} == {other}"), 'b'))
    }
    #[inline(never)]
    fn select(condition: TracedBool, if_true: Self, if_false: Self) -> Self {
        Self::var(bind(
            format!("select({if_false}, {if_true}, b{})", condition.0),
            'v',
        ))
    }
    #[inline(never)]
    fn not(condition: TracedBool) -> TracedBool {
        TracedBool(bind(format!("!b{}", condition.0), 'b'))
    }
    /// `if b { ... }`, the values it changes held in `var`s.
    fn if_then<V: Carried<Self>>(condition: TracedBool, value: V, then: impl FnOnce(V) -> V) -> V {
        block(format!("if b{} {{", condition.0), value, then)
    }
    /// `for (var i = 0u; i < times; i++) { ... }`, the values it changes held in `var`s.
    fn repeat<V: Carried<Self>>(times: u32, value: V, body: impl FnMut(V) -> V) -> V {
        let i = counter();
        block(
            format!("for (var i{i} = 0u; i{i} < {times}u; i{i}++) {{"),
            value,
            body,
        )
    }
    /// One loop of `sweeps` times the points' count turns over one point's code, not the
    /// points unrolled into a sweep: the points wait in a queue of `var`s, each turn takes
    /// the front one and puts it back last, so after whole sweeps they stand in order again.
    /// A constant that every point holds as the same literal stays that literal.
    fn sweep_points<S, C, A>(
        sweeps: u32,
        shared: S,
        constants: &[C],
        accumulated: &mut [A],
        mut turn: impl FnMut(S, &C, A, FirstSweep<TracedBool>) -> (S, A),
    ) -> S
    where
        S: Carried<Self>,
        C: Carried<Self> + Copy,
        A: Carried<Self> + Copy,
    {
        let count = constants.len();
        assert!(
            count > 0 && count == accumulated.len(),
            "one constant per point"
        );
        let point_constants: Vec<Vec<Self>> = constants.iter().map(C::to_scalars).collect();
        let literal = |j: usize| match point_constants[0][j].node {
            Node::Literal(value) => point_constants.iter().all(
                |point| matches!(point[j].node, Node::Literal(v) if v.to_bits() == value.to_bits()),
            ),
            Node::Var(_) => false,
        };
        let kept: Vec<bool> = (0..point_constants[0].len()).map(literal).collect();
        let mut queue = shared.to_scalars();
        let shared_numbers = queue.len();
        for (constant, point) in point_constants.iter().zip(accumulated.iter()) {
            let varying = constant.iter().zip(&kept).filter(|(_, kept)| !**kept);
            queue.extend(varying.map(|(&x, _)| x));
            queue.extend(point.to_scalars());
        }
        let point_numbers = (queue.len() - shared_numbers) / count;
        let varying_numbers = kept.iter().filter(|&&kept| !kept).count();
        let i = counter();
        let turns = sweeps * count as u32;
        let held = block_of_scalars(
            format!("for (var i{i} = 0u; i{i} < {turns}u; i{i}++) {{"),
            queue,
            |held| {
                let (shared, points) = held.split_at(shared_numbers);
                let (front, others) = points.split_at(point_numbers);
                let mut varying = front[..varying_numbers].iter().copied();
                let literals = point_constants[0].iter().zip(&kept);
                let constant: Vec<Self> = literals
                    .map(|(&x, &kept)| match kept {
                        true => x,
                        false => varying.next().expect("a var per varying constant"),
                    })
                    .collect();
                let constant = C::from_scalars(&mut constant.into_iter());
                let point = A::from_scalars(&mut front[varying_numbers..].iter().copied());
                let shared = S::from_scalars(&mut shared.iter().copied());
                let first = TracedBool::input(&format!("i{i} < {count}u"));
                let (shared, point) = turn(shared, &constant, point, FirstSweep::AtRunTime(first));
                let mut next = shared.to_scalars();
                next.extend_from_slice(others);
                next.extend_from_slice(&front[..varying_numbers]);
                next.extend(point.to_scalars());
                next
            },
        );
        let (shared, points) = held.split_at(shared_numbers);
        for (k, out) in accumulated.iter_mut().enumerate() {
            let point = &points[k * point_numbers + varying_numbers..(k + 1) * point_numbers];
            *out = A::from_scalars(&mut point.iter().copied());
        }
        S::from_scalars(&mut shared.iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_prints_each_operation_as_a_let_in_order() {
        let source = trace_function("fn f(a: real) -> real", || {
            let a = Traced::<f32>::input("a");
            let b = a * Traced::constant(0.1) + a;
            let c = Traced::select(b.less(a), -b, b.sqrt());
            format!("    return {c};\n")
        });
        assert_eq!(
            source,
            "fn f(a: real) -> real {
    let v0 = a;
    let v1 = v0 * real(1.0000000149011612e-1);
    let v2 = v1 + v0;
    let b3 = v2 < v0;
    let v4 = -v2;
    let v5 = sqrt(v2);
    let v6 = select(v5, v4, b3);
    return v6;
}
"
        );
    }

    /// Under `f32_divisions_in_f64` an f32 trace takes `/` and `sqrt` in f64 and rounds back;
    /// its other operations, and every f64 trace, print as before.
    #[test]
    fn f32_divisions_in_f64_widen_only_division_and_square_root() {
        let body = |a: Traced<f32>| {
            let b = a / (a * a + Traced::constant(0.5));
            format!("    return {};\n", b.sqrt())
        };
        let f32_trace = |in_f64| {
            f32_divisions_in_f64(in_f64, || {
                trace_function("fn f(a: real) -> real", || body(Traced::input("a")))
            })
        };
        assert_eq!(
            f32_trace(true),
            "fn f(a: real) -> real {
    let v0 = a;
    let v1 = v0 * v0;
    let v2 = v1 + real(5e-1);
    let v3 = f32(f64(v0) / f64(v2));
    let v4 = f32(sqrt(f64(v3)));
    return v4;
}
"
        );
        let native = f32_trace(false);
        assert!(native.contains("let v3 = v0 / v2;") && native.contains("let v4 = sqrt(v3);"));
        let f64_trace = f32_divisions_in_f64(true, || {
            trace_function("fn f(a: real) -> real", || {
                let a = Traced::<f64>::input("a");
                format!("    return {};\n", (a / a).sqrt())
            })
        });
        assert!(!f64_trace.contains("f64("), "{f64_trace}");
        // The setting is scoped: a later trace is native again.
        assert_eq!(f32_trace(false), native);
    }

    /// `sweep_points` prints one loop over one point's code, the points in a queue of `var`s
    /// that turns by one each iteration; a constant every point holds as the same literal
    /// stays that literal, and the first sweep is the loop's first turns. On `f64`, nested
    /// loops compute what the queue does.
    #[test]
    fn sweeps_over_points_print_one_loop_over_a_turning_queue() {
        fn relax<R: Scalar>(start: R, weights: [R; 2], nudges: &mut [R; 2]) -> R {
            let constants = [
                (weights[0], R::constant(2.0)),
                (weights[1], R::constant(2.0)),
            ];
            R::sweep_points(
                2,
                start,
                &constants,
                nudges,
                |s, &(w, two), nudge, first| {
                    let nudge = first.then::<R, _>(nudge, |nudge| nudge + w);
                    let s = s * w + nudge;
                    (s, nudge + s * two)
                },
            )
        }
        let mut nudges = [1.0, -1.0];
        let end = relax(0.5_f64, [3.0, 0.25], &mut nudges);
        // By hand: turns (w, nudge) = (3, 1 + 3), (0.25, -1 + 0.25) (the first sweep adds the
        // weight to the nudge), then again with the new nudges.
        let s1 = 0.5 * 3.0 + 4.0;
        let n0 = 4.0 + s1 * 2.0;
        let s2 = s1 * 0.25 - 0.75;
        let n1 = -0.75 + s2 * 2.0;
        let s3 = s2 * 3.0 + n0;
        let s4 = s3 * 0.25 + n1;
        assert_eq!((end, nudges), (s4, [n0 + s3 * 2.0, n1 + s4 * 2.0]));
        let source = trace_function("fn f(a: real, b: real) -> real", || {
            let a = Traced::<f64>::input("a");
            let b = Traced::<f64>::input("b");
            let mut nudges = [Traced::constant(0.0), b];
            let end = relax(a, [a, b], &mut nudges);
            format!("    return {end} + {} + {};\n", nudges[0], nudges[1])
        });
        assert_eq!(
            source,
            "fn f(a: real, b: real) -> real {
    let v0 = a;
    let v1 = b;
    var v3 = v0;
    var v4 = v0;
    var v5 = real(0e0);
    var v6 = v1;
    var v7 = v1;
    for (var i2 = 0u; i2 < 4u; i2++) {
        let b8 = i2 < 2u;
        var v9 = v5;
        if b8 {
            let v10 = v9 + v4;
            let v11 = v10;
            v9 = v11;
        }
        let v12 = v3 * v4;
        let v13 = v12 + v9;
        let v14 = v13 * real(2e0);
        let v15 = v9 + v14;
        let v16 = v13;
        let v17 = v6;
        let v18 = v7;
        let v19 = v4;
        let v20 = v15;
        v3 = v16;
        v4 = v17;
        v5 = v18;
        v6 = v19;
        v7 = v20;
    }
    return v3 + v5 + v7;
}
"
        );
    }

    /// `if_then` and `repeat` print a block whose results go to `var`s declared before it;
    /// on `f64` the same code branches and loops in Rust.
    #[test]
    fn branches_and_loops_print_as_blocks_over_vars() {
        fn halve_while_large<R: Scalar>(a: R) -> R {
            R::repeat(3, a, |x| {
                R::if_then(R::constant(1.0).less(x), x, |x| x * R::constant(0.5))
            })
        }
        assert_eq!(halve_while_large(5.0_f64), 0.625);
        assert_eq!(halve_while_large(0.5_f64), 0.5);
        let source = trace_function("fn f(a: real) -> real", || {
            format!(
                "    return {};\n",
                halve_while_large(Traced::<f64>::input("a"))
            )
        });
        assert_eq!(
            source,
            "fn f(a: real) -> real {
    let v0 = a;
    var v2 = v0;
    for (var i1 = 0u; i1 < 3u; i1++) {
        let b3 = real(1e0) < v2;
        var v4 = v2;
        if b3 {
            let v5 = v4 * real(5e-1);
            let v6 = v5;
            v4 = v6;
        }
        let v7 = v4;
        v2 = v7;
    }
    return v2;
}
"
        );
    }
}
