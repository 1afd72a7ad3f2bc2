// The main window: why it is open (the app puts the reason in the page's
// address, #reason), and, where no tray or top bar holds deskhand's menu,
// the menu itself: the status, each session, and the items the app sends
// (menu_status), which it carries out (menu_choose) as the tray's.
"use strict";

const reason = decodeURIComponent(location.hash.slice(1));
if (reason) {
  document.getElementById("why").textContent = reason;
}

function items(list) {
  const box = document.getElementById("items");
  if (box.childElementCount) {
    return;
  }
  box.append(...list.map(({ id, label }) =>
    panel.el("button", {
      id: `item-${id}`,
      onclick: () => panel.invoke("menu_choose", { id }).catch((e) => panel.say(String(e), true)),
    }, label)));
}

async function refresh() {
  try {
    const menu = await panel.invoke("menu_status");
    items(menu.items);
    document.getElementById("line").textContent = menu.line;
    document.getElementById("sessions").replaceChildren(
      ...menu.sessions.map((s) => panel.el("li", {}, s)));
  } catch (e) {
    panel.say(String(e), true);
  }
}

refresh();
setInterval(refresh, 1000);
