# mkrt - plain GNU make. `make help` lists every target, one line each.
#
#   make            libmkrt.a and libmkrt.so into $(BUILD)
#   make check      TAP unit tests through prove, public headers compiled
#                   alone, the exported symbols, an install used through
#                   pkg-config, the examples built
#   make stress     stress programs, SECONDS=N each (default 3)
#   make soak       mkrt-soak: workloads, faults, drift verdicts, SECONDS=N (default 60)
#   make tsan/asan  unit + stress tests under ThreadSanitizer / ASan+UBSan
#   make bench      benchmarks vs peers (make bench-deps), printed; RECORD=1 writes bench/results/
#   make install    libmkrt, the stream and planlib layers, mkrt-soak:
#                   PREFIX=/usr/local DESTDIR=
#   make deps       apt-get install what the build and tests need (idempotent)
#   make check-mpi  the optional MPI layer libmkrt_mpi (where mpicc is found;
#                   make mpi-deps installs Open MPI): tests at 1, 2, 4 ranks
#
# Variables: BUILD (build tree, default build), CC, NVCC (empty: no CUDA
# megakernel), PREFIX/LIBDIR/INCDIR/DESTDIR (install), SECONDS (stress),
# GRAPH_SCALE (make demo-graph, default 16), WERROR=1 (warnings are errors:
# developers and CI; off by default, for people building a release).
#
# Layout: this file builds and installs the library and checks its floors
# (tools/floors.txt); mk/stream.mk, mk/planlib.mk and mk/mpi.mk the layers
# on its public API, each a library with its own .pc (docs/design.md,
# "Packaging"); mk/tests.mk the tests, checks, stress, sanitizers, docs and
# examples; mk/bench.mk the benchmarks. Reading it runs no program: tools (nvcc,
# mpicc, pkg-config, doxygen, peers) are looked for by the recipes that
# need them, or, for mpicc, only when a goal needs the MPI layer.
#
# Every target a person runs has its description on its rule line:
#     target: prerequisites ## what it does, in one line
# and `make help` prints those lines; a new target gets one too.

# ---- Settings -------------------------------------------------------------
CC       ?= cc
BUILD    ?= build
PREFIX   ?= /usr/local
LIBDIR   ?= $(PREFIX)/lib
INCDIR   ?= $(PREFIX)/include
MANDIR   ?= $(PREFIX)/share/man
SECONDS  ?= 3
TEST_TIMEOUT ?= 300
OPT      ?= -O2 -g
SAN      ?=
WERROR   ?= 0
# The version has one source, include/mkrt/version.h, read here without a
# shell: its `#define MKRT_VERSION_X N` lines. The SONAME names the ABI
# (README, "Versioning and ABI"): libmkrt.so.MAJOR from 1.0 on, and
# libmkrt.so.0.MINOR while MAJOR is 0, where every MINOR may break the ABI.
hash      := \#
version_h := $(strip $(file <include/mkrt/version.h))
version_field = $(patsubst MKRT_VERSION_$(1)=%,%,$(filter MKRT_VERSION_$(1)=%,$(subst $(hash)define MKRT_VERSION_$(1) ,MKRT_VERSION_$(1)=,$(version_h))))
VERSION_MAJOR := $(call version_field,MAJOR)
VERSION_MINOR := $(call version_field,MINOR)
VERSION_PATCH := $(call version_field,PATCH)
ifneq ($(words $(VERSION_MAJOR) $(VERSION_MINOR) $(VERSION_PATCH)),3)
$(error cannot read MKRT_VERSION_MAJOR/MINOR/PATCH from include/mkrt/version.h)
endif
VERSION  := $(VERSION_MAJOR).$(VERSION_MINOR).$(VERSION_PATCH)
SOVERSION := $(if $(filter 0,$(VERSION_MAJOR)),0.$(VERSION_MINOR),$(VERSION_MAJOR))
SONAME   := libmkrt.so.$(SOVERSION)

# ---- Flags ----------------------------------------------------------------
# -Werror only with WERROR=1 (.ci/run sets it): a newer compiler's new
# warning must not stop a user's release build.
WARN     := -std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes \
            -Wmissing-prototypes -Wpointer-arith -Wformat=2 -Wvla
WERROR_FLAG := $(if $(filter 1,$(WERROR)),-Werror)
WARN     += $(WERROR_FLAG)

