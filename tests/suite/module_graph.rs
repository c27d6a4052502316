//! The crate's dependencies point one way: this test reads the module graph from `src/` and
//! from the core crate's `core/src/` (the layers below the GPU, whose modules `src/` names as
//! its own: `rigid_crowd_core::` reads as `crate::`) and fails on any cycle, between files and
//! between the folders (layers) of the two. A folder in both (`backends`, `verify`) is one
//! layer, at the place `src/lib.rs` declares it.
//!
//! A file depends on another when its code (test-only code excepted) names a path in it:
//! `crate::a::b`, `super::x`, `self::x`, a child module, or a name re-exported by `pub use`,
//! which is followed to the file that defines it. `lib.rs` and `main.rs`, the crate's facade
//! over every layer, are not nodes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module's path below the crate root, e.g. `["cpu", "lanes"]`; `[]` is `lib.rs`.
type ModulePath = Vec<String>;

struct Module {
    /// The code outside comments and `#[cfg(test)]` items.
    code: String,
    /// Names re-exported by `pub use`, each with the absolute path it names.
    reexports: BTreeMap<String, ModulePath>,
    /// Whether the file is `mod.rs`/`lib.rs` (its children sit below its own path).
    is_folder: bool,
}

struct Crate {
    modules: BTreeMap<ModulePath, Module>,
}

fn source_files(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ readable") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            source_files(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

/// The text with comments removed (line, doc and block comments).
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let c = bytes[i];
        if in_string {
            out.push(c as char);
            if c == b'\\' && i + 1 < bytes.len() {
                out.push(bytes[i + 1] as char);
                i += 2;
                continue;
            }
            in_string = c != b'"';
            i += 1;
        } else if c == b'"' && !(i > 0 && bytes[i - 1] == b'\'') {
            in_string = true;
            out.push('"');
            i += 1;
        } else if text[i..].starts_with("//") {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if text[i..].starts_with("/*") {
            let end = text[i + 2..]
                .find("*/")
                .map_or(bytes.len(), |e| i + 2 + e + 2);
            i = end;
        } else {
            out.push(c as char);
            i += 1;
        }
    }
    out
}

/// Where the next test-only attribute (`#[cfg(test)]`, `#[cfg(all(test, ...))]`) starts and
/// ends in `text`.
fn next_test_attribute(text: &str) -> Option<(usize, usize)> {
    let mut from = 0;
    while let Some(at) = text[from..].find("#[cfg(") {
        let start = from + at;
        let end = start + text[start..].find(")]")? + 2;
        let predicate: String = text[start + 6..end - 2].split_whitespace().collect();
        let members = predicate
            .strip_prefix("all(")
            .and_then(|p| p.strip_suffix(')'));
        if predicate == "test" || members.is_some_and(|m| m.split(',').any(|t| t == "test")) {
            return Some((start, end));
        }
        from = end;
    }
    None
}

