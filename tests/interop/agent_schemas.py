#!/usr/bin/env python3
"""Checks exported agent tool lists with each provider SDK's own checker.

Usage:
    agent_schemas.py DIR            check DIR/<profile>.json for every profile file present
    agent_schemas.py --self-test DIR
                                    DIR/<profile>.json must all be accepted and every tool of
                                    DIR/<profile>.refused.json must be refused (proves that
                                    each check can fail)

Each file holds one profile's wire array (the value of the consumer's `tools` member). Per
tool, the checks are (agent-schemas digest, section 7):

- openai: the entry validates as `openai.types.responses.FunctionToolParam` (strict pydantic
  validation, nothing dropped), and `agents.strict_schema.ensure_strict_json_schema` raises
  nothing on a deep copy of `parameters` and returns a schema equal to it.
- anthropic: the entry validates as `anthropic.types.ToolParam` (strict, nothing dropped), and
  `anthropic.transform_schema(input_schema) == input_schema`.
- gemini: every function declaration validates as `google.genai.types.FunctionDeclaration`,
  and its `model_dump(exclude_none=True, by_alias=True, mode="json")` gives back `parameters`
  (and `response`) equal to the exported ones. The one normalization the SDK applies is that
  `minimum`/`maximum` become floats; Python compares 0 == 0.0, so an exact bound passes and an
  inexact one (beyond 2**53) fails, as it should.
- gemini-json-schema: every declaration validates as `FunctionDeclaration`, and
  `types.Schema.from_json_schema(json_schema=types.JSONSchema.model_validate(s),
  api_option="GEMINI_API", raise_error_on_unsupported_field=True)` raises nothing for
  `parametersJsonSchema` (and `responseJsonSchema`).
- mcp-2025-11-25 / mcp-2026-07-28: `mcp_types._v2025_11_25.Tool` / `mcp_types._v2026_07_28.Tool`
  `model_validate(tool)` succeeds (strict, so no coercion), and its
  `model_dump(by_alias=True, exclude_none=True, mode="json")` equals the entry (the models ignore
  unknown members; the equality makes a dropped member a failure).

Output: one line "PROFILE: N/M accepted" per profile, then one line per refused tool with its
name and the reason. Exit status 1 if any tool is refused (or, in self-test mode, if any
expectation fails).
"""

from __future__ import annotations

import copy
import json
import sys
import traceback
from pathlib import Path
from typing import Any, Callable, Iterator

PROFILES = [
    "mcp-2025-11-25",
    "mcp-2026-07-28",
    "openai",
    "anthropic",
    "gemini",
    "gemini-json-schema",
]


class Refused(Exception):
    """A tool the SDK check does not accept unchanged."""


