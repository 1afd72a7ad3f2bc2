//! The test desktop: an Xvfb on a free display, and the GTK fixture app
//! (`tests/fixtures/a11y_form.py`) under `dbus-run-session` with its own
//! session bus, which starts the accessibility bus and registry on demand.
//! Every process it starts is stopped by pid when it is dropped.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard, mpsc};
use std::time::{Duration, Instant};

use deskhand_backend::Rect;

/// The Python that has python3-gi (the one on `PATH` may not).
const PYTHON: &str = "/usr/bin/python3";

/// What the fixture said when it was ready.
pub struct Ready {
    /// The fixture's pid (the owner of its windows).
    pub pid: u32,
    /// Its session bus address.
    pub bus: String,
}

/// A running test desktop.
pub struct Desktop {
    xvfb: Child,
    session: Option<Child>,
    /// The fixture app, once ready.
    pub app: Ready,
    /// The X display number.
    pub display: u32,
    /// Scratch files of this run.
    pub dir: PathBuf,
}

/// Whether the tools the desktop needs are here: `None` when they are,
/// else what is missing. When `CI=true` a missing tool fails the test.
pub fn missing_tools() -> Option<String> {
    let on_path = |t: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {t}")])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    for tool in [
        "Xvfb",
        "dbus-run-session",
        "gtk3-widget-factory",
        "xwininfo",
    ] {
        if !on_path(tool) {
            return Some(format!("{tool} is not installed"));
        }
    }
    // What D-Bus activates for the accessibility bus (at-spi2-core).
    let service = Path::new("/usr/share/dbus-1/services/org.a11y.Bus.service");
    if !service.exists() {
        return Some(format!(
            "at-spi2-core is not installed ({} is missing)",
            service.display()
        ));
    }
    let gtk = "import gi; gi.require_version('Gtk', '3.0'); from gi.repository import Gtk";
    let ok = Command::new(PYTHON)
        .args(["-c", gtk])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    (!ok).then(|| format!("{PYTHON} has no python3-gi with GTK 3 (gir1.2-gtk-3.0)"))
}

/// Held by each desktop test while it runs: one at a time, so that the
/// timings printed are not of two desktops sharing the CPU.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The turn to run a desktop test; `None` (skip) when tools are missing
/// outside CI; panics in CI.
pub fn tools_or_skip() -> Option<MutexGuard<'static, ()>> {
    match missing_tools() {
        None => Some(ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())),
        Some(what) if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("CI=true and a test dependency is missing: {what} (run scripts/install-deps)")
        }
        Some(what) => {
            eprintln!("skipping the AT-SPI desktop test: {what}");
            None
        }
    }
}

