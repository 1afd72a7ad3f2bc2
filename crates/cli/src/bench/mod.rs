//! `deskhand bench`: on a virtual desktop it starts itself, with the
//! standard scene (a photo-like wallpaper and text windows over about a
//! third of the screen), measures deskhand over a real WebSocket client
//! side by side with the reference tools in the same run, and prints one
//! table with medians, p95s and ratios.

mod a11y;
mod mcp;
mod pointer;
mod shot;
mod takeover;
mod typing;

use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Args;
use deskhand_engine::{AuditLog, Consent, Engine};
use deskhand_platform::bench::{VirtualDesktop, open_x11};
use deskhand_server::{ServerConfig, Token};
use serde_json::{Value, json};
use tungstenite::Message;
use tungstenite::client::IntoClientRequest;

/// Arguments of `deskhand bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Desktop sizes to measure.
    #[arg(long, value_delimiter = ',', default_value = "1920x1080,3840x2160")]
    sizes: Vec<String>,
    /// Samples per deskhand measurement.
    #[arg(long, default_value_t = 40)]
    samples: usize,
    /// Samples per reference-tool measurement (they are slow).
    #[arg(long, default_value_t = 10)]
    peer_samples: usize,
}

/// Longest any step may take before the benchmark gives up.
const LIMIT: Duration = Duration::from_secs(5);

/// Median and p95 of a set of samples, in milliseconds.
#[derive(Debug, Clone, Copy)]
struct Stats {
    median: f64,
    p95: f64,
}

fn stats(mut ms: Vec<f64>) -> Stats {
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[((ms.len() as f64 - 1.0) * q).round() as usize];
    Stats {
        median: at(0.5),
        p95: at(0.95),
    }
}

struct Row {
    what: String,
    ours: Stats,
    peer_name: String,
    peer: Option<Stats>,
}

/// A WebSocket client speaking the wire ops, as an agent would, and as
/// lean as one can be: a blocking socket, read by the thread that waits for
/// the reply (as `xdotool`, the reference, is a plain blocking process), so
/// that what is timed is deskhand's part and not a client runtime's.
struct Client {
    ws: tungstenite::WebSocket<TcpStream>,
    next: u64,
}

impl Client {
    fn connect(url: &str, token: &str) -> anyhow::Result<Self> {
        let mut req = url.into_client_request()?;
        req.headers_mut()
            .insert("Authorization", format!("Bearer {token}").parse()?);
        let host = req.uri().host().context("no host in the URL")?;
        let port = req.uri().port_u16().context("no port in the URL")?;
        let stream = TcpStream::connect((host, port))?;
        stream.set_nodelay(true)?;
        // No wait for deskhand may hang the benchmark.
        stream.set_read_timeout(Some(LIMIT))?;
        // Screenshots of large desktops exceed tungstenite's default 16 MiB.
        let config = tungstenite::protocol::WebSocketConfig::default()
            .max_message_size(None)
            .max_frame_size(None);
        let (ws, _) = tungstenite::client::client_with_config(req, stream, Some(config))
            .map_err(|e| anyhow::anyhow!("WebSocket handshake: {e}"))?;
        let mut c = Self { ws, next: 0 };
        c.recv()?;
        c.send(json!({"type": "HELLO_ACK", "id": "ack", "ts": 0, "payload": {}}))?;
        // Input needs a takeover, as for any agent (the indicator shows).
        c.send(
            json!({"type": "TAKEOVER_REQUEST", "id": "takeover", "ts": 0, "payload": {"on": true}}),
        )?;
        let state = c.recv()?;
        if state["payload"]["on"] != true {
            bail!("no takeover (is deskhand-overlay built next to deskhand?): {state}");
        }
        Ok(c)
    }

    fn send(&mut self, msg: Value) -> anyhow::Result<()> {
        Ok(self.ws.send(Message::Text(msg.to_string().into()))?)
    }

    /// Waits until the person's input has paused the takeover, resumes it
    /// as the host would, and waits until that is pushed too.
    async fn resume_after_pause(&mut self, engine: &Engine) -> anyhow::Result<()> {
        let deadline = Instant::now() + LIMIT;
        let mut wait_for = |paused: bool| loop {
            if Instant::now() > deadline {
                bail!("the takeover did not pause and resume");
            }
            if self.push()?["paused"] == paused {
                return anyhow::Ok(());
            }
        };
        wait_for(true)?;
        engine.resume_takeover(None).await;
        wait_for(false)
    }

    /// The next TAKEOVER_STATE deskhand pushed.
    fn push(&mut self) -> anyhow::Result<Value> {
        loop {
            let v = self.recv()?;
            if v["type"] == "TAKEOVER_STATE" && v.get("id").is_none() {
                return Ok(v["payload"].clone());
            }
        }
    }

