#!/usr/bin/env python3
"""check_docs.py: README, man pages and --help must agree.

What a user reads about the shim's environment variables and the tools'
options is written in four places (README.md, the man pages, each tool's
--help, the code); this check fails when they drift apart.

  check_docs.py --readme README.md --man-dir tools/man --shim-src shim \\
      --tool hipextsem-run=PATH --tool hipextsem-info=PATH ... \\
      [--version X.Y.Z] [--self-test]

Checked:
  1. Variables.  The shim's variables are the HIPEXTSEM_* literals it passes
     to hx_getenv / hx_getenv_long / secure_getenv / getenv in shim/*.[ch].
     README.md's "Environment variables" table lists exactly those, and so
     does the ENVIRONMENT section of hipextsem-run.1 (the page that documents
     the shim's environment; the launcher passes every one on).
     Variables that only tools read are not the shim's and are listed in
     TOOL_VARIABLES below, by hand: today only HIPEXTSEM_LIBRARY, the shim a
     launcher or checker uses.  Each tool's man page (ENVIRONMENT) and --help
     name the tool variables that tool reads; the README table may carry one
     only in a row that names a tool reading it.  Old names kept working (DEPRECATED below) may appear
     only in a paragraph, table row or man-page item that says they are
     deprecated (or "former name").  Any other HIPEXTSEM_* name in README,
     a man page or a --help text is reported as read by nobody.
  2. Options.  For each tool given with --tool: -h, --help and --version exit
     0, print to stdout and nothing to stderr, -h prints what --help prints,
     --version prints "TOOL VERSION".  The options --help lists (its Options
     section and Usage lines) are the options its man page documents (the
     SYNOPSIS and the tags of the OPTIONS section's .TP items).  Every option
     README.md gives a tool (after its name in code, or in a paragraph or
     table row that names only tools having it) is one --help lists.
  3. Every disagreement is printed, grouped by file; exit 1 if any, else 0.

--self-test proves the check can fail: it builds a small consistent fixture
(fake shim source, README, man pages and tools) that must pass, then breaks
it one way at a time (an option dropped from a man page, a variable added to
the README, a variable the shim reads left out of the man page, a deprecated
name unmarked, --help on stderr, ...) and each break must be reported with
the expected message; it then does the same to copies of the real files
given on the command line.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

# Variables read by the tools, never by the shim (tool names as given with
# --tool).  The tools' sources are shell and C that the shim scan does not
# see, so this table is the one place a new tool variable must be added.
TOOL_VARIABLES = {
    'HIPEXTSEM_LIBRARY': ('hipextsem-run', 'hipextsem-info', 'hipextsem-regress'),
}
# Old name -> the name that replaced it.  Still read (with a deprecation
# line), so the docs may name it, but only where they say it is deprecated.
DEPRECATED = {
    'HIPEXTSEM_SHIM': 'HIPEXTSEM_LIBRARY',
}
# The man page whose ENVIRONMENT section documents the shim's variables.
SHIM_ENV_PAGE = 'hipextsem-run'

VAR_RE = re.compile(r'\bHIPEXTSEM_[A-Z][A-Z0-9_]*')
GETENV_RE = re.compile(
    r'\b(?:hx_getenv_long|hx_getenv|secure_getenv|getenv)\s*\(\s*"(HIPEXTSEM_[A-Z0-9_]+)"')
DEPRECATION_MARK = re.compile(r'deprecat|former name|old name', re.I)
OPTION_RE = re.compile(r'^(--?[A-Za-z0-9][A-Za-z0-9-]*)(?:=.*)?$')
TOOL_RE = re.compile(r'(?<![\w-])(hipextsem-(?:run|info|regress|abicheck))(?![\w(-])')
SHELL_STOP = {'|', '||', '&&', ';', '&', '#', '>', '>>', '<', '2>', '2>&1', '\\', '--'}


class Findings:
    """Disagreements, grouped by the file (or tool output) they are in."""

    def __init__(self, root):
        self.root = root
        self.by_file = {}

    def add(self, where, what):
        if self.root and os.path.isabs(where):
            rel = os.path.relpath(where, self.root)
            if not rel.startswith('..'):
                where = rel
        self.by_file.setdefault(where, []).append(what)

    def count(self):
        return sum(len(v) for v in self.by_file.values())

    def text(self):
        out = []
        for where in sorted(self.by_file):
            out.append(f'{where}:')
            out += [f'  - {w}' for w in self.by_file[where]]
        return '\n'.join(out)


# ---------------------------------------------------------------- the shim

def strip_c_comments(src):
    """C source without comments (string literals kept, newlines kept)."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if c == '"' or c == "'":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == '\\' else 1
            out.append(src[i:j + 1])
            i = j + 1
        elif src.startswith('/*', i):
            j = src.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append('\n' * src.count('\n', i, j))
            i = j
        elif src.startswith('//', i):
            j = src.find('\n', i)
            i = n if j < 0 else j
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def shim_variables(shim_dir):
    """{name: 'file:line'} of every HIPEXTSEM_* variable the shim reads."""
    found = {}
    for name in sorted(os.listdir(shim_dir)):
        if not name.endswith(('.c', '.h')):
            continue
        path = os.path.join(shim_dir, name)
        with open(path, encoding='utf-8') as f:
            src = strip_c_comments(f.read())
        for m in GETENV_RE.finditer(src):
            line = src.count('\n', 0, m.start()) + 1
            found.setdefault(m.group(1), f'{os.path.basename(shim_dir)}/{name}:{line}')
    return found


