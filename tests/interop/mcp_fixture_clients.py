"""The Python `mcp` SDK client (pinned in requirements-agent-schemas.txt) and the MCP Inspector
CLI (pinned in inspector-npm/) against the conformance fixture (examples/mcp_conformance.rs)
served by rcip-mcp over streamable HTTP, as users drive it:

- Python, 2025-11-25 (`mode="legacy"`) and 2026-07-28: the client's model (`sampling_callback`)
  and roots (`list_roots_callback`) answer a capability's requests, and the answers reach the
  handler; a client without elicitation calls a write that needs approval and gets an accepted
  result saying approval is pending in the application; the host approves in its own
  interface (the fixture's `POST /host/confirmations/approve`), and calling again gets the
  outcome, once.
- Python, 2026-07-28 with the tasks extension (a client extension claiming `resultType:
  "task"`): a long-running call becomes a task the client polls to its result, and another is
  cancelled (`tasks/cancel`) and ends cancelled.
- The Inspector CLI (2025-11-25, no elicitation): the same pending write, approval, outcome.

    python mcp_fixture_clients.py PATH/TO/mcp_conformance [NODE INSPECTOR_CLI]
"""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from typing import Any, Literal

import anyio
from mcp import Client, types
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from pydantic import ConfigDict

TASKS = "io.modelcontextprotocol/tasks"
CONFIRMED = "test_input_required_result_tampered_state"

failures = []
passed = []


def check(label, condition, detail=""):
    print(("ok   " if condition else "FAIL ") + label + ("" if condition else f": {detail}"))
    (passed if condition else failures).append(label)


def text_of(result):
    return "".join(block.text for block in result.content if block.type == "text")


async def model(context, params):
    """The client's model: answers every prompt the same way."""
    prompt = params.messages[0].content
    prompt = getattr(prompt, "text", "")
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=f"an answer to {prompt!r}"),
        model="interop-model",
        stop_reason="endTurn",
    )


async def roots(context):
    return types.ListRootsResult(roots=[types.Root(uri="file:///interop/root", name="Interop")])


def approve_all(base):
    request = urllib.request.Request(f"{base}/host/confirmations/approve", method="POST", data=b"")
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)["approved"]


async def sampling_and_roots(url, mode):
    label = f"python {mode}"
    async with Client(url, sampling_callback=model, list_roots_callback=roots, mode=mode) as client:
        sampled = await client.call_tool("test_sampling", {"prompt": "What is 2 + 2?"})
        check(
            f"{label}: sampling answered by the client reaches the handler",
            not sampled.is_error and text_of(sampled) == "LLM response: an answer to 'What is 2 + 2?'",
            sampled,
        )
        listed = await client.call_tool("test_input_required_result_list_roots", {})
        check(
            f"{label}: roots answered by the client reach the handler",
            not listed.is_error and text_of(listed) == "The client's roots: file:///interop/root",
            listed,
        )


async def pending_write(url, base, mode):
    label = f"python {mode} without elicitation"
    async with Client(url, mode=mode) as client:
        waiting = await client.call_tool(CONFIRMED, {})
        check(
            f"{label}: a write is accepted, pending approval in the application",
            waiting.is_error and text_of(waiting).startswith("CONFIRMATION_PENDING: "),
            waiting,
        )
        again = await client.call_tool(CONFIRMED, {})
        check(f"{label}: still pending before the host answers", text_of(again) == text_of(waiting), again)
        check(f"{label}: the host approves it", approve_all(base) == 1)
        done = await client.call_tool(CONFIRMED, {})
        check(
            f"{label}: the retry gets the outcome",
            not done.is_error and text_of(done) == "state-ok: confirmed",
            done,
        )
        later = await client.call_tool(CONFIRMED, {})
        check(f"{label}: once (the next call waits again)", text_of(later).startswith("CONFIRMATION_PENDING"), later)
        # Leaves nothing pending for the next client (the same anonymous caller).
        approve_all(base)
        await client.call_tool(CONFIRMED, {})


class Handle(types.Result):
    """A task handle (`resultType: "task"`)."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"]
    task_id: str
    status: str


class Detailed(types.Result):
    """`tasks/get`'s answer: the task, with its result once completed."""

    model_config = ConfigDict(extra="allow")
    task_id: str
    status: str
    result: dict[str, Any] | None = None


