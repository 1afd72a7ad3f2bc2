import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { calls, launch, open } from "./harness.mjs";

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser.close(); });

const VIEW = {
  form: {
    approval: "write",
    refuse_apps: ["terminals"],
    displays: ["DUMMY0"],
    consent_timeout_s: 60,
    clipboard_enabled: true,
    clipboard_read_foreign: false,
    clipboard_approve_foreign_reads: false,
    kill_switch: "ctrl+alt+Escape",
    listen_port: 4312,
    audit_log: "/home/p/.local/state/deskhand/audit.jsonl",
  },
  start_at_login: false,
  displays: [
    { name: "DUMMY0", width: 1920, height: 1080, primary: true },
    { name: "DUMMY1", width: 1280, height: 1024, primary: false },
  ],
  fixed: [],
  path: "/home/p/.config/deskhand/settings.toml",
  listen: "127.0.0.1:4312",
  audit_log: "/home/p/.local/state/deskhand/audit.jsonl",
  token_kept_in: "the OS keychain",
  note: null,
};

test("the form shows the settings the app read", async () => {
  const tab = await open(browser, "settings.html", { settings_read: VIEW });
  await tab.waitForFunction(() => document.getElementById("listen").textContent !== "");
  assert.equal(await tab.isChecked("#clipboard_enabled"), true);
  assert.equal(await tab.isChecked("#clipboard_read_foreign"), false);
  assert.equal(await tab.inputValue("#approval"), "write");
  assert.equal(await tab.isChecked("#refuse-terminals"), true);
  assert.equal(await tab.isChecked("#refuse-developer_tools"), false);
  assert.equal(await tab.inputValue("#consent_timeout_s"), "60");
  assert.equal(await tab.isChecked("#displays_some"), true);
  assert.equal(await tab.isChecked("#display-DUMMY0"), true);
  assert.equal(await tab.isChecked("#display-DUMMY1"), false);
  assert.match(await tab.textContent("#display_list"), /DUMMY1: 1280×1024/);
  assert.equal(await tab.textContent("#listen"), "127.0.0.1:4312");
  assert.equal(await tab.inputValue("#kill_switch"), "ctrl+alt+Escape");
  assert.equal(await tab.inputValue("#listen_port"), "4312");
  assert.equal(await tab.inputValue("#audit_log_path"), "/home/p/.local/state/deskhand/audit.jsonl");
  assert.deepEqual(tab.errors, []);
});

test("Save sends the whole form and shows the app's answer", async () => {
  const saved = { ...VIEW, form: { ...VIEW.form, clipboard_enabled: false, displays: null }, note: "Saved: it applies from the next request on." };
  const tab = await open(browser, "settings.html", { settings_read: VIEW, settings_save: saved });
  await tab.waitForFunction(() => document.getElementById("listen").textContent !== "");
  await tab.uncheck("#clipboard_enabled");
  await tab.check("#displays_all");
  await tab.selectOption("#approval", "prompt");
  await tab.uncheck("#refuse-terminals");
  await tab.check("#refuse-package_managers");
  await tab.fill("#consent_timeout_s", "30");
  await tab.fill("#kill_switch", " super+F12 ");
  await tab.fill("#listen_port", "48200");
  await tab.fill("#audit_log_path", "/var/tmp/audit.jsonl");
  await tab.check("#start_at_login");
  await tab.click("#save");
  await tab.waitForFunction(() => document.getElementById("message").textContent.startsWith("Saved"));
  const [[, args]] = await calls(tab, "settings_save");
  assert.deepEqual(args, {
    save: {
      form: {
        approval: "prompt",
        refuse_apps: ["package_managers"],
        displays: null,
        consent_timeout_s: 30,
        clipboard_enabled: false,
        clipboard_read_foreign: false,
        clipboard_approve_foreign_reads: false,
        kill_switch: "super+F12",
        listen_port: 48200,
        audit_log: "/var/tmp/audit.jsonl",
      },
      start_at_login: true,
    },
  });
  assert.equal(await tab.getAttribute("#message", "class"), "note");
});

test("a refused save shows why, and the form keeps what was typed", async () => {
  const why = "This change allows more (displays): only a click of your own mouse on Save can allow it. Nothing changed.";
  const tab = await open(browser, "settings.html", { settings_read: VIEW, settings_save: { reject: why } });
  await tab.waitForFunction(() => document.getElementById("listen").textContent !== "");
  await tab.check("#display-DUMMY1");
  await tab.click("#save");
  await tab.waitForFunction(() => document.getElementById("message").className === "error");
  assert.equal(await tab.textContent("#message"), why);
  assert.equal(await tab.isChecked("#display-DUMMY1"), true);
  const [[, args]] = await calls(tab, "settings_save");
  assert.deepEqual(args.save.form.displays, ["DUMMY0", "DUMMY1"]);
  await tab.click("#revert");
  assert.equal(await tab.isChecked("#display-DUMMY1"), false, "Revert shows the saved settings again");
});

