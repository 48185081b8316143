"""`%agent show`: the system prompt of a thread as a table of its sections, then each text."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from jupyter_deepagent.jupyter.views.safe_display import SafeHTML
from jupyter_deepagent.trace.safe_html import clean_html

if TYPE_CHECKING:
    from jupyter_deepagent.harness.prompt.sections import PromptAssembly

__all__ = ["prompt_markdown"]


def prompt_markdown(
    assembly: PromptAssembly, label: str, thread: str, size: tuple[int, int]
) -> SafeHTML:
    """`%agent show`: the system prompt as a table of sections, then each section's text.

    Section texts hold what the agent may write (memory files, skills), so the HTML is built
    here with every text escaped (each section's text in a `<pre>`, never in a Markdown fence it
    could close), then cleaned.
    """
    messages, tokens = size
    parts = [
        f"<p><strong>System prompt of thread <code>{escape(thread)}</code></strong> "
        f"({escape(label)}): {len(assembly.sections)} sections, ~{assembly.tokens:,} tokens. "
        f"Conversation: {messages} messages, ~{tokens:,} tokens.</p>",
        "<table><thead><tr><th>#</th><th>section</th><th>source</th>"
        '<th style="text-align:right">tokens</th></tr></thead><tbody>',
    ]
    for index, section in enumerate(assembly.sections, 1):
        parts.append(
            f"<tr><td>{index}</td><td>{escape(section.name)}</td>"
            f"<td>{escape(section.source)}</td>"
            f'<td style="text-align:right">{section.tokens:,}</td></tr>'
        )
    parts.append("</tbody></table>")
    for index, section in enumerate(assembly.sections, 1):
        parts.append(
            f"<details><summary>{index}. {escape(section.name)} "
            f"({section.tokens:,} tokens)</summary>"
            f"<pre>{escape(section.text)}</pre></details>"
        )
    plain = f"Thread {thread} ({label}); conversation: {messages} messages, ~{tokens:,} tokens.\n"
    return SafeHTML(clean_html("".join(parts)), plain + assembly.to_markdown())
