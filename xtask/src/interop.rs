//! `cargo xtask interop`: our servers driven by the official MCP SDK clients (TypeScript and
//! Python), and our client driving official servers, over real stdio pipes and sockets.
//!
//! The clients, servers and their pinned versions live in `interop/` (see `interop/README.md`);
//! this installs them under `target/interop/`, once per set of pins, builds the examples, runs
//! every official client against `stdio_server` (stdio) and `http_server` (Streamable HTTP and
//! HTTP+SSE), the TypeScript SDK 2.x client speaking 2026-07-28 against both, that SDK's Skills
//! client (`interop/ts2/skills_client.mjs`, SEP-2640) against `everything`, then our client (the `interop_client` example) against
//! `@modelcontextprotocol/server-everything` (stdio, Streamable HTTP, and HTTP+SSE through
//! the client's fallback) and against
//! `interop/python/server.py`, and our client's sampling handler answering a tool loop of
//! `interop/ts/sampling_tools_server.mjs` (the `interop_sampling_tools` example, SEP-1577),
//! each run under a time limit, and last MCP Apps in a real host (`apps`: the official
//! `AppBridge` in headless Chromium, rendering the official example app and ours). It fails if
//! any check of any run fails.
//!
//! - `target/interop/node`: Node 22 from the npm package `node` (`interop/node/package.json`);
//!   the TypeScript client runs on it, whatever Node the machine has.
//! - `target/interop/ts`: `@modelcontextprotocol/sdk`, `@modelcontextprotocol/server-everything` and `jose`
//!   (`interop/ts/package.json`) and a copy of the client scripts, which must sit next to their
//!   `node_modules` to resolve the SDK.
//! - `target/interop/venv`: a Python venv with `mcp` (`interop/python/requirements.txt`), which
//!   runs both the Python client and the Python server.
//!
//! Each install records the pin files it installed (`.installed`) and is skipped while they
//! are unchanged, so a warm run costs only the client runs.

use std::fs;
use std::io::{Read as _, Write as _};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};

mod apps;
mod proxy;

pub(crate) use proxy::build_mcp;

/// How long one client run (spawn, handshake, every check, shutdown) may take before it is
/// killed: generous for a slow CI machine, short enough that a hang cannot stall CI.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a server may take to accept connections after it starts.
const SERVER_START_TIMEOUT: Duration = Duration::from_secs(30);

/// The record of what an install directory holds: the pin files it was installed from.
const STAMP: &str = ".installed";

/// One client, and how to start it against a server command line.
pub(crate) struct Client {
    pub(crate) name: &'static str,
    pub(crate) program: PathBuf,
    /// Arguments before the server's command line.
    pub(crate) args: Vec<String>,
    pub(crate) env: &'static [(&'static str, &'static str)],
}

