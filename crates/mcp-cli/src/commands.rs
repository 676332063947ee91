//! The commands: each names its server, connects, sends its request and prints the answer
//! (a table or readable text on stdout, or one JSON document with `--json`).

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use mcp_sdk::client::skills::SkillError;
use mcp_sdk::client::{CallOptions, Client, ClientError};
use mcp_sdk::jsonrpc::CancellationToken;
use mcp_types::{
    CallToolRequestParams, CompleteRequestParams, CompleteRequestParamsArgument, CompleteRequestParamsContext,
    CompletionReference, PromptReference, ProtocolVersion, ResourceTemplateReference,
};
use serde_json::{Map, Value, json};

use crate::args::{self, Pair};
use crate::cli::{CallArgs, Cli, Command, CompleteArgs, Global, exit};
use crate::output::{self, Out};
use crate::session::{self, Failure};
use crate::task;
use crate::ui::Ui;

/// Runs the command; its exit code.
pub async fn run(cli: Cli) -> ExitCode {
    let Cli { global, command } = cli;
    match command {
        Command::Completions { shell } => {
            let mut command = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut command, "mcp", &mut std::io::stdout());
            ExitCode::from(exit::OK)
        }
        Command::Proxy(args) => crate::proxy::run(args, &global).await,
        Command::Auth(command) => crate::auth::run(command, &global).await,
        Command::Check(server) => crate::check::run(server, &global).await,
        Command::Web(args) => crate::web::run(args, &global).await,
        command => client_command(command, &global).await,
    }
}

/// What a command asks of its server.
#[derive(Debug)]
enum Request {
    Info,
    Tools,
    Prompts,
    Resources,
    Templates,
    Ping,
    Call {
        name: String,
        base: Map<String, Value>,
        pairs: Vec<Pair>,
        task: bool,
    },
    Prompt {
        name: String,
        base: Map<String, Value>,
        pairs: Vec<Pair>,
    },
    Read {
        uri: String,
    },
    Skills {
        get: Option<String>,
        read: Option<String>,
    },
    Complete {
        reference: CompletionReference,
        argument: CompleteRequestParamsArgument,
        context: BTreeMap<String, String>,
    },
}

/// What a command needs to print.
struct Ctx<'a> {
    global: &'a Global,
    ui: Arc<Ui>,
    out: Out,
    /// Fired by Ctrl-C.
    interrupt: CancellationToken,
}

/// A command that talks to a server as a client: reads the command line, connects, performs
/// the request (Ctrl-C cancels either), reports a failure on stderr, closes.
async fn client_command(command: Command, global: &Global) -> ExitCode {
    let ui = Arc::new(Ui::new(global.log_level == "off"));
    let interrupt = session::interrupt_on_ctrl_c();
    let connected = async {
        session::check_log_level(global)?;
        let (request, server) = parse(command)?;
        let client = session::interruptible(&interrupt, session::open(global, &server, ui.clone())).await?;
        Ok::<_, Failure>((request, client))
    };
    let (request, client) = match connected.await {
        Ok(connected) => connected,
        Err(failure) => return ExitCode::from(report(&ui, &failure)),
    };
    let ctx = Ctx { global, ui: ui.clone(), out: Out::stdout(), interrupt: interrupt.clone() };
    let result = match request {
        // A call cancels itself (its request, or its task) on Ctrl-C.
        Request::Call { .. } => perform(&client, request, &ctx).await,
        _ => session::interruptible(&interrupt, perform(&client, request, &ctx)).await,
    };
    let code = match &result {
        Ok(code) => *code,
        Err(failure) => report(&ui, failure),
    };
    session::close(client).await;
    ExitCode::from(code)
}

/// Tells the user why the command failed (`cancelled` after Ctrl-C); its exit code.
fn report(ui: &Ui, failure: &Failure) -> u8 {
    if failure.code == exit::INTERRUPTED {
        ui.finish();
        eprintln!("{}", failure.message);
    } else {
        ui.error(&failure.message);
    }
    failure.code
}

