//! `deskhand mcp-config`: the entry an MCP client needs to run `deskhand
//! mcp`, printed, or merged into the client's own config file (its other
//! servers kept, a backup of the old file beside it). A file that cannot
//! be read as the client's format is refused and left as it was.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Args;
use serde_json::{Map, Value, json};

/// Arguments of `deskhand mcp-config`.
#[derive(Debug, Args)]
pub struct McpConfigArgs {
    /// The MCP client: claude-desktop, claude-code, cursor, codex or vscode
    /// (any other name, or none: the generic JSON most clients take).
    #[arg(long)]
    client: Option<String>,
    /// Merge the entry into the client's config file instead of printing
    /// it; the old file is kept beside it (`.deskhand-backup`).
    #[arg(long)]
    write: bool,
    /// The config file to merge into, instead of the client's usual one.
    #[arg(long, requires = "write")]
    file: Option<PathBuf>,
}

/// The clients whose config files deskhand knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Client {
    ClaudeDesktop,
    ClaudeCode,
    Cursor,
    Codex,
    VsCode,
    /// Any other: `{"mcpServers": {…}}`, printed only.
    Generic,
}

impl Client {
    fn named(name: Option<&str>) -> Self {
        match name.map(str::to_ascii_lowercase).as_deref() {
            Some("claude-desktop") => Client::ClaudeDesktop,
            Some("claude-code") => Client::ClaudeCode,
            Some("cursor") => Client::Cursor,
            Some("codex") => Client::Codex,
            Some("vscode" | "vs-code" | "code") => Client::VsCode,
            _ => Client::Generic,
        }
    }

    /// The key its JSON config keeps servers under.
    fn servers_key(self) -> &'static str {
        match self {
            Client::VsCode => "servers",
            _ => "mcpServers",
        }
    }

    /// Its user-wide config file, from the home and config directories.
    fn config_file(self, home: &Path, config: &Path) -> Option<PathBuf> {
        Some(match self {
            Client::ClaudeDesktop => config.join("Claude").join("claude_desktop_config.json"),
            Client::ClaudeCode => home.join(".claude.json"),
            Client::Cursor => home.join(".cursor").join("mcp.json"),
            Client::Codex => home.join(".codex").join("config.toml"),
            Client::VsCode => config.join("Code").join("User").join("mcp.json"),
            Client::Generic => return None,
        })
    }
}

/// The server entry running `program mcp` (JSON clients).
fn entry(client: Client, program: &str) -> Value {
    match client {
        Client::VsCode | Client::ClaudeCode => {
            json!({"type": "stdio", "command": program, "args": ["mcp"]})
        }
        _ => json!({"command": program, "args": ["mcp"]}),
    }
}

/// `existing` (a JSON config, empty for none) with the `deskhand` server
/// set under the client's key; every other key and server kept.
fn merged_json(existing: &str, client: Client, program: &str) -> anyhow::Result<String> {
    let mut root: Value = match existing.trim() {
        "" => Value::Object(Map::new()),
        text => serde_json::from_str(text).context("it is not JSON")?,
    };
    let Some(top) = root.as_object_mut() else {
        bail!("it is JSON but not an object");
    };
    let key = client.servers_key();
    let servers = top
        .entry(key)
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .with_context(|| format!("its {key:?} is not an object"))?;
    servers.insert("deskhand".into(), entry(client, program));
    Ok(serde_json::to_string_pretty(&root)? + "\n")
}

/// `existing` (Codex's TOML config) with `[mcp_servers.deskhand]` set;
/// everything else kept as written, comments included.
fn merged_toml(existing: &str, program: &str) -> anyhow::Result<String> {
    let mut doc: toml_edit::DocumentMut = existing.parse().context("it is not TOML")?;
    let servers = doc
        .entry("mcp_servers")
        .or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            toml_edit::Item::Table(t)
        })
        .as_table_mut()
        .context("its mcp_servers is not a table")?;
    let mut deskhand = toml_edit::Table::new();
    deskhand["command"] = toml_edit::value(program);
    let mut args = toml_edit::Array::new();
    args.push("mcp");
    deskhand["args"] = toml_edit::value(args);
    servers.insert("deskhand", toml_edit::Item::Table(deskhand));
    Ok(doc.to_string())
}

/// `existing` with deskhand's entry merged in, in `client`'s format.
fn merged(existing: &str, client: Client, program: &str) -> anyhow::Result<String> {
    match client {
        Client::Codex => merged_toml(existing, program),
        _ => merged_json(existing, client, program),
    }
}

/// The path of this program, as the client will run it.
fn program() -> anyhow::Result<String> {
    let exe = std::env::current_exe().context("where deskhand is")?;
    let exe = std::fs::canonicalize(&exe).unwrap_or(exe);
    Ok(exe.to_string_lossy().into_owned())
}

