"""A stand-in model provider: a real HTTP server on 127.0.0.1 that speaks a provider's wire format
(`openai`: chat completions with tool calls; `anthropic`: Messages with tool_use blocks) and answers from a
script. Each scripted answer is a status, headers and a body, or a `Say` / `Call` the server writes in the
provider's format. Every request is kept, so a test sees exactly what ragdown sent."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass(frozen=True)
class Say:
    """The model answers with text and no tool call."""

    text: str


@dataclass(frozen=True)
class Call:
    """The model calls tools: (name, arguments) pairs, with text of its own beside them."""

    calls: tuple[tuple[str, dict[str, Any]], ...]
    text: str = ""


@dataclass(frozen=True)
class Raw:
    status: int
    body: str
    headers: dict[str, str] = field(default_factory=dict)


Answer = Say | Call | Raw


def wire(provider: str, answer: Say | Call, n: int) -> dict[str, Any]:
    usage_in, usage_out = 100 + n, 10
    if provider == "openai":
        message: dict[str, Any] = {"role": "assistant", "content": answer.text or None}
        if isinstance(answer, Call):
            message["tool_calls"] = [
                {
                    "id": f"call_{n}_{i}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
                for i, (name, args) in enumerate(answer.calls)
            ]
        return {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if isinstance(answer, Call) else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": usage_in,
                "completion_tokens": usage_out,
                "total_tokens": usage_in + usage_out,
            },
        }
    blocks: list[dict[str, Any]] = [{"type": "text", "text": answer.text}] if answer.text else []
    if isinstance(answer, Call):
        blocks += [
            {"type": "tool_use", "id": f"toolu_{n}_{i}", "name": name, "input": args}
            for i, (name, args) in enumerate(answer.calls)
        ]
    return {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "content": blocks,
        "stop_reason": "tool_use" if isinstance(answer, Call) else "end_turn",
        "usage": {"input_tokens": usage_in, "output_tokens": usage_out},
    }


class Provider:
    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.script: list[Answer] = []
        self.requests: list[dict[str, Any]] = []  # {"path", "headers", "body"}
        self.default: Answer | None = None  # answered when the script is used up
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                server.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                answer = server.script.pop(0) if server.script else server.default
                if answer is None:
                    raw = Raw(500, '{"error": "the script is used up"}')
                elif isinstance(answer, Raw):
                    raw = answer
                else:
                    raw = Raw(200, json.dumps(wire(server.provider, answer, len(server.requests))))
                data = raw.body.encode()
                self.send_response(raw.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in raw.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests]

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture(params=["openai", "anthropic"])
def provider(request: pytest.FixtureRequest) -> Iterator[Provider]:
    server = Provider(request.param)
    yield server
    server.close()
