"""A local HTTP server standing in for a model provider: it answers every request with the error
a real provider sends (status and body, as Google's Gemini API, Anthropic's Messages API and
OpenAI's chat completions answer), and counts the requests. The real provider clients are pointed
at it (`GOOGLE_GEMINI_BASE_URL`, `ANTHROPIC_BASE_URL`, which their SDKs read; OpenAI's `base_url`).

Imported by the provider error tests: `from provider_server import ...`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# Google's Gemini API (generativelanguage.googleapis.com), as it answers
GEMINI_INVALID_KEY = (400, {"error": {
    "code": 400,
    "message": "API key not valid. Please pass a valid API key.",
    "status": "INVALID_ARGUMENT",
    "details": [
        {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
         "domain": "googleapis.com",
         "metadata": {"service": "generativelanguage.googleapis.com"}},
        {"@type": "type.googleapis.com/google.rpc.LocalizedMessage", "locale": "en-US",
         "message": "API key not valid. Please pass a valid API key."},
    ],
}})
GEMINI_EXPIRED_KEY = (400, {"error": {
    "code": 400,
    "message": "API key expired. Please renew the API key.",
    "status": "INVALID_ARGUMENT",
    "details": [
        {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
         "domain": "googleapis.com",
         "metadata": {"service": "generativelanguage.googleapis.com"}},
        {"@type": "type.googleapis.com/google.rpc.LocalizedMessage", "locale": "en-US",
         "message": "API key expired. Please renew the API key."},
    ],
}})


def gemini_suspended_key(key: str) -> tuple[int, dict[str, Any]]:
    """A revoked (suspended) key: Google names the key in its answer."""
    message = f"Permission denied: Consumer 'api_key:{key}' has been suspended."
    return (403, {"error": {
        "code": 403,
        "message": message,
        "status": "PERMISSION_DENIED",
        "details": [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "CONSUMER_SUSPENDED",
             "domain": "googleapis.com",
             "metadata": {"consumer": "projects/895908428397",
                          "service": "generativelanguage.googleapis.com",
                          "containerInfo": f"api_key:{key}"}},
            {"@type": "type.googleapis.com/google.rpc.LocalizedMessage", "locale": "en-US",
             "message": message},
        ],
    }})


GEMINI_QUOTA = (429, {"error": {
    "code": 429,
    "message": "You exceeded your current quota, please check your plan and billing details. "
    "For more information on this error, head to: "
    "https://ai.google.dev/gemini-api/docs/rate-limits.",
    "status": "RESOURCE_EXHAUSTED",
    "details": [
        {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{
            "quotaMetric":
                "generativelanguage.googleapis.com/generate_content_free_tier_input_token_count",
            "quotaId": "GenerateContentInputTokensPerModelPerMinute-FreeTier",
            "quotaDimensions": {"location": "global", "model": "gemini-2.5-flash"},
            "quotaValue": "250000",
        }]},
        {"@type": "type.googleapis.com/google.rpc.Help", "links": [{
            "description": "Learn more about Gemini API quotas",
            "url": "https://ai.google.dev/gemini-api/docs/rate-limits",
        }]},
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "26s"},
    ],
}})
GEMINI_NO_PERMISSION = (403, {"error": {
    "code": 403,
    "message": "The caller does not have permission",
    "status": "PERMISSION_DENIED",
}})
GEMINI_NO_MODEL = (404, {"error": {
    "code": 404,
    "message": "models/gemini-9-flash is not found for API version v1beta, or is not supported "
    "for generateContent. Call ListModels to see the list of available models and their "
    "supported methods.",
    "status": "NOT_FOUND",
}})

# Anthropic's Messages API (api.anthropic.com), as it answers
ANTHROPIC_INVALID_KEY = (401, {
    "type": "error",
    "error": {"type": "authentication_error", "message": "invalid x-api-key"},
    "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
})
ANTHROPIC_RATE_LIMIT = (429, {
    "type": "error",
    "error": {
        "type": "rate_limit_error",
        "message": "This request would exceed the rate limit for your organization of 30,000 "
        "input tokens per minute. For details, refer to: "
        "https://docs.anthropic.com/en/api/rate-limits. You can see the response headers for "
        "current usage. Please reduce the prompt length or the maximum tokens requested, or try "
        "again later.",
    },
    "request_id": "req_011CSHoEeqs5C35K2UUqR7Fz",
})
ANTHROPIC_NO_MODEL = (404, {
    "type": "error",
    "error": {"type": "not_found_error", "message": "model: claude-9-sonnet"},
    "request_id": "req_011CSHoEeqs5C35K2UUqR7G0",
})

# OpenAI's chat completions (api.openai.com), as it answers; servers speaking its protocol too
OPENAI_INVALID_KEY = (401, {"error": {
    "message": "Incorrect API key provided: sk-proj-****abcd. You can find your API key at "
    "https://platform.openai.com/account/api-keys.",
    "type": "invalid_request_error",
    "param": None,
    "code": "invalid_api_key",
}})
OPENAI_NO_QUOTA = (429, {"error": {
    "message": "You exceeded your current quota, please check your plan and billing details. "
    "For more information on this error, read the docs: "
    "https://platform.openai.com/docs/guides/error-codes/api-errors.",
    "type": "insufficient_quota",
    "param": None,
    "code": "insufficient_quota",
}})
OPENAI_NO_MODEL = (404, {"error": {
    "message": "The model `gpt-9` does not exist or you do not have access to it.",
    "type": "invalid_request_error",
    "param": None,
    "code": "model_not_found",
}})
OPENAI_SERVER_ERROR = (500, {"error": {
    "message": "The server had an error while processing your request. Sorry about that!",
    "type": "server_error",
    "param": None,
    "code": None,
}})


class ProviderServer(ThreadingHTTPServer):
    """Answers every POST with `answer` (status, body); `requests` counts them."""

    def __init__(self, answer: tuple[int, dict[str, Any]]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.answer = answer
        self.requests = 0
        self.paths: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: ProviderServer

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.server.requests += 1
        self.server.paths.append(self.path)
        status, body = self.server.answer
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def provider_answering(answer: tuple[int, dict[str, Any]]) -> Iterator[ProviderServer]:
    """A running `ProviderServer` that answers `answer`, shut down afterwards."""
    server = ProviderServer(answer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
