"""No-change resync: how long `Indexer.sync()` takes when nothing changed, in-process and as `ragdown index`.

    .venv/bin/python bench/resync.py [--files 10000] [--rounds 3] [--reps 10] [--cli-reps 7] [--skip-cli]
                                     [--baseline-src DIR]

1. **In-process, 10k files.** Generates `--files` small Markdown notes (1-3 sections of 20-90 words, ~730
   characters on average; a third with frontmatter tags) in 500 `area-XX/topic-YY/` folders of a
   temporary directory and indexes them once with the `hash` embedder. Then `--rounds` fresh worker processes each time `Indexer.sync()` `--reps`
   times with nothing changed (goal: median <= 50 ms), and right after each sync the pieces it calls:
   `walk_markdown` (scandir + one stat per file) and the index's view (`Store.file_stats()` +
   `Store.skipped_states()`, or `file_states()` in a tree that predates `file_stats`). "rest" is the sync
   minus both. CPU time (this process, user + system) is shown too: the machine is shared, and a sync
   that waits for a CPU shows it in wall-clock time only.
   `--baseline-src DIR` runs the same workers with `PYTHONPATH=DIR` (another `src/` tree, e.g. the last
   commit's: `git archive HEAD src | tar -x -C /tmp/base`), interleaved round by round with this tree,
   on the same files and the same index.
2. **As a process.** `ragdown index VAULT --json` run a second time on a copy of the 173-note Obsidian help
   vault, wall-clock from `subprocess.run` (interpreter start-up, imports, loading the embedder, opening
   the store, the sync, closing). With `RAGDOWN_EMBEDDER=hash` the first run builds the index itself; for
   `minilm` the first index is built in-process from `hash` vectors recorded under the name `minilm` (the
   index metadata matches, so the CLI finds every file unchanged) to spare ~3 minutes of embedding that a
   no-change run never repeats. Baselines in the same loop: `python -c pass` and `python -c "import
   ragdown.cli"`. With `--baseline-src`, the two `ragdown index` runs are repeated with that tree too.
   Then where start-up goes: `python -X importtime -c "import ragdown.cli.main"` (cumulative import times of
   a few packages) and `load_embedder("minilm")` timed inside a process.
"""

from __future__ import annotations

import ragdown  # noqa: F401  first, as in every ragdown process: it pins OPENBLAS_NUM_THREADS=1

# isort: split
import argparse
import dataclasses
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from _common import CORPORA, exit_cleanly_on_sigterm, median, percentile, table, write_result
from ragdown.documents import CHUNKER_VERSION
from ragdown.embedders import HashEmbedder
from ragdown.storage.records import IndexMeta
from ragdown.storage.sqlite.store import Store
from ragdown.sync.indexer import Indexer
from ragdown.vault.walk import walk_markdown

GOAL_MS = 50.0
WORDS = (
    "alpha backup cache deploy error fix guide host index job key log mirror node owner page queue restore "
    "schema token user volume worker zone meeting project idea draft review plan release budget design"
).split()


def generate_notes(root: Path, count: int, seed: int = 11) -> int:
    """`count` small notes under `area-XX/topic-YY/`; returns the characters written."""
    rng = random.Random(seed)
    written = 0
    for i in range(count):
        folder = root / f"area-{i % 20:02d}" / f"topic-{(i // 20) % 25:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        parts: list[str] = []
        if i % 3 == 0:
            parts.append(f"---\ntags: [{rng.choice(WORDS)}, {rng.choice(WORDS)}]\n---\n")
        parts.append(f"# Note {i}: {rng.choice(WORDS)} {rng.choice(WORDS)}\n")
        for section in range(rng.randint(1, 3)):
            parts.append(f"## Section {section}\n")
            parts.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 90))) + "\n")
        text = "\n".join(parts)
        (folder / f"note-{i:05d}.md").write_text(text, encoding="utf-8")
        written += len(text)
    return written


@dataclass
class Samples:
    """Milliseconds per repetition."""

    sync: list[float] = dataclasses.field(default_factory=list)
    sync_cpu: list[float] = dataclasses.field(default_factory=list)
    walk: list[float] = dataclasses.field(default_factory=list)
    states: list[float] = dataclasses.field(default_factory=list)

    def extend(self, other: Samples) -> None:
        self.sync += other.sync
        self.sync_cpu += other.sync_cpu
        self.walk += other.walk
        self.states += other.states

    @property
    def rest(self) -> list[float]:
        return [s - w - f for s, w, f in zip(self.sync, self.walk, self.states, strict=True)]


