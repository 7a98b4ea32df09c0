"""A module a crafted checkpoint points at: importing it or calling ``Gadget`` is observable.

Only the permissive control in ``tests/test_safe_loading.py`` may ever import it.
"""

from __future__ import annotations

from typing import Any, ClassVar


class Gadget:
    """Counts its constructions (class attribute ``calls``)."""

    calls: ClassVar[int] = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        type(self).calls += 1
        self.args = args
        self.kwargs = kwargs