/// A fresh scratch directory.
fn scratch() -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!("deskhand-a11y-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// Starts Xvfb on a free display; returns it and the display number.
fn start_xvfb() -> (Child, u32) {
    let mut xvfb = Command::new("Xvfb")
        .args([
            "-displayfd",
            "1",
            "-screen",
            "0",
            "1280x800x24",
            "-nolisten",
            "tcp",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start Xvfb");
    let mut out = xvfb.stdout.take().expect("Xvfb stdout");
    let mut text = String::new();
    let mut byte = [0u8; 1];
    while out.read(&mut byte).is_ok_and(|n| n == 1) && byte[0] != b'\n' {
        text.push(char::from(byte[0]));
    }
    let display = text
        .trim()
        .parse()
        .expect("Xvfb printed its display number");
    (xvfb, display)
}

/// The lines `child` prints on stdout, as they come.
fn lines_of(child: &mut Child) -> mpsc::Receiver<String> {
    let out = child.stdout.take().expect("piped stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Waits for the fixture's ready line (other processes of the session,
/// such as the registry, print on the same stdout).
fn wait_ready(lines: &mpsc::Receiver<String>) -> Ready {
    let deadline = Instant::now() + Duration::from_secs(30);
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        let Ok(line) = lines.recv_timeout(left) else {
            break;
        };
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line)
            && v["ready"] == true
        {
            return Ready {
                pid: u32::try_from(v["pid"].as_u64().expect("pid")).expect("pid fits"),
                bus: v["bus"].as_str().expect("bus address").to_owned(),
            };
        }
    }
    panic!("the GTK fixture did not report ready within 30 s");
}

/// The fixture's script.
fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/a11y_form.py")
}

impl Desktop {
    /// Starts Xvfb and the fixture with a list of `rows` rows.
    pub fn start(rows: u32) -> Self {
        Self::launch(|dir| {
            let path = |name: &str| dir.join(name).to_string_lossy().into_owned();
            vec![
                PYTHON.to_owned(),
                fixture().to_string_lossy().into_owned(),
                "--saved".to_owned(),
                path("saved"),
                "--bounds".to_owned(),
                path("bounds.json"),
                "--rows".to_owned(),
                rows.to_string(),
            ]
        })
    }

    /// Starts Xvfb and `gtk3-widget-factory` (through a shell that reports
    /// ready, as the fixture does, then becomes the app: same pid).
    pub fn start_widget_factory() -> Self {
        let script = r#"printf '{"ready": true, "pid": %s, "bus": "%s"}\n' "$$" "$DBUS_SESSION_BUS_ADDRESS"; exec gtk3-widget-factory"#;
        Self::launch(|_| vec!["sh".into(), "-c".into(), script.into()])
    }

    /// Starts Xvfb and, under `dbus-run-session` on it, the command `argv`
    /// gives for the scratch directory; waits for its ready line.
    fn launch(argv: impl FnOnce(&Path) -> Vec<String>) -> Self {
        let dir = scratch();
        // The session's sockets (the accessibility bus, the apps' own)
        // go here, and so away with the scratch directory.
        let run = dir.join("run");
        std::fs::create_dir(&run).expect("runtime directory");
        std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700))
            .expect("runtime directory mode");
        let (xvfb, display) = start_xvfb();
        let mut session = Command::new("dbus-run-session")
            .arg("--")
            .args(argv(&dir))
            .env("DISPLAY", format!(":{display}"))
            .env("XDG_RUNTIME_DIR", &run)
            // GTK loads its AT-SPI bridge unless this is set.
            .env_remove("NO_AT_BRIDGE")
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .env_remove("AT_SPI_BUS_ADDRESS")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start dbus-run-session");
        let lines = lines_of(&mut session);
        let mut desktop = Self {
            xvfb,
            session: Some(session),
            app: Ready {
                pid: 0,
                bus: String::new(),
            },
            display,
            dir,
        };
        desktop.app = wait_ready(&lines);
        desktop
    }

    /// Sends `signal` (`-USR1`, `-STOP`, …) to the fixture.
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([signal, &self.app.pid.to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill {signal} {}", self.app.pid);
    }

    /// The fixture's widgets' bounds in root coordinates, freshly dumped.
    pub fn bounds(&self) -> serde_json::Value {
        let path = self.dir.join("bounds.json");
        let _ = std::fs::remove_file(&path);
        self.signal("-USR1");
        let text = wait_for_file(&path, Duration::from_secs(5)).expect("the fixture wrote bounds");
        serde_json::from_str(&text).expect("bounds are JSON")
    }
}

impl Desktop {
    /// The bounds of the largest top-level X window titled `title`, as
    /// `xwininfo` reports them (what a window list gives the engine).
    pub fn x_window_bounds(&self, title: &str) -> Option<Rect> {
        let out = Command::new("xwininfo")
            .args(["-root", "-tree", "-display", &format!(":{}", self.display)])
            .output()
            .ok()?;
        let quoted = format!("\"{title}\":");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.contains(&quoted))
            .filter_map(parse_geometry)
            .max_by_key(|r| u64::from(r.width) * u64::from(r.height))
    }
}

/// The `WxH+X+Y` geometry at the end of an `xwininfo -tree` line.
fn parse_geometry(line: &str) -> Option<Rect> {
    let geometry = line.split_whitespace().rev().nth(1)?;
    let (size, place) = geometry.split_once('+')?;
    let (w, h) = size.split_once('x')?;
    let (x, y) = place.split_once('+')?;
    Some(Rect::new(
        x.parse().ok()?,
        y.parse().ok()?,
        w.parse().ok()?,
        h.parse().ok()?,
    ))
}

/// The contents of `path` once it exists, waiting up to `timeout`.
pub fn wait_for_file(path: &Path, timeout: Duration) -> Option<String> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Ok(text) = std::fs::read_to_string(path) {
            return Some(text);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits up to `timeout` for `child` to exit.
fn wait_exit(child: &mut Child, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if child.try_wait().ok().flatten().is_some() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

impl Drop for Desktop {
    /// Stops the fixture (and so its session bus), then Xvfb.
    fn drop(&mut self) {
        if let Some(mut session) = self.session.take() {
            if self.app.pid != 0 {
                // A stopped fixture must run again to hear SIGTERM.
                let pid = self.app.pid.to_string();
                let _ = Command::new("kill").args(["-CONT", &pid]).status();
                let _ = Command::new("kill").args(["-TERM", &pid]).status();
            }
            // dbus-run-session ends its bus once the fixture exits.
            if !wait_exit(&mut session, Duration::from_secs(5)) {
                let _ = session.kill();
                let _ = session.wait();
            }
        }
        let _ = self.xvfb.kill();
        let _ = self.xvfb.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
