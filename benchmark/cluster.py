"""The Ray executor: a run's finders fitted and its diagrams worked on by a Ray cluster (``diagqa run --executor ray``).

Each finder is made, fitted and asked to rank every question in a task of its own (the finders fit at
the same time, while the driver makes the other stages); only the rankings come back, and the worker
process that ran the task exits after it (:data:`FIT_TASK`), letting go of the dataset it received.

Each actor is set up as a worker process of the local pool is (:func:`benchmark.runner._init_worker`:
its stages made once from the stage options) and works one diagram at a time, each sent as its task
(:meth:`benchmark.runner._Work.task`: the diagram and those its finders returned, its questions and their
rankings) -- getting its graphs (the D2 parse, or extraction from the image), selecting every context and
asking every answerer -- returning the finished samples as the lines ``samples.jsonl`` gets. Tasks are made
as actors are free, a few ahead of the results awaited; results come back in the order the local executor
writes them, so the two executors write the same samples, byte for byte apart from timings.

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

#: how a finder's fit runs: one CPU, in a worker process that exits once the fit is done (``max_calls=1``):
#: a fit receives the whole dataset, and a worker left idle after it would keep that memory for the whole run
FIT_TASK = {"num_cpus": 1, "max_calls": 1}


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

    def answer(self, question: Any, context: Any, *rest: Any) -> Any:
        import ray

        ray.get(self._slots.acquire.remote())
        try:
            return self._inner.answer(question, context, *rest)
        finally:
            ray.get(self._slots.release.remote())

    def answer_many(self, items: Any) -> list[Any]:
        """The inner answerer's batch, each answer through :meth:`answer` (so each takes a slot); as many
        threads as the inner answerer's own ``concurrency``, answers in the order of ``items``."""
        from concurrent.futures import ThreadPoolExecutor

        n = max(1, int(getattr(self._inner, "concurrency", 1) or 1))
        if n == 1 or len(items) <= 1:
            return [self.answer(*item) for item in items]
        with ThreadPoolExecutor(max_workers=min(n, len(items))) as pool:
            return list(pool.map(lambda item: self.answer(*item), items))


def _worker_class(ray: Any) -> Any:
    @ray.remote(num_cpus=1)
    class DiagramWorker:
        """One worker of the run: the local pool's worker set-up, then a diagram at a time."""

        def __init__(self, init: tuple, slots: dict[str, Any]) -> None:
            from benchmark import runner
            from benchmark.extract.threads import limit_image_threads

            limit_image_threads(1)   # an actor holds one CPU: tesseract and OpenCV on one thread
            runner._init_worker(*init)
            work = runner._WORKER
            assert work is not None
            for name, handle in slots.items():
                if name in work.stages.answerers:
                    work.stages.answerers[name] = _Limited(work.stages.answerers[name], handle)

        def run(self, task: tuple) -> bytes:
            from benchmark import runner

            return runner._worker_run(task)

    return DiagramWorker


_END = object()   # no task left


def in_order(ray: Any, actors: list[Any], tasks: Iterator[Any], ahead: int) -> Iterator[Any]:
    """``actor.run(task)`` of each task, in the order of ``tasks``, each run on whichever actor is free.

    A task is taken from ``tasks`` only when an actor is free for it and fewer than ``ahead`` results
    wait to be yielded before it, so a slow task holds back at most ``ahead`` finished ones and
    ``tasks`` is never read to its end up front.
    """
    free = list(actors)
    running: dict[Any, tuple[int, Any]] = {}   # result reference -> (task index, its actor)
    finished: dict[int, Any] = {}
    taken = given = 0
    more = True
    while True:
        while more and free and taken - given < ahead:
            task = next(tasks, _END)
            if task is _END:
                more = False
                break
            actor = free.pop(0)
            running[actor.run.remote(task)] = (taken, actor)
            taken += 1
        if given in finished:
            yield finished.pop(given)
            given += 1
            continue
        if not running:
            return
        ready, _ = ray.wait(list(running), num_returns=1)
        index, actor = running.pop(ready[0])
        free.append(actor)
        finished[index] = ray.get(ready[0])