# ---------------------------------------------------------------- markdown

def md_units(text):
    """Paragraphs, table rows, list items and code-block lines of a markdown
    text, each as (kind, text, first line number); kind is 'code' or 'prose'."""
    units, para, para_line, in_code = [], [], 0, False
    lines = text.split('\n')

    def flush():
        nonlocal para
        if para:
            units.append(('prose', ' '.join(para), para_line))
            para = []

    i = 0
    while i < len(lines):
        line, no = lines[i], i + 1
        if line.lstrip().startswith('```'):
            flush()
            in_code = not in_code
        elif in_code:
            # Join shell continuation lines into one command.
            cmd, start = line, no
            while cmd.rstrip().endswith('\\') and i + 1 < len(lines):
                i += 1
                cmd = cmd.rstrip()[:-1] + ' ' + lines[i]
            units.append(('code', cmd, start))
        elif not line.strip() or line.lstrip().startswith('#'):
            flush()
            if line.strip():
                units.append(('prose', line, no))
        elif line.lstrip().startswith('|') or re.match(r'\s*([-*]|\d+\.)\s', line):
            flush()
            para, para_line = [line], no
        else:
            if not para:
                para_line = no
            para.append(line.strip())
        i += 1
    flush()
    return units


def md_env_table(text):
    """{name: (row text, line)} of the README's environment-variable table,
    or None if it has no such section."""
    lines = text.split('\n')
    start = None
    for i, line in enumerate(lines):
        if re.match(r'#+\s+Environment(\s+variables)?\s*$', line, re.I):
            start = i + 1
            break
    if start is None:
        return None
    rows = {}
    for i in range(start, len(lines)):
        line = lines[i]
        if line.startswith('#'):
            break
        if not line.lstrip().startswith('|'):
            continue
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if not cells or re.fullmatch(r':?-+:?', cells[0]):
            continue
        for name in VAR_RE.findall(cells[0]):
            rows.setdefault(name, (line, i + 1))
    return rows


def command_options(words, known_args):
    """Options at the start of a command's arguments: stops at the first
    positional (for hipextsem-run and -regress it is the program, whose
    own options are not the tool's), '--' or a shell operator.  An option
    that --help shows with an argument takes the next word."""
    opts, i = [], 0
    while i < len(words):
        w = words[i]
        if w in SHELL_STOP or w.startswith(('#', '>', '|', '$(')):
            break
        m = OPTION_RE.match(w)
        if not m:
            break
        opts.append(m.group(1))
        if m.group(1) in known_args and '=' not in w:
            i += 1
        i += 1
    return opts


