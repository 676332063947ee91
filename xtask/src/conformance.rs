//! `cargo xtask conformance`: the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`) against our server and our client, in two pinned
//! versions ([`PINS`]), each an npm project of its own:
//!
//! - `interop/conformance/`: 0.1.16, the session revisions (up to 2025-11-25);
//! - `interop/conformance-next/`: 0.2.0-alpha.12, protocol revision 2026-07-28.
//!
//! Both list each scenario with the revisions it applies to, and each runs at **every revision
//! its scenarios name**:
//!
//! - **Server scenarios**: for each revision `conformance list --server` names, the
//!   `everything` example serves Streamable HTTP on a free local port; the suite's server run
//!   (`server --suite all --spec-version <revision>`: every scenario `list --server
//!   --spec-version <revision>` names counts) goes against `http://127.0.0.1:<port>/mcp`; the
//!   server is killed afterwards, whatever happened. At 2026-07-28, 0.2.0 runs the revision's
//!   frozen requirement set instead (`server --requirements 2026-07-28`): the scenarios it
//!   requires count, and so do the ones the suite runs but reports as `pending` or
//!   `extension` (we pass them: the `extension` server scenarios are the ten `tasks-*` ones of
//!   the tasks extension, SEP-2663, which our server implements).
//! - **Client scenarios**: every scenario `conformance list --client` names runs once at each
//!   revision it is listed for (`conformance client --spec-version <revision> --scenario
//!   <name>`, with the `conformance_client` example as the client command); one listed for no
//!   revision (`draft`, `extension`) runs once with the pin's [`Pin::undated_client_args`]. Of
//!   the `extension` scenarios, those of the extensions the client implements run
//!   ([`CLIENT_EXTENSIONS`]: client credentials, DPoP, workload identity federation,
//!   enterprise-managed authorization and cross-app access, Skills); any other is printed as
//!   not run.
//! - **Server extension scenarios**: the `extension` server scenarios that no requirement set
//!   runs (0.2.0's three `sep-2640-skills-*`, [`Pin::server_extensions`]) run one at a time
//!   against `everything` at their revision (`server --scenario <name> --spec-version
//!   2026-07-28 --force`); any other `extension` server scenario is printed as not run.
//!
//! Nothing targets a revision beyond 2026-07-28 yet; [`Suite::check_nothing_beyond`] fails the
//! run if a newer suite lists such a scenario, so that moving the pin makes someone decide how
//! to run it.
//!
//! Each scenario writes its checks to `checks.json` under
//! `target/interop/conformance-results/<project>/` (emptied at the start of each run). A
//! scenario passes when every one of its checks is `SUCCESS` or `INFO` (a `WARNING` or a
//! `SKIPPED` fails as a `FAILURE` does, but for the two exceptions [`Check::ok`] names with
//! their reasons) and the suite's process exited with 0 (for a client scenario that also covers our
//! client failing or hanging). The command prints one line per scenario and fails if any
//! scenario failed. There is no list of expected failures.
//!
//! The suites run on the Node that `cargo xtask interop` installs (`target/interop/node`), and
//! are installed next to it (`target/interop/<project>`), once per pin.

use std::collections::BTreeMap;
use std::fs;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};

use crate::interop::{self, Finished};

/// How long one server suite may run: thirty to fifty scenarios, each quick, a few waiting on
/// timers of up to 15 s when a server misbehaves.
const SERVER_SUITE_TIMEOUT: Duration = Duration::from_secs(300);

/// How long one client scenario may run. The suite gives the client 30 s (`--timeout`) and
/// then reports; this limit only catches the suite itself hanging.
const CLIENT_SCENARIO_TIMEOUT: Duration = Duration::from_secs(90);

/// The client's own time limit inside the suite, in milliseconds.
const CLIENT_TIMEOUT_MS: &str = "30000";

/// How long the server may take to accept connections after it starts.
const SERVER_START_TIMEOUT: Duration = Duration::from_secs(30);

