"""escape_raw_html: the agent's Markdown renders as trusted, so its raw HTML must show as text."""

from __future__ import annotations

import pytest

from jupyter_deepagent.jupyter.markdown_safety import escape_raw_html


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        ('Done. <img src=x onerror="fetch(1)">', 'Done. &lt;img src=x onerror="fetch(1)">'),
        ("<script>alert(1)</script>", "&lt;script>alert(1)&lt;/script>"),
        ("# Title\n<div onclick=x>hi</div>\n", "# Title\n&lt;div onclick=x>hi&lt;/div>\n"),
        ("| a | b |\n|---|---|\n| 1 | <b>2</b> |", "| a | b |\n|---|---|\n| 1 | &lt;b>2&lt;/b> |"),
        ("a < b", "a &lt; b"),
        ("<!-- hidden -->", "&lt;!-- hidden -->"),
        ("\\\\<img src=x>", "\\\\&lt;img src=x>"),  # an escaped backslash, then a real tag
        ("``unclosed <b>", "``unclosed &lt;b>"),
        ("[run](javascript:alert(1))", "[run](unsafe-javascript:alert(1))"),
        ("[ref]: JavaScript:alert(1)", "[ref]: unsafe-JavaScript:alert(1)"),
    ],
)
def test_raw_html_outside_code_is_escaped(written: str, shown: str) -> None:
    assert escape_raw_html(written) == shown


@pytest.mark.parametrize(
    "kept",
    [
        "**bold**, _emphasis_, [a link](https://example.org) and ![a plot](plot.png)",
        "| region | units |\n|---|---:|\n| North | **120** |\n",
        "Inline `x <y> z` code and ``a ` <b> ` c`` spans.",
        "```html\n<script>shown as code</script>\n```\n",
        "~~~\n<b>tilde fence</b>\n~~~",
        "$$\\frac{1}{2} < x$$ and $a < b$ and $x_{i} \\le 3$",
        "An autolink <https://example.org/a?b=c> stays.",
        "Escaped \\<b> stays literal.",
        "> a quote with **bold** and a list:\n\n- one\n- two\n",
    ],
)
def test_markdown_without_raw_html_is_unchanged(kept: str) -> None:
    assert escape_raw_html(kept) == kept


def test_an_unclosed_fence_runs_to_the_end_and_text_after_a_closed_one_is_escaped() -> None:
    assert escape_raw_html("```\n<b>code</b>") == "```\n<b>code</b>"
    text = "```py\nx = '<b>'\n```\n<b>after</b>\n"
    assert escape_raw_html(text) == "```py\nx = '<b>'\n```\n&lt;b>after&lt;/b>\n"
    # four spaces make it an indented line, not a fence: the tag below is escaped
    assert escape_raw_html("    ```\n<b>x</b>") == "    ```\n&lt;b>x&lt;/b>"


def test_a_tag_inside_math_becomes_mathjax_lt_so_no_reader_sees_a_tag() -> None:
    assert escape_raw_html("$a<b$") == "$a\\lt b$"
    assert escape_raw_html("costs $5 and <b>$10</b>") == "costs $5 and \\lt b>$10&lt;/b>"


def test_dollars_that_never_close_as_math_are_escaped_up_to_where_math_gave_up() -> None:
    # JupyterLab's math reader would skip the middle `$` (inside braces) and give up at the
    # blank line, so the tag is Markdown there and must be escaped here too
    shown = escape_raw_html("$ { $ <img src=x> $\n\nnext <b>")
    assert shown == "$ { $ &lt;img src=x> $\n\nnext &lt;b>"


def test_a_pending_approval_shows_html_in_the_arguments_as_text(monkeypatch) -> None:
    from jupyter_deepagent.jupyter import render

    shown = []
    monkeypatch.setattr(render, "show", lambda obj, **_: shown.append(obj))
    render.show_pending(
        [{"name": "write_file", "args": {"content": "<img src=x onerror=alert(1)>"},
          "allowed": ["approve", "reject"]}],
        "default",
    )
    [markdown] = shown
    text = markdown._repr_mimebundle_()[0]["text/markdown"]
    assert "<img" not in text and "&lt;img" in text