/// Installs what is missing, builds the servers, runs every client against them.
pub fn run(root: &Path) -> Result<()> {
    let started = Instant::now();
    let Peers { node, ts, ts2, python } = install(root)?;
    println!("==> clients ready ({:.1} s)", started.elapsed().as_secs_f64());

    let [
        stdio_server,
        http_server,
        interop_client,
        interop_client_stateless,
        interop_sampling_tools,
        everything_server,
        interop_apps,
    ] = build_examples(
        root,
        [
            "stdio_server",
            "http_server",
            "interop_client",
            "interop_client_stateless",
            "interop_sampling_tools",
            "everything",
            "interop_apps",
        ],
    )?;
    let servers = [vec![stdio_server.display().to_string()]];
    // No `__pycache__` in the source tree; UTF-8 whatever the locale.
    let python_env: &[(&str, &str)] = &[("PYTHONDONTWRITEBYTECODE", "1"), ("PYTHONUTF8", "1")];
    let clients = [
        Client {
            name: "TypeScript SDK",
            program: node.clone(),
            args: vec![ts.join("client.mjs").display().to_string()],
            env: &[],
        },
        Client {
            name: "Python SDK",
            program: python.clone(),
            args: vec![root.join("interop/python/client.py").display().to_string()],
            env: python_env,
        },
    ];

    let mut failures = Vec::new();
    for server in &servers {
        for client in &clients {
            let outcome = run_client(root, client, server)?;
            if !outcome.passed {
                failures.push(format!("{} against `{}`: {}", client.name, server.join(" "), outcome.summary));
            }
        }
    }

    // The same clients against `http_server`, over Streamable HTTP and HTTP+SSE.
    {
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], free_port()?));
        let mut command = Command::new(&http_server);
        command.arg(addr.to_string());
        let _server = ServerProcess::start(command, addr, SERVER_START_TIMEOUT)?;
        // The TypeScript SDK 2.x client, pinned to 2026-07-28 (no handshake).
        let ts2_client = Client {
            name: "TypeScript SDK 2.x (2026-07-28)",
            program: node.clone(),
            args: vec![ts2.join("client.mjs").display().to_string()],
            env: &[],
        };
        for target in
            [vec!["--http".to_owned(), format!("http://{addr}/mcp")], vec![stdio_server.display().to_string()]]
        {
            let outcome = run_client(root, &ts2_client, &target)?;
            if !outcome.passed {
                failures.push(format!("{} against `{}`: {}", ts2_client.name, target.join(" "), outcome.summary));
            }
        }
        for client in &clients {
            for endpoint in [
                vec!["--http".to_owned(), format!("http://{addr}/mcp")],
                vec!["--sse".to_owned(), format!("http://{addr}/sse")],
            ] {
                let outcome = run_client(root, client, &endpoint)?;
                if !outcome.passed {
                    failures.push(format!("{} against http_server {}: {}", client.name, endpoint[0], outcome.summary));
                }
            }
        }
    }

    // The TypeScript SDK 2.x Skills client (SEP-2640) against `everything`, which serves
    // `examples/skills`: the listing, a skill got and read, every file verified by that SDK.
    {
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], free_port()?));
        let mut command = Command::new(&everything_server);
        command.args(["--http", &addr.to_string()]);
        let _server = ServerProcess::start(command, addr, SERVER_START_TIMEOUT)?;
        let client = Client {
            name: "TypeScript SDK 2.x skills (2026-07-28)",
            program: node.clone(),
            args: vec![ts2.join("skills_client.mjs").display().to_string()],
            env: &[],
        };
        let target = ["--http".to_owned(), format!("http://{addr}/mcp")];
        let outcome = run_client(root, &client, &target)?;
        if !outcome.passed {
            failures.push(format!("{} against everything: {}", client.name, outcome.summary));
        }
    }

    // The other direction: our client against the official servers.
    let everything = server_everything(&ts)?;
    let official_servers = [
        ("--server-everything", vec![node.display().to_string(), everything.display().to_string(), "stdio".to_owned()]),
        (
            "--server-everything-http",
            vec![node.display().to_string(), everything.display().to_string(), "streamableHttp".to_owned()],
        ),
        (
            "--server-everything-sse",
            vec![node.display().to_string(), everything.display().to_string(), "sse".to_owned()],
        ),
        ("--python", vec![python.display().to_string(), root.join("interop/python/server.py").display().to_string()]),
    ];
    for (flag, server) in &official_servers {
        let client = Client {
            name: "our",
            program: interop_client.clone(),
            args: vec![(*flag).to_owned()],
            // Passed on to the Python server.
            env: python_env,
        };
        let outcome = run_client(root, &client, server)?;
        if !outcome.passed {
            failures.push(format!("our client against `{}`: {}", server.join(" "), outcome.summary));
        }
    }
    // Sampling with tools (SEP-1577): a TypeScript SDK server's tool loop through our client's
    // sampling handler.
    {
        let client = Client {
            name: "our (sampling with tools)",
            program: interop_sampling_tools.clone(),
            args: Vec::new(),
            env: &[],
        };
        let server = [node.display().to_string(), ts.join("sampling_tools_server.mjs").display().to_string()];
        let outcome = run_client(root, &client, &server)?;
        if !outcome.passed {
            failures.push(format!(
                "our client's sampling with tools against `{}`: {}",
                server.join(" "),
                outcome.summary
            ));
        }
    }
    // Our client speaking 2026-07-28: against the TypeScript SDK 2.x server (stdio and HTTP)
    // and the Python SDK server, and falling back to `initialize` with server-everything.
    let ts2_server = ts2.join("server.mjs").display().to_string();
    let stateless_servers = [
        ("--ts2-stdio", vec![node.display().to_string(), ts2_server.clone(), "--stdio".to_owned()]),
        ("--ts2-http", vec![node.display().to_string(), ts2_server]),
        ("--python", vec![python.display().to_string(), root.join("interop/python/server.py").display().to_string()]),
        (
            "--fallback-http",
            vec![node.display().to_string(), everything.display().to_string(), "streamableHttp".to_owned()],
        ),
        ("--fallback-sse", vec![node.display().to_string(), everything.display().to_string(), "sse".to_owned()]),
    ];
    for (flag, server) in &stateless_servers {
        let client = Client {
            name: "our (2026-07-28)",
            program: interop_client_stateless.clone(),
            args: vec![(*flag).to_owned()],
            env: python_env,
        };
        let outcome = run_client(root, &client, server)?;
        if !outcome.passed {
            failures.push(format!("our 2026-07-28 client against `{}`: {}", server.join(" "), outcome.summary));
        }
    }
    // `mcp proxy`, both ways.
    let setup = proxy::Setup {
        clients: &clients,
        stdio_server: &stdio_server,
        http_server: &http_server,
        interop_client: &interop_client,
        everything: [node.display().to_string(), everything.display().to_string()],
        ts2_client: Client {
            name: "TypeScript SDK 2.x (2026-07-28)",
            program: node.clone(),
            args: vec![ts2.join("client.mjs").display().to_string()],
            env: &[],
        },
    };
    failures.extend(proxy::run(root, &setup)?);
    failures.extend(gateway(root, &clients, [&node.display().to_string(), &everything.display().to_string()])?);
    failures.extend(apps::run(
        root,
        &apps::Setup { node: &node, everything: &everything_server, interop_apps: &interop_apps },
    )?);
    if !failures.is_empty() {
        bail!("interop failed:\n  {}", failures.join("\n  "));
    }
    println!("==> interop: every run passed ({:.1} s)", started.elapsed().as_secs_f64());
    Ok(())
}

