//! The documentation a newcomer reads: every Markdown file of the repository parsed as CommonMark
//! (pulldown-cmark), failing on a code fence that never closes or swallows the next one, on a link to
//! a repository file that does not exist, and on a repository path named in `code` that does not.

use std::ops::Range;
use std::path::{Component, Path, PathBuf};

use crate::common::repo_root;
use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag};

/// Folders never walked: build output, dependencies, virtual environments, VCS data.
const SKIPPED_DIRS: &[&str] = &["target", "node_modules", ".venv", "dist", ".git"];

/// Every Markdown file of the repository, sorted (README.md, docs/, js/, hosts/python/, …).
fn markdown_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() && !SKIPPED_DIRS.contains(&name.as_str()) && !name.starts_with('.') {
                walk(&path, out);
            } else if kind.is_file() && name.ends_with(".md") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&repo_root(), &mut files);
    files.sort();
    files
}

fn rel(path: &Path) -> String {
    path.strip_prefix(repo_root()).unwrap_or(path).display().to_string()
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

/// The fence that opens a fenced code block (its character and length), from the block's source.
fn opening_fence(block: &str) -> (char, usize) {
    let first = block.trim_start();
    let c = first.chars().next().unwrap();
    (c, first.chars().take_while(|&x| x == c).count())
}

/// Problems with one fenced code block whose source is `text[range]`.
fn fence_problems(text: &str, range: Range<usize>) -> Vec<String> {
    let block = &text[range.clone()];
    let (c, len) = opening_fence(block);
    let fence = c.to_string().repeat(len);
    let lines: Vec<&str> = block.lines().collect();
    let mut problems = Vec::new();
    let last = lines.last().unwrap().trim();
    let closed = lines.len() > 1 && last.starts_with(&fence) && last.chars().all(|x| x == c);
    if !closed {
        problems.push(format!(
            "line {}: the code fence {fence} never closes (it runs to the end of the file)",
            line_of(text, range.start)
        ));
    }
    // Lines inside that look like a fence: a closing fence glued to code (`}```` on one line), or an
    // opening fence (```rust) swallowed because the previous block did not close.
    let inner_end = if closed { lines.len() - 1 } else { lines.len() };
    let mut offset = range.start + lines[0].len() + 1;
    for line in &lines[1..inner_end.max(1)] {
        let t = line.trim();
        if t.starts_with(&fence) || t.ends_with(&fence) {
            problems.push(format!(
                "line {}: {t:?} inside a code block looks like a fence but does not close it (a closing fence \
                 stands alone on its line)",
                line_of(text, offset)
            ));
        }
        offset += line.len() + 1;
    }
    problems
}

/// Where a relative link or path points, or `None` for URLs, mail and in-page anchors.
fn repo_target(file: &Path, dest: &str) -> Option<PathBuf> {
    if dest.is_empty() || dest.starts_with('#') || dest.contains("://") || dest.starts_with("mailto:") {
        return None;
    }
    let dest = dest.split(['#', '?']).next().unwrap();
    Some(file.parent().unwrap().join(dest))
}

/// `path` with `.` and `..` resolved lexically; `None` when it climbs out of the repository.
fn inside_repo(path: &Path) -> Option<PathBuf> {
    let root = repo_root();
    let mut out = PathBuf::new();
    for part in path.strip_prefix(&root).ok()?.components() {
        match part {
            Component::Normal(p) => out.push(p),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            _ => return None,
        }
    }
    Some(root.join(out))
}

/// Repository folders whose paths, named in `code` in prose, must exist (not build output).
/// (`bench/` is left out: the docs also name corpus files as `bench/photo-12mp.jpg`.)
const SOURCE_DIRS: &[&str] =
    &["lib/", "cli/", "guest/", "tests/", "docs/", "js/", "hosts/", "scripts/", "fuzz/", "wit/", "examples/"];
/// Named in prose but made by a build, a test or a fuzzing run, or a pattern rather than a path.
fn generated(path: &str) -> bool {
    ["dist", "test-artifacts", ".venv", "node_modules", "target/", "fuzz/corpus", "fuzz/artifacts", "*", "<", "…", "{"]
        .iter()
        .any(|g| path.contains(g))
}

fn problems_in(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut problems = Vec::new();
    let parser = Parser::new_ext(
        &text,
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS | Options::ENABLE_FOOTNOTES,
    )
    .into_offset_iter();
    let mut in_code_block = false;
    for (event, range) in parser {
        match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                in_code_block = true;
                if let CodeBlockKind::Fenced(_) = kind {
                    problems.extend(fence_problems(&text, range));
                }
            }
            Event::End(pulldown_cmark::TagEnd::CodeBlock) => in_code_block = false,
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                if let Some(target) = repo_target(file, &dest_url) {
                    match inside_repo(&target) {
                        None => problems.push(format!(
                            "line {}: the link {dest_url} leads out of the repository (a clone has nothing beside it)",
                            line_of(&text, range.start)
                        )),
                        Some(t) if !t.exists() => problems.push(format!(
                            "line {}: the link {dest_url} points to {}, which does not exist",
                            line_of(&text, range.start),
                            rel(&t)
                        )),
                        Some(_) => {}
                    }
                }
            }
            Event::Code(code) if !in_code_block => {
                // `tests/x.py::test_name` names a file too; a path is relative to the file's folder
                // (hosts/python/README.md names `tests/…` of hosts/python) or to the repository.
                let code = code.split("::").next().unwrap().trim_end_matches(['.', ',', ':']);
                let is_path = SOURCE_DIRS.iter().any(|d| code.starts_with(d))
                    && !code.contains(char::is_whitespace)
                    && !generated(code);
                let exists = || file.parent().unwrap().join(code).exists() || repo_root().join(code).exists();
                if is_path && !exists() {
                    problems.push(format!(
                        "line {}: `{code}` is named as a repository path but does not exist",
                        line_of(&text, range.start)
                    ));
                }
            }
            _ => {}
        }
    }
    problems
}

