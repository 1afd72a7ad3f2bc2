// The person's dialog. The page only shows and forwards clicks: what is
// ticked lives in the app, which counts a click only when the engine
// confirms a real mouse made it. The keyboard can only deny (Escape).
const invoke = window.__TAURI__.core.invoke;
const id = decodeURIComponent(location.hash.slice(1));
let secondsLeft = 0;

function text(tag, content) {
  const el = document.createElement(tag);
  el.textContent = content;
  return el;
}

function render(view) {
  document.getElementById("title").textContent = view.title;
  document.getElementById("lines").replaceChildren(...view.lines.map((l) => text("p", l)));
  document.getElementById("boxes").replaceChildren(...view.boxes.map((b, i) => {
    const el = text("div", b.label);
    el.className = b.ticked ? "box ticked" : "box";
    el.id = `box-${i}`;
    onClick(el, () => invoke("tick", { id, key: b.key }));
    return el;
  }));
  document.getElementById("leases").replaceChildren(...view.leases.map((l, i) => {
    const el = text("div", l.label);
    el.className = l.ticked ? "lease ticked" : "lease";
    el.id = `lease-${i}`;
    onClick(el, () => invoke("lease", { id, key: l.key }));
    return el;
  }));
  document.getElementById("note").textContent = view.note || "";
  document.getElementById("allow").textContent = view.kind === "consent" ? "Allow" : "Approve";
  secondsLeft = view.seconds_left;
  countdown();
}

// A left press and release on the element; keyboard activation never
// reaches here (the elements are not focusable).
function onClick(el, act) {
  el.addEventListener("pointerup", (e) => {
    if (e.button === 0) {
      act().then(render, over);
    }
  });
}

function over() {
  document.getElementById("note").textContent = "This question is over.";
}

function countdown() {
  document.getElementById("countdown").textContent =
    `Denied in ${secondsLeft} s unless you answer.`;
}

setInterval(() => {
  if (secondsLeft > 0) {
    secondsLeft -= 1;
    countdown();
  }
}, 1000);

onClick(document.getElementById("allow"), () => invoke("allow", { id }));
document.getElementById("deny").addEventListener("pointerup", () => invoke("deny", { id }));
document.addEventListener("keydown", (e) => {
  e.preventDefault();
  if (e.key === "Escape") {
    invoke("deny", { id });
  }
});
invoke("question", { id }).then(render, over);
