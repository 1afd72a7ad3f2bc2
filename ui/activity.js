// The Activity window: the live sessions, what the person allowed each,
// with Revoke, and each session's timeline from the audit log (time, what,
// outcome, how long, and the thumbnail of the image the agent got with
// it), newest session first, in words rather than the log's names. It
// refreshes every 2 s while open.
"use strict";

const REFRESH_MS = 2000;

function mode(s) {
  return s.paused ? "paused (waits for Continue)" : s.takeover ? "driving (red frame)" : "connected";
}

function who(s) {
  return s.client || "an unnamed client";
}

function end(s) {
  panel.invoke("session_end", { session: s.id }).then(
    () => { panel.say(`Revoked: ${who(s)} gets no input again.`); refresh(); },
    (why) => panel.say(String(why), true));
}

// What the log calls an act, in words: "input.left_click" → "left click".
function words(op) {
  const known = {
    "session.open": "connected", "session.close": "disconnected",
    "takeover.request": "asked to take over", "takeover.ended": "takeover ended",
    "takeover.paused": "you took over", "takeover.resumed": "you let it continue",
  };
  return known[op] || op.replace(/^(input|wire|mcp|http)\./, "").replace(/[._]/g, " ");
}

// An outcome in words: "ok", or the error code without its shouting.
function outcome(o) {
  return o === "ok" ? "ok" : o.toLowerCase().replace(/_/g, " ");
}

function sessionRows(sessions) {
  if (!sessions.length) {
    return [panel.el("tr", {}, panel.el("td", { colspan: "6" }, "No agent is connected."))];
  }
  return sessions.map((s) => panel.el("tr", { class: "session", "data-session": s.id },
    panel.el("td", {}, who(s)),
    panel.el("td", {}, s.protocol),
    panel.el("td", {}, mode(s)),
    panel.el("td", { class: "allowed" }, s.allowed || ""),
    panel.el("td", {}, panel.time(s.since)),
    panel.el("td", {}, panel.el("button", { type: "button", class: "end", onclick: () => end(s) }, "Revoke"))));
}

// Thumbnail images by id, fetched once each.
const images = new Map();

function image(t) {
  const img = panel.el("img", {
    class: "thumb", "data-id": String(t.id), width: String(t.width), height: String(t.height),
    alt: "what the agent was shown",
  });
  if (images.has(t.id)) {
    img.src = images.get(t.id);
  } else {
    panel.invoke("activity_thumbnail", { id: t.id }).then((url) => {
      images.set(t.id, url);
      img.src = url;
    }, () => { img.alt = "no longer kept"; });
  }
  return img;
}

// Each thumbnail goes with the act of its session that was under way or
// last done when the agent got it: the last record that started before.
function thumbnailsByRecord(acts, thumbnails) {
  const start = (r) => r.ts - Number(r.duration_ms || 0) / 1000;
  const by = new Map();
  for (const t of thumbnails) {
    let at = null;
    for (const r of acts) {
      if (start(r) <= t.ts) {
        at = r;
      }
    }
    if (at) {
      by.set(at, [...(by.get(at) || []), t]);
    }
  }
  return by;
}

// The records grouped by session, newest session first, each oldest act
// first.
function timelines(records, thumbnails, sessions) {
  const names = new Map(sessions.map((s) => [s.id, who(s)]));
  const by = new Map();
  for (const r of records) {
    if (!by.has(r.session)) {
      by.set(r.session, []);
    }
    by.get(r.session).push(r);
  }
  return [...by.entries()].reverse().map(([session, acts]) => {
    const shown = thumbnailsByRecord(acts, thumbnails.filter((t) => t.session === session));
    return panel.el("section", { class: "timeline", "data-session": session },
      panel.el("h2", {}, `${names.get(session) || "An agent now gone"} over ${acts[0].protocol}, from ${panel.time(acts[0].ts)}`),
      panel.el("table", {}, panel.el("tbody", {}, ...acts.map((r) => panel.el("tr", { class: "act" },
        panel.el("td", {}, panel.time(r.ts)),
        panel.el("td", { title: r.op }, words(r.op)),
        panel.el("td", { class: r.outcome === "ok" ? "ok" : "bad", title: r.outcome }, outcome(r.outcome)),
        panel.el("td", {}, `${Number(r.duration_ms || 0).toFixed(1)} ms`),
        panel.el("td", { class: "shown" }, ...(shown.get(r) || []).map(image)))))));
  });
}

function render(view) {
  document.getElementById("sessions").replaceChildren(...sessionRows(view.sessions));
  const thumbnails = view.thumbnails || [];
  // Images the app no longer keeps are let go here too.
  const kept = new Set(thumbnails.map((t) => t.id));
  for (const id of images.keys()) {
    if (!kept.has(id)) {
      images.delete(id);
    }
  }
  const shown = timelines(view.records, thumbnails, view.sessions);
  document.getElementById("timelines").replaceChildren(...(shown.length ? shown
    : [panel.el("p", {}, view.audit_note || "Nothing recorded yet.")]));
}

function refresh() {
  panel.invoke("activity").then(render, (why) => panel.say(String(why), true));
}

refresh();
setInterval(refresh, REFRESH_MS);
