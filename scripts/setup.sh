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
    venv_python="$root/.venv/bin/python"
    spec="$root"
    [ -n "$extras" ] && spec="$root[$extras]"
    # uv resolves and installs the same packages as pip in seconds instead of a minute; it does
    # not read pip's configuration (a private index, find-links), so where it fails, pip does
    # the install as before.
    if ! { "$venv_python" -m pip install --quiet --disable-pip-version-check uv &&
        "$venv_python" -m uv pip install --quiet --python "$venv_python" -e "$spec"; }; then
        echo "setup: uv could not install; installing with pip" >&2
        "$venv_python" -m pip install --quiet --disable-pip-version-check --upgrade pip
        "$venv_python" -m pip install --quiet --disable-pip-version-check -e "$spec"
    fi
    echo "$want" > "$stamp"
fi
