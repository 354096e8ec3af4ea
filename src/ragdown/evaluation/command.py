"""`ragdown eval DIR --questions Q.jsonl`: index a folder into a temporary index and grade a question set.

The folder is only read; the index goes to a temporary data dir (or `--data-dir`, which must lie outside
the folder). Every question runs through the real search path (see `runner.py`); the hits can be written
in `grade.py`'s RESULTS format (`--results`), and the metrics are computed with its rules (`metrics.py`).
`--hook` also runs every question through `ragdown_context`'s gates over a sweep of `min_ratio` values.

Gold may also be a title path (`gold_title_path`: a list of titles or `"Title > H2 > H3"`, with or without
`gold_path` and `gold_lines`), resolved to lines against DIR's own outline (`gold.py`). Every metric is
reported overall, per type and per language (a question's `lang` / `language`, else detected: kana `ja`,
Hangul `ko`, Han `zh`, otherwise `en`), with the evidence: the lines the top-k hits cite, and the share of
them inside the gold range (evidence precision). `--max-evidence-lines N`: a hit over N lines does not count
as a hit (`grade.py --max-span N`); the evidence still counts its lines.

`--mode agent --model P:M` (MarkIndex's agent mode; `evaluation/agent.py`): a model walks the markindex tools
for each question (`retrieve`, at most `--max-steps` calls and `--max-input-tokens`, `--rpm` / `--tpm` shared
by the whole run) and its evidence is graded, with hit rate, steps and tokens overall and per language.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ragdown.core.config import Settings
from ragdown.evaluation.metrics import (
    MODES,
    RATIO_SWEEP,
    EvidenceScores,
    Mode,
    Report,
    Rule,
    Scores,
    grade,
    write_results,
)
from ragdown.evaluation.questions import Question, load_questions

if TYPE_CHECKING:
    from ragdown.evaluation.agent import AgentRun

DEFAULT_TOP_K = 10


def add_parser(sub: Any) -> None:
    """The `eval` subcommand's arguments (`sub` is the parser's subparsers action)."""
    ev = sub.add_parser(
        "eval",
        help="grade retrieval on a folder with a question set (indexes into a temporary data dir)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ev.add_argument("dir", type=Path, help="the folder of Markdown (only read)")
    ev.add_argument("--questions", type=Path, required=True, help="questions JSONL (grade.py's format)")
    ev.add_argument(
        "--mode",
        choices=(*MODES, "bm25", "agent"),
        default="hybrid",
        help="bm25: MarkIndex's name for lexical; agent: a model walks MarkIndex's tools (retrieve) for "
        "each question and its evidence is graded (needs --model or RAGDOWN_LLM_MODEL)",
    )
    ev.add_argument(
        "--model",
        metavar="P:M",
        help="--mode agent's model: openai:<model> or anthropic:<model> (default RAGDOWN_LLM_MODEL)",
    )
    ev.add_argument("--rpm", type=int, metavar="N", help="--mode agent: at most N model requests in any 60 s")
    ev.add_argument(
        "--tpm", type=int, metavar="N", help="--mode agent: at most N estimated input tokens in any 60 s"
    )
    ev.add_argument(
        "--max-steps", type=int, default=12, metavar="N", help="--mode agent: most model calls a question"
    )
    ev.add_argument(
        "--max-input-tokens",
        type=int,
        default=200_000,
        metavar="N",
        help="--mode agent: stop a question past this many input tokens",
    )
    ev.add_argument(
        "--top-k", type=int, default=DEFAULT_TOP_K, help=f"hits per question (default {DEFAULT_TOP_K})"
    )
    ev.add_argument("--results", type=Path, help="write the hits here in grade.py's RESULTS format")
    ev.add_argument("--json", action="store_true", help="print the report as JSON")
    ev.add_argument("--out", type=Path, metavar="FILE", help="also write the report as JSON to FILE")
    ev.add_argument(
        "--db", dest="data_dir", type=Path, default=argparse.SUPPRESS, help="the same as --data-dir"
    )
    ev.add_argument("--rule", choices=("lines", "heading"), default="lines", help="what a correct hit is")
    ev.add_argument("--types", default="", help="comma-separated question types to keep (default: all)")
    ev.add_argument("--embedder", help="embedder name (default: RAGDOWN_EMBEDDER)")
    ev.add_argument("--quantize", action="store_true", help="use the embedder's per-channel int8 copy")
    ev.add_argument("--data-dir", type=Path, help="keep the index here (outside DIR) instead of a temp dir")
    ev.add_argument("--max-per-document", type=int, help="sections per document (default: the setting)")
    ev.add_argument("--follow-links", type=int, help="hits whose wikilinks to follow (default: the setting)")
    ev.add_argument(
        "--fusion",
        choices=("rrf", "score"),
        help="rank fusion as the spec says, or score fusion (default: RAGDOWN_FUSION)",
    )
    ev.add_argument(
        "--max-evidence-lines",
        type=int,
        metavar="N",
        help="a hit over N lines does not count as a hit (top-1, recall, MRR; grade.py's --max-span)",
    )
    ev.add_argument("--hook", action="store_true", help="also run the hook's gates over a min_ratio sweep")
    ev.add_argument("--min-score", type=float, help="the hook's min_score (default: the embedder's floor)")
    ev.add_argument(
        "--ratios",
        default=",".join(f"{r:g}" for r in RATIO_SWEEP),
        help="the hook's min_ratio sweep (default %(default)s)",
    )


def _inside(path: Path, root: Path) -> bool:
    path, root = path.expanduser().resolve(), root.resolve()
    return path == root or root in path.parents


@contextlib.contextmanager
def _progress(enabled: bool) -> Iterator[Callable[[str, int, int], None]]:
    """A rich progress bar on stderr (a terminal only); the callback takes (phase, done, total)."""
    if not enabled:
        yield lambda phase, done, total: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description:<10}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        tasks: dict[str, Any] = {}

        def show(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = bar.add_task(phase, total=total or None)
            bar.update(tasks[phase], completed=done, total=total or None)

        yield show


def run(settings: Settings, args: argparse.Namespace) -> int:
    from ragdown.embedders import load_or_offline
    from ragdown.engine.runtime import Runtime
    from ragdown.evaluation.gold import resolve_questions
    from ragdown.evaluation.runner import indexed, open_embedder, run_hook, run_questions
    from ragdown.search.hybrid import SearchOptions, fusion_for
    from ragdown.storage.filter_sql import FileFilter

    docs: Path = args.dir
    agent = args.mode == "agent"
    model_spec = (args.model or settings.llm_model) if agent else None
    if agent and not model_spec:
        print(
            "ragdown eval: --mode agent needs a model: give --model <provider>:<model> (openai:<model>, "
            "anthropic:<model>) or set RAGDOWN_LLM_MODEL; nothing is sent anywhere without one",
            file=sys.stderr,
        )
        return 2
    if not agent and (args.model or args.rpm or args.tpm):
        print("ragdown eval: --model, --rpm and --tpm go with --mode agent", file=sys.stderr)
        return 2
    if any(v is not None and v < 1 for v in (args.rpm, args.tpm, args.max_steps, args.max_input_tokens)):
        print(
            "ragdown eval: --rpm, --tpm, --max-steps and --max-input-tokens must be positive", file=sys.stderr
        )
        return 2
    if model_spec:
        from ragdown.llm.providers import parse_spec

        parse_spec(model_spec)  # a clear refusal before anything is indexed
    if args.mode == "bm25":
        args.mode = "lexical"
    if not docs.is_dir():
        print(f"ragdown eval: not a directory: {docs}", file=sys.stderr)
        return 2
    if args.data_dir is not None and _inside(args.data_dir, docs):
        print("ragdown eval: --data-dir must lie outside the folder being evaluated", file=sys.stderr)
        return 2
    if args.out is not None and _inside(args.out, docs):
        print("ragdown eval: --out must lie outside the folder being evaluated", file=sys.stderr)
        return 2
    try:
        ratios = [float(r) for r in args.ratios.split(",") if r.strip()]
    except ValueError:
        print(f"ragdown eval: --ratios must be numbers separated by commas: {args.ratios!r}", file=sys.stderr)
        return 2
    if args.max_evidence_lines is not None and args.max_evidence_lines < 1:
        print("ragdown eval: --max-evidence-lines must be at least 1", file=sys.stderr)
        return 2
    try:
        questions = resolve_questions(load_questions(args.questions, args.types.split(",")), docs)
    except (OSError, ValueError) as err:
        print(f"ragdown eval: {err}", file=sys.stderr)
        return 2
    if not questions:
        print(f"ragdown eval: no questions in {args.questions}", file=sys.stderr)
        return 2
    overrides: dict[str, Any] = {"watch": False}
    if args.max_per_document is not None:
        overrides["max_per_document"] = max(0, args.max_per_document)
    if args.follow_links is not None:
        overrides["follow_links"] = max(0, args.follow_links)
    if args.fusion is not None:
        overrides["fusion"] = args.fusion
    settings = replace(settings, **overrides)
    # As the servers do: the default that cannot load (offline) gives way to the installed offline model,
    # said here and in the report's `embedder`; one named with --embedder or RAGDOWN_EMBEDDER never does.
    loaded = load_or_offline(
        args.embedder or settings.embedder,
        lambda name: open_embedder(settings, name, quantize=args.quantize),
        chosen=bool(args.embedder) or settings.embedder_chosen,
    )
    if loaded.embedder is None:
        print(f"ragdown eval: {loaded.reason}", file=sys.stderr)
        return 2
    if loaded.explained is not None:
        print(f"ragdown eval: {loaded.explained}", file=sys.stderr)
    embedder = loaded.embedder
    rule = cast(Rule, args.rule)
    mode = cast(Mode, "lexical" if agent else args.mode)
    top_k = max(1, args.top_k)
    evidence_k = None if agent else top_k  # an agent's evidence is all it cites
    opts = SearchOptions(
        top_k=top_k,
        max_per_document=settings.max_per_document,
        follow_links=settings.follow_links,
        fusion=fusion_for(settings.fusion, embedder.name),
    )
    out: dict[str, Any] = {
        "dir": str(docs.resolve()),
        "questions": str(args.questions),
        "n": len(questions),
        "mode": "agent" if agent else mode,
        "top_k": top_k,
        "rule": rule,
        "embedder": embedder.name,
        "quantized": bool(getattr(embedder, "quantized", False)),
        "max_per_document": settings.max_per_document,
        "follow_links": settings.follow_links,
        "fusion": opts.fusion,
        "evidence_k": evidence_k,
        "max_evidence_lines": args.max_evidence_lines,
    }
    interactive = not args.json and sys.stderr.isatty()
    with (
        _progress(interactive) as show,
        indexed(settings, docs, embedder, args.data_dir, lambda d, t: show("indexing", d, t)) as (
            engine,
            report,
        ),
    ):
        searcher = engine.require_searcher()
        files, chunks = engine.require_store().counts(FileFilter())
        out["index"] = {"files": files, "chunks": chunks, "ms": report.get("ms"), "sync": report}
        if model_spec:
            from ragdown.evaluation.agent import agent_report, per_question

            agent_run = run_agent_questions(settings, engine, model_spec, args, questions, show)
            results, seconds = agent_run.results(), agent_run.seconds
        else:
            ran = run_questions(
                searcher, questions, mode, opts, progress=lambda d, t: show("searching", d, t)
            )
            results, seconds = ran.results(), ran.seconds
        graded = grade(questions, results, rule, max_lines=args.max_evidence_lines, evidence_k=evidence_k)
        out["search_seconds"] = round(seconds, 3)
        out["metrics"] = graded.as_dict()
        out["ranks"] = graded.ranks
        out["per_question"] = {
            q.id: {
                "type": q.type,
                "lang": graded.langs[q.id],
                "answerable": q.answerable,
                "rank": graded.ranks.get(q.id),
                **graded.evidence[q.id].as_dict(),
                **({"agent": per_question(agent_run.runs[q.id])} if model_spec else {}),
            }
            for q in questions
        }
        if model_spec:
            out["agent"] = agent_report(questions, agent_run, graded, model_spec)
        if args.results is not None:
            write_results(args.results, results)
            out["results"] = str(args.results)
        if args.hook:
            runtime = Runtime(settings, engine)
            call = {"min_score": args.min_score} if args.min_score is not None else {}
            base, rows = run_hook(
                runtime, questions, rule, ratios, call, progress=lambda d, t: show("hook", d, t)
            )
            out["hook"] = {
                "top_k": base.top_k,
                "min_score": base.min_score,
                "max_chars": base.max_chars,
                "max_per_document": runtime.max_per_document,
                "rows": [r.as_dict() for r in rows],
            }
    if args.out is not None:
        args.out.write_text(json.dumps(out, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(out, ensure_ascii=False, indent=2))
    else:
        print(render_text(out, graded, out.get("hook")))
    return 0


def run_agent_questions(
    settings: Settings,
    engine: Any,
    model_spec: str,
    args: argparse.Namespace,
    questions: Sequence[Question],
    show: Callable[[str, int, int], None],
) -> AgentRun:
    """`--mode agent`: every question through `retrieve` with one model and one rate limit for the run."""
    from ragdown.access.scope import Scope
    from ragdown.engine.runtime import Runtime
    from ragdown.evaluation.agent import run_agent
    from ragdown.llm.providers import open_model
    from ragdown.llm.ratelimit import RateLimiter
    from ragdown.tools.context import ToolContext

    model = open_model(
        model_spec,
        base_url=settings.llm_url,
        api_key=settings.llm_api_key,
        limiter=RateLimiter(args.rpm, args.tpm),
    )
    try:
        ctx = ToolContext(runtime=Runtime(settings, engine), scope=Scope(root=engine.root, folder=""))
        return run_agent(
            ctx,
            model,
            questions,
            max_steps=args.max_steps,
            max_input_tokens=args.max_input_tokens,
            progress=lambda d, t: show("asking", d, t),
        )
    finally:
        model.close()


def _pct(x: float) -> str:
    return f"{100 * x:6.1f}%"


def _row(s: Scores, e: EvidenceScores) -> str:
    prec = _pct(e.precision) if e.n_precision else "-"
    return f"{s.n:>5}{_pct(s.top1):>8}{_pct(s.r5):>8}{_pct(s.r8):>8}{s.mrr:>8.3f}{e.lines:>8.1f}{prec:>8}"


def render_text(out: dict[str, Any], graded: Report, hook: dict[str, Any] | None) -> str:
    lines = [
        f"ragdown eval {out['dir']}: {out['n']} questions, {out['mode']}, top-k {out['top_k']}, "
        f"embedder {out['embedder']}{' (int8)' if out['quantized'] else ''}, rule {out['rule']}",
    ]
    ix = out["index"]
    n_searched = out["n"] or 1
    lines.append(
        f"index: {ix['files']} files, {ix['chunks']} chunks (sync {ix['ms'] / 1000:.1f} s); "
        f"searches {out['search_seconds']:.1f} s ({1000 * out['search_seconds'] / n_searched:.0f} ms a question)"
    )
    ev = graded.evidence_overall
    k = graded.evidence_k
    cited_by = "the first hit" if k == 1 else f"the first {k} hits" if k else "every hit"
    lines.append(
        f"evidence: the lines cited by {cited_by} (the top-k), per answerable question: "
        f"{ev.lines:.1f} lines, {100 * ev.precision:.1f}% of them inside the gold lines "
        f"(mean per question; pooled {100 * ev.pooled_precision:.1f}%)"
    )
    if graded.max_lines:
        lines.append(
            f"--max-evidence-lines {graded.max_lines}: a hit over {graded.max_lines} lines does not count "
            "as a hit (top1, r@5, r@8, mrr); the evidence columns count every hit"
        )
    lines.append("")
    header = f"{'n':>5}{'top1':>8}{'r@5':>8}{'r@8':>8}{'mrr':>8}{'lines':>8}{'prec':>8}"
    lines.append(f"{'type':<22}{header}")
    rows = [
        *((t, s, graded.evidence_by_type[t]) for t, s in graded.by_type.items()),
        ("ALL answerable", graded.overall, ev),
    ]
    for name, s, e in rows:
        if s.n:
            lines.append(f"{name:<22}{_row(s, e)}")
    if graded.by_lang:
        lines.append("")
        lines.append(f"{'language':<22}{header}{'no answer: n':>14}{'with hits':>11}{'lines':>8}")
        for lang, group in graded.by_lang.items():
            row = _row(group.scores, group.evidence) if group.scores.n else f"{0:>5}" + f"{'-':>8}" * 6
            no = group.no_gold
            tail = f"{no.n:>14}{no.with_hits:>11}{group.no_gold_lines:>8.1f}" if no.n else ""
            lines.append(f"{lang:<22}{row}{tail}")
    if graded.no_gold:
        lines.append("")
        lines.append(f"{'no answer (type)':<22}{'n':>5}{'with hits':>11}{'mean hits':>11}")
        for name, g in graded.no_gold.items():
            lines.append(f"{name:<22}{g.n:>5}{g.with_hits:>11}{g.mean_hits:>11.2f}")
    if "agent" in out:
        from ragdown.evaluation.agent import render_agent

        lines.extend(render_agent(out["agent"]))
    if hook is not None:
        lines.append("")
        lines.append(
            f"hook: top_k {hook['top_k']}, min_score {hook['min_score']:g}, max_chars {hook['max_chars']}, "
            f"max_per_document {hook['max_per_document']}"
        )
        lines.append(
            f"{'min_ratio':>9}{'recall':>9}{'chunks/q':>10}{'wrong/q':>9}  no answer: prompts (chunks)"
        )
        for row in hook["rows"]:
            no_gold = ", ".join(
                f"{t} {v['prompts_with_injections']}/{v['n']} ({v['chunks_injected']})"
                for t, v in row["no_gold"].items()
            )
            lines.append(
                f"{row['min_ratio']:>9g}{_pct(row['recall']):>9}{row['chunks_per_prompt']:>10.2f}"
                f"{row['wrong_per_prompt']:>9.2f}  {no_gold or '-'}"
            )
    return "\n".join(lines)
