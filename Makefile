# The two commands: `make demo` and `make test`. Both set everything up from a fresh clone
# (virtual env, pip install, engine jar build). Needs python3 (3.11+) and a JDK 17.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
JAR := src/streamwarden/_engine/streamwarden-engine.jar
ENGINE_SOURCES := $(shell find engine/src/main -name '*.java')
JAVA_SOURCES := $(shell find engine/src -name '*.java')

ENGINE_TESTS_OK := .cache/engine-tests.ok
# The jar sets of engine/deps/pom.xml that the Python side uses: Spark's Kafka connector and the
# tests' local Kafka broker; Delta Lake; PostgreSQL's JDBC driver. fetch_jars.sh writes each set's stamp last.
JAR_SETS := .cache/jars/kafka/.fetched .cache/jars/kafka-broker/.fetched \
	.cache/jars/delta/.fetched .cache/jars/postgres/.fetched

.PHONY: demo demo-kafka postgres test test-engine lint docs docs-look soak cluster faults bench \
	bench-patterns bench-rescale bench-kafka bench-delta bench-history bench-cluster bench-scale \
	bench-scale-state \
	bench-scale-patterns bench-scale-patterns-rocksdb bench-scale-restart bench-scale-checkpoint \
	bench-driver-memory bench-start setup class-archive jar-list clean

setup: $(VENV)/.installed $(JAR) $(JAR_SETS) class-archive

# Spark's classes parsed once into .cache/jvm/ and mapped by every later JVM start (a start 7 s
# shorter): made on the first setup and again whenever Java, pyspark or the engine jar change;
# otherwise this finds it and returns (src/streamwarden/cli/class_archive.py).
class-archive: $(VENV)/.installed $(JAR)
	$(BIN)/python -m streamwarden.cli.class_archive

.cache/jars/%/.fetched: engine/deps/pom.xml
	scripts/fetch_jars.sh $* >/dev/null

# The exact jars of each set that the package ships (src/streamwarden/spark/jar_sets.txt), written
# again from Maven's resolution of the pom; run it after changing a set in the pom.
jar-list:
	$(PY) scripts/lock_jars.py

$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[all,dev]'
	touch $@

$(JAR): $(VENV)/.installed $(ENGINE_SOURCES) scripts/build_engine.sh scripts/javac_flags.sh
	PYTHON=$(BIN)/python scripts/build_engine.sh
	touch $@

demo: setup
	$(BIN)/streamwarden demo

# The Kafka variant: a local broker from the cached jars, pageviews produced live, sessions and
# dead letters written to topics exactly once, the accounting read back from the topics.
demo-kafka: setup
	$(BIN)/streamwarden demo kafka

# PostgreSQL's server programs for the history-store tests, installed with apt-get if absent.
postgres:
	scripts/ensure_postgres.sh >/dev/null

test: setup postgres lint test-engine docs
	$(BIN)/pytest -q

# The documentation site (mkdocs.yml, docs/) into .cache/site, strictly: a broken link, anchor or
# API reference fails it. Not `mkdocs build -q`: quiet hides the warnings --strict counts. First
# the check that docs/reference/configuration.md is what the settings models give (to
# regenerate it: $(BIN)/python -m streamwarden.config.reference).
docs: $(VENV)/.installed
	$(BIN)/python -m streamwarden.config.reference --check
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict -d .cache/site

# The site as a reader sees it: Debian's Chromium (installed with apt-get if absent) renders the
# home page and a guide, served on 127.0.0.1; screenshots in .cache/docs-look/, and a failure
# when a page is blank or lacks its text. Not part of `make test`.
docs-look: docs
	$(BIN)/python scripts/docs_look.py "$$(scripts/ensure_chromium.sh)" .cache/site .cache/docs-look

# The engine's JUnit tests (no Spark). They read only the Java sources, the pyspark jars (fixed
# by .venv/.installed) and the JUnit jar (fixed by the pom), so a stamp newer than all of those
# safely skips a second run. The stamp carries the time the run started, so a source edited
# during a run is tested again.
test-engine: $(ENGINE_TESTS_OK)

$(ENGINE_TESTS_OK): $(VENV)/.installed $(JAVA_SOURCES) scripts/test_engine.sh \
		scripts/javac_flags.sh scripts/fetch_jars.sh engine/deps/pom.xml
	mkdir -p $(dir $@) && touch $@.started
	PYTHON=$(BIN)/python scripts/test_engine.sh
	mv $@.started $@

lint: $(VENV)/.installed
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy

soak: setup
	$(BIN)/pytest -q -m soak -o addopts="-p no:cacheprovider"

