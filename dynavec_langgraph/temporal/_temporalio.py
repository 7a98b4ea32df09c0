"""The ``temporal`` extra's presence, checked first by every module that imports Temporal.

Raises:
    MissingDependencyError: ``temporalio`` is not installed (``pip install
        'dynavec-langgraph[temporal]'``).
"""

from __future__ import annotations

from dynavec_langgraph._errors import install_command
from dynavec_langgraph._extras import missing_extra

try:
    import temporalio  # noqa: F401  (the extra's presence)
except ImportError as error:
    raise missing_extra(
        "dynavec_langgraph.temporal",
        "temporalio",
        "temporal",
        text="dynavec_langgraph.temporal needs temporalio, which the 'temporal' extra installs: "
        + install_command("temporal"),
    ) from error
