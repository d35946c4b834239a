# flintlock developer commands. Every target bootstraps .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.installed-bench
BROWSER := .browser/chromium/usr/lib/chromium/chromium-headless-shell

export SPARK_LOCAL_IP ?= 127.0.0.1
# The test process runs thousands of jobs whose TaskManagers are threads: with glibc's default
# of up to 8 malloc arenas per core, freed memory stays mapped in the threads' arenas and the
# process grew to 11 GB; two arenas take the arenas' share out of that (the rest is open:
# docs/known-issues.md, "Memory of a long-lived process running many jobs").
export MALLOC_ARENA_MAX ?= 2
export PYSPARK_PYTHON ?= $(abspath $(BIN)/python)

.PHONY: run test test-fast soak lint typecheck bench bench-nexmark clean

# flintlock's modules as bytecode, as an installed wheel has them: this checkout is an editable
# install, and where PYTHONDONTWRITEBYTECODE is set every process of a job (driver, Spark's
# Python daemon, workers) would compile them from source, 0.2-0.3 s of each job's start-up
# (docs/benchmarks.md, "Start-up"). Python ignores a file older than its source.
BYTECODE := $(BIN)/python -m compileall -q -j 0 flintlock

# setup.py builds flintlock's optional C accelerator (flintlock/common/_speedups.c) in place.
$(STAMP): pyproject.toml setup.py flintlock/common/_speedups.c flintlock/common/_crows.c \
		flintlock/runtime/state/_crocks.c flintlock/common/_cformats.c
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(BYTECODE)
	$(BIN)/python -m flintlock.examples.word_count

# Debian's headless Chromium for the dashboard's browser test, unpacked into .browser/ without
# root (tests/browser/chromium.py; where apt's package lists are missing, as on a fresh
# machine, it runs apt-get update into .browser/apt first). make test requires the browser:
# FLINTLOCK_REQUIRE_BROWSER=1 turns that test's skip into a failure, so a run that did not
# test the dashboard cannot pass; FLINTLOCK_REQUIRE_BROWSER=0 make test allows the skip
# (named in pytest's summary) where no Debian packages can be had.
$(BROWSER): | $(STAMP)
	-$(BIN)/python -m tests.browser.chromium

test: $(STAMP) $(BROWSER)
	$(BYTECODE)
	FLINTLOCK_REQUIRE_BROWSER=$${FLINTLOCK_REQUIRE_BROWSER:-1} $(BIN)/python -m pytest

test-fast: $(STAMP)
	$(BYTECODE)
	$(BIN)/python -m pytest -m "not spark and not slow"

# Longer fault schedules (docs/reliability.md): in-process faults on TaskManager threads, and
# one schedule mixing process, network and disk faults on Spark; FLINTLOCK_SOAK_SEED=<n>
# replays one, FLINTLOCK_SOAK_FAULTS=<n> sets the length.
soak: $(STAMP)
	FLINTLOCK_SOAK_FAULTS=$${FLINTLOCK_SOAK_FAULTS:-25} $(BIN)/python -m pytest -s tests/integration/test_fault_schedule.py tests/integration/test_jobmanager_failover.py
	FLINTLOCK_SOAK_FAULTS=$${FLINTLOCK_SOAK_FAULTS:-8} $(BIN)/python -m pytest -s tests/spark/test_fault_schedule_on_spark.py

lint: $(STAMP)
	$(BIN)/ruff check flintlock tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy flintlock

# The benchmarks' extra (Bytewax, matplotlib), installed once next to the test extra.
$(BENCH_STAMP): $(STAMP) pyproject.toml setup.py
	$(BIN)/pip install --quiet -e '.[test,bench]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BYTECODE)
	$(BIN)/python -m benchmarks.run

# Nexmark on flintlock, PyFlink 2.3.0 (installed into .bench/pyflink-venv on first use) and
# Spark SS, every query flintlock runs, interleaved rounds (docs/benchmarks.md, "Nexmark"):
# the check runs flintlock and PyFlink in print mode (it took 14 minutes through PyFlink's
# collect()), and a timed run still going after 180 s is cancelled and recorded as timed out
# (Spark's q20 at 2,000,000 events once ran over 9 minutes): about 45-60 minutes on two cores.
# Writes docs/benchmarks-nexmark.json and its plot.
# 200,000 and 2,000,000 events: the marginal rate needs the JVM engines' difference between
# the sizes to dominate their per-job noise (seconds), and the small size only cancels start-up.
NEXMARK_ARGS ?= --sizes 200000 2000000 --rounds 2 --check-events 5000 --time-limit 180
bench-nexmark: $(BENCH_STAMP)
	$(BYTECODE)
	SPARK_LOCAL_IP=127.0.0.1 $(BIN)/python -m benchmarks.nexmark.run $(NEXMARK_ARGS) \
		--json docs/benchmarks-nexmark.json --plot docs/benchmarks-nexmark.png

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache flintlock/common/_speedups*.so flintlock/common/_crows*.so \
		flintlock/runtime/state/_crocks*.so flintlock/common/_cformats*.so
