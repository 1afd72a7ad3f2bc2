import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, test } from "node:test";

import { calls, launch, open } from "./harness.mjs";

// A real `deskhand doctor --json` of a machine with no display.
const NO_DISPLAY = JSON.parse(readFileSync(new URL("./fixtures/doctor-no-display.json", import.meta.url)));
const READY = {
  ...NO_DISPLAY,
  ready: true,
  ok: true,
  session_type: "x11",
  backends: NO_DISPLAY.backends.map((b) => ({ ...b, status: "available", reason_code: null, action: null })),
  capabilities: [],
  permissions: [],
  next_steps: [],
  probes: [{ label: "display server", status: "ok", message: "X11 :0" }],
};
// A Mac's report (as `macos_findings` gives it) with two permissions missing.
const PANE = "x-apple.systempreferences:com.apple.preference.security?Privacy_";
const MAC = {
  ...READY,
  platform: "macos",
  session_type: "none",
  backends: [{ id: "macos", status: "available", required: true, reason_code: null, action: null }],
  permissions: [
    { name: "screen_recording", status: "missing", reason_code: null, action: `Allow deskhand in System Settings → Privacy & Security (open ${PANE}ScreenCapture), for screenshots and window titles; then restart deskhand` },
    { name: "accessibility", status: "granted", reason_code: null, action: null },
    { name: "input_monitoring", status: "missing", reason_code: null, action: `Allow deskhand in System Settings → Privacy & Security (open ${PANE}ListenEvent), for seeing the person's input to hand control back; then restart deskhand` },
    { name: "automation", status: "unknown", reason_code: null, action: null },
  ],
  probes: [],
};
const ASKED = {
  name: "screen_recording",
  granted: false,
  pane_opened: true,
  summary: "macOS asked you for Screen Recording; System Settings is open at Privacy & Security → Screen Recording: turn deskhand on there, then Retry the backend.",
};

// GNOME 43's report as the Doctor window gets it: ready, its portal has no
// clipboard (a to-do about the clipboard), or the person has it off.
const NOT_OFFERED = { status: "unavailable", reason_code: "compositor_unsupported", action: "This Wayland desktop offers deskhand no way to do this; log in to an X11 session for it." };
const GNOME = {
  ...READY,
  session_type: "wayland",
  capabilities: [
    { name: "clipboard_read", consent: "separate", ...NOT_OFFERED },
    { name: "clipboard_write", consent: "session", ...NOT_OFFERED },
  ],
  next_steps: [{ reason_code: "compositor_unsupported", backend: null, permission: null, capabilities: ["clipboard_read", "clipboard_write"], required: false, action: NOT_OFFERED.action }],
  probes: [{ label: "layer shell", status: "ok", message: "not needed: the GNOME Shell extension draws the frame" }],
};
const OFF = { status: "unavailable", reason_code: "clipboard_off", action: "Agents may not use the clipboard: turn it on in Settings if they should copy and paste." };
const CLIPBOARD_OFF = {
  ...READY,
  capabilities: [
    { name: "clipboard_read", consent: "separate", ...OFF },
    { name: "clipboard_write", consent: "session", ...OFF },
  ],
};

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser.close(); });

test("a failing report lists what to do, with the command to copy", async () => {
  const tab = await open(browser, "doctor.html", { doctor_run: NO_DISPLAY });
  await tab.waitForSelector("tr.check");
  assert.match(await tab.textContent("#summary"), /^Not ready/);
  const x11 = tab.locator("tr.check", { hasText: "The X11 desktop" });
  assert.equal(await x11.getAttribute("class"), "check fail", "a required backend that is missing fails");
  const atspi = tab.locator("tr.check", { hasText: "Reading apps' controls" });
  assert.equal(await atspi.getAttribute("class"), "check warn", "an optional one only warns");
  assert.equal(await x11.locator("button.copy").count(), 1, "the action's command can be copied");
  const steps = await tab.locator("#steps li").allTextContents();
  assert.equal(steps.length, NO_DISPLAY.next_steps.length);
  assert.match(steps[0], /deskhand serve --virtual/);
  assert.deepEqual(tab.errors, []);
});

test("Run again asks the app for a new report and shows it", async () => {
  const tab = await open(browser, "doctor.html", { doctor_run: [NO_DISPLAY, READY] });
  await tab.waitForSelector("tr.check.fail");
  await tab.click("#run");
  await tab.waitForFunction(() => document.getElementById("summary").textContent.startsWith("Ready"));
  assert.equal((await calls(tab, "doctor_run")).length, 2);
  assert.equal(await tab.locator("tr.check.fail").count(), 0);
  assert.equal(await tab.textContent("#steps"), "Nothing to do.");
});

