# Two entry points: `make demo` runs the main job, `make test` runs the whole suite.
# Each creates its own virtual environment (.venv) and installs what it needs.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: demo test bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

demo: $(VENV)/.installed
	$(PY) examples/scripted_research.py

# -rs lists skipped tests with their reason (the browser test says how to enable it);
# JUPYTER_DEEPAGENT_REQUIRE_BROWSER=1 (set by .ci/run) makes a missing browser a failure.
test: $(VENV)/.installed
	$(PY) -m pytest -rs

bench: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[test,bench]'   # deepagents, to compare against
	$(PY) bench/long_run.py

clean:
	rm -rf $(VENV) build dist *.egg-info
