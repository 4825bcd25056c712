PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-slow bench docs install clean

# Create the virtual environment and install schedopt (editable) with its test tools.
# Re-runs only when pyproject.toml changes.
$(STAMP): pyproject.toml Makefile
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,testing,plot,ray,cpsat,docs]'
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/schedopt compare instances/optimus-testbed.yaml --solvers optimus-greedy,optimus-milp,optimus-cpsat

test: $(STAMP)
	$(BIN)/python -m pytest

test-slow: $(STAMP)
	$(BIN)/python -m pytest -m slow
	SCHEDOPT_DOCS_SLOW=1 $(BIN)/python -m pytest docs

# The docs site with the API reference from the docstrings (build/site); broken links and
# missing references fail it (mkdocs.yml: strict).
docs: $(STAMP)
	$(BIN)/mkdocs build --strict

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
