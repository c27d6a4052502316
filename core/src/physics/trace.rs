//! The tracer: the physics, run on [`Traced`] numbers, records each operation it applies into
//! a [`Trace`], a value that owns them (statements in order, each value named by its index),
//! and printing the WGSL function that computes the same thing is the last pass over it. No
//! state is kept per thread: each traced number holds the trace it belongs to, and a literal,
//! which belongs to none, stays a literal: an operation on literals alone is folded, computed
//! in the trace's precision (IEEE's correctly rounded `+ - * /` and `sqrt`, what the GPU and
//! the CPU compute from the same operands).

use std::cell::{Cell, RefCell};
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Add, Div, Mul, Neg, Sub};

use super::scalar::{Carried, FirstSweep, Scalar, sweep_in_turn};

/// How the traces a kernel's generators start print: the one setting they take.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Tracer {
    /// Whether f32 traces take each division and square root in f64 and round the result to
    /// f32. Rounding through f64's 53 bits gives the correctly rounded f32 quotient and root
    /// (twice 24 bits and 2 fit in 53), so a driver whose f64 `/` and `sqrt` are exact and
    /// whose f32 ones are not (NVIDIA's, measured in BENCHMARKS.md) computes the CPU's f32
    /// bits. f64 traces are unchanged.
    pub f32_divisions_in_f64: bool,
}

impl Tracer {
    /// Divisions and square roots in the trace's own precision.
    pub const NATIVE: Self = Self {
        f32_divisions_in_f64: false,
    };

    /// The WGSL function `signature { <traced statements> <tail> }`, where `body` runs the
    /// physics on inputs of a new trace and returns the statements that hand its results out.
    pub fn function(self, signature: &str, body: impl FnOnce(&Trace) -> Wgsl) -> String {
        self.counted_function(signature, body).0
    }

    /// [`Tracer::function`], and the size of its trace.
    pub fn counted_function(
        self,
        signature: &str,
        body: impl FnOnce(&Trace) -> Wgsl,
    ) -> (String, TraceSize) {
        let (trace, tail) = self.trace(body);
        let text = format!("{signature} {{\n{}{tail}}}\n", trace.print());
        (text, trace.size())
    }

    /// The size of what `body` records in a new trace, read off the IR without printing it.
    pub fn size(self, body: impl FnOnce(&Trace) -> Wgsl) -> TraceSize {
        self.trace(body).0.size()
    }

    /// A new trace with what `body` records in it, and the tail `body` returns.
    fn trace(self, body: impl FnOnce(&Trace) -> Wgsl) -> (Trace, Wgsl) {
        let trace = Trace {
            statements: RefCell::new(Vec::new()),
            names: Cell::new(0),
            f32_divisions_in_f64: self.f32_divisions_in_f64,
        };
        let tail = body(&trace);
        let tail = trace.share_common_subexpressions(tail);
        trace.remove_dead_code(&tail);
        (trace, tail)
    }
}

/// A traced function's size, read off its IR once the passes have run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TraceSize {
    /// The statements recorded: one line of the printed function each.
    pub statements: usize,
    /// The arithmetic along the longest path: each `+ - * /`, negation, square root, floor,
    /// comparison, select and `!`, a loop's body as often as it runs and an `if`'s body as
    /// if taken. A division or root taken through f64 counts one.
    pub arithmetic: u64,
    /// The calls into the kernel's plumbing whose results are bound ([`Trace::bind_value`])
    /// along the same path, counted the same way.
    pub calls: u64,
}

/// The operations of one traced function, recorded in order: the IR the WGSL is printed from.
pub struct Trace {
    statements: RefCell<Vec<Statement>>,
    /// The next name's number: values, conditions, structs and loop counters share them.
    names: Cell<u32>,
    f32_divisions_in_f64: bool,
}

/// A value: a named one of the trace, or a constant already rounded to its precision.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Operand {
    Value(u32),
    Literal(f64),
}

/// What a `let` binds.
#[derive(Clone, Debug)]
enum Expression {
    /// A WGSL expression of the kernel's own: a parameter's field, a call's result (whose
    /// arguments may be values of the trace).
    Input(Wgsl),
    /// The operand itself (a result held apart before a block assigns it).
    Copy(Operand),
    Binary(Operator, Operand, Operand),
    Negate(Operand),
    /// The square root, taken in f64 and rounded to f32 if `widened`.
    SquareRoot(Operand, bool),
    Floor(Operand),
    Less(Operand, Operand),
    Equals(Operand, Operand),
    /// `if_true` where condition `b{n}` holds, else `if_false`.
    Select(u32, Operand, Operand),
    Not(u32),
}

#[derive(Clone, Copy, Debug)]
enum Operator {
    Add,
    Subtract,
    Multiply,
    /// Taken in f64 and rounded to f32 if `widened`.
    Divide {
        widened: bool,
    },
}

#[derive(Clone, Debug)]
enum Statement {
    /// `let {prefix}{n} = expression;`: `v` a value, `b` a condition, `c` a struct.
    Let(char, u32, Expression),
    /// `var v{n} = operand;`
    Var(u32, Operand),
    /// `v{n} = operand;`
    Assign(u32, Operand),
    /// `if b{n} {`
    If(u32),
    /// `for (var i{n} = 0u; i{n} < {times}u; i{n}++) {`
    For { counter: u32, times: u32 },
    /// The end of the innermost `if` or `for`.
    End,
}

