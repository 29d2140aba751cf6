//! The shape of the crate, read from its sources: the modules of
//! `src/service` import each other without a cycle, and the pure core
//! (`rules`, `cpu`, `rating`, `clock`, `tournament`) imports nothing of the
//! layers above it nor any I/O crate (ARCHITECTURE.md, "Layers"); and
//! every writer of `matches`, in the code and in migrations, keeps the rule
//! a pipelined move's guard rests on (`store::pipelined::Guard`).
//!
//! Imports are read from `use` declarations and from paths in code
//! (`crate::service::…`, `super::…`, `self::…`, and a parent naming its own
//! child modules); `#[cfg(test)]` modules are left out, since a unit test may
//! reach a sibling without making it a dependency of the code.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module path, `["service", "matches", "play"]`.
type ModPath = Vec<String>;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, recursively.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// The module a file under `src/` defines.
fn module_of(file: &Path) -> ModPath {
    let rel = file.strip_prefix(src()).unwrap();
    let mut parts: ModPath = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// The source without comments, string literals and `#[cfg(test)]` items.
fn code_of(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            // A character literal (`'"'`, `'\n'`); a lifetime passes through.
            '\'' if chars.peek() == Some(&'\\') => {
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                }
            }
            '\'' => {
                let mut ahead = chars.clone();
                if ahead.next().is_some() && ahead.next() == Some('\'') {
                    chars.next();
                    chars.next();
                } else {
                    out.push(c);
                }
            }
            '"' => {
                let mut escaped = false;
                for c in chars.by_ref() {
                    if escaped {
                        escaped = false;
                    } else if c == '\\' {
                        escaped = true;
                    } else if c == '"' {
                        break;
                    }
                }
                out.push_str("\"\"");
            }
            _ => out.push(c),
        }
    }
    strip_cfg_test(&out)
}

/// Removes each item that follows `#[cfg(test)]` (up to its closing brace or semicolon).
fn strip_cfg_test(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        let mut depth = 0usize;
        let mut end = after.len();
        for (i, c) in after.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = i + 1;
                    break;
                }
                _ => {}
            }
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// The full paths a `use` tree names: `a::{b, c::{d, self}}` → `a::b`, `a::c::d`, `a::c`.
fn expand_use(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or(tree);
        let path: String = path.chars().filter(|c| !c.is_whitespace()).collect();
        return vec![path.trim_end_matches("::*").to_owned()];
    };
    let prefix: String = tree[..open]
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let prefix = prefix.trim_end_matches("::").to_owned();
    let close = tree.rfind('}').unwrap_or(tree.len());
    let inner = &tree[open + 1..close];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(|p| {
            let prefix = prefix.clone();
            expand_use(p).into_iter().map(move |sub| {
                if sub == "self" {
                    prefix.clone()
                } else {
                    format!("{prefix}::{sub}")
                }
            })
        })
        .collect()
}

/// Identifier paths (`a::b::c`) in `code`, outside `use` declarations.
fn code_paths(code: &str) -> Vec<String> {
    let bytes: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts = (bytes[i].is_alphabetic() || bytes[i] == '_')
            && (i == 0
                || !(bytes[i - 1].is_alphanumeric() || bytes[i - 1] == '_' || bytes[i - 1] == ':'));
        if !starts {
            i += 1;
            continue;
        }
        let mut j = i;
        let mut path = String::new();
        loop {
            let s = j;
            while j < bytes.len() && (bytes[j].is_alphanumeric() || bytes[j] == '_') {
                j += 1;
            }
            path.extend(&bytes[s..j]);
            if j + 2 < bytes.len()
                && bytes[j] == ':'
                && bytes[j + 1] == ':'
                && (bytes[j + 2].is_alphabetic() || bytes[j + 2] == '_')
            {
                path.push_str("::");
                j += 2;
            } else {
                break;
            }
        }
        if path.contains("::") {
            out.push(path);
        }
        i = j.max(i + 1);
    }
    out
}

