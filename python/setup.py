# SPDX-License-Identifier: BSD-2-Clause
"""Builds mkrt._mkrt with cffi (build_ffi.py: runs the repository's make for
libmkrt.a, links it, and ships the liburcu shared objects beside the
extension). The version is the C library's, read from include/mkrt/version.h."""
import os
import re
import sys

from setuptools import setup
from setuptools.command.build_ext import build_ext

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_ffi  # noqa: E402  (after sys.path: the builder sits beside this file)


def version():
    with open(os.path.join(build_ffi.ROOT, "include", "mkrt", "version.h")) as f:
        return re.search(r'#define MKRT_VERSION_STRING "([^"]+)"', f.read()).group(1)


class BuildExt(build_ext):
    """build_ext that also copies liburcu's shared objects next to the extension (rpath $ORIGIN)."""

    def run(self):
        super().run()
        for ext in self.extensions:
            build_ffi.copy_urcu(os.path.dirname(self.get_ext_fullpath(ext.name)))


setup(
    version=version(),
    cmdclass={"build_ext": BuildExt},
    cffi_modules=["build_ffi.py:ffibuilder"],
    package_data={"mkrt": ["liburcu*.so*"]},
)