/// WGSL text that names values of a trace: an argument's field, a call into the kernel's
/// plumbing, what a function hands back. Its values are operands of the IR, not text, so a
/// pass over the trace sees every use of a value; printing writes their names.
#[derive(Clone, Debug, Default)]
pub struct Wgsl(Vec<Piece>);

#[derive(Clone, Debug)]
enum Piece {
    Text(String),
    Value(Operand),
    /// `b{n}`.
    Condition(u32),
    /// `c{n}`, a struct a call returned.
    Structure(u32),
    /// `i{n}`, a loop's counter.
    Counter(u32),
}

impl Wgsl {
    /// `template` with each `{}` replaced by the next of `arguments`, in order.
    pub fn format<const N: usize>(template: &str, arguments: [Wgsl; N]) -> Self {
        let mut texts = template.split("{}");
        let mut out = Wgsl::from(texts.next().unwrap_or_default());
        let mut arguments = arguments.into_iter();
        for text in texts {
            let argument = arguments.next().expect("an argument for each `{}`");
            out.0.extend(argument.0);
            out.push_text(text);
        }
        assert!(arguments.next().is_none(), "a `{{}}` for each argument");
        out
    }

    /// `items` with `separator` between each two.
    pub fn join(items: impl IntoIterator<Item = Wgsl>, separator: &str) -> Self {
        let mut out = Wgsl::default();
        for (i, item) in items.into_iter().enumerate() {
            if i > 0 {
                out.push_text(separator);
            }
            out.0.extend(item.0);
        }
        out
    }

    /// This, then `more`.
    pub fn then_wgsl(mut self, more: Wgsl) -> Self {
        self.0.extend(more.0);
        self
    }

    /// This, then `text`.
    pub fn then(mut self, text: &str) -> Self {
        self.push_text(text);
        self
    }

    /// `visit` of each name the text reads, which it may change: what renaming and marking
    /// reads both walk.
    fn reads_mut(&mut self, visit: &mut impl FnMut(&mut u32)) {
        for piece in &mut self.0 {
            match piece {
                Piece::Text(_) => {}
                Piece::Value(x) => x.reads_mut(visit),
                Piece::Condition(n) | Piece::Structure(n) | Piece::Counter(n) => visit(n),
            }
        }
    }

    fn push_text(&mut self, text: &str) {
        if !text.is_empty() {
            self.0.push(Piece::Text(text.to_string()));
        }
    }
}

/// [`Wgsl::format`] over arguments of any type that is WGSL: text, a traced value, a
/// condition, WGSL.
#[macro_export]
#[doc(hidden)]
macro_rules! wgsl {
    ($template:literal $(, $argument:expr)* $(,)?) => {
        $crate::physics::trace::Wgsl::format(
            $template,
            [$($crate::physics::trace::Wgsl::from($argument)),*],
        )
    };
}
pub use crate::wgsl;

impl From<&str> for Wgsl {
    fn from(text: &str) -> Self {
        let mut out = Wgsl::default();
        out.push_text(text);
        out
    }
}

impl From<String> for Wgsl {
    fn from(text: String) -> Self {
        Wgsl::from(text.as_str())
    }
}

impl From<&String> for Wgsl {
    fn from(text: &String) -> Self {
        Wgsl::from(text.as_str())
    }
}

impl<F> From<Traced<'_, F>> for Wgsl {
    fn from(value: Traced<'_, F>) -> Self {
        Wgsl(vec![Piece::Value(value.operand)])
    }
}

impl From<TracedBool<'_>> for Wgsl {
    fn from(condition: TracedBool<'_>) -> Self {
        match condition {
            TracedBool::Named(_, n) => Wgsl(vec![Piece::Condition(n)]),
            TracedBool::Literal(value) => Wgsl::from(value.to_string()),
        }
    }
}

impl fmt::Display for Wgsl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for piece in &self.0 {
            match piece {
                Piece::Text(text) => write!(f, "{text}")?,
                Piece::Value(operand) => write!(f, "{operand}")?,
                Piece::Condition(n) => write!(f, "b{n}")?,
                Piece::Structure(n) => write!(f, "c{n}")?,
                Piece::Counter(n) => write!(f, "i{n}")?,
            }
        }
        Ok(())
    }
}

impl Operand {
    /// `visit` of the value the operand names, if any.
    fn reads_mut(&mut self, visit: &mut impl FnMut(&mut u32)) {
        if let Operand::Value(n) = self {
            visit(n);
        }
    }
}

/// What a `let` computes, its operands by name or by their bits: the key under which common
/// subexpressions are found.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Computation(u8, [(bool, u64); 3]);

