//! The accessibility rows, on a virtual desktop and a session bus of their
//! own with the GTK fixture app (`tests/fixtures/a11y_form.py`): its
//! 500-row list window (about 1,000 elements) read whole and as a
//! skeleton through the engine, and a headless token click on its form's
//! Save button (the act and the settled re-read of the form for the
//! diff), beside the same list walked with pyatspi in the same run.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use deskhand_engine::elements::{ElementAct, TreeKind, TreeQuery};
use deskhand_engine::{AppScope, AuditLog, Consent, Engine, ListedWindow, Session, WindowFilter};
use deskhand_platform::bench::{AtspiOptions, VirtualDesktop, open_accessibility, open_x11};

use super::{Row, stats};

const FIXTURE: &str = include_str!("../../../../tests/fixtures/a11y_form.py");
const PYATSPI_WALK: &str = include_str!("pyatspi_walk.py");
const FORM: &str = "deskhand a11y form";
const LIST: &str = "deskhand a11y list";

/// A child process killed when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Measures the rows; `n` samples of ours, `pn` rounds of pyatspi.
pub(super) fn measure(
    daemon: &tokio::runtime::Handle,
    n: usize,
    pn: usize,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    let dir = std::env::temp_dir().join(format!("deskhand-bench-a11y-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let result = measure_in(daemon, &dir, n, pn, rows);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn measure_in(
    daemon: &tokio::runtime::Handle,
    dir: &std::path::Path,
    n: usize,
    pn: usize,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    let mut vd = VirtualDesktop::start(1920, 1080)?;
    let display = vd.display().to_owned();
    let (_bus, address) = start_bus(dir)?;
    let (_app, pid) = start_fixture(dir, &display, &address)?;
    let engine = {
        let _daemon = daemon.enter();
        let mut backend = open_x11(Some(&display))?;
        let options = AtspiOptions {
            session_bus: Some(address.clone()),
            ..AtspiOptions::default()
        };
        backend.accessibility = Some(Arc::from(open_accessibility(&options)?));
        Arc::new(Engine::new(
            backend,
            Consent::sandbox(),
            AuditLog::disabled(),
        ))
    };
    let measured = daemon.block_on(time_engine(&engine, n));
    let peer = pyatspi(dir, &display, &address, pid, pn);
    engine.shutdown();
    vd.stop();
    let (elements, full, skeleton, click) = measured?;
    let peer_name = format!("pyatspi walk (role, name, states, extents), {elements} elements");
    rows.push(Row {
        what: format!("accessibility: full read of a {elements}-element window"),
        ours: stats(full),
        peer_name: peer_name.clone(),
        peer: peer.as_ref().ok().map(|ms| stats(ms.clone())),
    });
    rows.push(Row {
        what: format!("accessibility: skeleton read of the {elements}-element window"),
        ours: stats(skeleton),
        peer_name,
        peer: peer.as_ref().ok().map(|ms| stats(ms.clone())),
    });
    rows.push(Row {
        what: "accessibility: headless token click (act + settled diff)".into(),
        ours: stats(click),
        peer_name: "n/a".into(),
        peer: None,
    });
    if let Err(e) = peer {
        eprintln!("pyatspi reference not measured: {e:#}");
    }
    Ok(())
}

/// The samples: elements of the list window, full reads, skeleton reads,
/// token clicks (milliseconds).
type Samples = (usize, Vec<f64>, Vec<f64>, Vec<f64>);

async fn time_engine(engine: &Arc<Engine>, n: usize) -> anyhow::Result<Samples> {
    let session = engine.open_session("bench");
    let list = window(engine, &session, LIST).await?;
    let form = window(engine, &session, FORM).await?;
    let all = TreeQuery {
        kind: TreeKind::Full,
        max_elements: Some(5000),
        max_depth: None,
    };
    // GTK registers its windows on the bus shortly after it maps them.
    let deadline = Instant::now() + Duration::from_secs(20);
    let first = loop {
        match engine.read_tree(&session, &list, all.clone()).await {
            Ok(view) => break view,
            Err(_) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(200)).await
            }
            Err(e) => bail!("the fixture's tree: {e}"),
        }
    };
    let mut full = Vec::with_capacity(n);
    let mut skeleton = Vec::with_capacity(n);
    let skel = TreeQuery {
        kind: TreeKind::Skeleton,
        max_elements: None,
        max_depth: None,
    };
    for _ in 0..n {
        let t = Instant::now();
        engine.read_tree(&session, &list, all.clone()).await?;
        full.push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        engine.read_tree(&session, &list, skel.clone()).await?;
        skeleton.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let view = engine.read_tree(&session, &form, TreeQuery::full()).await?;
    let save = view
        .rows
        .iter()
        .find(|r| r.role == "button" && r.label == "Save")
        .context("the form's Save button")?
        .element_token
        .clone();
    let mut click = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        let act = ElementAct::Press { action: None };
        engine
            .element_act(&session, &AppScope::All, &save, act)
            .await?;
        click.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    Ok((first.window_elements, full, skeleton, click))
}

async fn window(engine: &Engine, session: &Session, title: &str) -> anyhow::Result<ListedWindow> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let windows = engine
            .list_windows(session, WindowFilter::default())
            .await?;
        if let Some(w) = windows.into_iter().find(|w| w.window.title == title) {
            return Ok(w);
        }
        if Instant::now() > deadline {
            bail!("no window {title:?} on the bench's desktop");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A session bus of the bench's own: `(process, address)`.
fn start_bus(dir: &std::path::Path) -> anyhow::Result<(Killed, String)> {
    let mut child = Command::new("dbus-daemon")
        .args(["--session", "--nofork", "--print-address=1"])
        .arg(format!("--address=unix:path={}", dir.join("bus").display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("dbus-daemon (install dbus)")?;
    let mut line = String::new();
    BufReader::new(child.stdout.take().context("stdout")?).read_line(&mut line)?;
    Ok((Killed(child), line.trim().to_owned()))
}

/// The GTK fixture on `display` with the bus at `address`: `(process,
/// pid)`.
fn start_fixture(
    dir: &std::path::Path,
    display: &str,
    address: &str,
) -> anyhow::Result<(Killed, u32)> {
    let script = dir.join("a11y_form.py");
    std::fs::write(&script, FIXTURE)?;
    let mut child = Command::new("/usr/bin/python3")
        .arg(&script)
        .arg("--saved")
        .arg(dir.join("saved.txt"))
        .arg("--bounds")
        .arg(dir.join("bounds.json"))
        .args(["--rows", "500"])
        .env("DISPLAY", display)
        .env("DBUS_SESSION_BUS_ADDRESS", address)
        .env_remove("NO_AT_BRIDGE")
        .env_remove("AT_SPI_BUS_ADDRESS")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("the GTK fixture (python3-gi, gir1.2-gtk-3.0)")?;
    let mut line = String::new();
    BufReader::new(child.stdout.take().context("stdout")?).read_line(&mut line)?;
    let ready: serde_json::Value =
        serde_json::from_str(&line).context("the GTK fixture did not start")?;
    let pid = ready["pid"].as_u64().context("the fixture's pid")?;
    Ok((Killed(child), u32::try_from(pid)?))
}

/// The list window walked with pyatspi `rounds` times.
fn pyatspi(
    dir: &std::path::Path,
    display: &str,
    address: &str,
    pid: u32,
    rounds: usize,
) -> anyhow::Result<Vec<f64>> {
    let script = dir.join("pyatspi_walk.py");
    std::fs::write(&script, PYATSPI_WALK)?;
    let out = Command::new("/usr/bin/python3")
        .arg(&script)
        .args([pid.to_string(), LIST.to_owned(), rounds.max(1).to_string()])
        .env("DISPLAY", display)
        .env("DBUS_SESSION_BUS_ADDRESS", address)
        .stderr(Stdio::null())
        .output()
        .context("python3 with pyatspi (install python3-pyatspi)")?;
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).with_context(|| {
        format!(
            "pyatspi walk printed {:?}",
            String::from_utf8_lossy(&out.stdout)
        )
    })?;
    let ms: Vec<f64> = report["ms"]
        .as_array()
        .context("pyatspi walk: no timings")?
        .iter()
        .filter_map(serde_json::Value::as_f64)
        .collect();
    if ms.is_empty() {
        bail!("pyatspi walk: {report}");
    }
    Ok(ms)
}