# the cluster suite alone (part of soak): a standalone master and two workers from the pyspark
# wheel on 127.0.0.1, pipelines submitted to it against local runs, an executor killed mid-run
cluster: setup
	$(BIN)/pytest -q -o addopts="-p no:cacheprovider" tests/cluster tests/test_wheel.py

# fault injection alone (part of soak): >= 50 SIGKILLs over sessions and patterns; figures in
# bench/results/faults.json (FAULT_ROUNDS, FAULT_KILLS, FAULT_SEED, FAULT_FIRST_ROUND change the run)
faults: setup
	$(BIN)/pytest -q -s -m soak -o addopts="-p no:cacheprovider" tests/pipeline/test_faults.py

bench: setup
	bash bench/setup_flink.sh
	$(BIN)/python bench/sessions_bench.py

bench-patterns: setup
	bash bench/setup_flink.sh
	$(BIN)/python bench/patterns_bench.py

bench-rescale: setup
	$(BIN)/python bench/rescale_bench.py

# Kafka in and out: a local broker, throughput against files -> Parquet, end-to-end latency.
bench-kafka: setup
	$(BIN)/python bench/kafka_bench.py

# The sessions pipeline to Delta tables (MERGE, and append) against Parquet folders, 2M events.
bench-delta: setup
	$(BIN)/python bench/delta_bench.py

# A week of lateness in the history store (PostgreSQL) against the same lateness in state (L8).
bench-history: setup postgres
	$(BIN)/python bench/history_bench.py --delta

# The 2M-event sessions pipeline on a two-worker standalone cluster against local[2].
bench-cluster: setup
	$(BIN)/python bench/cluster_bench.py

# Performance as the work grows (issue 21), one script per question, each engine in a process of
# its own; JSON, Markdown tables and plots in bench/results/. Hours on the full sizes: run it on
# a quiet machine. SCALE_ARGS passes options to the state-growth runs (e.g. --keys 10000,100000).
bench-scale: bench-scale-state bench-scale-patterns bench-scale-restart bench-scale-checkpoint

bench-scale-state: setup
	bash bench/setup_flink.sh
	$(BIN)/python bench/scale/state_growth.py $(SCALE_ARGS)

# Flink's MATCH_RECOGNIZE keeps its partial matches on the JVM heap: at 5M keys they outgrow the
# JVM's default (a quarter of the machine), so the patterns runs give Flink FLINK_HEAP.
FLINK_HEAP ?= 16g

bench-scale-patterns: setup
	bash bench/setup_flink.sh
	$(BIN)/python bench/scale/state_growth.py --workload patterns --flink-heap $(FLINK_HEAP) \
		$(SCALE_ARGS)

# The same query on Flink's RocksDB backend (0.3-0.4 ms per event: sampled single jobs). At 5M
# keys its warm-up alone would take hours on RocksDB, so the last run warms up on the heap and
# carries the state to RocksDB in a savepoint (--flink-warmup-on-heap), at 1M keys too, where
# it is checked against the warm-up on RocksDB itself.
bench-scale-patterns-rocksdb: setup
	bash bench/setup_flink.sh
	$(BIN)/python bench/scale/state_growth.py --workload patterns --engines flink-match-rocksdb \
		--keys 10000,100000 --batch-events 5000,50000 --flink-sample-steady-events 300000 --resume
	$(BIN)/python bench/scale/state_growth.py --workload patterns --engines flink-match-rocksdb \
		--keys 1000000 --batch-events 5000 --flink-sample-steady-events 1000000 --resume
	$(BIN)/python bench/scale/state_growth.py --workload patterns --engines flink-match-rocksdb \
		--keys 10000,1000000,5000000 --batch-events 5000 --flink-sample-steady-events 1000000 \
		--flink-heap $(FLINK_HEAP) --flink-warmup-on-heap \
		--name scale-flink-match-rocksdb-transfer --resume
	$(BIN)/python bench/scale/state_growth.py --workload patterns --report-only \
		--merge scale-flink-match-rocksdb-transfer

bench-scale-restart: setup
	$(BIN)/python bench/scale/restart.py

bench-scale-checkpoint: setup
	$(BIN)/python bench/scale/checkpoint_memory.py

# What the driver's Python keeps per batch of a long run (monitor records, run result); no Spark.
bench-driver-memory: setup
	$(BIN)/python bench/driver_memory.py

# what a start costs, with and without the class archive and PySpark's call-site records
bench-start: setup
	$(BIN)/python bench/start_time.py

clean:
	rm -rf $(VENV) .venv-flink $(JAR) demo-output
