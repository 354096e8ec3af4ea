"""How many threads the local model gets by default (`RAGDOWN_THREADS` unset): the physical cores this
process may run on, as ONNX Runtime itself counts them for its default.

On Linux: the distinct (package, core) pairs of `/proc/cpuinfo` among the CPUs of the process's affinity,
capped by the cgroup's CPU quota (`cpu.max`, a container's `--cpus`). So a 2-core VM gets 2 (measured 1.72x
the chunks/s of 1 thread, docs/benchmarks.md section 19), an 8-core machine with SMT 8 rather than 16 (two
threads of one core share its units), and a container limited to 2 CPUs 2. Elsewhere, or where the files
cannot be read, half the logical cores, at least one.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")
CGROUP_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")


def physical_cores(cpuinfo: str, allowed: set[int]) -> int:
    """The distinct cores among the `allowed` processors of a `/proc/cpuinfo` text (0 when none is named).

    A processor without `core id` (most ARM kernels, which have no SMT) counts as a core of its own."""
    cores: set[tuple[str, str]] = set()
    for block in cpuinfo.split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            key, sep, value = line.partition(":")
            if sep:
                fields[key.strip()] = value.strip()
        processor = fields.get("processor", "")
        if not processor.isdigit() or int(processor) not in allowed:
            continue
        cores.add((fields.get("physical id", "0"), fields.get("core id", f"cpu{processor}")))
    return len(cores)


def quota_cpus(cpu_max: str) -> int | None:
    """The CPUs a cgroup v2 `cpu.max` allows (`200000 100000`: 2), rounded up; None when it sets no limit."""
    parts = cpu_max.split()
    if len(parts) != 2 or parts[0] == "max":
        return None
    try:
        quota, period = int(parts[0]), int(parts[1])
    except ValueError:
        return None
    return max(1, math.ceil(quota / period)) if quota > 0 and period > 0 else None


def default_threads() -> int:
    """The physical cores this process may use (Linux), else half the logical cores; at least one."""
    fallback = max(1, (os.cpu_count() or 2) // 2)
    try:
        allowed = os.sched_getaffinity(0)
        found = physical_cores(CPUINFO.read_text(errors="replace"), allowed)
    except (AttributeError, OSError):  # not Linux
        return fallback
    if found == 0:
        return fallback
    try:
        limit = quota_cpus(CGROUP_CPU_MAX.read_text())
    except OSError:
        limit = None
    return max(1, min(found, limit) if limit is not None else found)
