"""A write's and a search's latency while a long sync runs, through a real `ragdown serve`.

    .venv/bin/python bench/write_during_sync.py [--embedder minilm] [--copies 2] [--writes 3]
        [--searches 30] [--vault DIR] [--before DIR]

Each variant starts `ragdown serve` (its own process, `PYTHONPATH` the `src/` tree under test) on a folder
`work` holding the Obsidian help vault once, the watcher on, and waits for its first sync; it times
`--searches` searches (`GET /api/v1/folders/work/search`) while nothing is syncing. Then `--copies` more
copies of the vault land in `work/backlog/` at once, and the sync the watcher starts has them all to index.
While that sync runs (`/api/status` says `syncing`), the script times searches, and every few searches a
write of a new note (`PUT /api/v1/folders/work/files/...`), each followed by a search for the note's own
words: whether its answer came with a note that the index is still syncing, and whether the search found
it. A row measured after the long sync ended is left out (the counts say how many were in).

`--long-note MIB` drops instead one long note of realistic Markdown (`bench/tree_cost.py`'s: prose, lists,
tables, code, quotes, links; MIB mebibytes) as `backlog/long.md`: the sync that embeds it has one file, for
minutes with a model, and the writes go to other notes meanwhile. `/api/status`'s progress is sampled
every second until the sync ends (what the web UI's badge and `ragdown_stats` show: the same dict), and
the table says how many distinct values it took while the file was not yet done.

`--before DIR` runs the same against another `src/` tree (e.g. `git archive` of the commit before), the
variants one after the other. Writes bench/out/write_during_sync.json.

    .venv/bin/python bench/write_during_sync.py --embedder minilm --long-note 0.25 --writes 3 --searches 12 \
        --vault SMALL_DIR --before /tmp/before/src
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from _common import CORPORA, exit_cleanly_on_sigterm, median, percentile, table, write_result
from tree_cost import MIB, realistic_note

REPO = Path(__file__).resolve().parent.parent
QUERIES = ("link to a heading", "graph view filters", "sync settings", "canvas cards", "community plugins")
V1 = "/api/v1/folders/work"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def status(client: httpx.Client) -> dict[str, Any]:
    body: dict[str, Any] = client.get("/api/status").json()
    return body


def wait_until(client: httpx.Client, check: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            body = status(client)
            done = body.get("ready") and body.get("last_sync") and not body.get("syncing")
            if (check == "synced" and done) or (check == "syncing" and body.get("syncing")):
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"the server never reached {check!r}")
        time.sleep(0.05)


def timed_search(client: httpx.Client, query: str) -> tuple[float, list[str]]:
    started = time.perf_counter()
    answer = client.get(f"{V1}/search", params={"query": query, "top_k": 3})
    ms = (time.perf_counter() - started) * 1000
    answer.raise_for_status()
    return ms, [h["path"] for h in answer.json()["hits"]]


def run_variant(name: str, src: Path, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    docs = tmp / name / "docs"
    vault: Path = args.vault
    shutil.copytree(vault, docs / "work")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGDOWN_")}
    env.update(
        PYTHONPATH=str(src),
        PYTHONDONTWRITEBYTECODE="1",
        RAGDOWN_DOCS_DIR=str(docs),
        RAGDOWN_DATA_DIR=str(tmp / name / "data"),
        RAGDOWN_EMBEDDER=args.embedder,
        RAGDOWN_WATCH="true",
        RAGDOWN_HISTORY="false",
        RAGDOWN_HOST="127.0.0.1",
        SECURE_LOCAL_NET="true",
        RAGDOWN_RATE_LIMIT="0",  # the status polls alone would pass it
        PORT=str(port),
    )
    log = (tmp / name / "serve.log").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "ragdown.cli", "serve"], env=env, stdout=log, stderr=log)
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120)
    try:
        wait_until(client, "synced", 600)
        idle = [timed_search(client, QUERIES[i % len(QUERIES)])[0] for i in range(args.searches)]
        if args.long_note:
            backlog = docs / "work" / "backlog"
            backlog.mkdir()
            note = realistic_note(int(args.long_note * MIB))
            (backlog / ".long.md.part").write_text(note, encoding="utf-8")
            (backlog / ".long.md.part").rename(backlog / "long.md")  # whole, at once, for the watcher
        for copy in range(0 if args.long_note else args.copies):
            shutil.copytree(vault, docs / "work" / "backlog" / str(copy))
        wait_until(client, "syncing", 60)
        started = time.perf_counter()
        searches: list[float] = []
        writes: list[dict[str, Any]] = []
        progress: list[str] = []
        samples: list[dict[str, Any]] = []
        i = 0
        while len(searches) < args.searches or len(writes) < args.writes:
            if not status(client).get("syncing"):
                break
            ms, _ = timed_search(client, QUERIES[i % len(QUERIES)])
            searches.append(ms)
            i += 1
            if len(writes) < args.writes and (i - 1) % max(1, args.searches // max(1, args.writes)) == 0:
                word = f"quokka{len(writes)}zebra"
                t0 = time.perf_counter()
                answer = client.put(
                    f"{V1}/files/new-{len(writes)}.md", json={"content": f"# New {len(writes)}\n\n{word}\n"}
                )
                write_ms = (time.perf_counter() - t0) * 1000
                answer.raise_for_status()
                pending = any("still syncing" in n for n in answer.json().get("notes", []))
                _, hits = timed_search(client, word)
                still = bool(status(client).get("syncing"))
                writes.append(
                    {
                        "ms": write_ms,
                        "pending": pending,
                        "found": hits[:1] == [f"new-{len(writes)}.md"],
                        "during": still,
                        "at_s": round(t0 - started, 1),
                    }
                )
            body = status(client)
            if body.get("progress"):
                progress.append(str(body["progress"]))
                samples.append({"t": round(time.perf_counter() - started, 1), **body["progress"]})
        still_syncing = bool(status(client).get("syncing"))
        deadline = time.monotonic() + 3600
        while time.monotonic() < deadline:  # what the status says until the sync ends, every second
            body = status(client)
            if body.get("ready") and body.get("last_sync") and not body.get("syncing"):
                break
            if body.get("progress"):
                samples.append({"t": round(time.perf_counter() - started, 1), **body["progress"]})
            time.sleep(1)
        else:
            raise SystemExit("the long sync never ended")
        sync_s = time.perf_counter() - started
    finally:
        client.close()
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
    during = [w for w in writes if w["during"]]
    return {
        "variant": name,
        "idle_search_ms": idle,
        "sync_search_ms": searches,
        "writes": writes,
        "writes_during": len(during),
        "sync_s": sync_s,
        "sync_outlasted_measurement": still_syncing,
        "progress_seen": progress[-3:],
        "progress_samples": samples,
    }


def while_undone(samples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The status samples taken while no file of the backlog was done yet (a long note: all of its embedding)."""
    return [s for s in samples if not s.get("files_done") and s.get("files_total")]


