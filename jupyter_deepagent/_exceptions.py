"""The exceptions this project raises, under one root.

```
ResearchAssistantError
 ├── BackendError                  a file operation failed; carries .path
 │    ├── FileNotFound             no file or folder at that path
 │    ├── PermissionDenied         the mount is read-only or the path is protected
 │    ├── InvalidPath              the path is malformed or would leave its mount
 │    ├── EditConflict             old text not found, or found more than once
 │    ├── FileTooLarge             over the backend's max_file_bytes
 │    └── BinaryFile               the file is not text; it is reported, not dumped
 ├── InputError (also ValueError)  a setting, option, env file, state folder or research log the
 │                                 user wrote cannot be used; carries .source
 ├── ModelConfigurationError       a model string or key cannot be turned into a model
 │    └── MissingAPIKey            the provider needs a key that is not set
 ├── ModelCallFailed               a model call failed (network, provider); secrets masked
 │    └── ProviderRefused          the provider refused it: the key, the quota, the model name;
 │                                 carries .reason, .setting, .retry_helps
 ├── ScriptError                   a ScriptedChatModel script is malformed or exhausted
 ├── ReplayMismatch                a request differs from the notebook's research log
 ├── RecordedCodeNotApproved       code from the research log waits for this kernel's approval
 ├── ResearchLogNotWritten         a run finished but the research log could not take it; .path
 ├── ContextOverflow               the conversation does not fit the window, even compressed
 ├── StateDamaged                  a state folder's database is damaged; carries .path
 ├── StateNotWritten               a state folder's database cannot be written now (a full disk,
 │                                 a lock, no permission); nothing is damaged; carries .path
 ├── DatabaseUnreachable           the PostgreSQL database cannot be reached; carries .address
 └── ThreadBusy                    another process runs the thread; carries .thread, .pid
```

Every message says what happened, which file or option, and what to do. Builtins (`TypeError`,
`ValueError`) are used only for caller misuse of the Python API.
"""

from __future__ import annotations

__all__ = [
    "BackendError",
    "BinaryFile",
    "ContextOverflow",
    "DatabaseUnreachable",
    "EditConflict",
    "FileNotFound",
    "FileTooLarge",
    "InputError",
    "InvalidPath",
    "MissingAPIKey",
    "ModelCallFailed",
    "ModelConfigurationError",
    "PermissionDenied",
    "ProviderRefused",
    "RecordedCodeNotApproved",
    "ReplayMismatch",
    "ResearchAssistantError",
    "ResearchLogNotWritten",
    "ScriptError",
    "StateDamaged",
    "StateNotWritten",
    "ThreadBusy",
]


class ResearchAssistantError(Exception):
    """Root of every error raised by jupyter_deepagent."""


class InputError(ResearchAssistantError, ValueError):
    """Something the user wrote or keeps cannot be used: a setting in a TOML file or `%agent config`,
    a magic option, an env file, a state folder, a research log. The message says which, what is
    wrong and what to do; `source` names the file or option when one is known. It is a `ValueError`
    too, so code that caught those keeps working."""

    def __init__(self, message: str, *, source: str | None = None) -> None:
        super().__init__(message)
        self.source = source


class BackendError(ResearchAssistantError):
    """A file operation on a backend failed."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


class FileNotFound(BackendError):
    """No file or folder exists at the path."""


class PermissionDenied(BackendError):
    """The operation is not allowed on this path (read-only mount, protected file)."""


class InvalidPath(BackendError):
    """The path is malformed (NUL byte, too long) or resolves outside its mount."""


class EditConflict(BackendError):
    """An edit's old text was not found, or was found more than once without replace_all."""

    def __init__(self, message: str, *, path: str | None = None, matches: int = 0) -> None:
        super().__init__(message, path=path)
        self.matches = matches


class FileTooLarge(BackendError):
    """The file is larger than the backend allows."""


class BinaryFile(BackendError):
    """The file holds binary data; it can be listed but not read as text."""


class ModelConfigurationError(ResearchAssistantError):
    """A model specification cannot be turned into a chat model."""