/// What one file imports: its `use` trees and the paths in its code.
fn imports(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = code;
    let mut body = String::new();
    // `use` declarations (possibly `pub use`, `pub(crate) use`), up to their semicolon.
    while let Some(at) = find_use(rest) {
        body.push_str(&rest[..at]);
        let decl = &rest[at + 4..];
        let end = decl.find(';').unwrap_or(decl.len());
        found.extend(expand_use(&decl[..end]));
        rest = &decl[(end + 1).min(decl.len())..];
    }
    body.push_str(rest);
    found.extend(code_paths(&body));
    found
}

/// The byte offset of the next `use ` keyword at a word boundary.
fn find_use(code: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = code[from..].find("use ") {
        let at = from + at;
        let before = code[..at].chars().next_back();
        if before.is_none_or(|c| !(c.is_alphanumeric() || c == '_')) {
            return Some(at);
        }
        from = at + 4;
    }
    None
}

/// Resolves an import path written in module `module` (with child modules
/// `children`) to an absolute module path, if it is relative to the crate.
fn absolute(module: &ModPath, children: &BTreeSet<String>, path: &str) -> Option<ModPath> {
    let segments: Vec<&str> = path.split("::").collect();
    let mut base: ModPath;
    let mut rest = &segments[..];
    match segments[0] {
        "crate" => {
            base = Vec::new();
            rest = &segments[1..];
        }
        "self" => {
            base = module.clone();
            rest = &segments[1..];
        }
        "super" => {
            base = module.clone();
            while rest.first() == Some(&"super") {
                base.pop();
                rest = &rest[1..];
            }
        }
        first if children.contains(first) => base = module.clone(),
        _ => return None,
    }
    base.extend(rest.iter().map(|s| (*s).to_owned()));
    Some(base)
}

/// The longest prefix of `path` that is one of `modules`.
fn owning_module(modules: &BTreeSet<ModPath>, path: &ModPath) -> Option<ModPath> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| modules.contains(p))
}

/// The module import graph of every file under `src/<top>`.
fn graph(top: &str) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
    let sources = files(&src().join(top));
    let modules: BTreeSet<ModPath> = sources.iter().map(|f| module_of(f)).collect();
    let mut edges = BTreeMap::new();
    for file in &sources {
        let module = module_of(file);
        let children: BTreeSet<String> = modules
            .iter()
            .filter(|m| m.len() == module.len() + 1 && m.starts_with(&module))
            .map(|m| m[module.len()].clone())
            .collect();
        let targets: BTreeSet<ModPath> = imports(&code_of(file))
            .iter()
            .filter_map(|p| absolute(&module, &children, p))
            .filter_map(|p| owning_module(&modules, &p))
            .filter(|t| *t != module)
            .collect();
        edges.insert(module, targets);
    }
    edges
}

/// A cycle in `edges`, as the list of modules around it.
fn find_cycle(edges: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Option<Vec<ModPath>> {
    fn visit(
        node: &ModPath,
        edges: &BTreeMap<ModPath, BTreeSet<ModPath>>,
        state: &mut BTreeMap<ModPath, u8>,
        stack: &mut Vec<ModPath>,
    ) -> Option<Vec<ModPath>> {
        state.insert(node.clone(), 1);
        stack.push(node.clone());
        for next in edges.get(node).into_iter().flatten() {
            match state.get(next) {
                Some(1) => {
                    let from = stack.iter().position(|m| m == next).unwrap_or(0);
                    let mut cycle = stack[from..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Some(_) => {}
                None => {
                    if let Some(cycle) = visit(next, edges, state, stack) {
                        return Some(cycle);
                    }
                }
            }
        }
        stack.pop();
        state.insert(node.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in edges.keys() {
        if !state.contains_key(node) {
            let mut stack = Vec::new();
            if let Some(cycle) = visit(node, edges, &mut state, &mut stack) {
                return Some(cycle);
            }
        }
    }
    None
}

fn show(cycle: &[ModPath]) -> String {
    cycle
        .iter()
        .map(|m| m.join("::"))
        .collect::<Vec<_>>()
        .join(" → ")
}

#[test]
fn no_module_of_the_service_layer_imports_one_that_imports_it_back() {
    let edges = graph("service");
    assert!(edges.len() > 20, "read the service modules: {edges:?}");
    if let Some(cycle) = find_cycle(&edges) {
        panic!("import cycle in src/service: {}", show(&cycle));
    }
}

#[test]
fn the_cycle_finder_sees_a_cycle_through_super_and_a_parent_naming_its_child() {
    // `a` (a parent) names its child `a::b`, which imports `super::c`, which imports `crate::a`.
    let m = |p: &str| -> ModPath { p.split("::").map(str::to_owned).collect() };
    let modules: BTreeSet<ModPath> = [m("a"), m("a::b"), m("c")].into_iter().collect();
    let children: BTreeSet<String> = ["b".to_owned()].into_iter().collect();
    let none = BTreeSet::new();
    let mut edges: BTreeMap<ModPath, BTreeSet<ModPath>> = BTreeMap::new();
    for (module, kids, code) in [
        (m("a"), &children, "fn f() { b::g() }"),
        (m("a::b"), &none, "use super::super::{c, x};"),
        (m("c"), &none, "fn h() -> crate::a::T { todo!() }"),
    ] {
        let targets = imports(code)
            .iter()
            .filter_map(|p| absolute(&module, kids, p))
            .filter_map(|p| owning_module(&modules, &p))
            .filter(|t| *t != module)
            .collect();
        edges.insert(module, targets);
    }
    let cycle = find_cycle(&edges).expect("a cycle");
    assert_eq!(cycle.len(), 4, "{}", show(&cycle));
    edges.get_mut(&m("c")).unwrap().clear();
    assert_eq!(find_cycle(&edges), None);
}

#[test]
fn use_trees_expand_to_every_path_they_name() {
    let mut paths = expand_use("super::{Context, matches::{self, play::Snapshot}, x as y}");
    paths.sort();
    assert_eq!(
        paths,
        [
            "super::Context",
            "super::matches",
            "super::matches::play::Snapshot",
            "super::x"
        ]
    );
}

/// The layers the pure core must not reach, and the I/O crates it must not use.
const FORBIDDEN_LAYERS: [&str; 5] = ["http", "service", "store", "broker", "worker"];
const FORBIDDEN_CRATES: [&str; 6] = [
    "diesel",
    "actix_web",
    "actix_http",
    "actix_rt",
    "redis",
    "tokio",
];

#[test]
fn the_pure_core_imports_no_layer_above_it_and_no_io_crate() {
    let mut sources = Vec::new();
    for dir in ["rules", "cpu", "rating", "tournament"] {
        sources.extend(files(&src().join(dir)));
    }
    sources.push(src().join("clock.rs"));
    assert!(sources.len() > 20, "read the core: {sources:?}");
    let mut offences = Vec::new();
    for file in &sources {
        for path in imports(&code_of(file)) {
            let segments: Vec<&str> = path.split("::").collect();
            let layer = segments[0] == "crate"
                && segments
                    .get(1)
                    .is_some_and(|s| FORBIDDEN_LAYERS.contains(s));
            let io = FORBIDDEN_CRATES.contains(&segments[0].trim_start_matches("::"));
            if layer || io {
                offences.push(format!("{}: {path}", file.display()));
            }
        }
    }
    assert!(
        offences.is_empty(),
        "the pure core reaches out: {offences:#?}"
    );
}

/// Every `UPDATE` of `matches` in the code, by file (under `src/`) and
/// function, with why it keeps the rule a pipelined move's guard rests on
/// (`store::pipelined::Guard`): a change raises the version, or changes only
/// the guarded columns. A move judged on a remembered row writes the whole
/// row back, so a writer that did neither would be undone by it. A new
/// writer fails `every_writer_of_matches_is_one_the_guard_knows` until it is
/// added here, its reason checked.
const MATCH_WRITERS: &[(&str, &str, &str)] = &[
    (
        "store/matches.rs",
        "save",
        "the whole row, its version raised by the caller's change (play, resign, presence, dropout)",
    ),
    (
        "store/matches.rs",
        "mark_cpu_claimed",
        "cpu_claimed_until only: guarded",
    ),
    (
        "store/players.rs",
        "delete",
        "x_player_id / o_player_id only: guarded",
    ),
    (
        "store/pipelined.rs",
        "push_guarded_update",
        "the guarded write itself (`MoveWrite`): the whole row, its version raised by the move",
    ),
];

/// `UPDATE matches` statements of migrations that raise no version, each
/// with why that is safe: (migration directory, reason).
const MIGRATIONS_KEEPING_THE_VERSION: &[(&str, &str)] = &[(
    "2026-12-24-000001_tournament_mode",
    "older than remembered rows (2026-12-06): no instance that ran before it remembered a row",
)];

/// How an SQL text, lower-cased, begins an `UPDATE` of `matches`.
const MATCH_UPDATE: [&str; 2] = ["update matches", "update \"matches\""];

/// The function whose body holds byte `at` of `code`: the name after the last `fn ` before it.
fn enclosing_fn(code: &str, at: usize) -> String {
    let before = &code[..at];
    let mut from = before.len();
    while let Some(found) = before[..from].rfind("fn ") {
        let preceded = before[..found]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric() && c != '_');
        if preceded {
            return before[found + 3..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
        }
        from = found;
    }
    String::new()
}

/// The text inside the parentheses that open at byte `open` of `code`.
fn parenthesised(code: &str, open: usize) -> &str {
    let mut depth = 0usize;
    for (i, c) in code[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return &code[open + 1..open + i];
                }
            }
            _ => {}
        }
    }
    &code[open + 1..]
}

/// `(file under src/, function)` of every diesel `update(…)` whose target
/// names `matches::table`, and of every SQL text that updates `matches`.
fn match_writers() -> BTreeSet<(String, String)> {
    let mut found = BTreeSet::new();
    let tests = test_only_files();
    for file in files(&src()).into_iter().filter(|f| !tests.contains(f)) {
        let rel = file
            .strip_prefix(src())
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let code = code_of(&file);
        let mut from = 0;
        while let Some(at) = code[from..].find("update(").map(|i| i + from) {
            let word_start = code[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric() && c != '_');
            let open = at + "update".len();
            if word_start && parenthesised(&code, open).contains("matches::table") {
                found.insert((rel.clone(), enclosing_fn(&code, at)));
            }
            from = open;
        }
        // SQL written as text (`sql_query`), which `code_of` blanks out;
        // comments are not read.
        let text = std::fs::read_to_string(&file).unwrap();
        let mut offset = 0;
        for line in text.split_inclusive('\n') {
            if line_updates_matches(line) {
                found.insert((rel.clone(), enclosing_fn(&text, offset)));
            }
            offset += line.len();
        }
    }
    found
}

/// Whether a line of Rust source, not a comment, holds SQL text that
/// updates `matches` (in a string the quotes of `"matches"` may be escaped).
fn line_updates_matches(line: &str) -> bool {
    let lower = line.to_lowercase().replace("\\\"", "\"");
    MATCH_UPDATE.iter().any(|p| lower.contains(p)) && !line.trim_start().starts_with("//")
}

/// The files under `src/` that are modules declared `#[cfg(test)] mod name;`.
fn test_only_files() -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    for file in files(&src()) {
        let text = std::fs::read_to_string(&file).unwrap();
        // A `mod.rs` or `lib.rs` declares children beside it; `a.rs`, under `a/`.
        let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
        let dir = if stem == "mod" || stem == "lib" {
            file.parent().unwrap().to_path_buf()
        } else {
            file.parent().unwrap().join(&stem)
        };
        for (at, _) in text.match_indices("#[cfg(test)]") {
            let rest = text[at + "#[cfg(test)]".len()..].trim_start();
            let Some(declared) = rest.strip_prefix("mod ") else {
                continue;
            };
            let name: String = declared
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if declared[name.len()..].trim_start().starts_with(';') {
                out.insert(dir.join(format!("{name}.rs")));
            }
        }
    }
    out
}

/// The `UPDATE matches …;` statements of `sql`, lower-cased.
fn match_updates(sql: &str) -> Vec<String> {
    let lower = sql.to_lowercase();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = MATCH_UPDATE
        .iter()
        .filter_map(|p| lower[from..].find(p).map(|i| i + from))
        .min()
    {
        let end = lower[at..].find(';').map_or(lower.len(), |i| at + i);
        out.push(lower[at..end].to_owned());
        from = end;
    }
    out
}

/// Whether an `UPDATE` statement's text raises the version by one.
fn raises_version(statement: &str) -> bool {
    let squeezed: String = statement
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '"')
        .collect();
    squeezed.contains("version=version+1")
}

