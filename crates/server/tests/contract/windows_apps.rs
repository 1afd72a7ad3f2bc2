//! Contract tests of WINDOW_LIST_REQUEST, WINDOW_FOCUS,
//! SCREENSHOT_REQUEST.window_id, APP_LIST_REQUEST and APP_LAUNCH over the
//! mock desktop.

use crate::common::{Server, decode_png, error_code};
use deskhand_backend_mock::{MockDesktop, window};
use deskhand_engine::{Consent, LaunchTarget, ProcessInfo, Rect};
use serde_json::{Value, json};

async fn two_windows() -> Server {
    let server = Server::sandbox().await;
    {
        let mut s = server.desktop.state();
        s.fill(Rect::new(100, 100, 300, 200), [255, 0, 0]);
        s.fill(Rect::new(900, 500, 200, 100), [0, 0, 255]);
        s.windows = vec![
            window(
                0x10,
                41,
                "XTerm",
                "left term",
                Rect::new(100, 100, 300, 200),
            ),
            window(0x20, 42, "Gedit", "notes", Rect::new(900, 500, 200, 100)),
        ];
    }
    server
}

fn windows(reply: &Value) -> Vec<Value> {
    assert_eq!(reply["type"], "WINDOW_LIST_RESPONSE", "{reply}");
    reply["payload"]["windows"]
        .as_array()
        .expect("windows")
        .clone()
}

#[tokio::test]
async fn list_reports_topmost_first_with_ids_pids_and_bounds() {
    let server = two_windows().await;
    let mut c = server.ready_client().await;
    let list = windows(&c.request("WINDOW_LIST_REQUEST", json!({})).await);
    assert_eq!(list.len(), 2);
    assert_eq!(list[0]["title"], "notes", "topmost first");
    assert_eq!(list[0]["pid"], 42);
    assert_eq!(list[0]["app_name"], "Gedit");
    assert_eq!(list[0]["bounds"], json!([900, 500, 1100, 600]));
    assert_eq!(list[1]["bounds"], json!([100, 100, 400, 300]));
    assert_eq!(list[1]["monitor"], 0);
    let id = list[1]["window_id"].as_str().expect("id");
    assert!(id.starts_with("win_"), "{id}");
    // Listing again keeps the ids.
    let again = windows(&c.request("WINDOW_LIST_REQUEST", json!({})).await);
    assert_eq!(again[1]["window_id"], id);
    // Filter by app.
    let only = windows(
        &c.request("WINDOW_LIST_REQUEST", json!({"app_bundle_id": "xterm"}))
            .await,
    );
    assert_eq!(only.len(), 1);
    assert_eq!(only[0]["title"], "left term");
}

#[tokio::test]
async fn minimized_and_offscreen_windows_only_on_request() {
    let server = two_windows().await;
    {
        let mut s = server.desktop.state();
        s.windows[0].minimized = true;
        s.windows[1].rect = Rect::new(5000, 5000, 10, 10);
    }
    let mut c = server.ready_client().await;
    assert!(windows(&c.request("WINDOW_LIST_REQUEST", json!({})).await).is_empty());
    let all = json!({"include_minimized": true, "include_offscreen": true});
    assert_eq!(
        windows(&c.request("WINDOW_LIST_REQUEST", all).await).len(),
        2
    );
}

