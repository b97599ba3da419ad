"""The Python `mcp` SDK client (pinned in requirements-agent-schemas.txt) against
`polls -- mcp` (stdio) and `polls -- mcp-http ADDR` (streamable HTTP), in both MCP
revisions: tools with annotations, a read, a write approved through the client's elicitation
callback, a destructive one declined, invalid input with its issues.

    python mcp_clients.py PATH/TO/polls
"""

import socket
import subprocess
import sys
import time

import anyio
from mcp import Client, StdioServerParameters, types

failures = []
passed = []


def check(label, condition, detail=""):
    print(("ok   " if condition else "FAIL ") + label + ("" if condition else f": {detail}"))
    (passed if condition else failures).append(label)


async def human(context, params):
    # Approves everything but closing a poll.
    if "Close a poll" in (getattr(params, "message", "") or ""):
        return types.ElicitResult(action="decline")
    return types.ElicitResult(action="accept", content={"confirm": True})


async def story(label, server, mode):
    async with Client(server, elicitation_callback=human, mode=mode) as client:
        modern = client.protocol_version >= "2026-07-28"
        check(f"{label}: protocol {client.protocol_version}", modern == (mode != "legacy"))
        tools = {t.name: t for t in (await client.list_tools()).tools}
        close = tools.get("polls.close")
        check(f"{label}: polls.close is destructive", close is not None and close.annotations.destructive_hint is True)
        listed = tools.get("polls.list")
        check(f"{label}: polls.list is read-only", listed is not None and listed.annotations.read_only_hint is True)
        read = await client.call_tool("polls.list", {})
        expected = [] if modern else {"result": []}
        check(f"{label}: a read", read.structured_content == expected, read)
        created = await client.call_tool("polls.create", {"question": "Lunch?", "options": ["pizza", "sushi"]})
        check(f"{label}: a write approved through elicitation", created.structured_content == {"pollId": "p1"}, created)
        closed = await client.call_tool("polls.close", {"pollId": "p1"})
        check(
            f"{label}: a destructive call declined",
            closed.is_error and (closed.structured_content or {}).get("code") == "CONFIRMATION_DECLINED",
            closed,
        )
        invalid = await client.call_tool("polls.create", {"question": "Lunch?", "options": ["pizza"]})
        issues = (invalid.structured_content or {}).get("issues") or []
        check(
            f"{label}: invalid input with its issues",
            invalid.is_error and issues and issues[0].get("instancePath") == "/options",
            invalid,
        )


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def main(binary):
    for mode in ("legacy", "auto"):
        await story(f"stdio {mode}", StdioServerParameters(command=binary, args=["mcp"]), mode)
    for mode in ("legacy", "auto"):
        port = free_port()
        server = subprocess.Popen([binary, "mcp-http", f"127.0.0.1:{port}"], stderr=subprocess.DEVNULL)
        try:
            for _ in range(100):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    time.sleep(0.05)
            await story(f"http {mode}", f"http://127.0.0.1:{port}/mcp", mode)
        finally:
            server.kill()
            server.wait()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
    print(f"mcp-clients: {len(passed)} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)
