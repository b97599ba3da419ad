#!/usr/bin/env python3
"""Prints the score of one conformance run: `MCP conformance REV: P/T scenarios passed`.

Usage: mcp_conformance_score.py RESULTS_DIR REVISION REQUIRED_LIST

RESULTS_DIR is the suite's `-o` directory (`server-<scenario>-<timestamp>/checks.json` per
scenario); REQUIRED_LIST is the output of `conformance list --requirements REVISION`, whose
"Server scenarios" section is the required set (the run also reports never-scored
scenarios: pending, added after release, extensions; they are not counted). A scenario
passes when none of its checks is FAILURE or WARNING, the suite's own rule for its baseline.
Each required scenario that did not pass is listed with its failing checks, and one with no
result at all counts as not passed. Exits 1 if the required list cannot be read.
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
    for scenario in required:
        if scenario not in verdicts:
            print(f"  not passed: {scenario}: no result")
        elif verdicts[scenario]:
            print(f"  not passed: {scenario}: {', '.join(verdicts[scenario])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