/// One pinned version of the suite, and what we run of it.
struct Pin {
    /// The npm project in `interop/` that pins it: installed in `target/interop/<project>`,
    /// its results in `target/interop/conformance-results/<project>/`.
    project: &'static str,
    /// The revision whose frozen requirement set the server run at that revision uses
    /// (`server --requirements <revision>`). Every other revision the suite's server scenarios
    /// are listed for runs as `server --suite all --spec-version <revision>`.
    requirements: Option<Requirements>,
    /// What a client scenario listed for no dated revision (`extension`, `draft`) runs with;
    /// the others run once at each revision they are listed for (`--spec-version <revision>`).
    undated_client_args: &'static [&'static str],
    /// The `extension` server scenarios no server run above includes, run one at a time at
    /// their revision, and the revision (the Skills extension's, at 2026-07-28).
    server_extensions: (&'static str, &'static [&'static str]),
}

/// A revision's frozen requirement set, as a server run uses it.
struct Requirements {
    /// The revision.
    revision: &'static str,
    /// The unscored categories whose scenarios count too (the suite runs and reports them,
    /// but does not score them).
    also: &'static [&'static str],
}

/// One run of a suite's server scenarios against `everything`.
enum ServerRun<'a> {
    /// `server --suite all --spec-version <revision>`: every scenario `list --server
    /// --spec-version <revision>` names counts.
    Revision(String),
    /// `server --requirements <revision>`: the scenarios `list --requirements <revision>` says
    /// the revision requires count, and so do those of the categories of `also`.
    Requirements(&'a Requirements),
}

impl ServerRun<'_> {
    /// The revision it runs at.
    fn revision(&self) -> &str {
        match self {
            ServerRun::Revision(revision) => revision,
            ServerRun::Requirements(r) => r.revision,
        }
    }
}

/// The scenarios of extensions the client implements: they run with the others (the
/// `io.modelcontextprotocol/oauth-client-credentials` extension's, DPoP's,
/// `io.modelcontextprotocol/auth/dpop`, SEP-1932, workload identity federation's,
/// `io.modelcontextprotocol/auth/wif`, SEP-1933, enterprise-managed authorization's,
/// `io.modelcontextprotocol/enterprise-managed-authorization`, SEP-990, whose scenario 0.1.16
/// names `auth/cross-app-access-complete-flow`, and the Skills extension's,
/// `io.modelcontextprotocol/skills`, SEP-2640).
const CLIENT_EXTENSIONS: &[&str] = &[
    "auth/client-credentials-basic",
    "auth/client-credentials-jwt",
    "auth/dpop",
    "auth/dpop-nonce",
    "auth/wif-jwt-bearer",
    "auth/enterprise-managed-authorization",
    "auth/cross-app-access-complete-flow",
    "sep-2640-client-no-prefetch",
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
];

/// The newest revision the pinned suites' scenarios may target (see [`Suite::check_nothing_beyond`]).
const NEWEST_REVISION: &str = "2026-07-28";

/// The suites we run, oldest first.
const PINS: [Pin; 2] = [
    // 0.1.16: its three `draft` client scenarios (`auth/`) run without a revision, as do the
    // client credentials extension ones.
    Pin { project: "conformance", requirements: None, undated_client_args: &[], server_extensions: ("", &[]) },
    Pin {
        project: "conformance-next",
        // `pending`: json-schema-2020-12, http-header-validation and
        // http-custom-header-server-validation, which `everything` passes. `extension`: the
        // ten `tasks-*` scenarios of the tasks extension (SEP-2663), which `everything` passes
        // (`tasks-status-notifications` is always SKIPPED: see [`Check::ok`]).
        requirements: Some(Requirements { revision: "2026-07-28", also: &["pending", "extension"] }),
        // At a pinned revision the suite skips extension scenarios (they are on no revision's
        // timeline) unless forced.
        undated_client_args: &["--spec-version", "2026-07-28", "--force"],
        // The Skills extension (SEP-2640), whose scenarios check `ttlMs`/`cacheScope` as of
        // 2026-07-28 (and whose declaration, under `extensions`, only 2026-07-28 has).
        server_extensions: (
            "2026-07-28",
            &["sep-2640-skills-enumeration", "sep-2640-skills-manifest", "sep-2640-skills-directory"],
        ),
    },
];

/// One client scenario to run, at one revision (`None`: with the pin's
/// [`Pin::undated_client_args`]).
struct ClientScenario {
    name: String,
    revision: Option<String>,
}

