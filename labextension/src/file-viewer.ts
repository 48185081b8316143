/**
 * Opening a run's file from the sidebar: as a JupyterLab document when JupyterLab's server can
 * read it, else read-only from the kernel. The state folder is hidden and the server refuses
 * hidden files by default, so those are asked from the kernel (`SidebarModel.requestFile`) and
 * shown in a main-area tab of their own, as text.
 */

import type { JupyterFrontEnd } from '@jupyterlab/application';
import { MainAreaWidget } from '@jupyterlab/apputils';
import { inspectorIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

import type { SidebarModel } from './model';
import type { FileRequest } from './panel';
import { serverPath } from './paths';
import type { FileMessage } from './protocol';

/**
 * Open `file` (of the notebook at `notebookPath`) as a document, or ask the kernel for its text
 * when the server will not read it: `showFile` shows the answer.
 */
export async function openRunFile(
  app: JupyterFrontEnd,
  model: SidebarModel,
  notebookPath: string,
  file: FileRequest
): Promise<void> {
  const path = serverPath(notebookPath, file.local);
  try {
    await app.serviceManager.contents.get(path, { content: false });
  } catch {
    model.requestFile(file.virtual);
    return;
  }
  await app.commands.execute('docmanager:open', { path });
}

/** A read-only tab with the text of a file the kernel sent. */
export function fileViewer(message: FileMessage): MainAreaWidget {
  const body = new Widget();
  body.addClass('jdp-file');
  const pre = document.createElement('pre');
  pre.textContent = message.truncated ? `${message.text}\n… (the first 1 MB)` : message.text;
  body.node.append(pre);
  const viewer = new MainAreaWidget({ content: body });
  viewer.id = `jupyter-deepagent-file-${Date.now()}`;
  viewer.title.label = message.local.split('/').pop() || message.local;
  viewer.title.caption = `${message.path} (read-only: ${message.local})`;
  viewer.title.icon = inspectorIcon;
  viewer.title.closable = true;
  return viewer;
}

/** Show the text of a file the kernel sent in a new main-area tab. */
export function showFile(app: JupyterFrontEnd, message: FileMessage): void {
  const viewer = fileViewer(message);
  app.shell.add(viewer, 'main');
  app.shell.activateById(viewer.id);
}