#[test]
fn every_writer_of_matches_is_one_the_guard_knows() {
    let found = match_writers();
    let known: BTreeSet<(String, String)> = MATCH_WRITERS
        .iter()
        .map(|(file, function, _)| ((*file).to_owned(), (*function).to_owned()))
        .collect();
    assert!(
        found == known,
        "writers of `matches` changed: found {found:#?}, known {known:#?}. A writer must raise \
         the version or change only the columns of `store::pipelined::Guard`; add it to \
         MATCH_WRITERS with the reason (or remove one that is gone)"
    );
}

#[test]
fn every_migration_that_updates_matches_raises_the_version() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
    let mut statements = 0;
    let mut offences = Vec::new();
    for backend in ["postgres", "sqlite"] {
        for entry in std::fs::read_dir(root.join(backend)).unwrap() {
            let dir = entry.unwrap().path();
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            let excused = MIGRATIONS_KEEPING_THE_VERSION
                .iter()
                .any(|(migration, _)| *migration == name);
            for file in ["up.sql", "down.sql"] {
                let Ok(sql) = std::fs::read_to_string(dir.join(file)) else {
                    continue;
                };
                for statement in match_updates(&sql) {
                    statements += 1;
                    if !excused && !raises_version(&statement) {
                        offences.push(format!("{backend}/{name}/{file}: {statement}"));
                    }
                }
            }
        }
    }
    // The excused migration's four statements were read: the scan works.
    assert!(statements >= 4, "read {statements} UPDATEs of matches");
    assert!(
        offences.is_empty(),
        "a migration updates matches without `version = version + 1` (see \
         store::pipelined::Guard): {offences:#?}"
    );
}