test("Open Settings asks the app to open the Settings window", async () => {
  const tab = await open(browser, "doctor.html", { doctor_run: NO_DISPLAY, open_panel: null });
  await tab.waitForSelector("tr.check");
  await tab.click("#settings");
  assert.deepEqual(await calls(tab, "open_panel"), [["open_panel", { panel: "settings" }]]);
});

test("Retry the backend asks the app to restart and says what happens", async () => {
  const tab = await open(browser, "doctor.html", { doctor_run: NO_DISPLAY, deskhand_restart: null });
  await tab.waitForSelector("tr.check");
  await tab.click("#restart");
  assert.deepEqual(await calls(tab, "deskhand_restart"), [["deskhand_restart", null]]);
  assert.match(await tab.textContent("#message"), /Restarting deskhand/);
});

test("a doctor that cannot run says so", async () => {
  const tab = await open(browser, "doctor.html", { doctor_run: { reject: "the app's background task failed: boom" } });
  await tab.waitForFunction(() => document.getElementById("message").className === "error");
  assert.match(await tab.textContent("#message"), /boom/);
});

test("a missing macOS permission can be asked for, and the answer shows", async () => {
  const tab = await open(browser, "doctor.html", { doctor_run: MAC, permission_ask: ASKED });
  await tab.waitForSelector("tr.check");
  const screen = tab.locator("tr.check", { hasText: "Screen Recording permission" });
  assert.equal(await screen.locator("button.ask").textContent(), "Ask macOS");
  assert.equal(await tab.locator("button.ask").count(), 2, "only the missing ones, not the granted or unknown");
  assert.equal(await tab.locator("tr.check", { hasText: "Accessibility permission" }).locator("button.ask").count(), 0);
  assert.equal(await tab.locator("tr.check", { hasText: "Automation permission" }).locator("button.ask").count(), 0);
  assert.equal(await tab.locator("tr.check", { hasText: "The macOS desktop" }).count(), 1);
  await screen.locator("button.ask").click();
  await tab.waitForFunction(() => document.getElementById("message").textContent.startsWith("macOS asked"));
  assert.deepEqual(await calls(tab, "permission_ask"), [["permission_ask", { name: "screen_recording" }]]);
  assert.equal(await tab.textContent("#message"), ASKED.summary);
  assert.deepEqual(tab.errors, []);
});

test("a refused ask says why", async () => {
  const why = "Only a click of your own mouse on Ask macOS can make macOS ask for a permission. Nothing was asked.";
  const tab = await open(browser, "doctor.html", { doctor_run: MAC, permission_ask: { reject: why } });
  const monitoring = tab.locator("tr.check", { hasText: "Input Monitoring permission" });
  await monitoring.locator("button.ask").click();
  await tab.waitForFunction(() => document.getElementById("message").className === "error");
  assert.deepEqual(await calls(tab, "permission_ask"), [["permission_ask", { name: "input_monitoring" }]]);
  assert.equal(await tab.textContent("#message"), why);
});

test("Linux findings have no Ask macOS button, even for a missing permission", async () => {
  const tab = await open(browser, "doctor.html", { doctor_run: NO_DISPLAY });
  await tab.waitForSelector("tr.check");
  assert.equal(await tab.locator("tr.check", { hasText: "Accessibility permission" }).getAttribute("class"), "check warn");
  assert.equal(await tab.locator("button.ask").count(), 0);
});

test("every to-do names what it is about", async () => {
  const tab = await open(browser, "doctor.html", { doctor_run: GNOME });
  await tab.waitForSelector("tr.check");
  assert.match(await tab.textContent("#summary"), /^Ready/);
  const steps = await tab.locator("#steps li").allTextContents();
  assert.deepEqual(steps, [`Read the clipboard, Write the clipboard: ${NOT_OFFERED.action}`]);
  assert.equal(await tab.locator("tr.check", { hasText: "layer shell" }).getAttribute("class"), "check ok");
});

test("the clipboard off in the person's settings is said once, and is no problem", async () => {
  const tab = await open(browser, "doctor.html", { doctor_run: CLIPBOARD_OFF });
  await tab.waitForSelector("tr.check");
  for (const what of ["Read the clipboard", "Write the clipboard"]) {
    const row = tab.locator("tr.check", { hasText: what });
    assert.equal(await row.getAttribute("class"), "check off", what);
    assert.match(await row.textContent(), /off in your settings/);
  }
  assert.equal(await tab.textContent("#steps"), "Nothing to do.");
  assert.deepEqual(tab.errors, []);
});