class TaskRef(types.RequestParams):
    task_id: str


class TasksGet(types.Request[TaskRef, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskRef
    name_param = "taskId"


class TasksCancel(types.Request[TaskRef, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskRef
    name_param = "taskId"


async def get(session, task_id):
    return await session.send_request(TasksGet(params=TaskRef(task_id=task_id)), Detailed)


async def poll(session, task_id, within=20):
    with anyio.fail_after(within):
        while True:
            task = await get(session, task_id)
            if task.status not in ("working", "input_required"):
                return task
            await anyio.sleep(0.2)


async def finish(handle: Handle, ctx: ClaimContext) -> types.CallToolResult:
    task = await poll(ctx.session, handle.task_id)
    if task.status != "completed":
        raise RuntimeError(f"task {handle.task_id} ended {task.status}")
    return types.CallToolResult.model_validate(task.result)


class Tasks(ClientExtension):
    """The tasks extension, as a client implements it: polls a task to its result."""

    identifier = TASKS

    def claims(self):
        return [ResultClaim(result_type="task", model=Handle, resolve=finish)]


async def tasks(url):
    label = "python 2026-07-28 tasks"
    async with Client(url, mode="2026-07-28", extensions=[Tasks()]) as client:
        done = await client.call_tool("slow_compute", {"seconds": 1, "label": "interop"})
        check(
            f"{label}: a task started and polled to its result",
            not done.is_error and text_of(done) == "interop: done after 1 seconds",
            done,
        )
        handle = await client.session.call_tool("slow_compute", {"seconds": 60}, allow_claimed=True)
        check(f"{label}: a long call is a task", isinstance(handle, Handle) and handle.status == "working", handle)
        if isinstance(handle, Handle):
            working = await get(client.session, handle.task_id)
            check(f"{label}: polled, it is working", working.status == "working", working)
            await client.session.send_request(TasksCancel(params=TaskRef(task_id=handle.task_id)), types.EmptyResult)
            cancelled = await poll(client.session, handle.task_id, within=5)
            check(f"{label}: cancelled, it ends cancelled", cancelled.status == "cancelled", cancelled)
        plain = await client.call_tool("greet", {"name": "interop"})
        check(f"{label}: a short call is no task", text_of(plain) == "Hello, interop!", plain)


def inspector(node, cli, url, *args):
    # 1.0.3 finds its package.json relative to the working directory: run it from its build
    # folder.
    run = subprocess.run(
        [node, cli, url, "--transport", "http", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=os.path.dirname(cli),
    )
    if run.returncode != 0:
        return {"error": run.stderr.strip() or run.stdout.strip()}
    try:
        return json.loads(run.stdout)
    except json.JSONDecodeError:
        return {"error": run.stdout}


def inspector_client(node, cli, url, base):
    label = "inspector"
    call = ("--method", "tools/call", "--tool-name", CONFIRMED)
    waiting = inspector(node, cli, url, *call)
    texts = "".join(block.get("text", "") for block in waiting.get("content", []))
    check(
        f"{label}: a write is accepted, pending approval in the application",
        waiting.get("isError") is True and texts.startswith("CONFIRMATION_PENDING: "),
        waiting,
    )
    check(f"{label}: the host approves it", approve_all(base) == 1)
    done = inspector(node, cli, url, *call)
    texts = "".join(block.get("text", "") for block in done.get("content", []))
    check(f"{label}: the retry gets the outcome", not done.get("isError") and texts == "state-ok: confirmed", done)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def main(binary, node, cli):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    url = f"{base}/mcp"
    server = subprocess.Popen([binary, f"127.0.0.1:{port}"], stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        for mode in ("legacy", "2026-07-28"):
            await sampling_and_roots(url, mode)
            await pending_write(url, base, mode)
        await tasks(url)
        if cli:
            inspector_client(node, cli, url, base)
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    binary = sys.argv[1]
    node, cli = (sys.argv[2], os.path.abspath(sys.argv[3])) if len(sys.argv) > 3 else ("", "")
    anyio.run(main, binary, node, cli)
    print(f"mcp-fixture-clients: {len(passed)} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)
