"""Model calls sent again after a transient failure, each retry a `model_retry` event.

`ModelRetryMiddleware` retries the agent's model calls (`wrap_model_call`); `call_with_retries`
and `acall_with_retries` do the same for any one call. The wait between attempts is slept in
short slices, so the stop button ends the run during a wait as it would during a tool: the
kernel's interrupt lands in the main thread at once, and the exception the stop button raises in
a subagent's thread lands within a slice. After the last attempt the error is raised unchanged,
unless the provider refused the call for a reason the user can fix (a rejected key, a quota used
up, an unknown model): then it is a `ProviderRefused` saying what to change (`provider_errors`),
raised without the provider's exception attached, whose frames hold the request's headers.

LangChain's own `ModelRetryMiddleware` is not used: it has no hook per retry (so no event), sleeps
in one uninterruptible call, and by default retries every exception, a replay mismatch included.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Literal, TypeVar

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse

from jupyter_deepagent._exceptions import ProviderRefused
from jupyter_deepagent.events import MODEL_RETRY
from jupyter_deepagent.harness.models.call_policy import ModelCallPolicy, is_transient
from jupyter_deepagent.harness.models.label import model_label
from jupyter_deepagent.harness.models.provider_errors import provider_refusal
from jupyter_deepagent.harness.run_events.event_stream import emit_event, run_step

__all__ = ["ModelRetryMiddleware", "acall_with_retries", "call_with_retries"]

T = TypeVar("T")

_SLICE_SECONDS = 0.1
_ERROR_CHARS = 300


def _wait_in_slices(seconds: float) -> None:
    """Sleep `seconds` in slices of 0.1 s, so an interrupt raised in this thread lands soon.

    Raises:
        KeyboardInterrupt: The stop button was pressed during the wait.
    """
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        time.sleep(min(left, _SLICE_SECONDS))


def _retry_wait(
    exc: Exception,
    attempt: int,
    policy: ModelCallPolicy,
    model: object,
    step: int,
    purpose: Literal["agent", "summarize"],
) -> float | None:
    """The wait before another attempt (and its `model_retry` event), or None to give up."""
    if attempt >= policy.attempts or not is_transient(exc):
        return None
    wait = policy.wait_after(attempt)
    error = " ".join(f"{type(exc).__name__}: {exc}".split())
    if len(error) > _ERROR_CHARS:
        error = error[: _ERROR_CHARS - 1] + "…"
    emit_event(
        MODEL_RETRY,
        step=step,
        purpose=purpose,
        model=model_label(model),
        attempt=attempt,
        attempts=policy.attempts,
        wait=round(wait, 3),
        error=error,
    )
    return wait


def _next_attempt(
    exc: Exception,
    attempt: int,
    policy: ModelCallPolicy,
    model: object,
    step: int,
    purpose: Literal["agent", "summarize"],
) -> tuple[float | None, ProviderRefused | None]:
    """The wait before another attempt, or None; and the refusal to raise instead, if the
    provider refused the call for a reason the user can fix. A refusal that sending again cannot
    help (an account without quota: a 429 that is no rate limit) is raised at once."""
    refused = provider_refusal(exc, model, attempt)
    if refused is not None and not refused.retry_helps:
        return None, refused
    wait = _retry_wait(exc, attempt, policy, model, step, purpose)
    return wait, refused if wait is None else None


def call_with_retries(
    call: Callable[[], T],
    policy: ModelCallPolicy,
    *,
    model: object,
    step: int,
    purpose: Literal["agent", "summarize"] = "agent",
) -> T:
    """`call()`, sent again after a transient failure as `policy` allows.

    Raises:
        ProviderRefused: The provider refused the call for a reason the user can fix.
        Exception: What the last attempt raised (or the first error that is not transient).
        KeyboardInterrupt: The stop button, also during a wait.
    """
    attempt = 1
    while True:
        try:
            return call()
        except Exception as exc:
            wait, refused = _next_attempt(exc, attempt, policy, model, step, purpose)
            if wait is None and refused is None:
                raise
        # raised and waited outside the handler, so neither the refusal nor a stop during the
        # wait carries the provider's error (whose frames hold request headers) as its context
        if refused is not None:
            raise refused
        _wait_in_slices(wait or 0.0)
        attempt += 1


async def acall_with_retries(
    call: Callable[[], Awaitable[T]],
    policy: ModelCallPolicy,
    *,
    model: object,
    step: int,
    purpose: Literal["agent", "summarize"] = "agent",
) -> T:
    """Async twin of `call_with_retries`; the wait is a cancellable `asyncio.sleep`.

    Raises:
        ProviderRefused: The provider refused the call for a reason the user can fix.
        Exception: What the last attempt raised (or the first error that is not transient).
        asyncio.CancelledError: The run was cancelled, also during a wait.
    """
    attempt = 1
    while True:
        try:
            return await call()
        except Exception as exc:
            wait, refused = _next_attempt(exc, attempt, policy, model, step, purpose)
            if wait is None and refused is None:
                raise
        if refused is not None:
            raise refused
        await asyncio.sleep(wait or 0.0)
        attempt += 1


class ModelRetryMiddleware(AgentMiddleware):
    """Retries the agent's model calls after transient failures (see `ModelCallPolicy`).

    Args:
        policy: The timeout and retries; the timeout itself is the provider client's.
    """

    def __init__(self, policy: ModelCallPolicy) -> None:
        super().__init__()
        self.policy = policy

    @property
    def name(self) -> str:
        """Distinct from LangChain's middleware of the same purpose."""
        return "ResearchModelRetryMiddleware"

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        step = run_step(request.state["messages"]) + 1
        return call_with_retries(
            lambda: handler(request), self.policy, model=request.model, step=step
        )

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        step = run_step(request.state["messages"]) + 1
        return await acall_with_retries(
            lambda: handler(request), self.policy, model=request.model, step=step
        )
