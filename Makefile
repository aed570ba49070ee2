# Two commands do everything on a fresh machine:
#   make run   - set up, then run the benchmark on the bundled dataset (results/ + report)
#   make test  - set up, then run the whole test suite
# and one runs a real local model (CPU; builds llama.cpp and fetches 1.1 GB once, into .cache/llm/):
#   make llm-run - configs/local-llm.yaml against Qwen2.5-Coder-1.5B served on localhost
VENV ?= .venv
STAMP := $(VENV)/.setup-done

.PHONY: run test setup clean llm-run

setup: $(STAMP)

$(STAMP): pyproject.toml scripts/setup.sh
	bash scripts/setup.sh $(VENV)
	touch $(STAMP)

run: setup
	$(VENV)/bin/diagqa run

test: setup
	$(VENV)/bin/python -m pytest

llm-run: setup
	DIAGQA=$(abspath $(VENV))/bin/diagqa bash scripts/llm_run.sh $(LLM_RUN_ARGS)

clean:
	rm -rf $(VENV) .cache
