"""The AG-UI app's parts: the event stream (``events``), each pause as an AG-UI interrupt
(``pauses``), a resume's entries as decisions (``decisions``), the run and the ASGI app
(``app``). The public module in front is :mod:`dynavec_langgraph.agui`.

Needs the ``agui`` extra (``ag-ui-protocol``, ``starlette``): without it, importing any part
raises ``MissingDependencyError`` naming the extra.
"""

from __future__ import annotations

import importlib

from dynavec_langgraph._extras import missing_extra

_NEEDED = (
    "ag_ui.core",
    "ag_ui.core.events",
    "ag_ui.encoder",
    "starlette.applications",
    "starlette.requests",
    "starlette.responses",
    "starlette.routing",
)
"""The modules of the extra the parts import."""

for _module in _NEEDED:
    try:
        importlib.import_module(_module)
    except ImportError as error:  # pragma: no cover - exercised by tests/test_release.py
        raise missing_extra(
            "dynavec_langgraph.agui", error.name or "ag-ui-protocol", "agui"
        ) from error
