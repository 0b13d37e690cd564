#!/usr/bin/env python3
"""Docs as tests: run every C++, Python and shell snippet of README.md and docs/*.md.

    python3 tests/docs/docs_test.py [--build-dir build/main] [--page docs/python.md ...] [-v]

What runs (fenced blocks, by their info string):

- ```cpp      compiled against the headers. All C++ snippets of all pages go into ONE translation
              unit (fast), one namespace per page, with `#line` directives so that a compiler error
              names the page and the line of the snippet (`docs/getting-started.md:47: error: ...`).
              `#include` lines are hoisted to the top of the unit; <cstdio>, <cstdint>, <string>,
              <vector> and <iostream> are always included. By default a snippet is the BODY of a
              function (statements); mark declarations (namespaces, structs, free functions,
              `int main`) `<!-- docs-test: toplevel -->`. The unit is linked (yaml-cpp) and a snippet
              followed by a ```text block (or marked `run`) is executed and its output compared.
- ```python   executed against the installed `gpusched` package; the snippets of one page share
              one interpreter and one namespace, in page order (like a notebook).
- ```sh ```bash  executed by `bash -e` (a whole block; `# comments` are fine).
- ```console  lines starting with `$ ` are commands, the lines after them their expected output.
- anything else (```cmake, ```yaml, ```text, untagged blocks) is not run.

Every snippet runs in a scratch folder that links every top-level entry of the checkout (so
`data/...`, `build/main/...`, `examples/...` resolve, and files a snippet writes land outside the
tree). `build/main` is the one build folder the docs name; `--build-dir DIR` maps it to DIR.

Expected output: a ```text block right after a snippet (only blank lines or docs-test comments in
between) is compared with what the snippet printed: line by line, whitespace-separated tokens,
numbers (`95.44`, `12%`, `2,398`) equal within the snippet's `tolerance` (default 0); a line `...`
matches any number of lines.

Directives: an HTML comment right before the fence (blank lines allowed), invisible on GitHub:

    <!-- docs-test: skip reason="needs a GPU" -->            not run; the reason is printed
    <!-- docs-test: fragment reason="a signature list" -->    not compiled (an excerpt); reason printed
    <!-- docs-test: toplevel -->                             C++: declarations at namespace scope
    <!-- docs-test: continue -->                             C++: same function as the previous
                                                             snippet of the page (shares its locals)
    <!-- docs-test: run -->                                  C++: execute even without a text block
    <!-- docs-test: tolerance=0.05 -->                       numbers may differ by 0.05 (or `1%`)
    <!-- docs-test: timeout=120 -->                          seconds (default 60) for Python / shell
    <!-- docs-test: prelude
    struct inventory { ... };                                hidden code placed before the snippet
    -->                                                      (C++: at namespace scope, before its
                                                             function; Python/shell: run first)

Several directives may share one comment (`<!-- docs-test: continue run -->`). Prefer a prelude
that defines what a snippet assumes (the host's `inventory`, a `pod`) to `fragment` or `skip`: a
skipped snippet can rot. A page whose snippet fails makes the script exit 1; the last line is
`docs test: N snippets run, M passed, K skipped (reasons)`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUN_LANGS = {"cpp": "cpp", "c++": "cpp", "python": "python", "py": "python", "sh": "sh", "bash": "sh", "console": "console"}
DOC_BUILD = "build/main"
DIRECTIVE = re.compile(r"<!--\s*docs-test:(.*?)-->", re.S)
FENCE_OPEN = re.compile(r"^```([\w+-]*)\s*$")
NUMBER = re.compile(r"^[+-]?(\d[\d,]*\.?\d*|\.\d+)([eE][+-]?\d+)?%?$")


@dataclass
class Snippet:
    page: str
    line: int                      # line of the first code line (1-based)
    lang: str
    code: str
    opts: dict = field(default_factory=dict)
    prelude: str = ""
    prelude_line: int = 0
    expected: str | None = None
    expected_line: int = 0
    status: str = "pending"        # passed / failed / skipped
    message: str = ""

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def parse_directive(text: str) -> tuple[dict, str]:
    """`skip reason="x" tolerance=1` -> ({'skip': True, 'reason': 'x', ...}, prelude code)."""
    head, _, rest = text.partition("\n")
    opts: dict = {}
    prelude = ""
    for tok in shlex.split(head):
        k, eq, v = tok.partition("=")
        opts[k] = v if eq else True
    if "prelude" in opts:
        prelude = rest
    elif rest.strip():
        raise ValueError("text after the first line of a docs-test comment is only allowed with `prelude`")
    return opts, prelude


def parse_page(path: Path) -> list[Snippet]:
    rel = str(path.relative_to(ROOT))
    lines = path.read_text().split("\n")
    out: list[Snippet] = []
    pending: dict = {}
    prelude, prelude_line = "", 0
    last: Snippet | None = None      # snippet whose output a following text block may be
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("<!--") and "docs-test:" in line:
            start = i
            text = line
            while "-->" not in text:
                i += 1
                if i >= len(lines):
                    raise SystemExit(f"{rel}:{start + 1}: unterminated docs-test comment")
                text += "\n" + lines[i]
            m = DIRECTIVE.search(text)
            try:
                opts, pre = parse_directive(m.group(1).lstrip(" ") if m else "")
            except ValueError as e:
                raise SystemExit(f"{rel}:{start + 1}: {e}")
            pending.update(opts)
            if pre:
                prelude, prelude_line = pre, start + 2
            i += 1
            continue
        m = FENCE_OPEN.match(line)
        if m:
            lang = m.group(1).lower()
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            body = "\n".join(lines[i + 1:j])
            if lang == "text" and last is not None and last.expected is None:
                last.expected, last.expected_line = body, i + 2
                last = None
            elif lang in RUN_LANGS:
                s = Snippet(rel, i + 2, RUN_LANGS[lang], body, pending, prelude, prelude_line)
                out.append(s)
                last = s
            else:
                last = None
                if pending:
                    raise SystemExit(f"{rel}:{i + 1}: a docs-test comment before a ```{lang} block (not run)")
            pending, prelude, prelude_line = {}, "", 0
            i = j + 1
            continue
        if line.strip():
            if pending:
                raise SystemExit(f"{rel}:{i + 1}: a docs-test comment must come right before a fenced block")
            last = None
        i += 1
    return out


# ---------------------------------------------------------------------------------- output compare

def _num(tok: str) -> float | None:
    if not NUMBER.match(tok):
        return None
    return float(tok.rstrip("%").replace(",", ""))


def _tok_equal(a: str, b: str, tol: str | None) -> bool:
    if a == b:
        return True
    x, y = _num(a), _num(b)
    if x is None or y is None or tol is None:
        return False
    if tol.endswith("%"):
        return abs(x - y) <= abs(y) * float(tol[:-1]) / 100
    return abs(x - y) <= float(tol) + 1e-12


def compare_output(got: str, expected: str, tol: str | None) -> str:
    """'' when `got` matches `expected`, else a short description of the first difference."""
    g = [ln.split() for ln in got.strip("\n").split("\n")] if got.strip() else []
    e = [ln.split() for ln in expected.strip("\n").split("\n")] if expected.strip() else []

    def match(gi: int, ei: int) -> str:
        while ei < len(e):
            if e[ei] == ["..."]:
                if ei + 1 == len(e):
                    return ""
                for k in range(gi, len(g) + 1):
                    if not match(k, ei + 1):
                        return ""
                return f"no output after line {gi + 1} matches: {' '.join(e[ei + 1])}"
            if gi >= len(g):
                return f"output ended; expected: {' '.join(e[ei])}"
            a, b = g[gi], e[ei]
            if len(a) != len(b) or not all(_tok_equal(x, y, tol) for x, y in zip(a, b)):
                return f"line {gi + 1}: got `{' '.join(a)}`, expected `{' '.join(b)}`"
            gi, ei = gi + 1, ei + 1
        return "" if gi == len(g) else f"extra output line {gi + 1}: {' '.join(g[gi])}"

    return match(0, 0)


# ---------------------------------------------------------------------------------- scratch folder

def make_scratch(build_dir: Path) -> Path:
    d = Path(tempfile.mkdtemp(prefix="gpusched-docs-"))
    for entry in ROOT.iterdir():
        if entry.name in {"build", ".git"}:
            continue
        (d / entry.name).symlink_to(entry)
    (d / "build").mkdir()
    (d / DOC_BUILD).symlink_to(build_dir.resolve())
    return d


def map_build(text: str, build_rel: str) -> str:
    return text if build_rel == DOC_BUILD else text.replace(DOC_BUILD + "/", build_rel + "/")


# ---------------------------------------------------------------------------------- C++

STD_HEADERS = ["<cstdint>", "<cstdio>", "<iostream>", "<string>", "<vector>"]


def cxx_flags(build_dir: Path) -> list[str]:
    """Include paths, defines and the standard of the build's own compile commands."""
    db = build_dir / "compile_commands.json"
    flags = ["-std=c++20", f"-I{ROOT / 'include'}", "-isystem", "/usr/include/eigen3"]
    if db.exists():
        entries = json.loads(db.read_text())
        mine = [x for x in entries if x["file"].startswith(str(ROOT / "examples") + "/")]
        pick = mine[0] if mine else None
        if pick:
            args = shlex.split(pick["command"]) if "command" in pick else pick["arguments"]
            flags, it = [], iter(args[1:])
            for a in it:
                if a in ("-isystem", "-I"):
                    flags += [a, next(it)]
                elif a.startswith(("-I", "-D", "-std=")):
                    flags.append(a)
    return flags


