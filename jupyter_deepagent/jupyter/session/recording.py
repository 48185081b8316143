"""The notebook's research log, wired to `%%agent`: each cell's run is recorded and replayed.

`_start_recording` opens `<notebook>.agentlog.jsonl`, finds every complete record of the cell
(or, for a run resumed after an approval, of that resume of the cell's turn), the latest first,
and wraps the run's chat model in a `ReplayChatModel` that serves them; `RunRecording.finish`
appends the run's record (secrets masked) and returns the summary kept in the cell's output
metadata. A run that replayed a record as it was (every model call served from it, ending as it
did) appends nothing: its summary names the record it replayed. A strict replay never writes.
The replay mode is the cell's `--replay`, else `JUPYTER_DEEPAGENT_REPLAY`, else the `replay`
setting (`%agent config replay=...`, default auto). `CellRecordings` remembers, per thread, which
cell's turn its next resume continues, so each run is recorded as the right record.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jupyter_deepagent._exceptions import (
    InputError,
    ModelConfigurationError,
    ReplayMismatch,
    ResearchLogNotWritten,
)
from jupyter_deepagent.events import APPROVAL_DECIDED
from jupyter_deepagent.jupyter.session.turns import CellAddress

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage

    from jupyter_deepagent.jupyter.session.budget_answers import BudgetDecision
    from jupyter_deepagent.jupyter.session.runs import RunPlan
    from jupyter_deepagent.trace.research_log.log import ResearchLog
    from jupyter_deepagent.trace.research_log.recorded import RecordedCall, Recording
    from jupyter_deepagent.trace.research_log.replay import CallLedger, ReplayChatModel
    from jupyter_deepagent.trace.run_trace import RunTrace

__all__ = ["REPLAY_ENV", "CellRecordings", "RunRecording", "replay_mode"]

REPLAY_ENV = "JUPYTER_DEEPAGENT_REPLAY"
_MODES = ("auto", "strict", "off")

_WAY_OUT_STRICT = (
    "What to do: if the change is intended, run the cell with `%%agent --replay auto` (or "
    "`%agent config replay=auto`, or `jupyter-deepagent run --replay auto`) to ask the live model "
    "and record its answer; otherwise undo the change so the recording applies."
)
_WAY_OUT_NO_MODEL = (
    "What to do: make the model usable ({why}) so the new request is answered live and recorded, "
    "or undo the change so the recording applies."
)


def _other_logs_note(missing: Path) -> str:
    """A note for a replay that finds no log where another notebook's sits beside it (a
    renamed or copied notebook): "" when there is none."""
    from jupyter_deepagent.trace.research_log.log import LOG_SUFFIX

    try:
        others = sorted(p.name for p in missing.parent.glob(f"*{LOG_SUFFIX}") if p != missing)
    except OSError:
        return ""
    if not others:
        return ""
    return (
        f"There is no {missing.name} beside the notebook, but {', '.join(others[:3])} is: if "
        "the notebook was renamed or copied, rename (or copy) its log to match. "
    )


def replay_mode(
    option: str | None, configured: str, environ: Mapping[str, str] = os.environ
) -> str:
    """The replay mode of a run: the cell's option, else the environment, else the setting.

    Raises:
        ValueError: `JUPYTER_DEEPAGENT_REPLAY` holds something other than auto, strict or off.
    """
    if option:
        return option
    from_env = environ.get(REPLAY_ENV, "").strip().lower()
    if from_env and from_env not in _MODES:
        msg = f"{REPLAY_ENV}={from_env!r}: use auto, strict or off"
        raise ValueError(msg)
    return from_env or configured


def _cell_label(address: CellAddress, first_line: str) -> str:
    words = " ".join(first_line.split())
    words = words if len(words) <= 50 else words[:49] + "…"
    return f'the cell "{words}"' if words else f"the cell {address.key}"


@dataclass
class RunRecording:
    """One `%%agent` run's part in the research log."""

    log: ResearchLog
    address: CellAddress
    ledger: CallLedger
    model: ReplayChatModel
    mode: str
    params: dict[str, Any]
    profile: Any
    redact: Callable[[str], str]
    resume: int = 0
    """0 for a cell's run; n for the n-th resume of the cell's turn (after a human decision)."""
    recorded_decision: dict[str, Any] | None = None
    """The decision the research log holds for this resume, when it has one to replay."""
    damage: tuple[str, ...] = ()
    """Damaged lines of the log (skipped; the intact records replay), to warn about."""
    secrets_at_start: int | None = None
    """Which secret values `redact` hid when the run started (`Redactor.fingerprint`): when
    they are the same at its end, what the run masked as it went is not masked again."""

    budget_answer: BudgetDecision | None = None
    """This resume's answer to a budget pause (see `answer_budget`), kept as its decision."""

    @property
    def answered(self) -> str:
        """What answered the run's model calls: replayed, scripted, live, mixed or none (the word
        of `harness.models.label.answered_by`, which the header and the log both say)."""
        from jupyter_deepagent.harness.models.label import answered_by

        return answered_by(self.ledger.outcome, self.model.label)

    def check_decision(self, fields: Mapping[str, object]) -> None:
        """Under strict replay, check the human decision against the one recorded.

        Raises:
            ReplayMismatch: The decision, its message or its edits differ from the log's.
        """
        recorded = self.recorded_decision
        if self.mode != "strict" or recorded is None:
            return
        keys = ("decision", "message", "edits")
        if all(recorded.get(k) == fields.get(k) for k in keys):
            return

        def said(d: Mapping[str, object]) -> str:
            return ", ".join(f"{k} {d.get(k)!r}" for k in keys if d.get(k) is not None)

        text = (
            f"{self.ledger.cell}: the decision differs from the research "
            f"log (strict replay): recorded {said(recorded)}; now {said(fields)}.\n"
            + self.ledger.way_out
        )
        raise ReplayMismatch(text, cell=self.ledger.cell, step=0)

    def answer_budget(self, decision: BudgetDecision) -> None:
        """This resume answers a budget pause with `decision`, which its record keeps (as an
        approval's), so a replay pauses there and, answered the same way, resumes the same.

        Raises:
            ReplayMismatch: Under strict replay, the answer differs from the log's.
        """
        recorded = self.recorded_decision
        if self.mode == "strict" and recorded is not None:
            keys = ("decision", "budget")
            if any(recorded.get(k) != decision.get(k) for k in keys):
                text = (
                    f"{self.ledger.cell}: the answer to the budget pause differs from the "
                    f"research log (strict replay): recorded {recorded.get('decision')!r} "
                    f"{recorded.get('budget') or ''}; now {decision['decision']!r} "
                    f"{decision['budget'] or ''}.\n" + self.ledger.way_out
                )
                raise ReplayMismatch(text, cell=self.ledger.cell, step=0)
        self.budget_answer = decision

    def finish(
        self, trace: RunTrace | None, thread: str, error: BaseException | None = None
    ) -> dict[str, Any]:
        """Append the run's record, unless it replayed one as it was or the replay is strict;
        returns its summary (for the cell's output metadata), naming the record it replayed or
        the one appended.

        Raises:
            OSError: The log cannot be written beside the notebook.
        """
        from jupyter_deepagent.trace.research_log.record import run_record, run_summary

        record = run_record(
            events=getattr(trace, "events", None) or [],
            calls=self.ledger.calls,
            messages=self.ledger.canon.messages,
            tools=self.ledger.canon.tools,
            cell_id=self.address.cell_id,
            source_key=self.address.source_key,
            thread=thread,
            mode=self.mode,
            outcome=self.answered,
            model=self.model.label,
            profile=self.profile,
            redact=getattr(self.redact, "frozen", lambda: self.redact)(),  # values gathered once
            parts_masked=self.secrets_at_start is not None
            and self.secrets_at_start == _secrets_now(self.redact),
        )
        record["params"] = self.params
        if self.resume and self.budget_answer is not None:
            record.update(kind="resume", resume=self.resume, decision=dict(self.budget_answer))
        elif self.resume:
            decided: dict[str, Any] = next(
                (e for e in record["events"] if e.get("type") == APPROVAL_DECIDED), {}
            )
            record.update(
                kind="resume",
                resume=self.resume,
                decision={
                    k: decided.get(k)
                    for k in ("decision", "via", "tools", "tool_call_ids", "message", "edits")
                },
            )
        if isinstance(error, ReplayMismatch) or self.ledger.mismatch is not None:
            record["status"] = "mismatch"
        elif error is not None and record["status"] == "ok":
            record["status"] = "error"
        replayed = self._replayed(record)
        if replayed is not None or self.mode == "strict":
            return run_summary({**record, "hash": replayed.hash if replayed else None})
        return run_summary(self.log.append(record))

    def _replayed(self, record: Mapping[str, Any]) -> Recording | None:
        """The recording this run replayed as it was: every model call served from it, the run
        ending as it did (for a resume, after the same human decision)."""
        recording = self.ledger.replayed_recording()
        if recording is None or recording.kind != record.get("kind"):
            return None
        if recording.status != record.get("status"):
            return None
        if self.resume:
            if recording.record.get("resume") != self.resume:
                return None
            before, now = recording.record.get("decision") or {}, record.get("decision") or {}
            keys = ("decision", "tools", "message", "edits", "budget")
            if any(before.get(k) != now.get(k) for k in keys):
                return None
        return recording


