# Two entry points: `make demo` runs the main job, `make test` runs the whole suite.
# Each creates its own virtual environment (.venv) and installs what it needs.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: demo record-quickstart test bench clean

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

# record the quickstart's research log again (after a change to what the agent is sent)
record-quickstart: $(VENV)/.installed
	rm -rf notebooks/.deepagent notebooks/quickstart.ipynb.agentlog.jsonl
	$(VENV)/bin/jupyter-deepagent run notebooks/quickstart.ipynb --replay off --output notebooks/quickstart.ipynb
	rm -rf notebooks/.deepagent

# -rs lists skipped tests with their reason (the browser test says how to enable it);
# JUPYTER_DEEPAGENT_REQUIRE_BROWSER=1 (set by .ci/run) makes a missing browser a failure.
test: $(VENV)/.installed
	$(PY) -m pytest -rs

bench: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[test,bench]'   # deepagents, to compare against
	$(PY) bench/long_run.py

clean:
	rm -rf $(VENV) build dist *.egg-info
