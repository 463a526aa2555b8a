#!/usr/bin/env bash
# Start (idempotently) what the tests talk to: PostgreSQL, RabbitMQ with AMQP 1.0, Azurite,
# Chromium for the dashboard's browser tests, and the tools that check deploy/ (promtool,
# systemd-analyze).
# Anything that cannot be started is reported; the tests skip it (or fail when CI=true).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_port() {  # port, seconds
    local i
    for ((i = 0; i < $2 * 4; i++)); do port_open "$1" && return 0; sleep 0.25; done
    return 1
}

if ! port_open 5432; then
    if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
        for v in /etc/postgresql/*; do
            pg_ctlcluster --skip-systemctl-redirect "$(basename "$v")" main start 2>/dev/null || true
        done
        wait_port 5432 20 || echo "services: PostgreSQL did not come up on 127.0.0.1:5432"
    else
        echo "services: PostgreSQL is not installed here"
    fi
fi

# The tests' database: `test`, reached as user postgres without a password over 127.0.0.1 (what
# tests/support.py uses unless HORARIUM_TEST_PG names another). Made here when it is missing and
# this runs as root (through the postgres account's local login); tests that cannot reach it are
# skipped with the reason (CI=true: they fail).
pg_test() { PGCONNECT_TIMEOUT=5 psql -w -h 127.0.0.1 -U postgres -d test -Atc 'SELECT 1' >/dev/null 2>&1; }
if [ -z "${HORARIUM_TEST_PG:-}" ] && port_open 5432 && command -v psql >/dev/null 2>&1 && ! pg_test; then
    if [ "$(id -u)" = 0 ] && id postgres >/dev/null 2>&1; then
        exists="$(su postgres -c "psql -Atc \"SELECT 1 FROM pg_database WHERE datname = 'test'\"" 2>/dev/null)"
        [ "$exists" = 1 ] || su postgres -c "createdb test" >/dev/null 2>&1 \
            || echo "services: could not create the PostgreSQL database 'test'"
    fi
    pg_test || echo "services: PostgreSQL on 127.0.0.1:5432 refuses user postgres without a" \
        "password, or has no database 'test': its tests will be skipped (set HORARIUM_TEST_PG)"
fi

# The test cluster keeps nothing through a power loss: no fsync, no waiting for the WAL at commit.
# Tests create and drop a database each; every DROP DATABASE forces a checkpoint, and with fsync
# on its sync stalled every commit for up to 2.4 s, so an engine's claim (a commit) started jobs a
# second late in tests that measure start times. Applied with a reload; a no-op once set.
pg_fast() {
    local setting
    for setting in "fsync off" "synchronous_commit off" "full_page_writes off"; do
        set -- $setting
        [ "$(psql -w -h 127.0.0.1 -U postgres -d test -Atc "SHOW $1" 2>/dev/null)" = "$2" ] \
            || psql -w -h 127.0.0.1 -U postgres -d test -qAtc "ALTER SYSTEM SET $1 = $2" >/dev/null
    done
    psql -w -h 127.0.0.1 -U postgres -d test -qAtc "SELECT pg_reload_conf()" >/dev/null
}
# Room for every test server at once: each keeps a pool of up to 30 connections, and six test
# processes with their servers and workers passed the default 100 ("too many clients"). The
# setting needs a restart, done once (only a cluster this script can restart: pg_ctlcluster).
CONNECTIONS=500
pg_connections() {
    local now v
    now="$(psql -w -h 127.0.0.1 -U postgres -d test -Atc "SHOW max_connections" 2>/dev/null)"
    [ -n "$now" ] && [ "$now" -ge "$CONNECTIONS" ] && return 0
    command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ] || return 1
    psql -w -h 127.0.0.1 -U postgres -d test -qAtc \
        "ALTER SYSTEM SET max_connections = $CONNECTIONS" >/dev/null || return 1
    for v in /etc/postgresql/*; do
        pg_ctlcluster --skip-systemctl-redirect "$(basename "$v")" main restart 2>/dev/null || true
    done
    wait_port 5432 20 && pg_test
}
if [ -z "${HORARIUM_TEST_PG:-}" ] && pg_test; then
    pg_fast || echo "services: could not set PostgreSQL's test settings (fsync off)"
    pg_connections || echo "services: could not raise PostgreSQL's max_connections to $CONNECTIONS"
fi

if command -v rabbitmq-plugins >/dev/null 2>&1; then
    if ! port_open 5672; then
        rabbitmq-server -detached >/dev/null 2>&1 || true
        wait_port 5672 60 || echo "services: RabbitMQ did not come up on 127.0.0.1:5672"
    fi
    # The AMQP 1.0 plugin; `enable` is a no-op when it is already on.
    if ! rabbitmq-plugins list -e 2>/dev/null | grep -q 'rabbitmq_amqp1_0'; then
        rabbitmq-plugins enable rabbitmq_amqp1_0 >/dev/null 2>&1 \
            || rabbitmq-plugins enable --offline rabbitmq_amqp1_0 >/dev/null 2>&1 \
            || echo "services: could not enable rabbitmq_amqp1_0"
    fi
else
    echo "services: RabbitMQ is not installed here"
fi

# Azurite (npm): installed into node_modules; the tests start it themselves on a free port.
if command -v npm >/dev/null 2>&1; then
    if [ ! -x "$root/node_modules/.bin/azurite-queue" ]; then
        (cd "$root" && npm install --no-audit --no-fund --silent >/dev/null 2>&1) \
            || echo "services: npm install of azurite failed"
    fi
else
    echo "services: npm is not installed here; Azurite tests will skip"
fi
# Chromium (Debian's package) for tests/ui, driven by Playwright; never `playwright install`,
# which downloads a browser of its own.
if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } \
            >/dev/null 2>&1 || echo "services: apt-get install chromium failed"
    fi
    command -v chromium >/dev/null 2>&1 \
        || echo "services: Chromium is not installed (as root: apt-get install chromium); the browser tests will skip"
fi
# promtool (Debian's prometheus package) checks deploy/prometheus's rules; systemd-analyze checks
# deploy/systemd's units. RUNLEVEL=1: the package's Prometheus server is installed, not started.
if ! command -v promtool >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        { apt-get update -qq && RUNLEVEL=1 DEBIAN_FRONTEND=noninteractive \
            apt-get install -y -qq prometheus; } >/dev/null 2>&1 \
            || echo "services: apt-get install prometheus (for promtool) failed"
    fi
    command -v promtool >/dev/null 2>&1 \
        || echo "services: promtool is not installed (as root: apt-get install prometheus); the rules tests will skip"
fi
command -v systemd-analyze >/dev/null 2>&1 \
    || echo "services: systemd-analyze is not installed (Debian's systemd package); the unit tests will skip"
exit 0
