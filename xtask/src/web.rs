//! `cargo xtask web`: `mcp web` driven in headless Chromium (Debian's `chromium`, installed if
//! missing) by `interop/web/web.mjs` (puppeteer-core of the apps harness, `interop/apps`),
//! against our `everything` example over stdio: a tool called through its generated form, the
//! traffic log filtered, a progress bar, an image, mixed content, audio, log messages, forms
//! with defaults, enums and a nested object, elicitation forms declined and answered (with a
//! `<script>` that the result must show as text), a sampling request edited and approved.
//! Screenshots of each step go to `target/web/`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, Result, bail};

use crate::interop::{build_examples, copy_scripts, install_node, install_npm_project};

/// Where the screenshots go, under the workspace root.
const SHOTS: &str = "target/web";

/// Runs the page's checks; fails if one fails.
pub fn run(root: &Path) -> Result<()> {
    crate::packages::ensure_these(&[crate::packages::BROWSER])?;
    let work = root.join("target/interop");
    let node = install_node(root, &work)?;
    let apps = install_npm_project(root, &work, "apps")?;
    copy_scripts(&root.join("interop/web"), &apps)?;
    let mcp = build_mcp(root)?;
    let [everything] = build_examples(root, ["everything"])?;
    println!("==> mcp web in headless Chromium, against everything (stdio)");
    let status = Command::new(&node)
        .arg(apps.join("web.mjs"))
        .arg(&everything)
        .arg("--stdio")
        .env("MCP_BIN", &mcp)
        .env("OUT_DIR", root.join(SHOTS))
        .env("CHROMIUM", "chromium")
        .current_dir(root)
        .stdin(Stdio::null())
        .status()
        .context("running node web.mjs")?;
    if !status.success() {
        bail!("mcp web in the browser failed ({status}); screenshots in {SHOTS}/");
    }
    println!("==> web: every step passed; screenshots in {SHOTS}/");
    Ok(())
}

/// Builds the `mcp` binary; its path.
fn build_mcp(root: &Path) -> Result<PathBuf> {
    println!("==> building mcp: cargo build -p mcp-cli --bin mcp");
    let out = Command::new(env!("CARGO"))
        .args(["build", "-p", "mcp-cli", "--bin", "mcp", "--message-format=json-render-diagnostics"])
        .current_dir(root)
        .stderr(Stdio::inherit())
        .output()
        .context("running cargo build")?;
    if !out.status.success() {
        bail!("building mcp failed ({})", out.status);
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|msg| msg["reason"] == "compiler-artifact" && msg["target"]["name"] == "mcp")
        .find_map(|msg| msg["executable"].as_str().map(PathBuf::from))
        .context("cargo reported no executable for mcp")
}