test("a wait that is not a whole number is refused before it reaches the app", async () => {
  const tab = await open(browser, "settings.html", { settings_read: VIEW, settings_save: VIEW });
  await tab.waitForFunction(() => document.getElementById("listen").textContent !== "");
  await tab.fill("#consent_timeout_s", "");
  await tab.click("#save");
  assert.equal(await tab.getAttribute("#message", "class"), "error");
  assert.deepEqual(await calls(tab, "settings_save"), []);
});

test("a port that is not a whole number from 1 to 65535 is refused before it reaches the app", async () => {
  const tab = await open(browser, "settings.html", { settings_read: VIEW, settings_save: VIEW });
  await tab.waitForFunction(() => document.getElementById("listen").textContent !== "");
  for (const bad of ["70000", "80.5", ""]) {
    await tab.fill("#listen_port", bad);
    await tab.click("#save");
    assert.match(await tab.textContent("#message"), /port must be a whole number/, bad);
  }
  assert.deepEqual(await calls(tab, "settings_save"), []);
});

test("values the command line set cannot be changed in the form", async () => {
  const fixed = ["approval", "clipboard", "kill_switch", "listen_port", "audit_log"];
  const tab = await open(browser, "settings.html", { settings_read: { ...VIEW, fixed } });
  await tab.waitForFunction(() => document.getElementById("listen").textContent !== "");
  for (const id of ["#approval", "#clipboard_enabled", "#kill_switch", "#listen_port", "#audit_log_path", "#audit_log_choose"]) {
    assert.equal(await tab.isDisabled(id), true, id);
  }
  assert.equal(await tab.isDisabled("#display-DUMMY0"), false);
  assert.match(await tab.textContent("#fixed"), /approval, clipboard, kill_switch/);
});

test("Choose folder puts the picked place in the field, and a cancelled pick changes nothing", async () => {
  const picked = "/media/usb/deskhand/audit.jsonl";
  const tab = await open(browser, "settings.html", { settings_read: VIEW, audit_folder_pick: picked });
  await tab.waitForFunction(() => document.getElementById("listen").textContent !== "");
  await tab.click("#audit_log_choose");
  await tab.waitForFunction((p) => document.getElementById("audit_log_path").value === p, picked);
  assert.match(await tab.textContent("#message"), /Save to write the audit log there/);
  assert.deepEqual(await calls(tab, "settings_save"), [], "picking does not save");
  const cancelled = await open(browser, "settings.html", { settings_read: VIEW, audit_folder_pick: null });
  await cancelled.waitForFunction(() => document.getElementById("listen").textContent !== "");
  await cancelled.click("#audit_log_choose");
  await cancelled.waitForFunction(() => window.__calls.some(([c]) => c === "audit_folder_pick"));
  assert.equal(await cancelled.inputValue("#audit_log_path"), VIEW.form.audit_log);
});

test("Copy puts the token on the clipboard and never on the page", async () => {
  const token = "ab".repeat(32);
  const tab = await open(browser, "settings.html", { settings_read: VIEW, token_copy: token });
  await tab.waitForFunction(() => document.getElementById("listen").textContent !== "");
  assert.equal(await tab.textContent("#token_kept_in"), "the OS keychain");
  await tab.evaluate(() => {
    Object.defineProperty(navigator, "clipboard", {
      value: { writeText: async (text) => { window.__copied = text; } },
    });
  });
  await tab.click("#token_copy");
  await tab.waitForFunction(() => document.getElementById("message").textContent !== "");
  assert.equal(await tab.evaluate(() => window.__copied), token);
  assert.equal(await tab.textContent("#message"), "The token is on the clipboard.");
  assert.equal((await tab.content()).includes(token), false, "the token is not shown");
});

test("Replace asks first, and only the second button replaces the token", async () => {
  const note = "The token was replaced: agents using the old one are cut off.";
  const tab = await open(browser, "settings.html", { settings_read: VIEW, token_rotate: { ...VIEW, note } });
  await tab.waitForFunction(() => document.getElementById("listen").textContent !== "");
  assert.equal(await tab.isVisible("#rotate_confirm"), false);
  await tab.click("#token_rotate");
  assert.equal(await tab.isVisible("#rotate_confirm"), true);
  await tab.click("#rotate_no");
  assert.equal(await tab.isVisible("#rotate_confirm"), false);
  assert.deepEqual(await calls(tab, "token_rotate"), [], "Keep it replaces nothing");
  await tab.click("#token_rotate");
  await tab.click("#rotate_yes");
  await tab.waitForFunction((n) => document.getElementById("message").textContent === n, note);
  assert.equal((await calls(tab, "token_rotate")).length, 1);
  assert.equal(await tab.isVisible("#rotate_confirm"), false);
});
