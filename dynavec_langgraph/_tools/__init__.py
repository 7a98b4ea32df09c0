"""The package's tools: :class:`~.agent_tool.AgentTool` (a dynavec tool that is also a LangChain
tool) and ``@tool``, one concern a module.

``calls`` (what a call takes and gives: the argument rules, the observations of errors),
``schemas`` (the arguments' JSON schema from a function's signature), ``agent_tool``
(``AgentTool``, ``@tool`` and its options, the agent's run around a call), ``adapters`` (the
``tools=`` entries as ``AgentTool``\\ s: LangChain tools, dynavec-style objects, functions;
``as_tools``, ``executable``), ``policies`` (the agent's ``approval_policy=`` attached to its
tools, checked when the agent is built).
"""
