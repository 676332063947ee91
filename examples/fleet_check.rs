//! `fleet_check`: our client (`mcp-client`) against a fleet of `everything` instances behind a
//! load balancer that balances every request (no stickiness), the client side of
//! `cargo xtask fleet`.
//!
//! ```sh
//! cargo run --example fleet_check -- http://127.0.0.1:8080/mcp revisions fanout resume redis
//! ```
//!
//! Scenarios (each prints one `PASS <name>: <details>` or `FAIL <name>: <details>` line, the
//! revisions one line per revision):
//!
//! - `revisions`: in each revision (2024-11-05 to 2025-11-25 with `initialize` over Streamable
//!   HTTP, 2026-07-28 with `server/discover`): connect, list the tools, several calls, a
//!   sampling round trip (`test_sampling`) and, from 2025-06-18, an elicitation round trip
//!   (`test_elicitation`). The balancer's log (each client's requests carry an `X-Fleet-Check`
//!   label) shows, per round trip, the instance the call went to and the one the client's
//!   answer went to (in 2026-07-28: the call again, with its input responses): they must
//!   differ.
//! - `fanout`: clients holding GET streams (session revisions) and 2026-07-28
//!   `subscriptions/listen` streams, spread over the instances; one call through the balancer
//!   re-registers a tool (`test_trigger_tool_change`); every client must hear
//!   `notifications/tools/list_changed`.
//! - `resume`: a long call with progress (`count_down`); once the instance serving it (named in
//!   the first progress message) has stored three progress notifications in Redis, the harness
//!   kills it (SIGKILL). The client must get every progress notification stored in Redis (what
//!   the server sent), once and in order; the call must end within a bound with the stored
//!   result, or, as none was stored, with the error of a stream that could not be resumed; the
//!   balancer must have seen the client resume (a GET with `Last-Event-ID`); and the session
//!   must still serve a call afterwards.
//! - `redis`: the harness kills Redis; each request must end within a bound as docs/deploy.md
//!   says: a call of an existing session succeeds or gets 503 with `Retry-After: 1`, a session
//!   no instance holds gets 503 with `Retry-After: 1` (404 before and after), a new session
//!   fails `initialize` with -32603, 2026-07-28 calls and connections succeed; the harness
//!   checks every instance still answers `/healthz` and restarts Redis; the service must come
//!   back within a deadline.
//!
//! The harness and this client talk over stdio: for a step only the harness can take (kill an
//! instance, stop Redis, read the balancer's statistics) the client prints
//! `FLEET-WAIT <step> [args]` and reads one line back (`ok [details]` or `fail [details]`).
//! Run by hand, with no harness on stdin, those scenarios fail at that step. Exits with 0 only
//! if every scenario passed.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail, ensure};
use mcp_sdk::client::http::{HeaderName, HeaderValue, HttpClientConfig, HttpErrorKind, reqwest};
use mcp_sdk::client::{CallOptions, Client, ClientBuilder, ClientError, ServerEvent};
use mcp_sdk::types::{
    CallToolRequestParams, CallToolResult, ContentBlock, CreateMessageRequestParams, CreateMessageResult, ElicitAction,
    ElicitRequestParams, ElicitResult, ElicitResultContentValue, ErrorObject, ProgressNotificationParams,
    ProtocolVersion, Role, SubscriptionFilter, TextContent,
};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, BufReader};

/// What our sampling handler answers.
const SAMPLING_ANSWER: &str = "forty-two from the fleet client";
/// What our elicitation handler fills in as the email address.
const EMAIL: &str = "fleet@example.com";
/// The longest a connection, a call or a wait for a notification may take.
const STEP: Duration = Duration::from_secs(20);
/// How long the harness may take to answer a `FLEET-WAIT`.
const HARNESS: Duration = Duration::from_secs(60);
/// How long the call of `resume` may take to end after its instance died.
const RESUME_BOUND: Duration = Duration::from_secs(40);
/// How long one request may take while Redis is down before it counts as hanging.
const REDIS_DOWN_BOUND: Duration = Duration::from_secs(15);
/// How long the service may take to come back once Redis is back.
const REDIS_BACK_DEADLINE: Duration = Duration::from_secs(30);
/// The session revisions and the stateless one, oldest first.
const REVISIONS: [ProtocolVersion; 5] = ProtocolVersion::ALL;

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((url, scenarios)) = args.split_first().filter(|(_, s)| !s.is_empty()) else {
        eprintln!("usage: fleet_check URL SCENARIO... (revisions, fanout, resume, redis)");
        return ExitCode::FAILURE;
    };
    let mut harness = Harness::new();
    let mut failed = 0;
    for scenario in scenarios {
        let verdicts = match scenario.as_str() {
            "revisions" => revisions(url, &mut harness).await,
            "fanout" => vec![verdict("fanout", fanout(url, &mut harness).await)],
            "resume" => vec![verdict("resume", resume(url, &mut harness).await)],
            "redis" => redis(url, &mut harness).await,
            other => vec![verdict(other, Err(anyhow::anyhow!("no such scenario")))],
        };
        for (name, outcome) in verdicts {
            match outcome {
                Ok(details) => println!("PASS {name}: {details}"),
                Err(e) => {
                    failed += 1;
                    println!("FAIL {name}: {}", format!("{e:#}").replace('\n', " | "));
                }
            }
        }
    }
    if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

