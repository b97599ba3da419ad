"""The README's quick start, built as a new crate by quickstart.sh, driven over stdio by the
Python `mcp` SDK client (pinned in requirements-agent-schemas.txt), in both MCP revisions:
three tools with the destructive one annotated, a read, a write the policy allows (no form
shown), a destructive call declined in the elicitation form (nothing deleted) and then
approved (deleted). Then, with the MCP Inspector CLI's `--strict` when given, its
tool-schema portability report: nothing for the quick start and the polls example, and (so the check can fail) a
warning for a server whose tool has a type array.

    python quickstart_client.py PATH/TO/todo PATH/TO/polls [NODE INSPECTOR_CLI_JS]
"""

import os
import subprocess
import sys
import tempfile

import anyio
from mcp import Client, StdioServerParameters, types

failures = []
passed = []


def check(label, condition, detail=""):
    print(("ok   " if condition else "FAIL ") + label + ("" if condition else f": {detail}"))
    (passed if condition else failures).append(label)


def structured(result, modern):
    """The structured result; 2025-11-25 wraps a non-object one as `{"result": ...}`."""
    value = result.structured_content
    if not modern and isinstance(value, dict) and set(value) == {"result"}:
        return value["result"]
    return value


async def story(binary, mode):
    answers = {"approve": False, "asked": 0}

    async def human(context, params):
        answers["asked"] += 1
        if answers["approve"]:
            return types.ElicitResult(action="accept", content={"confirm": True})
        return types.ElicitResult(action="decline")

    server = StdioServerParameters(command=binary, args=[])
    async with Client(server, elicitation_callback=human, mode=mode) as client:
        modern = client.protocol_version >= "2026-07-28"
        label = f"quickstart {client.protocol_version}"
        check(f"{label}: revision", modern == (mode != "legacy"))
        tools = {t.name: t for t in (await client.list_tools()).tools}
        check(f"{label}: three tools", sorted(tools) == ["tasks.add", "tasks.delete", "tasks.list"], sorted(tools))
        delete = tools.get("tasks.delete")
        check(f"{label}: tasks.delete is destructive", delete is not None and delete.annotations.destructive_hint is True)
        listed = await client.call_tool("tasks.list", {})
        check(f"{label}: read", not listed.is_error and structured(listed, modern) == [], listed)
        added = await client.call_tool("tasks.add", {"title": "Water the plants"})
        check(
            f"{label}: write allowed by the policy, no form",
            not added.is_error
            and structured(added, modern) == {"number": 1, "title": "Water the plants"}
            and answers["asked"] == 0,
            added,
        )
        declined = await client.call_tool("tasks.delete", {"number": 1})
        still = await client.call_tool("tasks.list", {})
        check(
            f"{label}: destructive declined in the form, nothing deleted",
            declined.is_error and answers["asked"] == 1 and len(structured(still, modern)) == 1,
            (declined, still),
        )
        answers["approve"] = True
        deleted = await client.call_tool("tasks.delete", {"number": 1})
        after = await client.call_tool("tasks.list", {})
        check(
            f"{label}: destructive approved through elicitation",
            not deleted.is_error
            and structured(deleted, modern) == {"number": 1, "title": "Water the plants"}
            and answers["asked"] == 2
            and structured(after, modern) == [],
            (deleted, after),
        )


UNPORTABLE_SERVER = """
# A stdio MCP server in raw JSON-RPC: one tool whose input has a type array.
import json, sys

for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    if message["method"] == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "unportable", "version": "1"}}
    elif message["method"] == "tools/list":
        result = {"tools": [{"name": "t", "inputSchema": {"type": "object",
                  "properties": {"n": {"type": ["string", "null"]}}}}]}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"""


def strict_report(node, cli, command):
    """The Inspector CLI's `--strict` tools/list: exit status and stderr (its report)."""
    env = dict(os.environ, HOME=tempfile.mkdtemp(prefix="inspector-home-"))
    run = subprocess.run(
        [node, cli, "--strict", "--method", "tools/list", *command],
        cwd=os.path.dirname(cli),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return run.returncode, run.stderr


async def main(binary):
    for mode in ("legacy", "auto"):
        await story(binary, mode)


if __name__ == "__main__":
    binary = os.path.abspath(sys.argv[1])
    anyio.run(main, binary)
    if len(sys.argv) > 4:
        node, cli = sys.argv[3], os.path.abspath(sys.argv[4])
        status, report = strict_report(node, cli, [binary])
        check("inspector --strict: no portability finding on the quick start's tools", status == 0 and report.strip() == "", report)
        polls = os.path.abspath(sys.argv[2])
        status, report = strict_report(node, cli, [polls, "mcp"])
        check("inspector --strict: no portability finding on the polls example's tools", status == 0 and report.strip() == "", report)
        script = os.path.join(os.path.dirname(cli), "unportable_server.py")
        with open(script, "w") as f:
            f.write(UNPORTABLE_SERVER)
        status, report = strict_report(node, cli, [sys.executable, script])
        check("inspector --strict: a type array is reported (the check can fail)", "type-union" in report or "is an array" in report, report)
    print(f"quickstart: {len(passed)} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)
