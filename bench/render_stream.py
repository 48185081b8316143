"""What showing a streamed answer costs: CPU seconds and renders for 10 kB, 100 kB and 1 MB.

An answer of ordinary Markdown (headings, paragraphs with bold, links and code, lists, tables,
code blocks) is fed to `CellView.on_token` in pieces of about 4 characters, as a model streams
it, then `answer` shows the final text; the display handle is a fake one that only counts its
updates. Two ways the pieces arrive:

- at once: every piece right after the other (the time-based throttle alone then allows only a
  few renders);
- paced: as a fast model writes, 50 pieces (about 200 characters) a second, on a simulated clock
  (the renders' own time still counts), so the answer is rendered again every 0.25 s or later.

Each figure is the process's CPU time for feeding every piece and showing the final answer
(best of `--rounds`); "one full render" is `markdown_html` of the whole text once, the cost of
the final render that every stream ends with.

`--scaling` adds how `markdown_html` scales from 100 kB to 1 MB on inputs made to be slow (long
runs of brackets, stars, backticks, `<`, `$`, table rows): ten times the text should take about
ten times as long, never a hundred.

    python bench/render_stream.py
    python bench/render_stream.py --sizes 100000 --rounds 1
    python bench/render_stream.py --sizes 10000 --scaling
"""

from __future__ import annotations

import argparse
import time
from typing import Any

PIECE = 4
PACE = 1 / 50  # seconds between two pieces of a paced stream


def answer_text(size: int) -> str:
    """Ordinary Markdown of about `size` characters."""
    parts, index = [], 0
    while sum(len(p) for p in parts) < size:
        index += 1
        parts.append(
            f"## Finding {index}\n\nStation **S-{index:04d}** warmed by `0.{index % 9}` °C per "
            f"decade, see [the table](https://example.org/t/{index}) and the notes below; "
            "the trend holds after removing the seasonal cycle and the 1998 step change.\n\n"
            f"- sample {index}a: mean 2.{index % 7}\n- sample {index}b: mean 3.{index % 5}\n\n"
            f"| station | trend | p |\n|---|---:|---:|\n"
            f"| S-{index:04d} | 0.{index % 9} | 0.01 |\n\n"
            f"```python\ntrend = fit(series[{index}])\n```\n\n")
    return "".join(parts)[:size]


class FakeHandle:
    """A display handle that counts the updates it is asked for."""

    def __init__(self) -> None:
        self.updates = 0

    def update(self, obj: Any) -> None:
        obj._repr_mimebundle_()  # what IPython would ask the object for
        self.updates += 1


def stream_once(text: str, paced: bool) -> tuple[float, int]:
    """CPU seconds to stream `text` into a CellView and show the answer; renders made."""
    from jupyter_deepagent.jupyter.views import render

    handle = FakeHandle()
    fed = [0]
    real = time.perf_counter
    original_show, original_clock = render.show, render._clock
    render.show = lambda obj, **_: handle
    if paced:
        render._clock = lambda: real() + fed[0] * PACE
    try:
        view = render.CellView(rich=True)
        view.start("agent · thread bench · scripted")
        started = time.process_time()
        view.on_token(None)
        for start in range(0, len(text), PIECE):
            fed[0] += 1
            view.on_token(text[start:start + PIECE])
        view.answer(text)
        spent = time.process_time() - started
    finally:
        render.show, render._clock = original_show, original_clock
    return spent, handle.updates


HARD_INPUTS = {
    "prose": "The glaciers lost **267 Gt** a year, see [the data](https://example.org). ",
    "[ runs": "[",
    "![ runs": "![",
    "[a]( runs": "[a](",
    "*a runs": "*a",
    "*_ runs": "*_",
    "`a runs": "`a",
    "<a runs": "<a",
    "$a runs": "$a",
    "&#106; runs": "&#106;",
    "> nesting": "> ",
    "table rows": "| 1 | 2 |\n",
}


def scaling() -> None:
    """Seconds of `markdown_html` for 100 kB and 1 MB of each hard input, and their ratio."""
    from jupyter_deepagent.trace.safe_html import markdown_html

    print(f"\n{'input':>12}  {'100 kB':>8}  {'1 MB':>8}  {'ratio':>5}")
    for name, unit in HARD_INPUTS.items():
        seconds = []
        for size in (100_000, 1_000_000):
            text = (unit * (size // len(unit) + 1))[:size]
            if name == "table rows":
                text = "| a | b |\n|---|---|\n" + text
            started = time.process_time()
            markdown_html(text)
            seconds.append(time.process_time() - started)
        print(f"{name:>12}  {seconds[0]:>6.2f} s  {seconds[1]:>6.2f} s  "
              f"{seconds[1] / max(seconds[0], 1e-9):>5.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--scaling", action="store_true", help="also time hard inputs")
    args = parser.parse_args()
    from jupyter_deepagent.trace.safe_html import markdown_html

    markdown_html("warm up the parser")
    print(f"{'size':>9}  {'one full render':>15}  {'at once: CPU s':>14}  {'renders':>7}  "
          f"{'paced: CPU s':>12}  {'renders':>7}  {'stream time':>11}")
    for size in args.sizes:
        text = answer_text(size)
        started = time.process_time()
        markdown_html(text)
        full = time.process_time() - started
        rounds = max(1, args.rounds if size < 1_000_000 else 1)
        at_once = min(stream_once(text, paced=False) for _ in range(rounds))
        paced = min(stream_once(text, paced=True) for _ in range(rounds))
        streamed = len(text) / PIECE * PACE
        print(f"{size:>9,}  {full:>13.3f} s  {at_once[0]:>14.3f}  {at_once[1]:>7}  "
              f"{paced[0]:>12.3f}  {paced[1]:>7}  {streamed:>9.0f} s")
    if args.scaling:
        scaling()


if __name__ == "__main__":
    main()
