//! The crate's map in its guide (the workspace's docs/DECOMPRESS.md) lists its files from the top
//! down and promises that each imports only files below it: checked here against the sources, so
//! that the map stays true and no import circle comes back. Every file of `src/` must be on it.

use std::collections::HashMap;
use std::fs;
use std::path::Path;

/// The map's files, top down, as paths in the crate.
fn map(root: &Path) -> Vec<String> {
    let doc = fs::read_to_string(root.join("../../docs/DECOMPRESS.md")).unwrap();
    doc.lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|row| row.split('`').next())
        .filter(|file| file.starts_with("src/") && file.ends_with(".rs"))
        .map(str::to_owned)
        .collect()
}

/// The modules of the crate that `source` names outside its test modules and comments:
/// `super::name` and `crate::name`.
fn named(source: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut lines = source.lines().peekable();
    while let Some(line) = lines.next() {
        let is_tests = lines
            .peek()
            .is_some_and(|next| next.trim_start() == "mod tests {");
        if line.trim_start() == "#[cfg(test)]" && is_tests {
            let indent = &line[..line.len() - line.trim_start().len()];
            lines.find(|line| *line == format!("{indent}}}"));
            continue;
        }
        if line.trim_start().starts_with("//") {
            continue;
        }
        for prefix in ["super::", "crate::"] {
            for (at, _) in line.match_indices(prefix) {
                let rest = &line[at + prefix.len()..];
                let end = rest
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                names.push(rest[..end].to_owned());
            }
        }
    }
    names
}

#[test]
fn each_file_of_the_crate_imports_only_files_below_it_on_the_map() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let map = map(root);
    let row: HashMap<String, usize> = (map.iter().enumerate())
        .map(|(row, file)| {
            (
                Path::new(file)
                    .file_stem()
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .to_owned(),
                row,
            )
        })
        .collect();
    let on_disk = fs::read_dir(root.join("src")).unwrap();
    for entry in on_disk {
        let file = format!("src/{}", entry.unwrap().file_name().to_str().unwrap());
        assert!(map.contains(&file), "{file} is not on the map");
    }
    let mut upward = Vec::new();
    for (at, file) in map.iter().enumerate() {
        let source = fs::read_to_string(root.join(file)).unwrap();
        for name in named(&source) {
            if row.get(&name).is_some_and(|&row| row <= at)
                && !file.ends_with(&format!("{name}.rs"))
            {
                upward.push(format!("{file} -> {name}"));
            }
        }
    }
    assert!(upward.is_empty(), "imports up the map: {upward:?}");
}

/// The check sees the crate's modules a file names, past a test module nested in another and
/// the code after it, and passes over comments and test modules.
#[test]
fn the_modules_a_file_names_are_seen() {
    let source = "use super::gzip::MAGIC;\n// see super::pool\nmod inner {\n    #[cfg(test)]\n    mod tests {\n        use super::parts;\n    }\n    use crate::spares::Spares;\n}\n#[cfg(test)]\nmod tests {\n    use super::pool;\n}\n";
    assert_eq!(named(source), ["gzip", "spares"]);
}
