//! Contract tests of the clipboard sandbox over the mock desktop:
//! CLIPBOARD_READ / CLIPBOARD_WRITE under each flag combination, concealed
//! and credential-looking content, FILE_TOO_LARGE, and `type` with
//! `paste: true`.

use crate::common::{Client, Server, error_code};
use deskhand_backend_mock::{Event, MockDesktop};
use deskhand_engine::{AuditLog, ClipboardPolicy, Consent, Key};
use serde_json::{Value, json};

const WRITEBACK: ClipboardPolicy = ClipboardPolicy {
    enabled: true,
    read_foreign: false,
    foreign_reads_approved: false,
};
const FOREIGN: ClipboardPolicy = ClipboardPolicy {
    enabled: true,
    read_foreign: true,
    foreign_reads_approved: true,
};

async fn server(policy: ClipboardPolicy) -> Server {
    let desktop = MockDesktop::new();
    let backend = desktop.backend();
    Server::start(desktop, backend, Consent::sandbox().with_clipboard(policy)).await
}

async fn read(c: &mut Client) -> Value {
    c.request("CLIPBOARD_READ", json!({"format": "text"})).await
}

async fn write(c: &mut Client, text: &str) -> Value {
    c.request(
        "CLIPBOARD_WRITE",
        json!({"format": "text", "content": text}),
    )
    .await
}

fn reason(reply: &Value) -> &str {
    assert_eq!(error_code(reply), "CLIPBOARD_CONCEALED", "{reply}");
    reply["payload"]["details"]["reason"]
        .as_str()
        .expect("reason")
}

fn offers_clipboard(c: &Client) -> bool {
    let p = &c.hello["payload"];
    let coarse = p["computer_use_features_coarse"]
        .as_array()
        .expect("coarse");
    let fine = p["computer_use_features"].as_array().expect("fine");
    let has_fine =
        fine.contains(&json!("clipboard.read")) && fine.contains(&json!("clipboard.write"));
    assert_eq!(coarse.contains(&json!("clipboard")), has_fine);
    has_fine
}

#[tokio::test]
async fn default_deny_offers_nothing_and_touches_nothing() {
    let server = server(ClipboardPolicy::default()).await;
    server.desktop.copy_foreign("person's copy", false);
    let mut c = server.ready_client().await;
    assert!(!offers_clipboard(&c));
    assert_eq!(error_code(&read(&mut c).await), "FEATURE_NOT_SUPPORTED");
    assert_eq!(
        error_code(&write(&mut c, "x").await),
        "FEATURE_NOT_SUPPORTED"
    );
    let long = "a".repeat(300);
    let reply = c
        .act(json!({"action": "type", "text": long, "paste": true}))
        .await;
    assert_eq!(error_code(&reply), "FEATURE_NOT_SUPPORTED", "{reply}");
    let s = server.desktop.state();
    assert_eq!(s.clipboard.text.as_deref(), Some("person's copy"));
    assert!(s.events.is_empty(), "nothing typed: {:?}", s.events);
}

#[tokio::test]
async fn writeback_only_returns_just_what_deskhand_wrote() {
    let server = server(WRITEBACK).await;
    let mut c = server.ready_client().await;
    assert!(offers_clipboard(&c));
    server.desktop.copy_foreign("person's copy", false);
    let refused = read(&mut c).await;
    assert_eq!(reason(&refused), "writeback_only");
    assert!(refused["payload"]["details"]["writeback_age_seconds"].is_null());

    assert_eq!(write(&mut c, "from the agent").await["type"], "ACK");
    assert_eq!(
        server.desktop.state().clipboard.text.as_deref(),
        Some("from the agent")
    );
    let back = read(&mut c).await;
    assert_eq!(back["type"], "CLIPBOARD_READ_RESPONSE", "{back}");
    assert_eq!(back["payload"]["content"], "from the agent");
    assert_eq!(back["payload"]["size_bytes"], 14);

    // The person copies something else: deskhand's write is gone.
    server.desktop.copy_foreign("person's second copy", false);
    let over = read(&mut c).await;
    assert_eq!(reason(&over), "writeback_overwritten");
    assert!(over["payload"]["details"]["writeback_age_seconds"].is_number());
}