impl ClientScenario {
    /// `name @ revision`, as the report names it.
    fn label(&self) -> String {
        match &self.revision {
            Some(revision) => format!("{} @ {revision}", self.name),
            None => self.name.clone(),
        }
    }
}

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

    /// The installed suite's version, from its manifest.
    fn version(&self) -> Result<String> {
        let manifest = self.cli.parent().and_then(Path::parent).map(|d| d.join("package.json"));
        let manifest = manifest.context("the suite's entry point has no package directory")?;
        let text = fs::read_to_string(&manifest).with_context(|| format!("reading {}", manifest.display()))?;
        let json: serde_json::Value = serde_json::from_str(&text)?;
        Ok(json["version"].as_str().unwrap_or("?").to_owned())
    }

    /// The output of `conformance list <args>`.
    fn list_output(&self, root: &Path, args: &[&str]) -> Result<String> {
        let shown = args.join(" ");
        let out = self.command(root).arg("list").args(args).stderr(Stdio::inherit()).output()?;
        if !out.status.success() {
            bail!("`conformance list {shown}` exited with {}", out.status);
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// The scenarios of `side` (`server` or `client`) that `list --requirements <revision>`
    /// says the revision requires or lists in one of the categories of `also`, and the others
    /// of that side it lists (by category).
    fn requirement_scenarios(
        &self,
        root: &Path,
        side: &str,
        revision: &str,
        also: &[&str],
    ) -> Result<(Vec<String>, Vec<Listed>)> {
        let listed = parse_requirements(&self.list_output(root, &["--requirements", revision])?);
        let (counted, other): (Vec<Listed>, Vec<Listed>) = listed
            .into_iter()
            .filter(|l| l.side == side)
            .partition(|l| l.category.as_deref().is_none_or(|c| also.contains(&c)));
        if counted.is_empty() {
            bail!("`conformance list --requirements {revision}` named no {side} scenario");
        }
        Ok((counted.into_iter().map(|l| l.name).collect(), other))
    }

    /// The server runs of `pin`: one per revision `list --server` names a scenario for.
    fn server_runs<'p>(&self, root: &Path, pin: &'p Pin) -> Result<Vec<ServerRun<'p>>> {
        let revisions = dated_revisions(&self.list_output(root, &["--server"])?, NEWEST_REVISION);
        if revisions.is_empty() {
            bail!("`conformance list --server` named no scenario of a revision");
        }
        Ok(revisions
            .into_iter()
            .map(|revision| match &pin.requirements {
                Some(r) if r.revision == revision => ServerRun::Requirements(r),
                _ => ServerRun::Revision(revision),
            })
            .collect())
    }

    /// The server scenarios that count in `run` (and, for a requirements run, the others it
    /// runs, by category).
    fn server_scenarios(&self, root: &Path, run: &ServerRun<'_>) -> Result<(Vec<String>, Vec<Listed>)> {
        match run {
            ServerRun::Revision(revision) => {
                let names = parse_list(&self.list_output(root, &["--server", "--spec-version", revision])?);
                if names.is_empty() {
                    bail!("`conformance list --server --spec-version {revision}` named no scenario");
                }
                Ok((names, Vec::new()))
            }
            ServerRun::Requirements(r) => self.requirement_scenarios(root, "server", r.revision, r.also),
        }
    }

    /// The client scenarios to run: every one `list --client` names, once at each revision it
    /// is listed for (once, undated, if it is listed for none), but the `extension` ones other
    /// than [`CLIENT_EXTENSIONS`].
    fn client_scenarios(&self, root: &Path) -> Result<Vec<ClientScenario>> {
        let mut runs = Vec::new();
        for (name, tags) in listed_scenarios(&self.list_output(root, &["--client"])?) {
            if tags.contains(&"extension") && !CLIENT_EXTENSIONS.contains(&name) {
                println!("    client scenario not run (extension): {name}");
                continue;
            }
            let dated: Vec<&str> = tags.iter().copied().filter(|t| is_dated(t) && *t <= NEWEST_REVISION).collect();
            if dated.is_empty() {
                runs.push(ClientScenario { name: name.to_owned(), revision: None });
            }
            runs.extend(
                dated.into_iter().map(|r| ClientScenario { name: name.to_owned(), revision: Some(r.to_owned()) }),
            );
        }
        if runs.is_empty() {
            bail!("`conformance list --client` named no scenario");
        }
        Ok(runs)
    }

    /// Prints the `extension` server scenarios `list --server` names that no run includes:
    /// neither the requirement set's unscored ones nor [`Pin::server_extensions`].
    fn report_unrun_server_extensions(&self, root: &Path, pin: &Pin) -> Result<()> {
        let run = match &pin.requirements {
            Some(r) => self.requirement_scenarios(root, "server", r.revision, r.also)?.0,
            None => Vec::new(),
        };
        for (name, tags) in listed_scenarios(&self.list_output(root, &["--server"])?) {
            if tags.contains(&"extension") && !run.iter().any(|r| r == name) && !pin.server_extensions.1.contains(&name)
            {
                println!("    server scenario not run (extension): {name}");
            }
        }
        Ok(())
    }

    /// Fails if `conformance list` names a scenario for a revision newer than
    /// [`NEWEST_REVISION`]: moving the pin makes someone decide how to run it.
    fn check_nothing_beyond(&self, root: &Path) -> Result<()> {
        let beyond = beyond_revision(&self.list_output(root, &[])?, NEWEST_REVISION);
        if !beyond.is_empty() {
            bail!(
                "the conformance suite has scenarios beyond {NEWEST_REVISION}, which no run includes: {}; \
                 decide how to run them (xtask/src/conformance.rs, interop/README.md)",
                beyond.join(", ")
            );
        }
        Ok(())
    }
}

