# fixturegen: `make fixtures` builds the corpus, `make test` runs the whole test suite.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
OUT    ?= out

.PHONY: fixtures test test-fast test-under-load test-slow lint generated docs docs-check bench bench-handshake bench-ci-job adapters conformance builds-check ci-job-check matrix mutation clean distclean

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[test,lint]'
	touch $(STAMP)

fixtures: $(STAMP)
	$(VENV)/bin/fixturegen generate --out $(OUT)

test: $(STAMP)
	$(PY) -m pytest -n 2

# make test in a fresh clone of HEAD, three times in a row, each beside one CPU-bound process
# per core (tools/under_load.py): a test that passes only on an idle machine fails here.
# About half an hour on two cores; RUNS=1 for one run.
RUNS ?= 3
test-under-load: $(STAMP)
	$(PY) -m tools.under_load --runs $(RUNS)

test-slow: $(STAMP)
	$(PY) -m pytest -n 2 -m slow

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

# The files generated from the code (the shipped schemas, the documentation's reference pages),
# after a change to an enum, a model, a command or a case; the tests fail while one is stale.
generated: $(STAMP)
	$(PY) -m tools.generated

DOCS_STAMP := $(VENV)/.docs-installed
$(DOCS_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -c constraints.txt -e '.[test,lint,docs]'
	touch $(DOCS_STAMP)

# The documentation site, in site/ (mkdocs-material, strict: a warning, a broken link or a
# stale generated page fails it).
docs: $(DOCS_STAMP)
	$(PY) -m tools.generated --check
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

# The site built (strict, by the test) and opened in headless Chromium (/usr/bin/chromium,
# Debian's), and every runnable example of the guides and the README run in a fresh folder.
docs-check: $(DOCS_STAMP)
	$(PY) -m pytest -n 2 -m docs

bench: $(STAMP)
	$(PY) benchmarks/bench.py

# The handshake profile: 50 handshakes per adapter, transport, direction and certificate scheme.
bench-handshake: $(STAMP) adapters
	$(PY) benchmarks/bench.py --handshake

# The CI job of docs/guides/ci.md per implementation (IMPLS=... for some): a wheel of this
# checkout, the pinned release's source as a checkout; the first run of the tree, then again
# with a warm cache (target: under a minute).
bench-ci-job: $(STAMP)
	$(PY) -m tools.cijob $(IMPLS)

# The shipped harness adapters, built from their registries at pinned versions.
adapters:
	adapters/build all

# Every shipped adapter over the whole corpus (built first if missing; the corpus rebuilt, so
# it is this checkout's); reports in $(OUT)/conformance/. Divergences are findings: this fails
# only if something cannot run.
conformance: $(STAMP) adapters
	$(VENV)/bin/fixturegen generate --out $(OUT)
	$(VENV)/bin/fixturegen harness run --impl all --mode all --corpus $(OUT)
	FIXTUREGEN_CONFORMANCE=$(OUT)/conformance $(PY) -m pytest -n 2 -m conformance

# Builds of other versions, for real: per implementation an older release from its registry
# and a source tree with a planted bug (tests/test_real_builds.py). CI runs it.
builds-check: $(STAMP) adapters
	FIXTUREGEN_CI_JOBS="go-libp2p litep2p" $(PY) -m pytest -m builds

# The CI job of docs/guides/ci.md for all five implementations (builds-check runs two of them:
# go-libp2p's and litep2p's, the one whose build fetches protoc). About 15 minutes.
ci-job-check: $(STAMP) adapters
	FIXTUREGEN_CI_JOBS= $(PY) -m pytest -m builds tests/test_ci_job.py

# Full version matrices of every implementation with builds of other versions (API and
# handshake modes), into $(OUT)/matrix/NAME; resumable: a version already run is kept. Hours on
# two cores; MATRIX_MODE=api for the certificate check alone, MATRIX_VERSIONS=minors for fewer.
MATRIX_VERSIONS ?= all
MATRIX_MODE ?= all
matrix: $(STAMP) adapters
	$(VENV)/bin/fixturegen generate --out $(OUT)
	for impl in rust-libp2p py-libp2p-tls py-libp2p-quic js-libp2p go-libp2p litep2p; do \
	  $(VENV)/bin/fixturegen harness matrix --impl $$impl --versions $(MATRIX_VERSIONS) \
	    --mode $(MATRIX_MODE) --corpus $(OUT) --out $(OUT)/matrix/$$impl || exit 1; done

# Full mutation campaigns of the pinned releases (fixturegen mutate), into $(OUT)/mutation/NAME;
# resumable (a finished mutant is kept). Hours on two cores; MUTATE_ARGS="--shard 1/4" for one
# part of each, then `fixturegen mutate merge`. CI runs one named mutant of each
# (make builds-check).
MUTATE_ARGS ?=
mutation: $(STAMP) adapters
	$(VENV)/bin/fixturegen generate --out $(OUT)
	for impl in go-libp2p js-libp2p rust-libp2p py-libp2p-tls py-libp2p-quic litep2p; do \
	  $(VENV)/bin/fixturegen mutate --impl $$impl --corpus $(OUT) \
	    --out $(OUT)/mutation/$$impl $(MUTATE_ARGS) || exit 1; done

clean:
	rm -rf $(OUT) .$(OUT).tmp-* .pytest_cache .mypy_cache .ruff_cache .hypothesis site

distclean: clean
	rm -rf $(VENV) *.egg-info
