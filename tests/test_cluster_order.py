"""The Ray executor's task order (:func:`benchmark.cluster.in_order`), on a simulated cluster: results in
the order of the tasks, tasks to whichever actor is free, and the tasks made only a few ahead."""
from __future__ import annotations

from types import SimpleNamespace

from benchmark.cluster import in_order


class _Ref:
    def __init__(self, seq: int, done_at: float, result) -> None:
        self.seq, self.done_at, self.result = seq, done_at, result


class _Cluster:
    """``ray.wait``/``ray.get`` over simulated time: a task takes ``cost[task]`` from when it is submitted."""

    def __init__(self, cost: dict[str, float]) -> None:
        self.cost, self.now, self.seq, self.log = cost, 0.0, 0, []

    def actor(self, name: str) -> SimpleNamespace:
        def remote(task: str) -> _Ref:
            self.seq += 1
            self.log.append((name, task))
            return _Ref(self.seq, self.now + self.cost[task], task.upper())
        return SimpleNamespace(run=SimpleNamespace(remote=remote))

    def wait(self, refs: list, num_returns: int = 1):
        first = min(refs, key=lambda r: (r.done_at, r.seq))
        self.now = max(self.now, first.done_at)
        return [first], [r for r in refs if r is not first]

    def get(self, ref: _Ref):
        return ref.result


def test_results_come_in_task_order_from_whichever_actor_was_free():
    cost = {"t0": 10.0, "t1": 1.0, "t2": 1.0, "t3": 1.0, "t4": 1.0, "t5": 1.0}
    ray = _Cluster(cost)
    out = list(in_order(ray, [ray.actor("A"), ray.actor("B")], iter(cost), ahead=4))
    assert out == ["T0", "T1", "T2", "T3", "T4", "T5"]
    # t0 is slow: B takes the next tasks, until four results wait behind t0
    assert ray.log[:5] == [("A", "t0"), ("B", "t1"), ("B", "t2"), ("B", "t3"), ("B", "t4")]
    assert sorted(task for _, task in ray.log) == sorted(cost)


def test_tasks_are_made_only_a_few_ahead_of_the_results_taken():
    ray = _Cluster({f"t{i}": 1.0 + (i % 3) for i in range(50)})
    made: list[int] = []

    def tasks():
        for i in range(50):
            made.append(i)
            yield f"t{i}"

    results = in_order(ray, [ray.actor("A"), ray.actor("B"), ray.actor("C")], tasks(), ahead=5)
    for i, got in enumerate(results):
        assert got == f"T{i}"
        assert len(made) <= i + 1 + 5  # never the whole list up front
    assert len(made) == 50


def test_no_tasks_no_results():
    ray = _Cluster({})
    assert list(in_order(ray, [ray.actor("A")], iter([]), ahead=2)) == []
