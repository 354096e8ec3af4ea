"""The local model's default thread count: physical cores among the allowed CPUs, capped by a cgroup quota."""

from __future__ import annotations

import os

from ragdown.core.cpus import default_threads, physical_cores, quota_cpus


def cpuinfo(cores: list[tuple[int, int]]) -> str:
    """A `/proc/cpuinfo` text: one block per processor, given as (physical id, core id)."""
    return "\n\n".join(
        f"processor\t: {n}\nmodel name\t: Test CPU\nphysical id\t: {package}\ncore id\t\t: {core}\n"
        for n, (package, core) in enumerate(cores)
    )


def test_two_threads_of_one_core_count_once() -> None:
    smt = cpuinfo([(0, 0), (0, 1), (0, 2), (0, 3), (0, 0), (0, 1), (0, 2), (0, 3)])  # 4 cores, 8 threads
    assert physical_cores(smt, set(range(8))) == 4
    assert physical_cores(smt, {0, 4}) == 1  # the affinity holds both threads of core 0 only
    assert physical_cores(smt, {0, 1}) == 2


def test_packages_are_told_apart_and_a_processor_without_core_id_is_a_core() -> None:
    two_sockets = cpuinfo([(0, 0), (1, 0)])
    assert physical_cores(two_sockets, {0, 1}) == 2
    arm = "processor\t: 0\nBogoMIPS\t: 50.00\n\nprocessor\t: 1\nBogoMIPS\t: 50.00\n"
    assert physical_cores(arm, {0, 1}) == 2
    assert physical_cores("garbage without processors", {0}) == 0


def test_a_cgroup_quota_is_read_as_whole_cpus() -> None:
    assert quota_cpus("200000 100000\n") == 2
    assert quota_cpus("150000 100000") == 2
    assert quota_cpus("50000 100000") == 1
    assert quota_cpus("max 100000") is None
    assert quota_cpus("nonsense") is None
    assert quota_cpus("0 100000") is None


def test_the_default_on_this_machine_is_within_its_cpus() -> None:
    assert 1 <= default_threads() <= (os.cpu_count() or 1)
