# SPDX-License-Identifier: BSD-2-Clause
# mk/planlib.mk - the optional planning library libmkrt_planlib (included
# by the Makefile): the seeds' launch policy, sizing and priority
# accounting as a library of pure functions that the runtime does not
# call (issue 23: libmkrt.so exports only planner functions its data path
# calls; the plan's decisions are src/plan/decide.c). Its sources are
# planlib/src/*.c (not src/*/, which all go into libmkrt), its headers
# include/mkrt_planlib/*.h, its tests planlib/tests/test_*.c (run by
# `make check`). It needs libmkrt's public headers only, and links libc,
# libm and libmkrt (planners.c composes libmkrt's public planners).

PL_SRCS      := $(sort $(wildcard planlib/src/*.c))
PL_OBJS      := $(PL_SRCS:%.c=$(BUILD)/obj/%.o)
PL_STATIC    := $(BUILD)/libmkrt_planlib.a
PL_SHARED    := $(BUILD)/libmkrt_planlib.so.$(VERSION)
PL_HEADERS   := $(sort $(wildcard include/mkrt_planlib/*.h))
PL_TEST_BINS := $(patsubst planlib/tests/%.c,$(BUILD)/planlib/tests/%,$(sort $(wildcard planlib/tests/test_*.c)))
PL_NULL_PROBE := $(BUILD)/planlib/tests/null_probe

.PHONY: planlib check-planlib install-planlib

planlib: $(PL_STATIC) $(PL_SHARED) ## the optional planning library libmkrt_planlib (.a and .so)

$(PL_STATIC): $(PL_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(PL_SHARED): $(PL_OBJS) planlib/src/libmkrt_planlib.map $(BUILD)/libmkrt.so
	$(CC) -shared -Wl,-soname,libmkrt_planlib.so.$(SOVERSION) -Wl,--version-script=planlib/src/libmkrt_planlib.map \
	    -Wl,--no-undefined $(LDFLAGS) -o $@ $(PL_OBJS) -L$(BUILD) -lmkrt -lm
	ln -sf libmkrt_planlib.so.$(VERSION) $(BUILD)/libmkrt_planlib.so.$(SOVERSION)
	ln -sf libmkrt_planlib.so.$(VERSION) $(BUILD)/libmkrt_planlib.so

$(BUILD)/planlib/tests/%: $(BUILD)/tobj/planlib/tests/%.o $(PL_STATIC) $(TEST_HELPLIB) $(TEST_STATIC)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(eval $(call layer_null_probe,planlib,$(PL_HEADERS),$(PL_STATIC),$(PL_NULL_PROBE)))

# `make check` runs these too (mk/tests.mk).
check: $(PL_TEST_BINS) $(PL_NULL_PROBE) $(PL_SHARED)

check-planlib: $(PL_TEST_BINS) $(PL_NULL_PROBE) $(PL_SHARED) ## libmkrt_planlib's tests, headers, API docs and exports
	prove -f --exec 'timeout -k 5 $(TEST_TIMEOUT)' $(PL_TEST_BINS) $(PL_NULL_PROBE)
	@for h in $(PL_HEADERS); do \
	  echo "#include \"$${h#include/}\"" | $(CC) $(CPPFLAGS) $(WARN) -fsyntax-only -x c - \
	    || { echo "header $$h does not compile on its own"; exit 1; }; \
	done; echo "headers: $(words $(PL_HEADERS)) planlib headers compile on their own"
	$(call layer_docs_check,planlib)
	@nm -D --defined-only $(PL_SHARED) | awk '{ sub(/@.*/, "", $$NF); print $$NF }' | \
	  grep -v '^mkrt_[a-z0-9]' | grep -v '^$$' | grep -v '^MKRT' > $(BUILD)/planlib_extra_exports.txt || true; \
	if [ -s $(BUILD)/planlib_extra_exports.txt ]; then echo "libmkrt_planlib exports non-public symbols:"; \
	  cat $(BUILD)/planlib_extra_exports.txt; exit 1; fi; echo "exports: libmkrt_planlib.so exports mkrt_* only"

install-planlib: $(PL_STATIC) $(PL_SHARED) ## libmkrt_planlib, include/mkrt_planlib/ and mkrt-planlib.pc into $(DESTDIR)$(PREFIX)
	$(call install_layer,planlib,$(PL_HEADERS),$(PL_STATIC),$(PL_SHARED))

# libmkrt's plan cache tests also test the cached planners, which live in
# libmkrt_planlib (mkrt_planlib/cached.h): they link it before libmkrt.
$(BUILD)/tests/test_plan_cache $(BUILD)/tests/test_bad_input_plan: $(BUILD)/tests/%: $(BUILD)/tobj/tests/%.o $(PL_STATIC) $(TEST_HELPLIB) $(TEST_STATIC)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# plan_cache_stress runs the cached planners, which live in libmkrt_planlib
# (mkrt_planlib/cached.h): it links that layer before libmkrt.
$(BUILD)/stress/plan_cache_stress: $(BUILD)/tobj/stress/plan_cache_stress.o $(PL_STATIC) $(TEST_STATIC)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