# liburcu's flags from its pkg-config files (liburcu-cds.pc and
# liburcu-memb.pc; pkgconfig/mkrt.pc.in's Requires.private names the same), asked
# once, the first time a recipe needs them. Its headers as system headers:
# our warnings are for our code.
URCU_PKGS := liburcu-cds liburcu-memb
# urcu_check: empty, or stops make with what is missing (asked once).
urcu_status = $(shell pkg-config --exists $(URCU_PKGS) 2>/dev/null; echo $$?)
urcu_check = $(eval urcu_check := $$(call urcu_verdict,$$(urcu_status)))$(urcu_check)
urcu_verdict = $(if $(filter 0,$(1)),,$(if $(filter 127,$(1)),$(error pkg-config not found: mkrt takes liburcu's compile and link flags from it. Fix: make deps (installs pkg-config and liburcu-dev)),$(error pkg-config finds no $(URCU_PKGS) (liburcu's .pc files$(if $(PKG_CONFIG_PATH),; PKG_CONFIG_PATH=$(PKG_CONFIG_PATH))). Fix: make deps (installs liburcu-dev), or set PKG_CONFIG_PATH to the directory that holds liburcu-cds.pc)))
URCU_CFLAGS = $(eval URCU_CFLAGS := $$(urcu_check)$$(patsubst -I%,-isystem %,$$(shell pkg-config --cflags $(URCU_PKGS))))$(URCU_CFLAGS)
# For linking libmkrt.so, and for linking a program with libmkrt.a.
URCU_LIBS = $(eval URCU_LIBS := $$(urcu_check)$$(shell pkg-config --libs $(URCU_PKGS)))$(URCU_LIBS)
URCU_STATIC_LIBS = $(eval URCU_STATIC_LIBS := $$(urcu_check)$$(shell pkg-config --static --libs $(URCU_PKGS)))$(URCU_STATIC_LIBS)

CPPFLAGS += -D_GNU_SOURCE -Iinclude -Isrc -I. $(URCU_CFLAGS)
CFLAGS   += $(OPT) $(WARN) $(SAN) -fPIC -pthread -MMD -MP
LDFLAGS  += $(SAN) -pthread
# Programs that link libmkrt.a (tests, stress, examples, benchmarks).
LDLIBS   += $(URCU_STATIC_LIBS) -ldl -lm

