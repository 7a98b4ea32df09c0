"""The remote agent's parts: ``RemoteReActAgent`` (``agent``) on the reads of a server's thread
(``reads``), what is sent (``requests``), what the server showed (``threads``), what a run
means (``runs``), expired approvals (``expiry``), the HTTP failures as the package's errors
(``errors``), the audit trail on a server (``audit``) and the inbox against a deployment
(``inbox``). The public module in front is :mod:`dynavec_langgraph.remote`."""
