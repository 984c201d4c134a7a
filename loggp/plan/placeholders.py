"""`${...}` placeholders in the arguments of workloads and services (docs/experiments.md).

    ${point_dir}                 the point's directory (absolute)
    ${index} ${count} ${host}    in a service's args: its instance, how many, its host's address
    ${service.NAME.FIELD}        of instance 0 of service NAME, FIELD being `host` or a named
    ${service.NAME[I].FIELD}     group of that service's `ready` pattern; of instance I

They are checked when the experiment is loaded and filled in when a point starts.  `$$` is a
literal `$`; a `${` without its `}` is an error.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

_PLACEHOLDER = re.compile(r"\$\$|\$\{([^}]*)(\}?)")
_SERVICE = re.compile(r"service\.([A-Za-z0-9][A-Za-z0-9_.-]*?)(?:\[(\d+)\])?\.(\w+)")

POINT_NAMES = frozenset({"point_dir"})
INSTANCE_NAMES = frozenset({"index", "count", "host"})


def names_in(text: str) -> Iterator[str]:
    """The names of the placeholders of text, in order; ValueError for a `${` that is not
    closed."""
    for m in _PLACEHOLDER.finditer(text):
        if m.group(0) == "$$":
            continue
        if not m.group(2):
            raise ValueError(
                f"unterminated placeholder {m.group(0)[:40]!r} in {text[:60]!r}: expected "
                "${NAME} (write $$ for a literal $)"
            )
        yield m.group(1)


def service_ref(name: str) -> tuple[str, int, str] | None:
    """(service, instance, field) of a `service.NAME[I].FIELD` name, else None."""
    m = _SERVICE.fullmatch(name)
    return (m.group(1), int(m.group(2) or 0), m.group(3)) if m else None


def service_key(service: str, instance: int, field: str) -> str:
    """The key of a service's value in the mapping substitute() takes."""
    return f"service.{service}[{instance}].{field}"


def substitute(text: str, values: Mapping[str, str]) -> str:
    """text with every placeholder replaced; KeyError names one without a value."""

    def one(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        name = m.group(1)
        ref = service_ref(name)
        return values[service_key(*ref) if ref else name]

    return _PLACEHOLDER.sub(one, text)
