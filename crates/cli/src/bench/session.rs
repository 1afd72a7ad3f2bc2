//! The benchmark on this session's desktop as it is (Windows; a Wayland
//! session, whose portals ask the person first), in a text window it
//! starts and closes: notepad, or zenity's editable text. No reference
//! tool is run beside it. The targets: under Wine (issue 33) a 1280×800
//! PNG screenshot in 25 ms, a click in 3 ms, 200 characters typed in
//! 40 ms; in a headless GNOME (issue 34) a screenshot in 15 ms, one right
//! after a click in 60 ms, a click in 5 ms, 200 characters in 60 ms.

use std::process::{Child, Command};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use deskhand_platform::{BackendKind, KillSwitchHotkey, OpenOptions, Site, SiteOptions};
use serde_json::{Value, json};

use super::{BenchArgs, Client, LIMIT, Row, Served, print_table, stats, time_ours};

/// How long the person has to answer the portals' dialogs.
const GRANT_WAIT: Duration = Duration::from_secs(120);

/// 200 characters of plain text, as an agent types a line.
fn line_of_200() -> String {
    "The quick brown fox jumps over the lazy dog. "
        .chars()
        .cycle()
        .take(200)
        .collect()
}

/// The window the benchmark types into, started by it.
struct Pad {
    program: &'static str,
    args: &'static [&'static str],
}

#[cfg(windows)]
const PAD: Pad = Pad {
    program: "notepad.exe",
    args: &[],
};

#[cfg(not(windows))]
const PAD: Pad = Pad {
    program: "zenity",
    args: &[
        "--text-info",
        "--editable",
        "--title=deskhand bench",
        "--width=800",
        "--height=500",
    ],
};

impl Pad {
    fn start(&self) -> anyhow::Result<Child> {
        Command::new(self.program)
            .args(self.args)
            .spawn()
            .with_context(|| format!("{}, the window the benchmark types into", self.program))
    }
}

/// The pad's window as the wire ops list it, once it has the focus.
fn wait_for_pad(c: &mut Client, pid: u32) -> anyhow::Result<Value> {
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
            bail!("{}'s window did not come up with the focus", PAD.program);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `attempt` until it succeeds or [`GRANT_WAIT`] has passed: in a Wayland
/// session the person answers the portals' dialogs first (the screen for
/// the frame, then input).
fn when_granted<T>(mut attempt: impl FnMut() -> anyhow::Result<T>) -> anyhow::Result<T> {
    let deadline = Instant::now() + GRANT_WAIT;
    loop {
        match attempt() {
            Ok(done) => return Ok(done),
            Err(e) if Instant::now() > deadline => return Err(e.context("not granted")),
            Err(_) => std::thread::sleep(Duration::from_millis(250)),
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The centre of the window `w` of the window list.
fn centre(w: &Value) -> [i64; 2] {
    let b = &w["bounds"];
    let at = |i: usize| b[i].as_i64().unwrap_or(0);
    [(at(0) + at(2)) / 2, (at(1) + at(3)) / 2]
}

/// Measures on `c`, in the pad's window `w`; the rows say `platform`.
fn measure(
    c: &mut Client,
    w: &Value,
    n: usize,
    platform: &str,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    let click = json!({"action": "left_click", "coordinate": centre(w)});
    c.request("INPUT_ACTION", click.clone())?;
    let png = json!({"format": "png"});
    let info = c.reply("DISPLAY_INFO_REQUEST", json!({}))?;
    let m = &info["payload"]["monitors"][0];
    let size = format!("{}×{}", m["physical_size"][0], m["physical_size"][1]);

    let (mut changed, mut clicks, mut after_click, mut typed) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let line = line_of_200();
    c.request("SCREENSHOT_REQUEST", png.clone())?;
    for i in 0..n {
        let ch = char::from(b'a' + (i % 26) as u8).to_string();
        c.request("INPUT_ACTION", json!({"action": "type", "text": ch}))?;
        std::thread::sleep(Duration::from_millis(30));
        changed.push(ms(c.request("SCREENSHOT_REQUEST", png.clone())?));
        clicks.push(ms(c.request("INPUT_ACTION", click.clone())?));
        after_click.push(ms(c.request("SCREENSHOT_REQUEST", png.clone())?));
        typed.push(ms(c.request(
            "INPUT_ACTION",
            json!({"action": "type", "text": line}),
        )?));
        for key in ["ctrl+a", "Delete"] {
            c.request("INPUT_ACTION", json!({"action": "key", "text": key}))?;
        }
    }
    let unchanged = time_ours(c, n, "SCREENSHOT_REQUEST", |_| png.clone())?;
    let row = |what: String, ours| Row {
        what: format!("{what} ({platform})"),
        ours,
        peer_name: "—".to_owned(),
        peer: None,
    };
    rows.push(row(
        format!("screenshot {size} PNG, nothing changed"),
        unchanged,
    ));
    rows.push(row(
        format!("screenshot {size} PNG, one character typed"),
        stats(changed),
    ));
    rows.push(row("click round trip".into(), stats(clicks)));
    rows.push(row(
        format!("screenshot {size} PNG right after a click"),
        stats(after_click),
    ));
    rows.push(row("typing 200 characters".into(), stats(typed)));
    Ok(())
}

pub(crate) fn run(args: BenchArgs, daemon: tokio::runtime::Runtime) -> anyhow::Result<()> {
    eprintln!(
        "measuring this session's desktop as it is (--sizes is for X11's virtual desktops) …"
    );
    let mut site = Site::attach(&SiteOptions::default())?;
    let platform = match site.kind() {
        BackendKind::Windows => "Windows",
        BackendKind::Wayland => "Wayland",
        other => bail!(
            "this session's desktop is {}: `deskhand bench` measures X11 on virtual desktops of its own (without --session)",
            other.name()
        ),
    };
    let state_dir = std::env::temp_dir().join(format!("deskhand-bench-{}", std::process::id()));
    std::fs::create_dir_all(&state_dir)?;
    let options = OpenOptions {
        kill_switch: KillSwitchHotkey::new(deskhand_platform::DEFAULT_KILL_SWITCH)?,
        state_dir: state_dir.clone(),
        vault: deskhand_host::vault::HostVault::shared(),
    };
    if platform == "Wayland" {
        eprintln!("answer the screen-sharing and remote-desktop dialogs to let the benchmark in …");
    }
    // The person runs the benchmark on their own desktop: its input goes
    // to the window it starts.
    let backend = {
        let _daemon = daemon.enter();
        site.open(&options)?
    };
    let served = Served::start(daemon.handle(), backend, site.id().name())?;
    let (url, token) = (served.url.clone(), served.token.clone());
    let mut pad = PAD.start()?;
    let measured = (|| {
        let mut c = when_granted(|| Client::connect(&url, &token))?;
        let w = wait_for_pad(&mut c, pad.id())?;
        let at = json!({"action": "mouse_move", "coordinate": centre(&w)});
        when_granted(|| c.request("INPUT_ACTION", at.clone()))?;
        let mut rows = Vec::new();
        measure(&mut c, &w, args.samples, platform, &mut rows)?;
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
