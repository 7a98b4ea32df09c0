"""The resume locks' old path: they live in :mod:`dynavec_langgraph._persistence.locks`."""

from __future__ import annotations

from dynavec_langgraph._persistence.locks import (
    LOCK_DIR_SUFFIX,
    AdaptsCheckpointer,
    OwnsAsyncResumeLock,
    OwnsResumeLock,
    WrapsSaver,
    aresume_lock,
    check_writable,
    resume_lock,
)

__all__ = [
    "LOCK_DIR_SUFFIX",
    "AdaptsCheckpointer",
    "OwnsAsyncResumeLock",
    "OwnsResumeLock",
    "WrapsSaver",
    "aresume_lock",
    "check_writable",
    "resume_lock",
]
