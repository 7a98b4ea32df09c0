"""Signed, single-use approval links: the token, its keys, and its check inside the paused tool.

A token says "``approver`` decides ``decision`` on the pause with review digest ``digest`` of
thread ``thread``, until ``expires``", signed with HMAC-SHA256 under a key the deployment
holds (stdlib ``hmac``). It reads ``dl1.KEY_ID.PAYLOAD.SIGNATURE`` (base64url, no padding):
the key id names the key that signed it, so several keys verify (rotation) while only the
current one signs (:class:`LinkKeys`). Keys come from the environment variable
:data:`LINK_KEYS_ENV` or a :class:`LinkKeys` object; they are never written anywhere (their
``repr`` shows only the key ids).

The token is the answer itself (``{"dynavec_link": TOKEN}``, :func:`link_answer`): the paused
tool verifies it (:func:`answer_of_link`, called by the approval-policy loop), so every door
(the server's link endpoint, ``RemoteReActAgent``, the command line, the raw graph) is held
to the same check. Single use: the first time a tool reads a token it binds the token's nonce
to that answer's place in the graph's store (namespace :data:`USED_NS`, as the signed-in
approver is bound, ``dynavec_langgraph._pauses.signed_in``); a replay of the same answer (LangGraph
gives a paused tool its earlier answers again on every re-run) reads the binding back and is
accepted without looking at the clock again, any other use is refused.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import hmac
import json
import os
import re
import secrets
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from dynavec_langgraph._errors import InvalidLinkError, InvalidOptionError, option_text
from dynavec_langgraph._graph.run_data import current_run
from dynavec_langgraph._names import LINK_BASE_URL_ENV, LINK_KEY, LINK_KEYS_ENV, LINK_PATH, USED_NS
from dynavec_langgraph._types import JSONMapping, JSONObject, UserPayload

__all__ = [
    "REFUSED",
    "LinkClaims",
    "LinkKeys",
    "answer_of_link",
    "link_answer",
    "link_of",
    "notification_links",
    "pause_links",
    "read_link",
    "redacted",
    "sign_link",
    "verify_link",
]

REFUSED: Final = "approval link"
"""Every refusal of a link starts with these words (a door tells a refused link from other
refusals of the paused tool by them)."""
_VERSION: Final = "dl1"
_KEY_ID = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
_MIN_SECRET: Final = 16
_MAX_TOKEN: Final = 4096


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True, init=False, repr=False, eq=False)
class LinkKeys:
    """The keys that sign and verify approval links: an id per key; the ``current`` one signs,
    every one verifies (rotate by putting a new key first and keeping the old ones until
    their links expire).

    Args:
        keys: ``{key_id: secret}`` (a secret of at least 16 characters or bytes; a key id of
            letters, digits, ``-`` and ``_``).
        current: the key id that signs (default: the first of ``keys``).

    Raises:
        InvalidOptionError: no key, a malformed key id, a short secret, or a ``current``
            that is not among ``keys``.

    Example:
        >>> keys = LinkKeys({"k2": "a-new-secret-of-32-characters!!!", "k1": "old-secret-0123456"})
        >>> keys.current, keys.key_ids
        ('k2', ('k2', 'k1'))
        >>> keys
        LinkKeys(current='k2', key_ids=('k2', 'k1'))
    """

    _secrets: Mapping[str, bytes]
    current: str

    def __init__(self, keys: Mapping[str, str | bytes], current: str | None = None) -> None:
        if not isinstance(keys, Mapping) or not keys:
            raise InvalidOptionError(
                option_text("keys", keys, "pass {key_id: secret} with at least one key"), "keys"
            )
        found: dict[str, bytes] = {}
        for kid, secret in keys.items():
            if not isinstance(kid, str) or not _KEY_ID.match(kid):
                raise InvalidOptionError(
                    f"link key id {kid!r:.60}: use 1 to 40 letters, digits, '-' or '_'", "keys"
                )
            raw = secret.encode() if isinstance(secret, str) else secret
            if not isinstance(raw, bytes) or len(raw) < _MIN_SECRET:
                raise InvalidOptionError(  # never the secret itself in the message
                    f"the secret of link key {kid!r} is no string or bytes of at least "
                    f"{_MIN_SECRET} characters: use a long random one (e.g. "
                    "python -c 'import secrets; print(secrets.token_urlsafe(32))')",
                    "keys",
                )
            found[kid] = raw
        chosen = next(iter(found)) if current is None else current
        if chosen not in found:
            raise InvalidOptionError(
                f"current={chosen!r:.60} is not among the link key ids ({', '.join(found)})",
                "current",
            )
        object.__setattr__(self, "_secrets", found)
        object.__setattr__(self, "current", chosen)

    @property
    def key_ids(self) -> tuple[str, ...]:
        """The ids of every key that verifies."""
        return tuple(self._secrets)

    def __repr__(self) -> str:
        return f"LinkKeys(current={self.current!r}, key_ids={self.key_ids!r})"

    @classmethod
    def parse(cls, text: str, *, source: str = LINK_KEYS_ENV) -> LinkKeys:
        """Keys from ``KEY_ID=SECRET,KEY_ID=SECRET`` (the first signs).

        Raises:
            InvalidOptionError: an entry without ``=``, a key id given twice, or a key that
                :class:`LinkKeys` refuses (the message names ``source``, never a secret).
        """
        keys: dict[str, str] = {}
        for entry in (e.strip() for e in text.split(",")):
            kid, sep, secret = entry.partition("=")
            if not entry or not sep:
                raise InvalidOptionError(
                    f"{source}: every entry is KEY_ID=SECRET, separated by commas "
                    "(the current key first)",
                    source,
                )
            if kid.strip() in keys:
                raise InvalidOptionError(f"{source}: key id {kid.strip()!r} given twice", source)
            keys[kid.strip()] = secret.strip()
        try:
            return cls(keys)
        except InvalidOptionError as bad:
            raise InvalidOptionError(f"{source}: {bad}", source) from None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> LinkKeys | None:
        """The keys of :data:`LINK_KEYS_ENV` (``None`` when it is unset or empty).

        Raises:
            InvalidOptionError: the variable is set but malformed.
        """
        text = (os.environ if environ is None else environ).get(LINK_KEYS_ENV, "")
        return cls.parse(text) if text.strip() else None

    def _sign(self, kid: str, message: str) -> bytes:
        return hmac.new(self._secrets[kid], message.encode(), hashlib.sha256).digest()


@dataclass(frozen=True)
class LinkClaims:
    """What a token says (read by :func:`read_link`, checked by :func:`verify_link`)."""

    key_id: str
    thread_id: str
    review_digest: str
    decision: UserPayload
    approver: str
    expires_at: datetime
    nonce: str
    roles: tuple[str, ...] = ()
    """Roles the deployment vouched for when it signed (an approver rule's ``role:NAME``)."""
    permissions: tuple[str, ...] = ()
    """Permissions the deployment vouched for (an approver rule's ``permission:NAME``)."""


def sign_link(
    keys: LinkKeys,
    *,
    thread_id: str,
    review_digest: str,
    decision: UserPayload,
    approver: str,
    expires_at: datetime,
    roles: Sequence[str] = (),
    permissions: Sequence[str] = (),
) -> str:
    """A token for ``approver`` deciding ``decision`` on one pause, signed with the current key
    (``roles`` / ``permissions``: what the deployment vouches for about the approver, matched
    by ``role:NAME`` / ``permission:NAME`` approver rules).

    Raises:
        InvalidOptionError: an empty thread, digest or approver, a naive ``expires_at``, or a
            decision that is no JSON value.
    """
    for name, text in (
        ("thread_id", thread_id),
        ("review_digest", review_digest),
        ("approver", approver),
    ):
        if not isinstance(text, str) or not text:
            raise InvalidOptionError(option_text(name, text, "pass a non-empty string"), name)
    if not isinstance(expires_at, datetime) or expires_at.tzinfo is None:
        raise InvalidOptionError(
            option_text("expires_at", expires_at, "pass an aware datetime (e.g. UTC)"),
            "expires_at",
        )
    body = {
        "t": thread_id,
        "d": review_digest,
        "v": decision,
        "a": approver,
        "e": int(expires_at.timestamp()),
        "n": secrets.token_urlsafe(16),
    }
    for key, names in (("r", roles), ("p", permissions)):
        if isinstance(names, str) or not all(isinstance(n, str) and n for n in names):
            raise InvalidOptionError(option_text(key, names, "pass a list of names"), key)
        if names:
            body[key] = list(names)
    try:
        payload = _b64(json.dumps(body, sort_keys=True, separators=(",", ":")).encode())
    except (TypeError, ValueError):
        raise InvalidOptionError(
            option_text("decision", decision, "pass a JSON value, e.g. 'approved'"), "decision"
        ) from None
    message = f"{_VERSION}.{keys.current}.{payload}"
    return f"{message}.{_b64(keys._sign(keys.current, message))}"


_DECISIONS: Final = {"approve": "approved", "reject": "rejected"}
_DAY: Final = timedelta(hours=24)


def pause_links(
    keys: LinkKeys,
    *,
    thread_id: str,
    review_digest: str,
    approver: str,
    base_url: str | None = None,
    expires_in: timedelta = _DAY,
    deadline: Any = None,
    decisions: JSONMapping | None = None,
    path: str = LINK_PATH,
    roles: Sequence[str] = (),
    permissions: Sequence[str] = (),
) -> dict[str, str]:
    """``{name: URL or token}``: one link per decision (default approve / reject) for
    ``approver`` on one pause, expiring after ``expires_in`` and never past ``deadline`` (the
    pause's ``expires_at``, ISO 8601).

    Raises:
        InvalidOptionError: an ``expires_in`` that is no positive duration, or what
            :func:`sign_link` refuses.
    """
    if not isinstance(expires_in, timedelta) or expires_in <= timedelta(0):
        raise InvalidOptionError(
            option_text("expires_in", expires_in, "pass a positive timedelta"), "expires_in"
        )
    expires_at = datetime.now(UTC) + expires_in
    if isinstance(deadline, str):
        with suppress(ValueError):  # not a deadline this package wrote: the tool checks its own
            expires_at = min(expires_at, datetime.fromisoformat(deadline).astimezone(UTC))
    out: dict[str, str] = {}
    for name, decision in (decisions or _DECISIONS).items():
        token = sign_link(
            keys,
            thread_id=thread_id,
            review_digest=review_digest,
            decision=decision,
            approver=approver,
            expires_at=expires_at,
            roles=roles,
            permissions=permissions,
        )
        out[name] = token if base_url is None else f"{base_url.rstrip('/')}{path}/{token}"
    return out


def notification_links(thread_id: str, value: UserPayload) -> JSONObject | None:
    """What a pause notification carries when the deployment sets :data:`LINK_BASE_URL_ENV`
    and :data:`LINK_KEYS_ENV`: ``{"links": {approver: {"approve": URL, "reject": URL}}}`` for
    each name among the pause's ``approvers`` (``role:`` / ``permission:`` entries name nobody
    to sign for), or ``{"links_error": why}`` when the keys are malformed; ``None`` otherwise."""
    base = os.environ.get(LINK_BASE_URL_ENV, "").strip()
    if not base or not isinstance(value, Mapping) or not value.get("review_digest"):
        return None
    try:
        keys = LinkKeys.from_env()
    except InvalidOptionError as bad:  # told to the receiver; the run goes on
        return {"links_error": str(bad)}
    approval = value.get("approval")
    names = approval.get("approvers") if isinstance(approval, Mapping) else None
    if keys is None or not isinstance(names, list):
        return None
    links = {
        name: pause_links(
            keys,
            thread_id=thread_id,
            review_digest=str(value["review_digest"]),
            approver=name,
            base_url=base,
            deadline=value.get("expires_at"),
        )
        for name in names
        if isinstance(name, str) and not name.startswith(("role:", "permission:"))
    }
    return {"links": links} if links else None


def _split(token: Any) -> tuple[str, str, str, str]:
    if not isinstance(token, str) or len(token) > _MAX_TOKEN:
        raise InvalidLinkError(
            "approval link token missing or too long: pass the token the link carries"
        )
    parts = token.strip().split(".")
    if len(parts) != 4 or parts[0] != _VERSION or not _KEY_ID.match(parts[1]):
        raise InvalidLinkError(
            "approval link token malformed (expected dl1.KEY_ID.PAYLOAD.SIGNATURE): copy the "
            "whole link again"
        )
    return parts[0], parts[1], parts[2], parts[3]


def read_link(token: Any) -> LinkClaims:
    """What ``token`` says, **without** checking its signature (a door uses it to find the
    pause; the paused tool verifies it).

    Raises:
        InvalidLinkError: a malformed token.
    """
    _, kid, payload, _ = _split(token)
    try:
        body = json.loads(_unb64(payload))
        claims = LinkClaims(
            key_id=kid,
            thread_id=str(body["t"]),
            review_digest=str(body["d"]),
            decision=body["v"],
            approver=str(body["a"]),
            expires_at=datetime.fromtimestamp(int(body["e"]), UTC),
            nonce=str(body["n"]),
            roles=tuple(str(r) for r in body.get("r") or ()),
            permissions=tuple(str(p) for p in body.get("p") or ()),
        )
    except (binascii.Error, ValueError, TypeError, KeyError, OverflowError, OSError):
        raise InvalidLinkError(
            "approval link token malformed (its payload cannot be read): copy the whole link again"
        ) from None
    return claims


def verify_link(
    token: Any, keys: LinkKeys | None, *, now: datetime | None = None, check_expiry: bool = True
) -> LinkClaims:
    """``token``'s claims once its signature checks out under the key its id names (and,
    with ``check_expiry``, it has not expired at ``now``, default the real time).

    Raises:
        InvalidLinkError: no keys, a malformed token, an unknown key id, a bad signature, or
            an expired token.
    """
    if keys is None:
        raise InvalidLinkError(
            f"approval link keys are not set up here: set {LINK_KEYS_ENV} (KEY_ID=SECRET,...) "
            "where the graph runs, or pass link_keys=LinkKeys(...)"
        )
    version, kid, payload, signature = _split(token)
    claims = read_link(token)
    if kid not in keys.key_ids:
        raise InvalidLinkError(
            f"approval link signed with key id {kid!r}, which this deployment does not hold "
            "(retired or foreign): ask for a new link"
        )
    try:
        given = _unb64(signature)
    except (binascii.Error, ValueError):
        given = b""
    if not hmac.compare_digest(given, keys._sign(kid, f"{version}.{kid}.{payload}")):
        raise InvalidLinkError(
            "approval link with a bad signature (changed or forged): nothing was applied"
        )
    if check_expiry and (now or datetime.now(UTC)) >= claims.expires_at:
        raise InvalidLinkError(
            f"approval link expired at {claims.expires_at.isoformat()}: ask for a new link"
        )
    return claims


def link_answer(token: str) -> dict[str, str]:
    """The resume value that answers a pause with ``token``."""
    return {LINK_KEY: token}


def link_of(raw: UserPayload) -> str | None:
    """The token of a link answer (``{"dynavec_link": TOKEN}``), else ``None``."""
    if isinstance(raw, Mapping) and set(raw) == {LINK_KEY}:
        token = raw[LINK_KEY]
        return token if isinstance(token, str) else ""
    return None


def redacted(token: str, claims: LinkClaims | None = None) -> JSONObject:
    """What the audit trail records of a link answer: its claims without the signature (the
    token itself is a credential until used)."""
    if claims is None:
        try:
            claims = read_link(token)
        except InvalidLinkError:
            return {"signed_link": "malformed"}
    return {
        "signed_link": {
            "key_id": claims.key_id,
            "approver": claims.approver,
            "decision": claims.decision,
            "expires_at": claims.expires_at.isoformat(),
            "nonce": claims.nonce,
        }
    }


_NO_STORE: Final = (
    "approval link not checked: its single use cannot be bound here, the graph has no store (a "
    "LangGraph API server gives its graphs one; compile an in-process graph with store=...). "
    "The answer was refused and nothing ran"
)
_ON_THE_LOOP: Final = (
    "approval link not checked: its single use cannot be bound here, the pause runs on the "
    "server's event loop (an async tool), where its store cannot be read synchronously. Ask "
    "with require_approval, or from a sync tool. The answer was refused and nothing ran"
)


def answer_of_link(
    token: str, value: JSONMapping, index: int, keys: LinkKeys | None
) -> tuple[JSONObject, Any, JSONObject]:
    """Inside the paused tool: the ``index``-th answer (1 for the first) to the pause
    ``value`` is the link ``token``. Returns ``(approver, decision, recorded)``: the approver
    as an approval rule sees it (``authenticated_by`` ``"signed_link"``, its ``key_id``), the
    token's decision, and what the audit trail records instead of the token.

    Raises:
        InvalidLinkError: the token is malformed, forged, signed with an unknown key, for
            another thread or pause, expired, or used by another answer; or it cannot be
            bound (no store, or one that cannot be read here). Nothing was bound.
    """
    if keys is None:
        try:
            keys = LinkKeys.from_env()
        except InvalidOptionError as bad:  # the deployment's, told to whoever answered
            raise InvalidLinkError(f"approval link keys misconfigured here: {bad}") from None
    claims = verify_link(token, keys, check_expiry=False)
    run = current_run()
    thread = None if run is None else run.thread_id
    if claims.thread_id != thread:
        raise InvalidLinkError(
            f"approval link for thread {claims.thread_id!r}, answered in thread {thread!r}: "
            "nothing was applied"
        )
    if claims.review_digest != value.get("review_digest"):
        raise InvalidLinkError(
            f"approval link for the pause with review digest {claims.review_digest}, but the "
            f"pending pause's is {value.get('review_digest')} (another pause, or it was asked "
            "again since): nothing was applied; ask for a new link"
        )
    assert run is not None  # a thread id comes from a run
    from langgraph.config import get_store

    try:
        store = get_store()
    except RuntimeError:  # not inside a run
        store = None
    if store is None:
        raise InvalidLinkError(_NO_STORE)
    place = f"{thread}|{run.parent_checkpoint_id or ''}|{run.checkpoint_ns}|{index}"
    try:
        found = store.get((USED_NS,), claims.nonce)
        if found is None:
            if datetime.now(UTC) >= claims.expires_at:
                raise InvalidLinkError(
                    f"approval link expired at {claims.expires_at.isoformat()}: ask for a new link"
                )
            store.put((USED_NS,), claims.nonce, {"answer": place}, index=False)
        elif found.value.get("answer") != place:
            raise InvalidLinkError(
                "approval link used already (a link answers once): nothing was applied"
            )
    except asyncio.InvalidStateError:  # a server's store, called on its own event loop
        raise InvalidLinkError(_ON_THE_LOOP) from None
    who = {
        "name": claims.approver,
        "roles": list(claims.roles),
        "permissions": list(claims.permissions),
        "authenticated_by": "signed_link",
        "key_id": claims.key_id,
    }
    return who, claims.decision, redacted(token, claims)
