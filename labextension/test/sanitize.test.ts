/**
 * The panel's own cleaning of the kernel's HTML: what the inspector's views are made of stays,
 * and nothing that could run script or load something survives, whatever the HTML holds.
 */

import { afterEach, describe, expect, it } from 'vitest';

import { inspectorFragment } from '../src/sanitize';

/** What the views write: their style, tabs made of radio buttons, rows, a table, a gauge. */
const VIEW =
  '<style>.jdi-x{color:red}.jdi-tabs>input{opacity:0}</style>' +
  '<details class="jdi jdi-static" open><summary><span class="jdi-summary" title="t">' +
  'Inspector</span></summary><div class="jdi-tabs">' +
  '<input type="radio" name="t" id="t0" checked><label for="t0">Prompt</label>' +
  '<input type="radio" name="t" id="t1"><label for="t1">Files</label>' +
  '<div class="jdi-panel"><details class="jdi-row" data-section="skills"><summary><b>skills</b>' +
  '</summary><pre class="jdi-code">station-report &lt;b&gt;</pre></details>' +
  '<ul class="jdi-list"><li><i style="color: var(--jp-ui-font-color2)">one</i></li></ul>' +
  '<table class="jdi-table"><thead><tr><th>task</th></tr></thead><tbody><tr><td colspan="2">' +
  'checked</td></tr></tbody></table></div>' +
  '<div class="jdi-panel"><svg class="jdi-gauge" viewBox="0 0 100 10" width="100" ' +
  'height="10" preserveAspectRatio="none" role="img" xmlns="http://www.w3.org/2000/svg">' +
  '<title>6% of 128k</title><rect x="0" y="0" width="6" height="10" rx="2" fill="#1a73e8"/>' +
  '<line x1="85" x2="85" y1="0" y2="10" stroke="red" stroke-dasharray="2 2"/>' +
  '<circle cx="5" cy="5" r="2" fill="red"/><text x="1" y="9" font-size="8">6%</text>' +
  '</svg></div></div></details>';

/** Each sets `window.hacked` if it ever runs, or would load or navigate something. */
const PAYLOADS = [
  '<img src="x" onerror="window.hacked=1">',
  '<script>window.hacked=1</script>',
  '<div onclick="window.hacked=1" onmouseover="window.hacked=1" class="bad">x</div>',
  '<details open ontoggle="window.hacked=1"><summary>s</summary></details>',
  '<svg onload="window.hacked=1"><circle r="1"/></svg>',
  '<svg><script>window.hacked=1</script></svg>',
  '<svg><script href="data:text/javascript,window.hacked=1"></script></svg>',
  '<svg><animate onbegin="window.hacked=1" attributeName="x" dur="1s"/></svg>',
  '<svg><set attributeName="onmouseover" to="window.hacked=1"/></svg>',
  '<svg><a href="javascript:window.hacked=1"><text>t</text></a></svg>',
  '<svg><use href="data:image/svg+xml,<svg id=x onload=window.hacked=1>#x"/></svg>',
  '<svg><foreignObject><iframe src="https://example.org"></iframe></foreignObject></svg>',
  '<a href="javascript:window.hacked=1">a</a>',
  '<a href="&#106;avascript:window.hacked=1">b</a>',
  '<a href=" java\tscript:window.hacked=1">c</a>',
  '<a href="data:text/html,<script>window.hacked=1</script>">d</a>',
  '<iframe srcdoc="<script>parent.hacked=1</script>"></iframe>',
  '<object data="javascript:window.hacked=1"></object>',
  '<embed src="javascript:window.hacked=1">',
  '<form action="javascript:window.hacked=1"><button>go</button></form>',
  '<button formaction="javascript:window.hacked=1">go</button>',
  '<input autofocus onfocus="window.hacked=1">',
  '<input type="image" src="x">',
  '<input type="text" value="typed">',
  '<base href="https://example.org/">',
  '<meta http-equiv="refresh" content="0;url=javascript:window.hacked=1">',
  '<link rel="stylesheet" href="https://example.org/x.css">',
  '<video><source onerror="window.hacked=1"></video>',
  '<math><mtext><table><mglyph><style><img src=x onerror="window.hacked=1">',
  '<noscript><p title="</noscript><img src=x onerror=window.hacked=1>"></noscript>',
  '<template><img src=x onerror="window.hacked=1"></template>',
  '<template><template><noscript><img src=x onerror="window.hacked=1"></noscript></template>' +
    '</template>',
  '<form><math><mtext></form><form><mglyph><style></math><img src onerror=window.hacked=1>',
  '<svg></p><style><a id="</style><img src=1 onerror=window.hacked=1>">',
  '<div style="background:url(javascript:window.hacked=1)">u</div>',
  '<div style="width: expression(window.hacked=1)">e</div>',
  '<style>@import url("https://example.org/steal.css");</style>',
  '<style>.x{background:url(https://example.org/?leak)}</style>',
  '<span class="x" style="behavior: url(x.htc)">b</span>',
  '<span style="background:image-set(\'https://example.org/?k=1\' 1x)">i</span>',
  '<style>.x{background:-webkit-image-set("https://example.org/?k=2" 1x)}</style>'
];

