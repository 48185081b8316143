/**
 * jupyter-deepagent's JupyterLab extension: the "Agent inspector" in the right sidebar, following
 * the active notebook's kernel (see `panel.ts` for what it shows, `link.ts` for the comm).
 */

import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { MainAreaWidget } from '@jupyterlab/apputils';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { inspectorIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

import { KernelLink } from './link';
import { InspectorPanel } from './panel';
import { serverPath } from './paths';

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-deepagent:inspector',
  description: 'The agent inspector in the right sidebar, following the active notebook.',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (app: JupyterFrontEnd, notebooks: INotebookTracker) => {
    const panel = new InspectorPanel();
    panel.title.icon = inspectorIcon;
    const link = new KernelLink(panel);
    let current: NotebookPanel | null = null;
    // A file JupyterLab's server can read opens as a document; the state folder is hidden and
    // the server refuses hidden files by default, so those are shown read-only from the kernel.
    panel.onOpenFile = async (local, virtual) => {
      if (!current) {
        return;
      }
      const path = serverPath(current.context.path, local);
      try {
        await app.serviceManager.contents.get(path, { content: false });
      } catch (error) {
        link.requestFile(virtual);
        return;
      }
      await app.commands.execute('docmanager:open', { path });
    };
    link.onFile = message => {
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
      app.shell.add(viewer, 'main');
      app.shell.activateById(viewer.id);
    };
    const follow = (notebook: NotebookPanel | null) => {
      current = notebook;
      link.attach(notebook ? notebook.sessionContext : null, notebook?.context.path ?? null);
    };
    notebooks.currentChanged.connect((_, notebook) => follow(notebook));
    app.shell.add(panel, 'right', { rank: 650 });
    void app.restored.then(() => follow(notebooks.currentWidget));
  }
};

export default plugin;
