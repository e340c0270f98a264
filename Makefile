# The two commands of the README: `make main` and `make test`. Each sets everything up first.
# The RLlib smoke test runs in its own venv (.venv-rllib): ray[rllib] pins an older gymnasium.
.PHONY: setup setup-rllib main test

setup:
	bash scripts/setup.sh

setup-rllib:
	bash scripts/setup.sh rllib

main: setup
	.venv/bin/python scripts/main.py

test: setup setup-rllib
	.venv/bin/python -m pytest
	.venv-rllib/bin/python -m pytest tests/integrations/test_rllib.py
