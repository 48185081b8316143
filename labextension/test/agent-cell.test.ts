import { markdownLanguage } from '@codemirror/lang-markdown';
import { python, pythonLanguage } from '@codemirror/lang-python';
import { ensureSyntaxTree, language } from '@codemirror/language';
import { EditorState } from '@codemirror/state';
import { highlightTree, tagHighlighter, tags } from '@lezer/highlight';
import { describe, expect, it } from 'vitest';

import { AGENT_NODES, agentCellExtension, agentCellLanguage, isAgentCell } from '../src/agent-cell';

const REQUEST = "Which region's permafrost warms fastest? Use the `stations` table.";
const agent = agentCellLanguage(markdownLanguage);

function editor(text: string, language = python()): EditorState {
  return EditorState.create({
    doc: text,
    extensions: [language, agentCellExtension(agent, text)]
  });
}

/** The highlighting classes over each word of the text (a string, a keyword, ...). */
function classesOf(state: EditorState, word: string): string[] {
  const tree = ensureSyntaxTree(state, state.doc.length, 5000);
  const from = state.doc.toString().indexOf(word);
  const found: string[] = [];
  const highlighter = tagHighlighter([
    { tag: tags.string, class: 'string' },
    { tag: tags.keyword, class: 'keyword' },
    { tag: tags.attributeName, class: 'option' },
    { tag: tags.attributeValue, class: 'value' },
    { tag: tags.monospace, class: 'code' }
  ]);
  highlightTree(tree!, highlighter, (start, end, cls) => {
    if (start < from + word.length && end > from) {
      found.push(cls);
    }
  });
  return found;
}

describe('%%agent cells', () => {
  it('is an agent cell only when the first line starts with the magic', () => {
    expect(isAgentCell('%%agent\nHello')).toBe(true);
    expect(isAgentCell('%%agent -m scripted:x.yaml')).toBe(true);
    expect(isAgentCell('%%agentic\nHello')).toBe(false);
    expect(isAgentCell('x = 1\n%%agent')).toBe(false);
  });

  it('reads the request as Markdown and the first line as the magic and its options', () => {
    const state = editor(`%%agent --tools daily_series -m scripted:a.yaml\n${REQUEST}`);
    expect(state.facet(language)).toBe(agent);
    const names = new Set<string>();
    ensureSyntaxTree(state, state.doc.length, 5000)!.iterate({
      enter: node => {
        names.add(node.name);
      }
    });
    expect(names).toContain(AGENT_NODES.magic);
    expect(names).toContain(AGENT_NODES.option);
    expect(names).toContain(AGENT_NODES.value);
    expect(names).toContain('Paragraph');
    expect(names).not.toContain('String');
    expect(classesOf(state, '%%agent')).toEqual(['keyword']);
    expect(classesOf(state, '--tools')).toEqual(['option']);
    expect(classesOf(state, 'daily_series')).toEqual(['value']);
    expect(classesOf(state, 'permafrost')).toEqual([]); // not a string after the apostrophe
    expect(classesOf(state, 'stations')).toContain('code'); // Markdown's inline code
  });

  it('leaves a Python cell Python, where the same text is a string', () => {
    const state = editor(REQUEST);
    expect(state.facet(language)).toBe(pythonLanguage);
    expect(classesOf(state, 'permafrost')).toContain('string');
  });

  it('works in an editor created empty and without a language, filled later', () => {
    let state = EditorState.create({ doc: '', extensions: [agentCellExtension(agent, '')] });
    expect(state.facet(language)).toBeNull();
    state = state.update({ changes: { from: 0, insert: `%%agent\n${REQUEST}` } }).state;
    expect(state.facet(language)).toBe(agent);
    expect(classesOf(state, 'permafrost')).toEqual([]);
  });

  it('follows the first line as the user types the magic in and out', () => {
    let state = editor(REQUEST);
    state = state.update({ changes: { from: 0, insert: '%%agent\n' } }).state;
    expect(state.facet(language)).toBe(agent);
    expect(classesOf(state, 'permafrost')).toEqual([]);
    state = state.update({ changes: { from: 0, to: 1 } }).state; // "%agent": a line magic
    expect(state.facet(language)).toBe(pythonLanguage);
    expect(classesOf(state, 'permafrost')).toContain('string');
  });
});
