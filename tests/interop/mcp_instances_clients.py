"""The Python `mcp` SDK client (pinned in requirements-agent-schemas.txt) against two instances
of the conformance fixture (examples/mcp_conformance.rs, `--database URL`: one PostgreSQL
schema) behind a per-request round-robin proxy (examples/round_robin.rs), which names the
instance that served each answer in `x-backend`:

- 2025-11-25: a confirmation approved through elicitation, whose requests (the call, the
  elicitation's answer) land on both instances;
- 2025-11-25: two confirmed writes of one session at once, one through each instance, each
  asked of the human in turn; the human approves one and declines the other, and exactly
  that happens (each answer resolves its own question);
- 2025-11-25: a call's log messages reach the client whose standalone stream (`GET`) another
  instance holds, once each;
- 2026-07-28: the retry carrying the human's answer is served by the other instance than the
  call that asked;
- 2026-07-28 tasks: a task started through one instance is cancelled through the other and
  ends cancelled;
- 2025-11-25: a call's stream is given up, and resumed with `Last-Event-ID` through the other
  instance, which replays the answer the first one wrote;
- a client without elicitation, in both revisions: its confirmed write waits for the host
  (one ticket however many times it asks, on whichever instance), the host approves through
  either instance, and the next call gets the outcome, once, wherever it lands;
- SIGKILL: an instance killed while it runs a task and holds a pending confirmation; the
  other reports the task failed once its lease ran out (`--task-lease-ms`), and its host
  approves the confirmation.

    python mcp_instances_clients.py FIXTURE PROXY DATABASE_URL
"""

import json
import socket
import subprocess
import sys
import time
import urllib.request
import warnings

import anyio
import httpx2
from mcp import Client, MCPError, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import ClientMessageMetadata

from mcp_fixture_clients import CONFIRMED, Handle, TaskRef, Tasks, TasksCancel, free_port, get, poll, text_of

failures = []
passed = []

# `ping` and logging are 2025-11-25 features, used here on 2025-11-25 sessions only.
warnings.filterwarnings("ignore", message="ping is removed")
warnings.filterwarnings("ignore", message="The logging capability is deprecated")


def check(label, condition, detail=""):
    if condition:
        passed.append(label)
        print(f"ok   {label}")
    else:
        failures.append(label)
        print(f"FAIL {label}: {detail}")


class Served:
    """Which instance answered each request, in order: (JSON-RPC method, backend)."""

    def __init__(self):
        self.log = []

    async def hook(self, response):
        body = response.request.content
        try:
            method = json.loads(body).get("method", "(answer)") if body else response.request.method
        except ValueError:
            method = "?"
        self.log.append((method, response.headers.get("x-backend")))

    def backends(self, method=None):
        return [b for m, b in self.log if method is None or m == method]

    def transport(self, url):
        client = httpx2.AsyncClient(
            event_hooks={"response": [self.hook]},
            timeout=httpx2.Timeout(30.0, read=300.0),
        )
        return streamable_http_client(url, http_client=client)


def accept(confirm=True):
    async def answer(context, params):
        return types.ElicitResult(action="accept", content={"confirm": confirm})

    return answer


def pending(base):
    with urllib.request.urlopen(f"{base}/host/confirmations", timeout=10) as response:
        return json.load(response)["pending"]


async def elicitation_across(url, base):
    label = "python 2025-11-25 through two instances"
    served = Served()
    async with Client(served.transport(url), mode="legacy", elicitation_callback=accept()) as client:
        done = await client.call_tool(CONFIRMED, {})
    check(
        f"{label}: approved through elicitation, the write runs",
        not done.is_error and text_of(done) == "state-ok: confirmed",
        done,
    )
    check(
        f"{label}: its requests landed on both instances",
        set(served.backends()) == {"0", "1"} and "(answer)" in [m for m, _ in served.log],
        served.log,
    )
    check(f"{label}: nothing left pending on either", pending(base) == [], pending(base))


async def concurrent_elicitations(url, base):
    label = "python 2025-11-25 two questions at once through two instances"
    served = Served()
    asked = []

    async def human(context, params):
        # Approves the first question it sees, declines the second.
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"confirm": len(asked) == 1})

    results = {}
    async with Client(served.transport(url), mode="legacy", elicitation_callback=human) as client:

        async def call(n):
            results[n] = await client.call_tool(CONFIRMED, {})

        async with anyio.create_task_group() as group:
            group.start_soon(call, 1)
            group.start_soon(call, 2)
    texts = sorted(text_of(r) for r in results.values())
    calls = served.backends("tools/call")
    check(f"{label}: the calls ran on both instances", len(set(calls)) == 2, served.log)
    check(f"{label}: each asked the human once", len(asked) == 2, asked)
    check(
        f"{label}: one approved and run, one declined",
        len(texts) == 2 and texts[1] == "state-ok: confirmed" and "DECLINED" in texts[0],
        texts,
    )
    check(f"{label}: nothing left pending", pending(base) == [], pending(base))


