/**
 * Defence in depth for the inspector's HTML. The kernel renders it from the run with every
 * model-produced string escaped (`jupyter_deepagent/trace/inspector_*.py`), so it holds only the
 * elements the views write: `style`, `details`, `input type=radio`, `label`, tables, `pre` and SVG
 * shapes. This pass still removes anything that could run script or load something (scripts,
 * frames, `on*` attributes, `href`/`src`), parsed in an inert `<template>` so nothing loads first.
 */

const DROPPED = new Set([
  'script',
  'iframe',
  'frame',
  'object',
  'embed',
  'link',
  'meta',
  'base',
  'form',
  'button',
  'textarea',
  'select',
  'img',
  'video',
  'audio',
  'source',
  'foreignobject',
  'use',
  'image',
  'a',
  'animate',
  'set'
]);

/** A fragment of the inspector's HTML, with nothing that could run or load. */
export function inspectorFragment(html: string): DocumentFragment {
  const template = document.createElement('template');
  template.innerHTML = html;
  const elements = Array.from(template.content.querySelectorAll('*'));
  for (const element of elements) {
    const name = element.localName.toLowerCase();
    if (
      DROPPED.has(name) ||
      (name === 'input' && (element.getAttribute('type') || '').toLowerCase() !== 'radio')
    ) {
      element.remove();
      continue;
    }
    for (const attribute of Array.from(element.attributes)) {
      const key = attribute.name.toLowerCase();
      if (key.startsWith('on') || key.endsWith('href') || key === 'src' || key === 'action') {
        element.removeAttribute(attribute.name);
      }
    }
  }
  return template.content;
}