def readme_tool_options(text, tools_help):
    """[(tool names, option, line)] the README gives the tools."""
    uses = []
    for kind, unit, line in md_units(text):
        spans = [unit] if kind == 'code' else re.findall(r'`([^`]+)`', unit)
        for span in spans:
            span = span.split(' #', 1)[0] if kind == 'code' else span
            for m in TOOL_RE.finditer(span):
                tool = m.group(1)
                args = tools_help.get(tool, {}).get('args', set())
                for o in command_options(span[m.end():].split(), args):
                    uses.append(((tool,), o, line))
        if kind != 'prose':
            continue
        # Options in their own code span (`--runtime FILE`) belong to the
        # tools the sentence (or table row) names; a sentence naming none
        # may be about another command (scripts/demo --vm) and is left alone.
        for sentence in [unit] if unit.lstrip().startswith('|') else sentences(unit):
            named = tuple(sorted(set(TOOL_RE.findall(sentence))))
            if not named:
                continue
            for span in re.findall(r'`([^`]+)`', sentence):
                words = span.split()
                if words and OPTION_RE.match(words[0]):
                    for o in command_options(words, set()):
                        uses.append((named, o, line))
    return uses


def sentences(text):
    """text split into sentences, never inside a code span."""
    masked = re.sub(r'`[^`]*`', lambda m: 'x' * len(m.group(0)), text)
    cuts = [m.end() for m in re.finditer(r'[.!?]\s+(?=[A-Z`(])', masked)]
    return [text[a:b] for a, b in zip([0] + cuts, cuts + [len(text)])]


# ---------------------------------------------------------------- roff

def roff_plain(line):
    """The text of one roff line: macro name, quotes and font escapes gone."""
    line = re.sub(r'^\.(B|I|BR|RB|BI|IB|IR|RI|SM|SB|TP|IP|PP|SH|SS)\b\s*', '', line)
    line = re.sub(r'\\f(\(..|\[[^]]*\]|.)', '', line)
    line = line.replace('\\-', '-').replace('\\(em', '--').replace('\\e', '\\')
    line = line.replace('\\ ', ' ').replace('\\&', '').replace('"', ' ')
    return line


def roff_sections(text):
    """{SECTION NAME: [lines]} of a man page."""
    sections, cur = {}, None
    for line in text.split('\n'):
        m = re.match(r'\.SH\s+"?([^"]+?)"?\s*$', line)
        if m:
            cur = m.group(1).upper()
            sections[cur] = []
        elif cur is not None:
            sections[cur].append(line)
    return sections


def roff_items(lines):
    """Items of a section: text split at .TP/.PP/.IP/.LP/.P, each as
    (tag line or '', whole text)."""
    items, tag, body, want_tag = [], '', [], False
    for line in lines:
        if re.match(r'\.(TP|PP|IP|LP|P)\b', line):
            if tag or body:
                items.append((tag, ' '.join([tag] + body)))
            tag, body = '', []
            want_tag = line.startswith('.TP')
            continue
        if want_tag and not line.startswith('.\\"'):
            tag, want_tag = roff_plain(line), False
            continue
        body.append(roff_plain(line))
    if tag or body:
        items.append((tag, ' '.join([tag] + body)))
    return items


def option_tokens(text):
    return [m.group(1) for w in text.replace(',', ' ').replace('[', ' ').replace(']', ' ')
            .replace('|', ' ').split() for m in [OPTION_RE.match(w)] if m]


def man_options(text):
    """Options a man page documents: its SYNOPSIS and OPTIONS item tags."""
    sec = roff_sections(text)
    opts = set()
    for line in sec.get('SYNOPSIS', []):
        opts.update(option_tokens(roff_plain(line)))
    for tag, _ in roff_items(sec.get('OPTIONS', [])):
        opts.update(option_tokens(tag))
    return opts


# ---------------------------------------------------------------- --help

def run_tool(path, arg):
    try:
        p = subprocess.run([path, arg], capture_output=True, text=True, timeout=20,
                           stdin=subprocess.DEVNULL)
        return p.returncode, p.stdout, p.stderr
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, '', str(e)


