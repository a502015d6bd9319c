# The two commands: `make demo` and `make test`. Both set everything up from a fresh clone
# (virtual env, pip install, engine jar build). Needs python3 (3.11+) and a JDK 17.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
JAR := src/streamwarden/_engine/streamwarden-engine.jar
JAVA_SOURCES := $(shell find engine/src -name '*.java')

.PHONY: demo test lint soak bench bench-patterns bench-rescale setup clean

setup: $(VENV)/.installed $(JAR)

$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

$(JAR): $(VENV)/.installed $(JAVA_SOURCES) scripts/build_engine.sh
	PYTHON=$(BIN)/python scripts/build_engine.sh
	touch $@

demo: setup
	$(BIN)/streamwarden demo

test: setup lint
	$(BIN)/pytest -q

lint: $(VENV)/.installed
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy

soak: setup
	$(BIN)/pytest -q -m soak -o addopts="-p no:cacheprovider"

bench: setup
	bash bench/setup_flink.sh
	$(BIN)/python bench/sessions_bench.py

bench-patterns: setup
	bash bench/setup_flink.sh
	$(BIN)/python bench/patterns_bench.py

bench-rescale: setup
	$(BIN)/python bench/rescale_bench.py

clean:
	rm -rf $(VENV) .venv-flink $(JAR) demo-output
