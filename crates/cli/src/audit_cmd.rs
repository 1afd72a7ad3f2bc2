//! `deskhand audit tail`: the last records of the audit log, as columns for
//! people or as the JSON lines themselves, optionally following new ones.

use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, Subcommand};
use serde_json::Value;

use deskhand_host::audit_file;

/// `deskhand audit …`.
#[derive(Debug, Args)]
pub struct AuditArgs {
    #[command(subcommand)]
    command: AuditCommand,
}

#[derive(Debug, Subcommand)]
enum AuditCommand {
    /// Print the last records (and, with --follow, new ones as they come).
    Tail(TailArgs),
}

#[derive(Debug, Args)]
struct TailArgs {
    /// The audit log (default: the one `deskhand serve` writes).
    #[arg(long)]
    file: Option<PathBuf>,
    /// How many records.
    #[arg(short = 'n', long, default_value_t = 20)]
    lines: usize,
    /// Keep printing records as they are written.
    #[arg(short, long)]
    follow: bool,
    /// Print the JSON lines as they are.
    #[arg(long)]
    json: bool,
}

pub fn run(args: AuditArgs) -> anyhow::Result<()> {
    match args.command {
        AuditCommand::Tail(t) => tail(t),
    }
}

fn tail(args: TailArgs) -> anyhow::Result<()> {
    let path = args.file.unwrap_or_else(audit_file::default_path);
    let lines = audit_file::last_lines(&path, args.lines)?;
    let mut out = std::io::stdout().lock();
    for line in &lines {
        print_record(&mut out, line, args.json)?;
    }
    out.flush()?;
    if args.follow {
        follow(&path, args.json)?;
    }
    Ok(())
}

/// Prints what is appended to `path`, reopening it after a rotation.
fn follow(path: &Path, json: bool) -> anyhow::Result<()> {
    let mut file = File::open(path)?;
    let mut identity = deskhand_files::identity(&file.metadata()?);
    file.seek(SeekFrom::End(0))?;
    let mut reader = BufReader::new(file);
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? > 0 && line.ends_with('\n') {
            let mut out = std::io::stdout().lock();
            print_record(&mut out, line.trim_end(), json)?;
            out.flush()?;
            continue;
        }
        std::thread::sleep(Duration::from_millis(250));
        if let Ok(meta) = std::fs::metadata(path)
            && deskhand_files::identity(&meta) != identity
        {
            identity = deskhand_files::identity(&meta);
            reader = BufReader::new(File::open(path)?);
        }
    }
}

/// Prints one record. Nothing a client sent reaches the terminal as is:
/// control characters (escape sequences, a carriage return that writes a
/// fake line over the real one) and bidirectional overrides are shown as
/// `\u{…}` escapes.
fn print_record(out: &mut impl Write, line: &str, json: bool) -> std::io::Result<()> {
    if json {
        return writeln!(out, "{}", printable(line, true));
    }
    let Ok(r) = serde_json::from_str::<Value>(line) else {
        return writeln!(out, "(unreadable record) {}", printable(line, false));
    };
    let text = |k: &str| printable(r[k].as_str().unwrap_or("-"), false);
    let target = match &r["target"] {
        Value::Null => String::new(),
        t => printable(&t.to_string(), false),
    };
    writeln!(
        out,
        "{}  {:<44}  {:<22}  {:<22}  {:>8.1} ms  {}",
        utc(r["ts"].as_f64().unwrap_or(0.0)),
        text("session"),
        text("op"),
        text("outcome"),
        r["duration_ms"].as_f64().unwrap_or(0.0),
        target
    )
}

/// `s` with every control, bidirectional-control and other invisible
/// format character written as an escape: `\u{…}` for people, `\uXXXX`
/// in a JSON line (which stays JSON: such characters can only be in its
/// strings).
fn printable(s: &str, json: bool) -> String {
    let hidden = |c: char| {
        c.is_control()
            || matches!(c, '\u{061C}' | '\u{200B}'..='\u{200F}' | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
    };
    if !s.chars().any(hidden) {
        return s.to_owned();
    }
    s.chars()
        .map(|c| {
            if hidden(c) && json {
                format!("\\u{:04x}", u32::from(c))
            } else if hidden(c) {
                format!("\\u{{{:04x}}}", u32::from(c))
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// `YYYY-MM-DDTHH:MM:SSZ` of a Unix time (civil-from-days).
fn utc(ts: f64) -> String {
    let secs = ts.max(0.0) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0.0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(1_795_989_054.6), "2026-11-29T21:50:54Z");
        assert_eq!(utc(951_782_400.0), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn escape_codes_and_bidi_overrides_are_shown_not_obeyed() {
        let mut out = Vec::new();
        let line = r#"{"ts":0.0,"session":"s\u001b[2J","op":"x\r2026-01-01 fake \u202e","target":null,"outcome":"ok","duration_ms":0}"#;
        print_record(&mut out, line, false).expect("print");
        print_record(&mut out, "not json \u{1b}[31m\u{202e}", false).expect("print");
        print_record(&mut out, "{\"op\":\"\u{2066}\"}", true).expect("print");
        let text = String::from_utf8(out).expect("utf8");
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{text:?}"
        );
        assert!(
            !text.contains('\u{202e}') && !text.contains('\u{2066}'),
            "{text:?}"
        );
        assert!(
            text.contains("s\\u{001b}[2J") && text.contains("\\u{000d}2026"),
            "{text}"
        );
        assert!(
            text.contains(r#"{"op":"\u2066"}"#),
            "a JSON line stays JSON: {text}"
        );
    }

    #[test]
    fn records_print_as_columns() {
        let mut out = Vec::new();
        let line = r#"{"ts":0.0,"session":"wire-1","protocol":"wire","op":"input.type","target":{"text_chars":3},"outcome":"ok","duration_ms":1.25}"#;
        print_record(&mut out, line, false).expect("print");
        let text = String::from_utf8(out).expect("utf8");
        assert!(text.starts_with("1970-01-01T00:00:00Z  wire-1"), "{text}");
        assert!(
            text.contains("input.type") && text.contains("1.2 ms") && text.contains("text_chars")
        );
    }
}