/// `cargo xtask apps`: the MCP Apps host runs of the interop step alone (see `apps`).
pub fn apps_only(root: &Path) -> Result<()> {
    let node = install_node(root, &root.join("target/interop"))?;
    let [everything, interop_apps] = build_examples(root, ["everything", "interop_apps"])?;
    let failures = apps::run(root, &apps::Setup { node: &node, everything: &everything, interop_apps: &interop_apps })?;
    if !failures.is_empty() {
        bail!("apps failed:\n  {}", failures.join("\n  "));
    }
    println!("==> apps: every run passed; screenshots in target/apps/");
    Ok(())
}

/// The official SDK clients (`MCP_INTEROP_CHECKS=gateway`: `gateway_checks.*`) through the
/// `gateway` example over Streamable HTTP, which mounts the official server-everything
/// (`official`, stdio: `node index.js stdio`) and our `everything` (`ours`, Streamable HTTP):
/// tools of both, a sampling round trip from ours and progress from the official one. The
/// failures.
fn gateway(root: &Path, clients: &[Client], official: [&str; 2]) -> Result<Vec<String>> {
    let [gateway, everything] = build_examples(root, ["gateway", "everything"])?;
    let ours = std::net::SocketAddr::from(([127, 0, 0, 1], free_port()?));
    let mut command = Command::new(&everything);
    command.args(["--http", &ours.to_string()]);
    let _ours = ServerProcess::start(command, ours, SERVER_START_TIMEOUT)?;
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], free_port()?));
    let mut command = Command::new(&gateway);
    command.args(["--http", &addr.to_string()]);
    command.args(["--mount", &format!("official={} {} stdio", official[0], official[1])]);
    command.args(["--mount", &format!("ours=http://{ours}/mcp")]);
    let _gateway = ServerProcess::start(command, addr, SERVER_START_TIMEOUT)?;
    let mut failures = Vec::new();
    for sdk in clients {
        // The process ends soon after: the environment is leaked, not freed.
        let env = Vec::leak([sdk.env, &[("MCP_INTEROP_CHECKS", "gateway")]].concat());
        let client = Client { name: sdk.name, program: sdk.program.clone(), args: sdk.args.clone(), env };
        let outcome = run_client(root, &client, &["--http".to_owned(), format!("http://{addr}/mcp")])?;
        if !outcome.passed {
            failures.push(format!("{} through the gateway: {}", sdk.name, outcome.summary));
        }
    }
    Ok(failures)
}