def parse_help(text):
    """{'options': set, 'args': options taking an argument} from --help."""
    opts, args = set(), set()
    in_usage = in_options = False
    for line in text.split('\n'):
        s = line.strip()
        if s.lower().startswith('usage:') or (in_usage and s.startswith('hipextsem-')):
            words = s.split()[1:] if s.lower().startswith('usage:') else s.split()
            prev = None
            for w in words[1:]:
                m = OPTION_RE.match(w.strip('[],|'))
                if m:
                    opts.add(m.group(1))
                    prev = m.group(1)
                elif prev and re.fullmatch(r'[A-Z][A-Z0-9_]*\]*', w):
                    args.add(prev)   # --list FILE (not --check [PROGRAM])
                    prev = None
                else:
                    prev = None
            in_usage = True
            continue
        in_usage = False
        if re.match(r'options:\s*$', s, re.I):
            in_options = True
            continue
        if not in_options:
            continue
        if not s or not line.startswith(' '):
            in_options = False
            continue
        # An option line starts with a dash at the section's indentation;
        # deeper lines continue the previous option's description.
        if not s.startswith('-') or len(line) - len(line.lstrip()) > 6:
            continue
        prev = None
        for w in s.replace(',', ' ').split():
            m = OPTION_RE.match(w)
            if m:
                opts.add(m.group(1))
                prev = m.group(1)
                if '=' in w:
                    args.add(prev)
            elif prev and re.fullmatch(r'[A-Z][A-Z0-9_]*(=[A-Z0-9_]+)?', w):
                args.add(prev)
                prev = None
            else:
                break
    return {'options': opts, 'args': args}


def one_line(text):
    text = ' / '.join(l.strip() for l in text.strip().split('\n') if l.strip())
    return text if len(text) <= 160 else text[:157] + '...'


def help_paragraphs(text):
    return [p for p in re.split(r'\n\s*\n', text) if p.strip()]


# ---------------------------------------------------------------- the check

def check_names(findings, where, units, allowed, context):
    """Each HIPEXTSEM_* name in units must be allowed, or deprecated and
    marked so in its unit."""
    for unit, line in units:
        for name in sorted(set(VAR_RE.findall(unit))):
            at = f' (line {line})' if line else ''
            if name in DEPRECATED:
                if not DEPRECATION_MARK.search(unit):
                    findings.add(where, f'{name}{at} is the deprecated name of '
                                 f'{DEPRECATED[name]} but is not marked deprecated there')
            elif name not in allowed:
                findings.add(where, f'{name}{at} is read by neither the shim nor {context}')


def check(opts):
    findings = Findings(opts.root)
    shim = shim_variables(opts.shim_src)
    shim_set = {n for n in shim if n not in DEPRECATED}
    if not shim_set:
        findings.add(opts.shim_src, 'no HIPEXTSEM_* getenv call found (is this the shim?)')
    tool_vars = lambda tool: {v for v, ts in TOOL_VARIABLES.items() if tool in ts}
    all_tool_vars = set(TOOL_VARIABLES)

    # The tools: --help, -h, --version.
    helps = {}
    for tool, path in opts.tool:
        where = f'{tool} --help'
        rc, out, err = run_tool(path, '--help')
        for arg, (rc2, out2, err2) in (('--help', (rc, out, err)), ('-h', run_tool(path, '-h')),
                                       ('--version', run_tool(path, '--version'))):
            w = f'{tool} {arg}'
            if rc2 != 0:
                findings.add(w, f'exits {rc2} (expected 0)' + (f'; stderr: {one_line(err2)}'
                                                               if err2.strip() else ''))
            if not out2.strip():
                findings.add(w, 'prints nothing on stdout')
            elif err2.strip() and rc2 == 0:
                findings.add(w, f'also prints on stderr: {one_line(err2)}')
            if arg == '-h' and rc2 == 0 and out2 != out:
                findings.add(w, 'prints something other than --help')
            if arg == '--version' and rc2 == 0 and out2.strip():
                want = f'{tool} {opts.version}' if opts.version else tool
                if not out2.strip().startswith(want):
                    findings.add(w, f'prints {out2.strip()[:80]!r}, expected {want!r}')
        h = parse_help(out if rc == 0 else '')
        h['text'] = out
        helps[tool] = h
        if rc == 0:
            check_names(findings, where, [(p, 0) for p in help_paragraphs(out)],
                        shim_set | tool_vars(tool), tool)
            for n in sorted(tool_vars(tool) - set(VAR_RE.findall(out))):
                findings.add(where, f'does not mention {n}, which {tool} reads')

    # The man pages: options against --help, variables.
    for tool, _ in opts.tool:
        page = os.path.join(opts.man_dir, tool + '.1')
        if not os.path.exists(page):
            findings.add(page, f'missing: {tool} has no man page')
            continue
        with open(page, encoding='utf-8') as f:
            text = f.read()
        documented = man_options(text)
        listed = helps[tool]['options']
        if helps[tool]['text']:
            for o in sorted(listed - documented):
                findings.add(page, f'{o}: in `{tool} --help` but not in the man page\'s '
                             'SYNOPSIS or OPTIONS')
            for o in sorted(documented - listed):
                findings.add(page, f'{o}: documented in the man page but not in '
                             f'`{tool} --help`')
        sec = roff_sections(text)
        env_items = roff_items(sec.get('ENVIRONMENT', []))
        env_names = set()
        for _, body in env_items:
            if not DEPRECATION_MARK.search(body):
                env_names.update(n for n in VAR_RE.findall(body) if n not in DEPRECATED)
        want = tool_vars(tool) | (shim_set if tool == SHIM_ENV_PAGE else set())
        for n in sorted(want - env_names):
            whose = (f'read by the shim ({shim[n]})' if n in shim_set
                     else f'read by {tool}')
            findings.add(page, f'ENVIRONMENT lacks {n} ({whose})')
        units = [(body, 0) for lines in sec.values() for _, body in roff_items(lines)]
        check_names(findings, page, units, shim_set | tool_vars(tool), tool)

    # README: the environment table, other names, options.
    with open(opts.readme, encoding='utf-8') as f:
        readme = f.read()
    table = md_env_table(readme)
    if table is None:
        findings.add(opts.readme, 'no "Environment variables" section')
        table = {}
    for n in sorted(shim_set - set(table)):
        findings.add(opts.readme, f'environment table lacks {n} (read by the shim: {shim[n]})')
    for n, (row, line) in sorted(table.items()):
        if n in shim_set or n in DEPRECATED:
            continue
        if n in all_tool_vars:
            if not any(t in row for t in TOOL_VARIABLES[n]):
                findings.add(opts.readme, f'{n} (line {line}) is in the environment table '
                             f'but the shim does not read it; it is the variable of '
                             f'{", ".join(TOOL_VARIABLES[n])}: say so in its row')
        else:
            findings.add(opts.readme, f'{n} (line {line}) is in the environment table '
                         'but the shim does not read it')
    # Names the table holds were judged above.
    check_names(findings, opts.readme, [(u, l) for _, u, l in md_units(readme)],
                shim_set | all_tool_vars | set(table), 'any tool')
    for tools, o, line in readme_tool_options(readme, helps):
        known = [t for t in tools if t in helps and helps[t]['text']]
        if known and not any(o in helps[t]['options'] for t in known):
            findings.add(opts.readme, f'{o} (line {line}) is given to {" / ".join(tools)}, '
                         'whose --help does not list it')
    return findings