/// Installs the suites, builds our server and client, runs every scenario.
pub fn run(root: &Path) -> Result<()> {
    let work = root.join("target/interop");
    let started = Instant::now();
    let node = interop::install_node(root, &work)?;
    let mut suites = Vec::new();
    for pin in &PINS {
        let project = interop::install_npm_project(root, &work, pin.project)?;
        let cli = interop::package_bin(&project, "@modelcontextprotocol/conformance")?;
        let suite = Suite { node: node.clone(), cli };
        suite.check_nothing_beyond(root)?;
        suites.push((pin, suite));
    }
    let results = work.join("conformance-results");
    if results.exists() {
        fs::remove_dir_all(&results).with_context(|| format!("removing {}", results.display()))?;
    }

    let [everything, gateway] = interop::build_examples(root, ["everything", "gateway"])?;
    let client = interop::build_examples(root, ["conformance_client"]).map(|[client]| client);
    let mut failed = Vec::new();
    for (pin, suite) in &suites {
        let out = results.join(pin.project);
        println!("==> conformance suite {} ({})", suite.version()?, pin.project);
        let tag = |f: String| format!("[{}] {f}", pin.project);
        for run in suite.server_runs(root, pin)? {
            let out = out.join("server").join(run.revision());
            failed.extend(server_scenarios(root, suite, &run, &everything, &out)?.into_iter().map(tag));
            // Through the gateway, at every revision (tasks of 2026-07-28 included).
            let out = out.join("gateway");
            let through = |f: String| tag(format!("through the gateway: {f}"));
            let gateway = gateway_scenarios(root, suite, &run, &everything, &gateway, &out)?;
            failed.extend(gateway.into_iter().map(through));
        }
        let (revision, extensions) = pin.server_extensions;
        suite.report_unrun_server_extensions(root, pin)?;
        if !extensions.is_empty() {
            let out = out.join("server-extensions");
            failed.extend(
                extension_scenarios(root, suite, revision, extensions, &everything, &out)?.into_iter().map(tag),
            );
        }
        let scenarios = suite.client_scenarios(root)?;
        match &client {
            Ok(client) => failed.extend(
                client_scenarios(root, suite, pin, client, &scenarios, &out.join("client"))?.into_iter().map(tag),
            ),
            Err(e) => failed.push(tag(format!("client scenarios not run: {e:#}"))),
        }
    }

    if !failed.is_empty() {
        bail!("conformance failed (results in {}):\n  {}", results.display(), failed.join("\n  "));
    }
    println!("==> conformance: every scenario passed ({:.1} s)", started.elapsed().as_secs_f64());
    Ok(())
}

