"""Both wire formats against a local stand-in provider: tool calls out and back, usage, retries after
`retry-after` on 429 and 5xx (the waits recorded, never slept), and malformed answers refused clearly."""

from __future__ import annotations

import pytest

from ragdown.core.errors import Refusal
from ragdown.llm.providers import LLMError, ToolCall, ToolDef, Turn, open_model, parse_spec
from tests.llm.conftest import Call, Provider, Raw, Say

TOOL = ToolDef(
    "search_documents", "Keyword search.", {"type": "object", "properties": {"query": {"type": "string"}}}
)


def test_a_tool_call_and_its_result_round_trip_in_the_providers_format(provider: Provider) -> None:
    provider.script = [Call((("search_documents", {"query": "notice"}),), "let me look"), Say("done")]
    model = open_model(f"{provider.provider}:m1", base_url=provider.url, api_key="k-123")
    try:
        first = model.complete("be brief", [Turn("user", "what notice?")], [TOOL])
        assert first.tool_calls == [ToolCall(first.tool_calls[0].id, "search_documents", {"query": "notice"})]
        assert first.text == "let me look"
        assert first.input_tokens == 101
        assert first.output_tokens == 10
        turns = [
            Turn("user", "what notice?"),
            Turn("assistant", first.text, tuple(first.tool_calls)),
            Turn("tool", '{"success":true}', tool_call_id=first.tool_calls[0].id),
        ]
        second = model.complete("be brief", turns, [TOOL])
        assert second.text == "done"
        assert second.tool_calls == []
    finally:
        model.close()
    first_req, second_req = provider.requests
    body = second_req["body"]
    if provider.provider == "openai":
        assert first_req["path"] == "/v1/chat/completions"
        assert first_req["headers"]["Authorization"] == "Bearer k-123"
        assert body["messages"][0] == {"role": "system", "content": "be brief"}
        assert body["messages"][2]["tool_calls"][0]["function"] == {
            "name": "search_documents",
            "arguments": '{"query": "notice"}',
        }
        assert body["messages"][3] == {
            "role": "tool",
            "tool_call_id": first.tool_calls[0].id,
            "content": '{"success":true}',
        }
        assert body["tools"][0]["function"]["parameters"] == TOOL.schema
    else:
        assert first_req["path"] == "/v1/messages"
        assert first_req["headers"]["x-api-key"] == "k-123"
        assert first_req["headers"]["anthropic-version"] == "2023-06-01"
        assert body["system"] == "be brief"
        assert body["max_tokens"] > 0
        assert body["messages"][1]["content"][1] == {
            "type": "tool_use",
            "id": first.tool_calls[0].id,
            "name": "search_documents",
            "input": {"query": "notice"},
        }
        assert body["messages"][2]["content"] == [
            {"type": "tool_result", "tool_use_id": first.tool_calls[0].id, "content": '{"success":true}'}
        ]
        assert body["tools"][0]["input_schema"] == TOOL.schema


def test_429_and_5xx_are_retried_after_retry_after(provider: Provider) -> None:
    provider.script = [
        Raw(429, '{"error": "slow down"}', {"retry-after": "7"}),
        Raw(503, '{"error": "busy"}', {"retry-after-ms": "1500"}),
        Say("a summary"),
    ]
    waits: list[float] = []
    model = open_model(f"{provider.provider}:m", base_url=provider.url, sleep=waits.append)
    try:
        assert model.complete("", [Turn("user", "hi")]).text == "a summary"
    finally:
        model.close()
    assert waits == [7.0, 1.5]
    assert len(provider.requests) == 3


def test_retries_give_up_with_the_status_said(provider: Provider) -> None:
    provider.default = Raw(429, '{"error": "quota"}', {"retry-after": "999"})
    waits: list[float] = []
    model = open_model(f"{provider.provider}:m", base_url=provider.url, sleep=waits.append)
    try:
        with pytest.raises(LLMError, match="HTTP 429"):
            model.complete("", [Turn("user", "hi")])
    finally:
        model.close()
    assert waits == [60.0, 60.0]  # retry-after capped at 60 s, two retries


@pytest.mark.parametrize(
    "body",
    ["not json", '{"unexpected": true}', '{"choices": [], "content": "x"}'],
)
def test_a_malformed_answer_is_refused_saying_so(provider: Provider, body: str) -> None:
    provider.script = [Raw(200, body)]
    model = open_model(f"{provider.provider}:m", base_url=provider.url)
    try:
        with pytest.raises(LLMError, match=r"not JSON|not in its format"):
            model.complete("", [Turn("user", "hi")])
    finally:
        model.close()


def test_tool_arguments_that_are_not_an_object_are_refused() -> None:
    server = Provider("openai")
    bad = (
        '{"choices": [{"message": {"content": null, "tool_calls": [{"id": "c", "type": "function", '
        '"function": {"name": "get_document", "arguments": "{not json"}}]}, "finish_reason": "tool_calls"}]}'
    )
    server.script = [Raw(200, bad)]
    model = open_model("openai:m", base_url=server.url)
    try:
        with pytest.raises(LLMError, match="not a JSON object"):
            model.complete("", [Turn("user", "hi")])
    finally:
        model.close()
        server.close()


@pytest.mark.parametrize("spec", ["gpt-4o", "ollama:llama3", "openai:", "anthropic: "])
def test_a_model_is_named_provider_colon_model(spec: str) -> None:
    with pytest.raises(Refusal, match="<provider>:<model>"):
        parse_spec(spec)
