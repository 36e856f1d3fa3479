//! No import circle between modules. Each crate's module tree is read from its `mod` declarations
//! (`#[path]` followed, `#[cfg(test)]` modules left out: a test may use what its module's users
//! use), and every `crate::…`/`super::…` path outside test code is an import of the module it
//! names (through the `pub use` re-exports of the module it passes, e.g. `crate::Options`).
//! An import by `a::x` of `b::y` counts as `a` importing `b`, the two siblings under their common
//! parent (a module stands for its whole tree), so the check is: among the children of any one
//! module, none imports one that imports it back, directly or around a ring. A module and its own
//! descendants may use each other (the parent declares the children).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::common::repo_root;

/// A module's path from its crate root, e.g. `["convert", "raster"]`; the root is empty.
type ModPath = Vec<String>;

struct Module {
    /// The code outside comments, literals and `#[cfg(test)]` items.
    code: String,
    /// `pub use` names that stand for another module's item: name → the module it comes from.
    reexports: BTreeMap<String, ModPath>,
}

/// Comments, string and char literals blanked out (lifetimes kept), so braces and `crate::` in
/// them are not read as code.
fn strip(source: &str) -> String {
    let b = source.as_bytes();
    let mut out = String::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let rest = &source[i..];
        if rest.starts_with("//") {
            let end = rest.find('\n').unwrap_or(rest.len());
            i += end;
        } else if rest.starts_with("/*") {
            let (mut depth, mut j) = (0usize, 0usize);
            while j < rest.len() {
                if rest[j..].starts_with("/*") {
                    depth += 1;
                    j += 2;
                } else if rest[j..].starts_with("*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            i += j;
            out.push(' ');
        } else if let Some(hashes) = raw_string_start(rest) {
            let open = 1 + (rest.as_bytes()[0] == b'b') as usize + hashes + 1;
            let close = format!("\"{}", "#".repeat(hashes));
            let end = rest[open..].find(&close).map_or(rest.len(), |e| open + e + close.len());
            i += end;
            out.push_str("\"\"");
        } else if b[i] == b'"' || (rest.starts_with("b\"") && !prev_is_ident(&out)) {
            let mut j = if b[i] == b'"' { 1 } else { 2 };
            while j < rest.len() && rest.as_bytes()[j] != b'"' {
                j += if rest.as_bytes()[j] == b'\\' { 2 } else { 1 };
            }
            i += (j + 1).min(rest.len());
            out.push_str("\"\"");
        } else if b[i] == b'\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
            let chars: Vec<char> = rest.chars().take(12).collect();
            if chars.get(1) == Some(&'\\') {
                let end = rest[2..].find('\'').map_or(rest.len(), |e| e + 3);
                i += end;
                out.push_str("' '");
            } else if chars.get(2) == Some(&'\'') {
                i += 1 + chars[1].len_utf8() + 1;
                out.push_str("' '");
            } else {
                out.push('\'');
                i += 1;
            }
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

fn prev_is_ident(out: &str) -> bool {
    out.chars().last().is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// `r"`, `r#"`, `br##"`…: the number of hashes.
fn raw_string_start(rest: &str) -> Option<usize> {
    let r = rest.strip_prefix('b').unwrap_or(rest).strip_prefix('r')?;
    let hashes = r.len() - r.trim_start_matches('#').len();
    r[hashes..].starts_with('"').then_some(hashes)
}

/// The code with every item under `#[cfg(test)]` removed (an inline `mod tests { … }`, a `use`).
fn without_test_items(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at..];
        // The item ends at its first `;` outside braces, or at the brace closing its first `{`.
        let mut depth = 0usize;
        let mut end = item.len();
        for (k, c) in item.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = k + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = k + 1;
                    break;
                }
                _ => {}
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// The `mod NAME;` declarations outside test code, each with its `#[path]`, if any.
fn declared_modules(code: &str) -> Vec<(String, Option<String>)> {
    let mut found = Vec::new();
    let mut path_attribute: Option<String> = None;
    let tokens: Vec<&str> = code.split_whitespace().collect();
    for (k, token) in tokens.iter().enumerate() {
        if token.starts_with("#[path") {
            // Literals are blanked: read the attribute from the declaration's original text below.
            path_attribute = Some(String::new());
        }
        if *token == "mod" {
            if let Some(name) = tokens.get(k + 1).and_then(|n| n.strip_suffix(';')) {
                found.push((name.to_string(), path_attribute.take()));
            } else {
                path_attribute = None;
            }
        }
    }
    found
}

/// `#[path = "…"]` values in order, read from the source with literals intact.
fn path_attributes(source: &str) -> Vec<String> {
    source
        .lines()
        .filter_map(|l| l.trim().strip_prefix("#[path = \"").and_then(|p| p.split('"').next()))
        .map(str::to_string)
        .collect()
}

/// Reads a crate's module tree from its root file.
fn read_crate(root_file: &Path) -> BTreeMap<ModPath, Module> {
    let mut modules = BTreeMap::new();
    let mut pending = vec![(Vec::new(), root_file.to_path_buf())];
    while let Some((path, file)) = pending.pop() {
        let source = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let code = without_test_items(&strip(&source));
        let mut attributes = path_attributes(&source).into_iter();
        let own_dir = if file.file_name().is_some_and(|n| n == "mod.rs" || n == "lib.rs" || n == "main.rs") {
            file.parent().unwrap().to_path_buf()
        } else {
            file.with_extension("")
        };
        for (name, attribute) in declared_modules(&code) {
            let child_file = match attribute {
                Some(_) => file.parent().unwrap().join(attributes.next().expect("a #[path] value")),
                None if own_dir.join(format!("{name}.rs")).exists() => own_dir.join(format!("{name}.rs")),
                None => own_dir.join(&name).join("mod.rs"),
            };
            let mut child = path.clone();
            child.push(name);
            pending.push((child, child_file));
        }
        modules.insert(path, Module { code, reexports: BTreeMap::new() });
    }
    // Re-exports, now that every module is known.
    let paths: Vec<ModPath> = modules.keys().cloned().collect();
    for from in &paths {
        let code = modules[from].code.clone();
        let mut reexports = BTreeMap::new();
        for statement in code.split(';') {
            let statement = statement.trim();
            let Some(rest) = statement.strip_prefix("pub use ").or_else(|| statement.strip_prefix("pub(crate) use "))
            else {
                continue;
            };
            for target in expand_use(rest) {
                let Some((name, _)) = target.split_last() else { continue };
                // `pub use module::Item` names a child of this module (2018 paths).
                let relative = [vec!["self".to_string()], target.clone()].concat();
                let resolved = resolve(&paths, from, &target).or_else(|| resolve(&paths, from, &relative));
                if let Some((module, _)) = resolved.filter(|(module, _)| module != from) {
                    reexports.insert(name.clone(), module);
                }
            }
        }
        modules.get_mut(from).unwrap().reexports = reexports;
    }
    modules
}

/// `a::{b, c::{d, e}}` → `[a, b]`, `[a, c, d]`, `[a, c, e]` (segments; `self` dropped).
fn expand_use(tree: &str) -> Vec<Vec<String>> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    fn expand(prefix: &[String], tree: &str, out: &mut Vec<Vec<String>>) {
        let Some(open) = tree.find('{') else {
            let mut path = prefix.to_vec();
            let tree = tree.split(" as ").next().unwrap_or(tree);
            path.extend(tree.split("::").filter(|s| !s.is_empty() && *s != "self" && *s != "*").map(String::from));
            out.push(path);
            return;
        };
        let mut path = prefix.to_vec();
        path.extend(tree[..open].split("::").filter(|s| !s.is_empty()).map(String::from));
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let mut depth = 0;
        let mut start = 0;
        for (k, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(&path, &inner[start..k], out);
                    start = k + 1;
                }
                _ => {}
            }
        }
        expand(&path, &inner[start..], out);
    }
    let mut out = Vec::new();
    expand(&[], &tree, &mut out);
    out
}

