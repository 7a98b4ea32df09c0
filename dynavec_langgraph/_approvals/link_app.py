"""Signed approval links for a pause (:func:`approval_links`) and the server route that
confirms and applies them (:func:`create_app`); the public face is :mod:`dynavec_langgraph.links`.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import parse_qs

import httpx
from langgraph.types import Interrupt

from dynavec_langgraph._approvals.links import LinkClaims, LinkKeys, pause_links, verify_link
from dynavec_langgraph._errors import (
    ConcurrentResumeError,
    InvalidDecisionError,
    InvalidLinkError,
    InvalidOptionError,
    NothingToResumeError,
    install_command,
)
from dynavec_langgraph._extras import missing_extra
from dynavec_langgraph._names import LINK_KEYS_ENV, LINK_PATH
from dynavec_langgraph._pauses.digest import review_digest
from dynavec_langgraph._pauses.policy.doors import expired_pauses
from dynavec_langgraph.exceptions import ApprovalTimeoutError

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

__all__ = ["DEFAULT_PATH", "approval_links", "create_app"]

DEFAULT_PATH: Final = LINK_PATH
"""Where :func:`create_app` serves the links: ``GET`` / ``POST`` ``{path}/{token}``."""


def approval_links(
    pause: Any,
    *,
    approver: str,
    keys: LinkKeys | None = None,
    base_url: str | None = None,
    thread_id: str | None = None,
    expires_in: timedelta = timedelta(hours=24),
    decisions: Mapping[str, Any] | None = None,
    path: str = DEFAULT_PATH,
    roles: Sequence[str] = (),
    permissions: Sequence[str] = (),
) -> dict[str, str]:
    """One signed link per decision for ``approver`` to answer ``pause``.

    Args:
        pause: the pause: a notification of this package (its ``thread_id`` and ``digest``),
            an ``Interrupt`` or its value (with ``thread_id=``).
        approver: who the links approve as (checked against the pause's approvers when
            used).
        keys: the signing keys (default: ``DYNAVEC_LINK_KEYS``).
        base_url: the server's public URL; ``None`` returns the bare tokens (for a chat
            button that posts them).
        thread_id: the thread, when ``pause`` does not say (on a LangGraph server: its
            thread id, a UUID).
        expires_in: how long the links work; never past the pause's own deadline.
        decisions: ``{name: decision}`` (default ``{"approve": "approved", "reject":
            "rejected"}``).
        path: the route of :func:`create_app`.
        roles: roles you vouch for about ``approver`` (for ``role:NAME`` rules).
        permissions: permissions you vouch for (for ``permission:NAME`` rules).

    Returns:
        ``{name: URL or token}``.

    Raises:
        InvalidOptionError: no keys, no thread, a pause without a review digest, or an
            ``expires_in`` that is no positive duration.
    """
    keys = keys if keys is not None else LinkKeys.from_env()
    if keys is None:
        raise InvalidOptionError(
            f"approval links need keys: set {LINK_KEYS_ENV} or pass keys=LinkKeys(...)", "keys"
        )
    value = pause.value if isinstance(pause, Interrupt) else pause
    value = value if isinstance(value, Mapping) else {}
    thread = thread_id or value.get("thread_id")
    digest = review_digest(value) or value.get("digest")
    if not isinstance(thread, str) or not thread:
        raise InvalidOptionError(
            "approval_links: pass thread_id= (the pause does not say)", "thread_id"
        )
    if not isinstance(digest, str) or not digest:
        raise InvalidOptionError(
            "approval_links: the pause carries no review digest (raise it with this package's "
            "interrupt / require_approval)",
            "pause",
        )
    return pause_links(
        keys,
        thread_id=thread,
        review_digest=digest,
        approver=approver,
        base_url=base_url,
        expires_in=expires_in,
        deadline=value.get("expires_at") or value.get("deadline"),
        decisions=decisions,
        path=path,
        roles=roles,
        permissions=permissions,
    )


# --- the endpoint ---------------------------------------------------------------------


def _status(error: Exception) -> int:
    text = str(error)
    if isinstance(error, InvalidLinkError):
        if "expired" in text:
            return 410
        if "malformed" in text or "missing" in text or "cannot change" in text:
            return 400
        if "signature" in text or "key id" in text or "keys are not set up" in text:
            return 403
        return 409  # used, another pause, not pending
    if isinstance(error, ConcurrentResumeError | NothingToResumeError):
        return 409
    return 403  # another refusal of the paused tool (an approver it does not allow)


def _http_status(error: httpx.HTTPStatusError) -> int:
    return 404 if error.response.status_code == 404 else 502


def _http_text(error: httpx.HTTPStatusError) -> str:
    if error.response.status_code == 404:
        return "approval link for a thread this server does not have: nothing was applied"
    return f"the server answered {error.response.status_code}: nothing was applied"


def _page(title: str, body: str, form: bool = False) -> str:
    button = '<form method="post"><button type="submit">Confirm</button></form>' if form else ""
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        '<meta name="robots" content="noindex">'
        f"<title>{html.escape(title)}</title></head><body><h1>{html.escape(title)}</h1>"
        f"<p>{html.escape(body)}</p>{button}</body></html>"
    )


def _wants_html(request: Request) -> bool:
    return "text/html" in request.headers.get("accept", "")


def create_app(
    *,
    keys: LinkKeys | None = None,
    path: str = DEFAULT_PATH,
    audit: bool = False,
    timeout: float = 120.0,
) -> Starlette:
    """The Starlette app a LangGraph server mounts as its custom routes
    (``langgraph.json``: ``"http": {"app": "dynavec_langgraph.links:app"}``, or a module of
    yours with ``app = create_app(...)``).

    ``GET {path}/{token}`` shows what the link does and a confirm button (nothing changes);
    ``POST {path}/{token}`` answers the pause through the server itself (``langgraph_sdk``'s
    in-process client, as ``RemoteReActAgent`` does: one run keyed by the interrupt id, refused
    when another caller answered first). Answers are JSON (``{"applied", "detail", ...}``),
    or a page for a browser; a refused link gets 400 (malformed), 403 (bad signature,
    unknown key, an approver the pause does not allow), 409 (used, another pause, not
    pending, another caller first) or 410 (expired).

    Args:
        keys: the keys that verify links (default: ``DYNAVEC_LINK_KEYS``, read per request).
        path: where the links are served.
        audit: record the answers in the thread's audit trail (as ``RemoteReActAgent(...,
            audit=True)``; a deployment's ``DYNAVEC_AUDIT=1`` records every run anyway).
        timeout: seconds to wait for the resumed run.

    Raises:
        MissingDependencyError: ``starlette`` / ``langgraph_sdk`` are missing (the ``studio``
            extra).
    """
    try:
        from langgraph_sdk import get_client
        from starlette.applications import Starlette
        from starlette.responses import HTMLResponse, JSONResponse
        from starlette.routing import Route
    except ImportError as error:
        raise missing_extra(
            "the approval-link endpoint",
            "starlette",
            "studio",
            text="the approval-link endpoint runs in a LangGraph API server (starlette, "
            f"langgraph_sdk), which the 'studio' extra installs: {install_command('studio')}",
        ) from error
    from dynavec_langgraph.remote import RemoteReActAgent

    def answer(request: Request, status: int, detail: str, **extra: Any) -> Response:
        if _wants_html(request):
            title = "Done" if status == 200 else "This link cannot be used"
            return HTMLResponse(_page(title, detail), status_code=status)
        return JSONResponse({"applied": False, "detail": detail, **extra}, status_code=status)

    async def pending(claims: LinkClaims) -> tuple[Mapping[str, Any] | None, str | None]:
        """The pause the link was signed for, if pending, and the thread's graph id."""
        client = get_client(api_key=None)
        thread = await client.threads.get(claims.thread_id)
        state = await client.threads.get_state(claims.thread_id)
        graph = (thread.get("metadata") or {}).get("graph_id")
        for item in state.get("interrupts") or []:
            if review_digest(item.get("value")) == claims.review_digest:
                return item, graph
        return None, graph

    async def show(request: Request) -> Response:
        token = str(request.path_params["token"])
        try:
            claims = verify_link(token, keys if keys is not None else LinkKeys.from_env())
            item, _ = await pending(claims)
        except InvalidLinkError as refused:
            return answer(request, _status(refused), str(refused))
        except httpx.HTTPStatusError as error:
            return answer(request, _http_status(error), _http_text(error))
        if item is None:
            text = "approval link for a pause that is no longer pending (answered already)"
            return answer(request, 409, text)
        if expired_pauses([Interrupt(value=item.get("value"), id=str(item.get("id")))]):
            return answer(request, 410, "approval link for a pause that has expired")
        found = item.get("value")
        value: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        what = value.get("description") or value.get("node_id") or "this action"
        text = f"{claims.approver}: {claims.decision} — {what} (link valid until "
        text += f"{claims.expires_at.isoformat()})"
        if _wants_html(request):
            return HTMLResponse(_page("Confirm your decision", text, form=True))
        return JSONResponse({"pending": True, "detail": text, "decision": claims.decision})

    async def apply(request: Request) -> Response:
        token = str(request.path_params["token"])
        given = await _given_decision(request)
        try:
            claims = verify_link(token, keys if keys is not None else LinkKeys.from_env())
            if given is not None and given != claims.decision:
                raise InvalidLinkError(
                    f"approval link for the decision {claims.decision!r}, not {given!r}: a "
                    "link cannot change its decision; nothing was applied"
                )
            item, graph = await pending(claims)
            if item is None or not graph:
                raise InvalidLinkError(
                    "approval link for a pause that is no longer pending (answered already, "
                    "or another pause): nothing was applied"
                )
            base = str(request.base_url).rstrip("/")
            agent = RemoteReActAgent(
                base, str(graph), client=get_client(api_key=None), audit=audit, timeout=timeout
            )
            result = await agent.aresume(link=token, thread_id=claims.thread_id)
        except (InvalidDecisionError, ConcurrentResumeError, NothingToResumeError) as refused:
            return answer(request, _status(refused), str(refused))
        except ApprovalTimeoutError as expired:  # settled as expired by the paused tool
            return answer(request, 410, str(expired))
        except httpx.HTTPStatusError as error:
            return answer(request, _http_status(error), _http_text(error))
        detail = f"{claims.approver}'s decision {claims.decision!r} was applied"
        if _wants_html(request):
            return HTMLResponse(_page("Done", detail))
        status = result.termination_reason
        return JSONResponse({"applied": True, "detail": detail, "thread_status": status})

    route = f"{path.rstrip('/')}/{{token}}"
    return Starlette(
        routes=[Route(route, show, methods=["GET"]), Route(route, apply, methods=["POST"])]
    )


async def _given_decision(request: Request) -> Any:
    """The decision a POST names (a form field or a JSON ``decision``), if any."""
    kind = request.headers.get("content-type", "")
    try:
        if kind.startswith("application/json"):
            body = await request.json()
            return body.get("decision") if isinstance(body, Mapping) else None
        if kind.startswith("application/x-www-form-urlencoded"):  # the confirm page's form
            fields = parse_qs((await request.body()).decode())
            return fields["decision"][0] if "decision" in fields else None
    except ValueError:  # not JSON, not UTF-8: names no decision
        return None
    return None
