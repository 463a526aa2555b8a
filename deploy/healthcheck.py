#!/opt/horarium/bin/python
"""The container image's HEALTHCHECK: GET /healthz of the Horarium process in this container.

`serve`: its API (`--port`, https when `--ssl-certfile` is set). `worker`: its `--metrics-port`
listener (plain http); a worker without one has no HTTP listener, so there is nothing to probe
and the check passes. Options are read as the process reads them: from its command line
(/proc/1/cmdline), else from HORARIUM_<OPTION>. The request goes to 127.0.0.1 (or to the bind
address when it is not a wildcard) with a Host header the service answers: the first of
`--allowed-hosts` when they are given (they replace the default names), else the address.
Exit code 0: healthy; 1: not (the reason on stdout, which `docker inspect` shows)."""

from __future__ import annotations

import os
import ssl
import sys
import urllib.error
import urllib.request

WILDCARDS = ("", "0.0.0.0", "::", "[::]")


def command_line() -> list[str]:
    try:
        with open("/proc/1/cmdline", "rb") as f:
            return f.read().decode(errors="replace").split("\0")
    except OSError:
        return []


def option(args: list[str], name: str) -> str | None:
    """The last `--name VALUE` / `--name=VALUE` of `args`, else HORARIUM_<NAME>."""
    value = None
    for i, arg in enumerate(args):
        if arg == f"--{name}" and i + 1 < len(args):
            value = args[i + 1]
        elif arg.startswith(f"--{name}="):
            value = arg.partition("=")[2]
    if value is None:
        value = os.environ.get("HORARIUM_" + name.upper().replace("-", "_")) or None
    return value


def main() -> int:
    args = command_line()
    worker = "worker" in args[1:] and "serve" not in args[1:]
    if worker:
        port = option(args, "metrics-port")
        if port is None:
            print("a worker without --metrics-port has no HTTP listener: nothing to probe")
            return 0
        scheme, bind = "http", option(args, "metrics-host") or "127.0.0.1"
    else:
        port = option(args, "port") or "8080"
        scheme = "https" if option(args, "ssl-certfile") else "http"
        bind = option(args, "host") or "127.0.0.1"
    address = "127.0.0.1" if bind in WILDCARDS else bind
    if ":" in address and not address.startswith("["):
        address = f"[{address}]"
    allowed = (option(args, "allowed-hosts") or "").split(",")[0].strip()
    request = urllib.request.Request(f"{scheme}://{address}:{port}/healthz")
    if allowed:
        request.add_header("Host", f"{allowed}:{port}")
    context = None
    if scheme == "https":  # the certificate names the public host, not 127.0.0.1
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    try:
        with urllib.request.urlopen(request, timeout=4, context=context) as response:
            if response.status == 200:
                return 0
            print(f"{request.full_url}: HTTP {response.status}")
    except urllib.error.HTTPError as e:
        print(f"{request.full_url}: HTTP {e.code} {e.read(300).decode(errors='replace')}")
    except OSError as e:
        print(f"{request.full_url}: {e}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
