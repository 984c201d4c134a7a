"""libfabric providers: whether one is found on this machine, asked of fi_info
(libfabric-bin) before anything runs, so a misspelt provider is one line naming what is
available instead of a failure at every point."""

from __future__ import annotations

import shutil

from loggp.errors import LoggpError
from loggp.run.proc import run_capture

FI_INFO_TIMEOUT_S = 30.0


class ProviderError(LoggpError):
    """The provider asked for is not one libfabric finds here."""

    exit_code = 2


def available_providers() -> list[str]:
    """The providers fi_info lists here (each layering once), in its order."""
    out = run_capture(["fi_info"], FI_INFO_TIMEOUT_S) or ""
    names = [ln.split(":", 1)[1].strip() for ln in out.splitlines() if ln.startswith("provider:")]
    return list(dict.fromkeys(names))


def check_provider(provider: str, what: str) -> None:
    """ProviderError naming what (the option or key) and the providers available, unless
    `fi_info -p provider` finds it; nothing to check without fi_info."""
    if shutil.which("fi_info") is None:
        return
    if run_capture(["fi_info", "-p", provider], FI_INFO_TIMEOUT_S) is not None:
        return
    available = ", ".join(available_providers()) or "none"
    raise ProviderError(
        f"bad {what} '{provider}': fi_info -p finds no such libfabric provider here "
        f"(available: {available})"
    )
