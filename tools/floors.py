#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
# tools/floors.py - checks the floor rule of tools/floors.txt (docs/design.md,
# "Source floors"): a floor includes and calls only itself and the floors
# below it.
#
#   tools/floors.py includes            every #include of the floors' and the
#                                       layers' files (the Makefile runs it
#                                       before it compiles the library)
#   tools/floors.py calls OBJ...        the symbols each object of a floor
#                                       uses from another floor (nm), in the
#                                       direction of the order
#
# Options: --root DIR (the source tree, default .), --rules FILE (default
# ROOT/tools/floors.txt). Exit status 0 when the rule holds, 1 when it is
# broken (one line per break, naming the rule and the fix), 2 on bad use.
import os
import re
import subprocess
import sys

RULE = 'the floor rule (tools/floors.txt): a floor includes and calls only itself and the floors below it'
# Where `#include "x"` and `<x>` are looked for after the including file's
# folder: the library's -I paths (Makefile CPPFLAGS), in order.
INCLUDE_DIRS = ['include', 'src', '.']
SOURCE_EXT = ('.c', '.h', '.cu')


class Rules:
    def __init__(self, path):
        self.path = path
        self.floors = []       # (name, folder), lowest first
        self.layers = []       # (name, folder)
        self.allow_inc = set()  # (file, header as written)
        self.allow_call = set()  # (from floor, to floor, symbol)
        with open(path) as f:
            for n, line in enumerate(f, 1):
                words = line.split('#', 1)[0].split()
                if not words:
                    continue
                kind = words[0]
                if kind in ('floor', 'layer') and len(words) == 3:
                    (self.floors if kind == 'floor' else self.layers).append((words[1], words[2].rstrip('/')))
                elif kind == 'allow' and len(words) == 4 and words[1] == 'include':
                    self.allow_inc.add((words[2], words[3]))
                elif kind == 'allow' and len(words) == 5 and words[1] == 'call':
                    self.allow_call.add((words[2], words[3], words[4]))
                else:
                    sys.exit('%s:%d: cannot read %r. Fix: a line is "floor NAME FOLDER", "layer NAME FOLDER", '
                             '"allow include FILE HEADER" or "allow call FLOOR FLOOR SYMBOL"' % (path, n, line.strip()))
        if not self.floors:
            sys.exit('%s: no floor declared. Fix: one "floor NAME FOLDER" line per floor, lowest first' % path)
        self.rank = {name: i for i, (name, _) in enumerate(self.floors)}
        names = [n for n, _ in self.floors + self.layers]
        if len(set(names)) != len(names):
            sys.exit('%s: a floor or layer is declared twice. Fix: one line each' % path)

    def owner(self, rel):
        """(kind, name) of the floor or layer whose folder holds rel, the
        public headers, or None."""
        if rel.startswith('include/'):
            return ('public', 'include')
        best = None
        for kind, items in (('floor', self.floors), ('layer', self.layers)):
            for name, folder in items:
                if rel.startswith(folder + '/') and (best is None or len(folder) > len(best[2])):
                    best = (kind, name, folder)
        return best[:2] if best else None

    def below(self, name):
        return ' '.join(n for n, _ in self.floors[:self.rank[name]]) or '(none)'

    def folder(self, name):
        return dict(self.floors + self.layers)[name] + '/'


def files_of(root, folder):
    out = []
    for dirpath, dirs, files in os.walk(os.path.join(root, folder)):
        dirs.sort()
        for fn in sorted(files):
            if fn.endswith(SOURCE_EXT):
                out.append(os.path.relpath(os.path.join(dirpath, fn), root))
    return out


INCLUDE_RE = re.compile(r'^\s*#\s*include\s*(.*)$')


def resolve(root, src, spec):
    """The repository path an include names, or None (a system header)."""
    quoted = spec.startswith('"')
    name = spec[1:-1]
    dirs = ([os.path.dirname(src)] if quoted else []) + INCLUDE_DIRS
    for d in dirs:
        cand = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def check_includes(root, rules):
    broken = []
    checked = 0
    for kind, items in (('floor', rules.floors), ('layer', rules.layers)):
        for name, folder in items:
            for src in files_of(root, folder):
                with open(os.path.join(root, src), errors='replace') as f:
                    lines = f.read().splitlines()
                for n, line in enumerate(lines, 1):
                    m = INCLUDE_RE.match(line)
                    if not m:
                        continue
                    spec = m.group(1).split('//', 1)[0].split('/*', 1)[0].strip()
                    if not re.match(r'^("[^"]+"|<[^>]+>)$', spec):
                        broken.append('%s:%d: #include %s: %s; the check cannot follow an include it cannot read. '
                                      'Fix: write the header\'s name in quotes' % (src, n, spec, RULE))
                        continue
                    checked += 1
                    target = resolve(root, src, spec)
                    if target is None:
                        continue
                    to = rules.owner(target)
                    why = check_edge(rules, kind, name, to, target)
                    if why and (src, spec[1:-1]) not in rules.allow_inc:
                        broken.append('%s:%d: #include %s: %s; %s' % (src, n, spec, RULE, why))
    return broken, checked


