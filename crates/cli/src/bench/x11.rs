//! The benchmark on X11: a virtual desktop it starts itself with the
//! standard scene (a photo-like wallpaper and text windows over about a
//! third of the screen), deskhand side by side with the reference tools
//! (scrot, xdotool, xwd) in the same run.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use deskhand_platform::bench::{VirtualDesktop, open_x11};
use serde_json::json;

use super::{
    BenchArgs, Client, Row, Served, Stats, a11y, mcp, pointer, print_table, shot, stats, takeover,
    time_ours, typing,
};

pub(crate) fn time_command(n: usize, display: &str, argv: &[&[&str]]) -> Option<Stats> {
    let ms = (0..n)
        .map(|_| time_commands_once(display, argv))
        .collect::<Option<Vec<_>>>()?;
    Some(stats(ms))
}

/// Runs the commands one after the other (process start included, as an
/// agent's shell would run them); their time in milliseconds, or `None`
/// (said on stderr) when one failed.
pub(crate) fn time_commands_once(display: &str, argv: &[&[&str]]) -> Option<f64> {
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

pub(crate) fn set_wallpaper(display: &str, path: &std::path::Path) -> anyhow::Result<()> {
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

    let served = Served::start(daemon, open_x11(Some(&display))?, &display)?;
    let (engine, url, token) = (
        served.engine.clone(),
        served.url.clone(),
        served.token.clone(),
    );
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

    drop(engine);
    served.stop().await?;
    for t in &mut terms {
        let _ = t.kill();
        let _ = t.wait();
    }
    vd.stop();
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// The benchmark on X11 virtual desktops of each size. The agent's side
/// (the WebSocket client and the reference tools) runs on this thread: the
/// client's socket is read by the thread that waits on it, not handed over
/// from one of the daemon's threads (one more thread wake-up per reply,
/// which no agent pays).
pub(crate) fn run(args: BenchArgs, daemon: tokio::runtime::Runtime) -> anyhow::Result<()> {
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