#[tokio::test]
async fn focus_raises_and_a_vanished_window_is_stale() {
    let server = two_windows().await;
    let mut c = server.ready_client().await;
    let list = windows(&c.request("WINDOW_LIST_REQUEST", json!({})).await);
    let left = list[1]["window_id"].as_str().expect("id").to_owned();
    let r = c
        .request("WINDOW_FOCUS", json!({"window_id": left, "raise": true}))
        .await;
    assert_eq!(r["type"], "ACK", "{r}");
    {
        let s = server.desktop.state();
        assert!(s.windows.last().is_some_and(|w| w.id == 0x10 && w.focused));
    }
    // The window goes away and another program gets its native id.
    server.desktop.state().windows[1] =
        window(0x10, 77, "Firefox", "web", Rect::new(100, 100, 300, 200));
    for (kind, payload) in [
        ("WINDOW_FOCUS", json!({"window_id": left})),
        ("SCREENSHOT_REQUEST", json!({"window_id": left})),
    ] {
        let r = c.request(kind, payload).await;
        assert_eq!(error_code(&r), "WINDOW_STALE", "{kind}: {r}");
        assert_eq!(r["payload"]["details"]["window_id"], left.as_str());
        assert_eq!(r["payload"]["disposition"], "after_refresh");
    }
    let r = c
        .request(
            "WINDOW_FOCUS",
            json!({"window_id": "win_from-another-start"}),
        )
        .await;
    assert_eq!(error_code(&r), "WINDOW_STALE");
    let r = c.request("WINDOW_FOCUS", json!({})).await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENTS");
}

#[tokio::test]
async fn focus_needs_the_input_grant() {
    let desktop = MockDesktop::new();
    desktop.state().windows = vec![window(1, 1, "A", "a", Rect::new(0, 0, 10, 10))];
    let backend = desktop.backend();
    let server = Server::start(desktop, backend, Consent::none()).await;
    let mut c = server.ready_client().await;
    let list = windows(&c.request("WINDOW_LIST_REQUEST", json!({})).await);
    let r = c
        .request("WINDOW_FOCUS", json!({"window_id": list[0]["window_id"]}))
        .await;
    assert_eq!(error_code(&r), "CAPABILITY_NOT_GRANTED");
    assert!(!server.desktop.state().windows[0].focused);
}

#[tokio::test]
async fn screenshot_of_a_window_is_its_content_unless_covered() {
    let server = two_windows().await;
    let mut c = server.ready_client().await;
    let list = windows(&c.request("WINDOW_LIST_REQUEST", json!({})).await);
    let left = list[1]["window_id"].clone();
    let r = c
        .request("SCREENSHOT_REQUEST", json!({"window_id": left}))
        .await;
    assert_eq!(r["type"], "SCREENSHOT_RESPONSE", "{r}");
    let (w, h, rgb) = decode_png(r["payload"]["image_base64"].as_str().expect("image"));
    assert_eq!((w, h), (300, 200));
    assert!(
        rgb.chunks_exact(3).all(|p| p == [255, 0, 0]),
        "only the window's pixels"
    );
    assert_eq!(r["payload"]["meta"]["origin"], json!([100, 100]));

    // Another window moves over it: its content cannot be had.
    server.desktop.state().windows[1].rect = Rect::new(300, 250, 200, 100);
    let r = c
        .request("SCREENSHOT_REQUEST", json!({"window_id": left}))
        .await;
    assert_eq!(error_code(&r), "WINDOW_NOT_VISIBLE", "{r}");
    assert_eq!(r["payload"]["details"]["reason"], "covered");

    server.desktop.state().windows[0].minimized = true;
    let r = c
        .request("SCREENSHOT_REQUEST", json!({"window_id": left}))
        .await;
    assert_eq!(r["payload"]["details"]["reason"], "minimized");
}

fn process(pid: u32, name: &str) -> ProcessInfo {
    ProcessInfo {
        pid,
        name: name.into(),
        exe: Some(format!("/usr/bin/{name}")),
        app_id: None,
    }
}

#[tokio::test]
async fn apps_are_processes_joined_with_their_windows() {
    let server = two_windows().await;
    {
        let mut s = server.desktop.state();
        s.processes = vec![
            process(41, "xterm"),
            process(42, "gedit"),
            process(43, "daemon"),
        ];
        s.windows[0].focused = true;
    }
    let mut c = server.ready_client().await;
    let r = c.request("APP_LIST_REQUEST", json!({})).await;
    assert_eq!(r["type"], "APP_LIST_RESPONSE", "{r}");
    let apps = r["payload"]["apps"].as_array().expect("apps").clone();
    assert_eq!(apps.len(), 2, "only apps with windows: {apps:?}");
    assert_eq!(apps[0]["pid"], 41, "frontmost first");
    assert_eq!(apps[0]["is_frontmost"], true);
    assert_eq!(apps[0]["window_count"], 1);
    assert_eq!(apps[0]["bundle_id"], "xterm");
    assert_eq!(apps[0]["executable_path"], "/usr/bin/xterm");
    let r = c
        .request("APP_LIST_REQUEST", json!({"include_background": true}))
        .await;
    let apps = r["payload"]["apps"].as_array().expect("apps").clone();
    assert_eq!(apps.len(), 3);
    assert!(
        apps.iter()
            .any(|a| a["name"] == "daemon" && a["window_count"] == 0)
    );
}