impl Computation {
    /// `None` for a read of the kernel's own expressions, a copy, or an operation on a `var`.
    fn of(expression: &Expression, is_var: &[bool]) -> Option<Self> {
        let code = |x: &Operand| match *x {
            Operand::Value(n) => (!is_var[n as usize]).then_some((false, u64::from(n))),
            Operand::Literal(value) => Some((true, value.to_bits())),
        };
        let condition = |n: &u32| (!is_var[*n as usize]).then_some((false, u64::from(*n)));
        let none = (false, 0);
        let (tag, operands) = match expression {
            Expression::Input(_) | Expression::Copy(_) => return None,
            Expression::Binary(operator, a, b) => {
                let tag = match operator {
                    Operator::Add => 0,
                    Operator::Subtract => 1,
                    Operator::Multiply => 2,
                    Operator::Divide { widened: false } => 3,
                    Operator::Divide { widened: true } => 4,
                };
                (tag, [code(a)?, code(b)?, none])
            }
            Expression::Negate(x) => (5, [code(x)?, none, none]),
            Expression::SquareRoot(x, false) => (6, [code(x)?, none, none]),
            Expression::SquareRoot(x, true) => (7, [code(x)?, none, none]),
            Expression::Floor(x) => (8, [code(x)?, none, none]),
            Expression::Less(a, b) => (9, [code(a)?, code(b)?, none]),
            Expression::Equals(a, b) => (10, [code(a)?, code(b)?, none]),
            Expression::Select(c, a, b) => (11, [condition(c)?, code(a)?, code(b)?]),
            Expression::Not(c) => (12, [condition(c)?, none, none]),
        };
        Some(Computation(tag, operands))
    }
}

impl Statement {
    /// `visit` of each name the statement reads (not the one it binds or assigns).
    fn reads_mut(&mut self, visit: &mut impl FnMut(&mut u32)) {
        match self {
            Statement::Let(_, _, expression) => expression.reads_mut(visit),
            Statement::Var(_, x) | Statement::Assign(_, x) => x.reads_mut(visit),
            Statement::If(condition) => visit(condition),
            Statement::For { .. } | Statement::End => {}
        }
    }
}

impl Expression {
    /// Whether evaluating the expression is an operation: not a read of the kernel's own
    /// expressions (a parameter's field, a call's result) nor a copy.
    fn is_arithmetic(&self) -> bool {
        !matches!(self, Expression::Input(_) | Expression::Copy(_))
    }

    /// `visit` of each name the expression reads.
    fn reads_mut(&mut self, visit: &mut impl FnMut(&mut u32)) {
        match self {
            Expression::Input(text) => text.reads_mut(visit),
            Expression::Copy(x)
            | Expression::Negate(x)
            | Expression::SquareRoot(x, _)
            | Expression::Floor(x) => x.reads_mut(visit),
            Expression::Binary(_, a, b) | Expression::Less(a, b) | Expression::Equals(a, b) => {
                a.reads_mut(visit);
                b.reads_mut(visit);
            }
            Expression::Select(condition, a, b) => {
                visit(condition);
                a.reads_mut(visit);
                b.reads_mut(visit);
            }
            Expression::Not(condition) => visit(condition),
        }
    }
}

impl fmt::Display for Operand {
    /// A literal prints its shortest round-trip decimal, which WGSL reads as that exact f64
    /// before converting it to `real`: an f32 constant is an f64 exactly, so the conversion
    /// does not round.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Value(n) => write!(f, "v{n}"),
            Operand::Literal(value) => write!(f, "real({value:e})"),
        }
    }
}

/// `x`, through f64 if `widened`.
fn widened(x: Operand, widened: bool) -> String {
    match widened {
        true => format!("f64({x})"),
        false => x.to_string(),
    }
}

impl fmt::Display for Expression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expression::Input(text) => write!(f, "{text}"),
            Expression::Copy(x) => write!(f, "{x}"),
            Expression::Binary(Operator::Divide { widened: true }, a, b) => {
                write!(f, "f32({} / {})", widened(*a, true), widened(*b, true))
            }
            Expression::Binary(operator, a, b) => {
                let symbol = match operator {
                    Operator::Add => "+",
                    Operator::Subtract => "-",
                    Operator::Multiply => "*",
                    Operator::Divide { .. } => "/",
                };
                write!(f, "{a} {symbol} {b}")
            }
            Expression::Negate(x) => write!(f, "-{x}"),
            Expression::SquareRoot(x, true) => write!(f, "f32(sqrt({}))", widened(*x, true)),
            Expression::SquareRoot(x, false) => write!(f, "sqrt({x})"),
            Expression::Floor(x) => write!(f, "floor({x})"),
            Expression::Less(a, b) => write!(f, "{a} < {b}"),
            Expression::Equals(a, b) => write!(f, "{a} == {b}"),
            Expression::Select(condition, if_true, if_false) => {
                write!(f, "select({if_false}, {if_true}, b{condition})")
            }
            Expression::Not(condition) => write!(f, "!b{condition}"),
        }
    }
}