/// Merges deskhand's entry into `file`: the old file is copied to
/// `<file>.deskhand-backup` first; a file that cannot be parsed is left
/// as it was.
fn write(file: &Path, client: Client, program: &str) -> anyhow::Result<()> {
    let existing = match std::fs::read_to_string(file) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("reading {}", file.display())),
    };
    let text = merged(existing.as_deref().unwrap_or(""), client, program).with_context(|| {
        format!(
            "{} was left as it was: it cannot be read as this client's config",
            file.display()
        )
    })?;
    if let Some(old) = &existing {
        let backup = PathBuf::from(format!("{}.deskhand-backup", file.display()));
        deskhand_files::write_atomic(&backup, old.as_bytes())
            .with_context(|| format!("writing the backup {}", backup.display()))?;
        eprintln!("the old file is kept as {}", backup.display());
    }
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    deskhand_files::write_atomic(file, text.as_bytes())
        .with_context(|| format!("writing {}", file.display()))?;
    eprintln!("deskhand added to {}", file.display());
    Ok(())
}

/// Runs `deskhand mcp-config`.
pub fn run(args: McpConfigArgs) -> anyhow::Result<()> {
    let client = Client::named(args.client.as_deref());
    let program = program()?;
    if !args.write {
        print!("{}", merged("", client, &program)?);
        return Ok(());
    }
    let usual = match (dirs::home_dir(), dirs::config_dir()) {
        (Some(home), Some(config)) => client.config_file(&home, &config),
        _ => None,
    };
    let Some(file) = args.file.or(usual) else {
        bail!(
            "no config file known for this client: give --client (claude-desktop, claude-code, cursor, codex, vscode) or --file"
        );
    };
    write(&file, client, &program)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DESKHAND: &str = "/usr/bin/deskhand";

    #[test]
    fn other_servers_and_keys_are_kept() {
        let old = r#"{"theme": "dark", "mcpServers": {"files": {"command": "fs-mcp"}}}"#;
        let new = merged(old, Client::ClaudeDesktop, DESKHAND).expect("merged");
        let v: Value = serde_json::from_str(&new).expect("JSON");
        assert_eq!(v["theme"], "dark");
        assert_eq!(v["mcpServers"]["files"]["command"], "fs-mcp");
        assert_eq!(v["mcpServers"]["deskhand"]["command"], DESKHAND);
        assert_eq!(v["mcpServers"]["deskhand"]["args"], json!(["mcp"]));
    }

    #[test]
    fn vscode_keeps_servers_under_its_own_key_with_a_type() {
        let new = merged("", Client::VsCode, DESKHAND).expect("merged");
        let v: Value = serde_json::from_str(&new).expect("JSON");
        assert_eq!(v["servers"]["deskhand"]["type"], "stdio");
        assert!(v.get("mcpServers").is_none());
    }

    #[test]
    fn a_file_that_is_not_the_clients_format_is_refused() {
        for bad in ["{not json", "[1, 2]", r#"{"mcpServers": 3}"#] {
            assert!(merged(bad, Client::Cursor, DESKHAND).is_err(), "{bad}");
        }
        assert!(merged("a = [", Client::Codex, DESKHAND).is_err());
    }

    #[test]
    fn codex_gets_a_toml_table_and_keeps_comments() {
        let old = "# my settings\nmodel = \"o3\"\n\n[mcp_servers.files]\ncommand = \"fs-mcp\"\n";
        let new = merged(old, Client::Codex, DESKHAND).expect("merged");
        assert!(new.starts_with("# my settings\nmodel = \"o3\""), "{new}");
        let v: toml::Table = new.parse().expect("TOML");
        assert_eq!(
            v["mcp_servers"]["files"]["command"].as_str(),
            Some("fs-mcp")
        );
        assert_eq!(
            v["mcp_servers"]["deskhand"]["command"].as_str(),
            Some(DESKHAND)
        );
    }

    #[test]
    fn each_client_has_its_usual_file() {
        let (home, config) = (Path::new("/h"), Path::new("/h/.config"));
        let file = |c: Client| c.config_file(home, config);
        assert_eq!(
            file(Client::ClaudeDesktop),
            Some(PathBuf::from(
                "/h/.config/Claude/claude_desktop_config.json"
            ))
        );
        assert_eq!(
            file(Client::ClaudeCode),
            Some(PathBuf::from("/h/.claude.json"))
        );
        assert_eq!(
            file(Client::Cursor),
            Some(PathBuf::from("/h/.cursor/mcp.json"))
        );
        assert_eq!(
            file(Client::Codex),
            Some(PathBuf::from("/h/.codex/config.toml"))
        );
        assert_eq!(file(Client::Generic), None);
        assert_eq!(Client::named(Some("VSCode")), Client::VsCode);
        assert_eq!(Client::named(Some("zed")), Client::Generic);
    }
}