def iter_ray(init: tuple, tasks: Iterator[Any], n_workers: int, address: str | None, answerers: list[str],
             options: dict[str, dict[str, Any]], peak: dict[str, int] | None = None) -> Iterator[bytes]:
    """The emitted samples of each task (one diagram's work), packed as :func:`benchmark.runner._worker_run`
    packs them, in order, worked on by ``n_workers`` actors.

    ``init`` is what :func:`benchmark.runner._init_worker` takes. ``peak``, when given, receives the most
    requests each limited answerer had in flight at once (``{"llm": 1}``).
    """
    ray = _ray()

    started = _connect(ray, address, n_workers)
    actors: list[Any] = []
    slots: dict[str, Any] = {}
    try:
        Slots = _slots_class(ray)
        for name, option in LIMITED.items():
            if name in answerers:
                slots[name] = Slots.remote(max(1, int((options.get(name) or {}).get(option) or 1)))
        Worker = _worker_class(ray)
        actors = [Worker.remote(init, slots) for _ in range(max(1, n_workers))]
        yield from in_order(ray, actors, iter(tasks), ahead=2 * len(actors))
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


def _fit_and_rank(name: str, options: dict[str, dict[str, Any]], dataset: Any, questions: Any) -> tuple:
    """Make, fit and rank one finder where this runs: ``("ok", description, fit seconds, rankings)`` (diagram id ->
    its questions' results, packed: :func:`benchmark.spill.pack`), or
    ``(status, message)`` with status ``unknown``/``fatal`` (the run stops) or ``down`` (its variants are left out).
    ``questions`` are the run's, diagram id -> its questions packed (as :func:`benchmark.runner.prepare_run`
    gives them): they are ranked a diagram at a time, as the local executor ranks them, in the same chunks."""
    import time

    from benchmark import runner
    from benchmark.errors import DiagQAError, StageUnavailable
    from benchmark.plugins import load_all
    from benchmark.registry import UnknownNameError
    from benchmark.spill import pack
    from benchmark.stages import FINDERS

    load_all()
    try:
        inst = runner._create(FINDERS, name, options)
        t = time.perf_counter()
        inst.fit(dataset)
        fit_s = time.perf_counter() - t
    except UnknownNameError as exc:
        return ("fatal", str(exc))
    except StageUnavailable as exc:
        return ("down", str(exc))
    except DiagQAError as exc:
        return ("fatal", str(exc))
    except Exception as exc:  # noqa: BLE001 - a stage that cannot even start is left out, not the run
        return ("down", f"failed to start: {type(exc).__name__}: {exc}")
    rankings = {did: pack(found[name])
                for did, _, found in runner._ranked_by_diagram({name: inst}, questions)}
    return ("ok", runner.describe_component("finder", name, inst, options), fit_s, rankings)


class Session:
    """The run's hold on the cluster: connected (or started) when made, let go by :meth:`close`."""

    def __init__(self, address: str | None, num_cpus: int, options: dict[str, dict[str, Any]], dataset: Any,
                 questions: Any) -> None:
        """``questions``: the run's, diagram id -> its questions packed, sent to the cluster as they are (never
        every question as an object on this side)."""
        self.ray = _ray()
        self._started = _connect(self.ray, address, num_cpus)
        self._options, self._dataset, self._questions = options, dataset, questions

    def fit_finders(self, names: list[str]) -> Any:
        """Submit one task per finder (make, fit, rank every question); returns a function that waits for them
        and gives ``{name: result of _fit_and_rank}``."""
        ray = self.ray
        task = ray.remote(**FIT_TASK)(_fit_and_rank)
        data, qs = ray.put(self._dataset), ray.put(self._questions)
        futures = {n: task.remote(n, self._options, data, qs) for n in names}
        return lambda: {n: ray.get(f) for n, f in futures.items()}

    def let_go_of_data(self) -> None:
        """Drop this side's hold on the dataset and questions once the finders are submitted (the run
        holds its questions packed while the samples are made, :meth:`benchmark.runner._Work.planned`)."""
        self._dataset = self._questions = None

    def close(self) -> None:
        if self._started:
            self.ray.shutdown()
            self._started = False
