# SPDX-License-Identifier: BSD-2-Clause
# mk/python.mk - the Python binding in python/ (included by the Makefile):
# the cffi extension built against $(BUILD)/libmkrt.a into $(BUILD)/python
# (python/build_ffi.py; `pip install ./python` builds the same through
# setuptools), and its pytest tests, run by `make check`. It needs cffi,
# numpy, pytest and scipy in $(PYTHON): `make deps` installs them (Debian
# packages for Debian's python3, pip for another python3 on PATH); without
# them the target fails and says so, it never skips. Under SAN (make tsan,
# make asan) it is left out: python3 cannot load a sanitized library
# without the sanitizer's runtime preloaded.

PYTHON      ?= python3
PY_OUT      := $(BUILD)/python
PY_MODULES  := cffi numpy pytest scipy
py_empty    :=
py_space    := $(py_empty) $(py_empty)
py_comma    := ,
PY_IMPORTS  := $(subst $(py_space),$(py_comma),$(PY_MODULES))

.PHONY: check-python python-deps

# The streaming graph's own library, where it is a layer (include/mkrt_stream/).
PY_LIBS     := $(STATIC) $(if $(wildcard include/mkrt_stream/stream.h),$(BUILD)/libmkrt_stream.a)

check-python: $(PY_LIBS) ## the Python binding (python/): build it against libmkrt.a, run its pytest tests
ifneq ($(strip $(SAN)),)
	@echo "check-python: not run under SAN=$(SAN) (python3 cannot load a sanitized libmkrt); plain make check runs it"
else
	@$(PYTHON) -c "import $(PY_IMPORTS)" 2>/dev/null || { \
	  echo "check-python: $(PYTHON) ($$(command -v $(PYTHON))) cannot import all of $(PY_MODULES)." \
	       "Fix: make deps (apt for Debian's python3, pip for another), or $(PYTHON) -m pip install $(PY_MODULES)" >&2; \
	  exit 1; }
	rm -rf $(PY_OUT)
	MKRT_NO_MAKE=1 MKRT_BUILD=$(BUILD) CC='$(CC)' $(PYTHON) python/build_ffi.py $(PY_OUT) >/dev/null
	cp python/mkrt/*.py $(PY_OUT)/mkrt/
	cd python/tests && PYTHONPATH=$(abspath $(PY_OUT)) PYTHONDONTWRITEBYTECODE=1 \
	    timeout -k 5 $(TEST_TIMEOUT) $(PYTHON) -m pytest -q -p no:cacheprovider
endif

# The Python modules the tests need, for a python3 on PATH that is not
# Debian's (whose packages `make deps` installs with apt first).
python-deps: ## pip install cffi, numpy, pytest and scipy where $(PYTHON) lacks them (make deps runs it)
	@if $(PYTHON) -c "import $(PY_IMPORTS)" 2>/dev/null; then \
	  echo "python-deps: $(PYTHON) has $(PY_MODULES)"; \
	else echo "python-deps: pip install $(PY_MODULES) into $$(command -v $(PYTHON))"; \
	  $(PYTHON) -m pip install -q $(PY_MODULES) || \
	  $(PYTHON) -m pip install -q --break-system-packages $(PY_MODULES); fi