/// A path as written in module `from` (`crate::a::b::Item`, `super::x`) → the deepest module it
/// names and the segments after it.
fn resolve(modules: &[ModPath], from: &ModPath, path: &[String]) -> Option<(ModPath, Vec<String>)> {
    let (mut base, mut rest) = match path.first().map(String::as_str) {
        Some("crate") => (Vec::new(), &path[1..]),
        Some("super") => {
            let mut base = from.clone();
            let mut rest = path;
            while rest.first().map(String::as_str) == Some("super") {
                base.pop();
                rest = &rest[1..];
            }
            (base, rest)
        }
        Some("self") => (from.clone(), &path[1..]),
        _ => return None,
    };
    while let Some(next) = rest.first() {
        let mut deeper = base.clone();
        deeper.push(next.clone());
        if !modules.contains(&deeper) {
            break;
        }
        base = deeper;
        rest = &rest[1..];
    }
    Some((base, rest.to_vec()))
}

/// Every `crate::`/`super::`/`self::` path in a module's code, `use` groups expanded.
fn paths_in(code: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let bytes = code.as_bytes();
    for prefix in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(prefix) {
            let start = from + at;
            from = start + prefix.len();
            if start > 0
                && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_' || bytes[start - 1] == b'$')
            {
                continue;
            }
            if prefix == "super::" && start >= 2 && &code[start - 2..start] == "::" {
                continue; // `super::super::` is read from its first `super`
            }
            // The path runs over identifiers, `::` and one balanced `{…}` group.
            let mut end = start;
            let mut depth = 0;
            for (k, c) in code[start..].char_indices() {
                let ok = c.is_alphanumeric()
                    || c == '_'
                    || c == ':'
                    || c == '*'
                    || (depth > 0 && (c == ',' || c.is_whitespace()));
                if c == '{' {
                    depth += 1;
                } else if c == '}' && depth > 0 {
                    depth -= 1;
                    if depth == 0 {
                        end = start + k + 1;
                        break;
                    }
                } else if !ok {
                    end = start + k;
                    break;
                }
                end = start + k + c.len_utf8();
            }
            found.extend(expand_use(code[start..end].trim_end_matches(':')));
        }
    }
    found
}

