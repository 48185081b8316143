"""Payloads that try to run script in the page, and `problems`, which reads HTML as a browser does
and names everything in it that could run.

Imported by the safe-HTML tests: `from html_payloads import PAYLOADS, page_html, problems`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import html5lib

PAYLOADS = {
    # the breaks of the old escaper
    "link_destination_backtick": "[a](x`) <img src=x onerror=alert(1)> `y)",
    "code_span_across_heading": "`a\n# <img src=x onerror=alert(2)>\n`",
    "code_span_across_quote": "`a\n> <img src=x onerror=alert(3)>\n`",
    "code_span_across_list_item": "`a\n- <img src=x onerror=alert(4)>\n`",
    "code_span_across_rule": "`a\n\n---\n<img src=x onerror=alert(5)> `",
    "code_span_across_table_cell": "| `a | <img src=x onerror=alert(6)> ` |\n|---|---|\n"
                                   "| `b | c` |",
    "fence_closed_by_tilde_line": "```\ncode\n```~\n<img src=x onerror=alert(7)>\n```",
    "indented_fence": "    ```\n<img src=x onerror=alert(8)>\n    ```",
    "entity_j_javascript": "[x](&#106;avascript:alert(9))",
    "entity_colon_javascript": "[x](javascript&colon;alert(10))",
    "entity_tab_javascript": "[x](java&#x09;script:alert(11))",
    "hex_entity_javascript": "[x](&#x6A;avascript:alert(12))",
    "raw_script": "<script>alert(13)</script>",
    "img_onerror": '<img src=x onerror="alert(14)">',
    "svg_onload": "<svg onload=alert(15)>",
    "svg_script": "<svg><script>alert(16)</script></svg>",
    "iframe_srcdoc": '<iframe srcdoc="<script>alert(17)</script>"></iframe>',
    "a_href_javascript": '<a href="javascript:alert(18)">x</a>',
    "autolink_javascript": "<javascript:alert(19)>",
    "reference_link_javascript": "[click][r]\n\n[r]: javascript:alert(20)",
    "reference_link_javascript_in_brackets": "[click][r]\n\n[r]: <javascript:alert(21)>",
    "data_html_link": "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgyMik8L3NjcmlwdD4=)",
    "data_html_image": "![x](data:text/html,<script>alert(23)</script>)",
    "data_svg_image": "![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMjQpPg==)",
    "style_element": "<style>body{background:url(https://evil.example/25)}</style>",
    "form_action": '<form action="javascript:alert(26)"><button>go</button></form>',
    "button_formaction": '<button formaction="javascript:alert(27)">x</button>',
    "math_mxss": "<math><mtext><table><mglyph><style><img src=x onerror=alert(28)>",
    "svg_style_mxss": '<svg></p><style><a id="</style><img src=1 onerror=alert(29)>">',
    "noscript_mxss": '<noscript><p title="</noscript><img src=x onerror=alert(30)>">',
    "tags_in_table_cells": "| a | b |\n|---|---|\n| <img src=x onerror=alert(31)> | "
                           "<script>alert(31)</script> |",
    "closes_the_show_fence": "```\n</details><img src=x onerror=alert(32)>\n````\n"
                             "<script>alert(32)</script>",
    "comment_breakout": "<!-- --><img src=x onerror=alert(33)> -->",
    "vbscript_link": "[x](vbscript:msgbox(34))",
    "javascript_mixed_case_and_space": "[x]( JaVaScRiPt:alert(35))",
    "math_href": "$\\href{javascript:alert(36)}{click}$",
    "display_math_with_tag": "$$\\unicode{<img src=x onerror=alert(37)>}$$",
    "object_data": '<object data="javascript:alert(38)"></object>',
    "embed_src": '<embed src="javascript:alert(39)">',
    "base_href": '<base href="javascript:alert(40)//">',
    "meta_refresh": '<meta http-equiv="refresh" content="0;url=javascript:alert(41)">',
    "link_import": '<link rel="import" href="data:text/html,<script>alert(42)</script>">',
    "details_ontoggle": "<details open ontoggle=alert(43)>",
    "image_alt_breakout": '![a" onerror="alert(44)](x)',
    "link_title_breakout": '[a](https://example.org "t\\" onmouseover=\\"alert(45)")',
    "escaped_backslash_then_tag": "\\\\<img src=x onerror=alert(46)>",
    "unclosed_code_span": "``unclosed <img src=x onerror=alert(47)>",
    "dollars_that_never_close": "$ { $ <img src=x onerror=alert(48)> $\n\nnext "
                                "<b onmouseover=alert(48)>",
    "tag_inside_math": "$a<b onmouseover=alert(49)>$",
    "command_linker": '<span data-commandlinker-command="notebook:run-all-cells">x</span>',
    "mathjax_process_class": '<div class="mathjax_process">$\\href{https://example.org}{y}$</div>',
    "tag_across_lines": "<div\nonmouseover=alert(52)>x</div>",
    "image_in_link_javascript": "[![x](javascript:alert(53))](javascript:alert(53))",
    "srcset": '<img srcset="javascript:alert(54)">',
    "svg_xlink_href": '<svg><a xlink:href="javascript:alert(55)"><text>x</text></a></svg>',
    "template": "<template><img src=x onerror=alert(56)></template>",
    "textarea_breakout": "<textarea></textarea><img src=x onerror=alert(57)>",
    "nul_in_tag": "<scr\0ipt>alert(58)</script><img src=x o\0nerror=alert(58)>",
    "handler_beside_a_good_link": '<a href="https://example.org" onclick="alert(59)">x</a>',
    "fence_in_a_list_closed_early": "- ```\n  x\n```\n<img src=x onerror=alert(60)>",
    "tag_between_prices": "costs $5 and <b onmouseover=alert(61)>$10</b>",
    "tag_after_a_fenced_block": "```py\nx = '<b>'\n```\n<b onclick=alert(62)>after</b>\n",
}
"""Markdown (or HTML) that the model, a memory file or a tool's arguments could hold."""

