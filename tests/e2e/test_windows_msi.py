"""deskhand's Windows installer, end to end: the MSI installers/windows/build-msi
makes on Linux (wixl) from the x86_64-pc-windows-gnu build, signed with a
throw-away certificate made here (openssl, osslsigncode), installed,
upgraded and removed with Wine's msiexec in the tests' Wine prefix, the
way a person's `msiexec /i deskhand.msi` would. The tests run in order:
install the previous build, upgrade to this one, run what was installed,
remove it."""

from __future__ import annotations

import getpass
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from daemon import Daemon
from desktop.windows import TARGET, WindowsDesktop, start
from imaging import decode_png
from xhelpers import REPO, missing, poll, require, run, scratch_dir

PROGRAMS = ("deskhand-app.exe", "deskhand.exe", "deskhand-overlay.exe")
# Everything the MSI puts in C:\Program Files\deskhand.
INSTALLED = (*PROGRAMS, "WebView2Loader.dll")
UNINSTALL = r"HKLM\Software\Microsoft\Windows\CurrentVersion\Uninstall"
RUN_KEY = r"HKCU\Software\Microsoft\Windows\CurrentVersion\Run"
APP = r"C:\Program Files\deskhand\deskhand-app.exe"
# The person's settings, which no install, upgrade or removal touches.
SETTINGS = "# mine\nconsent_timeout_s = 42\n"


def workspace_version() -> str:
    meta = json.loads(subprocess.run(["cargo", "metadata", "--format-version", "1", "--no-deps"],
                                     cwd=REPO, check=True, capture_output=True).stdout)
    return next(p["version"] for p in meta["packages"] if p["name"] == "deskhand-app")


@pytest.fixture(scope="module")
def certificate():
    """A throw-away code-signing certificate and its key (PEM)."""
    require("openssl", "osslsigncode")
    d = Path(scratch_dir("win-cert-"))
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:3072", "-sha256", "-days", "2",
                    "-nodes", "-keyout", str(d / "key.pem"), "-out", str(d / "cert.pem"),
                    "-subj", "/CN=deskhand CI test signing/O=deskhand",
                    "-addext", "extendedKeyUsage=codeSigning",
                    "-addext", "keyUsage=digitalSignature"],
                   check=True, capture_output=True, timeout=60)
    return d / "cert.pem", d / "key.pem"


def build_msi(out: Path, version: str, env: dict | None = None) -> Path:
    require("wixl")
    for name in (*PROGRAMS, "WebView2Loader.dll"):
        if not (TARGET / name).is_file():
            missing(f"{TARGET / name} (build it: cargo build --target x86_64-pc-windows-gnu "
                    "-p deskhand-app -p deskhand -p deskhand-overlay)")
    subprocess.run([str(REPO / "installers" / "windows" / "build-msi"), "--version", version,
                    "--out", str(out)], check=True, capture_output=True, timeout=600,
                   env={**os.environ, **(env or {})})
    return out


@pytest.fixture(scope="module")
def msis(certificate):
    """The previous build (0.0.1, unsigned) and this one (the workspace's
    version, signed as CI signs it)."""
    d = Path(scratch_dir("win-msi-"))
    cert, key = certificate
    old = build_msi(d / "deskhand_0.0.1_x64.msi", "0.0.1")
    new = build_msi(d / "deskhand_x64.msi", workspace_version(),
                    {"DESKHAND_WINDOWS_SIGN_CERT": cert.read_text(),
                     "DESKHAND_WINDOWS_SIGN_KEY": key.read_text()})
    return old, new


@pytest.fixture(scope="module")
def win():
    desktop = start("1280x800")
    remove_installed(desktop)  # an earlier run's, if one was left
    yield desktop
    remove_installed(desktop)
    desktop.stop()


def remove_installed(win: WindowsDesktop) -> None:
    """Uninstalls every deskhand found, and the settings file these
    tests wrote: the prefix is shared with the other Windows tests."""
    for entry in deskhand_entries(win):
        msiexec(win, "/x", product_code(entry))
    if settings_file(win).is_file() and settings_file(win).read_text() == SETTINGS:
        settings_file(win).unlink()


