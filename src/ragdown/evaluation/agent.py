"""`ragdown eval --mode agent --model P:M`: MarkIndex's agent-mode evaluation. Each question goes through the
`retrieve` loop (`toolsets/markindex_loop.py`: the model walks the markindex tools over the indexed folder) and its
evidence, in the order found, is graded as the hits are in the other modes (`metrics.grade`, every piece
cited: no top-k). Beside the usual metrics the report carries MarkIndex's agent fields, overall and per
language: hit rate (a piece of evidence lands on the gold), mean steps (model calls) and tool calls, mean
input / output tokens, and why the runs stopped; per question its steps, tokens and stop reason.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ragdown.evaluation.metrics import Report
from ragdown.evaluation.questions import Question, ResultHit
from ragdown.llm.providers import ChatModel
from ragdown.tools.context import ToolContext
from ragdown.toolsets.markindex_loop import Retrieval, retrieve


@dataclass
class AgentRun:
    runs: dict[str, Retrieval]
    seconds: float

    def results(self) -> dict[str, list[ResultHit]]:
        return {
            qid: [
                ResultHit(e.doc_path, e.start_line, e.end_line, " > ".join(e.title_path)) for e in r.evidence
            ]
            for qid, r in self.runs.items()
        }


def run_agent(
    ctx: ToolContext,
    model: ChatModel,
    questions: Sequence[Question],
    *,
    max_steps: int,
    max_input_tokens: int,
    progress: Callable[[int, int], None] | None = None,
) -> AgentRun:
    """Every question through `retrieve`, one after another (one rate limit, the model's, for them all)."""
    runs: dict[str, Retrieval] = {}
    started = time.perf_counter()
    for i, q in enumerate(questions, 1):
        runs[q.id] = retrieve(ctx, model, q.question, max_steps=max_steps, max_input_tokens=max_input_tokens)
        if progress is not None:
            progress(i, len(questions))
    return AgentRun(runs, time.perf_counter() - started)


def _group(questions: Sequence[Question], run: AgentRun, graded: Report) -> dict[str, Any]:
    n = len(questions)
    answerable = [q for q in questions if q.golds]
    hits = sum(1 for q in answerable if graded.ranks.get(q.id) is not None)
    rs = [run.runs[q.id] for q in questions]

    def mean(values: Sequence[int]) -> float:
        return sum(values) / len(values) if values else 0.0

    return {
        "n": n,
        "answerable": len(answerable),
        "hits": hits,
        "hit_rate": hits / len(answerable) if answerable else 0.0,
        "steps": mean([r.steps for r in rs]),
        "tool_calls": mean([r.tool_calls for r in rs]),
        "input_tokens": mean([r.usage.input_tokens for r in rs]),
        "output_tokens": mean([r.usage.output_tokens for r in rs]),
        "total_input_tokens": sum(r.usage.input_tokens for r in rs),
        "total_output_tokens": sum(r.usage.output_tokens for r in rs),
        "evidence_pieces": mean([len(r.evidence) for r in rs]),
        "stop_reasons": dict(sorted(Counter(r.stop_reason for r in rs).items())),
    }


def agent_report(questions: Sequence[Question], run: AgentRun, graded: Report, model: str) -> dict[str, Any]:
    """The agent fields, overall and per language (the language `grade` gave each question)."""
    by_lang: dict[str, list[Question]] = defaultdict(list)
    for q in questions:
        by_lang[graded.langs.get(q.id, q.lang)].append(q)
    return {
        "model": model,
        "seconds": round(run.seconds, 3),
        "overall": _group(questions, run, graded),
        "by_lang": {lang: _group(qs, run, graded) for lang, qs in sorted(by_lang.items())},
    }


def per_question(run: Retrieval) -> dict[str, Any]:
    return {
        "steps": run.steps,
        "tool_calls": run.tool_calls,
        "usage": run.usage.as_dict(),
        "stop_reason": run.stop_reason,
        "evidence": [e.cite() for e in run.evidence],
    }


def render_agent(agent: dict[str, Any]) -> list[str]:
    lines = [
        "",
        f"agent ({agent['model']}): {agent['seconds']:.1f} s",
        f"{'language':<22}{'n':>5}{'hit rate':>10}{'steps':>8}{'tools':>8}{'in tok':>10}{'out tok':>9}",
    ]
    rows = [*agent["by_lang"].items(), ("ALL", agent["overall"])]
    for name, g in rows:
        lines.append(
            f"{name:<22}{g['n']:>5}{100 * g['hit_rate']:>9.1f}%{g['steps']:>8.1f}{g['tool_calls']:>8.1f}"
            f"{g['input_tokens']:>10.0f}{g['output_tokens']:>9.0f}"
        )
    stops = ", ".join(f"{k} {v}" for k, v in agent["overall"]["stop_reasons"].items())
    lines.append(f"stopped: {stops}")
    return lines
