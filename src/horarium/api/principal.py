"""Who is calling: the authenticated caller of a management request, and what it may do."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Role(StrEnum):
    READER = "reader"  # may GET and list (and preview upcoming executions)
    CONTRIBUTOR = "contributor"  # may also write, run, enable and disable


ALL_SUBSCRIPTIONS = "*"


@dataclass(frozen=True)
class Principal:
    """An authenticated caller: an API key (by its name) or an OpenID Connect token (by its
    subject), scoped to subscriptions (ALL_SUBSCRIPTIONS in `subscriptions`: every one)."""

    name: str
    subscriptions: frozenset[str]  # lower-cased subscription ids, or {"*"}
    role: Role

    def reaches(self, subscription: str) -> bool:
        """Whether the caller may see `subscription`'s resources at all."""
        return ALL_SUBSCRIPTIONS in self.subscriptions or subscription.lower() in self.subscriptions

    @property
    def may_write(self) -> bool:
        return self.role is Role.CONTRIBUTOR


class AuthenticationError(Exception):
    """The credential is missing, malformed, unknown, expired or not valid; the text says which
    (it never repeats the credential)."""