def product_code(entry: dict[str, str]) -> str:
    return entry["key"].rsplit("\\", 1)[-1]


def drive_c(win: WindowsDesktop) -> Path:
    return win.prefix / "drive_c"


def program_files(win: WindowsDesktop) -> Path:
    return drive_c(win) / "Program Files" / "deskhand"


def settings_file(win: WindowsDesktop) -> Path:
    """%APPDATA%\\deskhand\\settings.toml (Wine's user is the Linux one)."""
    return drive_c(win) / "users" / getpass.getuser() / "AppData" / "Roaming" / "deskhand" / \
        "settings.toml"


def registry(win: WindowsDesktop, key: str) -> dict[str, dict[str, str]]:
    """`reg query KEY /s`: each key's values (name → data)."""
    out = subprocess.run(["wine", "reg", "query", key, "/s"], env=win.env(), capture_output=True,
                         timeout=60).stdout.decode("utf-8", "replace")
    keys: dict[str, dict[str, str]] = {}
    current = None
    for line in out.splitlines():
        if line.startswith("HKEY_"):
            current = keys.setdefault(line.strip(), {})
        elif current is not None and (m := re.match(r"\s+(.*?)\s+(REG_\w+)\s+(.*)$", line)):
            current[m.group(1)] = m.group(3).strip()
    return keys


def deskhand_entries(win: WindowsDesktop) -> list[dict[str, str]]:
    """The Apps & features entries named deskhand (key → its values)."""
    return [{"key": k, **v} for k, v in registry(win, UNINSTALL).items()
            if v.get("DisplayName") == "deskhand"]


def windows_path(path: Path) -> str:
    """A Linux path as Wine's programs name it (drive Z: is /)."""
    return "Z:" + str(path).replace("/", "\\")


def msiexec(win: WindowsDesktop, *args: str) -> None:
    """`msiexec ARGS /qn` (silent), as a person's script would run it;
    without winemenubuilder, which would copy the Start-menu entry into
    the Linux account's own menus."""
    env = win.env()
    env["WINEDLLOVERRIDES"] += ";winemenubuilder.exe=d"
    out = subprocess.run(["wine", "msiexec", *args, "/qn"], env=env, capture_output=True,
                         timeout=180)
    assert out.returncode == 0, f"msiexec {args}: {out.returncode} {out.stderr[-800:]!r}"


def shortcuts(win: WindowsDesktop) -> list[Path]:
    """deskhand's Start-menu entries: all users' or (Wine 8's msi puts a
    per-machine install's there) the installing user's."""
    found = []
    for base in (drive_c(win) / "ProgramData", drive_c(win) / "users" / getpass.getuser() /
                 "AppData" / "Roaming"):
        found += (base / "Microsoft" / "Windows" / "Start Menu" / "Programs" / "deskhand").glob(
            "*.lnk")
    return found


def test_the_previous_build_installs_silently(win, msis):
    old, _ = msis
    msiexec(win, "/i", windows_path(old))
    here = sorted(p.name for p in program_files(win).iterdir())
    assert here == sorted(INSTALLED)
    for name in INSTALLED:
        assert (program_files(win) / name).read_bytes() == (TARGET / name).read_bytes(), name
    [entry] = deskhand_entries(win)
    assert entry["DisplayVersion"] == "0.0.1"
    assert entry["Publisher"] == "deskhand"
    # the person's settings, written as deskhand's Settings window would
    settings_file(win).parent.mkdir(parents=True, exist_ok=True)
    settings_file(win).write_text(SETTINGS)


def test_the_start_menu_and_sign_in_entries_point_at_the_installed_app(win):
    [link] = shortcuts(win)
    assert link.name == "deskhand.lnk"
    raw = link.read_bytes()
    assert APP.encode() in raw or APP.encode("utf-16-le") in raw, raw
    # the value tauri-plugin-autostart reads as "Start at login" on
    run = registry(win, RUN_KEY)
    [values] = [v for k, v in run.items() if k.lower().endswith(r"currentversion\run")]
    assert values.get("deskhand") == f'"{APP}"'


