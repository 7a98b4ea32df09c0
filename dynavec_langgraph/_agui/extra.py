"""The ``agui`` extra's presence, checked first by every part of the AG-UI app.

Raises:
    MissingDependencyError: ``ag-ui-protocol`` or ``starlette`` is not installed (``pip install
        'dynavec-langgraph[agui]'``).
"""

from __future__ import annotations

from dynavec_langgraph._extras import missing_extra

try:  # the modules of the extra the parts import
    import ag_ui.core
    import ag_ui.core.events
    import ag_ui.encoder  # noqa: F401
    import starlette.applications
    import starlette.requests
    import starlette.responses
    import starlette.routing  # noqa: F401
except ImportError as error:  # pragma: no cover - exercised by tests/test_release.py
    raise missing_extra("dynavec_langgraph.agui", error.name or "ag-ui-protocol", "agui") from error