# ---------------------------------------------------------------- self-test

FIXTURE_SHIM = '''/* fixture */
static void f(void) { hx_getenv_long("HIPEXTSEM_DEBUG", 1, 0, 3);
\t(void)hx_getenv(
\t\t"HIPEXTSEM_TRACE");
\t/* hx_getenv("HIPEXTSEM_IN_COMMENT") */ }
'''
FIXTURE_README = '''# fixture

```sh
hipextsem-run -v ./app --not-ours      # run it
hipextsem-info --json \\
    --runtime lib.so > out.json
```

`hipextsem-info` finds it; else `--runtime FILE`.

## Environment variables

| variable | meaning |
|---|---|
| `HIPEXTSEM_DEBUG=0..3` | log level |
| `HIPEXTSEM_TRACE=file` | trace |
| `HIPEXTSEM_LIBRARY` | the shim hipextsem-run preloads |

`HIPEXTSEM_SHIM` is the deprecated name of `HIPEXTSEM_LIBRARY`.
'''
FIXTURE_MAN = {
    'hipextsem-run': r'''.TH HIPEXTSEM-RUN 1
.SH SYNOPSIS
.B hipextsem-run
.RB [ \-v ]
.I PROGRAM
.SH OPTIONS
.TP
.B \-v
Log.
.TP
.BR \-h ", " \-\-help
Help.
.TP
.B \-\-version
Version.
.SH ENVIRONMENT
.TP
.B HIPEXTSEM_LIBRARY
The shim.
.TP
.BR HIPEXTSEM_DEBUG ", " HIPEXTSEM_TRACE
Read by the shim.
''',
    'hipextsem-info': r'''.TH HIPEXTSEM-INFO 1
.SH SYNOPSIS
.B hipextsem-info
.RB [ \-\-json ]
.SH OPTIONS
.TP
.BI \-\-runtime " FILE"
Inspect FILE.
.TP
\fB\-\-json\fR
JSON.
.TP
.BR \-h ", " \-\-help
Help.
.TP
.B \-\-version
Version.
.SH ENVIRONMENT
.TP
.B HIPEXTSEM_LIBRARY
The shim to check.
.TP
.B HIPEXTSEM_SHIM
Its former name.
''',
}
FIXTURE_HELP = {
    'hipextsem-run': '''Usage: hipextsem-run [OPTIONS] [--] PROGRAM

Options:
  -v            log
  -h, --help    help
  --version     version

Environment: HIPEXTSEM_LIBRARY, HIPEXTSEM_DEBUG.
''',
    'hipextsem-info': '''Usage: hipextsem-info [OPTIONS]

Options:
  --json            JSON
  --runtime FILE    inspect FILE
  -h, --help        help
  --version         version

Environment: HIPEXTSEM_LIBRARY (the shim to check).
''',
}