#[tokio::test]
async fn read_foreign_reads_text_but_never_secrets() {
    let server = server(FOREIGN).await;
    let mut c = server.ready_client().await;
    server.desktop.copy_foreign("meeting at 10", false);
    assert_eq!(read(&mut c).await["payload"]["content"], "meeting at 10");

    server.desktop.copy_foreign("hunter2", true);
    let marked = read(&mut c).await;
    assert_eq!(reason(&marked), "concealed_type");
    assert_eq!(
        marked["payload"]["details"]["marker"],
        "x-kde-passwordManagerHint"
    );
    assert_eq!(marked["payload"]["fatal"], false);

    server
        .desktop
        .copy_foreign("sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", false);
    assert_eq!(reason(&read(&mut c).await), "credential_like");
}

#[tokio::test]
async fn foreign_reads_without_host_approval_are_not_granted() {
    let server = server(ClipboardPolicy {
        foreign_reads_approved: false,
        ..FOREIGN
    })
    .await;
    let mut c = server.ready_client().await;
    server.desktop.copy_foreign("meeting at 10", false);
    let reply = read(&mut c).await;
    assert_eq!(error_code(&reply), "CAPABILITY_NOT_GRANTED", "{reply}");
    assert_eq!(reply["payload"]["details"]["needed"], "host_approval");
    // deskhand's own write stays readable.
    write(&mut c, "mine").await;
    assert_eq!(read(&mut c).await["payload"]["content"], "mine");

    // With a person to ask, each foreign read is put to them.
    server.engine.set_person_present(true);
    server.desktop.copy_foreign("meeting at 11", false);
    for approve in [true, false] {
        let mut events = server.engine.takeover_events();
        let engine = server.engine.clone();
        let answer = tokio::spawn(async move {
            loop {
                if let Ok(deskhand_engine::TakeoverEvent::ApprovalRequested(ask)) =
                    events.recv().await
                {
                    assert_eq!(ask.needs, "clipboard_read");
                    return engine.answer_approval(&ask.id, approve);
                }
            }
        });
        let reply = read(&mut c).await;
        assert!(answer.await.expect("asked"));
        if approve {
            assert_eq!(reply["payload"]["content"], "meeting at 11", "{reply}");
        } else {
            assert_eq!(error_code(&reply), "APPROVAL_DENIED", "{reply}");
        }
    }
}

#[tokio::test]
async fn both_directions_are_bounded_by_max_file_size_bytes() {
    let server = server(FOREIGN).await;
    let mut c = server.client().await;
    c.send_raw(
        json!({"type": "HELLO_ACK", "id": "ack", "ts": 0, "payload": {"max_file_size_bytes": 16}})
            .to_string(),
    )
    .await;
    server.desktop.copy_foreign("before", false);
    let reply = write(&mut c, "seventeen bytes!!").await;
    assert_eq!(error_code(&reply), "FILE_TOO_LARGE", "{reply}");
    assert_eq!(reply["payload"]["details"]["max_file_size_bytes"], 16);
    assert_eq!(
        server.desktop.state().clipboard.text.as_deref(),
        Some("before"),
        "an oversized write changes nothing"
    );
    assert_eq!(write(&mut c, "sixteen bytes!!!").await["type"], "ACK");

    server
        .desktop
        .copy_foreign("a copy longer than sixteen bytes", false);
    assert_eq!(error_code(&read(&mut c).await), "FILE_TOO_LARGE");
}

