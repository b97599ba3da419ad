#!/usr/bin/env python3
"""The Python MCP SDK client (`mcp` 2.3.0) against the polls example served by rcip-mcp.

Usage:
    mcp_client.py --transport stdio --mode MODE -- COMMAND...
        spawns `COMMAND... mcp` and talks MCP over its stdin/stdout
    mcp_client.py --transport http --mode MODE -- COMMAND...
        runs `COMMAND... mcp-http 127.0.0.1:PORT` (a free port), waits for it, and talks
        streamable HTTP to http://127.0.0.1:PORT/mcp

MODE is `legacy` (the 2025-11-25 initialize handshake) or `2026-07-28` (stateless, per-request
`_meta`). tests/interop/mcp.sh runs all four combinations with COMMAND = `cargo run -q -p
rcip-examples --example polls --`.

The steps (issue 16's client list), each printed as `ok:` or `FAILED:`; exit 1 if any failed:

 1. tools/list: the tools carry annotations from their effects (`polls.list` read-only,
    `polls.create` neither read-only nor destructive, `polls.close` destructive).
 2. a read: `polls.list` succeeds.
 3. an unbound capability: `poll.vote` before any poll is open is refused (a JSON-RPC error, or
    an `isError` result with CAPABILITY_UNBOUND), and is not listed as bound.
 4. a write approved through the client's elicitation callback: `polls.create` succeeds, and
    the callback was asked (that is the only way the approval can come).
 5. invalid input: `polls.create` with an empty question is an `isError` result with
    INPUT_INVALID and the validation issues (instance paths), and asks nobody.
 6. a destructive call declined: `polls.close`, the callback declines, an `isError` result
    with CONFIRMATION_DECLINED; the poll stays open.
 7. list_changed after the host unbinds one: `polls.close` approved; the example's host then
    unbinds `poll.vote` (no poll is open), and the client hears it (2025-11-25: the
    `notifications/tools/list_changed` notification; 2026-07-28: `subscriptions/listen` with
    `toolsListChanged`), and `poll.vote` is no longer listed.
 8. a slow call cancelled: `polls.slowTally` (it takes seconds) is abandoned after 0.5 s (the
    client sends `notifications/cancelled`, or closes the HTTP response stream), returns at
    once, and the session still answers.

What the polls example's `mcp` modes must do for these (the contract this script tests):
`poll.vote` is bound only while some poll is open (the host binds it when a poll opens and
unbinds it when the last one closes); every approval goes through the client's elicitation
(a form: this callback answers `true` to every boolean field to approve, or declines); and
`polls.slowTally` is a read that sleeps about 10 s and honours cancellation. Change the names
below together with the example.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from typing import Any

import anyio
from mcp import Client, StdioServerParameters, types
from mcp.shared.exceptions import MCPError

READ_TOOL = "polls.list"
WRITE_TOOL = "polls.create"
DESTRUCTIVE_TOOL = "polls.close"
GATED_TOOL = "poll.vote"  # bound only while a poll is open
SLOW_TOOL = "polls.slowTally"
NEW_POLL = {"question": "Lunch?", "options": ["Pizza", "Sushi"]}
INVALID_POLL = {"question": "", "options": ["Only one"]}
CANCEL_AFTER_S = 0.5
NOTIFY_WITHIN_S = 5.0


class Run:
    """One client run: the steps' verdicts and the elicitation decisions."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.failures = 0
        self.approve = True
        self.asked: list[str] = []
        self.tools_changed = anyio.Event()

    def check(self, step: str, ok: bool, detail: Any = "") -> bool:
        verdict = "ok" if ok else "FAILED"
        print(f"{verdict}: [{self.label}] {step}" + ("" if ok or detail == "" else f": {detail}"))
        if not ok:
            self.failures += 1
        return ok

    async def elicit(self, _context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        message = getattr(params, "message", "")
        self.asked.append(message)
        if not self.approve:
            return types.ElicitResult(action="decline")
        schema = getattr(params, "requested_schema", None)
        if hasattr(schema, "model_dump"):
            schema = schema.model_dump(by_alias=True, exclude_none=True)
        properties = (schema or {}).get("properties", {})
        content = {
            name: True for name, prop in properties.items() if isinstance(prop, dict) and prop.get("type") == "boolean"
        }
        return types.ElicitResult(action="accept", content=content)

    async def on_message(self, message: Any) -> None:
        method = getattr(message, "method", None) or getattr(getattr(message, "root", None), "method", None)
        if isinstance(message, types.ToolListChangedNotification) or method == "notifications/tools/list_changed":
            self.tools_changed.set()


def text_of(result: types.CallToolResult) -> str:
    """Every text block and the structured content, as one string to search."""
    parts = [getattr(block, "text", "") for block in result.content]
    if result.structured_content is not None:
        parts.append(json.dumps(result.structured_content))
    return "\n".join(p for p in parts if p)


def structured(result: types.CallToolResult) -> Any:
    """The structured content, else the first text block that is JSON."""
    if result.structured_content is not None:
        return result.structured_content
    for block in result.content:
        try:
            return json.loads(getattr(block, "text", ""))
        except ValueError:
            continue
    return None


def find_key(value: Any, key: str) -> Any:
    """The first value under `key` anywhere in `value` (structured content may be wrapped)."""
    if isinstance(value, dict):
        if key in value:
            return value[key]
        for inner in value.values():
            found = find_key(inner, key)
            if found is not None:
                return found
    elif isinstance(value, list):
        for inner in value:
            found = find_key(inner, key)
            if found is not None:
                return found
    return None


async def listed(client: Client) -> dict[str, types.Tool]:
    result = await client.list_tools()
    return {tool.name: tool for tool in result.tools}


async def steps(run: Run, client: Client, modern: bool) -> None:
    # 1. tools/list with annotations.
    tools = await listed(client)
    for name in (READ_TOOL, WRITE_TOOL, DESTRUCTIVE_TOOL):
        run.check(f"{name} is listed", name in tools, sorted(tools))
    if READ_TOOL in tools and WRITE_TOOL in tools and DESTRUCTIVE_TOOL in tools:
        read, write, destructive = (tools[n].annotations for n in (READ_TOOL, WRITE_TOOL, DESTRUCTIVE_TOOL))
        run.check(
            "annotations follow the effects",
            read is not None
            and read.read_only_hint is True
            and write is not None
            and write.read_only_hint is False
            and write.destructive_hint is False
            and destructive is not None
            and destructive.read_only_hint is False
            and destructive.destructive_hint is True,
            {n: tools[n].annotations for n in (READ_TOOL, WRITE_TOOL, DESTRUCTIVE_TOOL)},
        )

    # 2. a read.
    result = await client.call_tool(READ_TOOL, {})
    run.check(f"{READ_TOOL} succeeds", not result.is_error, text_of(result))

    # 3. an unbound capability.
    run.check(f"{GATED_TOOL} is not listed while unbound", GATED_TOOL not in tools, sorted(tools))
    try:
        result = await client.call_tool(GATED_TOOL, {"pollId": "p1", "option": 0})
        run.check(
            f"{GATED_TOOL} unbound is refused",
            result.is_error is True and "CAPABILITY_UNBOUND" in text_of(result),
            text_of(result),
        )
    except MCPError as error:
        run.check(f"{GATED_TOOL} unbound is refused", error.code == -32602, f"{error.code} {error.message}")

    # 4. a write approved through the elicitation callback.
    run.approve, run.asked = True, []
    result = await client.call_tool(WRITE_TOOL, NEW_POLL)
    poll_id = find_key(structured(result), "pollId")
    run.check(f"{WRITE_TOOL} approved succeeds", not result.is_error and poll_id is not None, text_of(result))
    run.check(f"{WRITE_TOOL} asked the human through elicitation", len(run.asked) == 1, run.asked)

    # 5. invalid input, with its issues.
    run.asked = []
    result = await client.call_tool(WRITE_TOOL, INVALID_POLL)
    body = text_of(result)
    run.check(
        "invalid input is INPUT_INVALID with its issues",
        result.is_error is True and "INPUT_INVALID" in body and "/question" in body,
        body,
    )
    run.check("invalid input asked nobody", run.asked == [], run.asked)

    # 6. a destructive call declined.
    run.approve, run.asked = False, []
    result = await client.call_tool(DESTRUCTIVE_TOOL, {"pollId": poll_id})
    run.check(
        f"{DESTRUCTIVE_TOOL} declined is CONFIRMATION_DECLINED",
        result.is_error is True and "CONFIRMATION_DECLINED" in text_of(result),
        text_of(result),
    )
    run.check(f"{DESTRUCTIVE_TOOL} asked the human", len(run.asked) == 1, run.asked)
    run.check(f"{GATED_TOOL} still listed after the decline", GATED_TOOL in await listed(client))

    # 7. list_changed after the host unbinds one.
    run.approve, run.tools_changed = True, anyio.Event()
    async with anyio.create_task_group() as group:
        if modern:
            ready = anyio.Event()

            async def listen() -> None:
                async with client.listen(tools_list_changed=True) as subscription:
                    ready.set()
                    async for _event in subscription:
                        run.tools_changed.set()

            group.start_soon(listen)
            with anyio.move_on_after(NOTIFY_WITHIN_S):
                await ready.wait()
            run.check("subscriptions/listen acknowledged", ready.is_set())
        result = await client.call_tool(DESTRUCTIVE_TOOL, {"pollId": poll_id})
        run.check(f"{DESTRUCTIVE_TOOL} approved succeeds", not result.is_error, text_of(result))
        with anyio.move_on_after(NOTIFY_WITHIN_S):
            await run.tools_changed.wait()
        run.check("tools/list_changed heard after the host unbound one", run.tools_changed.is_set())
        group.cancel_scope.cancel()
    run.check(f"{GATED_TOOL} no longer listed", GATED_TOOL not in await listed(client))

    # 8. a slow call cancelled.
    started = time.monotonic()
    finished = False
    with anyio.move_on_after(CANCEL_AFTER_S):
        await client.call_tool(SLOW_TOOL, {})
        finished = True
    elapsed = time.monotonic() - started
    run.check(f"{SLOW_TOOL} cancelled after {CANCEL_AFTER_S} s", not finished and elapsed < 2.0, f"{elapsed:.2f} s")
    result = await client.call_tool(READ_TOOL, {})
    run.check("the session answers after the cancellation", not result.is_error, text_of(result))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen[bytes], seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server exited with {process.returncode} before listening")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"nothing listens on 127.0.0.1:{port} after {seconds:.0f} s")


async def main_async(transport: str, mode: str, command: list[str]) -> int:
    run = Run(f"{transport} {mode}")
    modern = mode != "legacy"
    process = None
    if transport == "stdio":
        server: Any = StdioServerParameters(command=command[0], args=[*command[1:], "mcp"], env=dict(os.environ))
    else:
        port = free_port()
        process = subprocess.Popen([*command, "mcp-http", f"127.0.0.1:{port}"])
        wait_for_port(port, process)
        server = f"http://127.0.0.1:{port}/mcp"
    try:
        async with Client(
            server,
            mode=mode,
            elicitation_callback=run.elicit,
            message_handler=run.on_message,
            read_timeout_seconds=30,
            cache=None,
        ) as client:
            run.check("negotiated the requested era", (client.protocol_version == "2026-07-28") == modern, client.protocol_version)
            await steps(run, client, modern)
    except Exception as error:  # a step that could not even run is a failure, with its cause
        run.check("the run completed", False, repr(error))
    finally:
        if process is not None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
    print(f"MCP client [{run.label}]: {'passed' if run.failures == 0 else f'{run.failures} failed'}")
    return 1 if run.failures else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transport", choices=["stdio", "http"], required=True)
    parser.add_argument("--mode", choices=["legacy", "2026-07-28"], required=True)
    parser.add_argument("command", nargs="+", help="the polls example's command, without its mode argument")
    args = parser.parse_args()
    return anyio.run(main_async, args.transport, args.mode, args.command)


if __name__ == "__main__":
    sys.exit(main())
