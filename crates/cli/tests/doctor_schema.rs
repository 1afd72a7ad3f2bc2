//! `deskhand doctor --json` validates against the schema `deskhand doctor
//! --schema` prints (generated from the report's types), without a display
//! and on a real X server.

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

fn doctor(args: &[&str], display: Option<&str>) -> (i32, Value) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_deskhand"));
    cmd.arg("doctor")
        .args(args)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("XDG_SESSION_TYPE");
    if let Some(d) = display {
        cmd.env("DISPLAY", d);
    }
    let out = cmd.output().expect("run deskhand doctor");
    let json = serde_json::from_slice(&out.stdout).expect("doctor prints JSON");
    (out.status.code().unwrap_or(-1), json)
}

fn assert_valid(report: &Value) {
    let (_, schema) = doctor(&["--schema"], None);
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(report)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}\n{report:#}");
}

/// An Xvfb on a free display, stopped when dropped.
struct Xvfb {
    child: Child,
    display: String,
}

impl Xvfb {
    fn start() -> Option<Self> {
        let mut fds = [0; 2];
        // SAFETY: pipe(2) fills the two descriptors of a valid array.
        if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
            return None;
        }
        // SAFETY: both descriptors were just opened and are owned here.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let child = Command::new("Xvfb")
            .args([
                "-displayfd",
                &fds[1].to_string(),
                "-screen",
                "0",
                "800x600x24",
                "-nolisten",
                "tcp",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        drop(write);
        let mut number = String::new();
        std::fs::File::from(read).read_to_string(&mut number).ok()?;
        Some(Self {
            child,
            display: format!(":{}", number.trim()),
        })
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_report_without_a_display_validates_and_is_not_ready() {
    let (code, report) = doctor(&["--json"], None);
    assert_eq!(code, 1, "not ready exits 1");
    assert_valid(&report);
    assert_eq!(report["backends"][0]["reason_code"], "display_unreachable");
    let (_, schema) = doctor(&["--schema"], None);
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    for (path, wrong) in [
        ("/backends/0/reason_code", "banana"),
        ("/capabilities/0/status", "maybe"),
        ("/schema", "someone/else"),
    ] {
        let mut bad = report.clone();
        *bad.pointer_mut(path).expect("field") = Value::from(wrong);
        assert!(
            !validator.is_valid(&bad),
            "{path} = {wrong} passed the schema"
        );
    }
}

#[test]
fn the_report_on_a_real_x_server_validates() {
    let Some(x) = Xvfb::start() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "Xvfb is missing (CI=true, so this is a failure)"
        );
        eprintln!("skipped: no Xvfb");
        return;
    };
    let (_, report) = doctor(&["--json"], Some(&x.display));
    assert_valid(&report);
    assert_eq!(report["session_type"], "x11");
    assert_eq!(report["backends"][0]["status"], "available");
}
