#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tools/docs_man_fixup.sh DIR - makes doxygen's man3 output in DIR safe to
# install next to other libraries' pages (make docs runs it).
#
# Doxygen names a header's page after the bare file name (ring.h.3) and,
# with MAN_LINKS, writes a link page for every struct field (free.3,
# status.3, ...), names that collide with other packages. Here:
#   - header pages become mkrt_<name>.h.3 (mkrt.h.3 stays), with the name
#     in .TH and NAME to match, and the link pages follow them;
#   - every page whose name does not start with mkrt or MKRT_ goes (field
#     link pages, the anonymous enum's page, the bug list); their content
#     is on the struct and header pages.
set -eu
dir=$1
cd "$dir"
for f in *.h.3; do
    [ -e "$f" ] || continue
    base=${f%.h.3}
    case $base in
    mkrt) name=mkrt.h ;;
    *) name=mkrt_$base.h ;;
    esac
    sed -e "1s|^\.TH \"mkrt/$base\.h\"|.TH \"$name\"|" \
        -e "s|^mkrt/$base\.h \\\\-|$name \\\\-|" "$f" > "$name.3.tmp"
    rm -f "$f"
    mv "$name.3.tmp" "$name.3"
done
for f in *.3; do
    case $f in
    mkrt*.3 | MKRT_*.3) ;;
    *) rm -f "./$f" ;;
    esac
done
for f in *.3; do
    case $(head -n 1 "$f") in
    ".so man3/mkrt.h.3") ;;
    ".so man3/"*.h.3) sed -i 's|^\.so man3/\(.*\)\.h\.3$|.so man3/mkrt_\1.h.3|' "$f" ;;
    esac
done
