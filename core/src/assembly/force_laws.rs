//! Force laws registered under names: the kinds a scene may name besides the built-in ones.
//! A registered law is read, checked and differentiated as a built-in kind is, from its
//! declaration ([`ForceLaw::parameters`]).

use std::sync::LazyLock;

use crate::model::codes::Coded;
use crate::model::error::{Error, Result};
use crate::model::force::ForceType;
use crate::physics::custom_force::CustomForce;
use crate::physics::force_law::ForceLaw;

/// The force laws a scene may name, each under its name.
#[derive(Clone, Debug)]
pub struct ForceLaws {
    /// Each law, with the fields a scene's entry of it has: `body`, then its numbers.
    laws: Vec<(CustomForce, &'static [&'static str])>,
    /// Every name a scene's force `type` may give: the built-in kinds', then the laws'
    /// (what an unknown kind's message lists).
    names: &'static [&'static str],
}

impl Default for ForceLaws {
    fn default() -> Self {
        Self::new()
    }
}

impl ForceLaws {
    /// No laws: a scene names the built-in kinds alone.
    pub fn new() -> Self {
        Self {
            laws: Vec::new(),
            names: built_in_names(),
        }
    }

    /// These laws and `law` under `name`; an error (one line) where `name` is a built-in
    /// kind's or a registered law's, or the law's declaration cannot be a force kind's.
    pub fn with(mut self, name: &'static str, law: impl ForceLaw) -> Result<Self> {
        if self.names.contains(&name) || name == ForceType::Law.name() {
            return Err(Error::invalid(
                "force law",
                format!("{name:?} already names a force kind"),
            ));
        }
        let law = CustomForce::from_named_law(name, law)?;
        let declared = law.law_declaration().expect("a named law").parameters;
        let fields = std::iter::once("body").chain(declared.iter().map(|p| p.name));
        // A few bytes per registration, for messages that list every kind and field, as
        // serde's take them.
        let leak = |list: Vec<&'static str>| -> &'static [&'static str] {
            Box::leak(list.into_boxed_slice())
        };
        self.laws.push((law, leak(fields.collect())));
        self.names = leak(self.names.iter().copied().chain([name]).collect());
        Ok(self)
    }

    /// The law registered under `name`, as the crowd's custom force that runs it.
    pub fn get(&self, name: &str) -> Option<&CustomForce> {
        self.entry(name).map(|(law, _)| law)
    }

    /// The law registered under `name` and the fields a scene's entry of it has: `body`,
    /// then its numbers in the order declared.
    pub(crate) fn entry(&self, name: &str) -> Option<(&CustomForce, &'static [&'static str])> {
        (self.laws.iter())
            .find(|(law, _)| law.law_declaration().is_some_and(|d| d.name == name))
            .map(|(law, fields)| (law, *fields))
    }

    /// Every name a scene's force `type` may give, built-in kinds first.
    pub fn names(&self) -> &'static [&'static str] {
        self.names
    }
}

/// The built-in kinds' scene names, in the order the docs list them.
pub(crate) fn built_in_names() -> &'static [&'static str] {
    static NAMES: LazyLock<Vec<&'static str>> =
        LazyLock::new(|| ForceType::LISTED.iter().map(|kind| kind.name()).collect());
    &NAMES
}
