"""The one home of the "missing extra" error: a feature whose optional dependencies are not
installed raises :func:`missing_extra`'s error, which names the extra to install
(``_errors.install_command``: ``pip install 'dynavec-langgraph[sqlite]'``).

The error is a :class:`~dynavec_langgraph.exceptions.MissingDependencyError` (an
``ImportError``, with ``feature``, ``package`` and ``extra``), worded as dynavec words it
unless the caller says more (what works without the extra).
"""

from __future__ import annotations

from dynavec_langgraph._errors import install_command
from dynavec_langgraph.exceptions import MissingDependencyError

__all__ = ["missing_extra", "missing_package"]


def missing_package(error: ImportError, default: str, *named: str) -> str:
    """The package to name for ``error``: the one of ``named`` that is missing (an import
    module's top-level name, ``psycopg``), else ``default`` (``langgraph-checkpoint-postgres``).

    Example:
        >>> error = ImportError(name="psycopg.rows")
        >>> missing_package(error, "langgraph-checkpoint-postgres", "psycopg")
        'psycopg'
    """
    missing = (error.name or "").split(".")[0]
    return missing if missing in named else default


def missing_extra(
    feature: str, package: str, extra: str, *, text: str | None = None
) -> MissingDependencyError:
    """The error for ``feature``, which needs ``package`` from the extra ``extra``.

    Args:
        feature: what was used (``"DynamoDBCheckpointer"``, ``"middleware="``).
        package: the package that is missing (``"boto3"``).
        extra: the extra that installs it (``"dynamodb"``).
        text: the message, when it says more than dynavec's wording (it names
            ``install_command``'s command).

    Example:
        >>> error = missing_extra("DynamoDBCheckpointer", "boto3", "dynamodb")
        >>> isinstance(error, ImportError), error.extra
        (True, 'dynamodb')
        >>> str(error).endswith(install_command("dynamodb"))
        True
    """
    error = MissingDependencyError(feature, package, extra)
    if text is not None:
        if install_command(extra) not in text:
            raise ValueError(f"the text of a missing extra names {install_command(extra)!r}")
        error.args, error.msg = (text,), text  # ImportError's str() is its msg
    return error
