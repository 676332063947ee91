//! MCP Apps (SEP-1865) in the interop run, in a real host: `interop/apps/host.mjs` drives
//! headless Chromium (Debian's `chromium`, installed if missing) through a page that runs the
//! official `AppBridge` of `@modelcontextprotocol/ext-apps`, the host side of the view
//! protocol, and the official TypeScript SDK 2.x client. It renders
//!
//! - the official example app server `@modelcontextprotocol/server-basic-vanillajs` (stdio):
//!   the harness's own check, so that a failure with ours is ours;
//! - our `everything` (Streamable HTTP): its app shows the tool's result, and its buttons call
//!   a tool back through the host, send a message and a link to the host and grow the view
//!   (which the host's frame follows); the host applies the view's declared CSP, which blocks
//!   a fetch to an undeclared origin.
//!
//! Screenshots of each go to `target/apps/`. Then the other direction: our client as a host
//! (`interop_apps`: `ClientBuilder::apps`, the view read and checked, a view's `tools/call`
//! through `apps::host`) against the official example app server.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Result;

use super::{Client, SERVER_START_TIMEOUT, ServerProcess, copy_scripts, free_port, install_npm_project, run_client};

/// Where the screenshots go, under the workspace root.
const SHOTS: &str = "target/apps";

/// What the runs need: Node 22 and the `everything` and `interop_apps` examples.
pub(super) struct Setup<'a> {
    pub(super) node: &'a Path,
    pub(super) everything: &'a Path,
    pub(super) interop_apps: &'a Path,
}

/// Runs the host against both servers; the failures.
pub(super) fn run(root: &Path, setup: &Setup<'_>) -> Result<Vec<String>> {
    crate::packages::ensure_these(&[crate::packages::BROWSER])?;
    let work = root.join("target/interop");
    let apps = install_npm_project(root, &work, "apps")?;
    copy_scripts(&root.join("interop/apps"), &apps)?;
    let shots = root.join(SHOTS);
    let host = |name: &'static str, extra: &[(&'static str, &'static str)]| -> Client {
        let out = Box::leak(shots.display().to_string().into_boxed_str());
        // The process ends soon after: the environment is leaked, not freed.
        let env = Vec::leak([&[("OUT_DIR", &*out), ("APP_NAME", name), ("CHROMIUM", "chromium")], extra].concat());
        Client {
            name: "MCP Apps host (official AppBridge, headless Chromium)",
            program: setup.node.to_path_buf(),
            args: vec![apps.join("host.mjs").display().to_string()],
            env,
        }
    };
    let mut failures = Vec::new();

    // The harness against the official example app server.
    let vanilla: PathBuf = super::package_bin(&apps, "@modelcontextprotocol/server-basic-vanillajs")?;
    let client = host("basic-vanillajs", &[("APP_CLICK", "#get-time-btn")]);
    let server =
        ["--stdio".to_owned(), setup.node.display().to_string(), vanilla.display().to_string(), "--stdio".to_owned()];
    let outcome = run_client(root, &client, &server)?;
    if !outcome.passed {
        failures.push(format!("the apps host against server-basic-vanillajs: {}", outcome.summary));
    }

    // Ours.
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], free_port()?));
    let mut command = Command::new(setup.everything);
    command.args(["--http", &addr.to_string()]);
    let _server = ServerProcess::start(command, addr, SERVER_START_TIMEOUT)?;
    let client = host("everything", EVERYTHING_APP);
    let outcome = run_client(root, &client, &["--url".to_owned(), format!("http://{addr}/mcp")])?;
    if !outcome.passed {
        failures.push(format!("the apps host against everything: {}", outcome.summary));
    }

    // Our client as the host, against the official example app server.
    let client = Client {
        name: "our (MCP Apps host side)",
        program: setup.interop_apps.to_path_buf(),
        args: Vec::new(),
        env: &[],
    };
    let server = [setup.node.display().to_string(), vanilla.display().to_string(), "--stdio".to_owned()];
    let outcome = run_client(root, &client, &server)?;
    if !outcome.passed {
        failures.push(format!("our client against server-basic-vanillajs: {}", outcome.summary));
    }
    Ok(failures)
}

/// What the host checks of `everything`'s app, the counter (`examples/apps/counter.html`): the
/// `counter` tool called with `start` 41 shows "Count: 41" (its `structuredContent`, which the
/// server sends only to a client that declared the apps extension), and the view's button
/// calls `counter_increment` (a tool for the app only) through the host: "Count: 42". Then
/// "Tell the chat" reaches the host as that exact `ui/message`, "Open the docs" as that
/// `ui/open-link` (which the host answers, opening nothing), "Add a line" makes the view
/// report a greater height, which the host's frame takes; and the view's declared CSP
/// (`connectDomains` `http://127.0.0.1:*`), applied by the host, lets a fetch to a local port
/// through and blocks one to `localhost`, which the view reports.
const EVERYTHING_APP: &[(&str, &str)] = &[
    ("APP_TOOL", "counter"),
    ("APP_INPUT", r#"{"start": 41}"#),
    ("APP_EXPECT_TEXT", "Count: 41"),
    ("APP_CLICK", "#increment"),
    ("APP_EXPECT_AFTER_CLICK", "Count: 42"),
    ("APP_MESSAGE_CLICK", "#tell"),
    ("APP_EXPECT_MESSAGE", r#"{"role": "user", "content": [{"type": "text", "text": "The count is 42."}]}"#),
    ("APP_LINK_CLICK", "#docs"),
    ("APP_EXPECT_LINK", "https://github.com/modelcontextprotocol/ext-apps"),
    ("APP_RESIZE_CLICK", "#add-line"),
    ("APP_EXPECT_CSP", r#"{"connectDomains": ["http://127.0.0.1:*"]}"#),
    ("APP_CSP_PROBE", "1"),
];