#[test]
fn every_markdown_file_parses_with_closed_fences_and_working_links() {
    let files = markdown_files();
    for expected in [
        "README.md",
        "ARCHITECTURE.md",
        "SECURITY.md",
        "BENCHMARKS.md",
        "docs/embedding.md",
        "docs/mcp.md",
        "docs/design.md",
        "docs/usage.md",
        "docs/cli.md",
        "js/README.md",
        "hosts/python/README.md",
    ] {
        assert!(files.contains(&repo_root().join(expected)), "{expected} is checked");
    }
    let report: Vec<String> =
        files.iter().flat_map(|f| problems_in(f).into_iter().map(move |p| format!("{}: {p}", rel(f)))).collect();
    assert!(report.is_empty(), "Markdown problems:\n{}", report.join("\n"));
}

/// The checker itself, on the mistakes it exists for.
#[test]
fn the_checker_catches_glued_and_missing_fences_and_dead_links() {
    let dir = tempfile::tempdir_in(repo_root().join("target")).unwrap();
    let doc = dir.path().join("bad.md");
    let text = "# T\n\n```rust\nfn a() {}```\n\n```rust\nfn b() {}\n```\n\nSee [x](nope.md) and [up](../../../../x.md).\n\n```sh\nnever closed\n";
    std::fs::write(&doc, text).unwrap();
    let problems = problems_in(&doc).join("\n");
    assert!(problems.contains("line 4: \"fn a() {}```\" inside a code block"), "{problems}");
    assert!(problems.contains("line 6: \"```rust\" inside a code block"), "{problems}");
    assert!(problems.contains("nope.md, which does not exist"), "{problems}");
    assert!(problems.contains("leads out of the repository"), "{problems}");
    assert!(problems.contains("never closes"), "{problems}");

    let good = dir.path().join("good.md");
    std::fs::write(&good, "````md\n```js\nx\n```\n````\n\n[a](bad.md#t) [b](https://e.org/x.md) [c](#t)\n").unwrap();
    assert_eq!(problems_in(&good), Vec::<String>::new());
}

/// docs/embedding.md's vision-model lines, compiled here and quoted there verbatim: the key is set.
fn readme_vlm_setup() -> anyhow::Result<(mediagate::VlmConfig, Option<mediagate::VlmConfig>)> {
    use mediagate::{Api, VlmConfig};
    let mut vlm = VlmConfig::new(Api::OpenAi, "https://api.openai.com/v1", "gpt-4o");
    vlm.api_key = std::env::var("OPENAI_API_KEY").ok();
    let from_env: Option<VlmConfig> =
        VlmConfig::resolve(None, None, None, |k| std::env::var(k).ok()).map_err(anyhow::Error::msg)?;
    Ok((vlm, from_env))
}

