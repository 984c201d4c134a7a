"""Typed errors of the report.

Every failure the report can expect (a missing or unreadable run directory, a results
database without points, an output directory that cannot be written) is a ReportError whose
message is one line naming the file; the CLI prints it and exits non-zero.
"""

from __future__ import annotations


class ReportError(Exception):
    """The report cannot be made; the message is one line naming the file concerned."""