/// A scenario's name and outcome (`Ok`: the details of its PASS line).
type Verdict = (String, anyhow::Result<String>);

fn verdict(name: &str, outcome: anyhow::Result<String>) -> Verdict {
    (name.to_owned(), outcome)
}

/// The harness at the other end of stdin and stdout.
struct Harness {
    lines: tokio::io::Lines<BufReader<tokio::io::Stdin>>,
}

impl Harness {
    fn new() -> Self {
        Harness { lines: BufReader::new(tokio::io::stdin()).lines() }
    }

    /// Asks the harness to take `step`; its `ok` details, or an error for `fail` (or none).
    async fn ask(&mut self, step: &str) -> anyhow::Result<String> {
        println!("FLEET-WAIT {step}");
        let line = tokio::time::timeout(HARNESS, self.lines.next_line())
            .await
            .with_context(|| format!("the harness did not answer `{step}` within {HARNESS:?}"))??
            .with_context(|| format!("no harness to take `{step}` (stdin closed)"))?;
        match line.split_once(' ').unwrap_or((line.as_str(), "")) {
            ("ok", details) => Ok(details.to_owned()),
            ("fail", details) => bail!("harness, at `{step}`: {details}"),
            _ => bail!("the harness answered `{step}` with `{line}`"),
        }
    }
}

/// A client speaking `version` only, answering sampling and elicitation.
fn builder(version: ProtocolVersion) -> ClientBuilder {
    ClientBuilder::new("mcp-rust-fleet-check", env!("CARGO_PKG_VERSION"))
        .protocol_version(version)
        .on_sampling(|_: CreateMessageRequestParams| async {
            let mut result =
                CreateMessageResult::new(Role::Assistant, TextContent::new(SAMPLING_ANSWER), "fleet-check-model");
            result.stop_reason = Some("endTurn".to_owned());
            Ok::<_, ErrorObject>(result)
        })
        .on_elicitation(|_: ElicitRequestParams| async {
            let mut result = ElicitResult::new(ElicitAction::Accept);
            result.content = Some(BTreeMap::from([
                ("username".to_owned(), ElicitResultContentValue::String("fleet".to_owned())),
                ("email".to_owned(), ElicitResultContentValue::String(EMAIL.to_owned())),
            ]));
            Ok::<_, ErrorObject>(result)
        })
}

/// The header that labels a client's requests, for the balancer's log (`requests LABEL`).
const LABEL: HeaderName = HeaderName::from_static("x-fleet-check");

/// Connects in `version`, its requests labelled `label`, within [`STEP`].
async fn connect(url: &str, version: ProtocolVersion, label: &str) -> anyhow::Result<Client> {
    let client = tokio::time::timeout(STEP, connect_labelled(url, version, label))
        .await
        .with_context(|| format!("connecting ({version}) took more than {STEP:?}"))?
        .with_context(|| format!("connecting ({version})"))?;
    ensure!(client.protocol_version() == version, "the server chose {} over {version}", client.protocol_version());
    Ok(client)
}

/// Connects in `version`, its requests labelled `label` (no bound).
/// A failure to connect is a [`ClientError`] in the `anyhow::Error`.
async fn connect_labelled(url: &str, version: ProtocolVersion, label: &str) -> anyhow::Result<Client> {
    let config = HttpClientConfig::parse(url)?.header(LABEL, HeaderValue::from_str(label)?);
    Ok(builder(version).connect_http_with(config).await?)
}

