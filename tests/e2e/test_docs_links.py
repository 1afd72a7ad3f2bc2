"""Every relative link in the README and the docs leads to a file or
directory of the repository, and every `#anchor` in a link to a Markdown
page (or within the page) names one of that page's headings."""

from __future__ import annotations

import re
import unicodedata
from functools import cache
from pathlib import Path

from xhelpers import REPO

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
# Every top-level page, every page of docs/, the examples' and the attack
# catalogue's READMEs.
PAGES = ["*.md", "docs/*.md", "examples/README.md", "tests/e2e/attacks/README.md"]
# Pages the README's docs index names; they must exist.
REQUIRED = ["README.md", "SECURITY.md", "CONTRIBUTING.md", "CHANGELOG.md",
            "docs/cli.md", "docs/user-guide.md", "docs/mcp.md", "docs/wire-ops.md",
            "docs/computer-http.md", "docs/tray-app.md", "docs/performance.md"]


def without_code(text: str) -> str:
    """Links inside code spans and blocks are examples, not links."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return re.sub(r"`[^`\n]*`", "", text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text without formatting,
    lower-cased, punctuation dropped, spaces made hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: their text
    text = text.replace("`", "").replace("*", "").lower()
    kept = "".join(
        c for c in text
        if c in " -_" or unicodedata.category(c)[0] in "LNM"
    )
    return kept.replace(" ", "-")


@cache
def anchors(page: Path) -> frozenset[str]:
    """The anchors of a Markdown page's headings (a repeated heading gets
    `-1`, `-2`, … as on GitHub)."""
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    seen: dict[str, int] = {}
    found = set()
    for m in re.finditer(r"^#{1,6}\s+(.*?)\s*#*\s*$", text, flags=re.M):
        base = slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return frozenset(found)


def test_every_relative_link_resolves():
    pages = sorted({p for pattern in PAGES for p in REPO.glob(pattern)})
    missing = [name for name in REQUIRED if not (REPO / name).is_file()]
    assert not missing, f"pages missing: {missing}"
    broken = []
    for page in pages:
        for target in LINK.findall(without_code(page.read_text())):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path) if path else page
            if not dest.exists():
                broken.append(f"{page.relative_to(REPO)}: {target}")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.resolve()):
                broken.append(f"{page.relative_to(REPO)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_slugs_follow_github():
    assert slug("Windows under Wine (release build, `deskhand bench`)") == \
        "windows-under-wine-release-build-deskhand-bench"
    assert slug("`deskhand bench --session`") == "deskhand-bench---session"
    assert slug("The Activity timeline's thumbnails") == "the-activity-timelines-thumbnails"
    assert slug("Current figures: X11") == "current-figures-x11"