async def logs_across(url):
    label = "python 2025-11-25 log messages through two instances"
    for attempt in range(6):
        logs = []

        async def keep(params):
            logs.append(params)

        served = Served()
        async with Client(served.transport(url), mode="legacy", logging_callback=keep) as client:
            if attempt % 2:
                await client.send_ping()
            await client.session.set_logging_level("debug")
            await client.call_tool("test_tool_with_logging", {})
            await anyio.sleep(0.3)
        stream, call = served.backends("GET"), served.backends("tools/call")
        if stream and call and stream[0] != call[0]:
            check(
                f"{label}: the call's messages reach the stream on the other instance, once each",
                len(logs) == 3,
                (len(logs), served.log),
            )
            return
    check(f"{label}: a call on the other instance than the stream", False, "never arranged")


async def retry_across(url):
    label = "python 2026-07-28 through two instances"
    served = Served()
    async with Client(served.transport(url), mode="2026-07-28", elicitation_callback=accept()) as client:
        done = await client.call_tool(CONFIRMED, {})
    calls = served.backends("tools/call")
    check(
        f"{label}: the retry with the human's answer finishes the write",
        not done.is_error and text_of(done) == "state-ok: confirmed",
        done,
    )
    check(
        f"{label}: the retry was served by the other instance",
        len(calls) == 2 and calls[0] != calls[1],
        served.log,
    )


async def host_approval_across(url, base, mode):
    label = f"python {mode} without elicitation through two instances"
    served = Served()
    async with Client(served.transport(url), mode=mode) as client:
        waiting = await client.call_tool(CONFIRMED, {})
        check(
            f"{label}: a write waits for the host",
            waiting.is_error and text_of(waiting).startswith("CONFIRMATION_PENDING: "),
            waiting,
        )
        again = await client.call_tool(CONFIRMED, {})
        calls = served.backends("tools/call")
        check(
            f"{label}: asked again on the other instance, still one ticket",
            text_of(again) == text_of(waiting) and calls[0] != calls[1] and len(pending(base)) == 1,
            (again, served.log, pending(base)),
        )
        request = urllib.request.Request(f"{base}/host/confirmations/approve", method="POST", data=b"")
        with urllib.request.urlopen(request, timeout=10) as response:
            check(f"{label}: the host approves it", json.load(response)["approved"] == 1)
        outcomes = []
        for _ in range(2):
            done = await client.call_tool(CONFIRMED, {})
            outcomes.append(text_of(done) if not done.is_error else "")
        check(
            f"{label}: the outcome, once, wherever the retry lands",
            outcomes[0] == "state-ok: confirmed" and outcomes[1] == "",
            (outcomes, served.log),
        )
        # Nothing left waiting for the next check.
        urllib.request.urlopen(
            urllib.request.Request(f"{base}/host/confirmations/approve", method="POST", data=b""), timeout=10
        ).close()
        await client.call_tool(CONFIRMED, {})
    check(f"{label}: nothing pending after", pending(base) == [], pending(base))


async def task_across(url):
    label = "python 2026-07-28 tasks through two instances"
    served = Served()
    async with Client(served.transport(url), mode="2026-07-28", extensions=[Tasks()]) as client:
        handle = await client.session.call_tool("slow_compute", {"seconds": 60}, allow_claimed=True)
        check(f"{label}: a long call is a task", isinstance(handle, Handle) and handle.status == "working", handle)
        if not isinstance(handle, Handle):
            return
        await client.session.send_request(TasksCancel(params=TaskRef(task_id=handle.task_id)), types.EmptyResult)
        started, cancelled_by = served.backends("tools/call")[-1], served.backends("tasks/cancel")[-1]
        check(f"{label}: cancelled through the other instance", started != cancelled_by, served.log)
        ended = await poll(client.session, handle.task_id, within=15)
        check(f"{label}: it ends cancelled", ended.status == "cancelled", ended)
        again = await get(client.session, handle.task_id)
        check(f"{label}: and stays cancelled", again.status == "cancelled", again)


