//! Which server a command talks to (a URL, a command line, or an entry of a host's
//! configuration file), and the client connected to it.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use mcp_sdk::client::{Client, ClientBuilder};
use mcp_sdk::jsonrpc::PeerConfig;
use mcp_sdk::transport::stdio::{ChildCommand, StderrMode};
use mcp_types::ProtocolVersion;

use crate::cli::Global;

/// A server to talk to.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// Streamable HTTP (or HTTP+SSE) at a URL, with extra headers.
    Url {
        /// The endpoint.
        url: String,
        /// Headers sent with every request (`--header`, or the config entry's `headers`).
        headers: BTreeMap<String, String>,
    },
    /// A command run as a child process, spoken to over its stdio.
    Command {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables (the config entry's `env`).
        env: BTreeMap<String, String>,
    },
}

/// One entry of a host's `mcpServers` map (Claude Desktop's format, also used by other hosts).
#[derive(Debug, serde::Deserialize)]
struct Entry {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

/// The server named by `server` (the command's positional words: a URL, or a command line),
/// else by `--config`/`--server`.
pub fn resolve(global: &Global, server: &[String]) -> Result<Target> {
    let mut target = match (server.first(), &global.config) {
        (Some(first), _) if first.starts_with("http://") || first.starts_with("https://") => {
            if server.len() > 1 {
                bail!("a URL names the server alone: unexpected {:?}", &server[1..]);
            }
            Target::Url { url: first.clone(), headers: BTreeMap::new() }
        }
        (Some(program), _) => {
            Target::Command { program: program.clone(), args: server[1..].to_vec(), env: BTreeMap::new() }
        }
        (None, Some(config)) => from_config(config, global.server.as_deref())?,
        (None, None) => bail!("no server: give a URL, a command after `--`, or --config FILE --server NAME"),
    };
    if let Target::Url { headers, .. } = &mut target {
        for header in &global.headers {
            let (name, value) =
                header.split_once(':').with_context(|| format!("--header {header:?}: not `Name: value`"))?;
            headers.insert(name.trim().to_owned(), value.trim().to_owned());
        }
    }
    Ok(target)
}

/// The entry `name` of the `mcpServers` map in `file` (the only one, if `name` is `None`).
fn from_config(file: &Path, name: Option<&str>) -> Result<Target> {
    let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    #[derive(serde::Deserialize)]
    struct Config {
        #[serde(rename = "mcpServers")]
        servers: BTreeMap<String, Entry>,
    }
    let config: Config =
        serde_json::from_str(&text).with_context(|| format!("{}: not an mcpServers config", file.display()))?;
    let (name, entry) = match name {
        Some(name) => config
            .servers
            .into_iter()
            .find(|(n, _)| n == name)
            .with_context(|| format!("{}: no server named {name:?}", file.display()))?,
        None if config.servers.len() == 1 => config.servers.into_iter().next().expect("one entry"),
        None => bail!("{} has several servers: choose one with --server NAME", file.display()),
    };
    match (entry.command, entry.url) {
        (Some(program), None) => Ok(Target::Command { program, args: entry.args, env: entry.env }),
        (None, Some(url)) => Ok(Target::Url { url, headers: entry.headers }),
        _ => bail!("{}: server {name:?} needs either `command` or `url`", file.display()),
    }
}

/// The revision of `--protocol`, if given.
pub fn protocol(global: &Global) -> Result<Option<ProtocolVersion>> {
    global
        .protocol
        .as_deref()
        .map(|p| {
            ProtocolVersion::from_wire(p).with_context(|| format!("--protocol {p}: not a revision this tool speaks"))
        })
        .transpose()
}

/// The bound of each request (`--timeout`): at least a millisecond, at most a day.
pub fn timeout(global: &Global) -> Result<Duration> {
    let seconds = global.timeout;
    if !seconds.is_finite() || seconds <= 0.0 || seconds > 86_400.0 {
        bail!("--timeout {seconds}: a number of seconds, above 0 and at most 86400");
    }
    Ok(Duration::from_secs_f64(seconds.max(0.001)))
}

/// Connects `builder` (its handlers set by the caller) to `target`, pinned to `--protocol`,
/// each request bounded by `--timeout`. A child server's stderr is forwarded with `-v`, else
/// only its tail is kept (for the error if it dies).
pub async fn connect(global: &Global, target: &Target, mut builder: ClientBuilder) -> Result<Client> {
    if let Some(version) = protocol(global)? {
        builder = builder.protocol_version(version);
    }
    let timeout = timeout(global)?;
    let peer = PeerConfig { request_timeout: Some(timeout), ..PeerConfig::default() };
    builder = builder.peer_config(peer);
    let connecting = async {
        match target {
            Target::Url { url, headers } => {
                let url = url.parse().with_context(|| format!("{url}: not a URL"))?;
                let mut config = mcp_sdk::client::http::HttpClientConfig::new(url);
                for (name, value) in headers {
                    let name = name.parse().with_context(|| format!("header name {name:?}"))?;
                    let value = value.parse().with_context(|| format!("header value of {name}"))?;
                    config = config.header(name, value);
                }
                Ok::<_, anyhow::Error>(builder.connect_http_with(config).await?)
            }
            Target::Command { program, args, env } => {
                // The server's stderr: shown with `-v`; otherwise kept, and its tail reported
                // if the server dies.
                let stderr = if global.verbose > 0 { StderrMode::Forward } else { StderrMode::Capture };
                // In a process group of its own: Ctrl-C at the terminal reaches us only, and
                // the server gets `notifications/cancelled` and a clean shutdown instead.
                let mut command = ChildCommand::new(program)
                    .args(args)
                    .stderr(stderr)
                    .grace(Duration::from_secs(1))
                    .process_group(true);
                for (key, value) in env {
                    command = command.env(key, value);
                }
                Ok(builder.spawn(command).await?)
            }
        }
    };
    tokio::time::timeout(timeout, connecting).await.context("the server did not answer in time")?
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser as _;

    fn global(args: &[&str]) -> Global {
        crate::cli::Cli::parse_from([&["mcp"], args, &["ping"]].concat()).global
    }

    #[test]
    fn a_url_a_command_and_a_config_entry_name_servers() {
        let g = global(&["-H", "Authorization: Bearer x"]);
        let url = resolve(&g, &["https://h/mcp".into()]).unwrap();
        let Target::Url { headers, .. } = url else { panic!() };
        assert_eq!(headers["Authorization"], "Bearer x");
        let cmd = resolve(&g, &["npx".into(), "-y".into(), "s".into()]).unwrap();
        assert_eq!(
            cmd,
            Target::Command { program: "npx".into(), args: vec!["-y".into(), "s".into()], env: BTreeMap::new() }
        );
        let dir = std::env::temp_dir().join(format!("mcp-cli-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("config.json");
        std::fs::write(&file, r#"{"mcpServers": {"a": {"command": "srv", "args": ["--x"], "env": {"K": "V"}}, "b": {"url": "http://h/mcp", "headers": {"X": "1"}}}}"#).unwrap();
        let g = global(&["--config", file.to_str().unwrap(), "--server", "a"]);
        let Target::Command { program, env, .. } = resolve(&g, &[]).unwrap() else { panic!() };
        assert_eq!((program.as_str(), env["K"].as_str()), ("srv", "V"));
        let g = global(&["--config", file.to_str().unwrap()]);
        assert!(resolve(&g, &[]).unwrap_err().to_string().contains("several servers"));
        let g = global(&["--config", file.to_str().unwrap(), "--server", "b"]);
        assert!(matches!(resolve(&g, &[]).unwrap(), Target::Url { .. }));
        assert!(resolve(&global(&[]), &[]).is_err(), "no server at all");
        assert!(protocol(&global(&["--protocol", "1999-01-01"])).is_err());
        assert!(timeout(&global(&["--timeout", "inf"])).is_err());
        assert!(timeout(&global(&["--timeout", "0"])).is_err());
        assert_eq!(timeout(&global(&["--timeout", "1.5"])).unwrap(), Duration::from_millis(1500));
    }
}