    fn recv(&mut self) -> anyhow::Result<Value> {
        loop {
            if let Message::Text(t) = self.ws.read()? {
                return Ok(serde_json::from_str(t.as_str())?);
            }
        }
    }

    /// One request; returns the time until the whole reply had arrived
    /// (parsing it is the client's business and not counted) and checks
    /// that the reply is not an error.
    fn request(&mut self, kind: &str, payload: Value) -> anyhow::Result<Duration> {
        self.next += 1;
        let msg = json!({"type": kind, "id": self.next.to_string(), "ts": 0, "payload": payload});
        let msg = Message::Text(msg.to_string().into());
        let started = Instant::now();
        self.ws.send(msg)?;
        let text = loop {
            match self.ws.read()? {
                // A pushed TAKEOVER_STATE is not the reply.
                Message::Text(t) if is_push(t.as_str()) => continue,
                Message::Text(t) => break t,
                _ => continue,
            }
        };
        let elapsed = started.elapsed();
        let reply: Value = serde_json::from_str(text.as_str())?;
        if reply["type"] == "ERROR" {
            bail!("{kind} failed: {}", reply["payload"]);
        }
        Ok(elapsed)
    }
}

/// Whether a text frame is a pushed TAKEOVER_STATE (small, no id), told
/// apart without parsing multi-megabyte screenshot replies.
fn is_push(text: &str) -> bool {
    text.len() < 4096 && text.contains("\"TAKEOVER_STATE\"") && !text.contains("\"id\"")
}

fn time_ours(
    c: &mut Client,
    n: usize,
    kind: &str,
    payload: impl Fn(usize) -> Value,
) -> anyhow::Result<Stats> {
    // Warm up (SHM segment, caches).
    c.request(kind, payload(0))?;
    let mut ms = Vec::with_capacity(n);
    for i in 0..n {
        let took = c.request(kind, payload(i + 1))?;
        ms.push(took.as_secs_f64() * 1000.0);
    }
    Ok(stats(ms))
}

fn time_command(n: usize, display: &str, argv: &[&[&str]]) -> Option<Stats> {
    let ms = (0..n)
        .map(|_| time_commands_once(display, argv))
        .collect::<Option<Vec<_>>>()?;
    Some(stats(ms))
}

/// Runs the commands one after the other (process start included, as an
/// agent's shell would run them); their time in milliseconds, or `None`
/// (said on stderr) when one failed.
fn time_commands_once(display: &str, argv: &[&[&str]]) -> Option<f64> {
    let t = Instant::now();
    for args in argv {
        let ok = Command::new(args[0])
            .args(&args[1..])
            .env("DISPLAY", display)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("  (reference {} unavailable or failed)", args[0]);
            return None;
        }
    }
    Some(t.elapsed().as_secs_f64() * 1000.0)
}

/// Makes a plasma-fractal wallpaper (photo-like, hard to compress).
fn make_wallpaper(path: &std::path::Path, w: u32, h: u32, seed: u32) -> anyhow::Result<()> {
    let status = Command::new("convert")
        .args(["-size", &format!("{w}x{h}"), "-seed", &seed.to_string()])
        .args(["plasma:fractal", "-depth", "8"])
        .arg(path)
        .status()
        .context("ImageMagick `convert` is needed for the bench scene")?;
    if !status.success() {
        bail!("convert failed to make the wallpaper");
    }
    Ok(())
}

fn set_wallpaper(display: &str, path: &std::path::Path) -> anyhow::Result<()> {
    let status = Command::new("feh")
        .args(["--no-fehbg", "--bg-fill"])
        .arg(path)
        .env("DISPLAY", display)
        .status()
        .context("`feh` is needed to set the bench wallpaper")?;
    if !status.success() {
        bail!("feh failed to set the wallpaper");
    }
    Ok(())
}

/// The standard scene: a wallpaper and two xterms full of text over about
/// a third of the screen. Returns the xterms and the two wallpapers.
fn paint_scene(
    display: &str,
    w: u32,
    h: u32,
    dir: &std::path::Path,
) -> anyhow::Result<(Vec<Child>, [std::path::PathBuf; 2])> {
    let walls = [dir.join("wallpaper-a.png"), dir.join("wallpaper-b.png")];
    make_wallpaper(&walls[0], w, h, 7)?;
    make_wallpaper(&walls[1], w, h, 8)?;
    set_wallpaper(display, &walls[0])?;
    let (cols, rows) = (100, 50);
    let mut terms = Vec::new();
    for (i, x) in [0u32, w / 3].into_iter().enumerate() {
        let child = Command::new("xterm")
            .args(["-geometry", &format!("{cols}x{rows}+{x}+{}", 40 + i * 40)])
            .args([
                "-e",
                "sh",
                "-c",
                "ls -la /usr/bin /usr/lib | head -n 400; exec sleep 100000",
            ])
            .env("DISPLAY", display)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("xterm is needed for the bench scene")?;
        terms.push(child);
    }
    std::thread::sleep(Duration::from_millis(1500));
    Ok((terms, walls))
}

