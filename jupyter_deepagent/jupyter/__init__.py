"""The notebook face: magics, kernel session, the notebook as a filesystem, cell rendering.

`%load_ext jupyter_deepagent` lands here: the magics are registered with plain IPython classes and
the output capture starts; LangChain, LangGraph and the rest of what the first `%%agent` run needs
are imported in a background thread (see `magic/warm_up.py`), and pandas when a run needs it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["load_ipython_extension", "unload_ipython_extension"]


def load_ipython_extension(ipython: Any) -> None:
    """Register `%%agent`/`%agent`, start recording cell outputs for `/notebook/`, (in a
    kernel) open the JupyterLab sidebar's comm target, and start importing in the background
    what the first run needs (unless `JUPYTER_DEEPAGENT_WARM_UP=0`)."""
    from jupyter_deepagent.jupyter.magic.magics import AgentMagics
    from jupyter_deepagent.jupyter.magic.warm_up import start_warm_up
    from jupyter_deepagent.jupyter.notebook_fs.output_capture import OutputCapture
    from jupyter_deepagent.jupyter.session.session import Session
    from jupyter_deepagent.jupyter.views.render import is_terminal

    if "AgentMagics" in ipython.magics_manager.registry:
        return
    session = Session(ipython, capture=OutputCapture.install(ipython))  # opens nothing yet
    magics = AgentMagics(ipython, session)
    ipython.register_magics(magics)
    kernel = getattr(ipython, "kernel", None)
    if getattr(kernel, "comm_manager", None) is not None:  # the JupyterLab sidebar's comm
        from jupyter_deepagent.jupyter.sidebar.channel import SidebarChannel

        magics.sidebar = SidebarChannel(session)
        magics.sidebar.register(kernel)
        from jupyter_deepagent.jupyter.views.proposed_cells import register_cells_target

        register_cells_target(kernel)  # the extension's comm: it inserts proposed cells
    magics.warm_up = start_warm_up(widgets=not is_terminal(ipython))
    if magics.warm_up is not None:
        ipython.events.register("pre_run_cell", magics.warm_up.cell_starts)
        ipython.events.register("post_run_cell", magics.warm_up.cell_ends)


def unload_ipython_extension(ipython: Any) -> None:
    """Close the session's databases and stop recording outputs (`%unload_ext`)."""
    magics = ipython.magics_manager.registry.pop("AgentMagics", None)
    if magics is None:
        return
    for kind in ("line", "cell"):
        ipython.magics_manager.magics[kind].pop("agent", None)
    session = magics.session
    if session.capture is not None:
        session.capture.uninstall()
    if magics.sidebar is not None:
        magics.sidebar.unregister(ipython.kernel)
        from jupyter_deepagent.jupyter.views.proposed_cells import unregister_cells_target

        unregister_cells_target(ipython.kernel)
    if magics.warm_up is not None:
        for event, hook in (
            ("pre_run_cell", magics.warm_up.cell_starts),
            ("post_run_cell", magics.warm_up.cell_ends),
        ):
            if hook in ipython.events.callbacks.get(event, []):
                ipython.events.unregister(event, hook)
    session.close()