/// The text with every test-only item removed, and the names of the child modules that are
/// declared test-only (`#[cfg(test)] mod name;`).
fn without_test_items(text: &str) -> (String, Vec<String>) {
    let mut out = String::new();
    let mut test_children = Vec::new();
    let mut rest = text;
    while let Some((at, attribute_end)) = next_test_attribute(rest) {
        out.push_str(&rest[..at]);
        let after = &rest[attribute_end..];
        let end = after.find([';', '{']).expect("a test item ends");
        if after.as_bytes()[end] == b';' {
            if let Some(name) = after[..end].trim().strip_prefix("mod ") {
                test_children.push(name.trim().to_string());
            }
            rest = &after[end + 1..];
            continue;
        }
        let mut depth = 0;
        let mut close = end;
        for (offset, c) in after[end..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = end + offset;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    (out, test_children)
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every path in `code` that starts with `crate`, `super`, `self` or one of `roots`, as its
/// segments (a `{a::b, c}` group gives one path per member).
fn paths(code: &str, roots: &BTreeSet<String>) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let starts_word = i == 0 || !(is_ident(chars[i - 1]) || chars[i - 1] == ':');
        if !starts_word || !is_ident(chars[i]) {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < chars.len() && is_ident(chars[j]) {
            j += 1;
        }
        let first: String = chars[i..j].iter().collect();
        let followed_by_path = chars.get(j) == Some(&':') && chars.get(j + 1) == Some(&':');
        let root = matches!(first.as_str(), "crate" | "super" | "self") || roots.contains(&first);
        if root && followed_by_path {
            let (mut segments, end) = path_at(&chars, i);
            found.append(&mut segments);
            i = end;
        } else {
            i = j;
        }
    }
    found
}

/// The path (or group of paths) starting at `start`, and where it ends.
fn path_at(chars: &[char], start: usize) -> (Vec<Vec<String>>, usize) {
    let mut prefix = Vec::new();
    let mut i = start;
    loop {
        while chars.get(i).is_some_and(|c| c.is_whitespace()) {
            i += 1;
        }
        if chars.get(i) == Some(&'{') {
            let mut members = Vec::new();
            i += 1;
            loop {
                while chars.get(i).is_some_and(|c| c.is_whitespace() || *c == ',') {
                    i += 1;
                }
                match chars.get(i) {
                    Some('}') | None => return (members, i + 1),
                    _ => {}
                }
                let (inner, end) = path_at(chars, i);
                for tail in inner {
                    members.push(prefix.iter().cloned().chain(tail).collect());
                }
                if end == i {
                    i += 1;
                } else {
                    i = end;
                }
                // Skip `as alias` and anything else up to the member's end.
                while chars.get(i).is_some_and(|c| *c != ',' && *c != '}') {
                    i += 1;
                }
            }
        }
        let mut j = i;
        while chars.get(j).is_some_and(|c| is_ident(*c) || *c == '*') {
            j += 1;
        }
        if j == i {
            return (vec![prefix], i);
        }
        prefix.push(chars[i..j].iter().collect());
        if chars.get(j) == Some(&':') && chars.get(j + 1) == Some(&':') {
            i = j + 2;
        } else {
            return (vec![prefix], j);
        }
    }
}

impl Crate {
    /// The modules of the source folders `roots` as one crate: a module in several of them
    /// (`lib.rs`, a folder both have) holds the code of each.
    fn read(roots: &[&Path]) -> Crate {
        let mut files = Vec::new();
        for src in roots {
            source_files(src, &mut files);
        }
        let mut modules: BTreeMap<ModulePath, Module> = BTreeMap::new();
        let mut test_only = BTreeSet::new();
        for file in &files {
            let src = roots
                .iter()
                .find(|root| file.starts_with(root))
                .expect("below a root");
            let relative = file
                .strip_prefix(src)
                .expect("below its root")
                .with_extension("");
            let mut path: ModulePath = relative
                .iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect();
            let is_folder = matches!(path.last().map(String::as_str), Some("mod" | "lib"));
            if is_folder {
                path.pop();
            }
            if path == ["main"] {
                continue;
            }
            let text = std::fs::read_to_string(file)
                .expect("source readable")
                .replace("rigid_crowd_core::", "crate::");
            let (code, test_children) = without_test_items(&without_comments(&text));
            for child in test_children {
                let mut child_path = path.clone();
                child_path.push(child);
                test_only.insert(child_path);
            }
            let module = modules.entry(path).or_insert_with(|| Module {
                code: String::new(),
                reexports: BTreeMap::new(),
                is_folder,
            });
            module.code.push_str(&code);
            module.code.push('\n');
            module.is_folder |= is_folder;
        }
        modules.retain(|path, _| !test_only.iter().any(|t| path.starts_with(t)));
        let mut krate = Crate { modules };
        let reexports: Vec<(ModulePath, BTreeMap<String, ModulePath>)> = krate
            .modules
            .iter()
            .map(|(path, module)| (path.clone(), krate.reexports_of(path, module)))
            .collect();
        for (path, map) in reexports {
            krate.modules.get_mut(&path).expect("module").reexports = map;
        }
        krate
    }

    /// The child modules of `path`.
    fn children(&self, path: &ModulePath) -> BTreeSet<String> {
        self.modules
            .keys()
            .filter(|p| p.len() == path.len() + 1 && p.starts_with(path))
            .map(|p| p[path.len()].clone())
            .collect()
    }

    /// The module a relative path in `from` starts from: `super` and `self` resolved.
    fn absolute(&self, from: &ModulePath, is_folder: bool, path: &[String]) -> ModulePath {
        // A file `a/b.rs` is module `a::b`; `self` is itself, `super` is `a`.
        let mut base: ModulePath = from.clone();
        let mut rest = path;
        match rest.first().map(String::as_str) {
            Some("crate") => {
                base.clear();
                rest = &rest[1..];
            }
            Some("self") => rest = &rest[1..],
            Some("super") => {
                while rest.first().map(String::as_str) == Some("super") {
                    base.pop();
                    rest = &rest[1..];
                }
            }
            _ => {}
        }
        let _ = is_folder;
        base.extend(rest.iter().cloned());
        base
    }

    fn reexports_of(&self, path: &ModulePath, module: &Module) -> BTreeMap<String, ModulePath> {
        let mut map = BTreeMap::new();
        let roots = self.children(path);
        let mut rest = module.code.as_str();
        while let Some(at) = rest.find("pub") {
            let after = &rest[at..];
            let use_at = after.find("use ");
            let is_pub_use = use_at.is_some_and(|u| {
                let between = after[3..u].trim();
                between.is_empty() || between.starts_with('(') && between.ends_with(')')
            });
            if !is_pub_use || (at > 0 && rest[..at].ends_with(|c: char| is_ident(c))) {
                rest = &rest[at + 3..];
                continue;
            }
            let body = &after[use_at.unwrap() + 4..];
            let end = body.find(';').unwrap_or(body.len());
            let chars: Vec<char> = body[..end].chars().collect();
            let (items, _) = path_at(&chars, 0);
            for item in items {
                let Some(name) = item.last().cloned() else {
                    continue;
                };
                let starts_known = matches!(item[0].as_str(), "crate" | "self" | "super")
                    || roots.contains(&item[0]);
                if starts_known && name != "*" {
                    map.insert(name, self.absolute(path, module.is_folder, &item));
                }
            }
            rest = &body[end..];
        }
        map
    }

    /// The file module that `path` (absolute) names, following re-exports.
    fn resolve(&self, path: &[String], depth: usize) -> Option<ModulePath> {
        if depth > 16 {
            return None;
        }
        for n in (0..=path.len()).rev() {
            let prefix = path[..n].to_vec();
            if let Some(module) = self.modules.get(&prefix) {
                if let Some(target) = path.get(n).and_then(|name| module.reexports.get(name)) {
                    let mut next = target.clone();
                    next.extend(path[n + 1..].iter().cloned());
                    if let Some(found) = self.resolve(&next, depth + 1) {
                        return Some(found);
                    }
                }
                return (!prefix.is_empty()).then_some(prefix);
            }
        }
        None
    }

    /// Each module's dependencies on other modules.
    fn dependencies(&self) -> BTreeMap<ModulePath, BTreeSet<ModulePath>> {
        let mut graph = BTreeMap::new();
        for (path, module) in &self.modules {
            if path.is_empty() {
                continue;
            }
            let roots = self.children(path);
            let mut deps = BTreeSet::new();
            for found in paths(&module.code, &roots) {
                let absolute = self.absolute(path, module.is_folder, &found);
                if let Some(target) = self.resolve(&absolute, 0) {
                    if &target != path && !target.is_empty() {
                        deps.insert(target);
                    }
                }
            }
            graph.insert(path.clone(), deps);
        }
        graph
    }
}

/// The strongly connected components of more than one node (Tarjan's algorithm).
fn cycles<N: Ord + Clone>(graph: &BTreeMap<N, BTreeSet<N>>) -> Vec<Vec<N>> {
    struct Search<'a, N> {
        graph: &'a BTreeMap<N, BTreeSet<N>>,
        index: BTreeMap<N, usize>,
        low: BTreeMap<N, usize>,
        stack: Vec<N>,
        components: Vec<Vec<N>>,
    }
    impl<N: Ord + Clone> Search<'_, N> {
        fn visit(&mut self, node: &N) {
            let index = self.index.len();
            self.index.insert(node.clone(), index);
            self.low.insert(node.clone(), index);
            self.stack.push(node.clone());
            for next in self.graph.get(node).into_iter().flatten() {
                if !self.graph.contains_key(next) {
                    continue;
                }
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let low = self.low[node].min(self.low[next]);
                    self.low.insert(node.clone(), low);
                } else if self.stack.contains(next) {
                    let low = self.low[node].min(self.index[next]);
                    self.low.insert(node.clone(), low);
                }
            }
            if self.low[node] == self.index[node] {
                let mut component = Vec::new();
                loop {
                    let member = self.stack.pop().expect("on the stack");
                    let done = &member == node;
                    component.push(member);
                    if done {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.components.push(component);
                }
            }
        }
    }
    let mut search = Search {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        components: Vec::new(),
    };
    for node in graph.keys() {
        if !search.index.contains_key(node) {
            search.visit(node);
        }
    }
    search.components
}

