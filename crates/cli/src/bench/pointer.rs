//! mouse_move against `xdotool mousemove`, interleaved: each round is one
//! xdotool run and then a few of deskhand's moves, so that both sides see
//! the same moments of the host (a virtual machine's neighbours can double
//! every figure for a minute; two measurements taken one after the other
//! would compare different minutes). The first move of a round comes after
//! 20 ms of quiet, as an agent's move comes after its thinking: on a
//! virtual machine the idle CPUs must be woken and the caches are cold, so
//! it is reported apart from the moves that follow one another. xdotool's
//! run comes after the same quiet, so that it meets the same cold X server.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use deskhand_engine::Engine;
use serde_json::json;

use super::{Client, Row, stats, time_commands_once};

/// Quiet time before each round's first move (after the resume: the
/// overlay repaints, xdotool's connection is torn down in the X server).
const IDLE: Duration = Duration::from_millis(20);

pub(super) async fn measure(
    c: &mut Client,
    engine: &Arc<Engine>,
    display: &str,
    (w, h): (u32, u32),
    rounds: usize,
    moves_per_round: usize,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    // A round's first move is timed apart from the rest: both rows need one.
    let moves_per_round = moves_per_round.max(2);
    let (w, h) = (w as usize, h as usize);
    let target = |i: usize| [(i * 37) % w, (i * 53) % h];
    // Warm up (the first move after the captures).
    c.request(
        "INPUT_ACTION",
        json!({"action": "mouse_move", "coordinate": target(0)}),
    )?;
    let (mut after_idle, mut back_to_back) = (Vec::new(), Vec::new());
    let mut peer = Some(Vec::new());
    let mut last = target(0);
    let mut i = 1;
    for _ in 0..rounds {
        if let Some(times) = &mut peer {
            tokio::time::sleep(IDLE).await;
            // Half the screen away from deskhand's last target: the
            // person's move, which pauses the takeover.
            let to = [(last[0] + w / 2) % w, (last[1] + h / 2) % h];
            let (x, y) = (to[0].to_string(), to[1].to_string());
            match time_commands_once(display, &[&["xdotool", "mousemove", &x, &y]]) {
                Some(took) => times.push(took),
                None => {
                    peer = None;
                    continue;
                }
            }
            c.resume_after_pause(engine)
                .await
                .context("after xdotool's move")?;
        }
        tokio::time::sleep(IDLE).await;
        for m in 0..moves_per_round {
            last = target(i);
            i += 1;
            let took = c.request(
                "INPUT_ACTION",
                json!({"action": "mouse_move", "coordinate": last}),
            )?;
            let took = took.as_secs_f64() * 1000.0;
            if m == 0 {
                after_idle.push(took);
            } else {
                back_to_back.push(took);
            }
        }
    }
    let peer = peer.map(stats);
    for (what, times) in [
        ("one after another", back_to_back),
        ("after 20 ms idle", after_idle),
    ] {
        rows.push(Row {
            what: format!("mouse_move round trip, {what} ({w}×{h})"),
            ours: stats(times),
            peer_name: "xdotool mousemove (after 20 ms idle)".into(),
            peer,
        });
    }
    Ok(())
}