/// The imports between sibling modules: (importer, imported), both children of one parent.
fn sibling_imports(modules: &BTreeMap<ModPath, Module>) -> BTreeSet<(ModPath, ModPath)> {
    let paths: Vec<ModPath> = modules.keys().cloned().collect();
    let mut edges = BTreeSet::new();
    for (from, module) in modules {
        for path in paths_in(&module.code) {
            let Some((mut target, rest)) = resolve(&paths, from, &path) else { continue };
            // Through a re-export to the module the item comes from (one hop, as `crate::Options`).
            if let Some(source) = rest.first().and_then(|name| modules[&target].reexports.get(name)) {
                target = source.clone();
            }
            let common = from.iter().zip(&target).take_while(|(a, b)| a == b).count();
            if common == from.len() || common == target.len() {
                continue; // a module and its ancestor or descendant
            }
            edges.insert((from[..=common].to_vec(), target[..=common].to_vec()));
        }
    }
    edges
}

/// The circles among the imports: each as a ring of module names, first repeated last.
fn circles(edges: &BTreeSet<(ModPath, ModPath)>) -> Vec<String> {
    let mut next: BTreeMap<&ModPath, Vec<&ModPath>> = BTreeMap::new();
    for (a, b) in edges {
        next.entry(a).or_default().push(b);
    }
    let mut found = BTreeSet::new();
    for start in next.keys() {
        // Depth-first from `start`, reporting a ring only from its smallest member (once).
        let mut stack: Vec<(&ModPath, Vec<&ModPath>)> = vec![(start, vec![start])];
        let mut seen = BTreeSet::new();
        while let Some((at, ring)) = stack.pop() {
            for &to in next.get(at).map(Vec::as_slice).unwrap_or(&[]) {
                if to == *start {
                    let names: Vec<String> = ring.iter().chain([start]).map(|p| p.join("::")).collect();
                    found.insert(names.join(" → "));
                } else if to > *start && seen.insert(to) {
                    let mut longer = ring.clone();
                    longer.push(to);
                    stack.push((to, longer));
                }
            }
        }
    }
    found.into_iter().collect()
}

