// The app's pages in headless Chromium with the Tauri API mocked: each
// command answers from `answers` (a value, `{ reject: why }`, or a list
// answered in turn), and every call is recorded for the test to check.
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import { chromium } from "playwright-core";

const UI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../ui");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";

export async function launch() {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox"] });
}

function mockTauri(answers) {
  window.__calls = [];
  const turns = {};
  window.__TAURI__ = {
    core: {
      invoke(command, args) {
        window.__calls.push([command, args === undefined ? null : args]);
        let answer = answers[command];
        if (Array.isArray(answer)) {
          const turn = turns[command] || 0;
          turns[command] = turn + 1;
          answer = answer[Math.min(turn, answer.length - 1)];
        }
        if (answer === undefined) {
          return Promise.reject(`no answer for ${command}`);
        }
        if (answer && answer.reject !== undefined) {
          return Promise.reject(answer.reject);
        }
        return Promise.resolve(structuredClone(answer));
      },
    },
  };
}

// Opens `page` (e.g. "settings.html") with the mocked commands.
export async function open(browser, page, answers) {
  const context = await browser.newContext();
  const tab = await context.newPage();
  const errors = [];
  tab.on("pageerror", (e) => errors.push(e));
  await tab.addInitScript(mockTauri, answers);
  await tab.goto(pathToFileURL(path.join(UI, page)).href);
  tab.errors = errors;
  return tab;
}

// The calls the page made so far, `[command, args]` each.
export async function calls(tab, command) {
  const all = await tab.evaluate(() => window.__calls);
  return command ? all.filter(([c]) => c === command) : all;
}
