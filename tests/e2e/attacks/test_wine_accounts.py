"""Another Unix account against deskhand.exe under Wine (issue 47, 6): the
"OS keychain" under Wine is the Credential Manager, which Wine keeps in
the prefix's user.reg (0644) with the key of its entries beside them,
and Windows' owner-only DACL comes out 0770 on the Unix side. The other
account is a second uid in the group of the user deskhand runs as (made
with useradd: the tests run as root under CI=true). The catalogue is
`tests/e2e/attacks/README.md`.

| attack class | what the attacker does | what must happen |
|---|---|---|
| read the token from Wine's registry | another Unix account reads user.reg, where an earlier deskhand kept its token and audit key | deskhand keeps nothing there: the old entries are removed and new secrets made, in owner-only files |
| read or write deskhand's files through the group bits | another account of the group reads the token and appends to the audit log | 0600 files in 0700 folders on the Unix side: both refused |
"""

from __future__ import annotations

import getpass
import json
import os
import re
import stat
import subprocess
from pathlib import Path

import pytest

from daemon import Daemon
from desktop.windows import WindowsDesktop, prefix, start, windows_binary
from xhelpers import missing, require, scratch_dir

WATTACK = r"C:\deskhand-tests\wattack.exe"
OTHER = "deskhand-other"


def wine_env(pfx: Path) -> dict:
    return dict(os.environ, WINEPREFIX=str(pfx), WINEDEBUG="-all",
                WINEDLLOVERRIDES="mscoree,mshtml=", WINEARCH="win64")


def unix_path(win: WindowsDesktop, windows_path: str) -> Path:
    return Path(win.wine("winepath", "-u", windows_path).strip())


def mode(path: Path) -> str:
    return oct(stat.S_IMODE(path.stat().st_mode))


def as_other(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(["runuser", "-u", OTHER, "--", *argv], capture_output=True, text=True,
                          timeout=30)


def credential_keys(user_reg: Path) -> list[str]:
    """deskhand's entries in Wine's Credential Manager, as user.reg has them."""
    return re.findall(r"Credential Manager\\\\Generic: (?:token|audit key) for [^\]]*deskhand",
                      user_reg.read_text(errors="replace"))


@pytest.fixture(scope="module")
def other_account():
    if os.geteuid() != 0:
        missing("root, to add a second Unix account (CI runs as root)")
    require("useradd", "runuser")
    if subprocess.run(["id", OTHER], capture_output=True).returncode != 0:
        # In the group of deskhand's user: the finding was read through
        # the group bits.
        subprocess.run(["useradd", "--no-create-home", "--gid", str(os.getgid()), OTHER],
                       check=True, timeout=30)
    return OTHER


@pytest.fixture(scope="module")
def setup(other_account):
    """An earlier deskhand's state, as the attack run found it: the token
    and audit key in the Credential Manager, deskhand's folders 0770 and
    its audit log 0660. Then deskhand.exe serves."""
    pfx = prefix()
    env = wine_env(pfx)
    subprocess.run(["wineserver", "-k"], env=env, timeout=30, check=False)
    user = getpass.getuser()  # Wine's user is the Unix one
    roaming = pfx / "drive_c" / "users" / user / "AppData"
    config, state = roaming / "Roaming" / "deskhand", roaming / "Local" / "deskhand"
    config_win = rf"C:\users\{user}\AppData\Roaming\deskhand"
    for what in ("token", "audit key"):
        out = subprocess.run(["wine", WATTACK, "credential", f"{what} for {config_win}.deskhand",
                              "f" * 64], env=env, capture_output=True, text=True, timeout=60)
        assert "kept a credential" in out.stdout, out
    subprocess.run(["wineserver", "-k"], env=env, timeout=30, check=False)
    user_reg = pfx / "user.reg"
    assert len(credential_keys(user_reg)) == 2, "the earlier deskhand's entries are in user.reg"
    for d in (config, state):
        subprocess.run(["rm", "-rf", str(d)], check=True)
        d.mkdir(parents=True)
        d.chmod(0o770)
    (state / "audit.jsonl").write_text("")
    (state / "audit.jsonl").chmod(0o660)
    win = start("1280x800")
    consent = scratch_dir("win-accounts-consent-") + "/consent.json"
    with open(consent, "w") as f:
        f.write('{"input": true}')
    windows_binary("deskhand-overlay")
    d = Daemon("--consent", consent, "--listen", "127.0.0.1:0",
               command=["wine", str(windows_binary("deskhand")), "serve"], env=win.env(),
               port_and_audit_from_settings=True)
    c = d.client()
    c.request("WINDOW_LIST", {})  # a line in the audit log
    c.close()
    yield win, d, config, state, user_reg
    d.kill()
    win.stop()


def test_the_token_and_audit_key_are_not_in_wines_registry_and_are_new(setup):
    win, d, config, _, user_reg = setup
    conn = json.loads(d.connection_file.read_text())
    assert conn.get("token_store") == "file", conn
    token_file = unix_path(win, conn["token_file"])
    assert token_file.resolve() == (config / "token").resolve(), token_file
    assert d.token != "f" * 64, "the token that lay in user.reg is not used"
    assert (config / "audit-key").read_text().strip() != "f" * 64
    report = json.loads(subprocess.run(["wine", str(windows_binary("deskhand")), "doctor",
                                        "--json"], env=win.env(), capture_output=True,
                                       text=True, timeout=60).stdout)
    probes = {p["label"]: p for p in report["probes"]}
    wine = probes["wine"]
    assert wine["status"] == "ok", wine
    assert "user.reg" in wine["message"] and "every Unix account may read" in wine["message"], wine
    assert "holds none of deskhand's secrets" in wine["message"], wine
    assert "0600" in probes["token store"]["message"], probes["token store"]
    assert f"Unix {token_file}" in probes["token store"]["message"], probes["token store"]
    # Saved as Wine saves its registry, when its server ends.
    subprocess.run(["wineserver", "-k"], env=win.env(), timeout=30, check=False)
    assert credential_keys(user_reg) == [], "deskhand's entries are gone from user.reg"


def test_another_account_of_the_group_reads_no_secret_and_writes_no_audit_line(setup):
    win, d, config, state, user_reg = setup
    audit = state / "audit.jsonl"
    assert audit.stat().st_size > 0, "deskhand wrote its audit log"
    # The other account reaches the prefix: it reads user.reg (which is why
    # nothing is kept there) and lists the folders above deskhand's.
    assert as_other("cat", str(user_reg)).returncode == 0, "the prefix is out of reach"
    assert as_other("ls", str(config.parent)).returncode == 0
    size = audit.stat().st_size
    out = as_other("sh", "-c", f"echo forged >> '{audit}'")
    assert out.returncode != 0, f"another account appended to the audit log ({mode(audit)})"
    assert audit.stat().st_size == size
    paths = (config, state, config / "token", config / "audit-key", audit)
    modes = {str(p): mode(p) for p in paths if p.exists()}
    assert list(modes.values()) == ["0o700", "0o700", "0o600", "0o600", "0o600"], modes
    for secret in (config / "token", config / "audit-key"):
        out = as_other("cat", str(secret))
        assert out.returncode != 0 and d.token not in out.stdout, (secret, out)
