"""Client request ids: random UUID4 strings, one per attempt.

`str(uuid.uuid4())` makes a system call (os.urandom) and a UUID object per attempt; here the
randomness is read 256 ids at a time and formatted directly. Same form, same source.
"""

from __future__ import annotations

import os

_BATCH = 256
_pool = memoryview(b"")


def _forget() -> None:
    global _pool
    _pool = memoryview(b"")  # a forked child must not reuse its parent's randomness


os.register_at_fork(after_in_child=_forget)


def request_id() -> str:
    """A random (version 4) UUID in its 36-character form, as `str(uuid.uuid4())`."""
    global _pool
    if len(_pool) < 16:
        _pool = memoryview(os.urandom(16 * _BATCH))
    raw, _pool = bytearray(_pool[:16]), _pool[16:]
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
