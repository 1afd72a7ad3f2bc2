import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { calls, launch, open } from "./harness.mjs";

const NOW = 1_795_000_000;
const VIEW = {
  sessions: [
    { id: "wire-1", client: "“claude-code”", protocol: "wire", since: NOW, takeover: true, paused: false,
      allowed: "see the screen, use mouse and keyboard (red frame); for 60 more min" },
    { id: "http-2", client: null, protocol: "http", since: NOW + 5, takeover: false, paused: true },
  ],
  records: [
    { ts: NOW, session: "wire-1", protocol: "wire", op: "session.open", outcome: "ok", duration_ms: 0 },
    { ts: NOW + 1, session: "wire-1", protocol: "wire", op: "input.left_click", outcome: "ok", duration_ms: 3.2 },
    { ts: NOW + 2, session: "http-2", protocol: "http", op: "screenshot", outcome: "ok", duration_ms: 12 },
    { ts: NOW + 3, session: "wire-1", protocol: "wire", op: "input.type_text", outcome: "USER_TOOK_OVER", duration_ms: 1 },
  ],
  audit_note: null,
};

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser.close(); });

test("live sessions show their client, protocol and state", async () => {
  const tab = await open(browser, "activity.html", { activity: VIEW });
  await tab.waitForSelector("tr.session");
  const rows = await tab.locator("tr.session").allTextContents();
  assert.equal(rows.length, 2);
  assert.match(rows[0], /“claude-code”wiredriving.*see the screen, use mouse and keyboard \(red frame\); for 60 more min/);
  assert.match(rows[1], /an unnamed clienthttppaused/);
  assert.deepEqual(tab.errors, []);
});

test("each session's timeline lists its acts in order, newest session first", async () => {
  const tab = await open(browser, "activity.html", { activity: VIEW });
  await tab.waitForSelector("section.timeline");
  const sections = await tab.locator("section.timeline").evaluateAll((s) => s.map((e) => e.dataset.session));
  assert.deepEqual(sections, ["http-2", "wire-1"], "the session seen last comes first");
  const acts = await tab.locator('section[data-session="wire-1"] tr.act').allTextContents();
  assert.equal(acts.length, 3);
  assert.match(acts[1], /left clickok3\.2 ms/, "the act in words, not the log's name");
  const refused = tab.locator('section[data-session="wire-1"] tr.act td.bad');
  assert.equal(await refused.textContent(), "user took over");
  const heading = await tab.textContent('section[data-session="wire-1"] h2');
  assert.match(heading, /^“claude-code” over wire, from /, "the client, not the session id");
});

test("Revoke ends that session and the list is read again", async () => {
  const ended = { ...VIEW, sessions: VIEW.sessions.slice(1) };
  const tab = await open(browser, "activity.html", { activity: [VIEW, ended], session_end: null });
  await tab.waitForSelector("tr.session");
  await tab.click('tr.session[data-session="wire-1"] button.end');
  await tab.waitForFunction(() => document.querySelectorAll("tr.session").length === 1);
  assert.deepEqual(await calls(tab, "session_end"), [["session_end", { session: "wire-1" }]]);
  assert.match(await tab.textContent("#message"), /Revoked: “claude-code” gets no input again/);
});

test("with nothing recorded the window says why", async () => {
  const tab = await open(browser, "activity.html", {
    activity: { sessions: [], records: [], audit_note: "reading /x/audit.jsonl: permission denied" },
  });
  await tab.waitForFunction(() => document.getElementById("timelines").textContent.includes("permission denied"));
  assert.equal(await tab.textContent("#sessions"), "No agent is connected.");
});

// A 1×1 PNG, standing in for a thumbnail's JPEG.
const DOT = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

test("a thumbnail goes beside the act it came with, fetched once", async () => {
  const view = {
    ...VIEW,
    records: [
      ...VIEW.records,
      { ts: NOW + 4.02, session: "wire-1", protocol: "wire", op: "screenshot", outcome: "ok", duration_ms: 20 },
    ],
    thumbnails: [
      { id: 7, session: "wire-1", ts: NOW + 4.021, width: 240, height: 135 },
      { id: 8, session: "http-2", ts: NOW + 2.001, width: 240, height: 150 },
    ],
  };
  const tab = await open(browser, "activity.html", { activity: view, activity_thumbnail: DOT });
  await tab.waitForSelector('img.thumb[data-id="7"][src^="data:"]');
  const rows = tab.locator('section[data-session="wire-1"] tr.act');
  assert.equal(await rows.count(), 4);
  assert.equal(await rows.nth(3).locator("img.thumb").count(), 1, "on the screenshot's row");
  assert.equal(await rows.nth(1).locator("img.thumb").count(), 0, "not on the click's");
  assert.equal(await tab.locator('section[data-session="http-2"] img.thumb').getAttribute("data-id"), "8");
  assert.equal(await tab.locator('img.thumb[data-id="7"]').evaluate((i) => i.naturalWidth), 1);
  await tab.evaluate(() => refresh());
  await tab.waitForSelector('img.thumb[data-id="7"][src^="data:"]');
  assert.equal((await calls(tab, "activity_thumbnail")).length, 2, "each image is fetched once");
  assert.deepEqual(tab.errors, []);
});
