//! The crate table of `docs/architecture.md` names, for every crate of the workspace, exactly
//! the fdlab crates its `Cargo.toml` lists under `[dependencies]`: the doc cannot drift from
//! the build.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The workspace root (this crate is `crates/fdlab-output`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A short name of the table ("core", "front") as the crate's name ("fdlab-core", "fdlab").
fn crate_name(short: &str) -> String {
    match short {
        "front" => "fdlab".to_string(),
        s => format!("fdlab-{s}"),
    }
}

/// The table's rows: crate name → the fdlab crates in its "depends on" column. A row's first
/// cell starts with the crate's name in backticks; the last cell is `—` or short names
/// separated by commas.
fn documented(doc: &str) -> BTreeMap<String, BTreeSet<String>> {
    let section = doc
        .split("\n## Crates")
        .nth(1)
        .expect("docs/architecture.md has a `## Crates` section");
    let section = section.split("\n## ").next().unwrap_or(section);
    let mut rows = BTreeMap::new();
    for line in section.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let name = cells[0]
            .strip_prefix('`')
            .and_then(|c| c.split('`').next())
            .expect("a crate name in backticks")
            .to_string();
        let deps = cells.last().copied().unwrap_or_default();
        let deps: BTreeSet<String> = match deps {
            "—" => BTreeSet::new(),
            d => d.split(',').map(|s| crate_name(s.trim())).collect(),
        };
        assert!(rows.insert(name.clone(), deps).is_none(), "{name} twice");
    }
    rows
}

/// Every crate under `crates/` → the fdlab crates of its `[dependencies]`.
fn built() -> BTreeMap<String, BTreeSet<String>> {
    let mut crates = BTreeMap::new();
    for e in std::fs::read_dir(root().join("crates")).unwrap().flatten() {
        let Ok(text) = std::fs::read_to_string(e.path().join("Cargo.toml")) else {
            continue;
        };
        let manifest: toml::Table = text.parse().unwrap();
        let name = manifest["package"]["name"].as_str().unwrap().to_string();
        let deps = manifest
            .get("dependencies")
            .and_then(|d| d.as_table())
            .map(|d| {
                d.keys()
                    .filter(|k| *k == "fdlab" || k.starts_with("fdlab-"))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        crates.insert(name, deps);
    }
    crates
}

#[test]
fn the_architecture_docs_crate_table_matches_every_cargo_toml() {
    let doc = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let documented = documented(&doc);
    let built = built();
    assert!(built.contains_key("fdlab-output") && built.len() >= 10);
    let names = |m: &BTreeMap<String, _>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        names(&documented),
        names(&built),
        "docs/architecture.md's crate table lists other crates than crates/"
    );
    for (name, deps) in &built {
        assert_eq!(
            &documented[name], deps,
            "docs/architecture.md: the \"depends on\" of `{name}` differs from its Cargo.toml"
        );
    }
}

/// Every `.rs` file under `dir`, recursively, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// The CUDA declarations that mark kernel source text: a kernel or a device function.
const CUDA_MARKS: [&str; 2] = ["__global__", "__device__"];

/// CUDA source text is written only by the generator crate: no other crate's sources
/// (`crates/*/src/**/*.rs`) declare a kernel or a device function, so that every kernel
/// comes from `fdlab-cuda`'s `codegen`.
#[test]
fn cuda_source_text_is_written_only_in_fdlab_cuda() {
    let mut found = vec![];
    let mut scanned = 0;
    for e in std::fs::read_dir(root().join("crates")).unwrap().flatten() {
        if e.file_name() == "fdlab-cuda" {
            continue;
        }
        for file in rust_files(&e.path().join("src")) {
            scanned += 1;
            let text = std::fs::read_to_string(&file).unwrap();
            for (i, line) in text.lines().enumerate() {
                if CUDA_MARKS.iter().any(|m| line.contains(m)) {
                    let shown = file.strip_prefix(root()).unwrap_or(&file).display();
                    found.push(format!("{shown}:{}: {}", i + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        scanned > 100,
        "only {scanned} source files found under crates/"
    );
    assert!(
        found.is_empty(),
        "CUDA source text outside fdlab-cuda (move its generator to fdlab-cuda's codegen):\n{}",
        found.join("\n")
    );
}