class MissingAPIKey(ModelConfigurationError):
    """The chosen provider needs an API key that is not set."""

    def __init__(self, message: str, *, variables: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.variables = variables


class ModelCallFailed(ResearchAssistantError):
    """The model call of a run failed (network, provider error); the message says which model.

    Attributes:
        model: The model's label, e.g. "google_genai:gemini-2.5-flash".
        error_type: The class name of the provider's exception, e.g. "ConnectError".
    """

    def __init__(self, message: str, *, model: str = "", error_type: str = "") -> None:
        super().__init__(message)
        self.model = model
        self.error_type = error_type


class ProviderRefused(ModelCallFailed):
    """The provider answered the model call with a refusal the user can fix: the API key is
    invalid or revoked, its quota is used up (after the retries), the model name is unknown, or
    the key may not use the model. The message says which variable or setting to change, where
    the key was read from, and whether running again can help.

    Attributes:
        reason: "key", "quota", "model" or "permission".
        setting: The variable or setting to change ("GOOGLE_API_KEY", "model").
        retry_helps: Whether sending the same request later may succeed (a rate limit: yes).
        status: The HTTP status the provider answered (None when unknown).
    """

    def __init__(
        self,
        message: str,
        *,
        model: str = "",
        error_type: str = "",
        reason: str = "",
        setting: str = "",
        retry_helps: bool = False,
        status: int | None = None,
    ) -> None:
        super().__init__(message, model=model, error_type=error_type)
        self.reason = reason
        self.setting = setting
        self.retry_helps = retry_helps
        self.status = status


class ScriptError(ResearchAssistantError):
    """A ScriptedChatModel script is malformed, or the run asked for more replies than it has."""


class ReplayMismatch(ResearchAssistantError):
    """A model request differs from what the notebook's research log recorded for its cell.

    Attributes:
        cell: The cell, as the message names it.
        step: The model call of the run (1-based) that differed.
    """

    def __init__(self, message: str, *, cell: str = "", step: int = 0) -> None:
        super().__init__(message)
        self.cell = cell
        self.step = step


class RecordedCodeNotApproved(ResearchAssistantError):
    """Nothing was run: code a research log served (a recorded `python` call) waits for an
    approval given in this kernel (or, headless, `--approve-recorded`); the message shows it."""


class ContextOverflow(ResearchAssistantError):
    """The conversation could not be brought inside the model's context window."""


class ResearchLogNotWritten(ResearchAssistantError):
    """A run finished, but the notebook's research log could not take it (a full disk, no
    permission): its results are shown, but it will not replay.

    Attributes:
        path: The research log.
        outcome: What the run gave (the magic shows it before the error), when it finished.
    """

    def __init__(self, message: str, *, path: str, outcome: object = None) -> None:
        super().__init__(message)
        self.path = path
        self.outcome = outcome


class StateDamaged(ResearchAssistantError):
    """A database of the state folder (conversations or memories) is damaged or truncated.

    The file is left as it is: never repaired, replaced or overwritten.

    Attributes:
        path: The damaged file.
    """

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


class StateNotWritten(ResearchAssistantError):
    """A database of the state folder cannot be read or written now (a full disk, a lock another
    program holds, no permission), though it passes SQLite's check: nothing is damaged, the
    conversation keeps every step saved before, and the cell can run again once the cause is gone.

    Attributes:
        path: The state folder.
    """

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


class DatabaseUnreachable(ResearchAssistantError):
    """The PostgreSQL database of `database_url` cannot be reached (or refused the login).

    Attributes:
        address: Where it was sought ("db.example.org:5432"), never with the password.
    """

    def __init__(self, message: str, *, address: str) -> None:
        super().__init__(message)
        self.address = address


class ThreadBusy(ResearchAssistantError):
    """Another process (a second kernel) is running the same thread; this one did nothing.

    Attributes:
        thread: The thread's name.
        pid: The other process's id, when it could be read (else None).
    """

    def __init__(self, message: str, *, thread: str, pid: int | None) -> None:
        super().__init__(message)
        self.thread = thread
        self.pid = pid
