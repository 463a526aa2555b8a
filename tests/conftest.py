"""Test-wide setup: the network rule holds (tests connect only to loopback:
tests/loopback_only.py); httpx clients share their default TLS context (tests/shared_tls.py);
the slowest modules are marked `slow` and run first, waiting and busy ones in turn, with quick
modules queued behind them (tests/scheduling.py); `long_fuzz` runs only when asked for
(docs/testing.md)."""

import itertools
import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests import loopback_only, shared_tls

loopback_only.install()
shared_tls.install()

# Seconds of the slowest modules, slowest first: the larger of a one-process measurement
# (`--durations`, CI=true) and the module's sum in a whole parallel run (`--durations=0`).
# Under pytest-xdist (`--dist loadfile --no-loadscope-reorder`) the run takes the order
# `run_order` makes of them, so the longest files start at once instead of ending the run alone.
# Re-measure when a module's time changes much (docs/testing.md, "Keeping it quick").
MODULE_SECONDS = {
    "tests/engine/test_service_realtime.py": 140,
    "tests/engine/test_chaos.py": 126,
    "tests/engine/test_cluster_stress.py": 119,
    "tests/engine/test_overlap_cluster.py": 112,
    "tests/api/test_api_fuzz_postgres.py": 102,
    "tests/engine/test_failover.py": 77,
    "tests/ui/test_dashboard_screenshots.py": 77,
    "tests/api/test_api_fuzz.py": 71,
    "tests/api/test_api_monitors.py": 60,
    "tests/security/test_secret_keys.py": 60,
    "tests/engine/test_database_outage.py": 58,
    "tests/ui/test_dashboard_browser.py": 54,
    "tests/api/test_api_jitter_engine.py": 52,
    "tests/engine/test_fairness.py": 50,
    "tests/ops/test_backup_cli.py": 46,
    "tests/api/test_api_sdk.py": 42,
    "tests/security/test_secret_rotation.py": 42,
    "tests/engine/test_clock_skew.py": 41,
    "tests/engine/test_monitor_cluster.py": 40,
    "tests/ops/test_backup_restore.py": 40,
    "tests/ops/test_wheel_install.py": 40,
    "tests/api/test_api_notifications.py": 34,
    "tests/ops/test_database_partition.py": 32,
    "tests/engine/test_queue_actions.py": 28,
    "tests/api/test_api_backoff_and_templates.py": 27,
    "tests/engine/test_cluster_wake.py": 27,
    "tests/ui/test_dashboard_fixes.py": 27,
    "tests/api/test_api_timeline.py": 25,
    "tests/security/test_api_keys_cli.py": 25,
    "tests/security/test_authentication.py": 25,
    "tests/engine/test_deadline_cluster.py": 24,
    "tests/cli/test_cli_export_import.py": 23,
    "tests/ops/test_startup_errors.py": 23,
    "tests/api/test_api_channels.py": 22,
    "tests/api/test_api_deadlines.py": 21,
    "tests/ops/test_health_probes.py": 21,
    "tests/engine/test_version_skew.py": 20,
    "tests/ops/test_engine_log_lines.py": 18,
    "tests/engine/test_notification_cluster.py": 17,
    "tests/upgrade/test_upgrade.py": 17,
    "tests/security/test_slow_headers.py": 14,
    "tests/security/test_secrets_at_rest.py": 13,
    "tests/api/test_api_validation.py": 12,
    "tests/engine/test_recovery.py": 12,
    "tests/security/test_first_start.py": 12,
    "tests/test_store_query_plans.py": 12,
    "tests/ui/test_dashboard_timeline.py": 12,
    "tests/ops/test_metrics_endpoint.py": 11,
    "tests/api/test_api_restart.py": 10,
    "tests/engine/test_worker.py": 10,
    "tests/ops/test_worker_metrics.py": 10,
    "tests/recurrence/test_recurrence_cron.py": 10,
    "tests/security/test_exposure.py": 10,
    "tests/security/test_fair_use.py": 10,
    "tests/api/test_api_calendars.py": 9,
    "tests/engine/test_executions.py": 9,
    "tests/security/test_input_hygiene.py": 9,
    "tests/api/test_api_recordings.py": 8,
    "tests/cli/test_cli_timeline.py": 8,
    "tests/ops/test_json_logs.py": 8,
    "tests/security/test_secret_masking.py": 8,
    "tests/ui/test_dashboard_endpoints.py": 8,
    "tests/api/test_api_execution_policy.py": 7,
    "tests/api/test_api_pause.py": 7,
    "tests/api/test_api_quotas.py": 7,
    "tests/cli/test_cli_export_calendars.py": 7,
    "tests/ops/test_policy_metrics.py": 7,
    "tests/api/test_api_jobs.py": 6,
    "tests/cli/test_cli_connection.py": 6,
    "tests/cli/test_cli_import_arm.py": 6,
    "tests/engine/test_execution_policy.py": 6,
    "tests/ops/test_disk_full.py": 6,
    "tests/ops/test_service_units.py": 6,
    "tests/recurrence/test_recurrence_properties.py": 6,
    "tests/security/test_oidc_through_serve.py": 6,
    "tests/security/test_request_framing.py": 6,
    "tests/actions/test_servicebus_action.py": 5,
    "tests/cli/test_cli_import_functions.py": 5,
    "tests/recurrence/test_recurrence_cli.py": 5,
    "tests/security/test_dashboard_access.py": 5,
    "tests/security/test_outbound_policy.py": 5,
    "tests/test_store_migrations.py": 5,
}
# A module at least this slow is left out of the quick tier (`-m "not slow"`).
SLOW_SECONDS = 5
SLOW_MODULES = frozenset(m for m, seconds in MODULE_SECONDS.items() if seconds >= SLOW_SECONDS)