/// Installs Node from `interop/node` and returns its binary, checked to be the pinned version.
pub(crate) fn install_node(root: &Path, work: &Path) -> Result<PathBuf> {
    let dir = install_npm_project(root, work, "node")?;
    let manifest = read_manifest(&root.join("interop/node/package.json"))?;
    let pinned =
        manifest["dependencies"]["node"].as_str().context("interop/node/package.json pins no `node` version")?;
    // The package's preinstall script fetches the platform's binary and links it under one of
    // these names, depending on the package version.
    let candidates = ["node_modules/node/bin/node", "node_modules/.bin/node"];
    let node = candidates.iter().map(|c| dir.join(c)).find(|p| p.is_file()).with_context(|| {
        format!(
            "no node binary in {} (looked for {}); delete that directory and retry",
            dir.display(),
            candidates.join(", ")
        )
    })?;
    let out = Command::new(&node)
        .arg("--version")
        .output()
        .with_context(|| format!("running {} --version", node.display()))?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if version != format!("v{pinned}") {
        bail!("{} is {version:?}, expected v{pinned}; delete {} and retry", node.display(), dir.display());
    }
    println!("    node: {} ({version})", node.display());
    Ok(node)
}

/// Installs the npm project `interop/<name>` (its `package.json` and `package-lock.json`) into
/// `target/interop/<name>` with `npm ci`, unless those exact files are installed there already.
pub(crate) fn install_npm_project(root: &Path, work: &Path, name: &str) -> Result<PathBuf> {
    let src = root.join("interop").join(name);
    let dest = work.join(name);
    let files = ["package.json", "package-lock.json"];
    let mut pins = Vec::new();
    for file in files {
        let path = src.join(file);
        pins.extend(fs::read(&path).with_context(|| format!("reading {}", path.display()))?);
    }
    let what = describe_dependencies(&read_manifest(&src.join("package.json"))?);
    if dest.join("node_modules").is_dir() && fs::read(dest.join(STAMP)).ok() == Some(pins.clone()) {
        println!("==> {what}: installed in {}", dest.display());
        return Ok(dest);
    }
    println!("==> installing {what} into {} (npm ci)", dest.display());
    fs::create_dir_all(&dest).with_context(|| format!("creating {}", dest.display()))?;
    // Gone until the install succeeds, so that an interrupted one is redone next time.
    remove_if_present(&dest.join(STAMP))?;
    for file in files {
        fs::copy(src.join(file), dest.join(file)).with_context(|| format!("copying interop/{name}/{file}"))?;
    }
    let status = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund"])
        .current_dir(&dest)
        .status()
        .context("running npm (is Node.js with npm installed and on PATH?)")?;
    if !status.success() {
        bail!(
            "installing {what} failed: `npm ci` in {} exited with {status} (is the npm registry reachable?)",
            dest.display()
        );
    }
    fs::write(dest.join(STAMP), pins)?;
    Ok(dest)
}

