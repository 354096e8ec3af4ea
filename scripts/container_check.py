"""The image and the compose file, end to end under podman (run by `scripts/container-check`, and by
`.ci/run` after `make test` where podman can be installed).

1. A stand-in for `debian:bookworm-slim` when podman has none (no image registry is reachable here):
   debootstrap's minbase with this machine's CA certificates, slimmed as Debian's slim images are, tagged
   `docker.io/library/debian:bookworm-slim` so the Dockerfile's `FROM` resolves unchanged. Kept for the
   next run (`--purge` removes it).
2. `podman build` of the Dockerfile (its size and the build time are printed).
3. The unchanged docker-compose.yml through podman-compose (from PyPI, in a venv of its own), with `~`
   a temporary home holding `notes/work` (MCP on through its `.ragdown.json`) and one override file that adds
   the compose `user:` line the README gives for the host user's ownership.
4. Checks: `/api/status` ready with the counts (the time from `up -d` to it is printed); the image's
   healthcheck passes; an MCP session on `/mcp/work` with the token finds a document and writes one, which
   lands on the host owned by the `user:` line's uid; `down` then `up` keeps the index (the new start's sync
   adds and updates nothing); SIGKILL of the server is undone by `restart: unless-stopped`.
5. Cleans up: the containers, the volume, the network and the image it built; `net.ipv4.ip_forward` and
   the firewall's NETAVARK chains as they were.

Podman's quirks on these machines (design/containers.md): runc instead of crun, explicit ulimits, rootful.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parent.parent
BASE = "docker.io/library/debian:bookworm-slim"
IMAGE = "localhost/ragdown:latest"
PROJECT = "ragdown-check"
PORT = 3300
TOKEN = "container-check-token-0123456789abcdef"
# The uid the compose `user:` line runs as when this script is root (root's files prove nothing).
TEST_UID = 1234
PODMAN_COMPOSE = "podman-compose==1.6.0"
SLIM_EXCLUDES = """path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
"""


def say(text: str) -> None:
    print(f"container-check: {text}", file=sys.stderr, flush=True)


def run(args: list[str], *, env: dict[str, str] | None = None, check: bool = True, **kw: Any) -> str:
    done = subprocess.run(args, env=env, capture_output=True, text=True, **kw)
    if check and done.returncode != 0:
        raise SystemExit(
            f"container-check: {' '.join(args[:4])} failed ({done.returncode}):\n"
            f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
    return str(done.stdout)


def containers_conf(work: Path) -> Path:
    """runc (crun fails on hybrid cgroups), and ulimits within the host's hard limits."""
    import resource

    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    nofile = 1048576 if hard == resource.RLIM_INFINITY else hard
    conf = work / "containers.conf"
    conf.write_text(
        f'[containers]\ndefault_ulimits = ["nofile={nofile}:{nofile}", "nproc=32768:32768"]\n'
        '[engine]\nruntime = "runc"\n'
    )
    return conf


def debian_mirror() -> str:
    for source in [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]:
        with contextlib.suppress(OSError):
            for line in source.read_text().splitlines():
                words = line.split()
                if words[:1] == ["URIs:"] and "security" not in line:
                    return words[1]
                if words[:1] == ["deb"] and "security" not in line:
                    return next(w for w in words[1:] if "://" in w)
    return "http://deb.debian.org/debian"