/// One request of a labelled client as the balancer logged it (the harness's `requests` step).
#[derive(Debug, Clone)]
struct Landed {
    /// The instance it went to.
    instance: String,
    method: String,
    status: String,
    /// `call:TOOL`, `call:TOOL+input`, `answer`, `notification:METHOD`, a method, `-`.
    what: String,
    last_event_id: Option<String>,
    retry_after: Option<String>,
}

/// The instances of the fleet and the requests of the client labelled `label`, in order.
async fn landed(harness: &mut Harness, label: &str) -> anyhow::Result<(usize, Vec<Landed>)> {
    let answer = harness.ask(&format!("requests {label}")).await?;
    let mut words = answer.split_whitespace();
    let instances = words
        .next()
        .and_then(|w| w.strip_prefix("instances="))
        .and_then(|n| n.parse().ok())
        .with_context(|| format!("the harness answered `{answer}`"))?;
    let some = |v: &str| (v != "-").then(|| v.to_owned());
    let requests = words
        .map(|token| {
            let f: Vec<&str> = token.split('|').collect();
            ensure!(f.len() == 6, "a request logged as `{token}`");
            Ok(Landed {
                instance: f[0].to_owned(),
                method: f[1].to_owned(),
                status: f[2].to_owned(),
                what: f[3].to_owned(),
                last_event_id: some(f[4]),
                retry_after: some(f[5]),
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok((instances, requests))
}

/// The one request of `requests` that is `what`, and its position.
fn the_one<'a>(requests: &'a [Landed], what: &str) -> anyhow::Result<(usize, &'a Landed)> {
    let found: Vec<(usize, &Landed)> = requests.iter().enumerate().filter(|(_, r)| r.what == what).collect();
    match found[..] {
        [one] => Ok(one),
        _ => bail!("{} requests `{what}` logged, not one", found.len()),
    }
}

/// A round trip to the client (a sampling or elicitation request of `tool`): where the call
/// went, where the client's answer went (the next answer POST in a session; in 2026-07-28 the
/// call again, with the input responses), and that they differ when the fleet has more than
/// one instance.
fn round_trip(instances: usize, requests: &[Landed], tool: &str, stateless: bool) -> anyhow::Result<String> {
    let (at, call) = the_one(requests, &format!("call:{tool}"))?;
    let answer = if stateless {
        the_one(requests, &format!("call:{tool}+input"))?.1
    } else {
        // Until the next call: the answers to this one's requests.
        let answers: Vec<&Landed> = requests[at + 1..]
            .iter()
            .take_while(|r| !r.what.starts_with("call:"))
            .filter(|r| r.method == "POST" && r.what == "answer")
            .collect();
        ensure!(answers.len() == 1, "{tool}: {} answer POSTs after the call, not one", answers.len());
        answers[0]
    };
    ensure!(
        instances == 1 || answer.instance != call.instance,
        "{tool}: the call went to {} and the answer to the same instance",
        call.instance
    );
    Ok(format!("{tool} on {}, answered on {}", call.instance, answer.instance))
}

/// Calls `tool` within [`STEP`]; a tool error is an error here.
async fn call(client: &Client, tool: &str, arguments: Value) -> anyhow::Result<String> {
    let result = tokio::time::timeout(STEP, client.call_tool(tool, arguments))
        .await
        .with_context(|| format!("{tool}: no answer within {STEP:?}"))?
        .with_context(|| format!("calling {tool}"))?;
    let text = texts(&result);
    ensure!(!result.is_error(), "{tool} answered with a tool error: {text}");
    Ok(text)
}

fn texts(result: &CallToolResult) -> String {
    let texts: Vec<&str> = result
        .content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    texts.join(" | ")
}

// ===== revisions =====

/// One verdict per revision.
async fn revisions(url: &str, harness: &mut Harness) -> Vec<Verdict> {
    let mut verdicts = Vec::new();
    for version in REVISIONS {
        let label = format!("revision-{version}");
        let outcome = tokio::time::timeout(STEP * 2, one_revision(url, version, &label)).await;
        let outcome = outcome.unwrap_or_else(|_| Err(anyhow::anyhow!("no end within {:?}", STEP * 2)));
        // Where each round trip's call and answer landed, as the balancer logged them.
        let outcome = match outcome {
            Ok(done) => landings(harness, &label, version).await.map(|landed| format!("{done}; {landed}")),
            Err(e) => Err(e),
        };
        verdicts.push(verdict(&format!("revision {version}"), outcome));
    }
    verdicts
}

/// The round trips of `one_revision` landed on another instance than their call.
async fn landings(harness: &mut Harness, label: &str, version: ProtocolVersion) -> anyhow::Result<String> {
    let (instances, requests) = landed(harness, label).await?;
    let mut tools = vec!["test_sampling"];
    if version >= ProtocolVersion::V2025_06_18 {
        tools.push("test_elicitation");
    }
    let checked = tools
        .iter()
        .map(|tool| round_trip(instances, &requests, tool, version.is_stateless()))
        .collect::<anyhow::Result<Vec<_>>>();
    let shown = || requests.iter().map(|r| format!("{} {} {}", r.instance, r.method, r.what)).collect::<Vec<_>>();
    checked.map(|c| c.join(", ")).with_context(|| format!("requests logged: {}", shown().join(", ")))
}

/// Connects, lists, calls, and answers a sampling and an elicitation request in `version`.
async fn one_revision(url: &str, version: ProtocolVersion, label: &str) -> anyhow::Result<String> {
    let client = connect(url, version, label).await?;
    let outcome = async {
        let tools = tokio::time::timeout(STEP, client.list_all_tools()).await.context("tools/list: no answer")??;
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        for needed in ["test_simple_text", "test_sampling", "test_elicitation", "count_down"] {
            ensure!(names.contains(&needed), "tools/list lacks {needed} ({} tools)", names.len());
        }
        const CALLS: usize = 6;
        for _ in 0..CALLS {
            let text = call(&client, "test_simple_text", json!({})).await?;
            ensure!(text.contains("simple text"), "test_simple_text answered `{text}`");
        }
        let sampled = call(&client, "test_sampling", json!({"prompt": "What is the answer?"})).await?;
        ensure!(sampled.contains(SAMPLING_ANSWER), "test_sampling answered `{sampled}`");
        let mut done = format!("{} tools, {CALLS} calls, sampling", tools.len());
        if version >= ProtocolVersion::V2025_06_18 {
            let elicited = call(&client, "test_elicitation", json!({"message": "Who are you?"})).await?;
            ensure!(elicited.contains(EMAIL), "test_elicitation answered `{elicited}`");
            done.push_str(", elicitation");
        } else {
            done.push_str(" (no elicitation in this revision)");
        }
        Ok(done)
    }
    .await;
    let _ = tokio::time::timeout(STEP, client.close()).await;
    outcome
}

// ===== fanout =====

/// A client waiting for `notifications/tools/list_changed`: from its events (session
/// revisions) or from a `subscriptions/listen` stream (2026-07-28).
struct Listener {
    label: String,
    client: Client,
    events: Events,
}

enum Events {
    Session(tokio::sync::broadcast::Receiver<ServerEvent>),
    Listen(mcp_sdk::client::Subscription),
}

impl Listener {
    async fn open(url: &str, version: ProtocolVersion, label: String) -> anyhow::Result<Self> {
        let client = connect(url, version, "fanout").await.with_context(|| label.clone())?;
        let events = if version.is_stateless() {
            let filter = SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() };
            let listen = tokio::time::timeout(STEP, client.listen(filter)).await.context("subscriptions/listen")?;
            Events::Listen(listen.with_context(|| format!("{label}: subscriptions/listen"))?)
        } else {
            Events::Session(client.events())
        };
        Ok(Listener { label, client, events })
    }

    /// Waits (until `deadline`) for the tool list change.
    async fn heard(&mut self, deadline: tokio::time::Instant) -> anyhow::Result<()> {
        let wait = async {
            loop {
                let event = match &mut self.events {
                    Events::Session(rx) => match rx.recv().await {
                        Ok(event) => Some(event),
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                        Err(_) => None,
                    },
                    Events::Listen(sub) => sub.next().await,
                };
                match event {
                    Some(ServerEvent::ToolListChanged) => return Ok(()),
                    Some(_) => continue,
                    None => bail!("its event stream ended"),
                }
            }
        };
        // A notification already received counts even after the deadline (the timeout polls
        // the wait once first).
        tokio::time::timeout_at(deadline, wait).await.with_context(|| format!("nothing within {STEP:?}"))?
    }
}

/// Clients on every instance hear a tool list change made through the balancer.
async fn fanout(url: &str, harness: &mut Harness) -> anyhow::Result<String> {
    // Each request of this one moves the balancer's round robin on by one, so that the
    // listeners' long-lived streams do not all land on the same instance.
    let shifter = connect(url, ProtocolVersion::V2026_07_28, "fanout").await.context("the shifting client")?;
    let versions = [
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2026_07_28,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2026_07_28,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];
    let mut listeners = Vec::new();
    let mut problems = Vec::new();
    // Listeners until their streams sit on every instance (at least six, at most twelve, or
    // three per instance in a larger fleet): when a listener's stream lands where others are
    // while an instance has none, the next ones are shifted by one more request.
    let mut shift = 0;
    let mut before = open_streams(harness).await;
    for i in 0..(3 * before.len()).max(12) {
        let version = versions[i % versions.len()];
        for _ in 0..shift {
            let _ = tokio::time::timeout(STEP, shifter.ping()).await;
        }
        match Listener::open(url, version, format!("listener {i} ({version})")).await {
            Ok(listener) => listeners.push(listener),
            Err(e) => problems.push(format!("{e:#}")),
        }
        let now = open_streams(harness).await;
        let gained: Vec<usize> = (0..now.len()).filter(|&k| now[k] > before.get(k).copied().unwrap_or(0)).collect();
        let empty = now.contains(&0);
        if empty && !gained.is_empty() && gained.iter().all(|&k| before.get(k).is_some_and(|n| *n > 0)) {
            shift = (shift + 1) % 3;
        }
        before = now;
        if i >= 5 && !before.is_empty() && !empty {
            break;
        }
    }
    let spread = harness.ask(&format!("streams {}", listeners.len())).await;
    let covered = spread.is_ok();
    let spread = spread.unwrap_or_else(|e| format!("{e:#}"));
    let trigger = call(&shifter, "test_trigger_tool_change", json!({})).await;
    let mut heard = Vec::new();
    // One deadline for all: each listener's wait is bounded by what is left of it.
    let deadline = tokio::time::Instant::now() + STEP;
    for listener in &mut listeners {
        match listener.heard(deadline).await {
            Ok(()) => heard.push(listener.label.clone()),
            Err(e) => problems.push(format!("{} heard no tools/list_changed: {e:#}", listener.label)),
        }
    }
    let total = listeners.len();
    for listener in listeners.drain(..) {
        let _ = tokio::time::timeout(STEP, listener.client.close()).await;
    }
    let _ = tokio::time::timeout(STEP, shifter.close()).await;
    if let Err(e) = trigger {
        problems.insert(0, format!("the call that changes the tool list: {e:#}"));
    }
    if !covered {
        problems.insert(0, format!("the listeners' streams are not on every instance ({spread})"));
    }
    ensure!(problems.is_empty(), "{} of {total} listeners heard it; {}", heard.len(), problems.join("; "));
    Ok(format!("{total} of {total} listeners heard tools/list_changed ({spread})"))
}

/// The streams open on each instance now, as the harness reads them from the balancer.
async fn open_streams(harness: &mut Harness) -> Vec<u64> {
    let counts = harness.ask("streams-now").await.unwrap_or_default();
    counts.split_whitespace().filter_map(|c| c.split_once('=')?.1.parse().ok()).collect()
}

// ===== resume =====

/// How far `count_down` counts in `resume` (one progress notification a step).
const RESUME_STEPS: u32 = 100;
/// How many progress notifications must be stored before the harness kills the instance, so
/// that some may reach the client only through a resumption.
const STORED_BEFORE_KILL: usize = 3;

/// A long call whose instance dies: the client resumes through the balancer (`Last-Event-ID`)
/// and gets every progress notification the dead instance stored, once and in order; the call
/// ends with the result if the instance stored it, and otherwise with the clean error of a
/// stream that could not be resumed to its end (the request died with its instance).
async fn resume(url: &str, harness: &mut Harness) -> anyhow::Result<String> {
    const ME: &str = "resume";
    let client = connect(url, ProtocolVersion::V2025_11_25, ME).await?;
    let progress: Arc<Mutex<Vec<ProgressNotificationParams>>> = Arc::default();
    let (tick, mut ticks) = tokio::sync::watch::channel(0usize);
    let sink = Arc::clone(&progress);
    let options = CallOptions::default().timeout(Duration::from_secs(300)).on_progress(move |p| {
        let mut all = sink.lock().unwrap_or_else(|e| e.into_inner());
        all.push(p);
        tick.send_replace(all.len());
    });
    let mut params = CallToolRequestParams::new("count_down");
    params.arguments = json!({"from": RESUME_STEPS, "interval_ms": 50}).as_object().cloned();
    let long_call = client.call_tool_with(params, options);
    tokio::pin!(long_call);

    // The first progress names the instance.
    let first = tokio::select! {
        r = tokio::time::timeout(STEP, ticks.wait_for(|n| *n > 0)) => r.map(|_| ()),
        r = &mut long_call => bail!("the call ended before any progress: {:?}", r.map(|r| texts(&r))),
    };
    first.with_context(|| format!("no progress within {STEP:?}"))?;
    let message = progress.lock().unwrap_or_else(|e| e.into_inner())[0].message.clone().unwrap_or_default();
    let instance = message
        .rsplit_once("(on ")
        .and_then(|(_, rest)| rest.strip_suffix(')'))
        .with_context(|| format!("the progress message `{message}` names no instance"))?
        .to_owned();
    let killed = harness.ask(&format!("kill {instance} {ME} {STORED_BEFORE_KILL}")).await?;
    let killed_at = Instant::now();

    let ended = tokio::time::timeout(RESUME_BOUND, &mut long_call).await;
    let took = killed_at.elapsed();
    // What the server sent: what the dead instance stored in Redis before it died.
    let stored = harness.ask(&format!("stored {ME}")).await?;
    let number = |name: &str| {
        stored
            .split_whitespace()
            .find_map(|w| w.strip_prefix(name)?.strip_prefix('=')?.parse::<usize>().ok())
            .with_context(|| format!("the harness answered `{stored}`"))
    };
    let (sent, results) = (number("progress")?, number("result")?);
    ensure!(sent >= STORED_BEFORE_KILL, "only {sent} progress notifications stored ({killed})");
    let values: Vec<f64> = progress.lock().unwrap_or_else(|e| e.into_inner()).iter().map(|p| p.progress).collect();
    let expected: Vec<f64> = (1..=sent).map(|n| n as f64).collect();
    ensure!(
        values == expected,
        "the server sent progress 1 to {sent} (stored in Redis), the client got {values:?}: not each once and in order"
    );
    let done =
        format!("{instance} killed ({killed}); the {sent} progress notifications it sent arrived, each once, in order");
    let end = match ended {
        Err(_) => bail!("{done}; the call had not ended {RESUME_BOUND:?} later"),
        Ok(Ok(result)) => {
            let text = texts(&result);
            let wanted = format!("counted down from {RESUME_STEPS} (on {instance})");
            ensure!(results == 1 && text == wanted, "{done}; a result `{text}` the server never stored ({results})");
            format!("its result: {text}")
        }
        Ok(Err(e)) => {
            ensure!(results == 0, "{done}; the result was stored, but the call failed: {e}");
            let kind = e.http_error().map(|h| h.kind());
            ensure!(
                kind == Some(HttpErrorKind::StreamEnded),
                "{done}; the call failed with {e} ({kind:?}), not as a stream that could not be resumed"
            );
            format!("the error of a request lost with its instance: {e}")
        }
    };
    let done = format!("{done}; the call ended {:.1} s later with {end}", took.as_secs_f64());
    // The client resumed through the balancer: GETs with Last-Event-ID, none to the dead one.
    let (_, requests) = landed(harness, ME).await?;
    let resumed: Vec<&Landed> = requests.iter().filter(|r| r.method == "GET" && r.last_event_id.is_some()).collect();
    ensure!(!resumed.is_empty(), "{done}; but no GET with Last-Event-ID reached the balancer");
    let shown: Vec<String> = resumed
        .iter()
        .map(|r| format!("{} -> {} {}", r.last_event_id.as_deref().unwrap_or_default(), r.instance, r.status))
        .collect();
    let done = format!("{done}; resumed {} times ({})", resumed.len(), shown.join(", "));
    let after = call(&client, "test_simple_text", json!({})).await;
    let _ = tokio::time::timeout(STEP, client.close()).await;
    after.with_context(|| format!("{done}; but a call on the same session afterwards failed"))?;
    Ok(format!("{done}; the session still serves calls"))
}

// ===== redis =====

/// Redis dies and comes back: requests end within a bound meanwhile with the documented
/// outcome, no instance dies, the service returns after; three verdicts (`redis while down`,
/// `redis back (2026-07-28)`, `redis back (sessions)`).
async fn redis(url: &str, harness: &mut Harness) -> Vec<Verdict> {
    // Before: one client of each era, which must work, and a session no instance knows: 404.
    let mut before = Vec::new();
    let session = connect(url, ProtocolVersion::V2025_11_25, "redis-session").await;
    let stateless = connect(url, ProtocolVersion::V2026_07_28, "redis-2026").await;
    for (label, client) in [("session", &session), ("2026-07-28", &stateless)] {
        let called = match client {
            Ok(client) => call(client, "test_simple_text", json!({})).await.map(|_| ()),
            Err(e) => Err(anyhow::anyhow!("connecting: {e:#}")),
        };
        if let Err(e) = called {
            before.push(format!("before, {label}: {e:#}"));
        }
    }
    if let Err(e) = unknown_session(url, 404).await {
        before.push(format!("before: {e:#}"));
    }
    let down = while_down(url, harness, session.as_ref().ok(), stateless.as_ref().ok()).await;
    for client in [session, stateless].into_iter().flatten() {
        let _ = tokio::time::timeout(STEP, client.close()).await;
    }
    let [back_stateless, back_session] =
        [ProtocolVersion::V2026_07_28, ProtocolVersion::V2025_11_25].map(|v| service_back(url, v));
    let back_stateless = back_stateless.await;
    let back_session = back_session.await.and_then(|took| {
        ensure!(before.is_empty(), "{}", before.join("; "));
        Ok(took)
    });
    // Once back, a session no instance knows is a 404 again, not a 503.
    let back_session = match back_session {
        Ok(took) => unknown_session(url, 404).await.map(|_| took),
        Err(e) => Err(e),
    };
    let back = |r: anyhow::Result<Duration>| r.map(|took| format!("back {:.1} s after Redis", took.as_secs_f64()));
    vec![
        verdict("redis while down", down),
        verdict("redis back (2026-07-28)", back(back_stateless)),
        verdict("redis back (sessions)", back(back_session)),
    ]
}

/// A ping POSTed through the balancer in a session no instance holds (2025-11-25): `status`,
/// and with 503 `Retry-After: 1` (docs/deploy.md: the instance cannot look the session up).
async fn unknown_session(url: &str, status: u16) -> anyhow::Result<String> {
    let http = reqwest::Client::builder().timeout(REDIS_DOWN_BOUND).build()?;
    let response = http
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", "fleet-check-no-such-session")
        .header(LABEL, "redis-unknown")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .send()
        .await
        .context("a request in an unknown session")?;
    let got = response.status().as_u16();
    let retry_after = response.headers().get("retry-after").map(|v| v.to_str().unwrap_or("?").to_owned());
    ensure!(got == status, "a request in an unknown session: {got}, not {status} (Retry-After {retry_after:?})");
    if status == 503 {
        ensure!(retry_after.as_deref() == Some("1"), "503 for an unknown session with Retry-After {retry_after:?}");
    }
    Ok(format!("{got}{}", retry_after.map(|r| format!(" Retry-After {r}")).unwrap_or_default()))
}

/// Kills Redis (through the harness); then within [`REDIS_DOWN_BOUND`] each:
/// - a call of the existing session succeeds (its instance holds a copy) or gets 503 with
///   `Retry-After: 1` (it holds none and cannot load the record);
/// - a session no instance holds gets 503 with `Retry-After: 1`;
/// - a new session fails `initialize` with -32603 (its record cannot be saved);
/// - 2026-07-28 needs no Redis: its calls and a new connection succeed.
///
/// Then the harness checks the instances and restarts Redis.
async fn while_down(
    url: &str,
    harness: &mut Harness,
    session: Option<&Client>,
    stateless: Option<&Client>,
) -> anyhow::Result<String> {
    harness.ask("redis-down").await?;
    let mut outcomes: Vec<String> = Vec::new();
    let mut wrong = Vec::new();
    let bounded = |what: String| format!("{what}: no end within {REDIS_DOWN_BOUND:?}");
    for _ in 0..3 {
        if let Some(client) = session {
            match tokio::time::timeout(REDIS_DOWN_BOUND, client.call_tool("test_simple_text", json!({}))).await {
                Err(_) => wrong.push(bounded("a session call".to_owned())),
                Ok(Ok(_)) => outcomes.push("session call ok".to_owned()),
                Ok(Err(e)) if e.http_error().and_then(|h| h.status()).is_some_and(|s| s.as_u16() == 503) => {
                    outcomes.push("session call 503".to_owned());
                }
                Ok(Err(e)) => wrong.push(format!("a session call failed with {e}, not 503")),
            }
        }
        if let Some(client) = stateless {
            match tokio::time::timeout(REDIS_DOWN_BOUND, client.call_tool("test_simple_text", json!({}))).await {
                Err(_) => wrong.push(bounded("a 2026-07-28 call".to_owned())),
                Ok(Ok(_)) => outcomes.push("2026-07-28 call ok".to_owned()),
                Ok(Err(e)) => wrong.push(format!("a 2026-07-28 call failed: {e}")),
            }
        }
    }
    match unknown_session(url, 503).await {
        Ok(got) => outcomes.push(format!("unknown session {got}")),
        Err(e) => wrong.push(format!("{e:#}")),
    }
    let new_session = connect_labelled(url, ProtocolVersion::V2025_11_25, "redis-new-session");
    match tokio::time::timeout(REDIS_DOWN_BOUND, new_session).await {
        Err(_) => wrong.push(bounded("a new session".to_owned())),
        Ok(Ok(client)) => {
            wrong.push("a new session was created without Redis".to_owned());
            let _ = tokio::time::timeout(STEP, client.close()).await;
        }
        Ok(Err(e)) => match e.downcast_ref::<ClientError>() {
            Some(ClientError::Remote(o)) if o.code == -32603 => {
                outcomes.push(format!("new session -32603 ({})", o.message));
            }
            _ => wrong.push(format!("a new session failed with {e:#}, not -32603")),
        },
    }
    let new_stateless = connect_labelled(url, ProtocolVersion::V2026_07_28, "redis-new-2026");
    match tokio::time::timeout(REDIS_DOWN_BOUND, new_stateless).await {
        Err(_) => wrong.push(bounded("a new 2026-07-28 connection".to_owned())),
        Ok(Ok(client)) => {
            outcomes.push("new 2026-07-28 connection ok".to_owned());
            let _ = tokio::time::timeout(STEP, client.close()).await;
        }
        Ok(Err(e)) => wrong.push(format!("a new 2026-07-28 connection failed: {e:#}")),
    }
    // Every 503 the session's calls got carried `Retry-After: 1`, as the balancer saw it.
    let logged = landed(harness, "redis-session").await;
    let up = harness.ask("redis-up").await?;
    for request in logged?.1.iter().filter(|r| r.status == "503") {
        if request.retry_after.as_deref() != Some("1") {
            wrong.push(format!("a 503 from {} with Retry-After {:?}", request.instance, request.retry_after));
        }
    }
    ensure!(wrong.is_empty(), "{} (and {})", wrong.join("; "), summarize(&outcomes));
    Ok(format!("every request ended as documented: {}; {up}", summarize(&outcomes)))
}

/// Polls until a new client of `version` connects and calls, within
/// [`REDIS_BACK_DEADLINE`]; how long that took.
async fn service_back(url: &str, version: ProtocolVersion) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let mut last = String::new();
    while started.elapsed() < REDIS_BACK_DEADLINE {
        let attempt = async {
            let client = connect(url, version, "redis-back").await?;
            let called = call(&client, "test_simple_text", json!({})).await;
            let _ = tokio::time::timeout(STEP, client.close()).await;
            called.map(|_| ())
        };
        match tokio::time::timeout(REDIS_DOWN_BOUND, attempt).await {
            Ok(Ok(())) => return Ok(started.elapsed()),
            Ok(Err(e)) => last = format!("{e:#}"),
            Err(_) => last = format!("an attempt took more than {REDIS_DOWN_BOUND:?}"),
        }
        // The next attempt, a little later.
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    bail!("no {version} service within {REDIS_BACK_DEADLINE:?} of Redis: {last}")
}

/// `3 × session call ok, 1 × ...`: the outcomes, counted.
fn summarize(outcomes: &[String]) -> String {
    let mut counted: BTreeMap<&str, usize> = BTreeMap::new();
    for outcome in outcomes {
        *counted.entry(outcome.as_str()).or_default() += 1;
    }
    counted.iter().map(|(o, n)| format!("{n} × {o}")).collect::<Vec<_>>().join(", ")
}