/// The request of a command, and the words that name its server.
fn parse(command: Command) -> Result<(Request, Vec<String>), Failure> {
    Ok(match command {
        Command::Info(s) => (Request::Info, s.server),
        Command::Tools(s) => (Request::Tools, s.server),
        Command::Prompts(s) => (Request::Prompts, s.server),
        Command::Resources(s) => (Request::Resources, s.server),
        Command::Templates(s) => (Request::Templates, s.server),
        Command::Ping(s) => (Request::Ping, s.server),
        Command::Read(r) => (Request::Read { uri: r.uri }, r.server.server),
        Command::Skills(k) => (Request::Skills { get: k.get, read: k.read }, k.server.server),
        Command::Call(c) => {
            let task = c.task;
            let (name, base, pairs, server) = call_words(c)?;
            (Request::Call { name, base, pairs, task }, server)
        }
        Command::Prompt(c) => {
            let (name, base, pairs, server) = call_words(c)?;
            (Request::Prompt { name, base, pairs }, server)
        }
        Command::Complete(c) => complete_words(c)?,
        other => return Err(Failure::usage(format!("not a client command: {other:?}"))),
    })
}

/// A call's name, its `--args` object, its `key=value` pairs, and its server's words.
type CallWords = (String, Map<String, Value>, Vec<Pair>, Vec<String>);

fn call_words(call: CallArgs) -> Result<CallWords, Failure> {
    let (pairs, server) = args::split(&call.words, &call.command).map_err(Failure::usage)?;
    let base = match &call.args {
        Some(json) => args::json_arguments(json).map_err(Failure::usage)?,
        None => Map::new(),
    };
    Ok((call.name, base, pairs, server))
}

/// `prompt:NAME` or `resource:TEMPLATE`, `name=value`, and the `--context name=value` pairs.
fn complete_words(complete: CompleteArgs) -> Result<(Request, Vec<String>), Failure> {
    let reference: CompletionReference = match complete.reference.split_once(':') {
        Some(("prompt", name)) => PromptReference::new(name).into(),
        Some(("resource", uri)) => ResourceTemplateReference::new(uri).into(),
        _ => return Err(Failure::usage(format!("{}: not prompt:NAME or resource:TEMPLATE", complete.reference))),
    };
    let Some((name, value)) = complete.argument.split_once('=') else {
        return Err(Failure::usage(format!("{}: not name=value", complete.argument)));
    };
    let argument = CompleteRequestParamsArgument::new(name, value);
    let mut context = BTreeMap::new();
    for pair in &complete.context {
        let Some((name, value)) = pair.split_once('=').filter(|(name, _)| !name.is_empty()) else {
            return Err(Failure::usage(format!("--context {pair}: not name=value")));
        };
        if context.insert(name.to_owned(), value.to_owned()).is_some() {
            return Err(Failure::usage(format!("--context {name}: given twice")));
        }
    }
    Ok((Request::Complete { reference, argument, context }, complete.server.server))
}

/// Sends the request and prints its answer; the exit code.
async fn perform(client: &Client, request: Request, ctx: &Ctx<'_>) -> Result<u8, Failure> {
    match request {
        Request::Info => info(client, ctx),
        Request::Tools | Request::Prompts | Request::Resources | Request::Templates => {
            list(client, &request, ctx).await
        }
        Request::Ping => {
            let started = Instant::now();
            client.ping().await?;
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            if ctx.global.json {
                output::json(&json!({"ok": true, "milliseconds": ms}));
            } else {
                println!("ok ({ms:.1} ms)");
            }
            Ok(exit::OK)
        }
        Request::Call { name, base, pairs, task } => call(client, &name, (base, &pairs, task), ctx).await,
        Request::Prompt { name, base, pairs } => prompt(client, &name, base, &pairs, ctx).await,
        Request::Read { uri } => {
            session::set_log_level(client, ctx.global).await?;
            let result = client.read_resource(&uri).await?;
            ctx.ui.finish();
            print(ctx, &result, || output::read_result(&result));
            Ok(exit::OK)
        }
        Request::Complete { reference, argument, context } => complete(client, reference, argument, context, ctx).await,
        Request::Skills { get, read } => skills(client, get, read, ctx).await,
    }
}

