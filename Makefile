# Two commands do everything on a fresh machine:
#   make run   - set up, then run the benchmark on the bundled dataset (results/ + report)
#   make test  - set up, then run the whole test suite
VENV ?= .venv
STAMP := $(VENV)/.setup-done

.PHONY: run test setup clean

setup: $(STAMP)

$(STAMP): pyproject.toml scripts/setup.sh
	bash scripts/setup.sh $(VENV)
	touch $(STAMP)

run: setup
	$(VENV)/bin/diagqa run

test: setup
	$(VENV)/bin/python -m pytest

clean:
	rm -rf $(VENV) .cache
