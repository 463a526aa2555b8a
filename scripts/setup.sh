#!/usr/bin/env bash
# Idempotent setup: a virtual environment in .venv with Horarium installed (editable).
# Sourced by scripts/serve and scripts/test. EXTRAS=test also installs the test dependencies.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="${PYTHON:-python3}"
if [ ! -x "$root/.venv/bin/python" ]; then
    "$py" -m venv "$root/.venv"
fi
extras="${EXTRAS:-}"
stamp="$root/.venv/.horarium-installed${extras:+-$extras}"
want="$(cat "$root/pyproject.toml" | sha256sum | cut -c1-16)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    "$root/.venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
    spec="$root"
    [ -n "$extras" ] && spec="$root[$extras]"
    "$root/.venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$spec"
    echo "$want" > "$stamp"
fi
