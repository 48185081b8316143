/**
 * jupyter-deepagent's JupyterLab extension: the "Agent inspector" in the right sidebar, following
 * the active notebook's kernel (see `panel.ts` for what it shows, `link.ts` for the comm).
 */

import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { inspectorIcon } from '@jupyterlab/ui-components';

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
    panel.onOpenFile = local => {
      if (current) {
        void app.commands.execute('docmanager:open', {
          path: serverPath(current.context.path, local)
        });
      }
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
