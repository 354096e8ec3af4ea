"""Hostile files never stop indexing: each is indexed or skipped with a logged reason, memory stays bounded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO, isolated_env, write

# VmHWM, this process's own peak: getrusage's maxrss also counts the forking pytest worker's peak on Linux.
RUN = """
import json, sys
from ragdown.cli.main import main
main(["index", sys.argv[1], "--json"])
hwm = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"maxrss_kb": int(hwm.split()[1])}), file=sys.stderr)
"""


def test_hostile_files_are_indexed_or_skipped_and_the_run_finishes(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write(docs, "fine.md", "# Fine\n\nordinary note\n")
    write(docs, "bad-utf8.md", b"# Bad \xff\xfe encoding\n\ntext \xc3\x28 here\n")
    write(docs, "one-line.md", "x" * (5 * 1024 * 1024))
    write(docs, "binary.md", b"\x00\x01\x02PNG\x00" * 1000)
    write(docs, "nested.md", "".join("  " * i + "- item\n" for i in range(2000)))
    bomb = "---\na: &a [x, x, x, x, x, x, x, x, x]\n"
    for i in range(1, 12):
        bomb += f"{chr(97 + i)}: &{chr(97 + i)} [*{chr(96 + i)}, *{chr(96 + i)}, *{chr(96 + i)}, *{chr(96 + i)}]\n"
    bomb += "---\n# Bomb\n\nbody survives\n"
    write(docs, "bomb.md", bomb)
    env = isolated_env(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", RUN, str(docs)], cwd=REPO, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["added"] == 5  # everything but the binary file
    assert "binary.md: binary content" in done.stderr
    assert "bomb.md" in done.stderr  # the frontmatter was refused with a warning
    assert "bad-utf8.md" in done.stderr
    maxrss_mb = json.loads(done.stderr.strip().splitlines()[-1])["maxrss_kb"] / 1024
    assert maxrss_mb < 1024, f"indexing hostile files peaked at {maxrss_mb:.0f} MB"
