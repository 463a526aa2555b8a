"""Azure region names: the live service answered a PUT with `"westus"` with `"West US"`."""

from __future__ import annotations

_DISPLAY = [
    "East US", "East US 2", "West US", "West US 2", "West US 3", "Central US",
    "North Central US", "South Central US", "West Central US", "Canada Central", "Canada East",
    "Brazil South", "North Europe", "West Europe", "UK South", "UK West", "France Central",
    "Germany West Central", "Switzerland North", "Norway East", "Sweden Central",
    "Poland Central", "Italy North", "East Asia", "Southeast Asia", "Japan East", "Japan West",
    "Korea Central", "Korea South", "Central India", "South India", "West India",
    "Australia East", "Australia Southeast", "Australia Central", "South Africa North",
    "UAE North", "Qatar Central", "Israel Central", "Mexico Central",
]  # fmt: skip
_BY_KEY = {name.replace(" ", "").lower(): name for name in _DISPLAY}


def display_name(location: str) -> str:
    """`westus` / `West US` / `WESTUS` -> `West US`; unknown names are kept as given."""
    return _BY_KEY.get(location.replace(" ", "").lower(), location)
