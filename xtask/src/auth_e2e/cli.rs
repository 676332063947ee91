//! `mcp auth` and `mcp proxy` with OAuth, against the provider and resource server of the
//! auth-e2e run: the proxy without tokens exits 3 saying to log in; `mcp auth login` runs the
//! code flow (its `$BROWSER` a script that follows the provider's redirects with curl, as the
//! provider's interaction pages sign `alice` in and consent by themselves) and keeps the tokens
//! in a 0600 file; `mcp auth status` lists them; the proxy then carries a stdio client's calls
//! with them; `mcp auth logout` forgets them, and the proxy exits 3 again.

use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use anyhow::{Context as _, Result, bail};

/// What a stdio client sends through the proxy: the handshake and a call.
const SESSION: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","#,
    r#""capabilities":{},"clientInfo":{"name":"auth-e2e","version":"1"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":"list","method":"tools/list"}"#,
    "\n",
);

/// Runs the checks against the MCP server at `resource`; `N passed, M failed` is printed, and
/// the failures returned.
pub(super) fn run(root: &Path, work: &Path, resource: &str) -> Result<Vec<String>> {
    let mcp = crate::interop::build_mcp(root)?;
    let dir = work.join("cli-auth");
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    let browser = dir.join("browser.sh");
    let jar = dir.join("cookies");
    std::fs::write(
        &browser,
        format!("#!/bin/sh\nexec curl -s -L -c '{0}' -b '{0}' -o /dev/null \"$1\"\n", jar.display()),
    )?;
    std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755))?;
    let config = dir.join("config");
    let mcp_cmd = |args: &[&str]| {
        let mut command = Command::new(&mcp);
        command.args(args).env("XDG_CONFIG_HOME", &config).env("BROWSER", &browser);
        command
    };
    let mut failures = Vec::new();
    let mut passed = 0;
    let mut check = |name: &str, ok: Result<()>| match ok {
        Ok(()) => {
            println!("ok - {name}");
            passed += 1;
        }
        Err(e) => {
            println!("not ok - {name}: {e:#}");
            failures.push(format!("mcp auth: {name}: {e:#}"));
        }
    };
    check("the proxy without tokens exits 3 and says to log in", refused(mcp_cmd(&["proxy", resource]), resource));
    check("login keeps the tokens in a 0600 file", {
        let out = mcp_cmd(&["auth", "login", resource]).stdin(Stdio::null()).output()?;
        expect(out.status.success() && text(&out).contains("Logged in"), &out).and_then(|()| {
            let mode = std::fs::metadata(config.join("mcp/tokens.json"))?.permissions().mode() & 0o777;
            if mode != 0o600 { bail!("mode {mode:o}") } else { Ok(()) }
        })
    });
    check("status lists the server", {
        let out = mcp_cmd(&["auth", "status", "--json"]).output()?;
        let list: serde_json::Value = serde_json::from_slice(&out.stdout).context("status --json")?;
        let ok = list.as_array().is_some_and(|l| l.len() == 1 && l[0]["resource"] == resource);
        expect(ok && list[0]["expired"] == false, &out)
    });
    check("the proxy carries a stdio client with the tokens", {
        let out = piped(mcp_cmd(&["proxy", resource]), SESSION)?;
        let lines: Vec<serde_json::Value> =
            String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        let init = lines.iter().any(|l| l["id"] == 1 && l["result"]["protocolVersion"] == "2025-11-25");
        let tools = lines.iter().any(|l| l["id"] == "list" && l["result"]["tools"].is_array());
        expect(out.status.success() && init && tools, &out)
    });
    check("logout forgets the tokens", {
        let out = mcp_cmd(&["auth", "logout", resource]).output()?;
        let status = mcp_cmd(&["auth", "status", "--json"]).output()?;
        expect(out.status.success() && String::from_utf8_lossy(&status.stdout).trim() == "[]", &status)
    });
    check("the proxy after logout exits 3 again", refused(mcp_cmd(&["proxy", resource]), resource));
    println!("{passed} passed, {} failed", failures.len());
    Ok(failures)
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

fn expect(ok: bool, out: &Output) -> Result<()> {
    if ok { Ok(()) } else { bail!("{} (exit: {})", text(out).trim(), out.status) }
}

/// The proxy, given the handshake, exits 3 and names `mcp auth login`.
fn refused(command: Command, resource: &str) -> Result<()> {
    let out = piped(command, SESSION)?;
    expect(out.status.code() == Some(3) && text(&out).contains(&format!("mcp auth login {resource}")), &out)
}

/// Runs `command` with `input` on its stdin.
fn piped(mut command: Command, input: &str) -> Result<Output> {
    let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    child.stdin.take().context("stdin")?.write_all(input.as_bytes())?;
    Ok(child.wait_with_output()?)
}