def worker(root: Path, data: Path, files: int, reps: int) -> Samples:
    """Time no-change syncs of an index built earlier (runs in its own process; see `--baseline-src`)."""
    store = Store(data, writable=True)
    try:
        indexer = Indexer(root, store, HashEmbedder(), folders=False)
        view = getattr(store, "file_stats", None) or store.file_states
        indexer.sync()  # warm-up (and the check that the index matches)
        out = Samples()
        for _ in range(reps):
            t0, c0 = time.perf_counter(), time.process_time()
            report = indexer.sync()
            t1, c1 = time.perf_counter(), time.process_time()
            walk_markdown(root, folders=False)
            t2 = time.perf_counter()
            view()
            store.skipped_states()
            t3 = time.perf_counter()
            if report.unchanged != files or report.added or report.updated or report.removed:
                raise SystemExit(f"a no-change sync changed something: {report.as_dict()}")
            out.sync.append((t1 - t0) * 1000)
            out.sync_cpu.append((c1 - c0) * 1000)
            out.walk.append((t2 - t1) * 1000)
            out.states.append((t3 - t2) * 1000)
        return out
    finally:
        store.close()


def run_worker(root: Path, data: Path, files: int, reps: int, src: str | None) -> Samples:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = src
    command = [sys.executable, __file__, "--worker", str(root), str(data), str(files), str(reps)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"worker failed ({done.returncode}): {done.stderr.strip()}")
    return Samples(**json.loads(done.stdout.strip().splitlines()[-1]))


@dataclass(frozen=True)
class Summary:
    tree: str
    samples: int
    sync_ms_median: float
    sync_ms_p95: float
    sync_cpu_ms_median: float
    walk_ms_median: float
    states_ms_median: float
    rest_ms_median: float
    goal_met: bool
    raw: Samples


def summarise(tree: str, s: Samples) -> Summary:
    return Summary(
        tree=tree,
        samples=len(s.sync),
        sync_ms_median=median(s.sync),
        sync_ms_p95=percentile(s.sync, 95),
        sync_cpu_ms_median=median(s.sync_cpu),
        walk_ms_median=median(s.walk),
        states_ms_median=median(s.states),
        rest_ms_median=median(s.rest),
        goal_met=median(s.sync) <= GOAL_MS,
        raw=s,
    )


@dataclass(frozen=True)
class InProcess:
    files: int
    chunks: int
    characters: int
    first_index_s: float
    rounds: int
    reps_per_round: int
    goal_ms: float
    trees: list[Summary]


def bench_in_process(files: int, rounds: int, reps: int, baseline_src: str | None) -> InProcess:
    with tempfile.TemporaryDirectory(prefix="ragdown-bench-resync-") as tmp:
        root, data = Path(tmp) / "docs", Path(tmp) / "data"
        size = generate_notes(root, files)
        store = Store(data, writable=True)
        try:
            embedder = HashEmbedder()
            store.ensure_meta(IndexMeta(embedder.name, embedder.dim, CHUNKER_VERSION))
            start = time.perf_counter()
            first = Indexer(root, store, embedder, folders=False).sync()
            first_s = time.perf_counter() - start
        finally:
            store.close()
        if first.added != files:
            raise SystemExit(f"the first sync added {first.added} files, not {files}")
        trees: dict[str, str | None] = {"this tree": None}
        if baseline_src is not None:
            trees = {f"baseline ({baseline_src})": baseline_src, **trees}
        samples = {name: Samples() for name in trees}
        for _ in range(rounds):
            for name, src in trees.items():
                samples[name].extend(run_worker(root, data, files, reps, src))
    return InProcess(
        files=files,
        chunks=first.chunks,
        characters=size,
        first_index_s=first_s,
        rounds=rounds,
        reps_per_round=reps,
        goal_ms=GOAL_MS,
        trees=[summarise(name, s) for name, s in samples.items()],
    )


