# Two entry points: `make demo` runs the main job, `make test` runs the whole suite.
# Each creates its own virtual environment (.venv) and installs what it needs.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: demo test lint bench clean labextension labextension-lint

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

# the quickstart notebook replayed offline from its research log, in a scratch copy (build/demo)
demo: $(VENV)/.installed
	rm -rf build/demo && mkdir -p build && cp -r notebooks build/demo && rm -rf build/demo/.deepagent
	$(VENV)/bin/jupyter-deepagent run build/demo/quickstart.ipynb --replay strict
	$(VENV)/bin/jupyter-deepagent log build/demo/quickstart.ipynb

# record a shipped notebook's research log again, with its scripted model (after a change to what
# the agent is sent): `make record-quickstart`, `make record-01_first_research_run`,
# `make record-02_notebook_tools`; `make record-notebooks` records all three, one after the other
# (they share notebooks/.deepagent, which each recording starts without)
SHIPPED_NOTEBOOKS := quickstart 01_first_research_run 02_notebook_tools
RECORD_TARGETS := $(addprefix record-,$(SHIPPED_NOTEBOOKS))
.PHONY: record-notebooks $(RECORD_TARGETS)

$(RECORD_TARGETS): record-%: $(VENV)/.installed
	rm -rf notebooks/.deepagent notebooks/$*.ipynb.agentlog.jsonl
	$(VENV)/bin/jupyter-deepagent run notebooks/$*.ipynb --replay off --output notebooks/$*.ipynb
	rm -rf notebooks/.deepagent

record-notebooks: $(VENV)/.installed
	for name in $(SHIPPED_NOTEBOOKS); do $(MAKE) --no-print-directory record-$$name || exit 1; done

# The JupyterLab sidebar (labextension/): `npm ci` once, a build whenever its sources change, then
# the editable install copies the build into the venv. Without Node.js it is skipped with a note
# (the sidebar's tests then skip too, or fail under JUPYTER_DEEPAGENT_REQUIRE_NODE=1).
LABEXT_BUILT := jupyter_deepagent/labextension/static/style.js
LABEXT_SOURCES := $(wildcard labextension/src/*.ts) labextension/style/index.css labextension/package.json \
	labextension/tsconfig.json

labextension/node_modules/.package-lock.json: labextension/package-lock.json
	cd labextension && npm ci --no-audit --no-fund --loglevel=error

$(LABEXT_BUILT): labextension/node_modules/.package-lock.json $(LABEXT_SOURCES) | $(VENV)/.installed
	cd labextension && PATH="$(CURDIR)/$(VENV)/bin:$$PATH" npm run --silent build:prod
	$(PY) -m pip install --quiet --no-deps -e .
	touch $@

labextension: $(VENV)/.installed
	@if command -v node >/dev/null && command -v npm >/dev/null; then \
		$(MAKE) --no-print-directory $(LABEXT_BUILT); \
	else echo "Node.js not found: the JupyterLab sidebar is not built (its tests skip)"; fi

# eslint (typescript-eslint) and prettier --check on the sidebar's sources; `npm run format` in
# labextension/ fixes what they can
labextension-lint: labextension/node_modules/.package-lock.json
	cd labextension && npm run --silent lint

# -rs lists skipped tests with their reason (the browser test says how to enable it);
# JUPYTER_DEEPAGENT_REQUIRE_BROWSER=1 (set by .ci/run) makes a missing browser a failure.
# The storage tests start their own PostgreSQL server from the system's binaries and skip without
# them (apt-get install postgresql); JUPYTER_DEEPAGENT_REQUIRE_POSTGRES=1 (.ci/run) fails instead.
test: $(VENV)/.installed labextension lint
	$(PY) -m pytest -rs

# ruff (format and lint) and mypy on the package; eslint and prettier on the sidebar's sources
lint: $(VENV)/.installed
	$(VENV)/bin/ruff format --check --quiet jupyter_deepagent
	$(VENV)/bin/ruff check --quiet jupyter_deepagent
	$(VENV)/bin/mypy
	@if command -v node >/dev/null && command -v npm >/dev/null; then \
		$(MAKE) --no-print-directory labextension-lint; \
	else echo "Node.js not found: the sidebar's sources are not linted"; fi

bench: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[test,bench]'   # deepagents, to compare against
	$(PY) bench/long_run.py

clean:
	rm -rf $(VENV) build dist *.egg-info jupyter_deepagent/labextension labextension/lib \
		labextension/node_modules labextension/tsconfig.tsbuildinfo