def _secrets_now(redact: Callable[[str], str]) -> int | None:
    """The fingerprint of the values `redact` hides now, when it can tell (a `Redactor`)."""
    fingerprint = getattr(redact, "fingerprint", None)
    return fingerprint() if callable(fingerprint) else None


def _model_params(model: Any) -> dict[str, Any]:
    try:
        params = dict(model._get_ls_params())
    except Exception:
        return {}
    return {
        k.removeprefix("ls_"): v
        for k, v in params.items()
        if k in ("ls_temperature", "ls_max_tokens", "ls_stop") and v is not None
    }


def _start_recording(
    *,
    notebook: Path,
    address: CellAddress,
    mode: str,
    spec: object,
    make_model: Callable[[], BaseChatModel],
    redact: Callable[[str], str],
    resume: int = 0,
    on_served: Callable[[BaseMessage], None] | None = None,
    carried: Sequence[RecordedCall] = (),
) -> RunRecording:
    """Open the notebook's log, find the cell's recording and wrap the live model for the run.

    `spec` is the configured model ("provider:model" or a chat model); `make_model` makes it.
    `on_served` is called with each response served from the log (see `ReplayChatModel`).
    `carried` are recorded calls the run before left unserved, also offered to a resume (the
    run paused where its recording did not, for code from the log to be approved).

    A model that cannot be made (no API key) is tolerated when the cell has a recording to
    replay: a request that differs then fails with the reason.

    Raises:
        MissingAPIKey: No key, and nothing recorded for this cell (or replay is off).
        ModelConfigurationError: The model cannot be created, likewise.
        OSError: The log exists but cannot be read.
    """
    from jupyter_deepagent.harness.models.label import model_label
    from jupyter_deepagent.trace.research_log.log import ResearchLog, log_path_for
    from jupyter_deepagent.trace.research_log.replay import CallLedger, ReplayChatModel

    log = ResearchLog(log_path_for(notebook))
    found = log.recordings_for(address.cell_id, address.source_key, resume) if mode != "off" else []
    carried = list(carried) if mode != "off" else []
    recorded = found[0] if found else None
    calls = any(record.get("calls") for record in found) or bool(carried)
    label = _cell_label(address, address.title) + (f" (resume {resume})" if resume else "")
    try:
        inner = make_model()
        why = ""
    except ModelConfigurationError as exc:
        if not calls:
            raise
        inner, why = None, " ".join(str(exc).split())
    way_out = (
        _WAY_OUT_STRICT
        if mode == "strict" or inner is not None
        else (_WAY_OUT_NO_MODEL.format(why=why))
    )
    if not found and mode != "off" and not log.exists():
        way_out = _other_logs_note(log.path) + way_out
    ledger = CallLedger(found, mode, label, redact=redact, way_out=way_out, carried=carried)
    if inner is not None:
        model_name, params = model_label(inner), _model_params(inner)
        profile = getattr(inner, "profile", None)
    else:
        # the configured model, named as it would name itself: a change of model is a change
        known = recorded or {}  # only unserved calls carried from the run before: no record
        model_name = model_label(spec) if isinstance(spec, str) else str(known.get("model"))
        params, profile = dict(known.get("params") or {}), known.get("profile")
    wrapper = ReplayChatModel(
        inner=inner,
        ledger=ledger,
        label=model_name,
        params=params,
        redact=redact,
        profile=profile,
        on_served=on_served,
    )
    decision = recorded.get("decision") if recorded else None
    damage = tuple(
        f"the research log {log.path.name}, {problem} (run `jupyter-deepagent "
        "verify` on the notebook for more)"
        for problem in log.damage()
    )
    return RunRecording(
        log,
        address,
        ledger,
        wrapper,
        mode,
        params,
        profile,
        redact,
        resume,
        decision if isinstance(decision, dict) else None,
        damage,
        _secrets_now(redact),
    )


class CellRecordings:
    """Which record of the research log each run of this kernel is, and writing it.

    A cell's run is its cell's record; a resume is the next resume of the turn of the last
    `%%agent` cell run on its thread, and is offered the recorded model calls the run before it
    left unserved.
    """

    def __init__(self) -> None:
        self._paused: dict[str, tuple[CellAddress, int]] = {}
        """thread -> the cell of its last `%%agent` turn, and how many resumes it has had"""
        self._unserved: dict[str, list[RecordedCall]] = {}
        """thread -> recorded model calls its last run left unserved (offered to its resume)"""

    def start(
        self,
        notebook: Path | None,
        thread: str,
        cell: CellAddress | None,
        *,
        resume: bool,
        mode: str,
        spec: object,
        make_model: Callable[[], BaseChatModel],
        redact: Callable[[str], str],
        on_served: Callable[[BaseMessage], None],
    ) -> RunRecording | None:
        """The recording of a run on `thread`: of `cell`'s run, or (`resume`) of the next resume
        of the thread's last cell turn; None outside a known notebook, for a run that is not a
        cell's turn, or for a resume of a thread no `%%agent` cell of this kernel ran on.

        Raises:
            InputError: The research log exists but cannot be read.
            MissingAPIKey: No key, and nothing recorded to replay (see `_start_recording`).
            ModelConfigurationError: The model cannot be created, likewise.
        """
        number = 0
        carried: list[RecordedCall] = []
        if resume:
            paused = self._paused.get(thread)
            if paused is None:
                return None
            cell, number = paused[0], paused[1] + 1
            carried = self._unserved.get(thread, [])
        if cell is None or notebook is None:
            return None
        try:
            return _start_recording(
                notebook=notebook,
                address=cell,
                mode=mode,
                spec=spec,
                make_model=make_model,
                redact=redact,
                resume=number,
                on_served=on_served,
                carried=carried,
            )
        except OSError as exc:
            msg = f"cannot read the research log beside {notebook.name}: {exc}"
            raise InputError(msg, source=notebook.name) from None

    def turn(self, thread: str, cell: CellAddress) -> None:
        """`cell` ran a turn on `thread`: the thread's next resume continues it."""
        self._paused[thread] = (cell, 0)

    def finish(
        self, plan: RunPlan, trace: RunTrace | None, error: BaseException | None
    ) -> dict[str, Any]:
        """Append the run to the notebook's research log (when it is a cell's turn); returns its
        summary for the cell's output metadata.

        Raises:
            ResearchLogNotWritten: The run finished but the log could not be written.
        """
        recording = plan.recording
        if recording is None:
            return {}
        if recording.resume:  # the next resume of this cell's turn is the one after
            self._paused[plan.thread] = (recording.address, recording.resume)
        self._unserved[plan.thread] = recording.ledger.unserved()
        try:
            return recording.finish(trace, plan.thread, error)
        except OSError as exc:
            if error is None:
                path = recording.log.path
                msg = (
                    f"The run finished (its results are above), but the research log {path.name} "
                    f"could not be written: {exc.strerror or exc}. This run is not recorded, so "
                    "re-running the cell asks the model again. Free disk space or make the file "
                    "writable, then re-run the cell to record it."
                )
                raise ResearchLogNotWritten(msg, path=str(path)) from None
            return {}
