"""Approvals outside the graph: the inbox and signed approval links."""