def stand_in_base(env: dict[str, str], work: Path) -> None:
    if subprocess.run(["podman", "image", "exists", BASE], env=env).returncode == 0:
        say(f"{BASE}: present (built on this machine), reused")
        return
    if not shutil.which("debootstrap"):
        raise SystemExit(
            "container-check: no base image and no debootstrap to make one (apt-get install debootstrap)"
        )
    rootfs = work / "rootfs"
    started = time.monotonic()
    say(f"{BASE}: absent; debootstrap's minbase from {debian_mirror()} stands in for it")
    run(
        [
            "debootstrap",
            "--variant=minbase",
            "--include=ca-certificates",
            "bookworm",
            str(rootfs),
            debian_mirror(),
        ]
    )
    for crt in Path("/usr/local/share/ca-certificates").glob("*.crt"):  # this network's HTTPS, for the build
        shutil.copy2(crt, rootfs / "usr/local/share/ca-certificates" / crt.name)
    run(["chroot", str(rootfs), "update-ca-certificates"])
    # As Debian's slim images: no package lists, no downloaded packages, no docs, man pages or locales.
    leftovers = [
        *(rootfs / "var/cache/apt").glob("*.bin"),
        *(rootfs / "var/cache/apt/archives").glob("*.deb"),
    ]
    for folder in (
        "var/lib/apt/lists",
        "usr/share/doc",
        "usr/share/man",
        "usr/share/info",
        "usr/share/locale",
    ):
        leftovers += (rootfs / folder).glob("*")
    for entry in leftovers:
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    (rootfs / "etc/dpkg/dpkg.cfg.d/docker").write_text(SLIM_EXCLUDES)
    tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
    run(["podman", "import", "-q", "-", BASE], env=env, stdin=tar.stdout)
    tar.wait()
    shutil.rmtree(rootfs)
    say(f"{BASE}: made in {time.monotonic() - started:.0f} s")


def podman_compose(cache: Path) -> Path:
    venv = cache / "podman-compose"
    exe = venv / "bin/podman-compose"
    if not exe.exists():
        run([sys.executable, "-m", "venv", str(venv)])
        run([str(venv / "bin/pip"), "install", "-q", "--disable-pip-version-check", PODMAN_COMPOSE])
    return exe


def status(authorized: bool = True) -> dict[str, Any] | None:
    headers = {"Authorization": f"Bearer {TOKEN}"} if authorized else {}
    try:
        answer = httpx.get(f"http://127.0.0.1:{PORT}/api/status", headers=headers, timeout=5)
    except httpx.HTTPError:
        return None
    return answer.json() if answer.status_code == 200 else None


def wait_ready(what: str, deadline_s: float = 180) -> tuple[dict[str, Any], float]:
    started = time.monotonic()
    while time.monotonic() - started < deadline_s:
        body = status()
        if body and body.get("ready") and body.get("files"):
            return body, time.monotonic() - started
        time.sleep(0.1)
    raise SystemExit(f"container-check: {what}: /api/status not ready with files within {deadline_s:.0f} s")


def check(condition: bool, text: str) -> None:
    if not condition:
        raise SystemExit(f"container-check: FAILED: {text}")
    say(f"ok: {text}")


async def mcp_session(notes: Path) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    url = f"http://127.0.0.1:{PORT}/mcp/work"
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http), read_timeout_seconds=120) as client,
    ):
        names = {t.name for t in (await client.list_tools()).tools}
        check({"ragdown_recall", "ragdown_write"} <= names, f"MCP on /mcp/work lists {len(names)} tools")
        found = await client.call_tool("ragdown_recall", {"query": "how do we rotate the backup keys"})
        text = " ".join(getattr(c, "text", "") for c in found.content)
        check(not found.is_error and "backups.md" in text, "ragdown_recall over MCP finds backups.md")
        wrote = await client.call_tool(
            "ragdown_write", {"path": "from-mcp.md", "text": "# From MCP\n\nWritten in the container.\n"}
        )
        check(not wrote.is_error, "ragdown_write over MCP succeeds")
    check((notes / "work/from-mcp.md").is_file(), "the file written through MCP is on the host")


def container_id(env: dict[str, str]) -> str:
    found = run(
        ["podman", "ps", "-q", "--filter", f"label=io.podman.compose.project={PROJECT}"], env=env
    ).split()
    if len(found) != 1:
        raise SystemExit(f"container-check: expected one running container of {PROJECT}, found {found}")
    return found[0]


def server_pid(env: dict[str, str], cid: str) -> int:
    return int(run(["podman", "inspect", "-f", "{{.State.Pid}}", cid], env=env).strip() or 0)