def fixture_tool(path, tool, help_text, how='ok'):
    """A shell script answering -h/--help/--version as a tool should, or
    broken in one way (how)."""
    help_fd = '>&2' if how == 'help-on-stderr' else ''
    rc = 2 if how == 'version-exit-2' else 0
    with open(path, 'w') as f:
        f.write('#!/bin/sh\ncase "$1" in\n'
                f"-h|--help) cat <<'EOF' {help_fd}\n{help_text}EOF\n;;\n"
                f'--version) echo "{tool} 9.9"; exit {rc};;\n'
                '*) exit 2;;\nesac\n')
    os.chmod(path, 0o755)


def build_fixture(d, how=None):
    os.makedirs(os.path.join(d, 'shim'))
    os.makedirs(os.path.join(d, 'man'))
    shim, readme, man, helps = FIXTURE_SHIM, FIXTURE_README, dict(FIXTURE_MAN), dict(FIXTURE_HELP)
    if how == 'shim-reads-more':
        shim += 'static void g(void) { secure_getenv("HIPEXTSEM_NEW"); }\n'
    elif how == 'readme-extra-var':
        readme = readme.replace('| `HIPEXTSEM_TRACE=file` | trace |',
                                '| `HIPEXTSEM_TRACE=file` | trace |\n| `HIPEXTSEM_BOGUS=1` | x |')
    elif how == 'readme-tool-var-unnamed':
        readme = readme.replace('the shim hipextsem-run preloads', 'the shim')
    elif how == 'readme-unknown-option':
        readme = readme.replace('hipextsem-info --json', 'hipextsem-info --jsn')
    elif how == 'readme-bare-option':
        readme = readme.replace('else `--runtime FILE`', 'else `--runtme FILE`')
    elif how == 'deprecated-unmarked':
        readme = readme.replace('is the deprecated name of', 'replaces')
    elif how == 'man-drops-option':
        man['hipextsem-info'] = man['hipextsem-info'].replace(
            '.TP\n.BI \\-\\-runtime " FILE"\nInspect FILE.\n', '')
    elif how == 'man-extra-option':
        man['hipextsem-run'] = man['hipextsem-run'].replace(
            '.TP\n.B \\-v\n', '.TP\n.B \\-q\nQuiet.\n.TP\n.B \\-v\n')
    elif how == 'man-drops-shim-var':
        man['hipextsem-run'] = man['hipextsem-run'].replace(
            '.BR HIPEXTSEM_DEBUG ", " HIPEXTSEM_TRACE', '.B HIPEXTSEM_DEBUG')
    elif how == 'man-drops-tool-var':
        man['hipextsem-info'] = man['hipextsem-info'].replace(
            '.TP\n.B HIPEXTSEM_LIBRARY\nThe shim to check.\n', '')
    elif how == 'help-drops-tool-var':
        helps['hipextsem-run'] = helps['hipextsem-run'].replace('HIPEXTSEM_LIBRARY, ', '')
    elif how == 'help-unknown-var':
        helps['hipextsem-run'] = helps['hipextsem-run'].replace('HIPEXTSEM_DEBUG',
                                                                'HIPEXTSEM_DEBUGG')
    with open(os.path.join(d, 'shim', 'x.c'), 'w') as f:
        f.write(shim)
    with open(os.path.join(d, 'README.md'), 'w') as f:
        f.write(readme)
    tools = []
    for tool in ('hipextsem-run', 'hipextsem-info'):
        with open(os.path.join(d, 'man', tool + '.1'), 'w') as f:
            f.write(man[tool])
        p = os.path.join(d, tool)
        tool_how = how if tool == 'hipextsem-info' else 'ok'
        fixture_tool(p, tool, helps[tool], tool_how)
        tools.append((tool, p))
    return argparse.Namespace(readme=os.path.join(d, 'README.md'), man_dir=os.path.join(d, 'man'),
                              shim_src=os.path.join(d, 'shim'), tool=tools, version='9.9', root=d)


