"""A notebook folder's agent, whoever runs it: settings, secrets, storage, the workspace guard and model
creation. The kernel (`jupyter/`), LangGraph Server (`server/`) and the CLI are faces over it; nothing
here imports the notebook stack."""