#[test]
fn the_writer_scan_sees_a_diesel_update_a_sql_update_and_the_version_raised() {
    let code = "fn keep() { diesel::update(matches::table.find(id)).set(x) }\n\
                fn other() { diesel::update(players::table).set(y) }";
    let at = code.find("update(").unwrap();
    assert!(parenthesised(code, at + "update".len()).contains("matches::table"));
    assert_eq!(enclosing_fn(code, at), "keep");
    let second = code.rfind("update(").unwrap();
    assert!(!parenthesised(code, second + "update".len()).contains("matches::table"));
    let sql = "UPDATE matches SET mode = 'x' WHERE id = 1;\n\
               UPDATE \"matches\" SET a = 1, \"version\" = \"version\" + 1;\nSELECT 1;";
    let updates = match_updates(sql);
    assert_eq!(updates.len(), 2);
    assert!(!raises_version(&updates[0]));
    assert!(raises_version(&updates[1]));
    assert!(line_updates_matches(
        r#"    out.push_sql("UPDATE \"matches\" SET ");"#
    ));
    assert!(line_updates_matches(
        r##"    out.push_sql(r#"UPDATE "matches" SET "#);"##
    ));
    assert!(line_updates_matches(
        "    sql_query(\"update matches set x = 1\")"
    ));
    assert!(!line_updates_matches("    // UPDATE matches SET x = 1"));
    assert!(!line_updates_matches("    diesel::update(players::table)"));
}
