//! The benchmark on Windows: the session's desktop as it is (there is no
//! virtual one), in a notepad the benchmark starts and closes. No
//! reference tool is run beside it. The targets (issue 33, measured under
//! Wine): a 1280×800 PNG screenshot in 25 ms, a click in 3 ms, 200
//! characters typed in 40 ms.

use std::process::{Child, Command};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use deskhand_platform::{KillSwitchHotkey, OpenOptions, Site, SiteOptions};
use serde_json::{Value, json};

use super::{BenchArgs, Client, LIMIT, Row, Served, print_table, stats, time_ours};

/// 200 characters of plain text, as an agent types a line.
fn line_of_200() -> String {
    "The quick brown fox jumps over the lazy dog. "
        .chars()
        .cycle()
        .take(200)
        .collect()
}

/// Notepad's window as the wire ops list it, once it has the focus.
fn wait_for_notepad(c: &mut Client, pid: u32) -> anyhow::Result<Value> {
    let deadline = Instant::now() + LIMIT * 4;
    loop {
        let list = c.reply("WINDOW_LIST_REQUEST", json!({}))?;
        let found = list["payload"]["windows"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|w| w["pid"] == pid && w["is_focused"] == true)
            .cloned();
        if let Some(w) = found {
            return Ok(w);
        }
        if Instant::now() > deadline {
            bail!("notepad's window did not come up with the focus");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Measures on `c`, in the notepad window `w`.
fn measure(c: &mut Client, w: &Value, n: usize, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let b = &w["bounds"];
    let at = [
        b[0].as_i64().unwrap_or(0) + b[2].as_i64().unwrap_or(0) / 2,
        b[1].as_i64().unwrap_or(0) + b[3].as_i64().unwrap_or(0) / 2,
    ];
    let click = json!({"action": "left_click", "coordinate": at});
    c.request("INPUT_ACTION", click.clone())?;
    let png = json!({"format": "png"});
    let info = c.reply("DISPLAY_INFO_REQUEST", json!({}))?;
    let m = &info["payload"]["monitors"][0];
    let size = format!("{}×{}", m["physical_size"][0], m["physical_size"][1]);

    let mut changed = Vec::with_capacity(n);
    let mut clicks = Vec::with_capacity(n);
    let mut typed = Vec::with_capacity(n);
    let line = line_of_200();
    c.request("SCREENSHOT_REQUEST", png.clone())?;
    for i in 0..n {
        let ch = char::from(b'a' + (i % 26) as u8).to_string();
        c.request("INPUT_ACTION", json!({"action": "type", "text": ch}))?;
        std::thread::sleep(Duration::from_millis(30));
        changed.push(ms(c.request("SCREENSHOT_REQUEST", png.clone())?));
        clicks.push(ms(c.request("INPUT_ACTION", click.clone())?));
        typed.push(ms(c.request(
            "INPUT_ACTION",
            json!({"action": "type", "text": line}),
        )?));
        for key in ["ctrl+a", "Delete"] {
            c.request("INPUT_ACTION", json!({"action": "key", "text": key}))?;
        }
    }
    let none = "—".to_owned();
    let unchanged = time_ours(c, n, "SCREENSHOT_REQUEST", |_| png.clone())?;
    rows.push(Row {
        what: format!("screenshot {size} PNG, nothing changed (Windows)"),
        ours: unchanged,
        peer_name: none.clone(),
        peer: None,
    });
    rows.push(Row {
        what: format!("screenshot {size} PNG, one character typed (Windows)"),
        ours: stats(changed),
        peer_name: none.clone(),
        peer: None,
    });
    rows.push(Row {
        what: "click round trip (Windows)".into(),
        ours: stats(clicks),
        peer_name: none.clone(),
        peer: None,
    });
    rows.push(Row {
        what: "typing 200 characters (Windows)".into(),
        ours: stats(typed),
        peer_name: none,
        peer: None,
    });
    Ok(())
}

/// Starts notepad, the benchmark's own window to type into.
fn notepad() -> anyhow::Result<Child> {
    Command::new("notepad.exe")
        .spawn()
        .context("notepad.exe, the window the benchmark types into")
}

pub(crate) fn run(args: BenchArgs, daemon: tokio::runtime::Runtime) -> anyhow::Result<()> {
    eprintln!(
        "measuring this session's desktop as it is (--sizes is for X11's virtual desktops) …"
    );
    let mut site = Site::attach(&SiteOptions::default())?;
    let state_dir = std::env::temp_dir().join(format!("deskhand-bench-{}", std::process::id()));
    std::fs::create_dir_all(&state_dir)?;
    let options = OpenOptions {
        kill_switch: KillSwitchHotkey::new(deskhand_platform::DEFAULT_KILL_SWITCH)?,
        state_dir: state_dir.clone(),
    };
    // The person runs the benchmark on their own desktop: its input goes
    // to the notepad it starts.
    let backend = {
        let _daemon = daemon.enter();
        site.open(&options)?
    };
    let served = Served::start(daemon.handle(), backend, site.id().name())?;
    let (url, token) = (served.url.clone(), served.token.clone());
    let mut pad = notepad()?;
    let measured = (|| {
        let mut c = Client::connect(&url, &token)?;
        let w = wait_for_notepad(&mut c, pad.id())?;
        let mut rows = Vec::new();
        measure(&mut c, &w, args.samples, &mut rows)?;
        anyhow::Ok(rows)
    })();
    let _ = pad.kill();
    let _ = pad.wait();
    daemon.block_on(served.stop())?;
    site.stop();
    let _ = std::fs::remove_dir_all(&state_dir);
    print_table(&measured?);
    Ok(())
}