def cxx_unit(snips: list[Snippet]) -> tuple[str, dict[int, Snippet]]:
    """One translation unit for the given snippets; returns (source, {id: runnable snippet})."""
    includes: list[str] = [f"#include {h}" for h in STD_HEADERS]
    pages: dict[str, list[str]] = {}
    runnable: dict[int, Snippet] = {}
    open_fn: dict[str, bool] = {}
    fn_of: dict[str, int] = {}

    def hoist(code: str) -> str:
        kept = []
        for ln in code.split("\n"):
            if ln.strip().startswith("#include"):
                inc = ln.strip().split("//")[0].strip()
                if inc not in includes:
                    includes.append(inc)
                kept.append("")        # keep line numbers
            else:
                kept.append(ln)
        return "\n".join(kept)

    for n, s in enumerate(snips):
        body = pages.setdefault(s.page, [])
        if s.prelude:
            if open_fn.get(s.page):
                body.append("}")
                open_fn[s.page] = False
            body.append(f'#line {s.prelude_line} "{s.page}"\n{hoist(s.prelude)}')
        code = hoist(s.code)
        wants_run = s.expected is not None or "run" in s.opts
        if "toplevel" in s.opts:
            if open_fn.get(s.page):
                body.append("}")
                open_fn[s.page] = False
            has_main = re.search(r"\bint\s+main\s*\(", code) is not None
            if has_main:
                body.append(f"#define main docs_main_{n}")
            body.append(f'#line {s.line} "{s.page}"\n{code}')
            if has_main:
                body.append("#undef main")
                if wants_run:
                    runnable[n] = s
            elif wants_run:
                s.status, s.message = "failed", "a toplevel snippet without `int main` cannot run"
            continue
        if "continue" in s.opts and open_fn.get(s.page):
            body.append(f'#line {s.line} "{s.page}"\n{code}')
        else:
            if open_fn.get(s.page):
                body.append("}")
            body.append(f'void docs_snippet_{n}() {{\n#line {s.line} "{s.page}"\n{code}')
            open_fn[s.page] = True
            fn_of[s.page] = n
        if wants_run:   # a continued function runs as a whole, under the id of its first snippet
            runnable[n] = s
            s.opts["_fn"] = fn_of[s.page]
    for page in pages:
        if open_fn.get(page):
            pages[page].append("}")
    src = ["// generated by tests/docs/docs_test.py: every C++ snippet of README.md and docs/*.md"]
    src += includes
    for k, (page, parts) in enumerate(pages.items()):
        src.append(f"namespace docs_page_{k} {{  // {page}")
        src += parts
        src.append(f"}}  // namespace docs_page_{k}")
    src.append('#line 1 "docs_main"')
    src.append("#include <cstring>\nint main(int argc, char** argv) {\n  if (argc < 2) return 2;\n  const int id = std::atoi(argv[1]);")
    page_ns = {page: k for k, page in enumerate(pages)}
    for n, s in runnable.items():
        ns = f"docs_page_{page_ns[s.page]}"
        fn = f"docs_main_{n}" if "toplevel" in s.opts else f"docs_snippet_{s.opts['_fn']}"
        call = f"return {ns}::{fn}();" if "toplevel" in s.opts else f"{ns}::{fn}(); return 0;"
        src.append(f"  if (id == {n}) {{ {call} }}")
    src.append("  return 3;\n}")
    return "\n".join(src) + "\n", runnable


