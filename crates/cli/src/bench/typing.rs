//! Typing 200 characters into the scene's terminal: a mixed-case ASCII
//! text (every character on a key) and one with 20 characters on no key
//! (remapped in batches), against `xdotool type --delay 0` and the
//! Anthropic demo's chunked typing (`xdotool type --delay 12` per chunk of
//! 50 characters) in the same run. Between samples the line is erased
//! (Ctrl+U), so the terminal's work stays the same.

use std::sync::Arc;
use std::time::Duration;

use deskhand_engine::Engine;
use serde_json::json;

use super::{Client, Row, stats, time_commands_once};

/// A reference tool's times, `None` once it failed.
type Samples = Option<Vec<f64>>;

/// 200 characters: letters of both cases, digits and symbols.
pub(super) fn ascii_text() -> String {
    let pool = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!@#$%^&*()-_=+[]{};:,.<>/?|~";
    pool.chars().cycle().step_by(7).take(200).collect()
}

/// `text` cut as the Anthropic demo types it: 50 characters per
/// `xdotool type` run.
pub(super) fn demo_chunks(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(50).map(|c| c.iter().collect()).collect()
}

/// 180 of those and 20 characters no key of a `us` keymap produces.
fn mixed_text() -> String {
    let off: Vec<char> = "àáâãäåæçèéêëìíîïðñòó".chars().collect();
    ascii_text()
        .chars()
        .enumerate()
        .map(|(i, c)| if i % 10 == 5 { off[i / 10] } else { c })
        .collect()
}

pub(super) async fn measure(
    c: &mut Client,
    engine: &Arc<Engine>,
    display: &str,
    samples: usize,
    peer_samples: usize,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    for (what, text) in [
        ("200 characters, all on keys", ascii_text()),
        ("200 characters, 20 on no key", mixed_text()),
    ] {
        let mut ours = Vec::with_capacity(samples);
        for _ in 0..=samples {
            // Past the moment remapped keycodes are given back: each
            // sample meets the person's keymap.
            tokio::time::sleep(Duration::from_millis(600)).await;
            let took = c.request("INPUT_ACTION", json!({"action": "type", "text": text}))?;
            ours.push(took.as_secs_f64() * 1000.0);
            c.request("INPUT_ACTION", json!({"action": "key", "key": "ctrl+u"}))?;
        }
        ours.remove(0); // warm-up
        let chunks = demo_chunks(&text);
        let mut plain = Some(Vec::new());
        let mut chunked = Some(Vec::new());
        for _ in 0..peer_samples {
            let runs: [(&mut Samples, Vec<Vec<&str>>); 2] = [
                (
                    &mut plain,
                    vec![vec!["xdotool", "type", "--delay", "0", "--", text.as_str()]],
                ),
                (
                    &mut chunked,
                    chunks
                        .iter()
                        .map(|ch| vec!["xdotool", "type", "--delay", "12", "--", ch.as_str()])
                        .collect(),
                ),
            ];
            for (times, argv) in runs {
                let Some(list) = times else { continue };
                let argv: Vec<&[&str]> = argv.iter().map(Vec::as_slice).collect();
                match time_commands_once(display, &argv) {
                    Some(ms) => list.push(ms),
                    None => *times = None,
                }
                // xdotool's keys are the person's to deskhand: the takeover
                // pauses; resume it as the host would, then erase the line.
                c.resume_after_pause(engine).await?;
                c.request("INPUT_ACTION", json!({"action": "key", "key": "ctrl+u"}))?;
            }
        }
        rows.push(Row {
            what: format!("type {what}"),
            ours: stats(ours.clone()),
            peer_name: "xdotool type --delay 0".into(),
            peer: plain.map(stats),
        });
        rows.push(Row {
            what: format!("type {what}"),
            ours: stats(ours),
            peer_name: "xdotool type --delay 12, 50-character chunks (Anthropic demo)".into(),
            peer: chunked.map(stats),
        });
    }
    Ok(())
}