def first_difference(a: Any, b: Any, path: str = "") -> str:
    """The JSON Pointer of the first place two JSON values differ, with both values."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            token = str(key).replace("~", "~0").replace("/", "~1")
            if key not in a:
                return f"{path}/{token}: added {json.dumps(b[key])[:120]}"
            if key not in b:
                return f"{path}/{token}: dropped {json.dumps(a[key])[:120]}"
            if a[key] != b[key]:
                return first_difference(a[key], b[key], f"{path}/{token}")
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return first_difference(x, y, f"{path}/{i}")
        if len(a) != len(b):
            return f"{path}: {len(a)} items became {len(b)}"
    return f"{path or '/'}: {json.dumps(a)[:120]} became {json.dumps(b)[:120]}"


def same(label: str, exported: Any, after: Any) -> None:
    if exported != after:
        raise Refused(f"{label} changed at {first_difference(exported, after)}")


def typed_entry(adapter: Any, entry: Any) -> None:
    """Strict pydantic validation of an entry against a TypedDict, nothing dropped."""
    validated = adapter.validate_python(entry, strict=True)
    same("the entry", entry, dict(validated))


# --- the checks, one per profile -------------------------------------------------------


def check_openai(entry: dict) -> None:
    import pydantic
    from agents.strict_schema import ensure_strict_json_schema
    from openai.types.responses import FunctionToolParam

    typed_entry(pydantic.TypeAdapter(FunctionToolParam), entry)
    parameters = entry["parameters"]
    out = ensure_strict_json_schema(copy.deepcopy(parameters))
    same("ensure_strict_json_schema(parameters)", parameters, out)


def check_anthropic(entry: dict) -> None:
    import anthropic
    import pydantic
    from anthropic.types import ToolParam

    typed_entry(pydantic.TypeAdapter(ToolParam), entry)
    schema = entry["input_schema"]
    out = anthropic.transform_schema(copy.deepcopy(schema))
    same("transform_schema(input_schema)", schema, out)


def check_gemini(declaration: dict) -> None:
    from google.genai import types

    parsed = types.FunctionDeclaration.model_validate(declaration)
    dumped = parsed.model_dump(exclude_none=True, by_alias=True, mode="json")
    for member in ("parameters", "response"):
        if member in declaration:
            same(f"FunctionDeclaration {member}", declaration[member], dumped.get(member))


def check_gemini_json_schema(declaration: dict) -> None:
    from google.genai import types

    types.FunctionDeclaration.model_validate(declaration)
    for member in ("parametersJsonSchema", "responseJsonSchema"):
        if member in declaration:
            types.Schema.from_json_schema(
                json_schema=types.JSONSchema.model_validate(declaration[member]),
                api_option="GEMINI_API",
                raise_error_on_unsupported_field=True,
            )


def check_mcp(module_name: str) -> Callable[[dict], None]:
    def check(tool: dict) -> None:
        import importlib

        module = importlib.import_module(module_name)
        parsed = module.Tool.model_validate(tool, strict=True)
        same(
            f"{module_name}.Tool",
            tool,
            parsed.model_dump(by_alias=True, exclude_none=True, mode="json"),
        )

    return check


CHECKS: dict[str, Callable[[dict], None]] = {
    "mcp-2025-11-25": check_mcp("mcp_types._v2025_11_25"),
    "mcp-2026-07-28": check_mcp("mcp_types._v2026_07_28"),
    "openai": check_openai,
    "anthropic": check_anthropic,
    "gemini": check_gemini,
    "gemini-json-schema": check_gemini_json_schema,
}


def tools_of(profile: str, wire: Any) -> Iterator[tuple[str, Any]]:
    """(label, entry) for every tool of a wire array; Gemini: every function declaration."""
    if not isinstance(wire, list):
        raise Refused("the file is not a JSON array")
    for i, item in enumerate(wire):
        if profile.startswith("gemini"):
            declarations = item.get("functionDeclarations") if isinstance(item, dict) else None
            if not isinstance(declarations, list) or set(item) != {"functionDeclarations"}:
                yield f"/{i}", Refused("not a {\"functionDeclarations\": [...]} object")
                continue
            for j, declaration in enumerate(declarations):
                yield label_of(declaration, f"/{i}/functionDeclarations/{j}"), declaration
        else:
            yield label_of(item, f"/{i}"), item


def label_of(entry: Any, pointer: str) -> str:
    name = entry.get("name") if isinstance(entry, dict) else None
    return name if isinstance(name, str) else pointer


def run_profile(profile: str, path: Path) -> tuple[int, list[tuple[str, str]]]:
    """(number of tools, [(tool, reason)] of the refused ones)."""
    wire = json.loads(path.read_text(encoding="utf-8"))
    refused: list[tuple[str, str]] = []
    total = 0
    try:
        entries = list(tools_of(profile, wire))
    except Refused as error:
        return 1, [(str(path), str(error))]
    for label, entry in entries:
        total += 1
        try:
            if isinstance(entry, Refused):
                raise entry
            if not isinstance(entry, dict):
                raise Refused("the entry is not an object")
            CHECKS[profile](entry)
        except Exception as error:  # every SDK error is a refusal, reported with its reason
            reason = " ".join(f"{type(error).__name__}: {error}".split())
            refused.append((label, reason[:400]))
    return total, refused


def check_dir(directory: Path) -> int:
    found = [p for p in PROFILES if (directory / f"{p}.json").is_file()]
    if not found:
        print(f"no <profile>.json export files in {directory}", file=sys.stderr)
        return 1
    failed = False
    for profile in found:
        total, refused = run_profile(profile, directory / f"{profile}.json")
        print(f"{profile}: {total - len(refused)}/{total} accepted")
        for tool, reason in refused:
            print(f"  refused {tool}: {reason}")
        failed |= bool(refused)
    return 1 if failed else 0


def self_test(directory: Path) -> int:
    """Accepted files must pass whole; every tool of a refused file must be refused."""
    problems: list[str] = []
    for profile in PROFILES:
        accepted = directory / f"{profile}.json"
        refusals = directory / f"{profile}.refused.json"
        if not accepted.is_file() or not refusals.is_file():
            problems.append(f"{profile}: missing {accepted.name} or {refusals.name}")
            continue
        total, refused = run_profile(profile, accepted)
        print(f"{profile}: {total - len(refused)}/{total} accepted (expected {total}/{total})")
        problems += [f"{profile}: {tool} was refused: {why}" for tool, why in refused]
        if total == 0:
            problems.append(f"{profile}: {accepted.name} has no tools")
        total, refused = run_profile(profile, refusals)
        print(f"{profile}: {len(refused)}/{total} refused (expected {total}/{total})")
        for tool, why in refused:
            print(f"  refused {tool}: {why}")
        names = {tool for tool, _ in refused}
        wire = json.loads(refusals.read_text(encoding="utf-8"))
        problems += [
            f"{profile}: {label} in {refusals.name} was accepted"
            for label, _ in tools_of(profile, wire)
            if label not in names
        ]
        if total == 0:
            problems.append(f"{profile}: {refusals.name} has no tools")
    for problem in problems:
        print(f"SELF-TEST FAILED: {problem}")
    print("self-test: " + ("failed" if problems else "ok"))
    return 1 if problems else 0


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[1] == "--self-test":
        return self_test(Path(argv[2]))
    if len(argv) == 2 and not argv[1].startswith("-"):
        return check_dir(Path(argv[1]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except Exception:  # an unreadable file or a broken environment: fail loudly
        traceback.print_exc()
        sys.exit(1)
