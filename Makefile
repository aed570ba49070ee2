# Two commands do everything on a fresh machine:
#   make run   - set up, then run the benchmark on the bundled dataset (results/ + report)
#   make test  - set up, then run the whole test suite
# and one runs a real local model (CPU; builds llama.cpp and fetches 1.1 GB once, into .cache/llm/):
#   make llm-run - configs/local-llm.yaml against Qwen2.5-Coder-1.5B served on localhost
# and CI's regression gate (about a minute):
#   make gate    - the reference answerers of configs/gate.yaml against the committed baseline
VENV ?= .venv
STAMP := $(VENV)/.setup-done

.PHONY: run test setup clean llm-run gate

setup: $(STAMP)

$(STAMP): pyproject.toml scripts/setup.sh
	bash scripts/setup.sh $(VENV)
	touch $(STAMP)

run: setup
	$(VENV)/bin/diagqa run

# test processes (pytest-xdist): one per core by default, at most 8 (each loads torch and the
# models: some hundreds of MB); a test file's tests run in one of them, so its module fixtures are
# made once. TEST_WORKERS=0 runs the suite in this process alone.
TEST_WORKERS ?= auto

test: setup
	$(VENV)/bin/python -m pytest -n $(TEST_WORKERS) --maxprocesses 8 --dist loadfile

llm-run: setup
	DIAGQA=$(abspath $(VENV))/bin/diagqa bash scripts/llm_run.sh $(LLM_RUN_ARGS)

GATE_BASELINE ?= results/baselines/reference-answerers.json
GATE_OUT := .cache/gate

gate: setup
	rm -rf $(GATE_OUT)
	$(VENV)/bin/diagqa run --config configs/gate.yaml --run-id gate --out $(GATE_OUT) --no-progress
	$(VENV)/bin/diagqa compare --baseline $(GATE_BASELINE) $(GATE_OUT)/gate

clean:
	rm -rf $(VENV) .cache