/// Creates the venv `target/interop/venv` with `interop/python/requirements.txt` installed,
/// unless it already holds exactly those pins; returns its Python.
pub(crate) fn install_python(root: &Path, work: &Path) -> Result<PathBuf> {
    let requirements = root.join("interop/python/requirements.txt");
    let pins = fs::read(&requirements).with_context(|| format!("reading {}", requirements.display()))?;
    let venv = work.join("venv");
    let python = venv.join("bin/python");
    let mcp = String::from_utf8_lossy(&pins)
        .lines()
        .find(|l| l.starts_with("mcp=="))
        .map(|l| l.replacen("==", " ", 1))
        .unwrap_or_else(|| "mcp".to_owned());
    if python.is_file() && fs::read(venv.join(STAMP)).ok() == Some(pins.clone()) {
        println!("==> {mcp} (Python): installed in {}", venv.display());
        return Ok(python);
    }
    println!("==> installing {mcp} (Python) into {}", venv.display());
    // From scratch: a pin change then leaves nothing of the old set behind.
    if venv.exists() {
        fs::remove_dir_all(&venv).with_context(|| format!("removing {}", venv.display()))?;
    }
    let status = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .context("running python3 (is Python 3 installed and on PATH?)")?;
    if !status.success() {
        bail!(
            "`python3 -m venv {}` exited with {status} (is the venv module installed, e.g. Debian's python3-venv?)",
            venv.display()
        );
    }
    let status = Command::new(&python)
        .args(["-m", "pip", "install", "--disable-pip-version-check", "--quiet", "-r"])
        .arg(&requirements)
        .status()
        .with_context(|| format!("running {} -m pip", python.display()))?;
    if !status.success() {
        bail!("installing {mcp} failed: pip exited with {status} (is PyPI reachable?)");
    }
    fs::write(venv.join(STAMP), pins)?;
    Ok(python)
}

/// Copies the client scripts next to the installed `node_modules` (ESM imports resolve from
/// the importing file's directory, and neither NODE_PATH nor the working directory changes
/// that). Done on every run: it is cheap, and the copies never go stale.
pub(crate) fn copy_scripts(src: &Path, dest: &Path) -> Result<()> {
    for entry in fs::read_dir(src).with_context(|| format!("reading {}", src.display()))? {
        let entry = entry?;
        let name = entry.file_name();
        let (from, to) = (entry.path(), dest.join(&name));
        if entry.file_type()?.is_dir() {
            if name != "node_modules" {
                fs::create_dir_all(&to)?;
                copy_scripts(&from, &to)?;
            }
        } else {
            fs::copy(&from, &to).with_context(|| format!("copying {} to {}", from.display(), to.display()))?;
        }
    }
    Ok(())
}

/// Builds examples (in one cargo run) and returns their executables, as cargo reports them
/// (so that `CARGO_TARGET_DIR` and the like are honoured).
pub(crate) fn build_examples<const N: usize>(root: &Path, names: [&str; N]) -> Result<[PathBuf; N]> {
    let flags: Vec<String> = names.iter().map(|n| format!("--example={n}")).collect();
    println!("==> building the examples: cargo build {}", flags.join(" "));
    let out = Command::new(env!("CARGO"))
        .arg("build")
        .args(&flags)
        .arg("--message-format=json-render-diagnostics")
        .current_dir(root)
        .stderr(Stdio::inherit())
        .output()
        .context("running cargo build")?;
    if !out.status.success() {
        bail!("building the examples {names:?} failed ({})", out.status);
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let artifacts: Vec<serde_json::Value> = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|msg| {
            msg["reason"] == "compiler-artifact"
                && msg["target"]["kind"].as_array().is_some_and(|kinds| kinds.iter().any(|k| k == "example"))
        })
        .collect();
    let mut paths: [PathBuf; N] = std::array::from_fn(|_| PathBuf::new());
    for (path, name) in paths.iter_mut().zip(names) {
        *path = artifacts
            .iter()
            .filter(|msg| msg["target"]["name"] == name)
            .find_map(|msg| msg["executable"].as_str().map(PathBuf::from))
            .with_context(|| format!("cargo reported no executable for the `{name}` example"))?;
    }
    Ok(paths)
}

/// The official peers under `target/interop`, installed.
pub(crate) struct Peers {
    /// Node 22.
    pub(crate) node: PathBuf,
    /// The TypeScript SDK 1.x and server-everything, with our scripts.
    pub(crate) ts: PathBuf,
    /// The TypeScript SDK 2.x, with our scripts.
    pub(crate) ts2: PathBuf,
    /// The Python SDK's virtual environment's interpreter.
    pub(crate) python: PathBuf,
}

