//! System packages the checks need (Redis for the tests of `mcp-redis`, OpenSSL's command for
//! the throwaway CA of its TLS test, HAProxy for the fleet, tmux for the terminal sessions of `mcp-cli`'s tests), installed from Debian's
//! repositories when their command is missing, the way the interop step installs Node and the
//! SDKs.

use std::process::Command;

use anyhow::{Result, bail};

/// The packages, each with the command that tells it is installed.
pub const PACKAGES: &[(&str, &str)] =
    &[("redis-server", "redis-server"), ("openssl", "openssl"), ("haproxy", "haproxy"), ("tmux", "tmux")];

/// Whether `command` is on `PATH`.
fn installed(command: &str) -> bool {
    Command::new("sh").args(["-c", &format!("command -v {command}")]).output().is_ok_and(|o| o.status.success())
}

/// The browser of the MCP Apps host test (`cargo xtask interop`): Debian's Chromium, driven
/// headless. Installed by that step only, not by [`ensure`].
pub const BROWSER: (&str, &str) = ("chromium", "chromium");

/// Installs the packages of [`PACKAGES`] whose command is missing (`apt-get`, as root or
/// through `sudo`); fails, naming them, when that is not possible.
pub fn ensure() -> Result<()> {
    ensure_these(PACKAGES)
}

/// Installs those of `packages` whose command is missing, as [`ensure`] does.
pub fn ensure_these(packages: &[(&str, &str)]) -> Result<()> {
    let missing: Vec<&str> = packages.iter().filter(|(_, cmd)| !installed(cmd)).map(|(pkg, _)| *pkg).collect();
    if missing.is_empty() {
        return Ok(());
    }
    println!("--> installing {} (apt-get)", missing.join(", "));
    let sudo = if is_root() { "" } else { "sudo " };
    let install = format!(
        "export DEBIAN_FRONTEND=noninteractive; {sudo}apt-get install -y -q {pkgs} || \
         ({sudo}apt-get update -q && {sudo}apt-get install -y -q {pkgs})",
        pkgs = missing.join(" ")
    );
    let status = Command::new("sh").args(["-c", &install]).status()?;
    let still: Vec<&str> = packages.iter().filter(|(_, cmd)| !installed(cmd)).map(|(pkg, _)| *pkg).collect();
    if !status.success() || !still.is_empty() {
        bail!("could not install {} ({status}); install them with apt-get and run again", still.join(", "));
    }
    // The package starts a Redis of the system on 6379: the tests start their own.
    if missing.contains(&"redis-server") {
        let _ = Command::new("sh").args(["-c", &format!("{sudo}service redis-server stop >/dev/null 2>&1")]).status();
    }
    Ok(())
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}
