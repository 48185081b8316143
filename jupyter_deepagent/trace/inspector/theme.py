"""The inspector's look: one stylesheet (classes prefixed `jdi-`) and small shared pieces.

Colours and fonts are JupyterLab's CSS variables (so the light and dark themes are both
followed) with light-theme fallbacks for pages that do not define them.
"""

from __future__ import annotations

from html import escape

__all__ = ["STYLE", "badge"]

STYLE = """
.jdi { font-family: var(--jp-ui-font-family, system-ui, -apple-system, "Segoe UI", sans-serif);
  font-size: var(--jp-ui-font-size1, 13px); color: var(--jp-ui-font-color1, #202124);
  line-height: 1.45; max-width: 100%; }
.jdi * { box-sizing: border-box; }
.jdi details > summary { cursor: pointer; }
.jdi-static { border: 1px solid var(--jp-border-color2, #dadce0); border-radius: 6px;
  background: var(--jp-layout-color1, #fff); margin: 4px 0; }
.jdi-static > summary { padding: 6px 10px; list-style-position: inside; }
.jdi-static[open] > summary { border-bottom: 1px solid var(--jp-border-color2, #dadce0); }
.jdi-summary { display: inline-flex; flex-wrap: wrap; align-items: center; gap: 4px 12px;
  vertical-align: middle; }
.jdi-title { font-weight: 600; color: var(--jp-ui-font-color0, #000); }
.jdi-model { font-family: var(--jp-code-font-family, monospace); font-size: 12px;
  background: var(--jp-layout-color2, #f1f3f4); border-radius: 4px; padding: 0 6px; }
.jdi-mini svg { vertical-align: middle; }
.jdi-muted { color: var(--jp-ui-font-color2, #5f6368); }
.jdi-badge { display: inline-block; font-size: 11px; font-weight: 600; padding: 0 7px;
  border-radius: 9px; line-height: 17px; white-space: nowrap; }
.jdi-badge-ok { background: rgba(30, 142, 62, 0.15); color: var(--jp-success-color1, #1e8e3e); }
.jdi-badge-warn { background: rgba(227, 116, 0, 0.15); color: var(--jp-warn-color1, #b06000); }
.jdi-badge-error { background: rgba(217, 48, 37, 0.15); color: var(--jp-error-color1, #d93025); }
.jdi-badge-live { background: rgba(26, 115, 232, 0.15); color: var(--jp-brand-color1, #1a73e8); }
.jdi-badge-plain { background: var(--jp-layout-color2, #f1f3f4);
  color: var(--jp-ui-font-color2, #5f6368); }
.jdi-tabs { padding: 0 10px 8px; }
.jdi-tabs > input { position: absolute; opacity: 0; pointer-events: none; }
.jdi-tabs > label { display: inline-block; padding: 7px 12px 5px; cursor: pointer;
  color: var(--jp-ui-font-color2, #5f6368); border-bottom: 2px solid transparent; }
.jdi-tabs > input:checked + label { color: var(--jp-ui-font-color0, #000); font-weight: 600;
  border-bottom-color: var(--jp-brand-color1, #1a73e8); }
.jdi-tabs > .jdi-panel { display: none; border-top: 1px solid var(--jp-border-color2, #dadce0);
  padding: 10px 2px 4px; }
.jdi-tabs > input:nth-of-type(1):checked ~ .jdi-panel:nth-of-type(1),
.jdi-tabs > input:nth-of-type(2):checked ~ .jdi-panel:nth-of-type(2),
.jdi-tabs > input:nth-of-type(3):checked ~ .jdi-panel:nth-of-type(3),
.jdi-tabs > input:nth-of-type(4):checked ~ .jdi-panel:nth-of-type(4),
.jdi-tabs > input:nth-of-type(5):checked ~ .jdi-panel:nth-of-type(5) { display: block; }
.jdi-static-title { display: none; }
.jdi-head { margin: 0 0 8px; }
.jdi-sub { margin: 14px 0 6px; font-weight: 600; }
.jdi-cols { display: grid; align-items: center; gap: 10px; padding: 3px 6px; }
.jdi-prompt-cols { grid-template-columns: 22px minmax(110px, 1.2fr) minmax(80px, 2fr) 64px
  minmax(90px, 1fr) 70px; }
.jdi-skill-cols { grid-template-columns: minmax(110px, 1fr) minmax(140px, 3fr)
  minmax(120px, 2fr) 120px; }
.jdi-file-cols { grid-template-columns: minmax(180px, 3fr) 88px minmax(60px, 1fr) 80px 56px; }
.jdi-colhead { font-size: 11px; text-transform: uppercase;
  letter-spacing: 0.03em; color: var(--jp-ui-font-color2, #5f6368); }
.jdi-row { border-top: 1px solid var(--jp-border-color3, #eceff1); }
.jdi-row > summary { list-style: none; }
.jdi-row > summary::-webkit-details-marker { display: none; }
.jdi-row > summary:hover { background: var(--jp-layout-color2, #f1f3f4); }
.jdi-row[open] > summary { background: var(--jp-layout-color2, #f1f3f4); }
.jdi-num { text-align: right; font-variant-numeric: tabular-nums; }
.jdi-ellipsis, .jdi-path { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.jdi-path, .jdi-code { font-family: var(--jp-code-font-family, monospace); font-size: 12px; }
.jdi-sharecell { display: flex; align-items: center; gap: 6px; }
.jdi-share { flex: 1; height: 6px; border-radius: 3px; background: var(--jp-layout-color2, #e3e6ea);
  overflow: hidden; display: inline-block; }
.jdi-share > span { display: block; height: 100%; background: var(--jp-brand-color1, #1a73e8); }
.jdi pre.jdi-pre, .jdi div.jdi-pre { margin: 4px 6px 10px 32px; padding: 8px 10px; max-height: 320px; overflow: auto;
  white-space: pre-wrap; word-break: break-word; font-family: var(--jp-code-font-family, monospace);
  font-size: 12px; background: var(--jp-layout-color2, #f6f8fa); border-radius: 4px;
  border: 1px solid var(--jp-border-color3, #eceff1); color: var(--jp-content-font-color1, #202124); }
.jdi-inspector :is(.widget-tab, .jupyter-widget-tab) > .lm-TabBar { min-height: 30px; }
.jdi-inspector :is(.widget-tab, .jupyter-widget-tab) > .lm-TabBar .lm-TabBar-tab {
  flex: 0 0 auto; min-width: 0; max-width: none; padding: 0 14px; margin: 0;
  background: transparent; border: none; border-bottom: 2px solid transparent;
  color: var(--jp-ui-font-color2, #5f6368); font-size: var(--jp-ui-font-size1, 13px); }
.jdi-inspector :is(.widget-tab, .jupyter-widget-tab) > .lm-TabBar .lm-TabBar-tab.lm-mod-current {
  color: var(--jp-ui-font-color0, #000); font-weight: 600; transform: none;
  border-bottom-color: var(--jp-brand-color1, #1a73e8); background: transparent; }
.jdi-inspector :is(.widget-tab, .jupyter-widget-tab) > .lm-TabBar .lm-TabBar-tab::before {
  display: none; }
.jdi-inspector :is(.widget-tab, .jupyter-widget-tab) > .lm-TabBar .lm-TabBar-content {
  border-bottom: 1px solid var(--jp-border-color2, #dadce0); }
.jdi-inspector :is(.widget-tab-contents, .jupyter-widget-tab-contents) {
  border: none; padding: 10px 2px 4px; background: transparent; }
.jdi-inspector .widget-html-content { line-height: 1.45; }
.jdi-mount { margin: 12px 0 4px; font-weight: 600; }
.jdi-mount:first-child { margin-top: 0; }
.jdi-legends { display: flex; flex-wrap: wrap; gap: 4px 14px; margin: 6px 0; font-size: 12px; }
.jdi-legend i { display: inline-block; width: 10px; height: 10px; border-radius: 2px;
  margin-right: 5px; vertical-align: -1px; }
.jdi-gaugebox { margin: 6px 0 2px; }
.jdi-list { margin: 4px 0 8px; padding-left: 22px; }
.jdi-table { border-collapse: collapse; width: 100%; font-size: 12px; }
.jdi-table th { text-align: left; font-weight: 600; font-size: 11px; text-transform: uppercase;
  color: var(--jp-ui-font-color2, #5f6368); border-bottom: 1px solid var(--jp-border-color2, #dadce0);
  padding: 4px 8px; }
.jdi-table td { padding: 4px 8px; border-bottom: 1px solid var(--jp-border-color3, #eceff1);
  vertical-align: top; }
.jdi-table td.jdi-num, .jdi-table th.jdi-num { text-align: right; }
.jdi-warning { color: var(--jp-warn-color1, #b06000); }
.jdi-empty { color: var(--jp-ui-font-color2, #5f6368); padding: 6px 0; }
"""
"""The stylesheet every inspector view uses (included once per widget or static block)."""


def badge(text: str, tone: str = "plain") -> str:
    """A small rounded label; `tone` is ok, warn, error, live or plain."""
    return f'<span class="jdi-badge jdi-badge-{tone}">{escape(str(text))}</span>'