/// The server scenarios of every pinned suite, at every revision, against the server at
/// `url` (`cargo xtask fleet` points them at its balancer): per run (`<project> @ <revision>`),
/// what failed. Results go to `target/interop/conformance-results/fleet/`.
pub fn servers_against(root: &Path, url: &str) -> Result<Vec<(String, Vec<String>)>> {
    let work = root.join("target/interop");
    let node = interop::install_node(root, &work)?;
    let results = work.join("conformance-results/fleet");
    if results.exists() {
        fs::remove_dir_all(&results).with_context(|| format!("removing {}", results.display()))?;
    }
    let mut runs = Vec::new();
    for pin in &PINS {
        let project = interop::install_npm_project(root, &work, pin.project)?;
        let suite =
            Suite { node: node.clone(), cli: interop::package_bin(&project, "@modelcontextprotocol/conformance")? };
        for run in suite.server_runs(root, pin)? {
            let out = results.join(pin.project).join(run.revision());
            let failed = server_suite(root, &suite, &run, url, &out)?;
            runs.push((format!("[{}] @ {}", pin.project, run.revision()), failed));
        }
    }
    Ok(runs)
}

/// Runs the server suite against `everything` served over HTTP; returns what failed.
fn server_scenarios(
    root: &Path,
    suite: &Suite,
    run: &ServerRun<'_>,
    everything: &Path,
    out: &Path,
) -> Result<Vec<String>> {
    let addr = SocketAddr::from(([127, 0, 0, 1], interop::free_port()?));
    let mut command = Command::new(everything);
    command.args(["--http", &addr.to_string()]);
    let server = interop::ServerProcess::start(command, addr, SERVER_START_TIMEOUT)?;
    let failed = server_suite(root, suite, run, &format!("http://{addr}/mcp"), out);
    drop(server);
    failed
}

/// The server `scenarios` of an extension, one at a time at `revision` (forced: they are on no
/// revision's timeline), against `everything` on a free port; returns what failed.
fn extension_scenarios(
    root: &Path,
    suite: &Suite,
    revision: &str,
    scenarios: &[&str],
    everything: &Path,
    out: &Path,
) -> Result<Vec<String>> {
    let addr = SocketAddr::from(([127, 0, 0, 1], interop::free_port()?));
    let mut command = Command::new(everything);
    command.args(["--http", &addr.to_string()]);
    let server = interop::ServerProcess::start(command, addr, SERVER_START_TIMEOUT)?;
    let url = format!("http://{addr}/mcp");
    println!("==> conformance server extension scenarios ({}) at {revision} against {url}", scenarios.len());
    let mut verdicts = Vec::new();
    for scenario in scenarios {
        let dir = out.join(scenario);
        let mut command = suite.command(root);
        command.args(["server", "--url", &url, "--scenario", scenario, "--spec-version", revision, "--force"]);
        command.arg("--output-dir").arg(&dir);
        let run = interop::run_with_limit(command, SERVER_SUITE_TIMEOUT)?;
        let mut verdict = Verdict::new(&format!("{scenario} @ {revision}"), find_checks(&dir)?);
        verdict.process = exit_problem(&run, SERVER_SUITE_TIMEOUT);
        verdicts.push(verdict);
    }
    drop(server);
    report(&format!("server extensions ({revision})"), &verdicts);
    Ok(verdicts.iter().filter(|v| !v.passed()).map(|v| format!("server {}", v.scenario)).collect())
}

/// Runs the server suite against the `gateway` example with `everything` mounted without a
/// prefix, both over Streamable HTTP; returns what failed.
fn gateway_scenarios(
    root: &Path,
    suite: &Suite,
    run: &ServerRun<'_>,
    everything: &Path,
    gateway: &Path,
    out: &Path,
) -> Result<Vec<String>> {
    let upstream = SocketAddr::from(([127, 0, 0, 1], interop::free_port()?));
    let mut command = Command::new(everything);
    command.args(["--http", &upstream.to_string()]);
    let everything = interop::ServerProcess::start(command, upstream, SERVER_START_TIMEOUT)?;
    let addr = SocketAddr::from(([127, 0, 0, 1], interop::free_port()?));
    let mut command = Command::new(gateway);
    command.args(["--http", &addr.to_string(), "--mount", &format!("=http://{upstream}/mcp")]);
    let gateway = interop::ServerProcess::start(command, addr, SERVER_START_TIMEOUT)?;
    let failed = server_suite(root, suite, run, &format!("http://{addr}/mcp"), out);
    drop(gateway);
    drop(everything);
    failed
}