# (how, file the finding is in, words it must hold)
FIXTURE_BREAKS = [
    ('shim-reads-more', 'README.md', 'environment table lacks HIPEXTSEM_NEW'),
    ('shim-reads-more', 'man/hipextsem-run.1', 'ENVIRONMENT lacks HIPEXTSEM_NEW'),
    ('readme-extra-var', 'README.md', 'HIPEXTSEM_BOGUS (line 17) is in the environment table'),
    ('readme-tool-var-unnamed', 'README.md', 'it is the variable of hipextsem-run'),
    ('readme-unknown-option', 'README.md', '--jsn (line 5) is given to hipextsem-info'),
    ('readme-bare-option', 'README.md', '--runtme (line 9) is given to hipextsem-info'),
    ('deprecated-unmarked', 'README.md', 'HIPEXTSEM_SHIM (line 19) is the deprecated name'),
    ('man-drops-option', 'man/hipextsem-info.1', '--runtime: in `hipextsem-info --help` but not'),
    ('man-extra-option', 'man/hipextsem-run.1', '-q: documented in the man page but not'),
    ('man-drops-shim-var', 'man/hipextsem-run.1', 'ENVIRONMENT lacks HIPEXTSEM_TRACE'),
    ('man-drops-tool-var', 'man/hipextsem-info.1', 'ENVIRONMENT lacks HIPEXTSEM_LIBRARY'),
    ('help-drops-tool-var', 'hipextsem-run --help', 'does not mention HIPEXTSEM_LIBRARY'),
    ('help-unknown-var', 'hipextsem-run --help', 'HIPEXTSEM_DEBUGG is read by neither'),
    ('help-on-stderr', 'hipextsem-info --help', 'prints nothing on stdout'),
    ('version-exit-2', 'hipextsem-info --version', 'exits 2 (expected 0)'),
]


def copy_real(opts, d):
    """Copies of the real inputs in d, as a namespace check() takes."""
    shutil.copytree(opts.shim_src, os.path.join(d, 'shim'))
    shutil.copytree(opts.man_dir, os.path.join(d, 'man'))
    shutil.copy(opts.readme, os.path.join(d, 'README.md'))
    return argparse.Namespace(readme=os.path.join(d, 'README.md'), man_dir=os.path.join(d, 'man'),
                              shim_src=os.path.join(d, 'shim'), tool=opts.tool,
                              version=opts.version, root=d)


def edit(path, old, new):
    with open(path) as f:
        text = f.read()
    if old not in text:
        return False
    with open(path, 'w') as f:
        f.write(text.replace(old, new, 1))
    return True


