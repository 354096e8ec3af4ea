"""schemathesis against a real `ragdown serve`: every operation of `/api/openapi.json`, called with data
generated from the document itself under a write key, answers no 5xx and only what the document says
(status codes, content types, headers, bodies matching their schemas).

Two passes per operation, few examples each to stay quick: with every parameter generated (mostly refusals:
folders and documents that are not there), and with the folder and document fixed to ones that are, so the
answers that succeed are checked against their schemas too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.core.result import Ok

from ragdown.access.keys import KeyStore
from tests.conftest import write
from tests.http.conftest import Server, StartServer

EXAMPLES = 4  # per operation and pass: ~200 requests in all (the routes grew), a few seconds
# Every check but `positive_data_acceptance`: the document cannot say every rule a name must follow (no
# dot-names, no symbolic links, the ignore rules), so a schema-valid name may rightly be refused with a 400.
CONFIG = schemathesis.Config.from_dict({"checks": {"positive_data_acceptance": {"enabled": False}}})


@pytest.fixture
def served(start_server: StartServer, docs: Path) -> tuple[Server, str]:
    write(docs, "work/a.md", "# Alpha\n\nNightly snapshots.\n\n## Restore\n\nRun pg_restore.\n")
    write(docs, "work/b.md", "# Bee\n\nSee [[a]].\n")
    secret, _ = KeyStore(docs).create("schemathesis", None, "write")
    server = start_server(docs)
    return server, secret


def test_every_operation_answers_as_documented(served: tuple[Server, str]) -> None:
    server, key = served
    schema = schemathesis.openapi.from_url(f"{server.url}/api/openapi.json", config=CONFIG, timeout=30)
    headers = {"Authorization": f"Bearer {key}"}
    operations = []
    for result in schema.get_all_operations():
        assert isinstance(result, Ok), result.err()  # an operation the document describes badly
        operations.append(result.ok())
    assert len(operations) >= 18
    fixed_passes: list[dict[str, Any]] = [{}, {"folder": "work", "path": "a.md", "version": "1"}]
    for operation in operations:
        for fixed in fixed_passes:
            wanted = {k: v for k, v in fixed.items() if "{" + k + "}" in operation.path}
            strategy = operation.as_strategy(path_parameters=wanted or None)

            @given(case=strategy)
            @settings(
                max_examples=EXAMPLES,
                deadline=None,
                database=None,
                derandomize=True,
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            def check(case: Any) -> None:
                case.call_and_validate(base_url=server.url, headers=headers)

            check()