impl Trace {
    /// The function's size: [`TraceSize`].
    fn size(&self) -> TraceSize {
        let statements = self.statements.borrow();
        let mut times = vec![1u64];
        let (mut arithmetic, mut calls) = (0, 0);
        for statement in statements.iter() {
            let repeat = *times.last().expect("the function's own scope");
            match statement {
                Statement::Let('c', ..) => calls += repeat,
                Statement::Let(_, _, expression) if expression.is_arithmetic() => {
                    arithmetic += repeat;
                }
                Statement::If(_) => times.push(repeat),
                Statement::For { times: n, .. } => times.push(repeat * u64::from(*n)),
                Statement::End => {
                    times.pop();
                }
                _ => {}
            }
        }
        TraceSize {
            statements: statements.len(),
            arithmetic,
            calls,
        }
    }

    /// A new name's number.
    fn name(&self) -> u32 {
        let n = self.names.get();
        self.names.set(n + 1);
        n
    }

    fn push(&self, statement: Statement) {
        self.statements.borrow_mut().push(statement);
    }

    /// Binds `expression` to a new `let` named with `prefix`; returns its number.
    fn bind(&self, prefix: char, expression: Expression) -> u32 {
        let n = self.name();
        self.push(Statement::Let(prefix, n, expression));
        n
    }

    /// Binds a WGSL expression of another type (a struct returned by a call) to a new `let`,
    /// and returns the `let`, whose fields [`Traced::input`] then reads.
    pub fn bind_value(&self, expression: Wgsl) -> Wgsl {
        Wgsl(vec![Piece::Structure(
            self.bind('c', Expression::Input(expression)),
        )])
    }

    /// Common subexpressions: a `let` that computes what an earlier one in scope computed
    /// (the same operation on the same operands: values by name, literals by their bits) is
    /// dropped and its readers read the earlier one. An operation on a `var` is left as it
    /// is (an assignment may have changed it in between), as is a read of the kernel's own
    /// expressions (a pointer's target changes). The same IEEE operation on the same
    /// operands gives the same bits, so what the function computes is unchanged. Returns
    /// the tail, reading the kept values.
    fn share_common_subexpressions(&self, tail: Wgsl) -> Wgsl {
        let names = self.names.get() as usize;
        let mut statements = self.statements.borrow_mut();
        let mut is_var = vec![false; names];
        for statement in statements.iter() {
            if let Statement::Var(n, _) = statement {
                is_var[*n as usize] = true;
            }
        }
        let mut renamed: Vec<u32> = (0..names as u32).collect();
        let mut scopes: Vec<std::collections::HashMap<Computation, u32>> = vec![Default::default()];
        let mut kept: Vec<Statement> = Vec::with_capacity(statements.len());
        for mut statement in statements.drain(..) {
            statement.reads_mut(&mut |n| *n = renamed[*n as usize]);
            match &statement {
                Statement::Let(prefix, n, expression) if *prefix != 'c' => {
                    if let Some(computation) = Computation::of(expression, &is_var) {
                        let known = scopes.iter().rev().find_map(|s| s.get(&computation));
                        if let Some(&earlier) = known {
                            renamed[*n as usize] = earlier;
                            continue;
                        }
                        let innermost = scopes.last_mut().expect("a scope");
                        innermost.insert(computation, *n);
                    }
                }
                Statement::If(_) | Statement::For { .. } => scopes.push(Default::default()),
                Statement::End => {
                    scopes.pop();
                }
                _ => {}
            }
            kept.push(statement);
        }
        *statements = kept;
        let mut tail = tail;
        tail.reads_mut(&mut |n| *n = renamed[*n as usize]);
        tail
    }

    /// Dead-code removal, the pass before printing: drops each `let` whose value nothing
    /// reads (no statement after it, no block, not what the function hands back), back to
    /// front, so that what only a dropped `let` read goes too. The rest is kept: `var`s and
    /// their assignments (what a block carries), blocks, and each struct a call into the
    /// plumbing returned (the call may report a fault). Only arithmetic and reads, which
    /// change nothing else, are dropped, so what the function computes is unchanged.
    fn remove_dead_code(&self, tail: &Wgsl) {
        let mut live = vec![false; self.names.get() as usize];
        tail.clone().reads_mut(&mut |n| live[*n as usize] = true);
        let mut statements = self.statements.borrow_mut();
        let mut kept: Vec<Statement> = Vec::with_capacity(statements.len());
        for mut statement in statements.drain(..).rev() {
            if let Statement::Let(prefix, n, _) = &statement
                && *prefix != 'c'
                && !live[*n as usize]
            {
                continue;
            }
            statement.reads_mut(&mut |n| live[*n as usize] = true);
            kept.push(statement);
        }
        kept.reverse();
        *statements = kept;
    }

    /// The last pass: the statements as WGSL, each on its line, indented by its blocks.
    fn print(&self) -> String {
        let mut out = String::new();
        let mut depth = 1;
        for statement in self.statements.borrow().iter() {
            if let Statement::End = statement {
                depth -= 1;
            }
            out += &"    ".repeat(depth);
            out += &match statement {
                Statement::Let(prefix, n, expression) => format!("let {prefix}{n} = {expression};"),
                Statement::Var(n, value) => format!("var v{n} = {value};"),
                Statement::Assign(n, value) => format!("v{n} = {value};"),
                Statement::If(condition) => format!("if b{condition} {{"),
                Statement::For { counter: i, times } => {
                    format!("for (var i{i} = 0u; i{i} < {times}u; i{i}++) {{")
                }
                Statement::End => "}".to_string(),
            };
            out.push('\n');
            if let Statement::If(_) | Statement::For { .. } = statement {
                depth += 1;
            }
        }
        out
    }

