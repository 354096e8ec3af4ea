"""The install routes' files agree with their formats and with the package: `server.json` (the official MCP
registry's schema, copied into tests/data/mcp-registry/), the compose file (the seed's quick start in
shape), and the Dockerfile's promises. The image itself is built and run by scripts/container-check, the
wheel through uvx and the bundles by scripts/install-check (both run by .ci/run, not here)."""

from __future__ import annotations

import copy
import json
import re
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from ragdown import __version__
from tests.conftest import REPO

SCHEMA = REPO / "tests/data/mcp-registry/server.schema.json"


def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def registry_errors(document: Any) -> list[str]:
    validator = jsonschema.Draft7Validator(load_json(SCHEMA), format_checker=jsonschema.FormatChecker())
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(document)]


def test_server_json_passes_the_registry_schema() -> None:
    server = load_json(REPO / "server.json")
    assert registry_errors(server) == []
    assert server["$schema"] == load_json(SCHEMA)["$id"]


def test_the_schema_copy_refuses_what_the_registry_refuses() -> None:
    server = load_json(REPO / "server.json")
    for broken in (
        {k: v for k, v in server.items() if k != "name"},
        {**server, "name": "no-namespace"},
        {**server, "description": "x" * 101},
    ):
        assert registry_errors(broken)
    latest = copy.deepcopy(server)
    latest["packages"][0]["version"] = "latest"
    assert registry_errors(latest)


def test_server_json_describes_this_package() -> None:
    server = load_json(REPO / "server.json")
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert server["version"] == __version__
    (pypi,) = [p for p in server["packages"] if p["registryType"] == "pypi"]
    assert pypi["identifier"] == project["name"]
    assert pypi["version"] == __version__
    assert pypi["runtimeHint"] == "uvx"
    # `uvx --from ragdown[offline]==V ragdown stdio`: the console script is named as the package is.
    assert project["scripts"]["ragdown"] == "ragdown.cli.main:main"
    assert [a["value"] for a in pypi["packageArguments"]] == ["stdio"]
    assert "offline" in project["optional-dependencies"]
    assert any(a.get("value") == f"ragdown[offline]=={__version__}" for a in pypi["runtimeArguments"])
    env = {e["name"]: e for e in pypi["environmentVariables"]}
    assert env["RAGDOWN_DOCS_DIR"]["isRequired"] is True
    assert "RAGDOWN_EMBEDDER" in env
    (oci,) = [p for p in server["packages"] if p["registryType"] == "oci"]
    assert {e["name"]: e for e in oci["environmentVariables"]}["RAGDOWN_TOKEN"]["isSecret"] is True
    # The registry ties the PyPI package to the name through this line of its README (the long description).
    assert re.search(rf"mcp-name: {re.escape(server['name'])}\b", (REPO / "README.md").read_text("utf-8"))


def test_compose_file_is_the_seed_quick_start_in_shape() -> None:
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text(encoding="utf-8"))
    service = compose["services"]["ragdown"]
    assert service["ports"] == ["3300:3000"]
    assert service["volumes"] == ["~/notes:/docs", "ragdown-data:/data"]
    assert service["environment"] == {"RAGDOWN_TOKEN": "${RAGDOWN_TOKEN}"}
    assert service["restart"] == "unless-stopped"
    assert service["build"] == "."
    assert "ragdown-data" in compose["volumes"]


@pytest.mark.parametrize(
    "line",
    [
        "FROM ${DEBIAN} AS build",
        "USER 1000:1000",
        "EXPOSE 3000",
        "RAGDOWN_DOCS_DIR=/docs",
        "RAGDOWN_DATA_DIR=/data",
        "ARG RAGDOWN_MODEL=minilm",
        "RAGDOWN_EMBEDDER=${RAGDOWN_MODEL}",
        "http://127.0.0.1:3000/api/status",
    ],
)
def test_dockerfile_keeps_its_promises(line: str) -> None:
    dockerfile = (REPO / "Dockerfile").read_text(encoding="utf-8")
    assert "ARG DEBIAN=debian:bookworm-slim" in dockerfile
    assert line in dockerfile
