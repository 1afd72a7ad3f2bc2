// The Settings window: the settings file as a form. The app checks every
// value with the file's own rules and keeps the last good settings when
// one is wrong; this page only shows the form and what the app answered.
"use strict";

const $ = (id) => document.getElementById(id);
let shown = null;

function render(view) {
  shown = view;
  const f = view.form;
  $("clipboard_enabled").checked = f.clipboard_enabled;
  $("clipboard_read_foreign").checked = f.clipboard_read_foreign;
  $("clipboard_approve_foreign_reads").checked = f.clipboard_approve_foreign_reads;
  $("approval").value = f.approval;
  for (const box of document.querySelectorAll("input.refuse")) {
    box.checked = f.refuse_apps.includes(box.dataset.class);
  }
  $("consent_timeout_s").value = String(f.consent_timeout_s);
  $("start_at_login").checked = view.start_at_login;
  $("kill_switch").value = f.kill_switch;
  $("listen_port").value = String(f.listen_port);
  $("audit_log_path").value = f.audit_log;
  $("displays_all").checked = f.displays === null;
  $("displays_some").checked = f.displays !== null;
  $("display_list").replaceChildren(...view.displays.map((d) => panel.el("label", {},
    panel.el("input", {
      type: "checkbox",
      id: `display-${d.name}`,
      "data-name": d.name,
      checked: f.displays === null || f.displays.includes(d.name),
      onchange: () => { $("displays_some").checked = true; },
    }),
    ` ${d.name}: ${d.width}×${d.height}${d.primary ? " (primary)" : ""}`)));
  const fixed = view.fixed;
  for (const id of ["clipboard_enabled", "clipboard_read_foreign", "clipboard_approve_foreign_reads"]) {
    $(id).disabled = fixed.includes("clipboard");
  }
  $("approval").disabled = fixed.includes("approval");
  $("kill_switch").disabled = fixed.includes("kill_switch");
  $("listen_port").disabled = fixed.includes("listen_port");
  $("audit_log_path").disabled = fixed.includes("audit_log");
  $("audit_log_choose").disabled = fixed.includes("audit_log");
  $("fixed").textContent = fixed.length
    ? `Set on the command line, so not changed here: ${fixed.join(", ")}.`
    : "";
  $("listen").textContent = view.listen;
  $("audit_log").textContent = view.audit_log ?? "not written";
  $("path").textContent = view.path;
  $("token_kept_in").textContent = view.token_kept_in;
  panel.say(view.note);
}

// The form as the app takes it.
function form() {
  const chosen = [...document.querySelectorAll("#display_list input:checked")]
    .map((box) => box.dataset.name);
  return {
    approval: $("approval").value,
    refuse_apps: [...document.querySelectorAll("input.refuse:checked")].map((box) => box.dataset.class),
    displays: $("displays_all").checked ? null : chosen,
    consent_timeout_s: Number($("consent_timeout_s").value),
    clipboard_enabled: $("clipboard_enabled").checked,
    clipboard_read_foreign: $("clipboard_read_foreign").checked,
    clipboard_approve_foreign_reads: $("clipboard_approve_foreign_reads").checked,
    kill_switch: $("kill_switch").value.trim(),
    listen_port: Number($("listen_port").value),
    audit_log: $("audit_log_path").value.trim(),
  };
}

// Whole numbers only: the app refuses anything else, but a clear word
// here saves a round trip.
const WHOLE = [
  ["consent_timeout_s", Number.MAX_SAFE_INTEGER, "The consent wait must be a whole number of seconds."],
  ["listen_port", 65535, "The port must be a whole number from 1 to 65535."],
];
const isWhole = (text, max) => /^\d+$/.test(text.trim()) && Number(text) <= max;

function save() {
  const values = form();
  for (const [id, max, why] of WHOLE) {
    if (!isWhole($(id).value, max)) {
      panel.say(`${why} Nothing changed.`, true);
      return;
    }
  }
  panel.say("Saving…");
  panel.invoke("settings_save", { save: { form: values, start_at_login: $("start_at_login").checked } })
    .then(render, (why) => panel.say(String(why), true));
}

function load() {
  panel.invoke("settings_read").then(render, (why) => panel.say(String(why), true));
}

// The token goes to the clipboard, never onto the page.
function copyToken() {
  panel.invoke("token_copy")
    .then((token) => navigator.clipboard.writeText(token))
    .then(() => panel.say("The token is on the clipboard."),
      (why) => panel.say(`The token could not be copied: ${why}`, true));
}

// The native folder picker; the chosen folder goes into the field, and
// Save applies it.
function chooseAuditFolder() {
  panel.invoke("audit_folder_pick").then((path) => {
    if (path) {
      $("audit_log_path").value = path;
      panel.say("Save to write the audit log there.");
    }
  }, (why) => panel.say(String(why), true));
}

function rotateToken() {
  $("rotate_confirm").hidden = true;
  panel.say("Replacing the token…");
  panel.invoke("token_rotate").then(render, (why) => panel.say(String(why), true));
}

$("save").addEventListener("click", save);
$("token_copy").addEventListener("click", copyToken);
$("audit_log_choose").addEventListener("click", chooseAuditFolder);
$("token_rotate").addEventListener("click", () => { $("rotate_confirm").hidden = false; });
$("rotate_yes").addEventListener("click", rotateToken);
$("rotate_no").addEventListener("click", () => { $("rotate_confirm").hidden = true; });
$("revert").addEventListener("click", () => (shown ? render(shown) : load()));
$("form").addEventListener("submit", (e) => e.preventDefault());
load();