/// `mcp skills`: the list (URI, name, files, description); with `--get`, the skill loaded
/// (verified) and its SKILL.md printed; with `--read` too, that file of it, verified.
async fn skills(client: &Client, get: Option<String>, read: Option<String>, ctx: &Ctx<'_>) -> Result<u8, Failure> {
    use mcp_sdk::types::skills::SkillResources;
    let failed = |e: SkillError| match e {
        SkillError::Client(e) => Failure::from(e),
        other => Failure::server(other.to_string()),
    };
    let Some(uri) = get else {
        let skills = client.list_skills().await.map_err(failed)?;
        ctx.ui.finish();
        if ctx.global.json {
            output::json(&json!({ "skills": skills }));
        } else if skills.is_empty() {
            eprintln!("no skills");
        } else {
            let rows: Vec<Vec<String>> = skills
                .iter()
                .map(|s| {
                    let files = match &s.resources {
                        SkillResources::Files(files) => files.len().to_string(),
                        SkillResources::Dynamic(_) => "dynamic".to_owned(),
                    };
                    let description = s.description().unwrap_or_default().to_owned();
                    vec![s.uri.clone(), s.name().unwrap_or_default().to_owned(), files, description]
                })
                .collect();
            ctx.out.table(&["URI", "NAME", "FILES", "DESCRIPTION"], &rows);
        }
        return Ok(exit::OK);
    };
    let skill = client.get_skill(&uri).await.map_err(failed)?;
    let loaded = client.load_skill(&skill).await.map_err(failed)?;
    let Some(file) = read else {
        ctx.ui.finish();
        print(ctx, &json!({"skill": skill, "instructions": loaded.instructions}), || {
            loaded.instructions.trim_end().to_owned()
        });
        return Ok(exit::OK);
    };
    let bytes = client.read_skill_file(&skill, &file).await.map_err(failed)?;
    ctx.ui.finish();
    match String::from_utf8(bytes) {
        Ok(text) => print(ctx, &json!({"uri": file, "text": text}), || text.trim_end().to_owned()),
        Err(e) => {
            use std::io::Write as _;
            let bytes = e.into_bytes();
            if ctx.global.json {
                use base64::Engine as _;
                output::json(&json!({"uri": file, "blob": base64::engine::general_purpose::STANDARD.encode(&bytes)}));
            } else {
                std::io::stdout().write_all(&bytes).map_err(|e| Failure::server(e.to_string()))?;
            }
        }
    }
    Ok(exit::OK)
}

/// `mcp complete`: with `--context`, the other arguments' values go in `context.arguments`.
async fn complete(
    client: &Client,
    reference: CompletionReference,
    argument: CompleteRequestParamsArgument,
    context: BTreeMap<String, String>,
    ctx: &Ctx<'_>,
) -> Result<u8, Failure> {
    let mut params = CompleteRequestParams::new(argument, reference);
    if !context.is_empty() {
        // `context` came with 2025-06-18: refused rather than left out, since the server would
        // complete without what the user chose.
        let version = client.protocol_version();
        if version < ProtocolVersion::V2025_06_18 {
            return Err(Failure::usage(format!(
                "--context needs protocol revision 2025-06-18 or later (the server speaks {version})"
            )));
        }
        params.context = Some(CompleteRequestParamsContext::default().with_arguments(context));
    }
    let result = client.complete_with(params, CallOptions::default()).await?;
    print(ctx, &result, || output::complete_result(&result));
    Ok(exit::OK)
}

