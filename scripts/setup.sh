#!/usr/bin/env bash
# Create a venv with everything the project needs (idempotent: a second run only checks).
#   scripts/setup.sh         .venv: the package with its train, dev and render extras
#   scripts/setup.sh rllib   .venv-rllib: the rllib and dev extras (ray pins its own gymnasium)
#   scripts/setup.sh clients .venv-clients: the clients and dev extras (TorchRL, Tianshou, SuperSuit, SB3)
#   scripts/setup.sh docs    .venv-docs: the docs extra (mkdocs), for `make docs`; no torch
# torch==2.13.0 goes first: that CPU build lies on this machine's disk, and any other
# version would pull a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
case "${1:-main}" in
  main) venv=.venv extras=train,dev,render torch=yes ;;
  rllib) venv=.venv-rllib extras=rllib,dev torch=yes ;;
  clients) venv=.venv-clients extras=clients,dev torch=yes ;;
  docs) venv=.venv-docs extras=docs torch=no ;;
  *) echo "usage: $0 [main|rllib|clients|docs]" >&2; exit 2 ;;
esac
stamp=$venv/.setup-stamp
want=$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
[ -x $venv/bin/python ] || "$PYTHON" -m venv $venv
$venv/bin/python -m pip install --quiet --upgrade pip
[ "$torch" = no ] || $venv/bin/python -m pip install --quiet torch==2.13.0
$venv/bin/python -m pip install --quiet -e ".[$extras]"
echo "$want" > "$stamp"
