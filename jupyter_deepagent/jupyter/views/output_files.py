"""The `/outputs/` files under a cell's answer: each under a caption naming its path, in the order
the run wrote them."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from html import escape

from jupyter_deepagent.events import FILE_WRITTEN, MODEL_CALL, RunEvent

__all__ = ["show_files", "written_order"]


def _show(obj: object) -> None:
    from IPython.display import display

    display(obj)


class _Caption:
    """The line above an `/outputs/` file naming it."""

    def __init__(self, path: str) -> None:
        self.path = path

    def _repr_mimebundle_(
        self, include: object = None, exclude: object = None
    ) -> tuple[dict[str, str], dict[str, object]]:
        from jupyter_deepagent.trace.safe_html import clean_html

        html = (  # the agent chose the name: escaped, and cleaned inside the caption's own box
            '<div style="font-family: var(--jp-ui-font-family, sans-serif); font-size: 12px; '
            "color: var(--jp-ui-font-color2, #5f6368); border-top: 1px solid "
            'var(--jp-border-color2, #dadce0); padding-top: 4px; margin-top: 4px">'
            f"{clean_html(f'<code>{escape(self.path)}</code>')}</div>"
        )
        return (
            {"text/html": html, "text/plain": f"── {self.path} ──"},
            {"jupyter_deepagent": {"caption": self.path}},
        )


def written_order(events: Iterable[RunEvent], mount: str = "/outputs/") -> list[str]:
    """Paths under `mount` in the order the run wrote them: the order of the `write_file` and
    `edit_file` calls in the model's replies (calls of one reply run concurrently, so the order
    they finish in, which `file_written` events follow, changes from run to run; their order in
    the reply does not). When there are `file_written` events, only the files they name count."""
    events = list(events)
    written = [e.get("path") for e in events if "type" in e and e["type"] == FILE_WRITTEN]
    called: list[object] = []
    for event in events:
        if "type" not in event or event["type"] != MODEL_CALL:
            continue
        data = (event.get("reply") or {}).get("data") or {}
        called += [
            (call.get("args") or {}).get("file_path")
            for call in data.get("tool_calls") or []
            if call.get("name") in ("write_file", "edit_file")
        ]
    done = set(written) if written else set(called)
    order: list[str] = []
    for path in [*called, *written]:
        if isinstance(path, str) and path in done and path.startswith(mount) and path not in order:
            order.append(path)
    return order


def show_files(
    displays: list[tuple[str, object]],
    *,
    rich: bool,
    order: Iterable[str] = (),
    place: Callable[[object], None] | None = None,
) -> None:
    """The `/outputs/` files (from `output_displays`), each under a caption naming its path, in
    the order they were written (`order`; files not in it follow by path)."""
    place = place or _show
    rank = {path: index for index, path in enumerate(order)}
    ordered = sorted(displays, key=lambda item: (rank.get(item[0], len(rank)), item[0]))
    for path, obj in ordered:
        if rich:
            place(_Caption(path))
        else:
            print(f"── {path} ──")
        place(obj)
