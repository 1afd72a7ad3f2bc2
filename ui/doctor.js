// The Doctor window: the doctor's report (as `deskhand doctor --json`
// gives it) as a checklist, each failing item with what to do; a command
// to run can be copied, "Run again" asks the app for a new report, and
// "Retry the backend" restarts deskhand so that it opens the desktop anew.
"use strict";

const MARK = { ok: "✔", warn: "!", fail: "✘" };

// One row per backend, capability, permission and probe: [state, what,
// found, action].
function rows(report) {
  const state = (s, required = true) => (["available", "granted", "ok", "not_applicable"].includes(s) ? "ok"
    : ["unavailable", "missing", "fail"].includes(s) && required ? "fail" : "warn");
  return [
    ...report.backends.map((b) => [state(b.status, b.required), `Backend ${b.id}`, b.reason_code || b.status, b.action]),
    ...report.capabilities.map((c) => [state(c.status), `Capability ${c.name}`, c.reason_code || c.status, c.action]),
    ...report.permissions.map((p) => [state(p.status), `Permission ${p.name}`, p.reason_code || p.status, p.action]),
    ...report.probes.map((p) => [state(p.status), p.label, p.message, null]),
  ];
}

// An action with a command in backticks gets a Copy button for it.
function actionCell(action) {
  if (!action) {
    return panel.el("td");
  }
  const command = /`([^`]+)`/.exec(action);
  return panel.el("td", { class: "todo" }, action, command
    ? panel.el("button", { type: "button", class: "copy", onclick: () => copy(command[1]) }, "Copy command")
    : null);
}

function copy(command) {
  navigator.clipboard.writeText(command).then(
    () => panel.say(`Copied: ${command}`),
    () => panel.say(`Run: ${command}`));
}

function render(report) {
  document.getElementById("summary").textContent = report.ready
    ? `Ready: deskhand ${report.driver_version} on ${report.session_type}.`
    : `Not ready: deskhand ${report.driver_version} on ${report.session_type} needs what is listed below.`;
  document.getElementById("summary").className = report.ready ? "ok" : "bad";
  document.getElementById("steps").replaceChildren(...(report.next_steps.length
    ? report.next_steps.map((s) => panel.el("li", { class: s.required ? "bad" : "warn" }, s.action))
    : [panel.el("li", { class: "ok" }, "Nothing to do.")]));
  document.getElementById("checks").replaceChildren(...rows(report).map(([st, what, found, action]) =>
    panel.el("tr", { class: `check ${st}` },
      panel.el("td", { class: st }, MARK[st]),
      panel.el("td", {}, what),
      panel.el("td", {}, String(found)),
      actionCell(action))));
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
