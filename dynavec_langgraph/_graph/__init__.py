"""The agent's graph: its state, spec, nodes, routes and tool call,
and the factory that builds and compiles it."""
