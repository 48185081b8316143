"""AGENTS.md memory: files read through the backend at every model call and always in the prompt.

Nothing is cached per thread, so an edit between two runs (or during one) is what the next model
call sees. Missing files are skipped with a warning event. A leading UTF-8 byte-order mark (as
some editors save) is dropped, so the model and the token count see only the text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from jupyter_deepagent._exceptions import BackendError, FileNotFound
from jupyter_deepagent.backends.protocol import BackendProtocol
from jupyter_deepagent.harness.compression.tokens import approx_tokens, head_within
from jupyter_deepagent.harness.files import read_text
from jupyter_deepagent.harness.prompt.sections import PromptSection

__all__ = [
    "MEMORY_TOKENS_UNKNOWN_WINDOW",
    "MemoryFile",
    "fit_memory",
    "load_memory",
    "memory_section",
    "memory_token_budget",
]

_MEMORY_WINDOW_SHARE = 0.1
"""The share of the context window one memory file may take in the prompt."""

MEMORY_TOKENS_UNKNOWN_WINDOW = 20_000
"""What one memory file may take when the context window is not known."""

_MEMORY_GUIDANCE = """\
These files are your long-term memory; they are loaded into every conversation. Update them with \
`edit_file` when the user states a lasting preference, corrects you, or asks you to remember \
something, and when you learn a fact about the project that will matter next time. Keep entries \
short and current; do not record one-off task details, and never write secrets or keys."""


@dataclass(frozen=True)
class MemoryFile:
    """A memory file as loaded: its path and text (None when it could not be read)."""

    path: str
    text: str | None
    problem: str | None = None


def load_memory(backend: BackendProtocol, paths: Sequence[str]) -> list[MemoryFile]:
    """Read each memory file; a missing or unreadable one comes back with `problem` set."""
    loaded = []
    for path in paths:
        try:
            loaded.append(MemoryFile(path, read_text(backend, path).removeprefix("\ufeff")))
        except FileNotFound:
            loaded.append(
                MemoryFile(path, None, f"memory file {path} does not exist; it was skipped")
            )
        except BackendError as exc:
            loaded.append(MemoryFile(path, None, f"memory file {path} was skipped: {exc}"))
    return loaded


def memory_section(files: Sequence[MemoryFile]) -> PromptSection:
    """The memory section: each readable file in an <agent_memory> block, then the guidance."""
    present = [f for f in files if f.text is not None]
    blocks = [f'<agent_memory path="{f.path}">\n{f.text}\n</agent_memory>' for f in present]
    if not blocks:
        blocks = ["(No memory files exist yet. Create one of the paths below to start.)"]
    paths = ", ".join(f.path for f in files)
    text = "\n\n".join(["## Memory", *blocks, f"Memory paths: {paths}.", _MEMORY_GUIDANCE])
    return PromptSection("memory", f"memory: {paths}", text)


def memory_token_budget(window: int | None) -> int:
    """Tokens one memory file may take: a tenth of the window, 20,000 when it is unknown."""
    if window is None:
        return MEMORY_TOKENS_UNKNOWN_WINDOW
    return max(1, int(window * _MEMORY_WINDOW_SHARE))


def fit_memory(
    files: Sequence[MemoryFile], budget: int
) -> tuple[list[MemoryFile], list[tuple[str, int]]]:
    """The memory files with any over `budget` tokens cut (at a line end, with a marker the
    model reads), and the (path, tokens) of each file that was cut."""
    fitted, cut = [], []
    for memory_file in files:
        text = memory_file.text
        tokens = approx_tokens(text or "")
        if text is None or tokens <= budget:
            fitted.append(memory_file)
            continue
        head = head_within(text, budget)
        head = head.rsplit("\n", 1)[0] if "\n" in head else head
        marker = (
            f"[… {memory_file.path} is cut here: it is {tokens:,} tokens, more than the "
            f"{budget:,} a memory file may take in the prompt. Read the rest with read_file.]"
        )
        fitted.append(MemoryFile(memory_file.path, f"{head}\n\n{marker}", memory_file.problem))
        cut.append((memory_file.path, tokens))
    return fitted, cut
