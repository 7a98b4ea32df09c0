"""The AG-UI app's parts: the event stream (``events``), each pause as an AG-UI interrupt
(``pauses``), a resume's entries as decisions (``decisions``), the run and the ASGI app
(``app``). The public module in front is :mod:`dynavec_langgraph.agui`.

Needs the ``agui`` extra (``ag-ui-protocol``, ``starlette``): every part imports ``extra``
first, which raises ``MissingDependencyError`` naming the extra when it is missing.
"""
