//! The computer endpoints as agents use them, over plain HTTP, timed until
//! the whole answer has arrived: the model-sized screenshot (`POST /v1/actions`
//! with a screenshot-only batch scaled to fit 1366×768, and Anthropic's
//! cap), and an input batch (click, 200 typed characters, a key, the
//! screenshot after the screen settled) against the Anthropic demo's way.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::{LIMIT, Row, Stats, set_wallpaper, stats, time_command};

/// A blocking HTTP client of the computer endpoints in one session.
struct Http {
    addr: String,
    token: String,
    session: Option<String>,
}

impl Http {
    /// POSTs `body` to `path`; the time until the whole answer arrived.
    fn post(&mut self, path: &str, body: &str) -> anyhow::Result<Duration> {
        let mut s = TcpStream::connect(&self.addr)?;
        s.set_nodelay(true)?;
        s.set_read_timeout(Some(LIMIT))?;
        let session = self
            .session
            .as_ref()
            .map(|id| format!("X-Deskhand-Session: {id}\r\n"))
            .unwrap_or_default();
        let req = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\n\
             Content-Type: application/json\r\n{session}Content-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            self.addr,
            self.token,
            body.len()
        );
        let started = Instant::now();
        s.write_all(req.as_bytes())?;
        let mut answer = Vec::with_capacity(4 << 20);
        s.read_to_end(&mut answer)?;
        let took = started.elapsed();
        let head_end = answer
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .context("no HTTP head")?;
        let head = String::from_utf8_lossy(&answer[..head_end]);
        if !head.starts_with("HTTP/1.1 200") {
            bail!("{path}: {}", head.lines().next().unwrap_or(""));
        }
        let ok = br#""status":"success""#;
        if !answer[head_end..].windows(ok.len()).any(|w| w == ok) {
            bail!("{path}: the batch failed");
        }
        self.session = head
            .lines()
            .find_map(|l| l.strip_prefix("x-deskhand-session: "))
            .map(str::to_owned)
            .or(self.session.take());
        Ok(took)
    }

    fn time(
        &mut self,
        n: usize,
        path: &str,
        body: &str,
        before: impl Fn(usize),
    ) -> anyhow::Result<Stats> {
        self.post(path, body)?;
        let mut ms = Vec::with_capacity(n);
        for i in 0..n {
            before(i);
            ms.push(self.post(path, body)?.as_secs_f64() * 1000.0);
        }
        Ok(stats(ms))
    }
}

/// Adds the model-sized screenshot rows: whole screen changed and nothing
/// changed at 1366×768, and Anthropic's cap, beside `scrot` + `convert`.
pub(super) fn measure(
    (addr, token): (String, String),
    display: &str,
    walls: &[PathBuf; 2],
    size: &str,
    n: usize,
    scrot: Option<Stats>,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    let mut http = Http {
        addr,
        token,
        session: None,
    };
    let shot = r#"[{"action_type":"screenshot"}]"#;
    let wxga = "/v1/actions?display=all&max_width=1366&max_height=768";
    let swap = |i: usize| {
        let _ = set_wallpaper(display, &walls[i % 2]);
        std::thread::sleep(Duration::from_millis(30));
    };
    let changed = http.time(n, wxga, shot, swap)?;
    let _ = set_wallpaper(display, &walls[0]);
    rows.push(Row {
        what: format!(
            "model-sized screenshot {size} → 1365×768 PNG (fits 1366×768, HTTP), whole screen changed"
        ),
        ours: changed,
        peer_name: "scrot + convert -resize".into(),
        peer: scrot,
    });
    let still = http.time(n, wxga, shot, |_| ())?;
    rows.push(Row {
        what: format!(
            "model-sized screenshot {size} → 1365×768 PNG (fits 1366×768, HTTP), nothing changed"
        ),
        ours: still,
        peer_name: "(same as above)".into(),
        peer: scrot,
    });
    let anthropic = "/v1/actions?display=all&max_width=1568&max_height=1568";
    let capped = http.time(n, anthropic, shot, swap)?;
    rows.push(Row {
        what: format!(
            "screenshot {size} at the 1568 px long-edge cap PNG (HTTP), whole screen changed"
        ),
        ours: capped,
        peer_name: "(same as above)".into(),
        peer: scrot,
    });
    Ok(())
}

/// Adds the batch row: click into the scene's terminal, type 200
/// characters, erase them with Ctrl+U, and the full-size screenshot taken
/// once the screen settled — one `POST /v1/actions`, the screenshot at the
/// desktop's own size `full` (so that its pixels are the desktop's). The reference is the
/// Anthropic demo's way: an `xdotool` run per action, typing in chunks of
/// 50 characters with a 12 ms delay, 2 s of waiting, then `scrot` and
/// `convert -resize`.
pub(super) fn measure_batch(
    (addr, token): (String, String),
    display: &str,
    ((x, y), full): ((i32, i32), (u32, u32)),
    (n, peer_n): (usize, usize),
    dir: &std::path::Path,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    let mut http = Http {
        addr,
        token,
        session: None,
    };
    let text = super::typing::ascii_text();
    let path = &format!("/v1/actions?max_width={}&max_height={}", full.0, full.1);
    http.post(path, r#"[{"action_type":"screenshot"}]"#)?;
    let batch = serde_json::json!([
        {"action_type": "left_click", "x": x, "y": y},
        {"action_type": "type", "text": text},
        {"action_type": "key", "key_name": "u", "modifier": "ctrl"},
        {"action_type": "screenshot"},
    ])
    .to_string();
    let ours = http.time(n, path, &batch, |_| ())?;
    let (xs, ys) = (x.to_string(), y.to_string());
    let chunks = super::typing::demo_chunks(&text);
    let shot = dir.join("demo.png");
    let resized = dir.join("demo-resized.png");
    let (shot, resized) = (shot.to_string_lossy(), resized.to_string_lossy());
    let mut argv: Vec<Vec<&str>> = vec![vec!["xdotool", "mousemove", &xs, &ys, "click", "1"]];
    argv.extend(
        chunks
            .iter()
            .map(|c| vec!["xdotool", "type", "--delay", "12", "--", c.as_str()]),
    );
    argv.push(vec!["xdotool", "key", "ctrl+u"]);
    argv.push(vec!["sleep", "2"]);
    argv.push(vec!["scrot", "-o", &shot]);
    argv.push(vec!["convert", &shot, "-resize", "1366x768!", &resized]);
    let argv: Vec<&[&str]> = argv.iter().map(Vec::as_slice).collect();
    rows.push(Row {
        what: "batch: click + 200 typed characters + key + screenshot after settle (HTTP)".into(),
        ours,
        peer_name:
            "xdotool per action, 50-character chunks --delay 12, 2 s wait, scrot (Anthropic demo)"
                .into(),
        peer: time_command(peer_n, display, &argv),
    });
    Ok(())
}
