# SPDX-License-Identifier: BSD-2-Clause
# mk/mpi.mk - the optional MPI layer libmkrt_mpi (included by the Makefile).

# Built only where `mpicc` is found; the plain library and `make check`
# never need MPI. Its sources are mpi/src/*.c (not src/*/, which all go
# into libmkrt), its header include/mkrt_mpi/mkrt_mpi.h (not
# include/mkrt/*.h, which feed headers-check, abi-check, the null probe and
# docs-check of libmkrt; check-mpi runs those checks for it). Compiled by
# $(CC) with mpicc's flags (Open MPI: --showme; MPICH: -compile-info), so
# `make CC=clang` covers it too. Where mpicc is found, examples/graph_bfs
# is built with its distributed mode (examples/mpi/, on the distributed
# engine mpi/graph/: part of libmkrt_mpi, API include/mkrt_mpi/graph.h).
# mpicc is looked for only when a goal builds something of the MPI layer
# or graph_bfs (MPI_GOALS; `make CC=... MPICC=path` names one): `make` and
# `make all` run no probe. Its flags are asked once, when first needed.
MPI_GOALS := check check-mpi mpi tsan-mpi install-mpi examples demo-graph soak soak-mpi \
             %/graph_bfs %/graph_bfs.o %/mpi_bench %/test_mpi %/test_mpi_graph %/test_mpi_alloc %libmkrt_mpi.a %null_probe
