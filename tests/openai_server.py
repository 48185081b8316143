"""A local server speaking the OpenAI chat-completions protocol, as Ollama, vLLM, llama.cpp and
the gateways do: `POST /v1/chat/completions`, whole or streamed (server-sent events, usage in the
last chunk when asked for), tool calls, and errors (OpenAI's own bodies are in `provider_server`).

Each request takes the next of the replies it was given; it keeps every request's body and
headers, so a test can check what the real client sent.

Imported by the tests that drive `langchain-openai`: `from openai_server import ...`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from provider_server import OPENAI_SERVER_ERROR

__all__ = ["OpenAIServer", "Reply", "openai_server"]



@dataclass
class Reply:
    """One answer: a text, tool calls (`{"name": ..., "args": {...}}`), or an error (status and
    body, as `provider_server` holds OpenAI's); `usage` as the server reports it."""

    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    error: tuple[int, dict[str, Any]] | None = None
    prompt_tokens: int = 120
    completion_tokens: int = 12
    cached_tokens: int = 0


class OpenAIServer(ThreadingHTTPServer):
    """Answers each request with the next `Reply`; keeps the bodies and headers it was sent."""

    def __init__(self, replies: list[Reply]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.replies = list(replies)
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []

    @property
    def base_url(self) -> str:
        """The `base_url` to give the client."""
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def next_reply(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        self.bodies.append(body)
        self.headers.append(headers)
        if not self.replies:
            return Reply(error=OPENAI_SERVER_ERROR)
        return self.replies.pop(0)


def _message(reply: Reply, index: int) -> dict[str, Any]:
    calls = [
        {
            "id": f"call_{index}_{number}",
            "type": "function",
            "function": {"name": call["name"], "arguments": json.dumps(call["args"])},
        }
        for number, call in enumerate(reply.tool_calls)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if calls:
        message["tool_calls"] = calls
    return message


def _usage(reply: Reply) -> dict[str, Any]:
    return {
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        "prompt_tokens_details": {"cached_tokens": reply.cached_tokens, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }


def _chunks(reply: Reply, index: int, model: str, usage: bool) -> Iterator[dict[str, Any]]:
    """The stream of one reply: the role, the text word by word, each tool call, the finish."""
    base = {"id": f"chatcmpl-{index}", "object": "chat.completion.chunk", "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    words = reply.text.split(" ")
    for number, word in enumerate(words if reply.text else []):
        yield chunk({"content": word if number == len(words) - 1 else word + " "})
    for number, call in enumerate(_message(reply, index).get("tool_calls", [])):
        yield chunk({"tool_calls": [{"index": number, **call}]})
    yield chunk({}, "tool_calls" if reply.tool_calls else "stop")
    if usage:
        yield {**base, "choices": [], "usage": _usage(reply)}


class _Handler(BaseHTTPRequestHandler):
    server: OpenAIServer

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length))
        reply = self.server.next_reply(body, {k.lower(): v for k, v in self.headers.items()})
        index = len(self.server.bodies)
        if reply.error is not None:
            status, error = reply.error
            self._send(status, "application/json", json.dumps(error).encode())
            return
        model = str(body.get("model", ""))
        if body.get("stream"):
            usage = bool((body.get("stream_options") or {}).get("include_usage"))
            events = b"".join(
                f"data: {json.dumps(c)}\n\n".encode() for c in _chunks(reply, index, model, usage)
            )
            self._send(200, "text/event-stream", events + b"data: [DONE]\n\n")
            return
        whole = {
            "id": f"chatcmpl-{index}",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": _message(reply, index),
                    "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                }
            ],
            "usage": _usage(reply),
        }
        self._send(200, "application/json", json.dumps(whole).encode())

    def _send(self, status: int, content_type: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def openai_server(*replies: Reply) -> Iterator[OpenAIServer]:
    """A running `OpenAIServer` on a free loopback port, shut down afterwards."""
    server = OpenAIServer(list(replies))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
