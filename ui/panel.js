// What the Settings, Doctor and Activity pages share: the app's command
// call and a small element builder. The pages only show and forward; the
// rules (what a save may change, what the doctor found) are the app's.
"use strict";

const panel = {
  invoke(command, args) {
    return window.__TAURI__.core.invoke(command, args);
  },

  // An element with attributes (`on*` keys add listeners) and children
  // (strings become text).
  el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
      if (key.startsWith("on")) {
        node.addEventListener(key.slice(2), value);
      } else if (typeof value === "boolean") {
        node[key] = value;
      } else if (value !== undefined && value !== null) {
        node.setAttribute(key, value);
      }
    }
    node.append(...children.filter((c) => c !== null && c !== undefined));
    return node;
  },

  // The page's message line: `error` in red, a note otherwise.
  say(text, error = false) {
    const line = document.getElementById("message");
    line.textContent = text || "";
    line.className = error ? "error" : "note";
  },

  // `ts` (seconds since the epoch) as local time of day.
  time(ts) {
    return new Date(ts * 1000).toLocaleTimeString();
  },
};
