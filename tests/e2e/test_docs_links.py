"""Every relative link in the README and the docs leads to a file or
directory of the repository (anchors aside)."""

from __future__ import annotations

import re

from xhelpers import REPO

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
PAGES = ["README.md", "SECURITY.md", "CONTRIBUTING.md", "CHANGELOG.md", "docs/*.md",
         "tests/e2e/attacks/README.md"]


def test_every_relative_link_resolves():
    pages = [p for pattern in PAGES for p in sorted(REPO.glob(pattern))]
    assert len(pages) >= 6, pages
    broken = []
    for page in pages:
        text = page.read_text()
        # Links inside code spans and blocks are examples, not links.
        text = re.sub(r"```.*?```", "", text, flags=re.S)
        text = re.sub(r"`[^`\n]*`", "", text)
        for target in LINK.findall(text):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue
            path = target.split("#", 1)[0]
            if not (page.parent / path).exists():
                broken.append(f"{page.relative_to(REPO)}: {target}")
    assert not broken, "\n".join(broken)