/// Runs the server suite (`run`) against the server at `url`; returns what failed.
fn server_suite(root: &Path, suite: &Suite, run: &ServerRun<'_>, url: &str, out: &Path) -> Result<Vec<String>> {
    let (scenarios, uncounted) = suite.server_scenarios(root, run)?;
    let revision = run.revision();
    println!("==> conformance server scenarios ({}) at {revision} against {url}", scenarios.len());
    let mut command = suite.command(root);
    command.args(["server", "--url", url]);
    match run {
        ServerRun::Revision(revision) => command.args(["--suite", "all", "--spec-version", revision]),
        ServerRun::Requirements(r) => command.args(["--requirements", r.revision]),
    };
    command.arg("--output-dir").arg(out);
    let finished = interop::run_with_limit(command, SERVER_SUITE_TIMEOUT)?;

    let mut found = read_server_results(out)?;
    let verdicts: Vec<Verdict> =
        scenarios.iter().map(|s| Verdict::new(&format!("{s} @ {revision}"), found.remove(s))).collect();
    report(&format!("server ({revision})"), &verdicts);
    for other in &uncounted {
        let verdict = Verdict::new(&other.name, found.remove(&other.name));
        let category = other.category.as_deref().unwrap_or("?");
        println!("    not counted ({category}): {}: {}", other.name, verdict.counts());
    }
    for extra in found.keys() {
        println!("    (results for `{extra}`, which `conformance list` does not name at {revision})");
    }
    let mut failed: Vec<String> =
        verdicts.iter().filter(|v| !v.passed()).map(|v| format!("server {}", v.scenario)).collect();
    // The suite exits with 1 when a check failed, which the scenarios already say; otherwise
    // (it hung, or died with every check passing) that is a failure of its own.
    if let Some(problem) = exit_problem(&finished, SERVER_SUITE_TIMEOUT)
        && (finished.status.is_none() || failed.is_empty())
    {
        println!("    FAIL the server suite at {revision}: {problem}");
        failed.push(format!("server suite at {revision}: {problem}"));
    }
    Ok(failed)
}

