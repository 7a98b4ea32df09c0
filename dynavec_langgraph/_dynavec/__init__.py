"""The dynavec compatibility annex: dynavec's records, memory, planner, supervisor, tool
registry and connectors, and the conversion of its messages to LangChain's and back.

Its public import paths (``dynavec_langgraph.records``, ``.memory``, ``.planner``,
``.supervisor``, ``.registry``, ``.connectors``) are thin faces over these modules.
"""
