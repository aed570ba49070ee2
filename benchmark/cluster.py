"""The Ray executor: a run's diagrams worked on by actors of a Ray cluster (``diagqa run --executor ray``).

Each actor is set up as a worker process of the local pool is (:func:`benchmark.runner._init_worker`:
the parsed dataset, the finders' rankings and the stage options, sent once through the object store)
and works one diagram at a time -- getting its graphs (the D2 parse, or extraction from the image),
selecting every context and asking every answerer -- returning the finished samples as the lines
``samples.jsonl`` gets. Results come back in the order the local executor writes them, so the two
executors write the same samples, byte for byte apart from timings.

Without an address an in-process cluster is started for the run (``ray.init(num_cpus=workers)``)
and shut down after it; ``address`` (``auto``, ``ray://host:port``) joins an existing cluster, whose
nodes must have diagqa's dependencies installed and the dataset at the same path (the driver's
``benchmark`` and ``retrievers`` code travels with the job). When the calling process already has
Ray initialised, that connection is used and left open.

The ``llm`` answerer's ``concurrency`` option (default 1) bounds the requests in flight across the
whole cluster: every ``llm`` answer takes a slot from one :class:`Slots` actor first.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Iterator

#: answerers whose calls go through the cluster-wide slots, with the option that sizes them
LIMITED = {"llm": "concurrency"}


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        from benchmark.errors import DiagQAError

        raise DiagQAError("the ray executor needs the 'ray' package (pip install 'diagqa[ray]')") from exc
    return ray


def _connect(ray: Any, address: str | None, num_cpus: int) -> bool:
    """Initialise Ray unless it already is; True when this call did (and so must shut it down)."""
    if ray.is_initialized():
        return False
    kw: dict[str, Any] = dict(include_dashboard=False, logging_level=logging.WARNING, log_to_driver=True)
    if address:
        import benchmark
        import retrievers

        code = [str(Path(benchmark.__file__).parent), str(Path(retrievers.__file__).parent)]
        ray.init(address=address, runtime_env={"py_modules": code}, **kw)
    else:
        ray.init(num_cpus=num_cpus, **kw)
    return True


def _slots_class(ray: Any) -> Any:
    @ray.remote(num_cpus=0)
    class Slots:
        """A counting semaphore shared by every actor of the run (an async actor: waiters do not block it)."""

        def __init__(self, n: int) -> None:
            import asyncio

            self._sem = asyncio.Semaphore(n)
            self.in_use = self.most = 0

        async def acquire(self) -> None:
            await self._sem.acquire()
            self.in_use += 1
            self.most = max(self.most, self.in_use)

        async def release(self) -> None:
            self.in_use -= 1
            self._sem.release()

        async def peak(self) -> int:
            return self.most

    return Slots


class _Limited:
    """An answerer whose :meth:`answer` first takes one of the cluster's slots (and gives it back after)."""

    def __init__(self, inner: Any, slots: Any) -> None:
        self._inner, self._slots = inner, slots

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def answer(self, question: Any, context: Any) -> Any:
        import ray

        ray.get(self._slots.acquire.remote())
        try:
            return self._inner.answer(question, context)
        finally:
            ray.get(self._slots.release.remote())


def _worker_class(ray: Any) -> Any:
    @ray.remote(num_cpus=1)
    class DiagramWorker:
        """One worker of the run: the local pool's worker set-up, then a diagram at a time."""

        def __init__(self, init: tuple, slots: dict[str, Any]) -> None:
            from benchmark import runner

            runner._init_worker(*init)
            work = runner._WORKER
            assert work is not None
            for name, handle in slots.items():
                if name in work.stages.answerers:
                    work.stages.answerers[name] = _Limited(work.stages.answerers[name], handle)

        def run(self, diagram_id: str) -> list:
            from benchmark import runner

            return runner._worker_run(diagram_id)

    return DiagramWorker


def iter_ray(init: tuple, order: list[str], n_workers: int, address: str | None, answerers: list[str],
             options: dict[str, dict[str, Any]], peak: dict[str, int] | None = None) -> Iterator[list]:
    """The emitted samples of each diagram of ``order``, in that order, worked on by ``n_workers`` actors.

    ``init`` is what :func:`benchmark.runner._init_worker` takes. ``peak``, when given, receives the most
    requests each limited answerer had in flight at once (``{"llm": 1}``).
    """
    ray = _ray()
    from ray.util import ActorPool

    started = _connect(ray, address, n_workers)
    actors: list[Any] = []
    slots: dict[str, Any] = {}
    try:
        Slots = _slots_class(ray)
        for name, option in LIMITED.items():
            if name in answerers:
                slots[name] = Slots.remote(max(1, int((options.get(name) or {}).get(option) or 1)))
        init_ref = ray.put(init)  # the dataset and rankings go into the object store once, not once per actor
        Worker = _worker_class(ray)
        actors = [Worker.remote(init_ref, slots) for _ in range(max(1, n_workers))]
        pool = ActorPool(actors)
        yield from pool.map(lambda actor, did: actor.run.remote(did), order)
        if peak is not None:
            peak.update({name: ray.get(h.peak.remote()) for name, h in slots.items()})
    finally:
        for a in actors + list(slots.values()):
            try:
                ray.kill(a)
            except Exception:  # noqa: BLE001 - already gone with its cluster
                pass
        if started:
            ray.shutdown()
