"""Two outside MCP clients against `rcip serve`'s /mcp with a bearer token: the Python `mcp`
SDK (pinned in requirements-agent-schemas.txt) in 2025-11-25 (`mode="legacy"`) and
2026-07-28 (`mode="auto"`, which discovers it), and the MCP Inspector CLI
(@modelcontextprotocol/inspector-cli, pinned by inspector-npm/package-lock.json).

    python server_mcp.py BASE TOKEN WORKSPACE COLLECTION OPENAPI.json NODE INSPECTOR_CLI.js

TOKEN is an agent's opaque API token (`rcip token create`: WORKSPACE only, every scope), the
agent a member of WORKSPACE with every scope; COLLECTION is in it and the
installed polls/1 program is used. Each client: the tools are the served document's
x-rcip-operations tool names with record_get read-only; record_create, then record_get
reads it back; command_execute (polls' `vote`) makes a revision record_get then reads; a stale expected_revision is a
409 answered as a tool result with isError and no structuredContent, its text the runtime's
EXECUTION_FAILED with the message led by the platform's STALE_REVISION. One line per check, then
`server-mcp: N passed, N failed`; exit status 1 on any failure.
"""

import json
import os
import subprocess
import sys

import anyio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

results = []


def check(label, ok, detail=""):
    results.append(ok)
    print(f"{'ok  ' if ok else 'FAIL'} {label}{'' if ok else ': ' + str(detail)[:800]}")


def platform_code(is_error, structured, content):
    """The platform's code of a failed call: an isError result without structuredContent
    (the tool's output schema would not admit an error there) whose one text block is
    `EXECUTION_FAILED: CODE: text`; None when it is anything else."""
    if is_error is not True or structured is not None or len(content) != 1:
        return None
    block = content[0]
    block = block if isinstance(block, dict) else block.model_dump()
    text = str(block.get("text", "")) if block.get("type") == "text" else ""
    prefix = "EXECUTION_FAILED: "
    if not text.startswith(prefix) or ": " not in text[len(prefix):]:
        return None
    return text[len(prefix):].split(": ", 1)[0]


def poll(key):
    return {
        "workspace_id": WORKSPACE,
        "collection_id": COLLECTION,
        "namespace": "polls",
        "version": 1,
        "type": "poll",
        "data": {"question": "Lunch?", "options": ["pizza", "sushi"], "vote_count": 0},
        "idempotency_key": key,
    }


async def python_client(mode):
    label = f"python mcp {mode}"
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
    async with http, Client(streamable_http_client(f"{BASE}/mcp", http_client=http), mode=mode) as client:
        modern = client.protocol_version >= "2026-07-28"
        check(f"{label}: protocol {client.protocol_version}", modern == (mode != "legacy"))
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        check(f"{label}: the tools are the registry's", sorted(tools) == sorted(TOOLS), sorted(tools))
        get = tools.get("record_get")
        check(
            f"{label}: record_get is read-only",
            get is not None and get.annotations is not None and get.annotations.read_only_hint is True,
            get,
        )
        created = await client.call_tool("record_create", poll(f"python-{mode}"))
        record = created.structured_content or {}
        check(f"{label}: record_create", not created.is_error and record.get("state") == "open", created)
        record_id = record.get("id", "")
        read = await client.call_tool("record_get", {"workspace_id": WORKSPACE, "record_id": record_id})
        got = read.structured_content or {}
        check(
            f"{label}: record_get reads it back",
            not read.is_error and got.get("data", {}).get("question") == "Lunch?",
            read,
        )
        voted = await client.call_tool(
            "command_execute",
            {
                "workspace_id": WORKSPACE,
                "record_id": record_id,
                "command": "vote",
                "input": {"voter": "ada", "choice": 1},
                "expected_revision": got.get("revision", 1),
                "idempotency_key": f"python-{mode}-vote",
            },
        )
        after = voted.structured_content or {}
        reread = await client.call_tool("record_get", {"workspace_id": WORKSPACE, "record_id": record_id})
        check(
            f"{label}: command_execute",
            not voted.is_error
            and after.get("revision") == got.get("revision", 1) + 1
            and (reread.structured_content or {}).get("data", {}).get("last_voter") == "ada",
            (voted, reread),
        )
        stale = await client.call_tool(
            "record_update",
            {
                "workspace_id": WORKSPACE,
                "record_id": record_id,
                "expected_revision": 1,
                "patch": {"set": {"question": "Dinner?"}},
                "idempotency_key": f"python-{mode}-stale",
            },
        )
        check(
            f"{label}: a 409 is isError",
            platform_code(stale.is_error, stale.structured_content, stale.content) == "STALE_REVISION",
            stale,
        )