    /// A `var` for each of `values`, holding them: what a block assigns its results to.
    fn variables<'t, F>(&'t self, values: Vec<Traced<'t, F>>) -> Vec<Traced<'t, F>> {
        let declare = |value: Traced<'t, F>| {
            let n = self.name();
            self.push(Statement::Var(n, value.operand));
            Traced::value(self, n)
        };
        values.into_iter().map(declare).collect()
    }

    /// Assigns `results` to `variables`, each named result first bound to a `let`, so that
    /// no assignment reads a variable an earlier one of them changed.
    fn assign<F>(&self, variables: &[Traced<'_, F>], results: Vec<Traced<'_, F>>) {
        let fixed: Vec<Operand> = results
            .into_iter()
            .map(|r| match r.operand {
                Operand::Value(_) => Operand::Value(self.bind('v', Expression::Copy(r.operand))),
                Operand::Literal(_) => r.operand,
            })
            .collect();
        for (variable, result) in variables.iter().zip(fixed) {
            let Operand::Value(n) = variable.operand else {
                unreachable!("a block's variables are named")
            };
            self.push(Statement::Assign(n, result));
        }
    }

    /// Runs `body` inside the block that `opening` opens, the values it carries in and out
    /// held in `var`s declared before the block.
    fn block<'t, F, V: Carried<Traced<'t, F>>>(
        &'t self,
        opening: Statement,
        value: V,
        body: impl FnOnce(V) -> V,
    ) -> V {
        let held = self.block_of_scalars(opening, value.to_scalars(), |held| {
            body(V::from_scalars(&mut held.iter().copied())).to_scalars()
        });
        V::from_scalars(&mut held.into_iter())
    }

    /// [`Trace::block`] over the scalars themselves: `body` reads the `var`s holding
    /// `values` and hands out what they hold after the block, in the same order.
    fn block_of_scalars<'t, F>(
        &'t self,
        opening: Statement,
        values: Vec<Traced<'t, F>>,
        body: impl FnOnce(&[Traced<'t, F>]) -> Vec<Traced<'t, F>>,
    ) -> Vec<Traced<'t, F>> {
        let held = self.variables(values);
        self.push(opening);
        let result = body(&held);
        self.assign(&held, result);
        self.push(Statement::End);
        held
    }
}

/// A value of the function being traced, in the precision of `F` (`f32` or `f64`): a value
/// of the trace `'t` or a literal.
pub struct Traced<'t, F> {
    operand: Operand,
    /// The trace the value belongs to; `None` for a literal.
    trace: Option<&'t Trace>,
    precision: PhantomData<F>,
}

impl<F> Clone for Traced<'_, F> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<F> Copy for Traced<'_, F> {}

impl<F> fmt::Debug for Traced<'_, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.operand)
    }
}

impl<'t, F> Traced<'t, F> {
    /// A value read from WGSL `expression` (a parameter's field, say).
    pub fn input(trace: &'t Trace, expression: impl Into<Wgsl>) -> Self {
        Self::value(trace, trace.bind('v', Expression::Input(expression.into())))
    }

    fn value(trace: &'t Trace, n: u32) -> Self {
        Self {
            operand: Operand::Value(n),
            trace: Some(trace),
            precision: PhantomData,
        }
    }

    fn literal(value: f64) -> Self {
        Self {
            operand: Operand::Literal(value),
            trace: None,
            precision: PhantomData,
        }
    }

    /// Whether `other` is this very value: the same value of the trace, or a literal of the
    /// same bits.
    pub fn is(self, other: Self) -> bool {
        match (self.operand, other.operand) {
            (Operand::Value(a), Operand::Value(b)) => a == b,
            (Operand::Literal(a), Operand::Literal(b)) => a.to_bits() == b.to_bits(),
            _ => false,
        }
    }

    /// The trace of the first of `values` that belongs to one.
    fn trace_of(values: impl IntoIterator<Item = Self>) -> Option<&'t Trace> {
        values.into_iter().find_map(|value| value.trace)
    }
}

impl<'t, F: Scalar + Into<f64>> Traced<'t, F> {
    /// The literal's number in its precision.
    fn number(self) -> F {
        match self.operand {
            Operand::Literal(value) => F::constant(value),
            Operand::Value(_) => unreachable!("only literals are folded"),
        }
    }

    /// `operation` of `operands`, recorded in the trace of one of them, or folded
    /// (`fold`) where all are literals.
    fn operation<const N: usize>(
        operands: [Self; N],
        operation: impl FnOnce(&Trace, [Operand; N]) -> Expression,
        fold: impl FnOnce([F; N]) -> F,
    ) -> Self {
        match Self::trace_of(operands) {
            Some(trace) => {
                let expression = operation(trace, operands.map(|x| x.operand));
                Self::value(trace, trace.bind('v', expression))
            }
            None => Self::literal(fold(operands.map(Self::number)).into()),
        }
    }