/// Runs the client `scenarios`, one at a time, with `client` as the client command; returns
/// what failed.
fn client_scenarios(
    root: &Path,
    suite: &Suite,
    pin: &Pin,
    client: &Path,
    scenarios: &[ClientScenario],
    out: &Path,
) -> Result<Vec<String>> {
    println!("==> conformance client scenarios ({}) with {}", scenarios.len(), client.display());
    // The suite splits the command at spaces (and runs it through a shell).
    let client = client.to_str().filter(|c| !c.contains(char::is_whitespace)).with_context(|| {
        format!("the suite cannot run a client whose path has spaces or is not UTF-8: {}", client.display())
    })?;
    let mut verdicts = Vec::new();
    for scenario in scenarios {
        let label = scenario.label();
        println!("==> conformance client scenario {label}");
        let dir = out.join(label.replace('/', "_").replace(" @ ", "@"));
        let mut command = suite.command(root);
        command.args(["client", "--command", client]);
        match &scenario.revision {
            Some(revision) => command.args(["--spec-version", revision]),
            None => command.args(pin.undated_client_args),
        };
        command.args(["--scenario", &scenario.name, "--timeout", CLIENT_TIMEOUT_MS]);
        command.arg("--output-dir").arg(&dir);
        let run = interop::run_with_limit(command, CLIENT_SCENARIO_TIMEOUT)?;
        let mut verdict = Verdict::new(&label, find_checks(&dir)?);
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
    description: String,
}

impl Check {
    /// `SUCCESS` and `INFO` pass; `FAILURE`, `WARNING` and anything else fail, but for two
    /// `SKIPPED` ones:
    ///
    /// - the 0.2.0 suite's header checks of `initialize` and `notifications/initialized`
    ///   (http-standard-headers), methods that revision 2026-07-28 does not have, so a client
    ///   speaking it never sends them and the suite always skips them;
    /// - `tasks-status-notifications` (scenario of the same name, tasks extension): in
    ///   0.2.0-alpha.12 it sends nothing and always reports this one check SKIPPED ("pending
    ///   subscriptions/listen rewrite"): there is nothing our server could do to pass it.
    fn ok(&self) -> bool {
        match self.status.as_str() {
            "SUCCESS" | "INFO" => true,
            "SKIPPED" => {
                (self.id == "sep-2243-client-includes-standard-headers"
                    && (self.description.ends_with("on initialize request")
                        || self.description.ends_with("on notifications/initialized request")))
                    || self.id == "tasks-status-notifications"
            }
            _ => false,
        }
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

    /// `N passed, N failed, ...`, what its checks came to.
    fn counts(&self) -> String {
        let mut counts = format!(
            "{} passed, {} failed, {} warnings, {} info",
            self.count("SUCCESS"),
            self.count("FAILURE"),
            self.count("WARNING"),
            self.count("INFO")
        );
        let other = self
            .checks
            .iter()
            .flatten()
            .filter(|c| !matches!(c.status.as_str(), "SUCCESS" | "FAILURE" | "WARNING" | "INFO"))
            .count();
        if other > 0 {
            counts.push_str(&format!(", {other} other (SKIPPED, ...)"));
        }
        counts
    }
}

/// Prints one line per scenario, with the checks that failed under it, and a total.
fn report(side: &str, verdicts: &[Verdict]) {
    println!("==> conformance {side} scenarios:");
    for v in verdicts {
        let counts = v.counts();
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

/// The scenarios of the output of `conformance list` (lines `  - <name> [<tags>]`, the tags
/// optional), each with its tags.
fn listed_scenarios(text: &str) -> Vec<(&str, Vec<&str>)> {
    text.lines()
        .filter_map(|line| line.trim_start().strip_prefix("- "))
        .filter_map(|rest| {
            let mut words = rest.split_whitespace();
            let name = words.next()?;
            let tags = words.next().and_then(|t| t.strip_prefix('[')?.strip_suffix(']'));
            Some((name, tags.map(|t| t.split(',').map(str::trim).collect()).unwrap_or_default()))
        })
        .collect()
}

/// Scenario names from the output of `conformance list`: lines `  - <name> [<versions>]`.
fn parse_list(text: &str) -> Vec<String> {
    listed_scenarios(text).into_iter().map(|(name, _)| name.to_owned()).collect()
}

/// Whether a tag of `conformance list` is a dated revision (`2025-11-25`).
fn is_dated(tag: &str) -> bool {
    tag.len() == 10 && tag.bytes().all(|b| b.is_ascii_digit() || b == b'-')
}

/// The dated revisions up to `newest` that the output of `conformance list` names a scenario
/// for, oldest first.
fn dated_revisions(text: &str, newest: &str) -> Vec<String> {
    let revisions: std::collections::BTreeSet<&str> =
        listed_scenarios(text).into_iter().flat_map(|(_, tags)| tags).filter(|t| is_dated(t) && *t <= newest).collect();
    revisions.into_iter().map(str::to_owned).collect()
}

/// The scenarios of the output of `conformance list` listed for a dated revision after
/// `newest`.
fn beyond_revision(text: &str, newest: &str) -> Vec<String> {
    listed_scenarios(text)
        .into_iter()
        .filter(|(_, tags)| tags.iter().any(|t| is_dated(t) && *t > newest))
        .map(|(name, _)| name.to_owned())
        .collect()
}

/// A scenario as `conformance list --requirements <revision>` names it.
#[derive(Debug, PartialEq, Eq)]
struct Listed {
    name: String,
    /// `server` or `client`.
    side: String,
    /// `None` if the revision requires it; else the category of scenarios that the suite runs
    /// and reports but does not score (`extension`, `pending`, ...).
    category: Option<String>,
}

/// The output of `conformance list --requirements <revision>`: a section of required
/// scenarios (`Server scenarios (...):` and `Client scenarios (...):`, then `  - <name>`
/// lines), then `Run and reported, but never scored:` with categories (`  pending (3):`, then
/// `    - <name> [server]` lines).
fn parse_requirements(text: &str) -> Vec<Listed> {
    let mut listed = Vec::new();
    let (mut side, mut category, mut unscored) = (None::<&str>, None::<String>, false);
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix("- ") {
            let mut words = rest.split_whitespace();
            let Some(name) = words.next() else { continue };
            let tagged = words.next().and_then(|w| w.strip_prefix('[')?.strip_suffix(']'));
            let side = if unscored { tagged } else { side };
            if let Some(side) = side.filter(|s| matches!(*s, "server" | "client")) {
                let category = if unscored { Some(category.clone().unwrap_or_default()) } else { None };
                listed.push(Listed { name: name.to_owned(), side: side.to_owned(), category });
            }
        } else if trimmed.starts_with("Server scenarios") {
            side = Some("server");
        } else if trimmed.starts_with("Client scenarios") {
            side = Some("client");
        } else if trimmed.starts_with("Authorization server scenarios") {
            side = None;
        } else if trimmed.starts_with("Run and reported, but never scored") {
            unscored = true;
        } else if unscored && let Some((name, _)) = trimmed.strip_suffix("):").and_then(|t| t.split_once(" (")) {
            category = Some(name.to_owned());
        }
    }
    listed
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
/// them in `dir/<scenario>-<timestamp>/checks.json`, where a `/` of the scenario's name, as in
/// `auth/metadata-default`, makes a directory level).
fn find_checks(dir: &Path) -> Result<Option<Vec<Check>>> {
    let mut files = Vec::new();
    let mut dirs = vec![(dir.to_path_buf(), 0)];
    while let Some((dir, depth)) = dirs.pop() {
        let Ok(entries) = fs::read_dir(&dir) else { continue };
        for path in entries.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_dir()) {
            let file = path.join("checks.json");
            if file.is_file() {
                files.push(file);
            } else if depth < 2 {
                dirs.push((path, depth + 1));
            }
        }
    }
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
            description: c["description"].as_str().unwrap_or_default().to_owned(),
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
    fn scenarios_beyond_the_newest_revision_are_found() {
        let text = "Server scenarios (test against a server):\n  - ping [2025-06-18,2025-11-25]\n  \
                    - caching [2026-07-28]\n  - tasks-lifecycle [extension]\n  - future [2027-01-01]\n\n\
                    Client scenarios (test against a client):\n  - both [2026-07-28,2027-01-01]\n  \
                    - drafty [draft]\n  - untagged\n";
        assert_eq!(beyond_revision(text, "2026-07-28"), ["future", "both"]);
        assert_eq!(dated_revisions(text, "2026-07-28"), ["2025-06-18", "2025-11-25", "2026-07-28"]);
        let listed = listed_scenarios(text);
        assert_eq!(listed[2], ("tasks-lifecycle", vec!["extension"]));
        assert_eq!(listed[5], ("drafty", vec!["draft"]));
        assert_eq!(listed[6], ("untagged", vec![]));
    }

    #[test]
    fn requirement_lists_parse() {
        let text = "Required for 2026-07-28 (5 scenarios, frozen; run at the 2026-07-28 wire):\n\n\
                    Server scenarios (test against a server):\n  - server-stateless\n  - caching\n\n\
                    Client scenarios (test against a client):\n  - tools_call\n\n\
                    Run and reported, but never scored:\n  extension (2):\n    - auth/dpop [client]\n    \
                    - tasks-lifecycle [server]\n  pending (1):\n    - json-schema-2020-12 [server]\n";
        let listed = |name: &str, side: &str, category: Option<&str>| Listed {
            name: name.into(),
            side: side.into(),
            category: category.map(str::to_owned),
        };
        assert_eq!(
            parse_requirements(text),
            [
                listed("server-stateless", "server", None),
                listed("caching", "server", None),
                listed("tools_call", "client", None),
                listed("auth/dpop", "client", Some("extension")),
                listed("tasks-lifecycle", "server", Some("extension")),
                listed("json-schema-2020-12", "server", Some("pending")),
            ]
        );
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
        let check =
            |status: &str| Check { id: "c".into(), status: status.into(), message: None, description: String::new() };
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
        assert!(!verdict(&["SKIPPED"]).passed());
        let skipped = |description: &str| Check {
            id: "sep-2243-client-includes-standard-headers".into(),
            status: "SKIPPED".into(),
            message: None,
            description: description.into(),
        };
        assert!(skipped("Client sends correct Mcp-Method header on initialize request").ok());
        assert!(skipped("Client sends correct Mcp-Method header on notifications/initialized request").ok());
        assert!(!skipped("Client sends correct Mcp-Method header on tools/call request").ok());
        let tasks_notifications = Check {
            id: "tasks-status-notifications".into(),
            status: "SKIPPED".into(),
            message: None,
            description: "notifications/tasks".into(),
        };
        assert!(tasks_notifications.ok());
        assert!(!Check { id: "tasks-lifecycle".into(), ..tasks_notifications }.ok());
    }
}
