"""A run paused at its budget, shown in the cell with Continue / Raise budget / Stop buttons.

The pause says what was spent and on what (main agent, subagents, summarizer), the budget, the
estimate of the next call and its model, as Markdown rendered in the kernel, followed by the
buttons: Continue lets that call go (the next one that would pass the budget asks again), Raise
budget sets the budget typed beside it, Stop ends the run and leaves the thread ready for the
next cell. As with an approval, the resumed run's output continues in the same cell, below the
buttons, and the Markdown names the `%agent resume ...` commands that do the same where widgets
cannot run (a terminal, a reopened notebook).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Mapping, Sequence

from jupyter_deepagent.events import BUDGET_DECIDED, BUDGET_REACHED
from jupyter_deepagent.jupyter.views.approval_buttons import ButtonPrompt
from jupyter_deepagent.jupyter.views.safe_display import code_span, markdown

__all__ = [
    "BudgetPrompt",
    "budget_markdown",
    "budget_stop",
    "budget_text",
    "pause_text",
    "spent_text",
]

Answer = Callable[[str, str | None], None]
"""Called with (action, new budget or None) when a button is clicked."""

_LABELS = {"continue": "continued", "raise": "budget raised", "stop": "stopped"}


def _amount(value: object, unit: str) -> str:
    number = float(value) if isinstance(value, (int, float)) else 0.0
    return f"{int(number):,} tokens" if unit == "tokens" else f"${number:.4f}"


def spent_text(pause: Mapping[str, object]) -> str:
    """What was spent and on what: "$0.4810 (main $0.3000 / subagents $0.1810 / summarizer
    $0.0000)", with what the research log served and the calls of unknown price."""
    unit = str(pause.get("unit", "usd"))
    text = (
        f"{_amount(pause.get('spent'), unit)} (main {_amount(pause.get('spent_main'), unit)} / "
        f"subagents {_amount(pause.get('spent_subagents'), unit)} / summarizer "
        f"{_amount(pause.get('spent_summarizer'), unit)})"
    )
    replayed = pause.get("spent_replayed")
    if isinstance(replayed, (int, float)) and replayed:
        text += f", {_amount(replayed, unit)} of it replayed from the research log (not paid now)"
    unpriced = pause.get("unpriced_calls")
    if isinstance(unpriced, int) and unpriced:
        text += f"; {unpriced} call{'s' if unpriced != 1 else ''} of unknown price not counted"
    return text


def pause_text(pause: Mapping[str, object], model: Callable[[str], str] = str) -> str:
    """One budget pause in a line: "Paused at budget $0.50: spent $0.4810 (main ... ); the next
    call (main agent, on google_genai:gemini-2.5-flash) would cost about $0.0210" (`model`
    writes the model's name: a code span in Markdown)."""
    unit = str(pause.get("unit", "usd"))
    agent = str(pause.get("agent") or "main")
    who = "main agent" if agent == "main" else f"subagent {agent}"
    verb = "use" if unit == "tokens" else "cost"
    return (
        f"Paused at budget {pause.get('budget')}: spent {spent_text(pause)}; the next call "
        f"({who}, on {model(str(pause.get('model')))}) would {verb} about "
        f"{_amount(pause.get('next_call'), unit)}"
    )


def budget_markdown(pauses: Sequence[Mapping[str, object]], thread: str, *, buttons: bool) -> str:
    """The budget pauses as Markdown, with how to answer them."""
    lines = [f"**Paused at the budget** (thread {code_span(thread)}):", ""]
    lines += [f"- {pause_text(pause, model=code_span)}" for pause in pauses]
    where = "Use the buttons, or continue" if buttons else "Continue"
    lines += [
        "",
        f"{where} in a new cell with `%agent resume continue` (this call goes ahead), "
        '`%agent resume raise "$1"` (a new budget) or `%agent resume stop` (end the run; the '
        "thread stays ready for the next cell).",
    ]
    return "\n".join(lines)


def budget_text(pauses: Sequence[Mapping[str, object]], thread: str) -> object:
    """The budget pauses and the commands that answer them, where there are no buttons."""
    text = budget_markdown(pauses, thread, buttons=False)
    return markdown(text, {"jupyter_deepagent": {"kind": "budget-pause"}})


def budget_stop(events: Iterable[Mapping[str, object]]) -> str | None:
    """Why the run stopped at its budget, for the cell (None when it did not): the headless
    runner stops there instead of pausing; or the answer to the pause was Stop."""
    for event in events:
        if event.get("type") == BUDGET_REACHED and event.get("paused") is False:
            said = pause_text(event).replace("Paused at budget", "Stopped at budget", 1)
            return f"{said}. No one could answer a pause here, so the run stopped at its budget."
        if event.get("type") == BUDGET_DECIDED and event.get("action") == "stop":
            return f"Stopped at budget {event.get('budget')}, as answered; the thread is kept."
    return None


class BudgetPrompt(ButtonPrompt):
    """The buttons for one budget pause of a thread; `answer` runs when one is clicked.

    Args:
        pauses: The budget pauses (`BudgetPause` values, as `RunOutcome.budget_pauses`).
        thread: The thread that waits.
        answer: Resumes the run with (action, new budget); what it displays goes to the prompt's
            Output widget. It raises to report a refusal (shown beside the buttons).
    """

    placeholder = "[Continue / Raise budget / Stop buttons: they need the running kernel]"
    kind = "budget-buttons"

    def __init__(self, pauses: Sequence[Mapping[str, object]], thread: str, answer: Answer) -> None:
        import ipywidgets as widgets

        super().__init__()
        self.pauses = list(pauses)
        self.thread = thread
        self._resume = answer
        self.go_on = widgets.Button(description="Continue", button_style="success", icon="play")
        self.raise_ = widgets.Button(description="Raise budget", icon="arrow-up")
        self.stop = widgets.Button(description="Stop", button_style="danger", icon="stop")
        budget = str(self.pauses[0].get("budget", "")) if self.pauses else ""
        self.budget = widgets.Text(
            placeholder=f"new budget (now {budget})", layout=widgets.Layout(width="16em")
        )
        self.go_on.on_click(lambda _: self._answer("continue"))
        self.raise_.on_click(lambda _: self._answer_raise())
        self.stop.on_click(lambda _: self._answer("stop"))
        buttons = widgets.HBox([self.go_on, self.raise_, self.budget, self.stop])
        self.widget = widgets.VBox([buttons, self.status, self.output])

    def show(self, place: Callable[[object], None] | None = None) -> None:
        """Display the pause as Markdown, then the buttons (through `place` when given)."""
        from IPython.display import display

        place = place or display
        text = budget_markdown(self.pauses, self.thread, buttons=True)
        place(markdown(text, {"jupyter_deepagent": {"kind": "budget-pause"}}))
        place(self)

    def _disable(self) -> None:
        for control in (self.go_on, self.raise_, self.stop, self.budget):
            control.disabled = True

    def _answer_raise(self) -> None:
        text = self.budget.value.strip()
        if not text:
            self._say('<b>Type the new budget</b> beside the button ("$1", "500k tokens").')
            return
        self._answer("raise", text)

    def _answer(self, action: str, budget: str | None = None) -> None:
        to = f" to {html.escape(budget)}" if budget else ""
        self._answer_with(_LABELS.get(action, action), to, lambda: self._resume(action, budget))
