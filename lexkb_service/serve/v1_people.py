"""/api/v1's routes for what users write: asks (each kept as an answer), conversations, feedback,
and the admin's reading of everyone's feedback and of each ask's trace.

- What is made is answered 201 with its Location: an ask (`/api/v1/answers/{id}`), a
  conversation, a first feedback. Feedback is one per answer and key: given again, it changes
  the one there (200).
- A conversation has one shape in the listing and alone (its number of turns); its turns are a
  listing of their own.
- Every time is ISO 8601 in UTC, and every listing a page (lexkb_service.serve.paging).
- Every route needs a key, and the admin's an admin key (declared on the router and on each of
  them: lexkb_service.serve.access_rules).
- An admin's trace says what the ask searched (a follow-up's text includes the question before
  it), the candidates retrieved with their scores, how long it took, who asked (key id and
  name), and the answer with its verification.
"""

from __future__ import annotations

from collections.abc import Mapping

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from lexkb_service.mcp.access import Access
from lexkb_service.serve import api, models
from lexkb_service.serve.access_rules import requires
from lexkb_service.serve.api import (
    answered,
    bounded,
    new_conversation,
    not_found,
    owner,
    run_costly,
    service,
)
from lexkb_service.serve.paging import PAGE, Cursor, Limit, envelope, keyset_page, with_iso
from lexkb_service.serve.store import After, Turn
from lexkb_service.serve.v1 import Same, add_same
from lexkb_service.serve.versions import V1

router = APIRouter(prefix=V1, dependencies=[requires(Access.KEY)])
# Everyone's feedback and traces: an admin key's alone.
ADMIN = [requires(Access.ADMIN)]
SAME = (
    Same("DELETE", "/conversations/{conversation_id}", api.delete_conversation,
         "delete_conversation", "delete one of my conversations"),
    Same("DELETE", "/answers/{answer_id}", api.delete_answer, "delete_answer",
         "delete one of my answers and its feedback"),
)  # fmt: skip


def _turn(turn: Turn) -> dict[str, object]:
    return with_iso(turn, "at")


