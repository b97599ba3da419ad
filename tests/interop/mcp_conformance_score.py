#!/usr/bin/env python3
"""Prints the score of one conformance run: `MCP conformance REV: P/T scenarios passed`, then
`... not scored: P/T passed` for the scenarios the run adds beyond the required set.

Usage: mcp_conformance_score.py RESULTS_DIR REVISION REQUIRED_LIST

RESULTS_DIR is the suite's `-o` directory (`server-<scenario>-<timestamp>/checks.json` per
scenario); REQUIRED_LIST is the output of `conformance list --requirements REVISION`, whose
"Server scenarios" section is the required set (the run also runs never-scored scenarios:
pending, added after release, extensions such as tasks). A scenario passes when none of its
checks is FAILURE or WARNING (a WARNING is how the suite says a fixture tool was missing, or
a feature could not be tested). Each scenario that did not pass is listed with its failing
checks, and a required one with no result at all counts as not passed. Exits 1 when any
scenario, scored or not, did not pass, or the required list cannot be read: nothing is
expected to fail.
"""

import glob
import json
import os
import re
import sys


def required_scenarios(path: str) -> list[str]:
    names, section = [], False
    with open(path) as f:
        for line in f:
            if line.startswith("Server scenarios"):
                section = True
            elif section and line.strip().startswith("- "):
                names.append(line.strip()[2:].split()[0])
            elif section and not line.strip():
                if names:
                    break
    return names


def main() -> int:
    results, revision, required_list = sys.argv[1:4]
    # An optional fourth argument names the setup in the printed lines ("two instances").
    if len(sys.argv) > 4:
        revision = f"{revision} ({sys.argv[4]})"
    required = required_scenarios(required_list)
    if not required:
        print(f"error: no server scenarios in {required_list}", file=sys.stderr)
        return 1
    verdicts: dict[str, list[str]] = {}
    for path in sorted(glob.glob(os.path.join(results, "*", "checks.json"))):
        name = os.path.basename(os.path.dirname(path))
        scenario = re.sub(r"^server-|-\d{4}-\d{2}-\d{2}T[0-9-]+Z$", "", name)
        with open(path) as f:
            checks = json.load(f)
        verdicts[scenario] = sorted({c["id"] for c in checks if c.get("status") in ("FAILURE", "WARNING")})
    passed = [s for s in required if s in verdicts and not verdicts[s]]
    print(f"MCP conformance {revision}: {len(passed)}/{len(required)} scenarios passed")
    failed = False
    for scenario in required:
        if scenario not in verdicts:
            failed = True
            print(f"  not passed: {scenario}: no result")
        elif verdicts[scenario]:
            failed = True
            print(f"  not passed: {scenario}: {', '.join(verdicts[scenario])}")
    others = sorted(s for s in verdicts if s not in required)
    others_passed = [s for s in others if not verdicts[s]]
    print(f"MCP conformance {revision} not scored: {len(others_passed)}/{len(others)} passed")
    for scenario in others:
        if verdicts[scenario]:
            failed = True
            print(f"  not passed: {scenario}: {', '.join(verdicts[scenario])}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