def main() -> None:
    exit_cleanly_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--copies", type=int, default=2)
    parser.add_argument("--writes", type=int, default=3)
    parser.add_argument("--searches", type=int, default=30)
    parser.add_argument("--vault", type=Path, default=CORPORA["obsidian-help"], help="the notes to copy")
    parser.add_argument("--before", type=Path, default=None, help="another src/ tree to compare with")
    parser.add_argument(
        "--long-note", type=float, default=0.0, help="MiB: one long note as the backlog instead of copies"
    )
    args = parser.parse_args()
    variants = [("after", REPO / "src")] + ([("before", args.before)] if args.before else [])
    results = []
    with tempfile.TemporaryDirectory(prefix="ragdown-write-during-sync-") as tmp:
        for name, src in variants:
            results.append(run_variant(name, src, args, Path(tmp)))
    rows = []
    for r in results:
        during = [w for w in r["writes"] if w["during"]]
        rows.append(
            [
                r["variant"],
                f"{median(r['idle_search_ms']):.0f} / {percentile(r['idle_search_ms'], 95):.0f}",
                f"{median(r['sync_search_ms']):.0f} / {percentile(r['sync_search_ms'], 95):.0f}"
                if r["sync_search_ms"]
                else "-",
                " ".join(f"{w['ms'] / 1000:.2f}" for w in during) or "-",
                f"{sum(w['pending'] for w in during)} of {len(during)}",
                f"{sum(w['found'] for w in during)} of {len(during)}",
                f"{r['sync_s']:.0f}",
            ]
        )
    print(
        table(
            [
                "variant",
                "search ms idle (p50 / p95)",
                "search ms during the sync (p50 / p95)",
                "each write's answer (s)",
                "answered 'still syncing'",
                "found right after",
                "sync (s)",
            ],
            rows,
        )
    )
    for r in results:
        print(f"{r['variant']}: last progress seen {r['progress_seen'][-1:] or '-'}")
        undone = while_undone(r["progress_samples"])
        if undone:
            distinct = {(s.get("at"), s.get("files_done")) for s in undone}
            print(
                f"{r['variant']}: {len(undone)} status samples while 0 files were done, over "
                f"{undone[-1]['t'] - undone[0]['t']:.0f} s, {len(distinct)} distinct; "
                f"first {undone[0].get('at')!r}, last {undone[-1].get('at')!r}"
            )
    path = write_result(
        "write_during_sync", {"args": {k: str(v) for k, v in vars(args).items()}, "results": results}
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