def test_an_upgrade_keeps_one_entry_and_the_persons_settings(win, msis):
    _, new = msis
    msiexec(win, "/i", windows_path(new))
    [entry] = deskhand_entries(win)
    assert entry["DisplayVersion"] == workspace_version()
    assert entry["Publisher"] == "deskhand"
    assert settings_file(win).read_text() == SETTINGS
    # the signed programs replaced the previous build's
    signed = new.with_suffix(".files")
    for name in INSTALLED:
        assert (program_files(win) / name).read_bytes() == (signed / name).read_bytes(), name
    assert len(shortcuts(win)) == 1


def test_the_installed_daemon_starts_writes_its_connection_file_and_answers_a_screenshot(win):
    consent = scratch_dir("win-msi-consent-") + "/consent.json"
    with open(consent, "w") as f:
        f.write('{"input": true}')
    d = Daemon("--consent", consent, env=win.env(),
               command=["wine", r"C:\Program Files\deskhand\deskhand.exe", "serve"])
    try:
        written = json.loads(d.connection_file.read_text())
        assert written["token"] == d.token and str(d.port) in json.dumps(written)
        c = d.client()
        try:
            def same():
                shot = decode_png(c.screenshot()["image"])
                assert (shot.width, shot.height) == win.size
                return all(shot.pixel(x, y) == win.pixel(x, y) for x, y in ((5, 5), (640, 400)))

            poll(same, timeout=10, what="a screenshot equal to X's image")
        finally:
            c.close()
    finally:
        d.kill()


def test_the_app_says_webview2_is_missing_and_its_setting_turns_sign_in_off(win):
    """Wine has no WebView2: the installed tray app says so in a message
    box (never a blank window). Started with --start-at-login false (what
    Settings' switch does), it first removes the installer's sign-in entry."""
    proc = win.start_app(APP, "--start-at-login", "false")
    box = poll(lambda: run(win.x_display, "xdotool", "search", "--name",
                           "WebView2 is missing", check=False).split(),
               timeout=60, what="the message box saying WebView2 is missing")

    def answered():
        # the person presses Enter on the box (OK has the focus)
        for window in box:
            run(win.x_display, "xdotool", "windowactivate", "--sync", window, check=False)
        run(win.x_display, "xdotool", "key", "Return", check=False)
        try:
            return proc.wait(2) is not None
        except subprocess.TimeoutExpired:
            return False

    poll(answered, timeout=30, what="the app's exit once the person pressed OK")
    assert proc.returncode == 69
    run_values = registry(win, RUN_KEY)
    assert all("deskhand" not in v for v in run_values.values()), run_values


def test_uninstalling_removes_every_program_file_and_keeps_the_persons_data(win):
    [entry] = deskhand_entries(win)
    msiexec(win, "/x", product_code(entry))
    assert not program_files(win).exists() or not any(program_files(win).iterdir())
    assert not (drive_c(win) / "Program Files" / "deskhand").exists()
    assert deskhand_entries(win) == []
    assert shortcuts(win) == []
    assert settings_file(win).read_text() == SETTINGS


def verify(cert: Path, path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["osslsigncode", "verify", "-CAfile", str(cert), "-in", str(path)],
                          capture_output=True, text=True, timeout=120)


def test_the_msi_and_its_programs_are_signed_and_a_changed_byte_fails(msis, certificate, tmp_path):
    _, new = msis
    cert, _ = certificate
    signed = new.with_suffix(".files")
    for path in (new, *(signed / name for name in PROGRAMS)):
        out = verify(cert, path)
        assert out.returncode == 0 and "Signature verification: ok" in out.stdout, (path, out)
        # one byte changed in the middle (program code, the MSI's cabinet)
        changed = tmp_path / path.name
        shutil.copyfile(path, changed)
        with open(changed, "r+b") as f:
            f.seek(changed.stat().st_size // 2)
            byte = f.read(1)
            f.seek(-1, 1)
            f.write(bytes([byte[0] ^ 0xFF]))
        out = verify(cert, changed)
        assert out.returncode != 0, (path, out.stdout[-800:])
    # the unsigned build is not taken for a signed one
    assert verify(cert, TARGET / "deskhand.exe").returncode != 0