#[tokio::test]
async fn launch_by_id_or_path_returns_a_pid_the_list_shows() {
    let server = two_windows().await;
    let mut c = server.ready_client().await;
    let r = c
        .request(
            "APP_LAUNCH",
            json!({"bundle_id": "org.example.Calc", "args": ["/tmp/sum.calc"], "activate": false}),
        )
        .await;
    assert_eq!(r["type"], "ACK", "{r}");
    let pid = r["payload"]["pid"].as_u64().expect("pid");
    let r = c
        .request("APP_LIST_REQUEST", json!({"include_background": true}))
        .await;
    let apps = r["payload"]["apps"].as_array().expect("apps").clone();
    assert!(apps.iter().any(|a| a["pid"] == pid), "{apps:?}");
    let r = c
        .request("APP_LAUNCH", json!({"executable_path": "/usr/bin/calc"}))
        .await;
    assert_eq!(r["type"], "ACK", "{r}");
    assert_eq!(
        server.desktop.state().launches,
        vec![
            (
                LaunchTarget::AppId("org.example.Calc".into()),
                vec!["/tmp/sum.calc".to_owned()]
            ),
            (LaunchTarget::Executable("/usr/bin/calc".into()), vec![]),
        ]
    );
}

#[tokio::test]
async fn bad_launches_are_refused_and_launch_needs_the_grant() {
    let server = two_windows().await;
    let mut c = server.ready_client().await;
    for payload in [
        json!({}),
        json!({"bundle_id": "a", "executable_path": "/bin/b"}),
        json!({"bundle_id": "missing-app"}),
    ] {
        let r = c.request("APP_LAUNCH", payload.clone()).await;
        assert_eq!(error_code(&r), "INVALID_ARGUMENTS", "{payload}: {r}");
    }
    assert!(server.desktop.state().launches.is_empty());

    let desktop = MockDesktop::new();
    let backend = desktop.backend();
    let server = Server::start(desktop, backend, Consent::none()).await;
    let mut c = server.ready_client().await;
    let r = c.request("APP_LAUNCH", json!({"bundle_id": "calc"})).await;
    assert_eq!(error_code(&r), "CAPABILITY_NOT_GRANTED");
    assert!(server.desktop.state().launches.is_empty());
}

#[tokio::test]
async fn permissions_are_reported_without_guessing() {
    let server = Server::sandbox().await;
    let mut c = server.ready_client().await;
    let r = c
        .request(
            "PERMISSIONS_CHECK_REQUEST",
            json!({"permissions": ["screen_recording", "accessibility", "telepathy"]}),
        )
        .await;
    assert_eq!(r["type"], "PERMISSIONS_CHECK_RESPONSE", "{r}");
    assert_eq!(
        r["payload"]["permissions"],
        json!({"screen_recording": "granted", "accessibility": "denied", "telepathy": "unknown"})
    );
    let r = c.request("PERMISSIONS_CHECK_REQUEST", json!({})).await;
    assert_eq!(
        r["payload"]["permissions"],
        json!({"screen_recording": "granted", "accessibility": "denied"}),
        "every known one when none is named"
    );
    let r = c
        .request("PERMISSIONS_CHECK_REQUEST", json!({"permissions": [""]}))
        .await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENTS");
}