def netavark_rules(table: str) -> list[str]:
    """The `iptables -S` lines of podman's network (netavark) in one table."""
    if not shutil.which("iptables"):
        return []
    listed = subprocess.run(["iptables", "-t", table, "-S"], capture_output=True, text=True).stdout
    return [line for line in listed.splitlines() if "NETAVARK" in line]


@contextlib.contextmanager
def host_network_kept() -> Iterator[None]:
    """podman's bridge network sets `net.ipv4.ip_forward` and adds NETAVARK chains that outlive `down`:
    both put back as they were (the chains removed only when none were there before, so another podman
    user's stay)."""
    knob = Path("/proc/sys/net/ipv4/ip_forward")
    before = knob.read_text().strip() if knob.exists() else None
    tables = [t for t in ("filter", "nat") if not netavark_rules(t)]
    try:
        yield
    finally:
        if before is not None and knob.read_text().strip() != before:
            with contextlib.suppress(OSError):
                knob.write_text(before)
        for table in tables:
            rules = netavark_rules(table)
            for rule in (r for r in rules if r.startswith("-A ")):
                subprocess.run(["iptables", "-t", table, "-D", *shlex.split(rule)[1:]], capture_output=True)
            for chain in (r.split()[1] for r in rules if r.startswith("-N ")):
                subprocess.run(["iptables", "-t", table, "-F", chain], capture_output=True)
            for chain in (r.split()[1] for r in rules if r.startswith("-N ")):
                subprocess.run(["iptables", "-t", table, "-X", chain], capture_output=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--keep-image", action="store_true", help="leave the built image in podman")
    parser.add_argument("--no-build", action="store_true", help="use the image a --keep-image run left")
    parser.add_argument("--purge", action="store_true", help="also remove the stand-in Debian base")
    args = parser.parse_args()
    if not shutil.which("podman"):
        say("podman is not installed")
        return 2
    if os.geteuid() != 0:
        say("needs root's podman (rootless podman maps the compose user: line to a subordinate uid)")
        return 2
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", PORT)) == 0:
            say(f"port {PORT} (the compose file's) is taken on this machine")
            return 2
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ragdown-container-check"
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ragdown-container-check-") as tmp, host_network_kept():
        work = Path(tmp)
        env = {**os.environ, "CONTAINERS_CONF": str(containers_conf(work))}
        compose = podman_compose(cache)
        stand_in_base(env, work)

        started = time.monotonic()
        if not args.no_build:
            # A kept image of an earlier run would be left dangling by the new one's tag.
            subprocess.run(["podman", "rmi", "-f", IMAGE], env=env, capture_output=True)
            run(
                [
                    "podman",
                    "build",
                    "--pull=never",
                    "--format",
                    "docker",
                    "--network",
                    "host",
                    "--layers=false",
                    "-t",
                    IMAGE,
                    str(REPO),
                ],
                env=env,
            )
        built_s = time.monotonic() - started
        size = int(run(["podman", "image", "inspect", "-f", "{{.Size}}", IMAGE], env=env))
        base = int(run(["podman", "image", "inspect", "-f", "{{.Size}}", BASE], env=env))
        say(
            f"image {IMAGE}: {size / 1e6:.0f} MB ({(size - base) / 1e6:.0f} MB over the base's "
            f"{base / 1e6:.0f} MB), built in {built_s:.0f} s"
        )

        home = work / "home"
        notes = home / "notes"
        (notes / "work").mkdir(parents=True)
        (notes / "work/.ragdown.json").write_text('{ "mcp": true }\n')
        (notes / "work/backups.md").write_text(
            "# Backups\n\n## Rotating the backup keys\n\nRotate the backup encryption keys every quarter.\n"
        )
        (notes / "work/deploys.md").write_text("# Deploys\n\nDeploys go out on Tuesdays after review.\n")
        uid = os.getuid() or TEST_UID
        gid = os.getgid() or TEST_UID
        for path in [notes, *notes.rglob("*")]:
            os.chown(path, uid, gid)
        override = work / "compose.user.yml"
        override.write_text(f'services:\n  ragdown:\n    user: "{uid}:{gid}"\n')
        compose_env = {**env, "HOME": str(home), "RAGDOWN_TOKEN": TOKEN}
        base_cmd = [str(compose), "-p", PROJECT, "-f", str(REPO / "docker-compose.yml"), "-f", str(override)]
        try:
            started = time.monotonic()
            run([*base_cmd, "up", "-d"], env=compose_env, cwd=REPO)
            up_s = time.monotonic() - started
            body, ready_s = wait_ready("first start")
            check(
                body["files"] == 2 and body["chunks"] >= 2 and body["embedder"] == "minilm",
                f"/api/status ready: {body['files']} files, {body['chunks']} chunks, embedder {body['embedder']}",
            )
            say(
                f"time to first answer: {up_s + ready_s:.1f} s from `up -d` (up -d {up_s:.1f} s, then "
                f"{ready_s:.1f} s to ready)"
            )
            bare = status(authorized=False)
            check(bare is not None and bare.get("auth_required") is True, "without the token: liveness only")
            cid = container_id(env)
            health = subprocess.run(
                ["podman", "healthcheck", "run", cid], env=env, capture_output=True, text=True
            )
            check(health.returncode == 0, "the image's HEALTHCHECK passes")
            # The baked model's one-time copy (gather-first) is valid in the image: nothing is made at start.
            probe = (
                "from pathlib import Path; from ragdown.embedders.catalog import CATALOG, load_catalog_model; "
                "print(repr(load_catalog_model(CATALOG['minilm'], models_dir=Path('/opt/ragdown/models'), "
                "hf_endpoint='', threads=1)))"
            )
            loaded = run(["podman", "exec", cid, "python3", "-c", probe], env=env).strip()
            check("gather-first" in loaded, f"the baked model opens from its baked copy: {loaded}")

            asyncio.run(mcp_session(notes))
            written = (notes / "work/from-mcp.md").stat()
            check(
                (written.st_uid, written.st_gid) == (uid, gid), f"it is owned by {uid}:{gid} (the user: line)"
            )

            run([*base_cmd, "down"], env=compose_env, cwd=REPO)
            run([*base_cmd, "up", "-d"], env=compose_env, cwd=REPO)
            body, ready_s = wait_ready("after down and up")
            last = body.get("last_sync") or {}
            check(
                body["files"] == 3
                and last.get("added") == 0
                and last.get("updated") == 0
                and last.get("unchanged") == 3,
                f"down + up keeps the index: ready in {ready_s:.1f} s, its sync {last}",
            )

            cid = container_id(env)
            pid = server_pid(env, cid)
            os.kill(pid, signal.SIGKILL)
            started = time.monotonic()
            while time.monotonic() - started < 60:
                now = subprocess.run(
                    ["podman", "inspect", "-f", "{{.State.Pid}}", cid],
                    env=env,
                    capture_output=True,
                    text=True,
                ).stdout.strip()
                if now not in ("", "0", str(pid)) and (again := status()) and again.get("ready"):
                    break
                time.sleep(0.1)
            else:
                raise SystemExit(
                    "container-check: FAILED: the server was not restarted within 60 s of SIGKILL"
                )
            check(
                True,
                f"SIGKILL of the server: restarted by the restart policy, ready {time.monotonic() - started:.1f} s later",
            )
        finally:
            subprocess.run([*base_cmd, "down", "-v"], env=compose_env, cwd=REPO, capture_output=True)
            subprocess.run(
                ["podman", "network", "rm", "-f", f"{PROJECT}_default"], env=env, capture_output=True
            )
            if not args.keep_image:
                subprocess.run(["podman", "rmi", "-f", IMAGE], env=env, capture_output=True)
            if args.purge:
                subprocess.run(["podman", "rmi", "-f", BASE], env=env, capture_output=True)
    say("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
