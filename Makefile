# The two commands of the README: `make main` and `make test`. Each sets everything up first.
.PHONY: setup main test

setup:
	bash scripts/setup.sh

main: setup
	.venv/bin/python scripts/main.py

test: setup
	.venv/bin/python -m pytest