/// `value` as JSON with `--json`, else `text()`.
fn print(ctx: &Ctx<'_>, value: &impl serde::Serialize, text: impl FnOnce() -> String) {
    if ctx.global.json {
        output::json(value);
    } else {
        let text = text();
        if !text.is_empty() {
            println!("{text}");
        }
    }
}

/// `mcp info`.
fn info(client: &Client, ctx: &Ctx<'_>) -> Result<u8, Failure> {
    let server = client.server_info();
    let capabilities = serde_json::to_value(client.server_capabilities()).unwrap_or_default();
    if ctx.global.json {
        output::json(&json!({
            "serverInfo": server,
            "protocolVersion": client.protocol_version().to_string(),
            "capabilities": capabilities,
            "instructions": client.instructions(),
        }));
        return Ok(exit::OK);
    }
    let mut rows = vec![("name", server.name.clone())];
    rows.extend(server.title.clone().map(|t| ("title", t)));
    rows.push(("version", server.version.clone()));
    rows.extend(server.description.clone().map(|d| ("description", d)));
    rows.extend(server.website_url.clone().map(|w| ("website", w)));
    rows.push(("revision", client.protocol_version().to_string()));
    rows.push(("capabilities", capability_list(&capabilities)));
    rows.extend(client.instructions().map(|i| ("instructions", i.trim().replace('\n', "\n              "))));
    let bold = ctx.out.style(console::Style::new().bold());
    for (key, value) in rows {
        println!("{} {value}", bold.apply_to(format!("{key:<13}")));
    }
    Ok(exit::OK)
}

/// The capabilities in one line: `logging, prompts (listChanged), resources (subscribe)`.
fn capability_list(capabilities: &Value) -> String {
    let Some(capabilities) = capabilities.as_object() else { return String::new() };
    let described = capabilities.iter().filter(|(_, v)| !v.is_null()).map(|(name, settings)| {
        let on: Vec<&str> = settings
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(_, v)| !matches!(v, Value::Null | Value::Bool(false)))
            .map(|(k, _)| k.as_str())
            .collect();
        if on.is_empty() { name.clone() } else { format!("{name} ({})", on.join(", ")) }
    });
    let list: Vec<String> = described.collect();
    if list.is_empty() { "(none)".to_owned() } else { list.join(", ") }
}

/// `mcp tools|prompts|resources|templates`: every page; a list the server does not offer is
/// empty (said on stderr).
async fn list(client: &Client, request: &Request, ctx: &Ctx<'_>) -> Result<u8, Failure> {
    let caps = client.server_capabilities();
    let (key, offered) = match request {
        Request::Tools => ("tools", caps.tools.is_some()),
        Request::Prompts => ("prompts", caps.prompts.is_some()),
        Request::Resources => ("resources", caps.resources.is_some()),
        _ => ("resourceTemplates", caps.resources.is_some()),
    };
    let (header, rows, items): (&[&str], _, Value) = match request {
        _ if !offered => (&[], Vec::new(), json!([])),
        Request::Tools => {
            let tools = client.list_all_tools().await?;
            (&["NAME", "ARGUMENTS", "DESCRIPTION"], output::tool_rows(&tools), to_json(&tools))
        }
        Request::Prompts => {
            let prompts = client.list_all_prompts().await?;
            (&["NAME", "ARGUMENTS", "DESCRIPTION"], output::prompt_rows(&prompts), to_json(&prompts))
        }
        Request::Resources => {
            let resources = client.list_all_resources().await?;
            (&["URI", "NAME", "MIME TYPE", "DESCRIPTION"], output::resource_rows(&resources), to_json(&resources))
        }
        _ => {
            let templates = client.list_all_resource_templates().await?;
            (
                &["URI TEMPLATE", "NAME", "MIME TYPE", "DESCRIPTION"],
                output::template_rows(&templates),
                to_json(&templates),
            )
        }
    };
    if ctx.global.json {
        output::json(&json!({ key: items }));
    } else if rows.is_empty() {
        let what = if key == "resourceTemplates" { "resource templates" } else { key };
        let why = if offered { "" } else { " (the server does not offer them)" };
        eprintln!("no {what}{why}");
    } else {
        ctx.out.table(header, &rows);
    }
    Ok(exit::OK)
}

