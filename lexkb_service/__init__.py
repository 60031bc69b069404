"""lexkb's service: the query library (`lexkb`) served to assistants over MCP (`mcp/`: the tools,
admission, pools, access, the stdio and HTTP transports) and to applications and people over
HTTP (`serve/`: the JSON API, the page, the store), with its commands (`cli`: `lexkb serve`,
`lexkb mcp`) and a typed client of /api/v1 (`client`).

It stands on the query library and the library never on it: installed by the extra `serve`
(`pip install 'lexkb[serve]'`), which brings FastAPI, the MCP SDK, uvicorn and the rest; a
program that only opens an `Index` installs none of them.
"""