def check_edge(rules, kind, name, to, target):
    """Why an include of target from floor or layer `name` breaks the rule,
    or None."""
    if to is None:
        return ('%s is in no floor (tools/floors.txt). Fix: the library includes only the public headers and '
                'the floors\' folders' % target)
    tkind, tname = to
    if tkind == 'public' or tname == name:
        return None
    if kind == 'layer':
        if tkind == 'floor' and tname == 'base':
            return None
        return ('%s (layer %s, on the public API) includes %s of %s %s. Fix: a layer uses the public headers '
                '(include/), base/ and its own folder; what it needs of the library becomes public API'
                % (rules.folder(name), name, target, tkind, tname))
    if tkind == 'layer':
        return ('%s (floor %s) includes %s of layer %s, which is built on the library. Fix: the library does '
                'not depend on its layers' % (rules.folder(name), name, target, tname))
    if rules.rank[tname] > rules.rank[name]:
        return ('%s (floor %s) may include only itself and %s, but %s is on floor %s, above it. Fix: move what '
                'both need to a floor below both, or let the upper floor register a table of calls at create'
                % (rules.folder(name), name, rules.below(name), target, tname))
    return None


DEF_TYPES = set('TDBRCGSVWu')


def object_floor(rules, obj):
    """(kind, name) for an object built from a floor's or a layer's source:
    BUILD/obj/<source path>.o or BUILD/tobj/<source path>.o."""
    parts = obj.replace(os.sep, '/').split('/')
    for i, p in enumerate(parts):
        if p in ('obj', 'tobj'):
            own = rules.owner('/'.join(parts[i + 1:]))
            if own and own[0] != 'public':
                return own
    return None


def check_calls(rules, objs):
    defs, uses = {}, {}
    for o in objs:
        own = object_floor(rules, o)
        if own is None:
            continue
        r = subprocess.run(['nm', o], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit('floors: nm %s failed: %s. Fix: build the library first (make)' % (o, r.stderr.strip()))
        for line in r.stdout.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in DEF_TYPES:
                defs.setdefault(p[2], (own, o))
            elif len(p) == 2 and p[0] == 'U':
                uses.setdefault((own, o), set()).add(p[1])
    broken = []
    edges = set()
    for (own, o), syms in sorted(uses.items()):
        kind, name = own
        for s in sorted(syms):
            d = defs.get(s)
            if d is None or d[0] == own:
                continue
            (tkind, tname), where = d
            edges.add((name, tname))
            if kind == 'layer':
                why = None if (s.startswith('mkrt_') and not s.startswith('mkrt__')) or tname == 'base' else \
                    ('layer %s, on the public API, calls %s, an internal of %s %s (%s). Fix: what a layer needs '
                     'of the library becomes public API' % (name, s, tkind, tname, where))
            elif tkind == 'layer':
                why = ('floor %s calls %s of layer %s, which is built on the library. Fix: the library does not '
                       'depend on its layers' % (name, s, tname))
            elif rules.rank[tname] > rules.rank[name]:
                why = ('floor %s may call only itself and %s, but %s is defined on floor %s (%s), above it. Fix: '
                       'move it to a floor below both, or let the upper floor register a table of calls at create'
                       % (name, rules.below(name), s, tname, where))
            else:
                why = None
            if why and (name, tname, s) not in rules.allow_call:
                broken.append('%s: %s; %s' % (o, RULE, why))
    return broken, edges


def main(argv):
    root, rules_path = '.', None
    args = argv[1:]
    while args and args[0].startswith('--'):
        if args[0] == '--root' and len(args) > 1:
            root = args[1]
        elif args[0] == '--rules' and len(args) > 1:
            rules_path = args[1]
        else:
            break
        args = args[2:]
    if not args or args[0] not in ('includes', 'calls') or (args[0] == 'calls' and len(args) < 2):
        sys.stderr.write('usage: tools/floors.py [--root DIR] [--rules FILE] includes | calls OBJ...\n')
        return 2
    rules = Rules(rules_path or os.path.join(root, 'tools', 'floors.txt'))
    for name, folder in rules.floors + rules.layers:
        if not os.path.isdir(os.path.join(root, folder)):
            sys.stderr.write('%s: %s %s: no folder %s. Fix: declare the folders that exist\n'
                             % (rules.path, name, folder, folder))
            return 1
    if args[0] == 'includes':
        broken, checked = check_includes(root, rules)
        what = '%d includes of %d floors and %d layers' % (checked, len(rules.floors), len(rules.layers))
    else:
        broken, edges = check_calls(rules, args[1:])
        what = '%d calls between floors (%s)' % (len(edges), ' '.join('%s->%s' % e for e in sorted(edges)))
    for b in broken:
        print(b, file=sys.stderr)
    if broken:
        print('floors: %d break(s) of %s (order: %s)' % (len(broken), RULE, ' < '.join(n for n, _ in rules.floors)),
              file=sys.stderr)
        return 1
    print('floors: %s follow the order %s' % (what, ' < '.join(n for n, _ in rules.floors)))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
