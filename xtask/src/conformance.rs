//! `cargo xtask conformance`: the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, pinned in `interop/conformance/`) against our server
//! and our client.
//!
//! - **Server scenarios**: the `everything` example serves Streamable HTTP on a free local
//!   port; `conformance server --suite all` (the active scenarios and the pending ones) runs
//!   against `http://127.0.0.1:<port>/mcp`; the server is killed afterwards, whatever happened.
//! - **Client scenarios**: every scenario `conformance list --client` names, except the
//!   `auth/` ones, runs `conformance client --scenario <name>` with the `conformance_client`
//!   example as the client command.
//!
//! Each scenario writes its checks to `checks.json` under `target/interop/conformance-results/`
//! (emptied at the start of each run). A scenario passes when every one of its checks is
//! `SUCCESS` or `INFO` (a `WARNING` fails as a `FAILURE` does) and the suite's process exited
//! with 0 (for a client scenario that also covers our client failing or hanging). The command
//! prints one line per scenario and fails if any scenario failed. There is no list of expected
//! failures.
//!
//! The suite runs on the Node that `cargo xtask interop` installs (`target/interop/node`), and is
//! installed next to it (`target/interop/conformance`), once per pin.

use std::collections::BTreeMap;
use std::fs;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};

use crate::interop::{self, Finished};

/// How long the whole server suite may run: about thirty scenarios, each quick, a few waiting
/// on timers of up to 15 s when a server misbehaves.
const SERVER_SUITE_TIMEOUT: Duration = Duration::from_secs(300);

/// How long one client scenario may run. The suite gives the client 30 s (`--timeout`) and
/// then reports; this limit only catches the suite itself hanging.
const CLIENT_SCENARIO_TIMEOUT: Duration = Duration::from_secs(90);

/// The client's own time limit inside the suite, in milliseconds.
const CLIENT_TIMEOUT_MS: &str = "30000";

/// How long the server may take to accept connections after it starts.
const SERVER_START_TIMEOUT: Duration = Duration::from_secs(30);

/// The installed suite: how to run its command line.
struct Suite {
    node: PathBuf,
    cli: PathBuf,
}

impl Suite {
    fn command(&self, root: &Path) -> Command {
        let mut command = Command::new(&self.node);
        command.arg(&self.cli).current_dir(root);
        command
    }

    /// The scenarios `conformance list --<side>` names (`side` is `server` or `client`).
    fn list(&self, root: &Path, side: &str) -> Result<Vec<String>> {
        let out = self.command(root).args(["list", &format!("--{side}")]).stderr(Stdio::inherit()).output()?;
        if !out.status.success() {
            bail!("`conformance list --{side}` exited with {}", out.status);
        }
        let names = parse_list(&String::from_utf8_lossy(&out.stdout));
        if names.is_empty() {
            bail!("`conformance list --{side}` named no scenario");
        }
        Ok(names)
    }
}

/// Installs the suite, builds our server and client, runs every scenario.
pub fn run(root: &Path) -> Result<()> {
    let work = root.join("target/interop");
    let started = Instant::now();
    let node = interop::install_node(root, &work)?;
    let project = interop::install_npm_project(root, &work, "conformance")?;
    let suite = Suite { node, cli: interop::package_bin(&project, "@modelcontextprotocol/conformance")? };
    let results = work.join("conformance-results");
    if results.exists() {
        fs::remove_dir_all(&results).with_context(|| format!("removing {}", results.display()))?;
    }

    let [everything] = interop::build_examples(root, ["everything"])?;
    let mut failed = server_scenarios(root, &suite, &everything, &results.join("server"))?;
    match interop::build_examples(root, ["conformance_client"]) {
        Ok([client]) => failed.extend(client_scenarios(root, &suite, &client, &results.join("client"))?),
        Err(e) => failed.push(format!("client scenarios not run: {e:#}")),
    }

    if !failed.is_empty() {
        bail!("conformance failed (results in {}):\n  {}", results.display(), failed.join("\n  "));
    }
    println!("==> conformance: every scenario passed ({:.1} s)", started.elapsed().as_secs_f64());
    Ok(())
}