class NamedHashEmbedder(HashEmbedder):
    """`hash` vectors under another embedder's name: builds an index a no-change run of that embedder accepts."""

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def name(self) -> str:
        return self._name


@dataclass(frozen=True)
class CliRun:
    label: str
    wall_ms: list[float]
    sync_ms: list[int]
    wall_ms_median: float
    sync_ms_median: float


def _run(command: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()}")
    return elapsed, done.stdout


def bench_cli(reps: int, baseline_src: str | None) -> list[CliRun]:
    ragdown_bin = str(Path(sys.executable).with_name("ragdown"))
    with tempfile.TemporaryDirectory(prefix="ragdown-bench-cli-") as tmp:
        docs = Path(tmp) / "vault"
        shutil.copytree(CORPORA["obsidian-help"], docs)
        base = {k: v for k, v in os.environ.items() if not k.startswith("RAGDOWN_")}
        base["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        envs: dict[str, dict[str, str]] = {}
        for name in ("hash", "minilm"):
            data = Path(tmp) / f"data-{name}"
            envs[name] = {**base, "RAGDOWN_EMBEDDER": name, "RAGDOWN_DATA_DIR": str(data)}
        # hash: the CLI builds its own index (a few seconds).
        _run([ragdown_bin, "index", str(docs), "--json"], envs["hash"])
        # minilm: the same metadata, hash vectors (see the module docstring).
        store = Store(Path(envs["minilm"]["RAGDOWN_DATA_DIR"]), writable=True)
        try:
            fake = NamedHashEmbedder("minilm")
            store.ensure_meta(IndexMeta(fake.name, fake.dim, CHUNKER_VERSION))
            Indexer(docs, store, fake, folders=False).sync()
        finally:
            store.close()
        commands: dict[str, tuple[list[str], dict[str, str]]] = {
            "python -c pass": ([sys.executable, "-c", "pass"], base),
            "python -c 'import ragdown.cli.main'": ([sys.executable, "-c", "import ragdown.cli.main"], base),
            "ragdown index VAULT --json (hash)": ([ragdown_bin, "index", str(docs), "--json"], envs["hash"]),
            "ragdown index VAULT --json (minilm)": (
                [ragdown_bin, "index", str(docs), "--json"],
                envs["minilm"],
            ),
        }
        if baseline_src is not None:
            for name in ("hash", "minilm"):
                commands[f"ragdown index VAULT --json ({name}, baseline)"] = (
                    [ragdown_bin, "index", str(docs), "--json"],
                    {**envs[name], "PYTHONPATH": baseline_src},
                )
        walls: dict[str, list[float]] = {k: [] for k in commands}
        syncs: dict[str, list[int]] = {k: [] for k in commands}
        for _ in range(reps):
            for label, (command, env) in commands.items():
                elapsed, out = _run(command, env)
                walls[label].append(elapsed)
                if "ragdown index" in label:
                    report = json.loads(out.strip().splitlines()[-1])
                    if report["added"] or report["updated"] or report["removed"]:
                        raise SystemExit(f"{label}: the second run changed something: {report}")
                    syncs[label].append(int(report["ms"]))
    return [
        CliRun(
            label, walls[label], syncs[label], median(walls[label]), median([float(s) for s in syncs[label]])
        )
        for label in commands
    ]


IMPORTS = (
    "ragdown.cli",
    "numpy",
    "onnxruntime",
    "httpx",
    "importlib.metadata",
    "markdown_it",
    "tokenizers",
    "yaml",
)
_LOAD_MINILM = (
    "import time, tempfile; from pathlib import Path; from ragdown.embedders import load_embedder; "
    "t = time.perf_counter(); load_embedder('minilm', models_dir=Path(tempfile.gettempdir()), threads=1); "
    "print((time.perf_counter() - t) * 1000)"
)


def bench_startup(reps: int) -> dict[str, float]:
    """Medians (ms): cumulative import times from `python -X importtime -c "import ragdown.cli.main"` for a few
    packages (each where it is first imported), and `load_embedder("minilm")` inside a process."""
    found: dict[str, list[float]] = {name: [] for name in (*IMPORTS, "load_embedder('minilm')")}
    for _ in range(reps):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "import ragdown.cli.main"],
            capture_output=True,
            text=True,
            check=True,
        )
        seen: set[str] = set()
        for line in done.stderr.splitlines():
            parts = line.split("|")
            if len(parts) != 3 or not parts[1].strip().isdigit():
                continue
            name = parts[2].strip()
            if name in found and name not in seen:
                seen.add(name)
                found[name].append(int(parts[1]) / 1000)
        load = subprocess.run(
            [sys.executable, "-c", _LOAD_MINILM], capture_output=True, text=True, check=True
        )
        found["load_embedder('minilm')"].append(float(load.stdout.strip().splitlines()[-1]))
    return {name: median(v) for name, v in found.items() if v}


