"""Chat models as `<provider>:<model>`: `openai:<model>` for any OpenAI-compatible `POST /chat/completions`
(OpenAI, Ollama, llama.cpp's server, vLLM) and `anthropic:<model>` for the Messages API (`POST /messages`),
both with tool calling.

One neutral conversation (`Turn`s) is written in either wire format and each answer read back into a
`Reply`. A 429 or 5xx (or an unreachable endpoint) is retried `MAX_RETRIES` times, after the answer's
`retry-after-ms` / `retry-after` where it gives one (at most 60 s), else after 1 s, 2 s. Anything else,
or an answer not in the format, is an `LLMError` saying what came back. Every request first takes its place
in the run's `RateLimiter` (its input tokens estimated from the prompt text, as MarkIndex does).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ragdown.core.errors import Refusal
from ragdown.documents.tree import estimate_tokens

from .ratelimit import RateLimiter

if TYPE_CHECKING:
    import httpx

PROVIDERS = ("openai", "anthropic")
DEFAULT_URLS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com/v1"}
ANTHROPIC_VERSION = "2023-06-01"
MAX_RETRIES = 2
MAX_RETRY_WAIT_S = 60.0
TIMEOUT_S = 120.0
MAX_OUTPUT_TOKENS = 1024


class LLMError(Refusal):
    """The model's endpoint could not be used: unreachable, refused, or an answer not in its format."""

    def __init__(self, message: str) -> None:
        super().__init__("unavailable", message, "LLM_ERROR")


@dataclass(frozen=True)
class ToolDef:
    name: str
    description: str
    schema: dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Turn:
    """One message of the conversation: the user's text, the assistant's text and tool calls, or the result
    of one tool call (`tool_call_id`)."""

    role: str  # "user", "assistant" or "tool"
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str = ""


@dataclass
class Reply:
    text: str
    tool_calls: list[ToolCall]
    input_tokens: int
    output_tokens: int
    finish: str  # the provider's own reason: stop, tool_calls, end_turn, tool_use, length, ...


@dataclass
class Usage:
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, reply: Reply) -> None:
        self.requests += 1
        self.input_tokens += reply.input_tokens
        self.output_tokens += reply.output_tokens

    def as_dict(self) -> dict[str, int]:
        return {
            "requests": self.requests,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.input_tokens + self.output_tokens,
        }


class ChatModel(Protocol):
    @property
    def name(self) -> str: ...

    def complete(self, system: str, turns: Sequence[Turn], tools: Sequence[ToolDef] = ()) -> Reply: ...

    def close(self) -> None: ...


def parse_spec(spec: str) -> tuple[str, str]:
    """`<provider>:<model>` as its two parts; a clear error for anything else."""
    provider, sep, model = spec.partition(":")
    if not sep or provider not in PROVIDERS or not model.strip():
        raise Refusal(
            "invalid",
            f"a model is named <provider>:<model>, with provider openai (any OpenAI-compatible endpoint: "
            f"OpenAI, Ollama, llama.cpp, vLLM) or anthropic, such as openai:gpt-4o-mini or "
            f"anthropic:claude-sonnet-4-5; not {spec!r}",
        )
    return provider, model.strip()


def prompt_tokens(system: str, turns: Sequence[Turn]) -> int:
    """The estimated input tokens of a request: its prompt text (tool definitions not counted)."""
    text = system + "".join(
        t.text + "".join(json.dumps(c.arguments, ensure_ascii=False) for c in t.tool_calls) for t in turns
    )
    return estimate_tokens(text)


@dataclass
class _Http:
    provider: str
    model: str
    url: str
    headers: dict[str, str]
    limiter: RateLimiter
    transport: httpx.BaseTransport | None
    sleep: Callable[[float], None]
    client: httpx.Client = field(init=False)

    def __post_init__(self) -> None:
        import httpx

        self.client = httpx.Client(
            timeout=httpx.Timeout(TIMEOUT_S), headers=self.headers, transport=self.transport
        )

    def post(self, body: dict[str, Any], tokens: int) -> dict[str, Any]:
        import httpx

        self.limiter.acquire(tokens)
        attempt = 0
        while True:
            try:
                response = self.client.post(self.url, json=body)
            except httpx.HTTPError as exc:
                if attempt >= MAX_RETRIES:
                    raise LLMError(
                        f"could not reach the model endpoint {self.url}: {exc or type(exc).__name__}"
                    ) from exc
                self.sleep(float(2**attempt))
                attempt += 1
                continue
            status = response.status_code
            if (status == 429 or status >= 500) and attempt < MAX_RETRIES:
                self.sleep(_retry_wait(response, attempt))
                attempt += 1
                continue
            if status != 200:
                text = " ".join(response.text.split())[:300]
                raise LLMError(
                    f"the model endpoint {self.url} answered HTTP {status} for {self.model!r}: {text}"
                )
            try:
                payload = response.json()
            except ValueError as exc:
                raise LLMError(
                    f"the model endpoint {self.url} answered 200 with a body that is not JSON"
                ) from exc
            if not isinstance(payload, dict):
                raise LLMError(f"the model endpoint {self.url} answered 200 with JSON that is not an object")
            return payload


def _retry_wait(response: httpx.Response, attempt: int) -> float:
    for header, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = response.headers.get(header)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            continue  # an HTTP date: the backoff below
        if seconds >= 0:
            return min(seconds, MAX_RETRY_WAIT_S)
    return float(2**attempt)


def _malformed(url: str, detail: str) -> LLMError:
    return LLMError(f"the model endpoint {url} answered 200 but not in its format: {detail}")


def _arguments(raw: Any, url: str) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw or "{}")
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
    raise _malformed(url, f"tool call arguments that are not a JSON object: {str(raw)[:100]!r}")