/// Runs the server suite against `everything` served over HTTP; returns what failed.
fn server_scenarios(root: &Path, suite: &Suite, everything: &Path, out: &Path) -> Result<Vec<String>> {
    let scenarios = suite.list(root, "server")?;
    let addr = SocketAddr::from(([127, 0, 0, 1], interop::free_port()?));
    let url = format!("http://{addr}/mcp");
    println!("==> conformance server scenarios ({}) against `everything` at {url}", scenarios.len());
    let mut command = Command::new(everything);
    command.args(["--http", &addr.to_string()]);
    let server = interop::ServerProcess::start(command, addr, SERVER_START_TIMEOUT)?;
    let mut command = suite.command(root);
    command.args(["server", "--url", &url, "--suite", "all", "--output-dir"]).arg(out);
    let run = interop::run_with_limit(command, SERVER_SUITE_TIMEOUT);
    drop(server);
    let run = run?;

    let mut found = read_server_results(out)?;
    let verdicts: Vec<Verdict> = scenarios.iter().map(|s| Verdict::new(s, found.remove(s))).collect();
    report("server", &verdicts);
    for extra in found.keys() {
        println!("    (results for `{extra}`, which `conformance list --server` does not name)");
    }
    let mut failed: Vec<String> =
        verdicts.iter().filter(|v| !v.passed()).map(|v| format!("server {}", v.scenario)).collect();
    // The suite exits with 1 when a check failed, which the scenarios already say; otherwise
    // (it hung, or died with every check passing) that is a failure of its own.
    if let Some(problem) = exit_problem(&run, SERVER_SUITE_TIMEOUT)
        && (run.status.is_none() || failed.is_empty())
    {
        println!("    FAIL the server suite: {problem}");
        failed.push(format!("server suite: {problem}"));
    }
    Ok(failed)
}

/// Runs every client scenario but the `auth/` ones, one at a time, with `client` as the
/// client command; returns what failed.
fn client_scenarios(root: &Path, suite: &Suite, client: &Path, out: &Path) -> Result<Vec<String>> {
    let scenarios: Vec<String> = suite.list(root, "client")?.into_iter().filter(|s| !s.starts_with("auth/")).collect();
    println!("==> conformance client scenarios ({}, without auth/) with {}", scenarios.len(), client.display());
    // The suite splits the command at spaces (and runs it through a shell).
    let client = client.to_str().filter(|c| !c.contains(char::is_whitespace)).with_context(|| {
        format!("the suite cannot run a client whose path has spaces or is not UTF-8: {}", client.display())
    })?;
    let mut verdicts = Vec::new();
    for scenario in &scenarios {
        println!("==> conformance client scenario {scenario}");
        let dir = out.join(scenario.replace('/', "_"));
        let mut command = suite.command(root);
        command
            .args(["client", "--command", client, "--scenario", scenario, "--timeout", CLIENT_TIMEOUT_MS])
            .arg("--output-dir")
            .arg(&dir);
        let run = interop::run_with_limit(command, CLIENT_SCENARIO_TIMEOUT)?;
        let mut verdict = Verdict::new(scenario, find_checks(&dir)?);
        verdict.process = exit_problem(&run, CLIENT_SCENARIO_TIMEOUT);
        verdicts.push(verdict);
    }
    report("client", &verdicts);
    Ok(verdicts.iter().filter(|v| !v.passed()).map(|v| format!("client {}", v.scenario)).collect())
}

/// What is wrong with how the suite's process ended, if anything.
fn exit_problem(run: &Finished, limit: Duration) -> Option<String> {
    match run.status {
        None => Some(format!("the conformance suite was still running after {} s (killed)", limit.as_secs())),
        Some(status) if !status.success() => Some(format!("the conformance suite exited with {status}")),
        Some(_) => None,
    }
}

/// One check of a scenario, as `checks.json` records it.
#[derive(Debug)]
struct Check {
    id: String,
    status: String,
    message: Option<String>,
}

impl Check {
    /// `SUCCESS` and `INFO` pass; `FAILURE`, `WARNING` and anything else fail.
    fn ok(&self) -> bool {
        matches!(self.status.as_str(), "SUCCESS" | "INFO")
    }
}

/// What a scenario came to.
struct Verdict {
    scenario: String,
    /// Its checks; `None` if it wrote none.
    checks: Option<Vec<Check>>,
    /// What went wrong with the suite's process, if anything.
    process: Option<String>,
}

impl Verdict {
    fn new(scenario: &str, checks: Option<Vec<Check>>) -> Self {
        Verdict { scenario: scenario.to_owned(), checks, process: None }
    }

    fn passed(&self) -> bool {
        self.process.is_none() && self.checks.as_ref().is_some_and(|c| !c.is_empty() && c.iter().all(Check::ok))
    }

    fn count(&self, status: &str) -> usize {
        self.checks.iter().flatten().filter(|c| c.status == status).count()
    }
}

/// Prints one line per scenario, with the checks that failed under it, and a total.
fn report(side: &str, verdicts: &[Verdict]) {
    println!("==> conformance {side} scenarios:");
    for v in verdicts {
        let counts = format!(
            "{} passed, {} failed, {} warnings, {} info",
            v.count("SUCCESS"),
            v.count("FAILURE"),
            v.count("WARNING"),
            v.count("INFO")
        );
        match &v.checks {
            None => println!("    FAIL {}: no checks.json written", v.scenario),
            Some(c) if c.is_empty() => println!("    FAIL {}: no checks", v.scenario),
            Some(_) => println!("    {} {}: {counts}", if v.passed() { "ok  " } else { "FAIL" }, v.scenario),
        }
        for check in v.checks.iter().flatten().filter(|c| !c.ok()) {
            println!("         {} {}: {}", check.status, check.id, check.message.as_deref().unwrap_or("(no message)"));
        }
        if let Some(problem) = &v.process {
            println!("         {problem}");
        }
    }
    let passed = verdicts.iter().filter(|v| v.passed()).count();
    println!("==> conformance {side}: {passed} of {} scenarios passed", verdicts.len());
}