# The slow modules that keep about a third of a core or more busy while they run (their
# processes' CPU over their time: Chromium, the fuzzers, building a wheel); the others mostly
# wait on servers, timers and worker processes.
BUSY_MODULES = frozenset(
    {
        "tests/ui/test_dashboard_screenshots.py",
        "tests/ui/test_dashboard_browser.py",
        "tests/ui/test_dashboard_fixes.py",
        "tests/api/test_api_fuzz_postgres.py",
        "tests/api/test_api_fuzz.py",
        "tests/ops/test_wheel_install.py",
    }
)


def run_order(seconds: dict[str, float], busy: frozenset[str]) -> list[str]:
    """The modules of `seconds`, each list slowest first, taken in turn from the waiting ones and
    the `busy` ones: the long modules that mostly wait start beside modules that keep the CPUs
    working, instead of six waiting modules leaving them idle for the first minutes."""
    by_time = sorted(seconds, key=lambda module: -seconds[module])
    waiting = [m for m in by_time if m not in busy]
    working = [m for m in by_time if m in busy]
    order: list[str] = []
    for pair in itertools.zip_longest(waiting, working):
        order.extend(m for m in pair if m is not None)
    return order


RANK = {module: rank for rank, module in enumerate(run_order(MODULE_SECONDS, BUSY_MODULES))}


def _module(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks the slow modules, puts them first in `RANK`'s order (the others keep theirs), and
    leaves out what `_left_out` says."""
    for item in items:
        if _module(item) in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: RANK.get(_module(item), len(RANK)))
    _keep(config, items, lambda item: not _left_out(config, item))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under `--dist loadfile`, xdist's scheduling with quick modules queued behind slow ones
    (tests/scheduling.py); any other mode as xdist has it."""
    if config.getvalue("dist") != "loadfile":
        return None
    from tests.scheduling import QuickBehindSlow

    return QuickBehindSlow(config, log, SLOW_MODULES)


def _left_out(config: pytest.Config, item: pytest.Item) -> bool:
    """`long_fuzz` unless `-m` names it; under `HORARIUM_TEST_PHASE`, the other phase's tests
    (`parallel`: all but the `alone` ones; `alone`: those only)."""
    if item.get_closest_marker("long_fuzz") and "long_fuzz" not in (
        config.getoption("markexpr") or ""
    ):
        return True
    phase = os.environ.get("HORARIUM_TEST_PHASE")
    alone = item.get_closest_marker("alone") is not None
    return (phase == "parallel" and alone) or (phase == "alone" and not alone)


def _keep(
    config: pytest.Config, items: list[pytest.Item], kept: Callable[[pytest.Item], bool]
) -> None:
    left_out = [item for item in items if not kept(item)]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if kept(item)]


@pytest.fixture(autouse=True)
def _only_loopback_traffic() -> Iterator[None]:
    """Fails the test that tried to connect off loopback, even when its code caught the error."""
    before = len(loopback_only.refused)
    yield
    tried = loopback_only.refused[before:]
    assert not tried, f"this test tried to connect off loopback: {tried}"
