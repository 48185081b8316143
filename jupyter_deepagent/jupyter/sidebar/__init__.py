"""The JupyterLab sidebar's channel: a comm per sidebar, speaking the versioned sidebar protocol."""
