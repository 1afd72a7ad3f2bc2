// The main window says why it is open: the app puts the reason in the
// page's address (#reason), so no script needs the Tauri API.
const reason = decodeURIComponent(location.hash.slice(1));
if (reason) {
  document.getElementById("why").textContent = reason;
}