/// Scenario names from the output of `conformance list`: lines `  - <name> [<versions>]`.
fn parse_list(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| line.trim_start().strip_prefix("- "))
        .filter_map(|rest| rest.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// The scenario a server result directory belongs to: the suite names them
/// `server-<scenario>-<timestamp>`, the timestamp like `2026-01-02T03-04-05-678Z`.
fn server_scenario_of(dir_name: &str) -> Option<&str> {
    const STAMP: usize = "2026-01-02T03-04-05-678Z".len();
    let rest = dir_name.strip_prefix("server-")?;
    let cut = rest.len().checked_sub(STAMP + 1)?;
    let (scenario, stamp) = (rest.get(..cut)?, rest.get(cut..)?);
    let stamp_ok = stamp.starts_with('-')
        && stamp.ends_with('Z')
        && stamp[1..].bytes().all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'T' | b'Z'));
    (stamp_ok && !scenario.is_empty()).then_some(scenario)
}

/// The checks of every scenario the server suite wrote under `out`, by scenario.
fn read_server_results(out: &Path) -> Result<BTreeMap<String, Vec<Check>>> {
    let mut results = BTreeMap::new();
    let Ok(entries) = fs::read_dir(out) else { return Ok(results) };
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(scenario) = server_scenario_of(&name) else { continue };
        let file = entry.path().join("checks.json");
        if file.is_file() {
            results.insert(scenario.to_owned(), read_checks(&file)?);
        }
    }
    Ok(results)
}

/// The checks of the one scenario run with `--output-dir dir`, if it wrote any (the suite puts
/// them in `dir/<scenario>-<timestamp>/checks.json`).
fn find_checks(dir: &Path) -> Result<Option<Vec<Check>>> {
    let Ok(entries) = fs::read_dir(dir) else { return Ok(None) };
    let mut files: Vec<PathBuf> =
        entries.filter_map(|e| e.ok()).map(|e| e.path().join("checks.json")).filter(|f| f.is_file()).collect();
    files.sort();
    files.last().map(|f| read_checks(f)).transpose()
}

fn read_checks(file: &Path) -> Result<Vec<Check>> {
    let text = fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let json: serde_json::Value = serde_json::from_str(&text).with_context(|| format!("parsing {}", file.display()))?;
    let checks = json.as_array().with_context(|| format!("{} is not a list of checks", file.display()))?;
    Ok(checks
        .iter()
        .map(|c| Check {
            id: c["id"].as_str().unwrap_or("?").to_owned(),
            status: c["status"].as_str().unwrap_or("?").to_owned(),
            message: c["errorMessage"].as_str().map(str::to_owned),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenario_lists_parse() {
        let text = "Server scenarios (test against a server):\n  - server-initialize [2025-06-18,2025-11-25]\n  \
                    - ping [2025-06-18]\n\nClient scenarios (test against a client):\n  - auth/basic-cimd\n";
        assert_eq!(parse_list(text), ["server-initialize", "ping", "auth/basic-cimd"]);
    }

    #[test]
    fn server_result_directories_name_their_scenario() {
        assert_eq!(server_scenario_of("server-tools-call-image-2026-11-22T03-43-02-039Z"), Some("tools-call-image"));
        assert_eq!(server_scenario_of("server-ping-2026-11-22T03-43-01-938Z"), Some("ping"));
        assert_eq!(server_scenario_of("ping-2026-11-22T03-43-01-938Z"), None);
        assert_eq!(server_scenario_of("server--2026-11-22T03-43-01-938Z"), None);
        assert_eq!(server_scenario_of("server-x"), None);
    }

    #[test]
    fn only_success_and_info_pass() {
        let check = |status: &str| Check { id: "c".into(), status: status.into(), message: None };
        let verdict = |statuses: &[&str]| Verdict {
            scenario: "s".into(),
            checks: Some(statuses.iter().map(|s| check(s)).collect()),
            process: None,
        };
        assert!(verdict(&["SUCCESS", "INFO"]).passed());
        assert!(!verdict(&["SUCCESS", "WARNING"]).passed());
        assert!(!verdict(&["FAILURE"]).passed());
        assert!(!verdict(&[]).passed());
        assert!(!Verdict { process: Some("exited with 1".into()), ..verdict(&["SUCCESS"]) }.passed());
        assert!(!Verdict::new("s", None).passed());
    }
}