async def resume_across(url):
    """A slow call's stream given up after its first event, resumed through the other one."""
    label = "python 2025-11-25 Last-Event-ID through two instances"
    served = Served()
    request = types.CallToolRequest(
        params=types.CallToolRequestParams(name="slow_compute", arguments={"seconds": 3, "label": "resumed"})
    )
    async with Client(served.transport(url), mode="legacy") as client:
        for attempt in range(5):
            tokens = []

            async def keep(token):
                tokens.append(token)

            try:
                await client.session.send_request(
                    request,
                    types.CallToolResult,
                    request_read_timeout_seconds=1.0,
                    metadata=ClientMessageMetadata(on_resumption_token_update=keep),
                )
                check(f"{label}: the call outlives the first read", False, "answered within 1 s")
                return
            except MCPError:
                pass
            if not tokens:
                check(f"{label}: the call's stream gave an event id", False, served.log)
                return
            first = served.backends("tools/call")[-1]
            # The proxy alternates: a ping answered by the call's instance puts the resumption
            # on the other (unless another request came between; then try again).
            for _ in range(3):
                await client.send_ping()
                if served.log[-1][1] == first:
                    break
            resumed = await client.session.send_request(
                request,
                types.CallToolResult,
                metadata=ClientMessageMetadata(resumption_token=tokens[-1]),
            )
            method, backend = served.log[-1]
            if backend == first:
                continue
            check(
                f"{label}: the other instance replays the answer",
                not resumed.is_error and text_of(resumed) == "resumed: done after 3 seconds",
                (resumed, served.log),
            )
            check(f"{label}: resumed on the other instance (attempt {attempt + 1})", backend != first, served.log)
            return
        check(f"{label}: resumed on the other instance", False, served.log)


async def sigkill(fixture, database):
    label = "SIGKILL of an instance"
    lease_ms = 1500
    ports = [free_port(), free_port()]
    processes = [
        subprocess.Popen(
            [fixture, f"127.0.0.1:{port}", "--database", database, "--task-lease-ms", str(lease_ms)],
            stderr=subprocess.DEVNULL,
        )
        for port in ports
    ]
    try:
        for port in ports:
            wait_for(port)
        doomed, survivor = (f"http://127.0.0.1:{port}" for port in ports)
        async with Client(f"{doomed}/mcp", mode="2026-07-28", extensions=[Tasks()]) as client:
            handle = await client.session.call_tool("slow_compute", {"seconds": 60}, allow_claimed=True)
            check(f"{label}: a task runs on it", isinstance(handle, Handle) and handle.status == "working", handle)
            waiting = await client.call_tool(CONFIRMED, {})
            check(
                f"{label}: a confirmation waits for its host",
                waiting.is_error and text_of(waiting).startswith("CONFIRMATION_PENDING"),
                waiting,
            )
        processes[0].kill()
        processes[0].wait()
        killed_at = time.monotonic()
        if not isinstance(handle, Handle):
            return
        async with Client(f"{survivor}/mcp", mode="2026-07-28", extensions=[Tasks()]) as client:
            ended = await poll(client.session, handle.task_id, within=15)
            waited = time.monotonic() - killed_at
            check(
                f"{label}: the other reports the task failed after the lease ({waited:.1f} s)",
                ended.status == "failed" and waited >= lease_ms / 1000 * 0.5,
                (ended, waited),
            )
        listed = pending(survivor)
        check(
            f"{label}: the other lists the confirmation",
            len(listed) == 1 and listed[0]["capabilityId"] == CONFIRMED,
            listed,
        )
        request = urllib.request.Request(f"{survivor}/host/confirmations/approve", method="POST", data=b"")
        with urllib.request.urlopen(request, timeout=10) as response:
            approved = json.load(response)["approved"]
        check(f"{label}: and its host approves it", approved == 1 and pending(survivor) == [], approved)
    finally:
        for process in processes:
            process.kill()
            process.wait()


def wait_for(port):
    for _ in range(600):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")


async def main(fixture, proxy, database):
    ports = [free_port() for _ in range(3)]
    processes = []
    try:
        for port in ports[1:]:
            processes.append(
                subprocess.Popen([fixture, f"127.0.0.1:{port}", "--database", database], stderr=subprocess.DEVNULL)
            )
            wait_for(port)
        processes.append(
            subprocess.Popen(
                [proxy, *(f"127.0.0.1:{port}" for port in ports)],
                stderr=subprocess.DEVNULL,
            )
        )
        wait_for(ports[0])
        base = f"http://127.0.0.1:{ports[0]}"
        url = f"{base}/mcp"
        await elicitation_across(url, base)
        await concurrent_elicitations(url, base)
        await logs_across(url)
        await retry_across(url)
        for mode in ("legacy", "2026-07-28"):
            await host_approval_across(url, base, mode)
        await task_across(url)
        await resume_across(url)
    finally:
        for process in processes:
            process.kill()
            process.wait()
    await sigkill(fixture, database)


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:4])
    print(f"mcp-instances-clients: {len(passed)} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)
