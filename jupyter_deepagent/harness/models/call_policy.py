"""How long one model call may take and how often a failed one is sent again: `ModelCallPolicy`.

The harness retries model calls itself, so each retry is a visible `model_retry` event rather
than a provider client's silent back-off (Google's client, by default, retries a refused
connection for about half a minute before it says anything). `client_options` gives the
provider client the policy's timeout and turns its own retries off; `is_transient` tells an error
worth another attempt (a network failure, a timeout, a rate limit, a server error) from one that
would only fail again (a bad key, a bad request, a context overflow, this project's own errors).
"""

from __future__ import annotations

from dataclasses import dataclass

from jupyter_deepagent._exceptions import ResearchAssistantError

__all__ = ["ModelCallPolicy", "is_transient"]

_MAX_RETRY_WAIT = 60.0
"""The longest wait between two attempts, however many retries are allowed."""

# Provider -> the client options that turn its own retries off. Google's SDK reads 0 as "its
# default" (5 retries): 1 attempt in all is how it says "no retries".
_NO_CLIENT_RETRIES: dict[str, dict[str, int]] = {
    "google_genai": {"max_retries": 1},
    "openai": {"max_retries": 0},
    "azure_openai": {"max_retries": 0},
    "anthropic": {"max_retries": 0},
}
# Exception classes (by name, anywhere in the class's ancestry) of HTTP clients the providers use
# (httpx and its forks, requests, the OpenAI and Anthropic SDKs) that mean "the service could not
# be reached or did not answer in time"; no provider package is imported to check them.
_TRANSIENT_NAMES = frozenset(
    {
        "ConnectionError",
        "TimeoutError",
        "TimeoutException",
        "NetworkError",
        "RemoteProtocolError",
        "APIConnectionError",
        "APITimeoutError",
        "ServiceUnavailable",
        "DeadlineExceeded",
        "Timeout",
    }
)
_TRANSIENT_STATUS = frozenset({408, 429, 500, 502, 503, 504, 529})
_CHAIN_DEPTH = 5


@dataclass(frozen=True)
class ModelCallPolicy:
    """The timeout and retries of every model call of an agent.

    Attributes:
        timeout: Seconds one call may take (given to the provider's client); None: no limit.
        retries: Further attempts after a call fails with a transient error (0: none).
        first_wait: Seconds before the first retry; each later wait doubles (2 s, 4 s, ...),
            up to `_MAX_RETRY_WAIT`.
    """

    timeout: float | None = 60.0
    retries: int = 2
    first_wait: float = 2.0

    def __post_init__(self) -> None:
        """Check the values.

        Raises:
            ValueError: A negative number of retries or wait, or a timeout that is not positive.
        """
        if self.timeout is not None and not self.timeout > 0:
            msg = (
                f"model_timeout must be a positive number of seconds or None, not {self.timeout!r}"
            )
            raise ValueError(msg)
        if isinstance(self.retries, bool) or not isinstance(self.retries, int) or self.retries < 0:
            msg = f"model_retries must be a whole number of 0 or more, not {self.retries!r}"
            raise ValueError(msg)
        if not self.first_wait >= 0:
            msg = f"model_retry_wait must be 0 or more seconds, not {self.first_wait!r}"
            raise ValueError(msg)

    @property
    def attempts(self) -> int:
        """How many times a request is sent at most."""
        return self.retries + 1

    def wait_after(self, attempt: int) -> float:
        """Seconds to wait after failed attempt `attempt` (1-based) before the next one."""
        return min(self.first_wait * 2 ** (attempt - 1), _MAX_RETRY_WAIT)

    def client_options(self, provider: str) -> dict[str, object]:
        """Keyword arguments for `provider`'s chat model: the timeout, and no retries of its own
        for the providers whose clients are known to take them (Google, OpenAI, Anthropic)."""
        options: dict[str, object] = dict(_NO_CLIENT_RETRIES.get(provider, {}))
        if options and self.timeout is not None:
            options["timeout"] = self.timeout
        return options


def is_transient(exc: BaseException) -> bool:
    """Whether `exc`, raised by a model call, may go away if the same request is sent again.

    Yes for LangChain's model errors marked retryable (rate limit, timeout, connection, server
    error), for network errors and timeouts of the HTTP clients providers use, and for HTTP
    status 408, 429 and 5xx; also when such an error is the cause of the one raised. No for
    everything else: a rejected key or request, a context overflow, this project's own errors
    (a replay mismatch, a script error) and programming errors.
    """
    from langchain_core.exceptions import ModelError

    current: BaseException | None = exc
    for _ in range(_CHAIN_DEPTH):
        if current is None or isinstance(current, ResearchAssistantError):
            return False
        if isinstance(current, ModelError):  # LangChain's own classification decides
            return bool(current.is_retryable)
        if isinstance(current, (ConnectionError, TimeoutError)):
            return True
        elif {cls.__name__ for cls in type(current).__mro__} & _TRANSIENT_NAMES:
            return True
        status = getattr(current, "status_code", None) or getattr(current, "code", None)
        if isinstance(status, int) and status in _TRANSIENT_STATUS:
            return True
        current = current.__cause__
    return False
