"""Resume locks: at most one resume of a paused thread at a time.

``ReActAgent.resume``/``aresume`` read the paused thread, take its resume lock, read it again
(refusing if it moved) and only then apply the decision. The lock never waits: if another
caller holds it, :class:`~dynavec_langgraph._errors.ConcurrentResumeError` is raised at once,
before anything runs or is written. So when two people answer the same pause at the same time,
exactly one decision is applied and the approved tool runs once; the other caller gets
``ConcurrentResumeError`` (or ``NothingToResumeError`` if it came after the first finished).

What the lock relies on, per saver:

* every saver: an in-process lock keyed by the saver object and the thread id (threads and
  asyncio tasks of one process sharing one saver).
* ``SqliteSaver`` / ``AsyncSqliteSaver`` on a file: in addition, ``flock(LOCK_EX | LOCK_NB)``
  on a per-thread lock file in ``<database>.resume-locks/`` beside the database (found with
  ``PRAGMA database_list``); the holder removes the file, and the folder once empty, when it
  is done, so nothing piles up beside the database. It covers every process on the machine
  that opens the same file, through any saver object; the kernel releases it when a process
  dies. It does not cover a
  database on a network file system whose ``flock`` is not shared between machines.
  ``:memory:`` databases get the in-process lock only (nothing else can see them).
* ``PostgresSaver`` / ``AsyncPostgresSaver``: in addition, a session-level
  ``pg_try_advisory_lock`` on a 64-bit hash of the thread id, held on a dedicated connection
  (from the saver's pool when it has one with room to spare, else a new connection with the
  saver's connection parameters) and released right after. It covers every process and machine
  using that database; if the holder crashes, its session ends and the server releases the lock.
  A lock taken while another one of the same saver is held in this context (a resumed call's
  claim inside a door's thread lock) is taken on that session, not on another connection.
* ``InMemorySaver`` and any other saver: the in-process lock only (which is all that can see
  them unless the saver is shared some other way).
* A saver wrapping another is locked as the saver it wraps. The package's wrappers
  (``HistoryCache``, ``ScratchThreads``, ``ConnectionSaver``) declare it: they are
  :class:`WrapsSaver` (``wrapped_saver``). A wrapper that is not the package's and declares
  nothing is locked as the LangGraph saver its ``inner``, ``saver`` or ``wrapped`` attribute
  holds, if any (:func:`~dynavec_langgraph._persistence.kinds.stored_in`; ``saver_kind``
  there tells LangGraph's SQLite and PostgreSQL savers apart). A ``DynavecCheckpointSaver``
  (a dynavec checkpointer adapted) declares the checkpointer it stores in
  (:class:`AdaptsCheckpointer`, ``lock_owner``): the in-process lock is keyed by it, so
  agents sharing one checkpointer share it; a dynavec checkpointer shared between processes
  is not locked across them, unless it has ``resume_lock(thread_id)`` /
  ``aresume_lock(thread_id)`` context managers of its own (:class:`OwnsResumeLock`):
  ``DynamoDBCheckpointer`` does (a conditional write, across processes and machines).
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import os
import threading
import weakref
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import (
    AbstractAsyncContextManager,
    AbstractContextManager,
    AsyncExitStack,
    ExitStack,
    asynccontextmanager,
    contextmanager,
    suppress,
)
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, cast, overload, runtime_checkable

from dynavec_langgraph._errors import ConcurrentResumeError, StorageError
from dynavec_langgraph._persistence.kinds import (
    WrapsSaver,
    is_instance_of,
    saver_kind,
    stored_in,
)

if TYPE_CHECKING:
    from typing import TypeAlias, TypeGuard

    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    from psycopg_pool import AsyncConnectionPool, ConnectionPool
    from typing_extensions import TypeIs

    from dynavec_langgraph._types import Saver

    _Conn: TypeAlias = psycopg.Connection[Any]
    """A psycopg connection (its row type is the caller's)."""
    _AConn: TypeAlias = psycopg.AsyncConnection[Any]
    """A psycopg async connection (its row type is the caller's)."""
    _PgSource: TypeAlias = _Conn | _AConn | ConnectionPool[_Conn] | AsyncConnectionPool[_AConn]
    """What a PostgreSQL saver's ``conn`` holds: a connection or a pool, sync or async."""
    _PgConn: TypeAlias = _Conn | _AConn

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

LOCK_DIR_SUFFIX: Final = ".resume-locks"
"""SQLite lock files live in ``<database file><LOCK_DIR_SUFFIX>/``."""


@runtime_checkable
class AdaptsCheckpointer(Protocol):
    """A saver that stores in a dynavec checkpointer, which it declares
    (``DynavecCheckpointSaver``): the in-process lock is keyed by that checkpointer, and its
    own resume lock (:class:`OwnsResumeLock`) is taken when it has one."""

    @property
    def lock_owner(self) -> object:
        """The dynavec checkpointer the saver stores in."""
        ...


@runtime_checkable
class OwnsResumeLock(Protocol):
    """A dynavec checkpointer with a resume lock of its own, across processes and machines
    (``DynamoDBCheckpointer``); its async twin is :class:`OwnsAsyncResumeLock`."""

    def resume_lock(self, thread_id: str) -> AbstractContextManager[None]:
        """Hold the lock of ``thread_id``; raise ``ConcurrentResumeError`` when it is held."""
        ...


@runtime_checkable
class OwnsAsyncResumeLock(Protocol):
    """The async twin of :class:`OwnsResumeLock`."""

    def aresume_lock(self, thread_id: str) -> AbstractAsyncContextManager[None]:
        """Hold the lock of ``thread_id``; raise ``ConcurrentResumeError`` when it is held."""
        ...


_KEY_PREFIX: Final = b"dynavec_langgraph.resume:"

_registry_guard = threading.Lock()
_held: set[tuple[int, str]] = set()


def _busy(thread_id: str) -> ConcurrentResumeError:
    return ConcurrentResumeError(
        f"another caller is running or resuming thread {thread_id!r} right now; nothing was "
        "done here (no decision applied, no tool run). Wait for it to finish, then read the "
        "thread again before deciding"
    )


def _identity(saver: object) -> object:
    """What the in-process lock is keyed by: the dynavec checkpointer of an adapter."""
    return saver.lock_owner if isinstance(saver, AdaptsCheckpointer) else saver


# --- in process -------------------------------------------------------------------------


@contextmanager
def _in_process(saver: object, thread_id: str) -> Iterator[None]:
    """Never blocks (the guard is held for a set lookup), so async callers use it too."""
    key = (id(saver), thread_id)
    with _registry_guard:
        if key in _held:
            raise _busy(thread_id)
        _held.add(key)
    try:
        yield
    finally:
        with _registry_guard:
            _held.discard(key)


# --- SQLite: flock on a lock file beside the database -----------------------------------


def _main_file(rows: Sequence[Sequence[object]]) -> str | None:
    """The ``main`` database file of ``PRAGMA database_list`` rows; None for ``:memory:``."""
    for row in rows:
        if row[1] == "main":
            return str(row[2]) or None
    return None


async def _aquery_file(saver: AsyncSqliteSaver) -> str | None:
    async with saver.lock, saver.conn.execute("PRAGMA database_list") as cursor:
        return _main_file(list(await cursor.fetchall()))


_DATABASE_FILES: weakref.WeakKeyDictionary[Saver, str | None] = weakref.WeakKeyDictionary()
"""The database file of each SQLite saver whose file was read (a connection's ``main`` database
never changes): read once, not under the saver's lock at every lock taken, where it waited for
the checkpoint writes LangGraph's background thread was making."""


def _known_file(saver: Saver) -> tuple[bool, str | None]:
    try:
        return True, _DATABASE_FILES[saver]
    except (KeyError, TypeError):  # not read yet, or a saver no weak reference can point to
        return False, None


def _remember_file(saver: Saver, database: str | None) -> str | None:
    with suppress(TypeError):
        _DATABASE_FILES[saver] = database
    return database


def _sqlite_file(saver: SqliteSaver | AsyncSqliteSaver) -> str | None:
    known, database = _known_file(saver)
    if known:
        return database
    if _is_sync_sqlite(saver):
        with saver.lock:
            rows = saver.conn.execute("PRAGMA database_list").fetchall()
        return _remember_file(saver, _main_file(rows))
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is saver.loop:  # the saver's own sync methods refuse this thread as well
        return None
    future = asyncio.run_coroutine_threadsafe(_aquery_file(saver), saver.loop)
    return _remember_file(saver, future.result())


def check_writable(database: str, thread_id: str | None = None) -> None:
    """Refuse a SQLite file that cannot be written (the file, or the folder its journal and
    lock files go in), before anything runs: the agent writes a checkpoint at every step.

    Raises:
        StorageError: the file or its folder is read-only.
    """
    folder = os.path.dirname(os.path.abspath(database))
    for path, what in ((database, "file"), (folder, "folder")):
        if os.path.exists(path) and not os.access(path, os.W_OK):
            thread = f"thread {thread_id!r} is unchanged" if thread_id else "nothing changed"
            raise StorageError(
                f"the SQLite {what} {path!r} is read-only; the agent writes a checkpoint at "
                f"every step, so nothing ran and {thread}. Make it writable (or use another "
                "file) and try again",
                thread_id,
                [],
            )


@contextmanager
def _file_lock(database: str, thread_id: str) -> Iterator[None]:
    """``flock`` on ``<database>.resume-locks/<hash>.lock``. The holder removes the file (and
    the folder, once empty) before releasing it, so lock files do not pile up; a caller that
    locked a file someone removed meanwhile sees it is no longer the one at the path and
    tries again (the usual lock-file protocol)."""
    check_writable(database, thread_id)
    directory = Path(database + LOCK_DIR_SUFFIX)
    path = directory / (hashlib.sha256(thread_id.encode()).hexdigest()[:32] + ".lock")
    fd = _locked_file(directory, path, thread_id)
    try:
        yield
    finally:
        try:
            path.unlink(missing_ok=True)
            directory.rmdir()
        except OSError:
            pass  # another thread's lock file is still there (or the folder went read-only)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


_RELEASING: set[asyncio.Future[Any]] = set()
"""Releases of file locks whose taking was cancelled, running in worker threads."""


@asynccontextmanager
async def _afile_lock(database: str, thread_id: str) -> AsyncIterator[None]:
    """:func:`_file_lock` with its file calls (stat, open, flock, unlink) in a worker thread:
    the event loop never makes a blocking call (``langgraph dev`` refuses them in a custom
    route, e.g. the AG-UI app's). A task cancelled while the lock is being taken releases it
    once taken."""
    held = _file_lock(database, thread_id)
    entering = asyncio.ensure_future(asyncio.to_thread(held.__enter__))
    try:
        await asyncio.shield(entering)
    except asyncio.CancelledError:

        def release(done: asyncio.Future[None]) -> None:
            if not done.cancelled() and done.exception() is None:
                releasing = asyncio.ensure_future(
                    asyncio.to_thread(held.__exit__, None, None, None)
                )
                _RELEASING.add(releasing)
                releasing.add_done_callback(_RELEASING.discard)

        entering.add_done_callback(release)
        raise
    try:
        yield
    finally:
        await asyncio.to_thread(held.__exit__, None, None, None)


def _locked_file(directory: Path, path: Path, thread_id: str) -> int:
    while True:
        try:
            directory.mkdir(exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except FileNotFoundError:
            continue  # the folder was removed between mkdir and open
        except OSError as error:
            raise StorageError(
                f"cannot make the resume lock file in {str(directory)!r} ({error}); nothing ran "
                f"and thread {thread_id!r} is unchanged. The folder of the SQLite file must be "
                "writable",
                thread_id,
                [],
            ) from error
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise _busy(thread_id) from None
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)  # locked a file its holder removed: take the one at the path now


# --- PostgreSQL: a session-level advisory lock on a dedicated connection ----------------


def _lock_key(thread_id: str) -> int:
    digest = hashlib.blake2b(_KEY_PREFIX + thread_id.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def _conninfo(source: _PgSource) -> str:
    """Connection parameters of a psycopg connection or pool (password included)."""
    from psycopg.conninfo import make_conninfo

    if hasattr(source, "conninfo"):  # a pool
        return str(source.conninfo)
    params = {
        opt.keyword.decode(): opt.val.decode() for opt in source.pgconn.info if opt.val is not None
    }
    return make_conninfo(**params)


def _is_pool(
    source: _PgSource, async_pool: bool
) -> TypeIs[ConnectionPool[_Conn] | AsyncConnectionPool[_AConn]]:
    module, name = "psycopg_pool", "AsyncConnectionPool" if async_pool else "ConnectionPool"
    return is_instance_of(source, module, name)


def _pool_with_room(
    source: _PgSource, async_pool: bool
) -> TypeGuard[ConnectionPool[_Conn] | AsyncConnectionPool[_AConn]]:
    return _is_pool(source, async_pool) and int(source.max_size) > 1


_LOCKS_IN_POOL: Final[weakref.WeakKeyDictionary[_PgSource, int]] = weakref.WeakKeyDictionary()
"""How many of a pool's connections hold a resume lock right now (per pool object)."""
_LOCKS_IN_POOL_GUARD: Final = threading.Lock()


@contextmanager
def _from_pool(source: _PgSource, async_pool: bool) -> Iterator[bool]:
    """Whether this lock takes its connection from the saver's own pool (cheap: no connect)
    or opens a dedicated one. At most half of a pool's connections hold locks at a time: a
    lock holder's run needs a connection of the same pool for every checkpoint it writes, so
    locks holding all of them would wait for each other forever (a ``PoolTimeout`` after the
    pool's timeout). Beyond that share, locks get their own connections; the run's never
    wait for a lock's."""
    if not _pool_with_room(source, async_pool):
        yield False
        return
    with _LOCKS_IN_POOL_GUARD:
        held = _LOCKS_IN_POOL.get(source, 0)
        shared = held < int(source.max_size) // 2
        if shared:
            _LOCKS_IN_POOL[source] = held + 1
    try:
        yield shared
    finally:
        if shared:
            with _LOCKS_IN_POOL_GUARD:
                _LOCKS_IN_POOL[source] -= 1


_TRY_LOCK: Final = "SELECT pg_try_advisory_lock(%s)"
_UNLOCK: Final = "SELECT pg_advisory_unlock(%s)"


def _pg_run(conn: _Conn, statement: str, key: int) -> bool:
    from psycopg.rows import tuple_row

    with conn.cursor(row_factory=tuple_row) as cursor:
        row = cursor.execute(statement, (key,)).fetchone()
    if not conn.autocommit:
        conn.commit()  # session-level locks outlive the transaction
    return bool(row and row[0])


async def _apg_run(conn: _AConn, statement: str, key: int) -> bool:
    from psycopg.rows import tuple_row

    async with conn.cursor(row_factory=tuple_row) as cursor:
        await cursor.execute(statement, (key,))
        row = await cursor.fetchone()
    if not conn.autocommit:
        await conn.commit()
    return bool(row and row[0])


@dataclass
class _Session:
    """A PostgreSQL session holding a resume lock, while ``open`` (the lock is held)."""

    source: _PgSource
    is_async: bool
    conn: _PgConn
    open: bool = True


_SESSIONS: ContextVar[tuple[_Session, ...]] = ContextVar("dynavec_resume_lock_sessions", default=())
"""The PostgreSQL sessions that hold a resume lock in this context. A lock taken inside another
one on the same saver (the claim of a resumed call, :mod:`dynavec_langgraph._exactly_once.claims`,
inside a door's thread lock) takes its advisory lock on the session that already holds one instead
of a second connection: advisory locks are per session, so it excludes every other session exactly
as before, and a nested lock of the same key is refused earlier, by the in-process lock. A task
started inside the lock that outlives it (its context is a copy) finds the session closed and
takes a connection of its own."""


@overload
def _held_session(source: _PgSource, is_async: Literal[False]) -> _Conn | None: ...
@overload
def _held_session(source: _PgSource, is_async: Literal[True]) -> _AConn | None: ...
def _held_session(source: _PgSource, is_async: bool) -> _PgConn | None:
    for held in _SESSIONS.get():
        if held.open and held.source is source and held.is_async is is_async:
            return held.conn
    return None


@contextmanager
def _session(source: _PgSource, is_async: bool, conn: _PgConn) -> Iterator[None]:
    before = _SESSIONS.get()
    session = _Session(source, is_async, conn)
    _SESSIONS.set((*before, session))
    try:
        yield
    finally:
        session.open = False
        _SESSIONS.set(before)  # not a token: an async generator may exit in another context


@contextmanager
def _pg_lock(source: _PgSource, thread_id: str) -> Iterator[None]:
    import psycopg

    key = _lock_key(thread_id)
    held = _held_session(source, is_async=False)
    if held is not None:
        with _locked_on(held, None, key, thread_id, owned=False):
            yield
        return
    with _from_pool(source, async_pool=False) as shared:
        # shared: _from_pool found the saver's ConnectionPool
        pool = cast("ConnectionPool[_Conn]", source) if shared else None
        if pool is not None:
            conn: _Conn = pool.getconn()
        else:
            conn = psycopg.connect(_conninfo(source), autocommit=True)
        with _locked_on(conn, pool, key, thread_id), _session(source, False, conn):
            yield


@contextmanager
def _locked_on(
    conn: _Conn,
    pool: ConnectionPool[_Conn] | None,
    key: int,
    thread_id: str,
    *,
    owned: bool = True,
) -> Iterator[None]:
    """The advisory lock ``key`` on ``conn``; the connection goes back to ``pool`` (or is
    closed) afterwards, unless it is not ``owned`` (an enclosing lock's session)."""
    import psycopg

    try:
        if not _pg_run(conn, _TRY_LOCK, key):
            raise _busy(thread_id)
        try:
            yield
        finally:
            try:
                _pg_run(conn, _UNLOCK, key)
            except psycopg.Error:
                conn.close()  # ending the session releases the lock
    finally:
        if owned and pool is not None:
            pool.putconn(conn)
        elif owned:
            conn.close()


@asynccontextmanager
async def _apg_lock(source: _PgSource, thread_id: str) -> AsyncIterator[None]:
    """Async twin of :func:`_pg_lock`."""
    import psycopg

    key = _lock_key(thread_id)
    held = _held_session(source, is_async=True)
    if held is not None:
        async with _alocked_on(held, None, key, thread_id, owned=False):
            yield
        return
    with _from_pool(source, async_pool=True) as shared:
        # shared: _from_pool found the saver's AsyncConnectionPool
        pool = cast("AsyncConnectionPool[_AConn]", source) if shared else None
        if pool is not None:
            conn: _AConn = await pool.getconn()
        else:
            conn = await psycopg.AsyncConnection.connect(_conninfo(source), autocommit=True)
        async with _alocked_on(conn, pool, key, thread_id):
            with _session(source, True, conn):
                yield


@asynccontextmanager
async def _alocked_on(
    conn: _AConn,
    pool: AsyncConnectionPool[_AConn] | None,
    key: int,
    thread_id: str,
    *,
    owned: bool = True,
) -> AsyncIterator[None]:
    """Async twin of :func:`_locked_on`."""
    import psycopg

    try:
        if not await _apg_run(conn, _TRY_LOCK, key):
            raise _busy(thread_id)
        try:
            yield
        finally:
            try:
                await _apg_run(conn, _UNLOCK, key)
            except psycopg.Error:
                await conn.close()
    finally:
        if owned and pool is not None:
            await pool.putconn(conn)
        elif owned:
            await conn.close()


# --- public -----------------------------------------------------------------------------


def _is_sqlite(saver: object) -> TypeIs[SqliteSaver | AsyncSqliteSaver]:
    return saver_kind(saver) in ("sqlite", "async_sqlite")


def _is_postgres(saver: object) -> TypeIs[PostgresSaver | AsyncPostgresSaver]:
    return saver_kind(saver) in ("postgres", "async_postgres")


def _is_sync_sqlite(saver: SqliteSaver | AsyncSqliteSaver) -> TypeIs[SqliteSaver]:
    return saver_kind(saver) == "sqlite"


async def _asqlite_file(saver: SqliteSaver | AsyncSqliteSaver) -> str | None:
    """Async twin of :func:`_sqlite_file` (a sync saver's query runs in a worker thread)."""
    known, database = _known_file(saver)
    if known:
        return database
    if _is_sync_sqlite(saver):
        return await asyncio.to_thread(_sqlite_file, saver)
    return _remember_file(saver, await _aquery_file(saver))


@contextmanager
def resume_lock(saver: Saver | None, thread_id: str) -> Iterator[bool]:
    """Hold the resume lock of ``thread_id`` in ``saver`` for the body of the ``with``; the
    ``as`` value says whether the lock also excludes other processes (a SQLite file's, a
    PostgreSQL advisory lock) or only this one (any other saver, DynamoDB's lease included).
    ``saver`` is a LangGraph saver (what ``resolve_checkpointer`` returns; ``None``, no saver,
    gets the in-process lock only).

    Raises:
        ConcurrentResumeError: another caller (thread, task or process) holds it; nothing
            was done.

    Example:
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> saver = InMemorySaver()
        >>> with resume_lock(saver, "t1"):
        ...     try:
        ...         with resume_lock(saver, "t1"):
        ...             pass
        ...     except ConcurrentResumeError:
        ...         print("busy")
        busy
    """
    target = stored_in(saver)
    with ExitStack() as stack:
        stack.enter_context(_in_process(_identity(target), thread_id))
        exclusive = False
        if _is_sqlite(target):
            database = _sqlite_file(target)
            if database is not None:
                stack.enter_context(_file_lock(database, thread_id))
                exclusive = True
        elif _is_postgres(target):
            stack.enter_context(_pg_lock(target.conn, thread_id))
            exclusive = True
        elif isinstance(own := _identity(target), OwnsResumeLock):
            stack.enter_context(own.resume_lock(thread_id))  # a dynavec checkpointer's (DynamoDB)
        yield exclusive


@asynccontextmanager
async def aresume_lock(saver: Saver | None, thread_id: str) -> AsyncIterator[bool]:
    """Async twin of :func:`resume_lock` (never blocks the event loop waiting)."""
    target = stored_in(saver)
    async with AsyncExitStack() as stack:
        stack.enter_context(_in_process(_identity(target), thread_id))
        exclusive = False
        if _is_sqlite(target):
            database = await _asqlite_file(target)
            if database is not None:
                await stack.enter_async_context(_afile_lock(database, thread_id))
                exclusive = True
        elif _is_postgres(target):
            await stack.enter_async_context(_apg_lock(target.conn, thread_id))
            exclusive = True
        elif isinstance(own := _identity(target), OwnsAsyncResumeLock):
            await stack.enter_async_context(own.aresume_lock(thread_id))  # a dynavec checkpointer's
        yield exclusive