async fn bench_size(
    args: &BenchArgs,
    daemon: &tokio::runtime::Handle,
    (w, h): (u32, u32),
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    let mut vd = VirtualDesktop::start(w, h)?;
    let display = vd.display().to_owned();
    let dir = std::env::temp_dir().join(format!("deskhand-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let (mut terms, walls) = paint_scene(&display, w, h, &dir)?;

    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret).map_err(|e| anyhow::anyhow!("{e}"))?;
    let token: String = secret.iter().map(|b| format!("{b:02x}")).collect();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    // The daemon's side, on the daemon's runtime (its listener registered
    // with that runtime's reactor).
    let (engine, url, server) = {
        let _daemon = daemon.enter();
        let backend = open_x11(Some(&display))?;
        let engine = Arc::new(Engine::new(
            backend,
            Consent::sandbox(),
            AuditLog::disabled(),
        ));
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let listener = tokio::net::TcpListener::from_std(listener)?;
        let url = format!("ws://{}/v1/ws", listener.local_addr()?);
        let server = daemon.spawn(deskhand_server::serve(
            listener,
            engine.clone(),
            ServerConfig::new(Token::new(token.clone())),
            deskhand_host::doctor::health_source(&display),
            async {
                let _ = stopped.await;
            },
        ));
        (engine, url, server)
    };
    let mut c = Client::connect(&url, &token)?;
    let size = format!("{w}×{h}");
    let n = args.samples;
    let pn = args.peer_samples;

    let shot = dir.join("scrot.png");
    let resized = dir.join("resized.png");
    let (shot_s, resized_s) = (shot.to_string_lossy(), resized.to_string_lossy());
    let scrot = time_command(
        pn,
        &display,
        &[
            &["scrot", "-o", &shot_s],
            &["convert", &shot_s, "-resize", "1366x768!", &resized_s],
        ],
    );
    let png = json!({"format": "png"});

    // Every stripe changed: the wallpaper is swapped before each capture.
    let mut cold = Vec::with_capacity(n);
    for i in 0..n {
        set_wallpaper(&display, &walls[i % 2])?;
        // As after a keystroke below: let feh exit and the desktop settle,
        // so that the figure is deskhand's and not feh's teardown.
        tokio::time::sleep(Duration::from_millis(30)).await;
        cold.push(c.request("SCREENSHOT_REQUEST", png.clone())?.as_secs_f64() * 1000.0);
    }
    set_wallpaper(&display, &walls[0])?;
    rows.push(Row {
        what: format!("screenshot {size} PNG, whole screen changed"),
        ours: stats(cold),
        peer_name: "scrot + convert -resize".into(),
        peer: scrot,
    });

    // A small change, as after an agent's keystroke: one character typed
    // into a terminal before each capture.
    let (tx, ty) = (w as usize / 6, h as usize / 4);
    c.request(
        "INPUT_ACTION",
        json!({"action": "left_click", "coordinate": [tx, ty]}),
    )?;
    let mut small = Vec::with_capacity(n);
    for i in 0..n {
        let ch = char::from(b'a' + (i % 26) as u8).to_string();
        c.request("INPUT_ACTION", json!({"action": "type", "text": ch}))?;
        tokio::time::sleep(Duration::from_millis(30)).await;
        small.push(c.request("SCREENSHOT_REQUEST", png.clone())?.as_secs_f64() * 1000.0);
    }
    rows.push(Row {
        what: format!("screenshot {size} PNG, one character typed"),
        ours: stats(small),
        peer_name: "(same as above)".into(),
        peer: scrot,
    });

    let unchanged = time_ours(&mut c, n, "SCREENSHOT_REQUEST", |_| png.clone())?;
    rows.push(Row {
        what: format!("screenshot {size} PNG, nothing changed"),
        ours: unchanged,
        peer_name: "(same as above)".into(),
        peer: scrot,
    });

    let addr = url
        .trim_start_matches("ws://")
        .trim_end_matches("/v1/ws")
        .to_owned();
    shot::measure(
        (addr, token.clone()),
        &display,
        &walls,
        &size,
        n,
        scrot,
        rows,
    )?;

    let mut jpeg = Vec::with_capacity(n);
    for i in 0..n {
        set_wallpaper(&display, &walls[i % 2])?;
        // As after a keystroke below: let feh exit and the desktop settle,
        // so that the figure is deskhand's and not feh's teardown.
        tokio::time::sleep(Duration::from_millis(30)).await;
        let req = json!({"format": "jpeg", "quality": 75});
        jpeg.push(c.request("SCREENSHOT_REQUEST", req)?.as_secs_f64() * 1000.0);
    }
    let xwd_out = dir.join("root.xwd");
    let xwd_s = xwd_out.to_string_lossy();
    let xwd = time_command(
        pn,
        &display,
        &[&["xwd", "-root", "-silent", "-out", &xwd_s]],
    );
    rows.push(Row {
        what: format!("screenshot {size} JPEG q75, whole screen changed"),
        ours: stats(jpeg),
        peer_name: "xwd -root (raw, no encode)".into(),
        peer: xwd,
    });

    // 30 rounds of 7 moves (with the defaults): 30 xdotool runs, 30 moves
    // after idle, 180 one after another.
    pointer::measure(
        &mut c,
        &engine,
        &display,
        (w, h),
        pn * 3,
        n.div_ceil(6),
        rows,
    )
    .await?;

    // The scene's terminal still has the focus from the typing above.
    typing::measure(&mut c, &engine, &display, n.div_ceil(2), pn, rows).await?;

    takeover::measure(&mut c, &engine, &display, &size, n, rows).await?;

    let port = url
        .rsplit_once(':')
        .and_then(|(_, rest)| rest.split('/').next()?.parse().ok())
        .context("the bench server's port")?;
    let at = (tx as i32, ty as i32);
    mcp::measure(&mut c, port, &token, &display, &dir, &size, at, n, rows)?;
    // The wire client's takeover is off now: the batch's session starts
    // its own with its first input.
    let addr = format!("127.0.0.1:{port}");
    shot::measure_batch(
        (addr, token.clone()),
        &display,
        (at, (w, h)),
        (n, pn),
        &dir,
        rows,
    )?;

    let _ = stop.send(());
    let _ = server.await;
    let engine_for_stop = engine.clone();
    tokio::task::spawn_blocking(move || engine_for_stop.shutdown()).await?;
    for t in &mut terms {
        let _ = t.kill();
        let _ = t.wait();
    }
    vd.stop();
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// Runs the benchmark. The daemon's side (engine and server) runs on
/// `daemon`, a runtime like `deskhand serve`'s; the agent's side (the
/// WebSocket client and the reference tools) on this thread with a runtime
/// of its own, as in an agent's process: the client's socket is read by the
/// thread that waits on it, not handed over from one of the daemon's
/// threads (one more thread wake-up per reply, which no agent pays).
pub fn run(args: BenchArgs, daemon: tokio::runtime::Runtime) -> anyhow::Result<()> {
    if args.samples == 0 || args.peer_samples == 0 {
        bail!("--samples and --peer-samples must be at least 1");
    }
    let agent = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut rows = Vec::new();
    for size in &args.sizes {
        let (w, h) = size
            .split_once('x')
            .and_then(|(w, h)| Some((w.parse().ok()?, h.parse().ok()?)))
            .with_context(|| format!("bad size {size}"))?;
        eprintln!("measuring on a {w}x{h} virtual desktop …");
        agent.block_on(bench_size(&args, daemon.handle(), (w, h), &mut rows))?;
    }
    eprintln!("measuring accessibility reads on a 1920x1080 virtual desktop …");
    let (n, pn) = (args.samples, args.peer_samples);
    if let Err(e) = a11y::measure(daemon.handle(), n, pn, &mut rows) {
        eprintln!("accessibility rows not measured: {e:#}");
    }
    print_table(&rows);
    Ok(())
}

fn print_table(rows: &[Row]) {
    println!(
        "| operation | deskhand median / p95 (ms) | reference | reference median / p95 (ms) | speed-up (median) |"
    );
    println!("|---|---|---|---|---|");
    for r in rows {
        let (peer, ratio) = match r.peer {
            Some(p) => (
                format!("{:.2} / {:.2}", p.median, p.p95),
                format!("{:.1}×", p.median / r.ours.median),
            ),
            None => ("n/a".into(), "n/a".into()),
        };
        println!(
            "| {} | {:.2} / {:.2} | {} | {} | {} |",
            r.what, r.ours.median, r.ours.p95, r.peer_name, peer, ratio
        );
    }
}
