// The Doctor window: the doctor's report (as `deskhand doctor --json`
// gives it) as a checklist, each failing item with what to do; a command
// to run can be copied, a missing macOS permission has "Ask macOS" (its
// prompt and its System Settings pane, asked by the app on the person's
// click), "Run again" asks the app for a new report, and "Retry the
// backend" restarts deskhand so that it opens the desktop anew.
"use strict";

const MARK = { ok: "✔", off: "–", warn: "!", fail: "✘" };
// Reasons that are the person's own choice: shown, never flagged.
const CHOICES = new Set(["clipboard_off"]);

// What the report's names mean, in the person's words.
const NAMES = {
  x11: "The X11 desktop",
  macos: "The macOS desktop",
  atspi: "Reading apps' controls (accessibility)",
  "wayland-portal": "Wayland desktops",
  read_tree: "Read the controls in a window",
  act_semantic: "Press buttons and fill fields without the mouse",
  capture_window: "Screenshots",
  input_takeover: "Mouse and keyboard during a takeover",
  takeover_indicator: "The red frame while an agent drives",
  takeover_handback: "Taking back control by moving the mouse",
  list_notifications: "List notifications",
  dismiss_notification: "Dismiss notifications",
  invoke_notification_action: "Act on notifications",
  clipboard_read: "Read the clipboard",
  clipboard_write: "Write the clipboard",
  accessibility: "Accessibility permission",
  screen_capture: "Screen recording permission",
  screen_recording: "Screen Recording permission",
  input_monitoring: "Input Monitoring permission",
  automation: "Automation permission",
};
const REASONS = {
  display_unreachable: "no desktop to connect to",
  wayland_session_unsupported: "a Wayland session",
  xtest_missing: "the X server's XTEST extension is off",
  xinput2_missing: "the X server lacks XInput 2.1",
  composite_missing: "the X server's Composite extension is off",
  indicator_not_found: "the red-frame program (deskhand-overlay) is missing",
  atspi_bus_not_advertised: "accessibility is off",
  atspi_bus_unreachable: "the accessibility service does not answer",
  no_platform_api: "this desktop offers no way to do it",
  not_built: "not in this version",
  wayland_portal_not_built: "not in this version",
  portal_unavailable: "no desktop portal",
  portal_pending: "waiting for your answer",
  portal_screencast_denied: "screen sharing denied",
  portal_remote_desktop_denied: "remote interaction denied",
  portal_screenshot_denied: "screenshots denied",
  compositor_unsupported: "not offered by this desktop",
  shell_extension_missing: "the GNOME Shell extension is off",
  clipboard_off: "off in your settings",
};
const STATUS = {
  available: "works",
  unavailable: "does not work",
  unsupported: "not possible here",
  planned: "not in this version",
  granted: "granted",
  missing: "missing",
  not_applicable: "not needed here",
  unknown: "cannot be told",
};

// One row per backend, capability, permission and probe: [state, what,
// found, action, ask]. A row fails only where the headline's `ready`
// depends on it (`required`), as the report's next steps say; `ask` names
// a missing macOS permission macOS can be asked for.
function rows(report) {
  const needed = new Set(report.next_steps.filter((s) => s.required)
    .flatMap((s) => s.capabilities || []));
  const state = (s, required, reason) => (["available", "granted", "ok", "not_applicable"].includes(s) ? "ok"
    : CHOICES.has(reason) ? "off"
    : ["unavailable", "missing", "fail"].includes(s) && required ? "fail" : "warn");
  const found = (e) => (e.reason_code ? REASONS[e.reason_code] || e.reason_code : STATUS[e.status] || e.status);
  const ask = (p) => (report.platform === "macos" && p.status === "missing" ? p.name : null);
  return [
    ...report.backends.map((b) => [state(b.status, b.required), NAMES[b.id] || b.id, found(b), b.action]),
    ...report.capabilities.map((c) => [state(c.status, needed.has(c.name), c.reason_code), NAMES[c.name] || c.name, found(c), c.action]),
    ...report.permissions.map((p) => [state(p.status, false), NAMES[p.name] || p.name, found(p), p.action, ask(p)]),
    ...report.probes.map((p) => [state(p.status, true), p.label, p.message, null]),
  ];
}

// An action with a command in backticks gets a Copy button for it; a
// permission macOS can be asked for gets an Ask macOS button.
function actionCell(action, name) {
  if (!action && !name) {
    return panel.el("td");
  }
  const command = action && /`([^`]+)`/.exec(action);
  return panel.el("td", { class: "todo" }, action || null, command
    ? panel.el("button", { type: "button", class: "copy", onclick: () => copy(command[1]) }, "Copy command")
    : null, name
    ? panel.el("button", { type: "button", class: "ask", onclick: () => askMacos(name) }, "Ask macOS")
    : null);
}

// The app asks macOS (only on a real click of the person's mouse) and
// says what happened.
function askMacos(name) {
  panel.say(`Asking macOS for the ${NAMES[name] || name}…`);
  panel.invoke("permission_ask", { name }).then(
    (asked) => panel.say(asked.summary),
    (why) => panel.say(String(why), true));
}

function copy(command) {
  navigator.clipboard.writeText(command).then(
    () => panel.say(`Copied: ${command}`),
    () => panel.say(`Run: ${command}`));
}

// What a to-do is about, in the person's words: its backend, else its
// permission, else the capabilities it explains.
function subject(step) {
  const names = step.backend ? [step.backend] : step.permission ? [step.permission] : step.capabilities || [];
  return names.map((n) => NAMES[n] || n).join(", ");
}

function render(report) {
  document.getElementById("summary").textContent = report.ready
    ? `Ready: deskhand ${report.driver_version} on ${report.session_type}.`
    : `Not ready: deskhand ${report.driver_version} on ${report.session_type} needs what is listed below.`;
  document.getElementById("summary").className = report.ready ? "ok" : "bad";
  document.getElementById("steps").replaceChildren(...(report.next_steps.length
    ? report.next_steps.map((s) => panel.el("li", { class: s.required ? "bad" : "warn" },
      panel.el("strong", {}, subject(s) || "deskhand"), `: ${s.action}`))
    : [panel.el("li", { class: "ok" }, "Nothing to do.")]));
  document.getElementById("checks").replaceChildren(...rows(report).map(([st, what, found, action, ask]) =>
    panel.el("tr", { class: `check ${st}` },
      panel.el("td", { class: st }, MARK[st]),
      panel.el("td", {}, what),
      panel.el("td", {}, String(found)),
      actionCell(action, ask))));
}

function run() {
  panel.say("Checking…");
  panel.invoke("doctor_run").then((report) => {
    render(report);
    panel.say(`Checked at ${new Date().toLocaleTimeString()}.`);
  }, (why) => panel.say(String(why), true));
}

function restart() {
  panel.say("Restarting deskhand: this window closes and opens again…");
  panel.invoke("deskhand_restart").catch((why) => panel.say(String(why), true));
}

document.getElementById("run").addEventListener("click", run);
document.getElementById("restart").addEventListener("click", restart);
document.getElementById("settings").addEventListener("click", () => panel.invoke("open_panel", { panel: "settings" }));
run();
