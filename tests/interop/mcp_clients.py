"""The Python `mcp` SDK client (pinned in requirements-agent-schemas.txt) against
`polls -- mcp` (stdio) and `polls -- mcp-http ADDR` (streamable HTTP), in both MCP
revisions: tools with annotations, a read, a write approved through the client's elicitation
callback, a destructive one declined, invalid input with its issues, a slow call
(`polls.wait`) cancelled (an anyio cancel scope: the SDK sends `notifications/cancelled`, or
aborts the POST on 2026-07-28 HTTP) and its watcher gone from `polls.list`, then the host's
maintenance switch (SIGUSR1 to the server): `list_changed` (through `message_handler` in
2025-11-25, a `listen()` stream in 2026-07-28), the writes gone from `tools/list`, a call to
one `CAPABILITY_UNBOUND`, and the writes back after a second SIGUSR1.

    python mcp_clients.py PATH/TO/polls
"""

import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import asynccontextmanager

import anyio
from mcp import Client, StdioServerParameters, types

WRITES = ("polls.create", "poll.rename", "poll.vote", "polls.close")

failures = []
passed = []


def check(label, condition, detail=""):
    print(("ok   " if condition else "FAIL ") + label + ("" if condition else f": {detail}"))
    (passed if condition else failures).append(label)


def error_text(result):
    """The text of an isError result: one text block, `CODE: message` then a `- path: message
    (keyword)` line per issue, and no structuredContent (None when it is not that)."""
    if not result.is_error or result.structured_content is not None or len(result.content) != 1:
        return None
    block = result.content[0]
    return block.text if block.type == "text" else None


def error_code(result):
    text = error_text(result) or ""
    return text.split(": ", 1)[0] if ": " in text else None


async def human(context, params):
    # Approves everything but closing a poll.
    if "Close a poll" in (getattr(params, "message", "") or ""):
        return types.ElicitResult(action="decline")
    return types.ElicitResult(action="accept", content={"confirm": True})


async def watchers(client, modern):
    listed = (await client.call_tool("polls.list", {})).structured_content
    polls = listed if modern else listed["result"]
    return polls[0]["watchers"]


async def until_watchers(client, modern, expected):
    # Asks polls.list a bounded number of times.
    for _ in range(200):
        if await watchers(client, modern) == expected:
            return True
        await anyio.sleep(0.025)
    return False


async def tool_names(client):
    return {t.name for t in (await client.list_tools(cache_mode="bypass")).tools}


@asynccontextmanager
async def tool_list_changes(client, modern, legacy):
    """A stream of list_changed: the message_handler's (2025-11-25) or a listen stream's."""
    if not modern:
        yield legacy
        return
    send, receive = anyio.create_memory_object_stream(16)
    async with client.listen(tools_list_changed=True) as subscription, anyio.create_task_group() as tasks:

        async def pump():
            async for event in subscription:
                await send.send(event)

        tasks.start_soon(pump)
        yield receive
        tasks.cancel_scope.cancel()


async def next_change(changes, within):
    with anyio.move_on_after(within):
        return await changes.receive()
    return None


async def settle(changes):
    # Lets earlier changes' notifications arrive (creating the first poll made polls.close
    # available), so the next one heard is the host's.
    while await next_change(changes, 0.3) is not None:
        pass


async def story(label, server, mode, pid):
    legacy_send, legacy_changes = anyio.create_memory_object_stream(64)

    async def heard(message):
        if isinstance(message, types.ToolListChangedNotification):
            legacy_send.send_nowait(message)

    async with Client(server, elicitation_callback=human, message_handler=heard, mode=mode) as client:
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
            error_code(closed) == "CONFIRMATION_DECLINED",
            closed,
        )
        invalid = await client.call_tool("polls.create", {"question": "Lunch?", "options": ["pizza"]})
        issues = (error_text(invalid) or "").splitlines()[1:]
        check(
            f"{label}: invalid input with its issues",
            error_code(invalid) == "INPUT_INVALID" and issues and issues[0].startswith("- /options: "),
            invalid,
        )

        # A slow read, cancelled by leaving its cancel scope.
        done = []
        async with anyio.create_task_group() as tasks:

            async def wait():
                done.append(await client.call_tool("polls.wait", {"pollId": "p1", "votes": 5}))

            tasks.start_soon(wait)
            counted = await until_watchers(client, modern, 1)
            tasks.cancel_scope.cancel()
        check(f"{label}: a slow call waits (one watcher)", counted and not done, done)
        check(f"{label}: the slow call cancelled (no watcher)", await until_watchers(client, modern, 0))

        # The host's maintenance switch.
        async with tool_list_changes(client, modern, legacy_changes) as changes:
            await settle(changes)
            os.kill(pid(), signal.SIGUSR1)
            heard_unbind = await next_change(changes, 10)
            check(f"{label}: list_changed after the host unbinds the writes", heard_unbind is not None)
            names = await tool_names(client)
            check(
                f"{label}: the writes gone from tools/list",
                not any(w in names for w in WRITES) and "polls.wait" in names,
                sorted(names),
            )
            unbound = await client.call_tool("poll.vote", {"pollId": "p1", "option": 0})
            check(
                f"{label}: an unbound capability",
                error_code(unbound) == "CAPABILITY_UNBOUND",
                unbound,
            )
            os.kill(pid(), signal.SIGUSR1)
            heard_bind = await next_change(changes, 10)
            names = await tool_names(client)
            check(
                f"{label}: list_changed after the host binds them again",
                heard_bind is not None and all(w in names for w in WRITES),
                sorted(names),
            )


def child_of_this_process(binary):
    """The pid of the stdio server: the child of this process running `binary`."""
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                # The command name is in parentheses and may hold spaces: fields follow ")".
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                command = f.read().split(b"\0")[0].decode(errors="replace")
        except (OSError, ValueError, IndexError):
            continue
        if ppid == me and os.path.basename(command) == os.path.basename(binary):
            return int(entry)
    raise RuntimeError("no stdio server process found")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def main(binary):
    for mode in ("legacy", "auto"):
        await story(
            f"stdio {mode}",
            StdioServerParameters(command=binary, args=["mcp"]),
            mode,
            lambda: child_of_this_process(binary),
        )
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
            await story(f"http {mode}", f"http://127.0.0.1:{port}/mcp", mode, lambda: server.pid)
        finally:
            server.kill()
            server.wait()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
    print(f"mcp-clients: {len(passed)} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)