_SCRIPTABLE = {
    "script", "iframe", "frame", "frameset", "object", "embed", "applet", "form", "base", "meta",
    "link", "style", "svg", "math", "noscript", "template", "portal", "button", "textarea",
    "select", "input", "isindex", "xmp", "plaintext", "noembed", "noframes",
}
_URL_ATTRIBUTES = {"href", "src", "action", "formaction", "xlink:href", "poster", "background",
                   "srcset", "data", "cite", "ping", "codebase", "lowsrc", "dynsrc", "longdesc"}
_SVG_SHAPES = {"svg", "rect", "line", "circle", "text", "title", "g"}
_SCHEME = re.compile(r"([a-z][a-z0-9+.\-]*):")
_IMAGE_DATA = re.compile(r"data:image/(?:png|jpeg|gif|webp)[;,]")
_MATH = re.compile(r"\$[^$]*\$|\\\(|\\\[|\\begin\{")


def _local(tag: Any) -> str:
    return str(tag).rsplit("}", 1)[-1].lower()


def _attribute(name: Any) -> str:
    text = str(name)
    if text.startswith("{http://www.w3.org/1999/xlink}"):
        return "xlink:" + text.rsplit("}", 1)[-1]
    return text.rsplit("}", 1)[-1].lower()


def _bad_url(tag: str, name: str, value: str) -> bool:
    squeezed = re.sub(r"[\x00-\x20\x7f]+", "", value).lower()
    scheme = _SCHEME.match(squeezed)
    if scheme is None or scheme.group(1) in ("http", "https", "mailto"):
        return False
    return not (tag == "img" and name == "src" and _IMAGE_DATA.match(squeezed))


def _remote(value: str) -> bool:
    squeezed = re.sub(r"[\x00-\x20\x7f]+", "", value).lower()
    return squeezed.startswith(("http:", "https:", "//", "/\\", "\\"))


FRAME_POLICY = {"http-equiv": "Content-Security-Policy",
                "content": "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
                           "font-src data:"}
"""The attributes of the `<meta>` a sandboxed frame starts with (see `output_files._sandboxed_html`)."""