def run_cxx(snips: list[Snippet], build_dir: Path, work: Path, scratch: Path, verbose: bool) -> None:
    todo = [s for s in snips if s.status == "pending"]
    if not todo:
        return
    flags = cxx_flags(build_dir)
    for attempt in range(3):
        src, runnable = cxx_unit(todo)
        cpp, exe = work / "docs_snippets.cpp", work / "docs_snippets"
        cpp.write_text(src)
        cmd = ["g++", *flags, "-O0", "-w", str(cpp), "-o", str(exe), "-lyaml-cpp", "-pthread"]
        t0 = time.monotonic()
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if verbose:
            print(f"  C++: {len(todo)} snippets in one unit, compiled in {time.monotonic() - t0:.1f} s", flush=True)
        if r.returncode == 0:
            break
        errs = r.stderr
        # Only an error, or the snippet line an instantiation came from, blames a snippet (a note
        # such as "suggested alternatives: docs_page_4::pod" names another page's prelude).
        blame = "\n".join(ln for ln in errs.split("\n") if ": error:" in ln or "required from here" in ln)
        bad_pages = set()
        for s in todo:
            hits = [m for m in re.finditer(re.escape(s.page) + r":(\d+):", blame)]
            lines_of = range(s.line, s.line + s.code.count("\n") + 1)
            pre_lines = range(s.prelude_line, s.prelude_line + s.prelude.count("\n") + 1) if s.prelude else range(0)
            mine = [m for m in hits if int(m.group(1)) in lines_of or int(m.group(1)) in pre_lines]
            if mine:
                first = blame[max(0, blame.rfind("\n", 0, mine[0].start()) + 1):]
                s.status, s.message = "failed", "does not compile:\n" + "\n".join(first.split("\n")[:6])
                bad_pages.add(s.page)
        if not bad_pages:   # an error outside any snippet: fail them all with the log's head
            for s in todo:
                s.status, s.message = "failed", "the snippets' unit does not compile:\n" + "\n".join(errs.split("\n")[:12])
            return
        for s in todo:      # the page is broken: its other snippets are not run on their own
            if s.page in bad_pages and s.status == "pending":
                s.status, s.message = "failed", "not compiled: another snippet of the page does not compile"
        todo = [s for s in todo if s.status == "pending"]
        if not todo:
            return
    else:
        for s in todo:
            s.status, s.message = "failed", "the snippets' unit does not compile after dropping the broken pages"
        return
    for n, s in runnable.items():
        if s.status != "pending":
            continue
        r = subprocess.run([str(exe), str(n)], cwd=scratch, capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            s.status, s.message = "failed", f"exit status {r.returncode}:\n{r.stderr[-800:]}"
        elif s.expected is not None and (d := compare_output(r.stdout, s.expected, s.opts.get("tolerance"))):
            s.status, s.message = "failed", f"output differs from the text block at line {s.expected_line}: {d}"
    for s in todo:
        if s.status == "pending":
            s.status = "passed"


# ---------------------------------------------------------------------------------- Python

PY_RUNNER = r'''
import contextlib, io, json, sys, traceback
jobs = json.load(sys.stdin)
ns = {"__name__": "__docs__"}
out = []
for j in jobs:
    buf = io.StringIO()
    ok, err = True, ""
    try:
        with contextlib.redirect_stdout(buf):
            if j["prelude"]:
                exec(compile("\n" * (j["prelude_line"] - 1) + j["prelude"], j["page"], "exec"), ns)
            exec(compile("\n" * (j["line"] - 1) + j["code"], j["page"], "exec"), ns)
    except BaseException:
        ok, err = False, traceback.format_exc(limit=-3)
    out.append({"ok": ok, "stdout": buf.getvalue(), "error": err})
sys.__stdout__.write("\n@@DOCS-JSON@@" + json.dumps(out))
'''


def run_python(snips: list[Snippet], scratch: Path) -> None:
    by_page: dict[str, list[Snippet]] = {}
    for s in snips:
        if s.status == "pending":
            by_page.setdefault(s.page, []).append(s)
    for page, group in by_page.items():
        jobs = [{"page": s.page, "line": s.line, "code": s.code, "prelude": s.prelude,
                 "prelude_line": s.prelude_line} for s in group]
        timeout = sum(float(s.opts.get("timeout", 60)) for s in group)
        env = dict(os.environ, MPLBACKEND="Agg", GPUSCHED_PROGRESS="0")
        try:
            r = subprocess.run([sys.executable, "-c", PY_RUNNER], input=json.dumps(jobs), cwd=scratch,
                               capture_output=True, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            for s in group:
                s.status, s.message = "failed", f"the page's Python snippets took more than {timeout:.0f} s"
            continue
        _, _, payload = r.stdout.rpartition("@@DOCS-JSON@@")
        if not payload:
            for s in group:
                s.status, s.message = "failed", f"the Python runner died:\n{r.stderr[-800:]}"
            continue
        for s, res in zip(group, json.loads(payload)):
            if not res["ok"]:
                s.status, s.message = "failed", "raised:\n" + res["error"].strip()
            elif s.expected is not None and (d := compare_output(res["stdout"], s.expected, s.opts.get("tolerance"))):
                s.status, s.message = "failed", f"output differs from the text block at line {s.expected_line}: {d}"
            else:
                s.status = "passed"


# ---------------------------------------------------------------------------------- shell

def run_shell(snips: list[Snippet], scratch: Path, build_rel: str) -> None:
    for s in snips:
        if s.status != "pending":
            continue
        timeout = float(s.opts.get("timeout", 60))
        steps: list[tuple[str, str | None]] = []
        if s.lang == "console":
            for ln in s.code.split("\n"):
                if ln.startswith("$ "):
                    steps.append((ln[2:], ""))
                elif steps:
                    steps[-1] = (steps[-1][0], (steps[-1][1] or "") + ln + "\n")
            steps = [(c, o if o and o.strip() else None) for c, o in steps]
        else:
            steps = [(s.code, s.expected)]
        for cmd, expected in steps:
            script = (s.prelude + "\n" if s.prelude else "") + map_build(cmd, build_rel)
            try:
                r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=scratch,
                                   capture_output=True, text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                s.status, s.message = "failed", f"took more than {timeout:.0f} s (mark it skip with a reason, or raise timeout=)"
                break
            if r.returncode != 0:
                s.status, s.message = "failed", f"exit status {r.returncode}:\n{(r.stderr or r.stdout)[-800:]}"
                break
            if expected is not None and (d := compare_output(r.stdout, expected, s.opts.get("tolerance"))):
                s.status, s.message = "failed", f"output differs: {d}"
                break
        else:
            s.status = "passed"


# ---------------------------------------------------------------------------------- main

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build-dir", default=DOC_BUILD, help="the build folder the docs' build/main stands for")
    ap.add_argument("--page", action="append", help="only these pages (paths from the repository root)")
    ap.add_argument("--lang", action="append", choices=["cpp", "python", "sh", "console"], help="only these kinds")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    if a.page:
        pages = [ROOT / p for p in a.page]
    snips = [s for p in pages for s in parse_page(p)]
    if a.lang:
        snips = [s for s in snips if s.lang in a.lang]
    for s in snips:
        if "skip" in s.opts or "fragment" in s.opts:
            kind = "skip" if "skip" in s.opts else "fragment"
            reason = s.opts.get("reason")
            if not isinstance(reason, str) or not reason.strip():
                s.status, s.message = "failed", f"`{kind}` needs reason=\"...\""
            else:
                s.status, s.message = "skipped", f"{kind}: {reason}"
    build_dir = (ROOT / a.build_dir).resolve()
    build_rel = os.path.relpath(build_dir, ROOT)
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="gpusched-docs-build-") as work:
        scratch = make_scratch(build_dir)
        try:
            run_cxx([s for s in snips if s.lang == "cpp"], build_dir, Path(work), scratch, a.verbose)
            run_python([s for s in snips if s.lang == "python"], scratch)
            run_shell([s for s in snips if s.lang in ("sh", "console")], scratch, build_rel)
        finally:
            subprocess.run(["rm", "-rf", str(scratch)])
    failed = [s for s in snips if s.status == "failed"]
    skipped = [s for s in snips if s.status == "skipped"]
    passed = [s for s in snips if s.status == "passed"]
    for s in snips:
        if a.verbose or s.status != "passed":
            print(f"{s.status.upper():8} {s.where} ({s.lang}) {s.message.split(chr(10))[0] if s.status == 'skipped' else ''}")
            if s.status == "failed":
                print("         " + s.message.replace("\n", "\n         "))
    reasons = "; ".join(f"{s.where} {s.message}" for s in skipped)
    print(f"docs test: {len(snips) - len(skipped)} snippets run, {len(passed)} passed, {len(skipped)} skipped"
          f"{' (' + reasons + ')' if skipped else ''}; {len(failed)} failed ({time.monotonic() - t0:.0f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