/// Installs (or finds installed) Node 22, the TypeScript SDKs, server-everything and the
/// Python SDK under `target/interop`: the interop step's peers, which the tests of `mcp-cli`
/// use too (`cargo xtask ci` installs them before the tests).
pub(crate) fn install(root: &Path) -> Result<Peers> {
    let work = root.join("target/interop");
    let node = install_node(root, &work)?;
    let ts = install_npm_project(root, &work, "ts")?;
    copy_scripts(&root.join("interop/ts"), &ts)?;
    let ts2 = install_npm_project(root, &work, "ts2")?;
    copy_scripts(&root.join("interop/ts2"), &ts2)?;
    let python = install_python(root, &work)?;
    Ok(Peers { node, ts, ts2, python })
}

/// The entry point of the installed `@modelcontextprotocol/server-everything`; it takes the
/// transport as its argument (`stdio`).
fn server_everything(ts: &Path) -> Result<PathBuf> {
    package_bin(ts, "@modelcontextprotocol/server-everything")
}

/// The entry point of the npm package `package` installed in `project`, from its manifest's
/// `bin` (the first one, if it has several).
pub(crate) fn package_bin(project: &Path, package: &str) -> Result<PathBuf> {
    let dir = project.join("node_modules").join(package);
    let manifest = read_manifest(&dir.join("package.json"))?;
    let bin = match &manifest["bin"] {
        serde_json::Value::String(bin) => Some(bin.as_str()),
        serde_json::Value::Object(bins) => bins.values().find_map(|b| b.as_str()),
        _ => None,
    };
    let entry = dir.join(bin.with_context(|| format!("{package} declares no `bin`"))?);
    if !entry.is_file() {
        bail!("{} is missing; delete {} and retry", entry.display(), project.display());
    }
    Ok(entry)
}

/// A free TCP port on the loopback interface (free when asked; the server binds it right after).
pub(crate) fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).context("binding a free local port")?;
    Ok(listener.local_addr()?.port())
}

/// A server process listening on `addr`, killed (with what it started) when dropped.
pub(crate) struct ServerProcess {
    child: std::process::Child,
}

