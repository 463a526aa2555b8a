"""The way in without a clone: the wheel built from this tree, installed in a fresh virtual
environment and started outside the repository, serves the API, its description and the
dashboard (the migrations, the OpenAPI document and the dashboard's files travel in it), and its
description speaks to someone who installed it with pip."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from horarium import __version__
from tests.server_process import LOOPBACK_ONLY
from tests.support import free_port, wait_until

ROOT = Path(__file__).parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dist = tmp_path_factory.mktemp("dist")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    [found] = dist.glob("horarium-*.whl")
    return found


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment holding the wheel; its dependencies are this environment's
    (a `.pth` file points at them), so nothing is downloaded and the package itself can only
    come from the wheel."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(site, "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [str(python), "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)],
        check=True,
        timeout=300,
    )
    return venv


def test_the_wheel_carries_the_files_the_service_reads(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in (
        "horarium/store/core/migrations/env.py",
        "horarium/store/core/migrations/versions/0010_node_revision_and_clock.py",
        "horarium/api/scheduler-2016-03-01.json",
        "horarium/py.typed",
    ):
        assert needed in names
    assert any(name.startswith("horarium/ui/static/") for name in names)


def test_the_package_description_speaks_to_a_pip_user(wheel: Path) -> None:
    [metadata] = [n for n in zipfile.ZipFile(wheel).namelist() if n.endswith("/METADATA")]
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    assert f"Version: {__version__}" in text
    assert "pip install horarium-" in text and "horarium serve" in text
    assert "./scripts/" not in text  # a clone's commands, which a pip user does not have


@pytest.fixture
def served(installed: Path, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """`horarium serve` of the fresh environment, started in an empty folder."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    log = tmp_path / "serve.log"
    with log.open("ab") as out:
        process = subprocess.Popen(
            [str(installed / "bin" / "horarium"), "serve", "--port", str(port)],
            cwd=tmp_path,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**env, "PYTHONUNBUFFERED": "1", **LOOPBACK_ONLY},
        )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: "Horarium listening on" in log.read_text(), "the server to start")
        token = (tmp_path / "horarium-data" / "admin-token").read_text().strip()
        yield base, token
    finally:
        process.terminate()
        assert process.wait(timeout=30) == 0, log.read_text()


def test_the_installed_package_serves_outside_the_repository(
    installed: Path, served: tuple[str, str]
) -> None:
    where = subprocess.run(
        [str(installed / "bin" / "python"), "-c", "import horarium; print(horarium.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=installed,
    ).stdout
    assert where.startswith(str(installed)), where  # the wheel's copy, not the source tree
    base, token = served
    auth = {"Authorization": f"Bearer {token}"}
    collection = (
        f"{base}/subscriptions/s1/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c1"
    )
    api = {"api-version": "2016-03-01"}
    with httpx.Client(headers=auth, timeout=15) as http:
        body = {"location": "West US", "properties": {"sku": {"name": "Standard"}}}
        assert http.put(collection, params=api, json=body).status_code == 201
        action = {"type": "Http", "request": {"uri": "https://example.com/", "method": "GET"}}
        job = {"properties": {"action": action, "recurrence": {"frequency": "Day"}}}
        assert http.put(f"{collection}/jobs/j1", params=api, json=job).status_code == 201
        assert http.get(f"{collection}/jobs/j1", params=api).json()["name"] == "c1/j1"
        assert http.get(f"{base}/openapi.json").status_code == 200
        home = http.get(f"{base}/", follow_redirects=True)
        assert home.status_code == 200 and "<html" in home.text.lower()
