"""How many CPUs this process may use: its affinity mask and its cgroup's CPU quota (containers)."""
from __future__ import annotations

import math
import os
from typing import Optional


def _cgroup_quota(root: str = "/sys/fs/cgroup") -> Optional[int]:
    """CPUs allowed by the cgroup (v2 ``cpu.max``, or v1 ``cpu.cfs_quota_us``/``cpu.cfs_period_us``)."""
    try:
        with open(os.path.join(root, "cpu.max"), encoding="ascii") as fh:
            quota, _, period = fh.read().strip().partition(" ")
        if quota != "max" and period:
            return max(1, math.ceil(int(quota) / int(period)))
        return None
    except (OSError, ValueError):
        pass
    try:
        with open(os.path.join(root, "cpu", "cpu.cfs_quota_us"), encoding="ascii") as fh:
            quota_us = int(fh.read().strip())
        with open(os.path.join(root, "cpu", "cpu.cfs_period_us"), encoding="ascii") as fh:
            period_us = int(fh.read().strip())
        if quota_us > 0 and period_us > 0:
            return max(1, math.ceil(quota_us / period_us))
    except (OSError, ValueError):
        pass
    return None


def available_cpus(cgroup_root: str = "/sys/fs/cgroup") -> int:
    """At least 1; the smallest of the CPU count, the affinity mask and the cgroup quota."""
    count = os.cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):
        try:
            count = min(count, len(os.sched_getaffinity(0)) or count)
        except OSError:
            pass
    quota = _cgroup_quota(cgroup_root)
    if quota is not None:
        count = min(count, quota)
    return max(1, count)
