//! The command line: global options, the server to talk to, and the commands.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Exit codes (documented in docs/cli.md).
pub mod exit {
    /// Success.
    pub const OK: u8 = 0;
    /// The server answered with an error (a JSON-RPC error, or a tool result with `isError`).
    pub const SERVER_ERROR: u8 = 1;
    /// The command line or its arguments were wrong (usage).
    pub const USAGE: u8 = 2;
    /// The server could not be reached or started, or the connection broke.
    pub const CONNECTION: u8 = 3;
    /// `mcp check` found problems.
    pub const CHECK_FAILED: u8 = 4;
    /// Interrupted (Ctrl-C): the request was cancelled.
    pub const INTERRUPTED: u8 = 130;
    /// A bug of `mcp` itself.
    pub const INTERNAL: u8 = 70;
}

/// Inspect, call, test and bridge any MCP server.
#[derive(Debug, Parser)]
#[command(name = "mcp", version, about, propagate_version = true)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes.
#[derive(Debug, Args, Clone)]
pub struct Global {
    /// A host configuration file with an `mcpServers` map (Claude Desktop's format).
    #[arg(long, global = true, env = "MCP_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The entry of `--config` to use.
    #[arg(long, global = true, value_name = "NAME")]
    pub server: Option<String>,
    /// Speak this protocol revision (2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25,
    /// 2026-07-28) instead of negotiating the newest.
    #[arg(long, global = true, value_name = "REVISION")]
    pub protocol: Option<String>,
    /// Extra HTTP headers for a server at a URL (`Name: value`), repeatable.
    #[arg(long = "header", short = 'H', global = true, value_name = "HEADER")]
    pub headers: Vec<String>,
    /// Print JSON (one document) instead of tables: for scripts.
    #[arg(long, global = true)]
    pub json: bool,
    /// Refuse what the server asks of the user (sampling, elicitation) instead of asking at
    /// the terminal.
    #[arg(long, global = true)]
    pub no_input: bool,
    /// How long a request may take, in seconds (each progress notification restarts the
    /// clock of a call).
    #[arg(long, global = true, default_value_t = 60.0, value_name = "SECONDS")]
    pub timeout: f64,
    /// The server's log messages to show (on stderr) during `call`, `prompt` and `read`:
    /// debug, info, notice, warning, error, critical, alert, emergency; `off` asks for none.
    /// Sent with `logging/setLevel` when the server offers logging.
    #[arg(long, global = true, default_value = "info", value_name = "LEVEL")]
    pub log_level: String,
    /// Log what happens (to stderr): `-v` info, `-vv` debug, `-vvv` trace.
    #[arg(long, short, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

/// The server, when named on the command line: a URL, or a command after `--`.
#[derive(Debug, Args, Clone, Default)]
pub struct ServerArgs {
    /// The server: `http(s)://...` for one at a URL; a command line after `--` for one run as
    /// a child process (stdio).
    #[arg(id = "target", value_name = "SERVER", trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub server: Vec<String>,
}

/// What to do.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// The server's name, version, revision, capabilities and instructions.
    Info(ServerArgs),
    /// The server's tools.
    Tools(ServerArgs),
    /// The server's prompts.
    Prompts(ServerArgs),
    /// The server's resources.
    Resources(ServerArgs),
    /// The server's resource templates.
    Templates(ServerArgs),
    /// Calls a tool: `mcp call NAME key=value... [URL | -- COMMAND...]`.
    Call(CallArgs),
    /// Gets a prompt: `mcp prompt NAME key=value... [URL | -- COMMAND...]`.
    Prompt(CallArgs),
    /// Reads a resource.
    Read(ReadArgs),
    /// The server's skills (the Skills extension): lists them; `--get URI` loads one (its
    /// SKILL.md, checked against its entry) and prints it; with `--read FILE_URI`, prints
    /// that file of the skill instead, checked too.
    Skills(SkillsArgs),
    /// Asks the server to complete an argument of a prompt or resource template.
    Complete(CompleteArgs),
    /// Pings the server.
    Ping(ServerArgs),
    /// Logs in to (or out of) a server that asks for OAuth.
    #[command(subcommand)]
    Auth(AuthCommand),
    /// Bridges stdio and Streamable HTTP: `mcp proxy URL` gives a stdio client a remote
    /// server; `mcp proxy --serve ADDR -- COMMAND` serves a stdio server over HTTP.
    Proxy(ProxyArgs),
    /// Checks a server: handshake per revision, lists and pagination, schemas, errors.
    Check(ServerArgs),
    /// Inspects a server in the browser: serves a page on 127.0.0.1 (behind a random token in
    /// its URL) and opens it.
    Web(WebArgs),
    /// Prints shell completions.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// `call` and `prompt`: `NAME [KEY=VALUE...] [URL] [-- COMMAND...]`.
#[derive(Debug, Args)]
pub struct CallArgs {
    /// The tool's (or prompt's) name.
    pub name: String,
    /// The arguments as JSON, or `@FILE` to read them from a file (instead of `key=value`).
    #[arg(long, value_name = "JSON|@FILE")]
    pub args: Option<String>,
    /// `call`: run the tool as a task, polled until it is over (done anyway for a tool whose
    /// `taskSupport` is `required`).
    #[arg(long)]
    pub task: bool,
    /// `key=value` arguments (typed by the tool's input schema; `key:=JSON` for raw JSON),
    /// then the server's URL if it is at one.
    #[arg(value_name = "KEY=VALUE... [URL]", num_args = 0..)]
    pub words: Vec<String>,
    /// The server's command line, after `--`.
    #[arg(value_name = "COMMAND", last = true, num_args = 0..)]
    pub command: Vec<String>,
}

/// `read`.
#[derive(Debug, Args)]
pub struct ReadArgs {
    /// The resource's URI.
    pub uri: String,
    #[command(flatten)]
    pub server: ServerArgs,
}

/// `skills`.
#[derive(Debug, Args)]
pub struct SkillsArgs {
    /// The skill to load: the URI of its SKILL.md.
    #[arg(long, value_name = "URI")]
    pub get: Option<String>,
    /// With `--get`: the file of the skill to print (its URI).
    #[arg(long, value_name = "FILE_URI", requires = "get")]
    pub read: Option<String>,
    #[command(flatten)]
    pub server: ServerArgs,
}

/// `complete`.
#[derive(Debug, Args)]
pub struct CompleteArgs {
    /// `prompt:NAME` or `resource:URI_TEMPLATE`.
    pub reference: String,
    /// The argument to complete, and what is typed so far: `name=value`.
    pub argument: String,
    /// The value of another argument, already chosen (`context.arguments` of the request;
    /// repeatable; protocol revision 2025-06-18 or later).
    #[arg(long = "context", value_name = "NAME=VALUE")]
    pub context: Vec<String>,
    #[command(flatten)]
    pub server: ServerArgs,
}

/// `auth`.
#[derive(Debug, Subcommand)]
pub enum AuthCommand {
    /// Logs in (the OAuth authorization code flow in a browser) and keeps the tokens.
    Login {
        /// The server's URL.
        url: String,
    },
    /// Forgets the tokens of a server.
    Logout {
        /// The server's URL.
        url: String,
    },
    /// Which servers have tokens, and until when.
    Status,
}

/// `web`.
#[derive(Debug, Args)]
pub struct WebArgs {
    /// The port on 127.0.0.1 to serve the page at (0: any free port).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Print the page's URL but do not open a browser (else `$BROWSER`, or `xdg-open`).
    #[arg(long)]
    pub no_open: bool,
    #[command(flatten)]
    pub server: ServerArgs,
}

/// `proxy`.
#[derive(Debug, Args)]
pub struct ProxyArgs {
    /// Serve the stdio server (after `--`) over Streamable HTTP at this address.
    #[arg(long, value_name = "ADDR")]
    pub serve: Option<String>,
    /// A server mounted under NAME, through a gateway (repeatable): `TARGET` is a command line
    /// (split at whitespace) or an `http(s)://` URL; its tools and prompts are listed as
    /// `NAME_tool`, its resources as `NAME+uri`. Served on stdio, or at `--serve ADDR`; a
    /// server after `--` (or a URL) is mounted unprefixed beside them.
    #[arg(long = "named-server", num_args = 2, value_names = ["NAME", "TARGET"])]
    pub named_server: Vec<String>,
    #[command(flatten)]
    pub server: ServerArgs,
}

/// Sets up logging to stderr (never stdout: `mcp proxy` speaks the protocol there).
pub fn init_logging(global: &Global) {
    let level = match global.verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_env_filter(filter).init();
}