impl ServerProcess {
    /// Starts `command` and waits until `addr` accepts connections, at most `limit`.
    pub(crate) fn start(mut command: Command, addr: std::net::SocketAddr, limit: Duration) -> Result<Self> {
        let shown = format!("{command:?}");
        let child = command
            .stdin(Stdio::null())
            // Its logs go with ours.
            .stdout(Stdio::inherit())
            .stderr(Stdio::inherit())
            .process_group(0)
            .spawn()
            .with_context(|| format!("starting {shown}"))?;
        let mut server = ServerProcess { child };
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = server.child.try_wait()? {
                bail!("{shown} exited ({status}) before accepting connections on {addr}");
            }
            if std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                return Ok(server);
            }
            if Instant::now() > deadline {
                bail!("{shown} accepted no connection on {addr} within {} s", limit.as_secs());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        // The whole process group: `node` servers may have children.
        let _ = Command::new("kill").args(["-KILL", "--", &format!("-{}", self.child.id())]).status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What one client run came to.
pub(crate) struct Outcome {
    pub(crate) passed: bool,
    /// The client's `N passed, M failed` line, or why there is none.
    pub(crate) summary: String,
}

/// Runs one client against one server, streaming its output (stdout and stderr, the server's
/// stderr included, interleaved as written), and kills it and its server at the time limit.
pub(crate) fn run_client(root: &Path, client: &Client, server: &[String]) -> Result<Outcome> {
    println!("==> {} client against `{}`", client.name, server.join(" "));
    let mut command = Command::new(&client.program);
    command.args(&client.args).args(server).envs(client.env.iter().copied()).current_dir(root);
    let run = run_with_limit(command, CLIENT_TIMEOUT)?;
    let summary = run.output.lines().rev().find_map(parse_summary);
    let outcome = match (run.status, summary) {
        (None, summary) => Outcome {
            passed: false,
            summary: match run.exited_before_kill {
                // The client is done but something it started, i.e. the server, still holds
                // its output open: the server did not exit when the client let it go.
                Some(status) => format!(
                    "the client finished ({}, exit: {status}) but a process it started was still running after {} s (killed)",
                    summary.map_or("no summary".to_owned(), |(p, f)| format!("{p} passed, {f} failed")),
                    CLIENT_TIMEOUT.as_secs()
                ),
                None => format!("timed out after {} s (killed)", CLIENT_TIMEOUT.as_secs()),
            },
        },
        (Some(status), Some((passed, failed))) => Outcome {
            passed: status.success() && failed == 0 && passed > 0,
            summary: format!("{passed} passed, {failed} failed (exit: {status})"),
        },
        (Some(status), None) => {
            Outcome { passed: false, summary: format!("no `N passed, M failed` line (exit: {status})") }
        }
    };
    if !outcome.passed {
        println!("==> {} client FAILED: {}", client.name, outcome.summary);
    }
    Ok(outcome)
}

/// How a command run by [`run_with_limit`] ended.
pub(crate) struct Finished {
    /// Its exit status; `None` if it was killed at the time limit.
    pub(crate) status: Option<ExitStatus>,
    /// When killed: its own exit status, if it had exited by then (and something it started
    /// still held its output open).
    pub(crate) exited_before_kill: Option<ExitStatus>,
    /// Its stdout and stderr, interleaved as written.
    pub(crate) output: String,
}

/// Runs `command` (stdin closed) in a process group of its own, streaming its stdout and
/// stderr to ours as it writes them, and kills the whole group if its output is still open
/// after `limit`.
pub(crate) fn run_with_limit(mut command: Command, limit: Duration) -> Result<Finished> {
    // One pipe for both streams keeps their lines in order.
    let (mut reader, writer) = std::io::pipe()?;
    command
        .stdin(Stdio::null())
        .stdout(writer.try_clone()?)
        .stderr(writer)
        // Its own process group, so that a timeout can kill what it started along with it.
        .process_group(0);
    let program = command.get_program().to_owned();
    let mut child = command.spawn().with_context(|| format!("starting {}", program.display()))?;
    // The command holds our copies of the pipe's write end; without dropping them the reader
    // would never see end of file.
    drop(command);

    let output = Arc::new(Mutex::new(Vec::new()));
    let (done_tx, done_rx) = mpsc::channel();
    {
        let output = Arc::clone(&output);
        std::thread::spawn(move || {
            let mut chunk = [0u8; 8192];
            loop {
                let n = match reader.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                };
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(&chunk[..n]);
                let _ = out.flush();
                output.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(&chunk[..n]);
            }
            let _ = done_tx.send(());
        });
    }

    // End of file on the pipe means the command (and whatever it started that shares its
    // output) has closed its output, which it does by exiting.
    let mut exited_before_kill = None;
    let status = match done_rx.recv_timeout(limit) {
        Ok(()) => Some(child.wait()?),
        Err(_) => {
            // Not yet reaped, so the group still exists even if the command itself is done.
            exited_before_kill = child.try_wait()?;
            let group = format!("-{}", child.id());
            let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
            let _ = child.wait();
            None
        }
    };
    let output = String::from_utf8_lossy(&output.lock().unwrap_or_else(|e| e.into_inner())).into_owned();
    Ok(Finished { status, exited_before_kill, output })
}

/// `(passed, failed)` from a line exactly like `7 passed, 0 failed`.
fn parse_summary(line: &str) -> Option<(u32, u32)> {
    let (passed, failed) = line.trim().split_once(" passed, ")?;
    Some((passed.parse().ok()?, failed.strip_suffix(" failed")?.parse().ok()?))
}

/// `a 1.0, b 2.0` from a `package.json`'s dependencies.
fn describe_dependencies(manifest: &serde_json::Value) -> String {
    manifest["dependencies"]
        .as_object()
        .map(|deps| {
            deps.iter()
                .map(|(name, version)| format!("{name} {}", version.as_str().unwrap_or("?")))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

fn read_manifest(path: &Path) -> Result<serde_json::Value> {
    let text = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

fn remove_if_present(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("removing {}", path.display()))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_lines_parse() {
        assert_eq!(parse_summary("7 passed, 0 failed"), Some((7, 0)));
        assert_eq!(parse_summary("0 passed, 8 failed\n"), Some((0, 8)));
        assert_eq!(parse_summary("ok - 7 passed, 0 failed"), None);
        assert_eq!(parse_summary("7 passed, 0 failed!"), None);
    }
}
