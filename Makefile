# The two commands of the README: `make main` and `make test`. Each sets everything up first.
# The RLlib tests (the smoke test, the modules, the three-node cluster and its faults) run in their own venv
# (.venv-rllib): ray[rllib] pins an older gymnasium.
# The client-library tests (TorchRL, Tianshou, SuperSuit, SB3's PettingZoo tutorial) run in .venv-clients.
# The documentation site is built in strict mode (warnings fail) as part of the tests.
# scripts/check_wheel.sh installs the built wheel into a clean venv and smoke-tests it from outside the tree.
.PHONY: setup setup-rllib setup-clients setup-docs main test docs

setup:
	bash scripts/setup.sh

setup-rllib:
	bash scripts/setup.sh rllib

setup-clients:
	bash scripts/setup.sh clients

# The documentation site: mkdocs (material, mkdocstrings) in its own venv, built in strict mode into site/.
setup-docs:
	bash scripts/setup.sh docs

main: setup
	.venv/bin/python scripts/main.py

test: setup setup-rllib setup-clients setup-docs
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
	.venv/bin/mypy
	.venv/bin/python -m pytest
	.venv-rllib/bin/python -m pytest tests/integrations/test_rllib.py tests/integrations/test_rllib_module.py tests/integrations/test_rllib_cluster.py
	.venv-clients/bin/python -m pytest tests/integrations/test_clients.py
	bash scripts/check_wheel.sh
	NO_MKDOCS_2_WARNING=1 .venv-docs/bin/mkdocs build --strict --quiet

docs: setup-docs
	NO_MKDOCS_2_WARNING=1 .venv-docs/bin/mkdocs build --strict