fn to_json(value: &impl serde::Serialize) -> Value {
    serde_json::to_value(value).unwrap_or_default()
}

/// `mcp call`: the arguments typed and checked by the tool's input schema, then the call with
/// a progress bar (as a task with `--task`, or when the tool requires it); exit 1 when the
/// result is an error. Ctrl-C cancels the call (or the task).
async fn call(
    client: &Client,
    name: &str,
    (base, pairs, as_task): (Map<String, Value>, &[Pair], bool),
    ctx: &Ctx<'_>,
) -> Result<u8, Failure> {
    let prepared = async {
        let tools = client.list_all_tools().await?;
        let Some(tool) = tools.iter().find(|t| t.name == name) else {
            let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
            return Err(Failure::usage(format!("no tool named `{name}` (the server has: {})", names.join(", "))));
        };
        let arguments = args::tool_arguments(&tool.input_schema, base, pairs)
            .map_err(|e| Failure::usage(format!("{name}: {e}")))?;
        session::set_log_level(client, ctx.global).await?;
        Ok((arguments, as_task || task::required(tool)))
    };
    let (arguments, as_task) = session::interruptible(&ctx.interrupt, prepared).await?;
    let mut params = CallToolRequestParams::new(name);
    params.arguments = arguments.as_object().cloned();
    let ui = ctx.ui.clone();
    let options = CallOptions::default().on_progress(move |progress| ui.progress(&progress));
    let result = if as_task {
        task::call(client, params, options, &ctx.ui, &ctx.interrupt).await
    } else {
        match client.call_tool_with(params.clone(), options.clone().cancel_on(ctx.interrupt.clone())).await {
            // A 2026-07-28 tool that needs the tasks extension (its listing does not say so).
            Err(ClientError::Remote(e)) if task::needed(&e) && client.supports_tool_tasks() => {
                task::call(client, params, options, &ctx.ui, &ctx.interrupt).await
            }
            other => other.map_err(Failure::from),
        }
    };
    ctx.ui.finish();
    let result = result?;
    print(ctx, &result, || output::call_result(&result));
    if result.is_error() {
        ctx.ui.error(&format!("the tool `{name}` reported an error"));
        return Ok(exit::SERVER_ERROR);
    }
    Ok(exit::OK)
}

/// `mcp prompt`: the arguments checked against the prompt's, then its messages.
async fn prompt(
    client: &Client,
    name: &str,
    base: Map<String, Value>,
    pairs: &[Pair],
    ctx: &Ctx<'_>,
) -> Result<u8, Failure> {
    let prompts = client.list_all_prompts().await?;
    let Some(prompt) = prompts.iter().find(|p| p.name == name) else {
        let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
        return Err(Failure::usage(format!("no prompt named `{name}` (the server has: {})", names.join(", "))));
    };
    let declared = prompt.arguments.clone().unwrap_or_default();
    let arguments =
        args::prompt_arguments(&declared, base, pairs).map_err(|e| Failure::usage(format!("{name}: {e}")))?;
    session::set_log_level(client, ctx.global).await?;
    let result = client.get_prompt(name, arguments).await?;
    ctx.ui.finish();
    print(ctx, &result, || output::prompt_result(&result, &ctx.out));
    Ok(exit::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capabilities_print_in_one_line() {
        let caps = json!({"logging": {}, "prompts": {"listChanged": true}, "resources": {"subscribe": true, "listChanged": false}, "tools": null});
        assert_eq!(capability_list(&caps), "logging, prompts (listChanged), resources (subscribe)");
        assert_eq!(capability_list(&json!({})), "(none)");
    }
}
