//! `cargo xtask codegen`: generates `crates/mcp-types/src/generated/` from the vendored schemas.
//!
//! Schema → per-revision lowering and cross-revision merge (`model`) → `quote!` rendering
//! formatted by prettyplease (`render`). The output is deterministic: everything is sorted.

mod config;
mod model;
mod render;

use std::path::{Path, PathBuf};

use anyhow::Result;

/// The generated files: (absolute path, contents).
pub fn generate(root: &Path) -> Result<Vec<(PathBuf, String)>> {
    let types = root.join("crates/mcp-types");
    let model = model::load(&types.join("schema"))?;
    let files = render::render(&model)?;
    Ok(files.into_iter().map(|(name, text)| (types.join("src/generated").join(name), text)).collect())
}

/// Writes the generated files.
pub fn run(root: &Path) -> Result<()> {
    for (path, text) in generate(root)? {
        let old = std::fs::read_to_string(&path).unwrap_or_default();
        if old != text {
            std::fs::write(&path, text)?;
            println!("wrote {}", path.display());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn generated_files_are_fresh() {
        let root = crate::project_root();
        for (path, text) in super::generate(&root).unwrap() {
            let committed = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(committed == text, "{} is stale: run `cargo xtask codegen`", path.display());
        }
    }
}
