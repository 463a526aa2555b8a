"""The repository's own text: no file that git tracks carries a merge's conflict markers (a
reader of the docs, or Python, would meet them as text)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^(<{7} |={7}$|>{7} )", re.MULTILINE)
TEXT = (".md", ".py", ".js", ".css", ".html", ".sh", ".toml", ".json", ".sql", ".yml", ".yaml")


def test_no_tracked_file_holds_conflict_markers() -> None:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    names = [n for n in listed.split("\0") if n.endswith(TEXT)]
    assert len(names) > 100  # the listing worked
    marked = [
        name
        for name in names
        if (ROOT / name).is_file()
        and MARKER.search((ROOT / name).read_text(encoding="utf-8", errors="replace"))
    ]
    assert marked == []
