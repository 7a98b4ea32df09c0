"""``ReActAgent`` (public as ``dynavec_langgraph.ReActAgent`` and ``dynavec_langgraph.agents``),
one module per part.

``core`` (the construction and what the doors share: the guard and the lock around a call, the
stream, the result), ``runs`` (``run`` / ``stream``: the thread read, checked and prepared under
its lock), ``resumes`` (``resume`` / ``stream_resume`` through the guarded resume, seeded from
messages or from a pause dynavec recorded), ``reads`` (the checkpoints as dynavec records, the
audit trail) and ``agent`` (``ReActAgent`` on those three). A sync door and its async twin
differ only in their I/O calls: the planning before and the finishing after are methods of
``core`` (or of the part) both call.
"""
