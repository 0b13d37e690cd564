"""The scheduling queue, worked by hand from its rules (docs/queue.md): tiers, priority, gangs,
Kubernetes' backoff min(initial * 2^(n-1), max), parking until a cluster event, timeouts; bad input."""

from __future__ import annotations

import pytest

import gpusched as gs


def pod(name: str, **kw: object) -> gs.Pod:
    return gs.Pod(name, cpu_milli=1000, memory_mib=1024, **kw)  # type: ignore[arg-type]


def names(u: dict[str, object] | None) -> list[str]:
    assert u is not None
    return [p.name for p in u["pods"]]  # type: ignore[attr-defined]


def test_prod_first_then_priority_then_fifo() -> None:
    q = gs.SchedulingQueue()
    q.push(pod("dev-high", tier="dev", priority=9), 0)
    q.push(pod("prod-low-1", tier="prod", priority=1), 0)
    q.push(pod("prod-high", tier="prod", priority=5), 0)
    q.push(pod("prod-low-2", tier="prod", priority=1), 0)
    assert (q.ready_count("prod"), q.ready_count("dev"), len(q)) == (3, 1, 4)
    order = []
    while (u := q.pop(1)) is not None:
        order += names(u)
        q.scheduled(u["ticket"], 1)
    assert order == ["prod-high", "prod-low-1", "prod-low-2", "dev-high"]
    assert len(q) == 0


def test_gang_is_one_unit_once_gathered() -> None:
    q = gs.SchedulingQueue()
    t1 = q.push(pod("w0", gang="g", gang_min_members=2), 0)
    assert q.pop(0) is None  # 1 of 2 members
    assert q.push(pod("w1", gang="g", gang_min_members=2), 1) == t1
    u = q.pop(1)
    assert names(u) == ["w0", "w1"] and u is not None and u["ticket"] == t1


def test_backoff_and_parking() -> None:
    q = gs.SchedulingQueue(initial_backoff_s=1, max_backoff_s=10)
    q.push(pod("p"), 0)
    u = q.pop(0)
    assert u is not None
    q.unschedulable(u["ticket"], 0)  # attempt 1: backoff 1 s, parked until an event helps
    assert q.pop(5) is None  # parked: time alone does not wake it (before max_unschedulable_s)
    q.on_cluster_event("node_added", 5)
    u = q.pop(5)  # backoff (1 s from the failure at 0) has passed
    assert names(u) == ["p"] and u is not None and u["attempts"] == 1
    q.unschedulable(u["ticket"], 5)  # attempt 2: backoff 2 s, until 7
    q.on_cluster_event("node_added", 6)
    assert q.pop(6.5) is None
    u = q.pop(7)
    assert u is not None and u["attempts"] == 2


def test_timeout_reports_and_drops() -> None:
    q = gs.SchedulingQueue(timeout_s=10)
    q.push(pod("old"), 0)
    q.push(pod("young"), 5)
    assert q.expired(9.9) == []
    (r,) = q.expired(10)
    assert r["pods"] == ["old"] and r["waited"] == 10 and r["attempts"] == 0
    assert "'old' timed out after 10 s" in r["explanation"]
    assert len(q) == 1


def test_bad_input() -> None:
    with pytest.raises(gs.InvalidArgumentError, match="dev_share_period") as e:
        gs.SchedulingQueue(dev_share_period=1)
    assert e.value.field == "queue_options.dev_share_period"  # type: ignore[attr-defined]
    with pytest.raises(gs.InvalidArgumentError, match="age_step_s"):
        gs.SchedulingQueue(age_step_s=-1)
    q = gs.SchedulingQueue()
    q.push(pod("a"), 10)
    with pytest.raises(gs.InvalidArgumentError):
        q.push(pod("b"), 5)  # time went backwards
    assert len(q) == 1  # nothing changed
    with pytest.raises(gs.InvalidArgumentError, match="ticket"):
        q.scheduled(12345, 10)
    with pytest.raises(gs.InvalidArgumentError, match="event"):
        q.on_cluster_event("node_removed", 10)
    with pytest.raises(gs.InvalidArgumentError, match="tier"):
        q.ready_count("staging")
    with pytest.raises(TypeError):
        q.push("a", 10)  # type: ignore[arg-type]