def _usage(payload: dict[str, Any]) -> dict[str, Any]:
    usage = payload.get("usage")
    return usage if isinstance(usage, dict) else {}


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


class OpenAIChat:
    """`POST {base}/chat/completions` with `tools` of type function."""

    def __init__(self, model: str, http: _Http) -> None:
        self._model = model
        self._http = http

    @property
    def name(self) -> str:
        return f"openai:{self._model}"

    def close(self) -> None:
        self._http.client.close()

    def complete(self, system: str, turns: Sequence[Turn], tools: Sequence[ToolDef] = ()) -> Reply:
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
        for t in turns:
            if t.role == "tool":
                messages.append({"role": "tool", "tool_call_id": t.tool_call_id, "content": t.text})
            elif t.role == "assistant":
                m: dict[str, Any] = {"role": "assistant", "content": t.text or None}
                if t.tool_calls:
                    m["tool_calls"] = [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {
                                "name": c.name,
                                "arguments": json.dumps(c.arguments, ensure_ascii=False),
                            },
                        }
                        for c in t.tool_calls
                    ]
                messages.append(m)
            else:
                messages.append({"role": "user", "content": t.text})
        body: dict[str, Any] = {"model": self._model, "messages": messages}
        if tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {"name": d.name, "description": d.description, "parameters": d.schema},
                }
                for d in tools
            ]
        payload = self._http.post(body, prompt_tokens(system, turns))
        url = self._http.url
        choices = payload.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise _malformed(url, "no `choices` list")
        message = choices[0].get("message")
        if not isinstance(message, dict):
            raise _malformed(url, "no `message` in the first choice")
        content = message.get("content")
        calls: list[ToolCall] = []
        raw_calls = message.get("tool_calls") or []
        if not isinstance(raw_calls, list):
            raise _malformed(url, "`tool_calls` is not a list")
        for i, c in enumerate(raw_calls):
            fn = c.get("function") if isinstance(c, dict) else None
            if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
                raise _malformed(url, "a tool call without a function name")
            calls.append(
                ToolCall(str(c.get("id") or f"call_{i}"), fn["name"], _arguments(fn.get("arguments"), url))
            )
        usage = _usage(payload)
        return Reply(
            text=content if isinstance(content, str) else "",
            tool_calls=calls,
            input_tokens=_count(usage.get("prompt_tokens")),
            output_tokens=_count(usage.get("completion_tokens")),
            finish=str(choices[0].get("finish_reason") or ""),
        )


class AnthropicChat:
    """`POST {base}/messages` (the Messages API) with `tools` and `tool_use` / `tool_result` blocks."""

    def __init__(self, model: str, http: _Http) -> None:
        self._model = model
        self._http = http

    @property
    def name(self) -> str:
        return f"anthropic:{self._model}"

    def close(self) -> None:
        self._http.client.close()

    def complete(self, system: str, turns: Sequence[Turn], tools: Sequence[ToolDef] = ()) -> Reply:
        messages: list[dict[str, Any]] = []
        for t in turns:
            if t.role == "tool":
                block = {"type": "tool_result", "tool_use_id": t.tool_call_id, "content": t.text}
                if messages and messages[-1]["role"] == "user" and isinstance(messages[-1]["content"], list):
                    messages[-1]["content"].append(block)  # one user turn holds every result of a step
                else:
                    messages.append({"role": "user", "content": [block]})
            elif t.role == "assistant":
                blocks: list[dict[str, Any]] = [{"type": "text", "text": t.text}] if t.text else []
                blocks += [
                    {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
                    for c in t.tool_calls
                ]
                messages.append({"role": "assistant", "content": blocks})
            else:
                messages.append({"role": "user", "content": t.text})
        body: dict[str, Any] = {"model": self._model, "max_tokens": MAX_OUTPUT_TOKENS, "messages": messages}
        if system:
            body["system"] = system
        if tools:
            body["tools"] = [
                {"name": d.name, "description": d.description, "input_schema": d.schema} for d in tools
            ]
        payload = self._http.post(body, prompt_tokens(system, turns))
        url = self._http.url
        content = payload.get("content")
        if not isinstance(content, list):
            raise _malformed(url, "no `content` list")
        texts: list[str] = []
        calls: list[ToolCall] = []
        for block in content:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif kind == "tool_use":
                if not isinstance(block.get("name"), str):
                    raise _malformed(url, "a tool_use block without a name")
                calls.append(
                    ToolCall(
                        str(block.get("id") or f"toolu_{len(calls)}"),
                        block["name"],
                        _arguments(block.get("input"), url),
                    )
                )
        usage = _usage(payload)
        return Reply(
            text="".join(texts),
            tool_calls=calls,
            input_tokens=_count(usage.get("input_tokens")),
            output_tokens=_count(usage.get("output_tokens")),
            finish=str(payload.get("stop_reason") or ""),
        )


def open_model(
    spec: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    limiter: RateLimiter | None = None,
    transport: httpx.BaseTransport | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> ChatModel:
    """The chat model `spec` names, at `base_url` (the provider's own by default) with `api_key`."""
    provider, model = parse_spec(spec)
    base = (base_url or DEFAULT_URLS[provider]).rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise Refusal("invalid", f"the model endpoint must be an http(s) URL, not {base!r}")
    headers = {"Content-Type": "application/json"}
    if provider == "openai":
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        http = _Http(
            provider, model, base + "/chat/completions", headers, limiter or RateLimiter(), transport, sleep
        )
        return OpenAIChat(model, http)
    headers["anthropic-version"] = ANTHROPIC_VERSION
    if api_key:
        headers["x-api-key"] = api_key
    http = _Http(provider, model, base + "/messages", headers, limiter or RateLimiter(), transport, sleep)
    return AnthropicChat(model, http)