/// Attack: launching and focusing without a takeover, and running shells.
#[tokio::test]
async fn launch_and_focus_need_a_takeover_and_commands_are_refused() {
    let server = two_windows().await;
    let mut c = server.handshaken_client().await;
    let r = c.request("APP_LAUNCH", json!({"bundle_id": "calc"})).await;
    assert_eq!(error_code(&r), "CAPABILITY_NOT_GRANTED", "{r}");
    assert_eq!(r["payload"]["details"]["needed"], "takeover");
    let list = c.request("WINDOW_LIST_REQUEST", json!({})).await;
    let wid = list["payload"]["windows"][0]["window_id"].clone();
    let r = c.request("WINDOW_FOCUS", json!({"window_id": wid})).await;
    assert_eq!(error_code(&r), "CAPABILITY_NOT_GRANTED", "{r}");

    c.request("TAKEOVER_REQUEST", json!({"on": true})).await;
    for payload in [
        json!({"executable_path": "/bin/sh", "args": ["-c", "touch /tmp/x"]}),
        json!({"executable_path": "/usr/bin/python3"}),
        json!({"executable_path": "/usr/local/bin/link-to-bash"}),
        json!({"executable_path": "/usr/bin/xterm", "args": ["-e", "sh", "-c", "id"]}),
        // Not an installed app, or not with these arguments.
        json!({"executable_path": "/usr/bin/true"}),
        json!({"executable_path": "/usr/bin/xterm", "args": ["-T", "t"]}),
        json!({"executable_path": "/usr/bin/calc", "args": ["-e", "x"]}),
        json!({"bundle_id": "org.example.Calc", "args": ["--x"]}),
    ] {
        let r = c.request("APP_LAUNCH", payload.clone()).await;
        assert_eq!(error_code(&r), "CAPABILITY_NOT_GRANTED", "{payload}: {r}");
        assert_eq!(r["payload"]["details"]["capability"], "run_commands");
        let message = r["payload"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("launch_allow"), "{message}");
    }
    assert!(server.desktop.state().launches.is_empty());
    for payload in [
        json!({"executable_path": "/usr/bin/xterm"}),
        json!({"bundle_id": "debian-xterm"}),
        json!({"executable_path": "/usr/local/bin/link-to-calc", "args": ["/tmp/a"]}),
    ] {
        let r = c.request("APP_LAUNCH", payload.clone()).await;
        assert_eq!(r["type"], "ACK", "{payload}: {r}");
    }
}

/// `launch_allow` lets exactly the file it names run anything: under
/// another name too (a link), never another file.
#[tokio::test]
async fn launch_allow_names_a_file_not_a_name() {
    let desktop = MockDesktop::new();
    let backend = desktop.backend();
    let consent = Consent {
        launch_allow: vec!["/usr/bin/sh".into()],
        ..Consent::sandbox()
    };
    let server = Server::start(desktop, backend, consent).await;
    let mut c = server.ready_client().await;
    for path in ["/usr/bin/sh", "/home/p/link-to-sh"] {
        let r = c
            .request(
                "APP_LAUNCH",
                json!({"executable_path": path, "args": ["-c", "id"]}),
            )
            .await;
        assert_eq!(r["type"], "ACK", "{path}: {r}");
    }
    let r = c
        .request(
            "APP_LAUNCH",
            json!({"executable_path": "/usr/bin/dash", "args": ["-c", "id"]}),
        )
        .await;
    assert_eq!(error_code(&r), "CAPABILITY_NOT_GRANTED", "{r}");
    assert_eq!(server.desktop.state().launches.len(), 2);
}

/// Attack: a window id of megabytes to flood the audit log and replies.
#[tokio::test]
async fn a_window_id_longer_than_any_minted_is_refused_before_lookup() {
    let server = two_windows().await;
    let mut c = server.ready_client().await;
    let long = format!("win_{}", "a".repeat(2 * 1024 * 1024));
    let r = c.request("WINDOW_FOCUS", json!({"window_id": long})).await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENTS");
    assert!(r.to_string().len() < 4096, "the reply echoes the id");
    let r = c
        .request("SCREENSHOT_REQUEST", json!({"window_id": long}))
        .await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENTS");
}