def _made(
    body: Mapping[str, object], location: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(body, status_code=201, headers={"Location": location, **(headers or {})})


async def _asked(
    request: Request, body: models.AskRequest, conversation_id: str | None
) -> JSONResponse:
    turn, version = await run_costly(
        request, "ask", dict(body), lambda: answered(request, body, conversation_id)
    )
    location = f"{V1}/answers/{turn['answer_id']}"
    return _made(_turn(turn), location, {"X-Lexkb-Snapshot": version})


@router.post(
    "/ask",
    status_code=201,
    operation_id="ask",
    summary="a cited, verified answer, kept (Location: the answer)",
)
async def ask(body: models.AskRequest, request: Request) -> JSONResponse:
    return await _asked(request, body, None)


@router.post(
    "/conversations/{conversation_id}/ask",
    status_code=201,
    operation_id="ask_in_conversation",
    summary="continue a conversation: a follow-up reads the turns before it",
)
async def ask_in_conversation(
    conversation_id: str, body: models.AskRequest, request: Request
) -> JSONResponse:
    return await _asked(request, body, bounded(conversation_id))


@router.get("/answers/{answer_id}", operation_id="get_answer", summary="one of my answers")
def get_answer(answer_id: str, request: Request) -> JSONResponse:
    found = service(request).store.answer(owner(request), bounded(answer_id))
    if found is None:
        raise not_found("answer")
    return JSONResponse(_turn(found))


@router.post(
    "/conversations",
    status_code=201,
    operation_id="create_conversation",
    summary="start a conversation (Location: the conversation)",
)
def create_conversation(body: models.ConversationRequest, request: Request) -> JSONResponse:
    made = new_conversation(request, body.title)
    return _made(with_iso(made, "created_at", "updated_at"), f"{V1}/conversations/{made['id']}")


@router.get(
    "/conversations",
    operation_id="list_conversations",
    summary="my conversations, most recently used first, a page at a time",
)
def list_conversations(
    request: Request, limit: Limit = PAGE, cursor: Cursor = None
) -> JSONResponse:
    store, who = service(request).store, owner(request)
    page, following = keyset_page(
        "conversations", cursor, limit,
        lambda count, after: store.conversation_page(who, count, after), "updated_at",
    )  # fmt: skip
    return JSONResponse(
        envelope([with_iso(c, "created_at", "updated_at") for c in page], following)
    )


@router.get(
    "/conversations/{conversation_id}",
    operation_id="get_conversation",
    summary="one of my conversations, as the listing shows it",
)
def get_conversation(conversation_id: str, request: Request) -> JSONResponse:
    found = service(request).store.conversation_summary(owner(request), bounded(conversation_id))
    if found is None:
        raise not_found("conversation")
    return JSONResponse(with_iso(found, "created_at", "updated_at"))


@router.get(
    "/conversations/{conversation_id}/turns",
    operation_id="list_turns",
    summary="a conversation's turns, oldest first, a page at a time",
)
def list_turns(
    conversation_id: str, request: Request, limit: Limit = PAGE, cursor: Cursor = None
) -> JSONResponse:
    store, who, chosen = service(request).store, owner(request), bounded(conversation_id)
    if not store.owns(who, chosen):
        raise not_found("conversation")

    def fetch(count: int, after: After | None) -> list[Turn]:
        return store.turn_page(who, chosen, count, after)

    page, following = keyset_page("turns", cursor, limit, fetch, "at", "answer_id")
    return JSONResponse(envelope([_turn(t) for t in page], following))


@router.post(
    "/feedback",
    status_code=201,
    operation_id="give_feedback",
    summary="feedback on one of my answers: 201 the first time, 200 when it changes it",
    responses={200: {"description": "the feedback already given on this answer, changed"}},
)
def give_feedback(body: models.FeedbackRequest, request: Request) -> JSONResponse:
    given = service(request).store.give_feedback(
        owner(request), body.answer_id, body.rating, body.comment
    )
    if given is None:
        raise not_found("answer")
    item, created = given
    shown = with_iso(item, "created_at", "updated_at")
    location = f"{V1}/feedback/{item['id']}"
    if created:
        return _made(shown, location)
    return JSONResponse(shown, headers={"Location": location})


@router.get(
    "/feedback",
    operation_id="list_feedback",
    summary="my feedback, most recently given or changed first, a page at a time",
)
def list_feedback(request: Request, limit: Limit = PAGE, cursor: Cursor = None) -> JSONResponse:
    return _feedback_page(request, owner(request), limit, cursor)


@router.get("/feedback/{feedback_id}", operation_id="get_feedback", summary="one of my feedback")
def get_feedback(feedback_id: str, request: Request) -> JSONResponse:
    found = service(request).store.feedback_item(owner(request), bounded(feedback_id))
    if found is None:
        raise not_found("feedback")
    return JSONResponse(with_iso(found, "created_at", "updated_at"))


@router.get(
    "/admin/feedback",
    operation_id="admin_feedback",
    summary="everyone's feedback, most recent first, with whose it is (admin)",
    dependencies=ADMIN,
)
def admin_feedback(request: Request, limit: Limit = PAGE, cursor: Cursor = None) -> JSONResponse:
    return _feedback_page(request, None, limit, cursor)


@router.get(
    "/admin/answers",
    operation_id="admin_traces",
    summary="every ask, newest first: what it searched, the candidates, time, who (admin)",
    dependencies=ADMIN,
)
def admin_traces(request: Request, limit: Limit = PAGE, cursor: Cursor = None) -> JSONResponse:
    store = service(request).store
    page, following = keyset_page("traces", cursor, limit, store.trace_page, "at", "answer_id")
    return JSONResponse(envelope([_turn(t) for t in page], following))


def _feedback_page(
    request: Request, who: str | None, limit: int, cursor: str | None
) -> JSONResponse:
    store = service(request).store
    listing = "feedback" if who is not None else "everyone's feedback"
    page, following = keyset_page(
        listing, cursor, limit,
        lambda count, after: store.feedback_page(who, count, after), "updated_at",
    )  # fmt: skip
    items = [with_iso(f, "created_at", "updated_at") for f in page]
    return JSONResponse(envelope(items, following))


add_same(router, SAME)