#[test]
fn the_embedding_guide_sets_the_vision_model_key() {
    let readme = std::fs::read_to_string(repo_root().join("docs/embedding.md")).unwrap();
    let source = std::fs::read_to_string(repo_root().join("tests/e2e/docs.rs")).unwrap();
    let start = source.find("    let mut vlm = VlmConfig::new").unwrap();
    let end = source[start..].find("    Ok((vlm, from_env))").unwrap() + start;
    for line in source[start..end].lines() {
        assert!(readme.contains(line.trim()), "docs/embedding.md must show `{}` as it compiles here", line.trim());
    }
    assert!(readme.contains("let tool = ReadImageTool::new(runtime, Some(vlm))?;"));
    // With OPENAI_API_KEY set the key arrives; the test process may or may not have one.
    let (vlm, _) = readme_vlm_setup().unwrap();
    assert_eq!(vlm.api_key, std::env::var("OPENAI_API_KEY").ok());
}

/// Every path ARCHITECTURE.md names as a module or a place in the tree, and that its map therefore
/// promises: the first column of each module table, relative to the folder its section's heading
/// names (`## The guest (`guest/src`)`), and the first word of each line of the map at the top.
fn architecture_paths(text: &str) -> Vec<(usize, PathBuf)> {
    let mut paths = Vec::new();
    let mut base: Option<PathBuf> = None;
    let mut in_map = false;
    let mut map_seen = false;
    for (n, line) in text.lines().enumerate() {
        let line_no = n + 1;
        if line.starts_with("```") {
            in_map = !in_map && !map_seen;
            map_seen = true;
            continue;
        }
        if in_map {
            let first = line.split_whitespace().next().unwrap_or("");
            if !line.starts_with(' ') && (first.contains('/') || first.contains('.')) {
                paths.push((line_no, PathBuf::from(first)));
            }
            continue;
        }
        if let Some(heading) = line.strip_prefix("## ") {
            // The folder a section is about, when its heading names one in `code`.
            base = heading.split('`').nth(1).map(PathBuf::from).filter(|p| repo_root().join(p).is_dir());
            continue;
        }
        let (Some(base), Some(row)) = (&base, line.strip_prefix("| `")) else { continue };
        let first_cell = row.split(" |").next().unwrap_or("");
        for name in first_cell.split('`').step_by(2).map(|s| s.trim_matches([',', ' '])) {
            if name.ends_with(".rs") || name.ends_with(".py") || name.ends_with('/') {
                paths.push((line_no, base.join(name)));
            }
        }
    }
    paths
}

#[test]
fn every_module_architecture_md_names_exists() {
    let text = std::fs::read_to_string(repo_root().join("ARCHITECTURE.md")).unwrap();
    let paths = architecture_paths(&text);
    // The map and the three module tables (guest, host, Python host) are all read.
    for expected in ["wit/", "guest/src/gate/image.rs", "lib/src/gate.rs", "hosts/python/mediagate_host/host.py"] {
        assert!(paths.iter().any(|(_, p)| p == Path::new(expected)), "{expected} is among the paths checked");
    }
    let missing: Vec<String> = paths
        .iter()
        .filter(|(_, p)| !repo_root().join(p).exists())
        .map(|(line, p)| format!("ARCHITECTURE.md line {line}: {} does not exist", p.display()))
        .collect();
    assert!(missing.is_empty(), "ARCHITECTURE.md names modules the tree does not have:\n{}", missing.join("\n"));
}

/// The reader itself: a module row and a map line that name nothing in the tree are reported.
#[test]
fn the_architecture_reader_catches_a_module_that_is_gone() {
    let text = "```\nguest/  the guest\nnowhere/gone.txt  gone\n```\n\n## The guest (`guest/src`)\n| module | what |\n|---|---|\n| `gate/image.rs`, `vanished.rs` | x |\n";
    let paths = architecture_paths(text);
    let missing: Vec<&PathBuf> = paths.iter().map(|(_, p)| p).filter(|p| !repo_root().join(p).exists()).collect();
    assert_eq!(missing, [Path::new("nowhere/gone.txt"), Path::new("guest/src/vanished.rs")]);
    assert!(paths.iter().any(|(_, p)| p == Path::new("guest/src/gate/image.rs")));
}