def main() -> None:
    exit_cleanly_on_sigterm()
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3, help="worker processes per tree")
    parser.add_argument("--reps", type=int, default=10, help="syncs per worker")
    parser.add_argument("--cli-reps", type=int, default=7)
    parser.add_argument("--skip-cli", action="store_true")
    parser.add_argument("--baseline-src", help="a src/ tree to compare with, run with PYTHONPATH")
    parser.add_argument(
        "--worker", nargs=4, metavar=("ROOT", "DATA", "FILES", "REPS"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.worker:
        root, data, files, reps = args.worker
        print(json.dumps(dataclasses.asdict(worker(Path(root), Path(data), int(files), int(reps)))))
        return

    res = bench_in_process(args.files, args.rounds, args.reps, args.baseline_src)
    rows = []
    for t in res.trees:
        rows += [
            [t.tree, "Indexer.sync()", f"{t.sync_ms_median:.1f}", f"{t.sync_ms_p95:.1f}"],
            ["", "  its CPU time", f"{t.sync_cpu_ms_median:.1f}", f"{percentile(t.raw.sync_cpu, 95):.1f}"],
            ["", "  walk_markdown", f"{t.walk_ms_median:.1f}", f"{percentile(t.raw.walk, 95):.1f}"],
            ["", "  index view (states)", f"{t.states_ms_median:.1f}", f"{percentile(t.raw.states, 95):.1f}"],
            ["", "  rest (compare, report)", f"{t.rest_ms_median:.1f}", f"{percentile(t.raw.rest, 95):.1f}"],
        ]
    print(
        f"no-change resync of {res.files} files ({res.chunks} chunks, {res.characters / 1e6:.1f} M characters;"
        f" first index {res.first_index_s:.1f} s with hash), {res.rounds} x {res.reps_per_round} syncs, ms\n"
        + table(["tree", "", "median", "p95"], rows)
    )
    mine = res.trees[-1]
    print(
        f"goal median <= {GOAL_MS:.0f} ms: {'met' if mine.goal_met else 'MISSED'} ({mine.sync_ms_median:.1f} ms)"
    )
    if len(res.trees) == 2:
        base = res.trees[0]
        print(
            f"this tree / baseline: wall {mine.sync_ms_median / base.sync_ms_median:.2f}x,"
            f" CPU {mine.sync_cpu_ms_median / base.sync_cpu_ms_median:.2f}x"
        )
    cli: list[CliRun] = []
    startup: dict[str, float] = {}
    if not args.skip_cli:
        cli = bench_cli(args.cli_reps, args.baseline_src)
        startup = bench_startup(args.cli_reps)
        print(
            f"\nsecond run on the 173-note vault, as a process, {args.cli_reps} interleaved reps, ms\n"
            + table(
                ["command", "wall median", "wall min", "sync ms (report)"],
                [
                    [
                        c.label,
                        f"{c.wall_ms_median:.0f}",
                        f"{min(c.wall_ms):.0f}",
                        f"{c.sync_ms_median:.0f}" if c.sync_ms else "",
                    ]
                    for c in cli
                ],
            )
        )
    if startup:
        print(
            f"\nstart-up pieces, medians of {args.cli_reps} processes, ms (imports: cumulative, -X importtime)\n"
            + table(["piece", "ms"], [[k, f"{v:.0f}"] for k, v in startup.items()])
        )
    path = write_result(
        "resync",
        {
            "in_process": dataclasses.asdict(res),
            "cli": [dataclasses.asdict(c) for c in cli],
            "startup_ms": startup,
        },
    )
    print(f"results: {path}")


if __name__ == "__main__":
    main()