# ---- The library ----------------------------------------------------------
LIB_SRCS := $(sort $(wildcard base/*.c queue/*.c src/*/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/megakernel_fatbin.o \
            $(BUILD)/obj/gen/megakernel_link_fatbin.o
STATIC   := $(BUILD)/libmkrt.a
SHARED   := $(BUILD)/libmkrt.so.$(VERSION)
# The test build of the library: the same sources with MKRT_TEST_HOOKS
# defined (the test hooks: grep MKRT_TEST_HOOKS src), into $(BUILD)/tobj
# and libmkrt_test.a, which the tests, stress programs and soak link;
# libmkrt.a and libmkrt.so, the installed ones, hold no hook.
TEST_DEFS   := -DMKRT_TEST_HOOKS
TLIB_OBJS   := $(LIB_SRCS:%.c=$(BUILD)/tobj/%.o) $(filter $(BUILD)/obj/gen/%,$(LIB_OBJS))
TEST_STATIC := $(BUILD)/libmkrt_test.a
# The shared library exports the public API only (tests link libmkrt.a).
SYMBOL_MAP := src/libmkrt.map
HEADERS  := $(sort $(wildcard include/mkrt/*.h))
EXAMPLES := $(patsubst examples/%.c,$(BUILD)/examples/%,$(filter-out examples/soak_plugin_%,$(wildcard examples/*.c)))
# The Graph500 kit (examples/graph500/*.c): the graph example and the
# graph benchmark link all of it, mkrt's engine (traverse_mkrt.c)
# included; the kit's unit test links the rest.
G500_SRCS     := $(sort $(wildcard examples/graph500/*.c))
G500_OBJS     := $(G500_SRCS:%.c=$(BUILD)/obj/%.o)
G500_KIT_OBJS := $(filter-out %/traverse_mkrt.o,$(G500_OBJS))
GRAPH_SCALE   ?= 16

.PHONY: all check floors-check headers-check abi-check install-check stress soak soak-mpi tsan asan bench bench-quick \
        bench-cuda plots demo demo-graph examples install uninstall deps bench-deps clean help tests docs docs-check \
        mpi check-mpi mpi-deps tsan-mpi install-mpi cuda-test-data
.DEFAULT_GOAL := all

all: $(STATIC) $(SHARED) $(BUILD)/libmkrt.so ## libmkrt.a and libmkrt.so (with its SONAME link) in $(BUILD); the layers: make stream, planlib, mpi

# Lists the `target: ... ## description` lines of the makefiles read.
help: ## this list: every target, one line each
	@echo "usage: make [target] [BUILD=dir] [CC=...] [NVCC=] [PREFIX=...] [SECONDS=N] [WERROR=1]"
	@awk -F ':.*## ' '/^[A-Za-z0-9_.-]+:.*## / { printf "  %-14s %s\n", $$1, $$2 }' \
	    $(filter-out %.d,$(MAKEFILE_LIST))

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@
$(BUILD)/tobj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(TEST_DEFS) $(CFLAGS) -c $< -o $@

# ---- The floor rule --------------------------------------------------------
# tools/floors.txt declares the order of the source folders (base < queue
# < state < ops < plan < cuda < backend < pipeline < graph < runtime) and
# the layers on the public API; a floor includes and calls only the floors
# below it (docs/design.md, "Source floors"). tools/floors.py checks every
# #include of those folders before any object of the library is compiled,
# so an upward include fails `make` with the rule's name; `make
# floors-check` (part of `make check`) checks the calls, from the objects.
FLOOR_SRCS := $(sort $(filter %.c %.h %.cu,$(wildcard base/* queue/* src/*/* stream/* mpi/src/* mpi/graph/* planlib/src/*)))
FLOORS_OK  := $(BUILD)/floors.ok
$(FLOORS_OK): tools/floors.txt tools/floors.py $(FLOOR_SRCS)
	@mkdir -p $(@D)
	@command -v python3 >/dev/null 2>&1 || { echo "floors: python3 not found: the floor check" \
	    "(tools/floors.py) needs it. Fix: make deps (installs python3)" >&2; exit 1; }
	python3 tools/floors.py includes
	@touch $@

# ---- The CUDA megakernel --------------------------------------------------
# Built by nvcc where there is one (SASS for sm_80 and sm_90, PTX for
# compute_90 so newer GPUs JIT it) and embedded in the library; without
# nvcc the library says "not built". NVCC: auto (default: nvcc on PATH,
# else /usr/local/cuda/bin/nvcc), a command, or empty (`make NVCC=`: the
# no-CUDA build); tools/nvcc_build.sh looks, when a recipe needs it. Two
# variants: whole-program, and relocatable (-rdc) for linking the user's
# PTX ops at run time. The fatbins are shared by every build tree.
# USER_PTX is the device user-op sample the GPU tests link
# (tests/cuda/user_ops.cu).
NVCC        ?= auto
NVCC_BUILD   = sh tools/nvcc_build.sh '$(NVCC)'
CUDA_ARCH   := -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=[sm_90,compute_90]
MK_CU_DEPS  := src/cuda/megakernel.cu src/cuda/protocol.h src/ops/builtin_ops.h src/ops/pull_rule.h base/bitmap.h \
               include/mkrt/graph.h
FATBIN      := build/cuda/megakernel.fatbin
LINK_FATBIN := build/cuda/megakernel_link.fatbin
USER_PTX    := build/cuda/user_ops.ptx
BIN2C       := build/tools/bin2c

$(BIN2C): tools/bin2c.c
	@mkdir -p $(@D)
	$(CC) -O2 -o $@ $<

# $(call embed_fatbin,SYMBOL,FATBIN,NVCC ARGS): the fatbin built (where
# nvcc is) and written as a C array; an empty one without nvcc.
define embed_fatbin
	@mkdir -p $(@D)
	@$(NVCC_BUILD) $(2) '$(MK_CU_DEPS)' $(3) src/cuda/megakernel.cu; st=$$?; \
	if [ $$st = 0 ]; then echo "$(BIN2C) $(1) $(2) $@"; $(BIN2C) $(1) $(2) $@; \
	elif [ $$st = 2 ]; then echo "$(BIN2C) $(1) - $@ (no nvcc: the CUDA megakernel is not built)"; \
	  $(BIN2C) $(1) - $@; \
	else exit 1; fi
endef
$(BUILD)/gen/megakernel_fatbin.c: $(MK_CU_DEPS) $(BIN2C)
	$(call embed_fatbin,mkrt__megakernel_fatbin,$(FATBIN),-O3 -fatbin $(CUDA_ARCH) -I. -Iinclude -Isrc -Isrc/cuda)
$(BUILD)/gen/megakernel_link_fatbin.c: $(MK_CU_DEPS) $(BIN2C)
	$(call embed_fatbin,mkrt__megakernel_link_fatbin,$(LINK_FATBIN),-O3 -fatbin -rdc=true -DMKRT_MK_USER_OPS=1 $(CUDA_ARCH) -I. -Iinclude -Isrc -Isrc/cuda)

# The GPU tests' sample of device user ops (nothing to do without nvcc).
cuda-test-data: ## the GPU tests' user-op PTX, where nvcc is (part of check)
	@$(NVCC_BUILD) $(USER_PTX) tests/cuda/user_ops.cu -O3 -rdc=true -ptx -arch=compute_80 tests/cuda/user_ops.cu; \
	st=$$?; [ $$st = 0 ] || [ $$st = 2 ]

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(OPT) $(SAN) -fPIC -c $< -o $@

$(STATIC): $(LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(TEST_STATIC): $(TLIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(SHARED): $(LIB_OBJS) $(SYMBOL_MAP)
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=$(SYMBOL_MAP) -Wl,--no-undefined \
	    $(LDFLAGS) -o $@ $(LIB_OBJS) $(URCU_LIBS) -ldl -lm

$(BUILD)/libmkrt.so: $(SHARED)
	ln -sf libmkrt.so.$(VERSION) $(BUILD)/$(SONAME)
	ln -sf libmkrt.so.$(VERSION) $@

# ---- The layers, tests, benchmarks -----------------------------------------
# Each layer on the public API is a library of its own (docs/design.md,
# "Packaging"): mk/stream.mk, mk/mpi.mk, mk/planlib.mk. What every layer
# has is written once here:
# $(call install_layer,LAYER,HEADERS,STATIC,SHARED) (recipe lines): its
# headers into include/mkrt_LAYER/, libmkrt_LAYER.a and .so with its
# SONAME links, mkrt-LAYER.pc from pkgconfig/mkrt-LAYER.pc.in.
define install_layer
	install -d $(DESTDIR)$(INCDIR)/mkrt_$(1) $(DESTDIR)$(LIBDIR)/pkgconfig
	install -m 644 $(2) $(DESTDIR)$(INCDIR)/mkrt_$(1)/
	install -m 644 $(3) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(4) $(DESTDIR)$(LIBDIR)/
	ln -sf libmkrt_$(1).so.$(VERSION) $(DESTDIR)$(LIBDIR)/libmkrt_$(1).so.$(SOVERSION)
	ln -sf libmkrt_$(1).so.$(VERSION) $(DESTDIR)$(LIBDIR)/libmkrt_$(1).so
	$(call write_pc,pkgconfig/mkrt-$(1).pc.in,$(DESTDIR)$(LIBDIR)/pkgconfig/mkrt-$(1).pc)
endef
# $(call layer_docs_check,LAYER) (a recipe line): doxygen over
# include/mkrt_LAYER/ (with include/mkrt/, so links to libmkrt's names
# resolve), failing on any warning or a failed run (skipped without
# doxygen).
define layer_docs_check
	@if command -v $(DOXYGEN) >/dev/null 2>&1; then \
	  rm -rf $(BUILD)/docs-$(1) && mkdir -p $(BUILD)/docs-$(1) && \
	  { cat docs/Doxyfile; echo "INPUT = include/mkrt include/mkrt_$(1)"; echo "OUTPUT_DIRECTORY = $(BUILD)/docs-$(1)"; \
	    echo "GENERATE_MAN = NO"; echo "WARN_LOGFILE = $(BUILD)/docs-$(1)/warnings.log"; } | $(DOXYGEN) - >/dev/null; \
	  rc=$$?; if [ -s $(BUILD)/docs-$(1)/warnings.log ]; then cat $(BUILD)/docs-$(1)/warnings.log; exit 1; fi; \
	  [ $$rc -eq 0 ] || { echo "docs: doxygen failed ($$rc) on include/mkrt_$(1)/"; exit 1; }; \
	  echo "docs: include/mkrt_$(1)/: 0 doxygen warnings"; \
	else echo "docs check skipped: doxygen not installed"; fi
endef
# $(eval $(call layer_null_probe,LAYER,HEADERS,STATIC,PROBE)): the rules
# that build PROBE, every function of HEADERS called with zero arguments
# (tests/probe/gen_null_probe.pl), linked with STATIC and libmkrt.a.
define layer_null_probe
$(BUILD)/gen/$(1)_null_probe.c: tests/probe/gen_null_probe.pl $(2)
	@mkdir -p $$(@D)
	perl tests/probe/gen_null_probe.pl $(2) | \
	    sed 's|#include "mkrt/|#include "mkrt_$(1)/|' > $$@.tmp && mv $$@.tmp $$@
$(4): $(BUILD)/gen/$(1)_null_probe.c $(3) $(STATIC)
	@mkdir -p $$(@D)
	$$(CC) $$(CPPFLAGS) $$(CFLAGS) -o $$@ $$< $(3) $$(STATIC) $$(LDFLAGS) $$(LDLIBS)
endef
include mk/stream.mk
include mk/tests.mk
include mk/bench.mk
include mk/mpi.mk
include mk/planlib.mk
include mk/python.mk

# Every object of the library and of its layers is compiled after the
# include check passed (order-only: a passing check rebuilds nothing).
$(LIB_OBJS) $(TLIB_OBJS) $(PL_OBJS) $(MPI_OBJS): | $(FLOORS_OK)

# The calls between floors from the library's objects, then tests/floors/
# check_floors.sh, which breaks the rule in a copy of the tree and expects
# `make` and the call check to fail naming it.
floors-check: $(FLOORS_OK) $(STATIC) $(STREAM_OBJS) $(PL_OBJS) ## the floor rule: includes (before every build) and calls between floors go downward only
	python3 tools/floors.py calls $(filter-out $(BUILD)/obj/gen/%,$(LIB_OBJS)) $(STREAM_OBJS) $(PL_OBJS)
	CC='$(CC)' prove -f --exec sh tests/floors/check_floors.sh

# ---- Install --------------------------------------------------------------
# The .pc files (pkgconfig/*.pc.in: mkrt.pc, and one per layer) are
# written by the install targets, for the prefix they install to.
# libdir and includedir are given relative to ${prefix} when they are under
# it, so pkg-config's --define-prefix can relocate the installed tree.
# $(call write_pc,TEMPLATE,FILE)
pc_dir = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))
define write_pc
sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(call pc_dir,$(LIBDIR))|g' \
    -e 's|@INCDIR@|$(call pc_dir,$(INCDIR))|g' -e 's|@VERSION@|$(VERSION)|g' \
    -e 's|@URCU_PKGS@|$(URCU_PKGS)|g' $(1) > $(2)
endef


# `make install` installs libmkrt and the layers that need nothing more
# (stream, planlib); the MPI layer has its own `make install-mpi`.
install: all $(SOAK_BIN) install-stream install-planlib ## libmkrt (headers, .a, .so, mkrt.pc), the stream and planlib layers, mkrt-soak and its plugin ABI into $(DESTDIR)$(PREFIX)
	install -d $(DESTDIR)$(INCDIR)/mkrt $(DESTDIR)$(INCDIR)/mkrt_soak $(DESTDIR)$(LIBDIR)/pkgconfig
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(MANDIR)/man1
	install -m 755 $(SOAK_BIN) $(DESTDIR)$(PREFIX)/bin/mkrt-soak
	install -m 644 docs/mkrt-soak.1 $(DESTDIR)$(MANDIR)/man1/mkrt-soak.1
	install -m 644 $(SOAK_HEADERS) $(DESTDIR)$(INCDIR)/mkrt_soak/
	$(call write_pc,pkgconfig/mkrt-soak.pc.in,$(DESTDIR)$(LIBDIR)/pkgconfig/mkrt-soak.pc)
	install -m 644 $(HEADERS) $(DESTDIR)$(INCDIR)/mkrt/
	install -m 644 $(STATIC) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(SHARED) $(DESTDIR)$(LIBDIR)/
	ln -sf libmkrt.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf libmkrt.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libmkrt.so
	$(call write_pc,pkgconfig/mkrt.pc.in,$(DESTDIR)$(LIBDIR)/pkgconfig/mkrt.pc)
	@if [ -d $(BUILD)/docs/man/man3 ]; then \
	  echo "install -m 644 $(BUILD)/docs/man/man3/*.3 $(DESTDIR)$(MANDIR)/man3/"; \
	  install -d $(DESTDIR)$(MANDIR)/man3 && \
	  install -m 644 $(BUILD)/docs/man/man3/*.3 $(DESTDIR)$(MANDIR)/man3/; \
	else echo "install: no man pages in $(BUILD)/docs/man/man3 (make docs builds them)"; fi

# Removes this version's files (a libmkrt.so.* of another version stays
# for the programs linked against it).
uninstall: ## remove what `make install` (and install-mpi) installed (same PREFIX and DESTDIR)
	rm -rf $(DESTDIR)$(INCDIR)/mkrt $(foreach l,stream planlib mpi soak,$(DESTDIR)$(INCDIR)/mkrt_$(l))
	rm -f $(DESTDIR)$(LIBDIR)/libmkrt.a $(DESTDIR)$(LIBDIR)/libmkrt.so \
	    $(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/libmkrt.so.$(VERSION) \
	    $(DESTDIR)$(LIBDIR)/pkgconfig/mkrt.pc
	for l in stream planlib mpi; do \
	  rm -f $(DESTDIR)$(LIBDIR)/libmkrt_$$l.a $(DESTDIR)$(LIBDIR)/libmkrt_$$l.so \
	    $(DESTDIR)$(LIBDIR)/libmkrt_$$l.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libmkrt_$$l.so.$(VERSION) \
	    $(DESTDIR)$(LIBDIR)/pkgconfig/mkrt-$$l.pc; done
	rm -f $(DESTDIR)$(LIBDIR)/pkgconfig/mkrt-soak.pc
	rm -f $(DESTDIR)$(PREFIX)/bin/mkrt-soak $(DESTDIR)$(MANDIR)/man1/mkrt-soak.1
	rm -f $(DESTDIR)$(MANDIR)/man3/mkrt_*.3 $(DESTDIR)$(MANDIR)/man3/mkrt.h.3 $(DESTDIR)$(MANDIR)/man3/MKRT_*.3

# Debian packages. `deps` is what build + tests need; `bench-deps` adds the
# peer libraries the benchmarks compare against and gnuplot for `make plots`.
DEPS_PKGS       := make gcc clang perl python3 pkg-config liburcu-dev libclang-rt-dev doxygen
# The Python binding's build and tests (make check-python); python-deps adds pip's
# for a python3 on PATH that is not Debian's.
PY_DEPS_PKGS    := python3-dev python3-pip python3-cffi python3-numpy python3-pytest python3-scipy
# MPI is optional (`make mpi-deps`; .ci/run installs it and runs check-mpi).
MPI_DEPS_PKGS   := libopenmpi-dev openmpi-bin
BENCH_DEPS_PKGS := libck-dev dpdk-dev liburcu-dev libstarpu-dev gnuplot-nox libgraphblas-dev libigraph-dev
SUDO = $$([ "$$(id -u)" = 0 ] || echo sudo)
define apt_install
	@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' \
	    || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	else echo "deps: all of $(1) installed"; fi
endef
# `deps` also installs Open MPI, so `make deps check-mpi` works on a clean
# machine; the library and `make check` build and pass without it.
deps: ## apt-get install what the build and tests need, Open MPI and the Python binding's included (idempotent)
	$(call apt_install,$(DEPS_PKGS) $(MPI_DEPS_PKGS) $(PY_DEPS_PKGS))
	@$(MAKE) --no-print-directory python-deps
mpi-deps: ## apt-get install Open MPI for the optional MPI layer (idempotent)
	$(call apt_install,$(MPI_DEPS_PKGS))
bench-deps: ## apt-get install the benchmarks' peer libraries and gnuplot (idempotent)
	$(call apt_install,$(BENCH_DEPS_PKGS))

clean: ## remove $(BUILD)
	rm -rf $(BUILD)

# The compiler's dependency files (-MMD), found without a shell.
# Every object's dependency file, at any depth under $(BUILD) down to
# obj/stress/soak/mpi (queue/, src/*/, tests/, stress/soak/, examples/*/,
# mpi/*): a folder left out of this list would rebuild nothing when a header
# it includes changes.
-include $(wildcard $(BUILD)/*.d $(BUILD)/*/*.d $(BUILD)/*/*/*.d $(BUILD)/*/*/*/*.d \
    $(BUILD)/*/*/*/*/*.d)
.SECONDARY:
