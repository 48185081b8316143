"""A call waiting for approval, shown in the cell with Approve / Edit / Reject buttons.

The waiting calls are shown as Markdown rendered in the kernel (the tool, its arguments as JSON,
the code of a `python` call in a code block), followed by the buttons.
Approve resumes the run; Edit opens the arguments (the code) for changes, then runs the edited
call; Reject sends the reason typed beside it to the agent. The resumed run's output continues in
the same cell, in an Output widget below the buttons, which then say what was decided; its events
go on in the paused run's inspector (one inspector for the whole turn). The
Markdown stays readable where widgets cannot run (a reopened notebook, nbconvert, a terminal),
and names the `%agent resume ...` commands that do the same.

What the model wrote (tool names, arguments, code) is shown inside code spans and blocks, rendered
and cleaned in the kernel (`trace.safe_html`): data, never markup.
"""

from __future__ import annotations

import html
import json
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, cast

from jupyter_deepagent.jupyter.views.code_display import shown_code
from jupyter_deepagent.jupyter.views.safe_display import code_span, markdown
from jupyter_deepagent.trace.safe_html import clean_html

if TYPE_CHECKING:
    import ipywidgets

__all__ = ["ApprovalPrompt", "ButtonPrompt", "OutputWidgetSink", "approval_markdown"]

Decide = Callable[[str, str, Mapping[str, object]], None]
"""Called with (decision, reason, edited arguments) when a button is clicked."""

_LABELS = {"approve": "approved", "edit": "edited and approved", "reject": "rejected"}


def _code(request: Mapping[str, object]) -> str | None:
    """The code of a `python` call, else None."""
    args = request.get("args")
    code = args.get("code") if isinstance(args, Mapping) else None
    return code if request.get("name") == "python" and isinstance(code, str) else None


def _fence(text: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def approval_markdown(
    pending: Sequence[Mapping[str, Any]],
    thread: str,
    *,
    buttons: bool,
    code_id: str | None = None,
) -> str:
    """The waiting calls as Markdown, with how to answer them (`code_id`: the code comes from
    a research log, and only `%agent resume approve CODE_ID` names it)."""
    lines = [f"**Waiting for your approval** (thread {code_span(thread)}):", ""]
    for request in pending:
        name = code_span(str(request["name"]))
        code = _code(request)
        language = "python" if code is not None else "json"
        if code is None:
            code = json.dumps(request.get("args", {}), ensure_ascii=False, indent=2, default=str)
        code, notes = shown_code(code)  # invisible or reordering characters made visible
        fence = _fence(code)
        lines += [f"{name}:", ""]
        lines += [line for note in notes for line in (f"**Read closely:** {note}", "")]
        lines += [f"{fence}{language}", code, fence, ""]
    allowed = sorted({d for request in pending for d in request.get("allowed", [])})
    choices = {
        "approve": f"`%agent resume approve {code_id}`" if code_id else "`%agent resume approve`",
        "reject": "`%agent resume reject <why>`",
        "edit": "`%agent resume edit key=value ...`",
    }
    commands = ", ".join(choices[d] for d in allowed if d in choices)
    where = "Use the buttons, or continue" if buttons else "Continue"
    lines.append(f"{where} in a new cell with {commands}.")
    return "\n".join(lines)


class ButtonPrompt:
    """What the buttons of a paused run share: a status line, an Output widget the resumed run
    writes to, one answer only (a second click is ignored), the text shown where widgets cannot
    run, and the answer given elsewhere (`%agent resume`).

    A subclass builds its buttons, sets `widget`, and defines `_disable`.
    """

    placeholder: ClassVar[str] = "[buttons: they need the running kernel]"
    """The `text/plain` shown where widgets cannot run."""
    kind: ClassVar[str] = "buttons"
    """The output's `jupyter_deepagent.kind` metadata."""

    def __init__(self) -> None:
        import ipywidgets as widgets

        self.inspector: object = None
        """The inspector of the run that paused, shown in the cell: a run resumed by a button
        continues in it, so the cell shows one inspector for the whole turn."""
        self._busy = threading.Lock()
        self.done = False
        self.status = widgets.HTML("")
        self.output = widgets.Output()
        self.widget: ipywidgets.VBox | None = None

    def _repr_mimebundle_(
        self, include: object = None, exclude: object = None
    ) -> tuple[dict[str, object], dict[str, object]]:
        assert self.widget is not None, "a ButtonPrompt subclass sets its widget"
        data = self.widget._repr_mimebundle_()
        data = dict(data[0] if isinstance(data, tuple) else data)
        data["text/plain"] = self.placeholder
        return data, {"jupyter_deepagent": {"kind": self.kind}}

    def answered(self, text: str) -> None:
        """Show that the pause was answered elsewhere (`%agent resume`) and disable the buttons."""
        if self.done:
            return
        self.done = True
        self._disable()
        self._say(f"<i>{html.escape(text)}</i>")

    def _say(self, html_text: str) -> None:
        """Show a status line beside the buttons (its texts escaped; cleaned all the same)."""
        self.status.value = clean_html(html_text)

    def _disable(self) -> None:
        raise NotImplementedError

    def _answering(self) -> None:
        """Called once the buttons are disabled for an answer (nothing to do by default)."""

    def _answer_with(self, said: str, detail: str, resume: Callable[[], None]) -> None:
        """Answer the pause once: disable the buttons, say `said` (and the escaped `detail`),
        and run `resume` with what it displays in the Output widget; a refusal it raises is
        shown beside the buttons."""
        from jupyter_deepagent.jupyter.tools.output_routing import route_output

        if self.done or not self._busy.acquire(blocking=False):
            return  # answered already, or a second click while the first one runs
        self.done = True
        self._disable()
        self._answering()
        self._say(f"✔ <b>{said}</b>{detail}; the run continues below")
        try:
            with route_output(OutputWidgetSink(self.output)):
                resume()
        except BaseException as exc:
            if isinstance(exc, SystemExit):
                raise
            lines = getattr(exc, "_render_traceback_", None)
            text = lines()[0] if callable(lines) else f"{type(exc).__name__}: {exc}"
            self._say(f"✘ <b>{said}</b>, but: {html.escape(text)}")


class ApprovalPrompt(ButtonPrompt):
    """The buttons for one pause of a thread; `decide` runs when one is clicked.

    Args:
        pending: The waiting calls (`{name, args, allowed}` each, as `RunOutcome.pending`).
        thread: The thread that waits.
        decide: Resumes the run with (decision, reason, edits); what it displays goes to the
            prompt's Output widget. It raises to report a refusal (shown beside the buttons).
        code_id: The id of the code, when it comes from a research log (the text then names
            `%agent resume approve CODE_ID`, the only command that approves it).
    """

    placeholder = "[Approve / Edit / Reject buttons: they need the running kernel]"
    kind = "approval-buttons"

    def __init__(
        self,
        pending: Sequence[Mapping[str, Any]],
        thread: str,
        decide: Decide,
        code_id: str | None = None,
    ) -> None:
        import ipywidgets as widgets

        super().__init__()
        self.pending = list(pending)
        self.thread = thread
        self.code_id = code_id
        self._decide = decide
        allowed = (
            set.intersection(*(set(r.get("allowed", [])) for r in self.pending))
            if (self.pending)
            else set()
        )
        self.approve = widgets.Button(description="Approve", button_style="success", icon="check")
        self.edit = widgets.Button(description="Edit", icon="pencil")
        self.reject = widgets.Button(description="Reject", button_style="danger", icon="times")
        self.reason = widgets.Text(
            placeholder="why (sent to the agent with Reject)", layout=widgets.Layout(width="22em")
        )
        self.editor = widgets.Textarea(
            value=self._editable(), layout=widgets.Layout(width="100%", height="10em")
        )
        self.run_edited = widgets.Button(description="Run edited", button_style="success")
        self.cancel_edit = widgets.Button(description="Cancel")
        edit_buttons = widgets.HBox([self.run_edited, self.cancel_edit])
        self.editing = widgets.VBox(
            [self.editor, edit_buttons], layout=widgets.Layout(display="none")
        )
        self.approve.disabled = "approve" not in allowed
        self.reject.disabled = "reject" not in allowed
        self.edit.disabled = "edit" not in allowed or len(self.pending) != 1
        if len(self.pending) > 1:
            self.edit.tooltip = "several calls wait: edit them with %agent resume edit"
        self.approve.on_click(lambda _: self._answer("approve"))
        self.reject.on_click(lambda _: self._answer("reject", message=self.reason.value.strip()))
        self.edit.on_click(lambda _: self._show_editor(True))
        self.cancel_edit.on_click(lambda _: self._show_editor(False))
        self.run_edited.on_click(lambda _: self._answer_edited())
        buttons = widgets.HBox([self.approve, self.edit, self.reject, self.reason])
        self.widget = widgets.VBox([buttons, self.editing, self.status, self.output])

    # -- display ---------------------------------------------------------------------------------
    def show(self, place: Callable[[object], None] | None = None) -> None:
        """Display the waiting calls as Markdown, then the buttons (through `place`, the cell's
        spot under the answer, when given)."""
        from IPython.display import display

        place = place or display
        text = approval_markdown(self.pending, self.thread, buttons=True, code_id=self.code_id)
        place(markdown(text, {"jupyter_deepagent": {"kind": "approval"}}))
        place(self)

    # -- answering -------------------------------------------------------------------------------
    def _editable(self) -> str:
        if len(self.pending) != 1:
            return ""
        request = self.pending[0]
        code = _code(request)
        if code is not None:
            return code
        return json.dumps(request.get("args", {}), ensure_ascii=False, indent=2, default=str)

    def _show_editor(self, shown: bool) -> None:
        self.editing.layout.display = "" if shown else "none"

    def _answer_edited(self) -> None:
        request = self.pending[0]
        text = self.editor.value
        if _code(request) is not None:
            edits: dict[str, object] = {"code": text}
        else:
            try:
                edits = json.loads(text)
            except ValueError as exc:
                self._say(f"<b>The arguments are not JSON:</b> {html.escape(str(exc))}")
                return
            if not isinstance(edits, dict):
                self._say("<b>The arguments must be a JSON object</b> ({...}).")
                return
        self._answer("edit", edits=edits)

    def _disable(self) -> None:
        for button in (self.approve, self.edit, self.reject, self.run_edited, self.cancel_edit):
            button.disabled = True
        self.reason.disabled = True
        self.editor.disabled = True

    def _answering(self) -> None:
        self._show_editor(False)

    def _answer(
        self, decision: str, *, message: str = "", edits: Mapping[str, object] | None = None
    ) -> None:
        why = f": {html.escape(message)}" if message else ""
        self._answer_with(
            _LABELS.get(decision, decision),
            why,
            lambda: self._decide(decision, message, edits or {}),
        )


class OutputWidgetSink:
    """Writes printed text and displays into an `ipywidgets.Output` as its `outputs`, updating a
    display in place when its display id is updated (the widget's own capture cannot)."""

    def __init__(self, widget: ipywidgets.Output) -> None:
        self.widget = widget
        self._outputs: list[dict[str, object]] = list(widget.outputs)
        self._ids: dict[str, list[int]] = {}
        self._lock = threading.Lock()

    def stream(self, name: str, text: str) -> None:
        with self._lock:
            last = self._outputs[-1] if self._outputs else None
            if last and last.get("output_type") == "stream" and last.get("name") == name:
                self._outputs[-1] = {**last, "text": cast("str", last["text"]) + text}
            else:
                self._outputs.append({"output_type": "stream", "name": name, "text": text})
            self._push()

    def display(
        self,
        data: Mapping[str, object],
        metadata: Mapping[str, object],
        transient: Mapping[str, object] | None,
        update: bool,
    ) -> None:
        output: dict[str, object] = {
            "output_type": "display_data",
            "data": dict(data),
            "metadata": dict(metadata),
        }
        display_id = str((transient or {}).get("display_id") or "")
        with self._lock:
            if update:
                for index in self._ids.get(display_id, []):
                    self._outputs[index] = output
            else:
                if display_id:
                    self._ids.setdefault(display_id, []).append(len(self._outputs))
                self._outputs.append(output)
            self._push()

    def clear(self, wait: bool) -> None:
        with self._lock:
            self._outputs = []
            self._ids = {}
            self._push()

    def _push(self) -> None:
        self.widget.outputs = tuple(self._outputs)