    /// The comparison `operation`, recorded or folded likewise (on the literals' f64
    /// values, which compare as their numbers in `F` do).
    fn comparison(
        self,
        other: Self,
        operation: fn(Operand, Operand) -> Expression,
        fold: fn(f64, f64) -> bool,
    ) -> TracedBool<'t> {
        match (self.operand, other.operand, Self::trace_of([self, other])) {
            (.., Some(trace)) => TracedBool::named(trace, operation(self.operand, other.operand)),
            (Operand::Literal(a), Operand::Literal(b), None) => TracedBool::Literal(fold(a, b)),
            _ => unreachable!("a named value belongs to a trace"),
        }
    }
}

/// Whether an f32 trace's division or square root is taken in f64 ([`Tracer`]).
fn widens<F: Scalar>(trace: &Trace) -> bool {
    !F::IS_F64 && trace.f32_divisions_in_f64
}

/// The outcome of a traced comparison: a WGSL `let` of type `bool` of trace `'t`, or known.
#[derive(Clone, Copy)]
pub enum TracedBool<'t> {
    Named(&'t Trace, u32),
    Literal(bool),
}

impl fmt::Debug for TracedBool<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", Wgsl::from(*self))
    }
}

impl<'t> TracedBool<'t> {
    /// A condition read from WGSL `expression` (a comparison of the kernel's own values).
    pub fn input(trace: &'t Trace, expression: impl Into<Wgsl>) -> Self {
        Self::named(trace, Expression::Input(expression.into()))
    }

    fn named(trace: &'t Trace, expression: Expression) -> Self {
        TracedBool::Named(trace, trace.bind('b', expression))
    }
}

// Every traced operation is a call, never inlined: the physics inlines its own functions
// (the lanes need that), and a trace that inlined each operation as well made the kernel
// generators megabytes of machine code, most of a release build's time.
macro_rules! binary {
    ($trait:ident, $method:ident, $operator:expr) => {
        impl<F: Scalar + Into<f64>> $trait for Traced<'_, F> {
            type Output = Self;
            #[inline(never)]
            fn $method(self, o: Self) -> Self {
                Self::operation(
                    [self, o],
                    |_, [a, b]| Expression::Binary($operator, a, b),
                    |[a, b]| a.$method(b),
                )
            }
        }
    };
}
binary!(Add, add, Operator::Add);
binary!(Sub, sub, Operator::Subtract);
binary!(Mul, mul, Operator::Multiply);

impl<F: Scalar + Into<f64>> Div for Traced<'_, F> {
    type Output = Self;
    #[inline(never)]
    fn div(self, o: Self) -> Self {
        Self::operation(
            [self, o],
            |trace, [a, b]| {
                let widened = widens::<F>(trace);
                Expression::Binary(Operator::Divide { widened }, a, b)
            },
            |[a, b]| a / b,
        )
    }
}

impl<F: Scalar + Into<f64>> Neg for Traced<'_, F> {
    type Output = Self;
    #[inline(never)]
    fn neg(self) -> Self {
        Self::operation([self], |_, [x]| Expression::Negate(x), |[x]| -x)
    }
}

/// `F` is the precision the trace is printed for: its constants are rounded as `F` rounds
/// them, and the physics picks `F`'s series.
impl<'t, F: Scalar + Into<f64>> Scalar for Traced<'t, F> {
    type Bool = TracedBool<'t>;
    const IS_F64: bool = F::IS_F64;

