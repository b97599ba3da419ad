"""Checks the explorer's DOM as headless Chromium rendered it (`--dump-dom`).

    python3 explorer_dom.py DOM.html OPENAPI.json PROGRAMS_DIR

The expected operations are the served OpenAPI document's `x-rcip-operations` (the
registry, as the server publishes it); the expected installed versions are the packages of
PROGRAMS_DIR (what `rcip serve --programs` installed). One line per check, then
`explorer: N passed, N failed`; exit status 1 on any failure. Standard library only.
"""

import json
import pathlib
import sys
from html.parser import HTMLParser

# Elements that could submit, run or load anything: the page must have none.
ACTIVE = {"form", "script", "input", "button", "textarea", "select", "iframe", "object", "embed"}


class Dom(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags = {}
        self.operations = []  # data-operation of each section
        self.programs = []  # (class, data-program) of each section
        self.h3_code = []  # the text of each <h3><code>
        self.title = ""
        self.text = []
        self._stack = []
        self.handlers = []  # on* attributes anywhere

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags[tag] = self.tags.get(tag, 0) + 1
        self.handlers += [name for name in attrs if name.startswith("on")]
        if tag == "section" and "data-operation" in attrs:
            self.operations.append(attrs["data-operation"])
        if tag == "section" and "data-program" in attrs:
            self.programs.append((attrs.get("class", ""), attrs["data-program"]))
        self._stack.append(tag)

    def handle_endtag(self, tag):
        while self._stack:
            if self._stack.pop() == tag:
                break

    def handle_data(self, data):
        self.text.append(data)
        if self._stack[-2:] == ["h3", "code"]:
            self.h3_code.append(data)
        if self._stack[-1:] == ["title"]:
            self.title += data


def main():
    dom_path, openapi_path, programs_dir = sys.argv[1:4]
    dom = Dom()
    dom.feed(pathlib.Path(dom_path).read_text(encoding="utf-8"))
    document = json.loads(pathlib.Path(openapi_path).read_text(encoding="utf-8"))
    names = [entry["operation"] for entry in document["x-rcip-operations"]]
    installed = []
    for path in sorted(pathlib.Path(programs_dir).glob("*.json")):
        package = json.loads(path.read_text(encoding="utf-8"))
        installed.append((f"{package['namespace']}/{package['version']}", package))

    results = []

    def check(name, ok, detail=""):
        results.append(ok)
        print(f"{'ok  ' if ok else 'FAIL'} {name}{'' if ok else ': ' + detail}")

    text = "".join(dom.text)
    check("the page rendered (its title)", dom.title == "rcip explorer", repr(dom.title))
    check(
        f"a section for each of the {len(names)} operations",
        sorted(dom.operations) == sorted(names) and len(names) > 0,
        f"sections {sorted(dom.operations)} vs the document's {sorted(names)}",
    )
    missing = [name for name in names if name not in dom.h3_code]
    check("each operation's name shown as a heading", not missing, f"missing {missing}")
    installed_sections = {program for cls, program in dom.programs if "installed" in cls.split()}
    for program, package in installed:
        check(
            f"installed version {program} shown",
            program in installed_sections,
            f"installed sections: {sorted(installed_sections)}",
        )
        absent = [t for t in package.get("types", {}) if f"{package['namespace']}/{t}" not in text]
        check(f"{program}'s record types shown", not absent, f"missing {absent}")
    check("at least one program version on the page", bool(installed_sections), "none")
    active = {tag: n for tag, n in dom.tags.items() if tag in ACTIVE}
    check("no form, script or other active element", not active, f"found {active}")
    check("no event handler attribute", not dom.handlers, f"found {dom.handlers}")

    passed = sum(results)
    failed = len(results) - passed
    print(f"explorer: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