ifneq ($(filter $(MPI_GOALS),$(MAKECMDGOALS)),)
MPICC ?= $(shell command -v mpicc 2>/dev/null)
endif
ifneq ($(MPICC),)
MPI_CFLAGS = $(eval MPI_CFLAGS := $$(or $$(shell $$(MPICC) --showme:compile 2>/dev/null),$$(filter-out $$(firstword $$(shell $$(MPICC) -compile-info 2>/dev/null)) -c,$$(shell $$(MPICC) -compile-info 2>/dev/null))))$(MPI_CFLAGS)
MPI_LIBS   = $(eval MPI_LIBS := $$(or $$(shell $$(MPICC) --showme:link 2>/dev/null),$$(filter-out $$(firstword $$(shell $$(MPICC) -link-info 2>/dev/null)),$$(shell $$(MPICC) -link-info 2>/dev/null))))$(MPI_LIBS)
MPI_SRCS   := $(sort $(wildcard mpi/src/*.c mpi/graph/*.c))
MPI_OBJS   := $(MPI_SRCS:%.c=$(BUILD)/obj/%.o)
MPI_STATIC := $(BUILD)/libmkrt_mpi.a
MPI_SHARED := $(BUILD)/libmkrt_mpi.so.$(VERSION)
MPI_HEADERS := include/mkrt_mpi/mkrt_mpi.h include/mkrt_mpi/graph.h
MPI_EX_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(sort $(wildcard examples/mpi/*.c)))
MPI_TEST_BINS := $(patsubst mpi/tests/%.c,$(BUILD)/mpi/tests/%,$(sort $(wildcard mpi/tests/test_*.c)))
MPI_NULL_PROBE := $(BUILD)/mpi/tests/null_probe
# mpirun: 4 ranks on 2 CPUs need --oversubscribe; Open MPI refuses root
# without --allow-run-as-root (containers, CI).
MPIRUN ?= mpirun --oversubscribe $(if $(filter 0,$(shell id -u)),--allow-run-as-root)

$(MPI_OBJS) $(MPI_EX_OBJS) $(BUILD)/obj/examples/graph_bfs.o $(MPI_TEST_BINS:$(BUILD)/mpi/tests/%=$(BUILD)/obj/mpi/tests/%.o) \
    $(BUILD)/obj/bench/mpi_bench.o: CPPFLAGS += $(MPI_CFLAGS)
$(BUILD)/obj/examples/graph_bfs.o: CPPFLAGS += -DMKRT_WITH_MPI

$(MPI_STATIC): $(MPI_OBJS)
	rm -f $@
	$(AR) rcs $@ $^
# As libmkrt_stream.so (mk/stream.mk), the shared library carries its own
# base/alloc.c built with MKRT_LAYER_BUILD (hidden by its map): the layer
# allocates through the allocator installed in libmkrt.so.
$(MPI_SHARED): $(MPI_OBJS) $(BUILD)/lobj/base/alloc.o $(SHARED) mpi/src/libmkrt_mpi.map
	$(CC) -shared -Wl,-soname,libmkrt_mpi.so.$(SOVERSION) -Wl,--version-script=mpi/src/libmkrt_mpi.map \
	    -Wl,--no-undefined $(LDFLAGS) -o $@ \
	    $(MPI_OBJS) $(BUILD)/lobj/base/alloc.o $(SHARED) $(MPI_LIBS) $(LDLIBS)
	ln -sf libmkrt_mpi.so.$(VERSION) $(BUILD)/libmkrt_mpi.so.$(SOVERSION)
	ln -sf libmkrt_mpi.so.$(VERSION) $(BUILD)/libmkrt_mpi.so

# graph_bfs with its distributed mode (libmkrt_mpi needs libmkrt after it).
$(BUILD)/examples/graph_bfs: $(MPI_EX_OBJS) $(MPI_STATIC)
$(BUILD)/examples/graph_bfs: GRAPH_BFS_LIBS = $(STATIC) $(MPI_LIBS)

$(BUILD)/mpi/tests/%: $(BUILD)/obj/mpi/tests/%.o $(MPI_STATIC) $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(MPI_LIBS) $(LDLIBS)

# The engine's test takes its serial BFS and Dijkstra from the unit tests'
# graph fixture (tests/graph_fixture.c, in libtesthelp.a).
$(BUILD)/mpi/tests/test_mpi_graph: $(TEST_HELPLIB)
# The allocation sweep counts with tests/count_alloc.c (libtesthelp.a).
$(BUILD)/mpi/tests/test_mpi_alloc: $(TEST_HELPLIB)

$(BUILD)/gen/mpi_null_probe.c: tests/probe/gen_null_probe.pl $(MPI_HEADERS)
	@mkdir -p $(@D)
	perl tests/probe/gen_null_probe.pl $(MPI_HEADERS) | \
	    sed 's|#include "mkrt/|#include "mkrt_mpi/|' > $@.tmp && mv $@.tmp $@
$(MPI_NULL_PROBE): $(BUILD)/gen/mpi_null_probe.c $(MPI_STATIC) $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(MPI_CFLAGS) $(CFLAGS) -o $@ $< $(MPI_STATIC) $(STATIC) $(LDFLAGS) $(MPI_LIBS) $(LDLIBS)

$(BUILD)/bench/mpi_bench: $(BUILD)/obj/bench/mpi_bench.o $(MPI_EX_OBJS) $(G500_OBJS) $(MPI_STATIC) $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(STATIC) $(MPI_LIBS) $(LDLIBS)

# mkrt-soak-mpi: the soak's MPI workload (stress/soak/mpi/: the layer's
# forwarding, then the distributed engine checked by the Graph500 kit's
# validators), run by
# `make soak` at 2 and 3 ranks (not under a sanitizer: Open MPI is not
# instrumented).
SOAK_MPI_BIN := $(BUILD)/bin/mkrt-soak-mpi
SOAK_MPI_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,stress/soak/soak_globals.c stress/soak/soak_env.c \
                 stress/soak/soak_metrics.c stress/soak/mpi/soak_mpi.c)
$(BUILD)/obj/stress/soak/mpi/soak_mpi.o: CPPFLAGS += $(MPI_CFLAGS)
$(SOAK_MPI_BIN): $(SOAK_MPI_OBJS) $(G500_KIT_OBJS) $(MPI_STATIC) $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(MPI_LIBS) $(LDLIBS) -lm
SOAK_MPI_SECONDS = $(shell s=$$(( $(SOAK_SECONDS) / 4 )); [ $$s -lt 5 ] && s=5; echo $$s)
soak-mpi: $(SOAK_MPI_BIN) ## mkrt-soak-mpi at 2 and 3 ranks, SECONDS/4 each (at least 5 s; needs mpicc)
	timeout -k 5 $$(( $(SOAK_MPI_SECONDS) + 300 )) $(MPIRUN) -np 2 $(SOAK_MPI_BIN) --seconds $(SOAK_MPI_SECONDS)
	timeout -k 5 $$(( $(SOAK_MPI_SECONDS) + 300 )) $(MPIRUN) -np 3 $(SOAK_MPI_BIN) --seconds $(SOAK_MPI_SECONDS)

mpi: $(MPI_STATIC) $(MPI_SHARED) ## libmkrt_mpi.a and libmkrt_mpi.so in $(BUILD) (needs mpicc: make mpi-deps)

# The MPI layer's own header, docs and null-argument checks, then
# forwarding, ordering, quiescence, faults and the distributed BFS at 1, 2
# and 4 ranks on localhost (mpi/tests/check_mpi.sh).
check-mpi: all $(MPI_STATIC) $(MPI_SHARED) $(MPI_TEST_BINS) $(MPI_NULL_PROBE) $(BUILD)/examples/graph_bfs ## the MPI layer: header, docs, null probe, tests at 1, 2, 4 ranks (needs mpicc)
	@for h in $(MPI_HEADERS); do echo "#include \"$${h#include/}\"" | \
	    $(CC) $(CPPFLAGS) $(MPI_CFLAGS) $(WARN) -fsyntax-only -x c - || exit 1; \
	    echo "headers: $$h compiles on its own"; done
	$(call layer_docs_check,mpi)
	prove -f --exec 'timeout -k 5 $(TEST_TIMEOUT)' $(MPI_NULL_PROBE)
	MPIRUN='$(MPIRUN)' BUILD='$(BUILD)' sh mpi/tests/check_mpi.sh

install-mpi: $(MPI_STATIC) $(MPI_SHARED) ## install libmkrt_mpi, include/mkrt_mpi/ and mkrt-mpi.pc beside `make install` (same PREFIX, DESTDIR)
	$(call install_layer,mpi,$(MPI_HEADERS),$(MPI_STATIC),$(MPI_SHARED))

# The MPI unit tests and the distributed engine's test under
# ThreadSanitizer at 2 ranks (libmkrt and libmkrt_mpi instrumented; Open
# MPI is not: mpi/tests/tsan-mpi.supp).
tsan-mpi: ## the MPI layer's unit tests under ThreadSanitizer at 2 ranks, in $(BUILD)/tsan
	$(MAKE) BUILD=$(BUILD)/tsan SAN="$(TSAN_SAN)" OPT="-O1 -g" $(BUILD)/tsan/mpi/tests/test_mpi \
	    $(BUILD)/tsan/mpi/tests/test_mpi_lifecycle $(BUILD)/tsan/mpi/tests/test_mpi_stats \
	    $(BUILD)/tsan/mpi/tests/test_mpi_graph $(BUILD)/tsan/mpi/tests/test_mpi_alloc
	cat tsan.supp mpi/tests/tsan-mpi.supp > $(BUILD)/tsan/mpi.supp
	for t in test_mpi test_mpi_lifecycle test_mpi_stats test_mpi_graph test_mpi_alloc; do \
	  TSAN_OPTIONS="suppressions=$(CURDIR)/$(BUILD)/tsan/mpi.supp halt_on_error=1 $(TSAN_OPTIONS)" \
	    timeout -k 5 600 $(MPIRUN) --mca btl self,vader -x TSAN_OPTIONS -np 2 $(BUILD)/tsan/mpi/tests/$$t \
	    || exit 1; \
	done
else
soak-mpi:
	@echo "soak-mpi: no mpicc found: the MPI soak is skipped (make mpi-deps installs Open MPI)"
mpi check-mpi tsan-mpi install-mpi:
	@echo "$@: no mpicc found; the MPI layer is optional (make mpi-deps installs Open MPI)"; exit 1
endif