def inspector(*args):
    """One Inspector CLI call; its stdout as JSON (None when it failed)."""
    command = [NODE, INSPECTOR, f"{BASE}/mcp", "--transport", "http",
               "--header", f"Authorization: Bearer {TOKEN}", *args]
    # 1.0.3 looks for its package.json at "../package.json" from the working directory (an
    # fs.existsSync relative to the cwd, then an import relative to the module): it runs
    # only from its build folder.
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=os.path.dirname(INSPECTOR))
    if done.returncode != 0:
        return {"__failed__": done.returncode, "stderr": done.stderr[-800:], "stdout": done.stdout[-800:]}
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        return {"__failed__": "not JSON", "stdout": done.stdout[-800:]}


def tool_args(arguments):
    # The CLI parses each value as JSON when it can, else takes it as a string.
    pairs = []
    for key, value in arguments.items():
        pairs.append(f"{key}={value if isinstance(value, str) else json.dumps(value)}")
    return ["--tool-arg", *pairs]


def call(name, arguments):
    return inspector("--method", "tools/call", "--tool-name", name, *tool_args(arguments))


def inspector_client():
    label = "inspector"
    listed = inspector("--method", "tools/list")
    names = sorted(tool.get("name") for tool in listed.get("tools", []))
    check(f"{label}: the tools are the registry's", names == sorted(TOOLS), listed)
    get = next((t for t in listed.get("tools", []) if t.get("name") == "record_get"), {})
    check(f"{label}: record_get is read-only", (get.get("annotations") or {}).get("readOnlyHint") is True, get)
    created = call("record_create", poll("inspector"))
    record = created.get("structuredContent") or {}
    check(f"{label}: record_create", not created.get("isError") and record.get("state") == "open", created)
    record_id = record.get("id", "")
    read = call("record_get", {"workspace_id": WORKSPACE, "record_id": record_id})
    got = read.get("structuredContent") or {}
    check(
        f"{label}: record_get reads it back",
        not read.get("isError") and got.get("data", {}).get("question") == "Lunch?",
        read,
    )
    voted = call(
        "command_execute",
        {
            "workspace_id": WORKSPACE,
            "record_id": record_id,
            "command": "vote",
            "input": {"voter": "bob", "choice": 0},
            "expected_revision": got.get("revision", 1),
            "idempotency_key": "inspector-vote",
        },
    )
    after = voted.get("structuredContent") or {}
    reread = call("record_get", {"workspace_id": WORKSPACE, "record_id": record_id})
    check(
        f"{label}: command_execute",
        not voted.get("isError")
        and after.get("revision") == got.get("revision", 1) + 1
        and (reread.get("structuredContent") or {}).get("data", {}).get("last_voter") == "bob",
        (voted, reread),
    )
    stale = call(
        "record_update",
        {
            "workspace_id": WORKSPACE,
            "record_id": record_id,
            "expected_revision": 1,
            "patch": {"set": {"question": "Dinner?"}},
            "idempotency_key": "inspector-stale",
        },
    )
    check(
        f"{label}: a 409 is isError",
        platform_code(stale.get("isError"), stale.get("structuredContent"), stale.get("content") or [])
        == "STALE_REVISION",
        stale,
    )


async def main():
    for mode in ("legacy", "auto"):
        try:
            await python_client(mode)
        except Exception as error:  # a client that cannot finish its story is a failure
            check(f"python mcp {mode}: the story ran", False, repr(error))
    if INSPECTOR:
        inspector_client()
    passed = sum(results)
    failed = len(results) - passed
    print(f"server-mcp: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


BASE, TOKEN, WORKSPACE, COLLECTION, OPENAPI, NODE, INSPECTOR = sys.argv[1:8]
with open(OPENAPI, encoding="utf-8") as document:
    TOOLS = [entry["tool"] for entry in json.load(document)["x-rcip-operations"]]

if __name__ == "__main__":
    anyio.run(main)
