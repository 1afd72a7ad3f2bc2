//! Takeover latencies: the indicator shown and hidden (TAKEOVER_REQUEST
//! round trips, which answer once the overlay is on or off the screen), and
//! the person's input → the `takeover.paused` event.

use std::sync::Arc;
use std::time::{Duration, Instant};

use deskhand_engine::{Engine, TakeoverEvent};
use deskhand_platform::bench::FakePerson;
use serde_json::json;

use super::{Client, LIMIT, Row, stats};

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

pub(super) async fn measure(
    c: &mut Client,
    engine: &Arc<Engine>,
    display: &str,
    size: &str,
    n: usize,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    // The xdotool runs before were the person moving the pointer: continue.
    engine.resume_takeover(None).await;
    let (mut shows, mut hides) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        hides.push(ms(c.request("TAKEOVER_REQUEST", json!({"on": false}))?));
        shows.push(ms(c.request("TAKEOVER_REQUEST", json!({"on": true}))?));
    }
    rows.push(Row {
        what: format!("takeover indicator shown ({size})"),
        ours: stats(shows),
        peer_name: "goal ≤ 80".into(),
        peer: None,
    });
    rows.push(Row {
        what: format!("takeover indicator hidden ({size})"),
        ours: stats(hides),
        peer_name: "goal ≤ 10".into(),
        peer: None,
    });

    let person = FakePerson::connect(display)?;
    let mut events = engine.takeover_events();
    let mut paused = Vec::with_capacity(n);
    for _ in 0..n {
        // Past deskhand's own injection window: this key is the person's.
        tokio::time::sleep(Duration::from_millis(150)).await;
        let started = Instant::now();
        person.tap_key()?;
        let wait = async {
            loop {
                if let TakeoverEvent::Paused { .. } = events.recv().await? {
                    return anyhow::Ok(started.elapsed());
                }
            }
        };
        paused.push(ms(tokio::time::timeout(LIMIT, wait).await.map_err(
            |_| anyhow::anyhow!("no takeover.paused after the person's key"),
        )??));
        c.resume_after_pause(engine).await?;
    }
    rows.push(Row {
        what: format!("person's key → takeover.paused ({size})"),
        ours: stats(paused),
        peer_name: "goal p95 ≤ 5".into(),
        peer: None,
    });
    Ok(())
}