/// The graph between the folders (and files) directly below `src/`.
fn layers(
    graph: &BTreeMap<ModulePath, BTreeSet<ModulePath>>,
) -> BTreeMap<String, BTreeSet<String>> {
    let mut top: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, deps) in graph {
        let entry = top.entry(from[0].clone()).or_default();
        entry.extend(deps.iter().map(|d| d[0].clone()).filter(|d| d != &from[0]));
    }
    top
}

fn crate_graph() -> BTreeMap<ModulePath, BTreeSet<ModulePath>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    Crate::read(&[&root.join("core/src"), &root.join("src")]).dependencies()
}

fn describe(components: &[Vec<String>]) -> String {
    components
        .iter()
        .map(|c| format!("[{}]", c.join(" <-> ")))
        .collect::<Vec<_>>()
        .join(", ")
}

#[test]
fn no_file_depends_on_itself_through_others() {
    let graph = crate_graph();
    let named: Vec<Vec<String>> = cycles(&graph)
        .into_iter()
        .map(|c| c.into_iter().map(|m| m.join("/")).collect())
        .collect();
    assert!(
        named.is_empty(),
        "import cycles between files: {}",
        describe(&named)
    );
}

#[test]
fn the_layers_of_src_point_one_way() {
    let found = cycles(&layers(&crate_graph()));
    assert!(
        found.is_empty(),
        "import cycles between the layers of src/: {}",
        describe(&found)
    );
}