def problems(
    html: str, *, styles: Iterable[str] = (), view: bool = False, page: bool = False
) -> list[str]:
    """Everything in `html` (parsed as a browser parses `innerHTML`) that could run script.

    Args:
        html: The HTML the page would insert.
        styles: The texts of `<style>` elements that are the kernel's (or pandas') own constants.
        view: Allow what the kernel's own views draw: SVG basic shapes, radio inputs.
        page: An agent's page inside a sandboxed frame: its stylesheets are allowed, and math is
            not typeset there.

    Returns:
        One line per problem (an empty list: nothing can run).
    """
    found: list[str] = []
    root = html5lib.parseFragment(html, treebuilder="etree", namespaceHTMLElements=False)
    allowed_styles = set(styles)

    def walk(element: Any, ignored: bool, in_code: bool, in_svg: bool) -> None:
        for child in element:
            if not isinstance(child.tag, str):  # a comment
                continue
            tag = _local(child.tag)
            attributes = {_attribute(k): v for k, v in child.attrib.items()}
            classes = set(attributes.get("class", "").split())
            if tag == "iframe" and attributes.get("sandbox") == "" and not page:
                found.extend(f"in a frame: {p}" for p in
                             problems(attributes.get("srcdoc", ""), page=True))
                attributes.pop("srcdoc", None)
            elif tag == "style" and (page or (child.text or "") in allowed_styles):
                pass
            elif tag == "meta" and page and attributes == FRAME_POLICY:
                pass  # the frame's own policy, which lets it load nothing
            elif tag in _SVG_SHAPES and view:
                pass
            elif tag == "input" and view and attributes.get("type") == "radio":
                pass
            elif in_svg and tag not in _SVG_SHAPES:
                found.append(f"<{tag}> inside an <svg>")
            elif tag in _SCRIPTABLE:
                found.append(f"a <{tag}> element")
            for name, value in attributes.items():
                if name.startswith("on"):
                    found.append(f"<{tag} {name}=...>: an event attribute")
                elif name in ("srcdoc", "formaction", "action"):
                    found.append(f"<{tag} {name}=...>")
                elif name.startswith("data-commandlinker"):
                    found.append(f"<{tag} {name}=...>: runs a JupyterLab command on a click")
                elif name in _URL_ATTRIBUTES and _bad_url(tag, name, value):
                    found.append(f"<{tag} {name}={value!r}>: a script or data address")
                elif tag == "img" and name == "src" and _remote(value):
                    found.append(f"<img src={value!r}>: loads from another server unasked")
                elif name == "style" and re.search(r"url\s*\(|expression|\\", value, re.I):
                    found.append(f"<{tag} style={value!r}>: loads or runs something")
            if "mathjax_process" in classes and not page:  # MathJax stays out of frames
                found.append(f"<{tag} class=mathjax_process>: MathJax would typeset it")
            now_ignored = ignored or "mathjax_ignore" in classes
            now_code = in_code or tag in ("code", "pre", "script", "style", "textarea")
            for text in (child.text, child.tail):
                if text and not page and _MATH.search(text):
                    # the tail is outside this element, so only its parent's state counts
                    hidden = (now_ignored or now_code) if text is child.text else (ignored or
                                                                                   in_code)
                    if not hidden:
                        found.append(f"math MathJax would typeset: {text[:40]!r}")
            walk(child, now_ignored, now_code, in_svg or tag == "svg")

    if root.text and not page and _MATH.search(root.text):
        found.append(f"math MathJax would typeset: {root.text[:40]!r}")
    walk(root, False, False, False)
    return found


def page_html(data: dict[str, Any]) -> list[str]:
    """The HTML the page renders for a display's MIME bundle: its `text/html`, and its
    `text/markdown` rendered as JupyterLab's Markdown renderer does (raw HTML passed through)."""
    from markdown_it import MarkdownIt

    shown = []
    if "text/html" in data:
        shown.append(str(data["text/html"]))
    if "text/markdown" in data:
        marked = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
        shown.append(marked.render(str(data["text/markdown"])))
    return shown
