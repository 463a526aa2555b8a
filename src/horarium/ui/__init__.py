"""The web dashboard (`/ui`) and the API explorer (`/docs`): files that ship inside the package,
so both work on a host without Internet access. See docs/ui.md."""

from horarium.ui.assets import install

__all__ = ["install"]