/// The layers, bottom first, in the order `core/src/lib.rs` and then `src/lib.rs` declare them
/// (a layer both declare at its place in `src/lib.rs`): each may depend only on those declared
/// before it.
#[test]
fn each_layer_depends_only_on_the_layers_declared_before_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = ["core/src/lib.rs", "src/lib.rs"]
        .map(|file| std::fs::read_to_string(root.join(file)).expect("lib.rs readable"))
        .join("\n");
    let order: Vec<String> = lib
        .lines()
        .filter_map(|line| {
            let line = line.trim().strip_prefix("pub ").unwrap_or(line.trim());
            Some(line.strip_prefix("mod ")?.strip_suffix(';')?.to_string())
        })
        .collect();
    let position = |layer: &String| order.iter().rposition(|l| l == layer);
    let mut upward = Vec::new();
    for (from, deps) in layers(&crate_graph()) {
        let at = position(&from).unwrap_or_else(|| panic!("src/{from} is not declared in lib.rs"));
        for dep in deps {
            if position(&dep).is_none_or(|p| p > at) {
                upward.push(format!("{from} -> {dep}"));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "layers that depend on later ones ({order:?}): {upward:?}"
    );
}

/// `cpu-ref`, `cpu` and the GPU are instances of one definition, not built on one another:
/// no backend names another (what they share lives in the layers below them).
#[test]
fn no_backend_depends_on_another() {
    let backend = |m: &ModulePath| (m.len() > 2 && m[0] == "backends").then(|| m[1].clone());
    let crossings: Vec<String> = crate_graph()
        .iter()
        .filter_map(|(from, deps)| Some((from, backend(from)?, deps)))
        .flat_map(|(from, own, deps)| {
            deps.iter()
                .filter(move |d| backend(d).is_some_and(|b| b != own))
                .map(move |d| format!("{} -> {}", from.join("/"), d.join("/")))
        })
        .collect();
    assert!(
        crossings.is_empty(),
        "a backend depends on another: {crossings:?}"
    );
}

/// The reader itself: it finds the edges that make a cycle, so the tests above can fail.
#[test]
fn a_deliberate_cycle_is_found() {
    let dir = std::env::temp_dir().join(format!("module-graph-{}", std::process::id()));
    let write = |path: &str, text: &str| {
        let file = dir.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    };
    write(
        "lib.rs",
        "mod model;\nmod physics;\npub use physics::motion::State;\n",
    );
    write(
        "model/mod.rs",
        "pub mod body;\npub mod mass;\n#[cfg(test)]\nmod fixture;\n",
    );
    write(
        "model/body.rs",
        "use super::mass::Mass; // crate::physics in a comment\n",
    );
    write(
        "model/mass.rs",
        "pub struct Mass;\n#[cfg(all(test, unix))]\nmod tests { use crate::physics::x; }\n",
    );
    write("model/fixture.rs", "use crate::physics::motion::State;\n");
    write("physics/mod.rs", "pub mod motion;\n");
    write(
        "physics/motion.rs",
        "use crate::model::{body::Body, mass::Mass};\npub struct State;\n",
    );
    let graph = Crate::read(&[&dir]).dependencies();
    let clean_files = cycles(&graph);
    let clean_layers = cycles(&layers(&graph));
    let path = |s: &str| s.split('/').map(String::from).collect::<ModulePath>();
    assert_eq!(
        graph[&path("physics/motion")],
        [path("model/body"), path("model/mass")].into()
    );
    assert!(
        clean_files.is_empty() && clean_layers.is_empty(),
        "comments and test-only code make no edge"
    );

    // The model names the physics through the crate root's re-export: a cycle of layers.
    write(
        "model/mass.rs",
        "pub struct Mass;\nfn f(_: crate::State) {}\n",
    );
    let graph = Crate::read(&[&dir]).dependencies();
    assert_eq!(
        cycles(&layers(&graph)),
        vec![vec!["model".to_string(), "physics".to_string()]]
    );
    let files = vec![
        path("model/body"),
        path("model/mass"),
        path("physics/motion"),
    ];
    assert_eq!(cycles(&graph), vec![files]);
    std::fs::remove_dir_all(&dir).unwrap();
}
