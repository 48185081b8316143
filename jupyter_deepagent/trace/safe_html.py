"""Text the model or agent wrote, as HTML a page shows but never runs.

JupyterLab renders the outputs of the running session as trusted: it runs the scripts and event
handlers of their HTML, and its Markdown renderer passes raw HTML through. So the kernel never
hands model text to the page's Markdown parser. `markdown_html` renders Markdown here, with
markdown-it-py (CommonMark, plus tables and strikethrough) with raw HTML off, so `<script>` in
the text stays the characters `<script>`; `clean_html` then cleans whatever HTML the kernel built
with nh3 (the ammonia sanitizer) against an allow-list: formatting elements only (no script,
iframe, object, embed, form, style, svg, math, base, meta or link), no event or style attributes
(except a table cell's `text-align`), no ids or classes, links only to http(s), mailto and relative
addresses, and `data:` only for a PNG, JPEG, GIF or WebP image's `src`. Both wrap their result in
a `mathjax_ignore` block, so the page's MathJax leaves it alone: math shows as written (`$x^2$`
in code font), never as live markup.

`clean_view_html` is the allow-list of the kernel's own views (the inspector, the sidebar): the
same without links and images, plus what those views draw themselves: SVG charts (basic shapes
and text), radio inputs and labels for CSS-only tabs (their ids and names `jdi-` ones only),
`jdi-` classes, the `data-` attributes they name, and inline styles limited to layout and colour
properties. `clean_page_html` is for an HTML page the agent wrote,
shown in a frame that runs no script: the text allow-list plus stylesheets and classes, so the
page keeps its look.

Each function is linear in the length of its input.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import nh3
    from markdown_it import MarkdownIt
    from markdown_it.renderer import RendererHTML
    from markdown_it.token import Token
    from markdown_it.utils import EnvType, OptionsDict

__all__ = [
    "clean_html",
    "clean_page_html",
    "clean_view_html",
    "markdown_html",
    "markdown_parser",
    "wrap_html",
]

_WRAP = '<div class="jda-text mathjax_ignore">{}</div>'
"""Around every cleaned block: `mathjax_ignore` keeps MathJax from typesetting inside it."""

_TEXT_TAGS = frozenset(
    {
        "a",
        "b",
        "blockquote",
        "br",
        "code",
        "dd",
        "del",
        "details",
        "div",
        "dl",
        "dt",
        "em",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "hr",
        "i",
        "img",
        "kbd",
        "li",
        "ol",
        "p",
        "pre",
        "q",
        "s",
        "samp",
        "small",
        "span",
        "strong",
        "sub",
        "summary",
        "sup",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "tr",
        "u",
        "ul",
        "var",
    }
)
_TEXT_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title", "width", "height"},
    "ol": {"start"},
    "td": {"style", "colspan", "rowspan"},
    "th": {"style", "colspan", "rowspan"},
    "details": {"open"},
}
_SVG_TAGS = frozenset({"svg", "rect", "line", "circle", "text", "title", "g"})
_SVG_ATTRIBUTES = frozenset(
    {
        "width",
        "height",
        "viewBox",
        "xmlns",
        "x",
        "y",
        "rx",
        "fill",
        "x1",
        "x2",
        "y1",
        "y2",
        "stroke",
        "stroke-width",
        "stroke-dasharray",
        "font-size",
        "font-weight",
        "text-anchor",
        "opacity",
        "cx",
        "cy",
        "r",
        "preserveAspectRatio",
        "role",
    }
)
_VIEW_DATA_ATTRIBUTES = frozenset({"data-section", "data-kind", "data-loaded"})
_VIEW_STYLE_PROPERTIES = frozenset(
    {
        "width",
        "max-width",
        "height",
        "margin-left",
        "background",
        "background-color",
        "color",
        "text-align",
        "display",
    }
)
_VIEW_CLASS = re.compile(r"jdi(?:-[a-z0-9_-]+)?")
_VIEW_CLASSES = re.compile(r"jdi(?:-[a-z0-9_-]+)?(?: jdi(?:-[a-z0-9_-]+)?)*")
_CHECKED = frozenset({"href", "src", "style", "class", "id", "name", "for"})
_URL_SPACE = re.compile(r"[\x00-\x20\x7f]+")
_SCHEME = re.compile(r"([a-z][a-z0-9+.\-]*):")
_LINK_SCHEMES = frozenset({"http", "https", "mailto"})
_IMAGE_DATA = re.compile(r"data:image/(?:png|jpeg|gif|webp)[;,]")
_UNSAFE_STYLE = re.compile(  # anything that loads (url(), image-set(), ...) or runs
    r"(?:url|image-set|image|cross-fade|element|paint|expression)\s*\(|\\|@import|javascript:",
    re.IGNORECASE,
)


def _safe_url(value: str, *, image: bool) -> bool:
    """Whether a link or image address may stay: a link relative, http(s) or mailto; an image
    relative to the page's own server, or data.

    Browsers drop whitespace and control characters inside a scheme (`java\\tscript:`), so the
    scheme is read with them removed. An image loads without a click, so a remote one would
    tell a server of the model's choosing whatever the model put in its address (what it read
    in the notebook): images come only from the notebook's own server (no `//host` or
    `\\host`, which browsers read as another host) or from the text itself (`data:`).
    """
    squeezed = _URL_SPACE.sub("", value).lower()
    scheme = _SCHEME.match(squeezed)
    if image:
        if scheme is None:
            return not squeezed.startswith(("//", "/\\")) and "\\" not in squeezed
        return _IMAGE_DATA.match(squeezed) is not None
    return scheme is None or scheme.group(1) in _LINK_SCHEMES  # relative: `page.md`, `#part`


def _attribute_filter(view: bool) -> Callable[[str, str, str], str | None]:
    def keep(tag: str, attribute: str, value: str) -> str | None:
        if attribute not in _CHECKED:  # called for every attribute: the common case first
            return value
        if attribute == "href":
            return value if _safe_url(value, image=False) else None
        if attribute == "src":
            return value if tag == "img" and _safe_url(value, image=True) else None
        if attribute == "style":
            return None if _UNSAFE_STYLE.search(value) else value
        if attribute != "class":  # the tabs' ids and names: only the views' own, no clobbering
            return value if value.startswith("jdi-") else None
        if not view or _VIEW_CLASSES.fullmatch(value):
            return value
        kept = [name for name in value.split() if _VIEW_CLASS.fullmatch(name)]
        return " ".join(kept) or None

    return keep


@cache
def _cleaner(kind: str) -> nh3.Cleaner:
    """The nh3 cleaner of an allow-list: "text", "view" or "page"."""
    import nh3

    tags = set(_TEXT_TAGS)
    attributes = {tag: set(names) for tag, names in _TEXT_ATTRIBUTES.items()}
    values: dict[str, dict[str, set[str]]] = {}
    styles: set[str] | None = {"text-align"}
    content_tags = {"script", "style"}
    if kind == "view":
        tags = (tags - {"a", "img"}) | _SVG_TAGS | {"input", "label", "h4"}  # views link nothing
        for tag in tags:
            attributes.setdefault(tag, set()).update({"class", "title", "style"})
        for tag in ("details", "div", "span"):
            attributes[tag] |= _VIEW_DATA_ATTRIBUTES
        for tag in _SVG_TAGS:
            attributes[tag] |= _SVG_ATTRIBUTES
        attributes["input"] = {"class", "name", "id", "checked"}
        values["input"] = {"type": {"radio"}}
        attributes["label"] |= {"for"}
        styles = set(_VIEW_STYLE_PROPERTIES)
    elif kind == "page":
        tags |= {
            "style",
            "section",
            "article",
            "header",
            "footer",
            "figure",
            "figcaption",
            "caption",
            "colgroup",
            "col",
            "abbr",
            "mark",
            "center",
            "font",
        }
        for tag in tags:
            attributes.setdefault(tag, set()).update({"class", "style", "title", "align"})
        content_tags = {"script"}
        styles = None
    return nh3.Cleaner(
        tags=tags,
        clean_content_tags=content_tags,
        attributes=attributes,
        tag_attribute_values=values,
        attribute_filter=_attribute_filter(kind == "view"),
        url_schemes={"http", "https", "mailto", "data"},
        strip_comments=True,
        link_rel="noopener noreferrer nofollow",
        filter_style_properties=styles,
    )


def clean_html(fragment: str, *, wrap: bool = True) -> str:
    """HTML the kernel built around model text, cleaned by the text allow-list.

    Args:
        fragment: HTML whose model-written parts the caller escaped or rendered from Markdown.
        wrap: Put the result inside the `mathjax_ignore` block (False: the caller joins cleaned
            fragments and wraps them itself, as `wrap_html` does).

    Returns:
        The fragment with everything outside the allow-list removed (disallowed elements keep
        their text, `script` and `style` lose it too).
    """
    cleaned = _cleaner("text").clean(fragment)
    return wrap_html(cleaned) if wrap else cleaned


def wrap_html(cleaned: str) -> str:
    """Cleaned HTML inside the block every cleaned output is shown in (`mathjax_ignore`)."""
    return _WRAP.format(cleaned)


def clean_view_html(fragment: str) -> str:
    """HTML of the kernel's own views (inspector, sidebar), cleaned by their allow-list.

    Args:
        fragment: The view's HTML, its model-written text escaped by the view; its stylesheet
            is not part of it (the caller adds the kernel's own constant CSS).

    Returns:
        The fragment with everything outside the view allow-list removed, in a
        `mathjax_ignore` block.
    """
    return _WRAP.format(_cleaner("view").clean(fragment))


def clean_page_html(page: str) -> str:
    """An HTML page the agent wrote, cleaned for a frame that runs no script.

    Args:
        page: The page as the agent wrote it.

    Returns:
        The page's content and stylesheets, without scripts, frames, forms, event attributes
        or script links (not wrapped: it is a page of its own).
    """
    return _cleaner("page").clean(page)


@cache
def markdown_parser() -> MarkdownIt:
    """The one markdown-it parser every display uses (raw HTML off, math shown as code).

    Its output is not clean by itself (only its own escaping): pass it through `clean_html`.
    """
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    parser = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    parser.enable(["table", "strikethrough"])
    # `$x$` and `$$x$$` read as math (so `*` or `_` inside are not emphasis) and shown as
    # written, in code; `$5 and $10` stays text
    dollarmath_plugin(
        parser, allow_labels=False, allow_space=False, allow_digits=False, double_inline=True
    )
    parser.add_render_rule("math_inline", _inline_math)
    parser.add_render_rule("math_inline_double", _inline_math)
    parser.add_render_rule("math_block", _block_math)
    parser.add_render_rule("image", _image)
    return parser


def _image(
    renderer: RendererHTML,
    tokens: Sequence[Token],
    index: int,
    options: OptionsDict,
    env: EnvType,
) -> str:
    """An image as Markdown has it, or, when it would load from another server, a link to it
    (the page shows no remote image: see `_safe_url`)."""
    token = tokens[index]
    if _safe_url(str(token.attrGet("src") or ""), image=True):
        return renderer.image(tokens, index, options, env)
    alt = renderer.renderInlineAsText(token.children or [], options, env) or "image"
    href = html.escape(str(token.attrGet("src")), quote=True)
    return f'<a href="{href}">[image: {html.escape(alt)}]</a>'


def _inline_math(
    renderer: RendererHTML,
    tokens: Sequence[Token],
    index: int,
    options: OptionsDict,
    env: EnvType,
) -> str:
    token = tokens[index]
    mark = "$$" if token.markup == "$$" else "$"
    return f"<code>{html.escape(mark + token.content + mark)}</code>"


def _block_math(
    renderer: RendererHTML,
    tokens: Sequence[Token],
    index: int,
    options: OptionsDict,
    env: EnvType,
) -> str:
    source = "$$\n" + tokens[index].content.strip("\n") + "\n$$"
    return f"<pre><code>{html.escape(source)}</code></pre>\n"


def markdown_html(text: str) -> str:
    """Markdown written by the model or agent, as cleaned HTML (see the module docstring).

    Args:
        text: Markdown; raw HTML in it is shown as text.

    Returns:
        HTML inside a `mathjax_ignore` block: paragraphs, tables, code, links and images as
        Markdown has them, nothing that runs.
    """
    return clean_html(markdown_parser().render(text))