/** Every problem of a cleaned fragment: an element or attribute that could run or load. */
function problems(root: ParentNode): string[] {
  const found: string[] = [];
  const loading = [
    'script',
    'iframe',
    'frame',
    'object',
    'embed',
    'form',
    'button',
    'a',
    'img',
    'image',
    'use',
    'base',
    'meta',
    'link',
    'template',
    'noscript',
    'video',
    'source',
    'foreignobject',
    'animate',
    'set',
    'math',
    'textarea',
    'select'
  ];
  for (const element of Array.from(root.querySelectorAll('*'))) {
    const name = element.localName.toLowerCase();
    if (loading.includes(name)) {
      found.push(`<${name}>`);
    }
    if (name === 'input' && element.getAttribute('type') !== 'radio') {
      found.push('<input> that is not a radio button');
    }
    for (const attribute of Array.from(element.attributes)) {
      const key = attribute.name.toLowerCase();
      const value = attribute.value.replace(/[\s\p{Cc}]/gu, '').toLowerCase();
      if (
        key.startsWith('on') ||
        [
          'href',
          'xlink:href',
          'src',
          'srcdoc',
          'action',
          'formaction',
          'data',
          'autofocus'
        ].includes(key)
      ) {
        found.push(`<${name} ${key}>`);
      }
      if (/url\(|image-set\(|expression\(|javascript:|behavior:/.test(value)) {
        found.push(`<${name} ${key}=${attribute.value}>`);
      }
    }
    if (name === 'style' && /url\(|image-set\(|@import/.test(element.textContent || '')) {
      found.push(`<style>${element.textContent}</style>`);
    }
  }
  return found;
}

afterEach(() => {
  delete (window as { hacked?: number }).hacked;
  document.body.innerHTML = '';
});

describe('the inspector HTML cleaning', () => {
  it('keeps what the views are made of, as the kernel wrote it', () => {
    const host = document.createElement('div');
    host.append(inspectorFragment(VIEW));
    const reference = document.createElement('div');
    reference.innerHTML = VIEW;
    expect(host.innerHTML).toBe(reference.innerHTML);
    expect(host.querySelector('style')?.textContent).toContain('.jdi-x{color:red}');
    expect(host.querySelectorAll('input[type=radio]')).toHaveLength(2);
    expect((host.querySelector('#t0') as HTMLInputElement).checked).toBe(true); // the open tab
    expect(host.querySelector('label[for=t0]')?.textContent).toBe('Prompt');
    expect((host.querySelector('details') as HTMLDetailsElement).open).toBe(true);
    expect(host.querySelector('td[colspan="2"]')?.textContent).toBe('checked');
    expect(host.querySelector('pre')?.textContent).toBe('station-report <b>');
    const gauge = host.querySelector('svg') as SVGSVGElement;
    expect(gauge.getAttribute('viewBox')).toBe('0 0 100 10');
    expect(gauge.querySelectorAll('rect, line, circle, text, title')).toHaveLength(5);
    expect(host.querySelector('.jdi-row')?.getAttribute('data-section')).toBe('skills');
  });

  it.each(PAYLOADS)('leaves nothing that could run or load of %s', payload => {
    const host = document.createElement('div');
    host.append(inspectorFragment(VIEW + payload));
    document.body.append(host);
    expect(problems(host)).toEqual([]);
    expect((window as { hacked?: number }).hacked).toBeUndefined();
    expect(host.querySelectorAll('input[type=radio]')).toHaveLength(2); // the view is intact
  });

  it('parses nothing live while it cleans: a payload never reaches the page', () => {
    const before = document.body.innerHTML;
    const fragment = inspectorFragment(PAYLOADS.join(''));
    expect(document.body.innerHTML).toBe(before);
    expect(problems(fragment)).toEqual([]);
  });

  it('keeps text that looks like markup as text', () => {
    const host = document.createElement('div');
    host.append(inspectorFragment('<pre>&lt;img src=x onerror=alert(1)&gt;</pre>'));
    expect(host.querySelector('pre')?.textContent).toBe('<img src=x onerror=alert(1)>');
    expect(host.querySelector('img')).toBeNull();
  });
});
