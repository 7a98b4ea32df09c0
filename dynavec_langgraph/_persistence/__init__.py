"""Persistence: dynavec's checkpoint records and checkpointers (``records``), DynamoDB
(``dynamodb``), the safe serializer (``serde``), the resume locks (``locks``), the one base of
the saver wrappers (``base``: ``DelegatingSaver``) and the wrappers (``history``, ``scratch``),
the LangGraph-saver adapter of a dynavec checkpointer (``adapter``) and the savers opened from a
connection string (``connections``). The public modules in front are
:mod:`dynavec_langgraph.checkpoint`, :mod:`dynavec_langgraph.dynamodb` and
:mod:`dynavec_langgraph.savers` (the one grammar of connection strings)."""
