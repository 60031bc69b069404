"""The JSON API's version: every route of it is under /api/v1 (lexkb_service.serve.v1 and
lexkb_service.serve.v1_people), the OpenAPI document included. The routes first served under /api
without a version are gone (0.x, and nothing outside this repository called them): a path
under /api that is not v1's is answered 404, as any path that names no route."""

from __future__ import annotations

V1 = "/api/v1"
