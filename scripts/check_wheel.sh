#!/usr/bin/env bash
# Build the sdist and the wheel, install the wheel (not editable, no extras) into a clean
# venv, and run scripts/wheel_smoke.py from outside the source tree: what a user of
# `pip install concentration-env` gets. Run by `make test`; needs .venv (for `build`).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=$(mktemp -d)  # the clean venv and the working folder both lie outside the source tree
trap 'rm -rf "$work"' EXIT
rm -rf dist
.venv/bin/python -m build --sdist --wheel --outdir dist . > /dev/null
tar -tzf dist/concentration_env-*.tar.gz | grep "concentration_env/presets/standard.yaml" > /dev/null
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --upgrade pip
"$work/venv/bin/python" -m pip install --quiet dist/concentration_env-*.whl
cd "$work"
"$work/venv/bin/python" "$root/scripts/wheel_smoke.py" "$root"
