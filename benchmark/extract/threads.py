"""Threads of the image libraries (tesseract's OpenMP, OpenCV) in a process of a pool.

Images read by N processes at a time already keep N cores busy; each library's default of a thread
per core on top of that only contends. On the 50 bundled PNGs, extraction in one process took 118 s
of CPU for 94 s of wall time with OpenCV's default threads, and 94 s of CPU for 95 s on one thread,
the same graphs: in a pool that keeps every core busy, the 24 s were lost. A value the user set
(``OMP_THREAD_LIMIT``, ``OPENCV_FOR_THREADS_NUM``) is kept.
"""
from __future__ import annotations

import os


def limit_image_threads(n: int = 1) -> None:
    """Give tesseract and OpenCV ``n`` threads in this process (unless the user chose a number).

    Both read their variable when they first need threads: tesseract in each of its processes,
    OpenCV at its first parallel operation in this process, so this is called when a pool's process
    starts. A process forked from one that has run OpenCV in parallel keeps the threads it inherited
    (it works on; setting their number there, ``cv2.setNumThreads``, hangs).
    """
    os.environ.setdefault("OMP_THREAD_LIMIT", str(n))
    os.environ.setdefault("OPENCV_FOR_THREADS_NUM", str(n))
