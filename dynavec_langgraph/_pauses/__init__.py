"""The pauses: ``interrupt()``'s value, ask loop, decisions and review digest,
``require_approval`` and the approval policies."""