fn crate_circles(root_file: &str) -> Vec<String> {
    let modules = read_crate(&repo_root().join(root_file));
    circles(&sibling_imports(&modules)).into_iter().map(|c| format!("{root_file}: {c}")).collect()
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let mut found = Vec::new();
    for root in ["guest/src/lib.rs", "lib/src/lib.rs", "cli/src/main.rs"] {
        found.extend(crate_circles(root));
    }
    assert!(found.is_empty(), "modules that import each other in a circle:\n{}", found.join("\n"));
    // The trees were read: an import each crate is known to make is among those found.
    for (root, from, to) in [
        ("guest/src/lib.rs", "walks", "verdict"),
        ("lib/src/lib.rs", "gate", "runtime"),
        ("cli/src/main.rs", "commands", "servers"),
        ("cli/src/main.rs", "servers", "process"),
    ] {
        let edges = sibling_imports(&read_crate(&repo_root().join(root)));
        assert!(edges.contains(&(vec![from.to_string()], vec![to.to_string()])), "{root}: {from} imports {to}");
    }
}

/// The servers are started with their configuration as a value: the command line depends on them,
/// never the other way round, so a server can be embedded without the command line.
#[test]
fn the_servers_do_not_import_the_command_line() {
    let edges = sibling_imports(&read_crate(&repo_root().join("cli/src/main.rs")));
    let servers_into_cli: Vec<_> = edges
        .iter()
        .filter(|(from, to)| {
            from.first().is_some_and(|m| m == "servers") && to.first().is_some_and(|m| m == "commands")
        })
        .collect();
    assert!(servers_into_cli.is_empty(), "the servers import the command line: {servers_into_cli:?}");
}

/// The library (`lib/`, crate `mediagate`) is what a program embedding the gate depends on: it
/// brings no front end's crates, no command line (clap), MCP server (rmcp) or HTTP stack (hyper,
/// tower); those come with the command (`cli/`, crate `mediagate-cli`), which depends on it.
#[test]
fn the_library_depends_on_no_front_end() {
    let tree = |package: &str| {
        let out = std::process::Command::new(env!("CARGO"))
            .args([
                "tree",
                "--offline",
                "--locked",
                "-p",
                package,
                "-e",
                "normal",
                "--prefix",
                "none",
                "--format",
                "{p}",
            ])
            .current_dir(repo_root())
            .output()
            .unwrap();
        assert!(out.status.success(), "cargo tree -p {package}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_whitespace().next().map(str::to_string))
            .collect::<BTreeSet<_>>()
    };
    let library = tree("mediagate");
    assert!(library.contains("wasmtime") && library.contains("tokio"), "the tree was read: {library:?}");
    let front_ends = ["clap", "rmcp", "hyper", "hyper-util", "tower", "axum", "indicatif", "walkdir", "jiter"];
    let brought: Vec<_> = front_ends.iter().filter(|n| library.contains(**n)).collect();
    assert!(brought.is_empty(), "the library depends on a front end's crates: {brought:?}");
    let command = tree("mediagate-cli");
    assert!(command.contains("mediagate") && command.contains("clap") && command.contains("rmcp"), "{command:?}");
}

/// The reader itself: it follows `#[path]`, `use` groups, `super::` and re-exports, leaves test
/// code out, and finds a ring of three.
#[test]
fn the_module_graph_reader_finds_a_circle() {
    let dir = tempfile_dir();
    let write = |name: &str, text: &str| {
        let file = dir.join(name);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    };
    write("lib.rs", "mod a;\nmod b;\n#[path = \"other/c_file.rs\"]\nmod c;\npub use b::Thing;\n#[cfg(test)]\nmod t;\n");
    write("a.rs", "// crate::c::x in a comment\nuse crate::{b::{self}, c::Z};\nfn f() { let _ = \"crate::b\"; }\n");
    write("b.rs", "pub struct Thing;\n#[cfg(test)]\nmod tests { use crate::a::f; }\n");
    write("other/c_file.rs", "fn g() -> super::Thing { todo!() }\nmod inner;\n");
    write("other/c_file/inner.rs", "use super::super::a::f;\n");
    write("t.rs", "use crate::c::g;\n");
    let modules = read_crate(&dir.join("lib.rs"));
    let edges = sibling_imports(&modules);
    let names: BTreeSet<(String, String)> = edges.iter().map(|(a, b)| (a.join("::"), b.join("::"))).collect();
    let expected: BTreeSet<(String, String)> =
        [("a", "b"), ("a", "c"), ("c", "b"), ("c", "a")].iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
    assert_eq!(names, expected);
    assert_eq!(circles(&edges), vec!["a → c → a".to_string()]);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn tempfile_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mediagate-module-graph-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}