def self_test(opts):
    failures = []
    with tempfile.TemporaryDirectory(prefix='check-docs-') as d:
        base = check(build_fixture(os.path.join(d, 'ok')))
        if base.count():
            failures.append('the consistent fixture is reported:\n' + base.text())
        for i, (how, where, words) in enumerate(FIXTURE_BREAKS):
            got = check(build_fixture(os.path.join(d, f'{i}-{how}'), how))
            if not any(words in w for w in got.by_file.get(where, [])):
                failures.append(f'fixture {how}: no finding in {where} with {words!r}; got:\n'
                                + (got.text() or '  (none)'))

        # The real files, each broken once more: the break must add its own
        # finding to whatever the real files already report.
        real = check(copy_real(opts, os.path.join(d, 'real')))
        real_all = {(w, x) for w, xs in real.by_file.items() for x in xs}
        breaks = []
        for tool, path in opts.tool:
            listed = parse_help(run_tool(path, '--help')[1])['options']
            page = os.path.join(opts.man_dir, tool + '.1')
            if not os.path.exists(page):
                continue
            text = open(page, encoding='utf-8').read()
            synopsis = set()
            for line in roff_sections(text).get('SYNOPSIS', []):
                synopsis.update(option_tokens(roff_plain(line)))
            # Untag the first OPTIONS item whose option --help lists and
            # neither the SYNOPSIS nor another item shows.
            at = text.find('.SH OPTIONS')
            items = list(re.finditer(r'\.TP\n([^\n]*)\n', text[at:] if at >= 0 else ''))
            tags = [set(option_tokens(roff_plain(m.group(1)))) for m in items]
            for m, tag in zip(items, tags):
                others = set().union(synopsis, *[t for t in tags if t is not tag])
                if len(tag) == 1 and not tag & others and tag <= listed:
                    o = tag.pop()
                    breaks.append((f'{tool}.1 without {o}', f'man/{tool}.1',
                                   f'{o}: in `{tool} --help`',
                                   lambda dd, t=tool, old=m.group(0): edit(
                                       os.path.join(dd, 'man', t + '.1'), old,
                                       '.TP\n.B removed\n')))
                    break

        def add_row(dd):
            path = os.path.join(dd, 'README.md')
            rows = md_env_table(open(path, encoding='utf-8').read()) or {}
            if not rows:
                return False
            row, _ = next(iter(rows.values()))
            return edit(path, row + '\n', row + '\n| `HIPEXTSEM_BOGUS=1` | nothing |\n')
        breaks.append(('README with HIPEXTSEM_BOGUS', 'README.md', 'HIPEXTSEM_BOGUS', add_row))
        breaks.append(('the shim reading HIPEXTSEM_ZZ_NEW too', 'README.md',
                       'environment table lacks HIPEXTSEM_ZZ_NEW',
                       lambda dd: open(os.path.join(dd, 'shim', 'zz_new.c'), 'w').write(
                           'void zz(void) { hx_getenv("HIPEXTSEM_ZZ_NEW"); }\n')))
        breaks.append(('hipextsem-run.1 with HIPEXTSEM_ZZ_NEW unlisted', f'man/{SHIM_ENV_PAGE}.1',
                       'ENVIRONMENT lacks HIPEXTSEM_ZZ_NEW',
                       lambda dd: open(os.path.join(dd, 'shim', 'zz_new.c'), 'w').write(
                           'void zz(void) { hx_getenv("HIPEXTSEM_ZZ_NEW"); }\n')))
        for i, (name, where, words, apply) in enumerate(breaks):
            dd = os.path.join(d, f'real{i}')
            ns = copy_real(opts, dd)
            if apply(dd) is False:
                failures.append(f'real files, {name}: the fixture edit did not apply')
                continue
            got = check(ns)
            new = [x for x in got.by_file.get(where, []) if (where, x) not in real_all]
            if not any(words in x for x in new):
                failures.append(f'real files, {name}: no new finding in {where} with '
                                f'{words!r}; new findings: {new or "(none)"}')
            else:
                print(f'ok: real files, {name}: {next(x for x in new if words in x)}')
        print(f'ok: {len(FIXTURE_BREAKS)} fixture breaks, each reported')
    if failures:
        print('FAIL: the check misses a disagreement or reports a false one:')
        print('\n'.join(failures))
        return 1
    print('PASS: the check fails on every break it was given')
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--readme', required=True)
    ap.add_argument('--man-dir', required=True)
    ap.add_argument('--shim-src', required=True)
    ap.add_argument('--tool', action='append', default=[], metavar='NAME=PATH',
                    type=lambda s: tuple(s.split('=', 1)))
    ap.add_argument('--version', default='', help='the version --version must print')
    ap.add_argument('--root', default='', help='paths in the report are relative to this')
    ap.add_argument('--self-test', action='store_true')
    opts = ap.parse_args()
    for t in opts.tool:
        if len(t) != 2:
            ap.error(f'--tool wants NAME=PATH, not {t[0]!r}')
    start = time.monotonic()
    if opts.self_test:
        rc = self_test(opts)
    else:
        found = check(opts)
        if found.count():
            print(f'FAIL: {found.count()} disagreements between README, man pages, '
                  '--help and the shim:')
            print(found.text())
            rc = 1
        else:
            print('PASS: README, man pages, --help and the shim agree')
            rc = 0
    print(f'({time.monotonic() - start:.2f} s)')
    return rc


if __name__ == '__main__':
    sys.exit(main())