#[tokio::test]
async fn image_format_and_missing_content_are_clear_errors() {
    let server = server(FOREIGN).await;
    let mut c = server.ready_client().await;
    let img = c
        .request("CLIPBOARD_READ", json!({"format": "image"}))
        .await;
    assert_eq!(error_code(&img), "FEATURE_NOT_SUPPORTED");
    let missing = c
        .request("CLIPBOARD_WRITE", json!({"format": "text"}))
        .await;
    assert_eq!(error_code(&missing), "INVALID_ARGUMENTS", "{missing}");
}

fn pasted(desktop: &MockDesktop) -> Vec<String> {
    desktop
        .state()
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Paste(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn paste_puts_long_text_on_the_clipboard_and_presses_ctrl_v() {
    let server = server(WRITEBACK).await;
    let mut c = server.ready_client().await;
    server.desktop.copy_foreign("person's copy", false);
    let long: String = "0123456789".repeat(40);
    let reply = c
        .act(json!({"action": "type", "text": long, "paste": true}))
        .await;
    assert_eq!(reply["type"], "ACK", "{reply}");
    assert_eq!(pasted(&server.desktop), vec![long.clone()]);
    {
        let s = server.desktop.state();
        assert!(s.keys.is_empty(), "no key left held: {:?}", s.keys);
        assert!(s.events.contains(&Event::Key(Key::Control, false)));
        // Clobber-and-document: the pasted text stays on the clipboard.
        assert_eq!(s.clipboard.text.as_deref(), Some(long.as_str()));
        assert_eq!(s.typed(), "", "pasted, not typed");
    }

    // Short text is typed even with paste: true.
    c.act(json!({"action": "type", "text": "short", "paste": true}))
        .await;
    assert_eq!(server.desktop.state().typed(), "short");
    assert_eq!(pasted(&server.desktop).len(), 1);
}

#[tokio::test]
async fn paste_with_preserve_clipboard_restores_the_previous_text() {
    let server = server(WRITEBACK).await;
    let mut c = server.ready_client().await;
    server.desktop.copy_foreign("person's copy", false);
    let long = "x".repeat(250);
    let reply = c
        .act(json!({"action": "type", "text": long, "paste": true, "preserve_clipboard": true}))
        .await;
    assert_eq!(reply["type"], "ACK", "{reply}");
    assert_eq!(pasted(&server.desktop), vec![long]);
    assert_eq!(
        server.desktop.state().clipboard.text.as_deref(),
        Some("person's copy")
    );
    // The restored text is the person's, not deskhand's: still concealed
    // in writeback-only mode.
    assert_eq!(reason(&read(&mut c).await), "writeback_overwritten");
}

#[tokio::test]
async fn clipboard_text_never_reaches_the_audit_log() {
    let dir = std::env::temp_dir().join(format!("dh-clip-audit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("audit.jsonl");
    let desktop = MockDesktop::new();
    let backend = desktop.backend();
    let consent = Consent::sandbox().with_clipboard(FOREIGN);
    let audit = AuditLog::open(&path).expect("audit");
    let server = Server::start_with_audit(desktop, backend, consent, audit).await;
    let mut c = server.ready_client().await;
    write(&mut c, "SECRET-WRITE-MARKER").await;
    read(&mut c).await;
    server.desktop.copy_foreign("FOREIGN-READ-MARKER", false);
    read(&mut c).await;
    let paste = "PASTE-MARKER-".repeat(20);
    c.act(json!({"action": "type", "text": paste, "paste": true}))
        .await;
    let text = std::fs::read_to_string(&path).expect("audit file");
    for marker in ["SECRET-WRITE", "FOREIGN-READ", "PASTE-MARKER"] {
        assert!(!text.contains(marker), "{marker} leaked: {text}");
    }
    let ops: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    let count = |op: &str| ops.iter().filter(|r| r["op"] == op).count();
    assert_eq!(count("clipboard.write"), 1);
    assert_eq!(count("clipboard.read"), 2);
    let write_rec = ops
        .iter()
        .find(|r| r["op"] == "clipboard.write")
        .expect("write");
    assert_eq!(write_rec["target"]["text_bytes"], 19);
    let _ = std::fs::remove_dir_all(&dir);
}
