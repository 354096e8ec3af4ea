"""Throughput of the offline `minilm` embedder: chunks/s and query latency, float vs local int8 copy.

    .venv/bin/python bench/embedder_throughput.py [--texts 500] [--queries 50] [--models-dir DIR]

Each configuration runs in a fresh subprocess (so peak RSS is its own): load, one warm-up batch, then
`--texts` Markdown-like chunks (300-1,500 characters, like ragdown's chunker makes) embedded with
`embed_documents`, then `--queries` single queries. The int8 rows need the `onnx` package to build the
copy once (it is cached in `--models-dir`, a temporary folder by default); without it they are skipped.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

VOCABULARY = (
    "backup restore replica snapshot postgres kafka consumer partition lag offset certificate renewal "
    "deploy rollback redis memory eviction bastion terraform invoice postmortem incident runbook "
    "escalation cluster node pod service ingress latency throughput error retry timeout quota storage "
    "bucket index query cache worker queue schedule cron alert page owner team config secret token"
).split()
HEADINGS = ("Backups", "Restore", "Kafka", "On-call", "TLS", "Deploys", "Redis", "Access", "DNS", "Billing")


def markdown_texts(count: int, seed: int = 7) -> list[str]:
    """Chunk-like texts: a breadcrumb, then prose, a list, sometimes a code block; 300-1,500 characters."""
    rng = random.Random(seed)
    texts = []
    for i in range(count):
        breadcrumb = f"{rng.choice(HEADINGS)} › {rng.choice(HEADINGS)} {i}"
        parts: list[str] = []
        target = rng.randint(300, 1500)
        while sum(len(p) for p in parts) < target:
            kind = rng.random()
            if kind < 0.6:
                words = [rng.choice(VOCABULARY) for _ in range(rng.randint(12, 40))]
                parts.append(" ".join(words).capitalize() + ".")
            elif kind < 0.85:
                parts.append(
                    "\n".join(f"- {rng.choice(VOCABULARY)} {rng.choice(VOCABULARY)}" for _ in range(4))
                )
            else:
                parts.append(f"```bash\nkubectl rollout restart deploy/{rng.choice(VOCABULARY)} -n prod\n```")
        texts.append(breadcrumb + "\n\n" + "\n\n".join(parts)[:target])
    return texts


QUERIES = (
    "how do I restore the postgres backup onto a new replica?",
    "kafka consumer lag keeps growing, what should I check",
    "who is on call this week and how does escalation work",
    "the TLS certificate renewal failed",
    "roll back the last deploy",
)


def worker(args: argparse.Namespace) -> None:
    from ragdown.embedders import CATALOG, OnnxEmbedder, load_embedder

    if args.no_arena:
        model = CATALOG["minilm"]
        assert model.installed is not None
        found = model.installed.find()
        assert found is not None, model.installed.pip_hint
        embedder = OnnxEmbedder("minilm", *found, model.config, threads=args.threads, cpu_mem_arena=False)
    else:
        loaded = load_embedder(
            "minilm", models_dir=Path(args.models_dir), threads=args.threads, quantize=args.quantize
        )
        assert isinstance(loaded, OnnxEmbedder)
        embedder = loaded
    if args.quantize and not embedder.quantized:
        print(json.dumps({"skipped": "no int8 copy (the onnx package is missing, or the check failed)"}))
        return
    texts = markdown_texts(args.texts)
    embedder.embed_documents(texts[:16])  # warm-up
    start = time.perf_counter()
    embedder.embed_documents(texts)
    elapsed = time.perf_counter() - start
    latencies = []
    for i in range(args.queries):
        q0 = time.perf_counter()
        embedder.embed_query(QUERIES[i % len(QUERIES)])
        latencies.append((time.perf_counter() - q0) * 1000)
    report = embedder.quantize_report
    print(
        json.dumps(
            {
                "chunks_per_s": len(texts) / elapsed,
                "query_ms_p50": statistics.median(latencies),
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "min_cosine": report.min_cosine if report and embedder.quantized else None,
                "recipe": report.recipe if report and embedder.quantized else None,
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--texts", type=int, default=500)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--models-dir", default="")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--quantize", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--no-arena", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return

    models_dir = args.models_dir or tempfile.mkdtemp(prefix="ragdown-bench-")
    has_onnx = importlib.util.find_spec("onnx") is not None
    texts = markdown_texts(args.texts)
    print(
        f"minilm, {len(texts)} Markdown-like chunks (mean {statistics.mean(len(t) for t in texts):.0f} chars), "
        f"{args.queries} queries; models dir {models_dir}"
    )
    print(f"{'model':<28}{'threads':>8}{'chunks/s':>10}{'query p50':>11}{'peak RSS':>10}  int8 check")
    rows = [(False, 1, True), (False, 2, True), (True, 1, True), (True, 2, True), (False, 2, False)]
    for quantize, threads, arena in rows:
        label = "int8 local copy" if quantize else "as shipped (PyPI)"
        if not arena:
            label += ", no arena"
        if quantize and not has_onnx:
            print(f"{label:<28}{threads:>8}  skipped: building the copy needs `pip install onnx`")
            continue
        command = [sys.executable, __file__, "--worker", "--threads", str(threads)]
        command += ["--texts", str(args.texts), "--queries", str(args.queries), "--models-dir", models_dir]
        if quantize:
            command.append("--quantize")
        if not arena:
            command.append("--no-arena")
        done = subprocess.run(command, check=True, capture_output=True, text=True)
        result = json.loads(done.stdout.strip().splitlines()[-1])
        if "skipped" in result:
            print(f"{label:<28}{threads:>8}  skipped: {result['skipped']}")
            continue
        check = f"{result['recipe']}, min cosine {result['min_cosine']:.4f}" if quantize else ""
        print(
            f"{label:<28}{threads:>8}{result['chunks_per_s']:>10.1f}{result['query_ms_p50']:>9.2f}ms"
            f"{result['peak_rss_mb']:>8.0f}MB  {check}"
        )


if __name__ == "__main__":
    main()