    fn constant(value: f64) -> Self {
        Self::literal(F::constant(value).into())
    }
    const HOLDS_LITERALS: bool = true;
    fn is_zero_by_construction(self) -> bool {
        matches!(self.operand, Operand::Literal(v) if v == 0.0)
    }
    #[inline(never)]
    fn sqrt(self) -> Self {
        Self::operation(
            [self],
            |trace, [x]| Expression::SquareRoot(x, widens::<F>(trace)),
            |[x]| x.sqrt(),
        )
    }
    #[inline(never)]
    fn floor(self) -> Self {
        Self::operation([self], |_, [x]| Expression::Floor(x), |[x]| x.floor())
    }
    #[inline(never)]
    fn less(self, other: Self) -> TracedBool<'t> {
        self.comparison(other, Expression::Less, |a, b| a < b)
    }
    #[inline(never)]
    fn equals(self, other: Self) -> TracedBool<'t> {
        self.comparison(other, Expression::Equals, |a, b| a == b)
    }
    #[inline(never)]
    fn select(condition: TracedBool<'t>, if_true: Self, if_false: Self) -> Self {
        match condition {
            TracedBool::Named(trace, b) => Self::value(
                trace,
                trace.bind(
                    'v',
                    Expression::Select(b, if_true.operand, if_false.operand),
                ),
            ),
            TracedBool::Literal(true) => if_true,
            TracedBool::Literal(false) => if_false,
        }
    }
    #[inline(never)]
    fn not(condition: TracedBool<'t>) -> TracedBool<'t> {
        match condition {
            TracedBool::Named(trace, b) => TracedBool::named(trace, Expression::Not(b)),
            TracedBool::Literal(value) => TracedBool::Literal(!value),
        }
    }
    /// `if b { ... }`, the values it changes held in `var`s; a known condition runs `then`
    /// or not, as the CPU does.
    fn if_then<V: Carried<Self>>(
        condition: TracedBool<'t>,
        value: V,
        then: impl FnOnce(V) -> V,
    ) -> V {
        match condition {
            TracedBool::Named(trace, b) => trace.block(Statement::If(b), value, then),
            TracedBool::Literal(true) => then(value),
            TracedBool::Literal(false) => value,
        }
    }
    /// `for (var i = 0u; i < times; i++) { ... }`, the values it changes held in `var`s;
    /// over literals alone (no trace to write a loop into), the loop runs here, unrolled.
    fn repeat<V: Carried<Self>>(times: u32, value: V, mut body: impl FnMut(V) -> V) -> V {
        match Self::trace_of(value.to_scalars()) {
            Some(trace) => {
                let counter = trace.name();
                trace.block(Statement::For { counter, times }, value, body)
            }
            None => (0..times).fold(value, |v, _| body(v)),
        }
    }
    /// One loop of `sweeps` times the points' count turns over one point's code, not the
    /// points unrolled into a sweep: the points wait in a queue of `var`s, each turn takes
    /// the front one and puts it back last, so after whole sweeps they stand in order again.
    /// A constant that every point holds as the same literal stays that literal. Over
    /// literals alone, the sweeps run here, as nested loops.
    fn sweep_points<S, C, A>(
        sweeps: u32,
        shared: S,
        constants: &[C],
        accumulated: &mut [A],
        mut turn: impl FnMut(S, &C, A, FirstSweep<TracedBool<'t>>) -> (S, A),
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
        let all = shared
            .to_scalars()
            .into_iter()
            .chain(point_constants.concat());
        let all = all.chain(accumulated.iter().flat_map(A::to_scalars));
        let Some(trace) = Self::trace_of(all) else {
            return sweep_in_turn(sweeps, shared, constants, accumulated, turn);
        };
        let literal = |j: usize| {
            match point_constants[0][j].operand {
            Operand::Literal(value) => point_constants.iter().all(|point| {
                matches!(point[j].operand, Operand::Literal(v) if v.to_bits() == value.to_bits())
            }),
            Operand::Value(_) => false,
        }
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
        let i = trace.name();
        let turns = sweeps * count as u32;
        let opening = Statement::For {
            counter: i,
            times: turns,
        };
        let held = trace.block_of_scalars(opening, queue, |held| {
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
            let counter = Wgsl(vec![Piece::Counter(i)]);
            let first = TracedBool::input(trace, counter.then(&format!(" < {count}u")));
            let (shared, point) = turn(shared, &constant, point, FirstSweep::AtRunTime(first));
            let mut next = shared.to_scalars();
            next.extend_from_slice(others);
            next.extend_from_slice(&front[..varying_numbers]);
            next.extend(point.to_scalars());
            next
        });
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
        let source = Tracer::NATIVE.function("fn f(a: real) -> real", |t| {
            let a = Traced::<f32>::input(t, "a");
            let b = a * Traced::constant(0.1) + a;
            let c = Traced::select(b.less(a), -b, b.sqrt());
            wgsl!("    return {};\n", c)
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
        let body = |a: Traced<'_, f32>| {
            let b = a / (a * a + Traced::constant(0.5));
            wgsl!("    return {};\n", b.sqrt())
        };
        let f32_trace = |f32_divisions_in_f64| {
            let tracer = Tracer {
                f32_divisions_in_f64,
            };
            tracer.function("fn f(a: real) -> real", |t| body(Traced::input(t, "a")))
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
        let tracer = Tracer {
            f32_divisions_in_f64: true,
        };
        let f64_trace = tracer.function("fn f(a: real) -> real", |t| {
            let a = Traced::<f64>::input(t, "a");
            wgsl!("    return {};\n", (a / a).sqrt())
        });
        assert!(!f64_trace.contains("f64("), "{f64_trace}");
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
        let source = Tracer::NATIVE.function("fn f(a: real, b: real) -> real", |t| {
            let a = Traced::<f64>::input(t, "a");
            let b = Traced::<f64>::input(t, "b");
            let mut nudges = [Traced::constant(0.0), b];
            let end = relax(a, [a, b], &mut nudges);
            wgsl!("    return {} + {} + {};\n", end, nudges[0], nudges[1])
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
        let source = Tracer::NATIVE.function("fn f(a: real) -> real", |t| {
            wgsl!(
                "    return {};\n",
                halve_while_large(Traced::<f64>::input(t, "a"))
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
        // Read off the IR: the thirteen statements above (the lines between the signature and
        // the `return`, closing braces included), and along the longest path three turns of
        // the loop, each a comparison and, its `if` taken, a product; the reads of `a` and
        // the copies into `var`s are not arithmetic.
        let size = Tracer::NATIVE.size(|t| {
            wgsl!(
                "    return {};\n",
                halve_while_large(Traced::<f64>::input(t, "a"))
            )
        });
        assert_eq!(
            size,
            TraceSize {
                statements: 13,
                arithmetic: 3 * 2,
                calls: 0,
            }
        );
    }

    /// Operations on literals alone are folded in the trace's precision, as the CPU computes
    /// them: an f32 trace's `1/3` is f32's quotient, its `sqrt(2)` f32's root, each printed
    /// as the literal; a known condition picks a side, runs a branch or not; a loop over
    /// literals alone runs unrolled. Nothing of it reaches the printed function.
    #[test]
    fn operations_on_literals_fold_in_the_traces_precision() {
        let third = Traced::<f32>::constant(1.0) / Traced::constant(3.0);
        assert_eq!(
            Wgsl::from(third).to_string(),
            format!("real({:e})", f64::from(1.0_f32 / 3.0))
        );
        let root = Traced::<f32>::constant(2.0).sqrt();
        assert_eq!(root.number(), 2.0_f32.sqrt());
        assert_eq!(
            (Traced::<f64>::constant(0.1) + Traced::constant(0.2)).number(),
            0.1 + 0.2
        );
        let source = Tracer::NATIVE.function("fn f(a: real) -> real", |t| {
            let a = Traced::<f64>::input(t, "a");
            let two = Traced::constant(1.0) + Traced::constant(1.0);
            let known = two.less(Traced::constant(3.0));
            let picked = Traced::select(Traced::<f64>::not(known), a, two);
            let doubled = Traced::if_then(known, picked, |x| x * two);
            let eight = Traced::repeat(3, Traced::<f64>::constant(1.0), |x| x * two);
            wgsl!("    return {} + {} + {};\n", picked, doubled, eight * a)
        });
        assert_eq!(
            source,
            "fn f(a: real) -> real {
    let v0 = a;
    let v1 = real(8e0) * v0;
    return real(2e0) + real(4e0) + v1;
}
"
        );
    }

    /// The passes before printing: a value nothing reads goes, with what only it read (but
    /// not a struct a call returned); an operation computed again on the same operands is
    /// computed once, where the first is in scope; operands are the same by name, literals by
    /// their bits (`0` and `-0` are two); an operation on a `var` is computed again, as is
    /// one whose first is in a block that has ended.
    #[test]
    fn passes_drop_dead_lets_and_compute_each_operation_once() {
        fn body(t: &Trace) -> Wgsl {
            let a = Traced::<f64>::input(t, "a");
            let b = Traced::<f64>::input(t, "b");
            let _unread = (b * b).sqrt();
            let _call = t.bind_value(wgsl!("g({})", a));
            let zeros = a * Traced::constant(0.0) + a * Traced::constant(-0.0);
            let twice = a * a + a * a;
            let looped = Traced::repeat(2, twice, |x| x * x - x * x + a * a);
            let inner = Traced::if_then(a.less(twice), zeros, |z| z + a / b);
            wgsl!("    return {};\n", looped + inner + a / b)
        }
        let source = Tracer::NATIVE.function("fn f(a: real, b: real) -> real", body);
        assert_eq!(
            source,
            "fn f(a: real, b: real) -> real {
    let v0 = a;
    let v1 = b;
    let c4 = g(v0);
    let v5 = v0 * real(0e0);
    let v6 = v0 * real(-0e0);
    let v7 = v5 + v6;
    let v8 = v0 * v0;
    let v10 = v8 + v8;
    var v12 = v10;
    for (var i11 = 0u; i11 < 2u; i11++) {
        let v13 = v12 * v12;
        let v14 = v12 * v12;
        let v15 = v13 - v14;
        let v17 = v15 + v8;
        let v18 = v17;
        v12 = v18;
    }
    let b19 = v0 < v10;
    var v20 = v7;
    if b19 {
        let v21 = v0 / v1;
        let v22 = v20 + v21;
        let v23 = v22;
        v20 = v23;
    }
    let v24 = v12 + v20;
    let v25 = v0 / v1;
    let v26 = v24 + v25;
    return v26;
}
"
        );
        // Its size, read off the IR after the passes: the 28 lines above between the
        // signature and the `return`; five operations before the loop, four in each of its
        // two turns, the comparison, the two in the `if` and the three after it; one call.
        assert_eq!(
            Tracer::NATIVE.size(body),
            TraceSize {
                statements: 28,
                arithmetic: 5 + 2 * 4 + 1 + 2 + 3,
                calls: 1,
            }
        );
    }

    /// Each trace is its own value: two traced at once on one thread, their operations
    /// interleaved, print as each would alone.
    #[test]
    fn traces_are_values_apart() {
        let mut inner = String::new();
        let outer = Tracer::NATIVE.function("fn f(a: real) -> real", |t| {
            let a = Traced::<f64>::input(t, "a");
            let b = a * a;
            inner = Tracer::NATIVE.function("fn g(x: real) -> real", |u| {
                let x = Traced::<f64>::input(u, "x");
                wgsl!("    return {};\n", x + x)
            });
            wgsl!("    return {};\n", b - a)
        });
        assert_eq!(
            outer,
            "fn f(a: real) -> real {\n    let v0 = a;\n    let v1 = v0 * v0;\n    let v2 = v1 - v0;\n    return v2;\n}\n"
        );
        assert_eq!(
            inner,
            "fn g(x: real) -> real {\n    let v0 = x;\n    let v1 = v0 + v0;\n    return v1;\n}\n"
        );
    }
}
