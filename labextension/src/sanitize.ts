/**
 * Defence in depth for the inspector's HTML. The kernel renders it from the run with every
 * model-produced string escaped and cleaned (`jupyter_deepagent/trace/inspector/`), so it
 * holds only the elements the views write: `style`, `details`/`summary`, `input type=radio`,
 * `label`, lists, tables, `pre` and SVG shapes. The panel still cleans it itself, with DOMPurify
 * and an allow-list of exactly those elements and attributes: anything else (scripts, frames,
 * forms, links, images, `on*` attributes, `href`/`src`) is removed, in inert documents (DOMPurify's,
 * then a `<template>`), so nothing loads or runs before it is gone. CSS that could load something (`url(`, `@import`)
 * is dropped as well: the views' own style needs neither.
 */

import DOMPurify from 'dompurify';

/** The elements the inspector's views are made of. */
export const ALLOWED_TAGS = [
  // HTML
  'b',
  'br',
  'code',
  'col',
  'colgroup',
  'details',
  'div',
  'em',
  'h3',
  'h4',
  'h5',
  'hr',
  'i',
  'input',
  'label',
  'li',
  'ol',
  'p',
  'pre',
  'small',
  'span',
  'strong',
  'style',
  'summary',
  'table',
  'tbody',
  'td',
  'th',
  'thead',
  'tr',
  'ul',
  // SVG (the gauge and the step chart)
  'svg',
  'g',
  'circle',
  'line',
  'path',
  'polyline',
  'rect',
  'text',
  'title',
  'tspan'
];

/** Their attributes (besides `data-*`, which DOMPurify keeps). */
export const ALLOWED_ATTR = [
  'checked',
  'class',
  'colspan',
  'for',
  'id',
  'name',
  'open',
  'role',
  'rowspan',
  'style',
  'title',
  'type',
  // SVG
  'cx',
  'cy',
  'd',
  'fill',
  'font-size',
  'font-weight',
  'height',
  'opacity',
  'points',
  'preserveaspectratio',
  'r',
  'rx',
  'ry',
  'stroke',
  'stroke-dasharray',
  'stroke-width',
  'text-anchor',
  'transform',
  'viewbox',
  'width',
  'x',
  'x1',
  'x2',
  'xmlns',
  'y',
  'y1',
  'y2'
];

/** CSS that could fetch something or run script in an old engine. */
const LOADING_CSS =
  /(?:url|image-set|image|cross-fade|element|paint|expression)\s*\(|@import|javascript:|-moz-binding|behavior\s*:/i;

/** The panel's own DOMPurify, so its settings touch no other user of the library. */
const purifier = DOMPurify(window);

/** A fragment of the inspector's HTML, with nothing that could run or load. */
export function inspectorFragment(html: string): DocumentFragment {
  const clean = purifier.sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    FORCE_BODY: true // else a leading <style>, as the views start with, lands in <head>
  });
  // parsed again from the cleaned text, as DOMPurify is meant to be used (its own fragment
  // keeps the tabs' radio buttons unchecked in Chromium), in an inert template
  const template = document.createElement('template');
  template.innerHTML = clean;
  const fragment = template.content;
  for (const element of Array.from(fragment.querySelectorAll('input, style, [style]'))) {
    if (element.localName === 'input' && element.getAttribute('type')?.toLowerCase() !== 'radio') {
      element.remove(); // the tabs are radio buttons; no other input belongs in a view
    } else if (element.localName === 'style' && LOADING_CSS.test(element.textContent || '')) {
      element.remove();
    } else if (LOADING_CSS.test(element.getAttribute('style') || '')) {
      element.removeAttribute('style');
    }
  }
  return fragment;
}
