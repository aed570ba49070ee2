"""A local OpenAI-compatible chat server for tests: real HTTP on 127.0.0.1, a random port, a thread.

It implements ``POST /v1/chat/completions``. Replies follow a script, one step per request, then a
``responder`` function (request JSON -> reply content) once the script is used up. A step is a
dict: ``{"status": 500}`` (an error body), ``{"content": "..."}`` (a reply), ``{"body": "..."}``
(raw bytes, e.g. a broken body), ``"headers": {...}`` to add, ``"delay": seconds`` before
answering (a long one is a hanging server) and ``"trickle": seconds`` between the body's bytes.
``latency`` is added before every reply (a server with a fixed latency, for throughput);
``reject_response_format`` answers HTTP 400 to a request that carries ``response_format`` (an
endpoint without structured output). Every request is kept (headers, JSON and its arrival on ``time.monotonic()``) in
:attr:`LLMServer.requests`; :attr:`LLMServer.max_in_flight` is the most requests served at once.
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


def completion(content: str, model: str = "test-model") -> dict[str, Any]:
    return {"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}}


class LLMServer:
    """Start with :meth:`start` (or ``with LLMServer(...) as s``); :attr:`base_url` ends in ``/v1``."""

    def __init__(self, script: list[dict[str, Any]] | None = None,
                 responder: Callable[[dict[str, Any]], str] | None = None, latency: float = 0.0,
                 reject_response_format: bool = False) -> None:
        self.script = list(script or [])
        self.latency, self.reject_response_format = latency, reject_response_format
        self.in_flight = self.max_in_flight = 0
        self.responder = responder or (lambda req: json.dumps({"answer": "yes", "evidence": [], "explanation": ""}))
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "json": body,
                                            "time": time.monotonic()})
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                    if server.reject_response_format and "response_format" in body:
                        step = {"status": 400, "body": json.dumps({"error": {
                            "message": "response_format is not supported", "type": "invalid_request_error"}})}
                    else:
                        step = server.script.pop(0) if server.script else {"content": server.responder(body)}
                if self.path.rstrip("/") != "/v1/chat/completions":
                    step = {"status": 404}
                self._served = False
                try:
                    self._reply(step)
                finally:
                    self._finish()

            def _finish(self) -> None:
                """This request no longer counts as in flight: called before the reply's body is written,
                since a client that reads the whole reply may send its next request before this thread
                comes back from the write (which would count the two as served at once)."""
                if not self._served:
                    self._served = True
                    with server._lock:
                        server.in_flight -= 1

            def _reply(self, step: dict[str, Any]) -> None:
                time.sleep(server.latency + step.get("delay", 0))
                status = step.get("status", 200)
                if "body" in step:
                    payload = step["body"].encode()
                elif status == 200:
                    payload = json.dumps(completion(step.get("content", ""), "test-model")).encode()
                else:
                    payload = json.dumps({"error": {"message": f"scripted {status}", "type": "server_error"}}).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in step.get("headers", {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self._finish()
                    if step.get("trickle"):
                        for i in range(len(payload)):
                            self.wfile.write(payload[i:i + 1])
                            self.wfile.flush()
                            time.sleep(step["trickle"])
                    else:
                        self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.block_on_close = False
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def calls(self) -> int:
        with self._lock:
            return len(self.requests)

    def start(self) -> "LLMServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread.is_alive():
            self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> "LLMServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
