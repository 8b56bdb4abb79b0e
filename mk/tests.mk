# SPDX-License-Identifier: BSD-2-Clause
# mk/tests.mk - unit tests, `make check`, stress, soak, sanitizers, API docs,
# examples and demos (included by the Makefile).

# tests/cuda_*.c need a GPU and skip (TAP SKIP) without one.
TEST_SRCS   := $(sort $(wildcard tests/test_*.c tests/cuda_*.c))
TEST_BINS   := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)
# Generated from the public headers: every public function called with every
# argument zero/NULL, each in a child process (tests/probe/gen_null_probe.pl).
NULL_PROBE  := $(BUILD)/tests/null_probe
TEST_BINS   += $(NULL_PROBE)
TEST_HELP   := $(sort $(filter-out tests/test_%.c tests/cuda_%.c,$(wildcard tests/*.c)))
TEST_HELPLIB := $(BUILD)/libtesthelp.a
STRESS_SRCS := $(sort $(wildcard stress/*_stress.c))
STRESS_BINS := $(STRESS_SRCS:stress/%.c=$(BUILD)/stress/%)
# mkrt-soak (stress/soak/*.c): a test-build program (it uses the runtime's
# test hooks), installed as $(PREFIX)/bin/mkrt-soak. It exports libmkrt's
# symbols (whole archive, -rdynamic) to the --plugin objects it loads.
SOAK_SRCS   := $(sort $(wildcard stress/soak/*.c))
SOAK_BIN    := $(BUILD)/bin/mkrt-soak
SOAK_HEADERS := include/mkrt_soak/soak_plugin.h
SOAK_PLUGIN := $(BUILD)/examples/soak_plugin_example.so
SOAK_STREAM := $(BUILD)/examples/soak_plugin_stream.so

# Tests, stress programs and the soak are built with the test hooks and
# link the library's test build (TEST_STATIC), through which they reach
# the internals declared in src/ headers.
$(TEST_HELPLIB): $(TEST_HELP:%.c=$(BUILD)/tobj/%.o)
	rm -f $@
	$(AR) rcs $@ $^

# The layers a test uses link before libmkrt (libmkrt_stream: test_stream).
$(BUILD)/tests/%: $(BUILD)/tobj/tests/%.o $(TEST_HELPLIB) $(STREAM_STATIC) $(TEST_STATIC)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/gen/null_probe.c: tests/probe/gen_null_probe.pl $(HEADERS)
	@mkdir -p $(@D)
	perl tests/probe/gen_null_probe.pl $(HEADERS) > $@.tmp && mv $@.tmp $@

$(NULL_PROBE): $(BUILD)/gen/null_probe.c $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(STATIC) $(LDFLAGS) $(LDLIBS)

$(BUILD)/stress/%: $(BUILD)/tobj/stress/%.o $(STREAM_STATIC) $(TEST_STATIC)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(SOAK_BIN): $(SOAK_SRCS:%.c=$(BUILD)/tobj/%.o) $(TEST_STATIC)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -rdynamic -o $@ $(filter %.o,$^) -Wl,--whole-archive $(TEST_STATIC) -Wl,--no-whole-archive $(LDLIBS)

# The example plugin for mkrt-soak --plugin (include/mkrt_soak/soak_plugin.h,
# its own header and mkrt-soak.pc): no -lmkrt, the soak provides the library.
$(SOAK_PLUGIN): examples/soak_plugin_example.c $(SOAK_HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -shared -o $@ $<
# The streaming graph plugin (examples/soak_plugin_stream.c): `make soak`
# runs it. A plugin that uses a layer links the layer's static library
# (libmkrt_stream.a); libmkrt itself still comes from the soak.
$(SOAK_STREAM): examples/soak_plugin_stream.c $(SOAK_HEADERS) $(STREAM_HEADERS) $(STREAM_STATIC)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -shared -o $@ $< $(STREAM_STATIC)

# A stand-in libcuda.so.1 for the loader's failure paths (tests only),
# one shared object from tests/fakes/fake_libcuda*.c.
FAKE_CUDA := $(BUILD)/tests/libfakecuda.so
FAKE_CUDA_SRCS := $(sort $(wildcard tests/fakes/fake_libcuda*.c))
$(FAKE_CUDA): $(FAKE_CUDA_SRCS) tests/fakes/fake_libcuda.h src/backend/mk_loop.h src/backend/mk_trav.h \
              src/cuda/protocol.h src/ops/builtin_ops.h src/ops/pull_rule.h base/bitmap.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -shared -o $@ $(FAKE_CUDA_SRCS) -lpthread

tests: $(TEST_BINS) $(STRESS_BINS) $(SOAK_BIN) $(SOAK_PLUGIN) $(SOAK_STREAM) $(FAKE_CUDA) ## build the unit tests, stress programs and soak without running them

headers-check: ## every public header compiles on its own
	@for h in $(HEADERS); do \
	  echo "#include \"$${h#include/}\"" | $(CC) $(CPPFLAGS) $(WARN) -fsyntax-only -x c - \
	    || { echo "header $$h does not compile on its own"; exit 1; }; \
	done; echo "headers: $(words $(HEADERS)) public headers compile on their own"

check: all $(TEST_BINS) $(EXAMPLES) $(BUILD)/bench/graph_bench $(FAKE_CUDA) cuda-test-data $(SOAK_BIN) $(SOAK_PLUGIN) $(SOAK_STREAM) headers-check docs-check floors-check check-stream ## unit tests (TAP, prove), headers, API docs, exported symbols, floors, install, examples
	prove -f --exec 'timeout -k 5 $(TEST_TIMEOUT)' $(TEST_BINS)
	@$(MAKE) --no-print-directory check-planlib
	@$(MAKE) --no-print-directory check-python
	ANALYSIS_DEMO=$(BUILD)/examples/analysis_demo prove -f --exec sh tests/examples/check_analysis_demo.sh
	STREAM_GRAPH=$(BUILD)/examples/stream_graph prove -f --exec sh tests/examples/check_stream_graph.sh
	MKRT_SOAK=$(SOAK_BIN) SOAK_PLUGIN=$(SOAK_PLUGIN) prove -f --exec 'timeout -k 5 $(TEST_TIMEOUT) sh' tests/soak/check_soak.sh
	timeout -k 5 $(TEST_TIMEOUT) $(SOAK_BIN) --plugin $(SOAK_STREAM) --workloads plugin --seconds 3 --interval 1
	@echo "== test_runtime again with AUTO on the CUDA megakernel (stand-in driver)"
	MKRT_LIBCUDA=$(CURDIR)/$(FAKE_CUDA) prove -f --exec 'timeout -k 5 $(TEST_TIMEOUT)' \
	    $(filter %/test_runtime,$(TEST_BINS))
	@echo "== again with the RMW wake-up protocol (MKRT_WAITQ_SYMMETRIC=1)"
	MKRT_WAITQ_SYMMETRIC=1 prove -f --exec 'timeout -k 5 $(TEST_TIMEOUT)' \
	    $(filter %_ring %_waitq %_runtime,$(TEST_BINS))
	GRAPH_BFS=$(BUILD)/examples/graph_bfs GRAPH_BENCH=$(BUILD)/bench/graph_bench \
	    prove -f --exec sh tests/cli/check_graph_cli.sh
	@$(MAKE) --no-print-directory abi-check
	@$(MAKE) --no-print-directory install-check

# libmkrt.so exports exactly the functions include/mkrt/*.h declare, under
# the SONAME the version gives. (The path's planners take no invented
# inputs: tests/test_plan_inputs.c, docs/design.md "Planner exports".)
abi-check: $(SHARED) ## libmkrt.so exports the public API only, all of it, under the right SONAME
	MKRT_SO=$(SHARED) CC='$(CC)' prove -f --exec sh tests/abi/check_exports.sh

# `make install` into a scratch DESTDIR with another PREFIX than the build
# was made with, then programs built against it through pkg-config, with
# the shared and with the static library.
INSTALL_TEST_DIR   := $(BUILD)/install-test
INSTALL_TEST_PREFIX := /opt/mkrt-test
install-check: all ## install to a scratch DESTDIR; build and run programs through pkg-config, shared and static
	rm -rf $(INSTALL_TEST_DIR)
	$(MAKE) --no-print-directory install DESTDIR=$(abspath $(INSTALL_TEST_DIR)) \
	    PREFIX=$(INSTALL_TEST_PREFIX) LIBDIR=$(INSTALL_TEST_PREFIX)/lib \
	    INCDIR=$(INSTALL_TEST_PREFIX)/include
	MKRT_DESTDIR=$(abspath $(INSTALL_TEST_DIR)) MKRT_PREFIX=$(INSTALL_TEST_PREFIX) \
	    CC='$(CC)' MKRT_SAN='$(SAN)' prove -f --exec sh tests/install/check_install.sh

stress: $(STRESS_BINS) $(FAKE_CUDA) ## stress programs, SECONDS=N each (default 3), fail on a lost or reordered item

# The API reference: doxygen over include/mkrt/*.h (docs/Doxyfile) into
# $(BUILD)/docs/html and $(BUILD)/docs/man/man3. Every public declaration
# must be documented: any doxygen warning fails the target (the warnings
# are also in $(BUILD)/docs/warnings.log).
DOXYGEN  ?= doxygen
DOCS_DIR := $(BUILD)/docs
docs: ## Build the API reference (HTML + man3) with Doxygen
	@command -v $(DOXYGEN) >/dev/null 2>&1 || { echo "docs: doxygen not installed (run make deps)"; exit 1; }
	@rm -rf $(DOCS_DIR)/html $(DOCS_DIR)/man $(DOCS_DIR)/warnings.log && mkdir -p $(DOCS_DIR)
	@{ cat docs/Doxyfile; echo "OUTPUT_DIRECTORY = $(DOCS_DIR)"; echo "PROJECT_NUMBER = $(VERSION)"; \
	   echo "WARN_LOGFILE = $(DOCS_DIR)/warnings.log"; } | $(DOXYGEN) -; st=$$?; \
	if [ -s $(DOCS_DIR)/warnings.log ]; then cat $(DOCS_DIR)/warnings.log >&2; \
	  echo "docs: doxygen warnings above: every public declaration needs a complete doc comment" >&2; exit 1; fi; \
	if [ $$st -ne 0 ]; then echo "docs: doxygen failed (exit $$st)" >&2; exit 1; fi
	@sh tools/docs_man_fixup.sh $(DOCS_DIR)/man/man3
	@echo "docs: 0 warnings; $(DOCS_DIR)/html/index.html, man pages in $(DOCS_DIR)/man/man3"

# Part of make check: the same run when doxygen is installed.
docs-check: ## Check the API reference builds without warnings (skipped without doxygen)
	@if command -v $(DOXYGEN) >/dev/null 2>&1; then $(MAKE) --no-print-directory docs; \
	else echo "docs check skipped: doxygen not installed (run make deps)"; fi

stress: $(STRESS_BINS) $(FAKE_CUDA)
	@set -e; for s in $(STRESS_BINS); do echo "== $$s $(SECONDS)s"; $$s --seconds $(SECONDS); done
	@echo "== $(BUILD)/stress/graph_stress $(SECONDS)s on the SIM backend (traversals on the device)"
	$(BUILD)/stress/graph_stress --seconds $(SECONDS) --sim 1
	@echo "== $(BUILD)/stress/stream_stress $(SECONDS)s on the SIM backend"
	$(BUILD)/stress/stream_stress --seconds $(SECONDS) --sim 1
	@echo "== $(BUILD)/stress/runtime_stress $(SECONDS)s sized as on a 16-CPU machine (16 default workers, wide plans)"
	$(BUILD)/stress/runtime_stress --seconds $(SECONDS) --cpus 16
	@if $(NVCC_BUILD) >/dev/null; then \
	  echo "== $(BUILD)/stress/runtime_stress $(SECONDS)s on the CUDA backend (stand-in driver)"; \
	  echo "MKRT_LIBCUDA=$(CURDIR)/$(FAKE_CUDA) $(BUILD)/stress/runtime_stress --seconds $(SECONDS) --want-cuda 1"; \
	  MKRT_LIBCUDA=$(CURDIR)/$(FAKE_CUDA) $(BUILD)/stress/runtime_stress --seconds $(SECONDS) --want-cuda 1 || exit 1; \
	  echo "== $(BUILD)/stress/runtime_stress $(SECONDS)s on the CUDA backend, cells in device memory (stand-in driver)"; \
	  echo "MKRT_LIBCUDA=$(CURDIR)/$(FAKE_CUDA) $(BUILD)/stress/runtime_stress --seconds $(SECONDS) --want-cuda 1 --device-state 1"; \
	  MKRT_LIBCUDA=$(CURDIR)/$(FAKE_CUDA) $(BUILD)/stress/runtime_stress --seconds $(SECONDS) --want-cuda 1 --device-state 1; \
	else echo "== (no nvcc: the CUDA backend's stress runs skipped)"; fi

# The soak (mkrt-soak) is not one of the stress programs: it runs for
# SECONDS when given on the command line, else 60 (or SOAK_SECONDS);
# SOAK_ARGS adds options (e.g. SOAK_ARGS="--json soak.json").
SOAK_SECONDS ?= $(if $(filter command line,$(origin SECONDS)),$(SECONDS),60)
soak: $(SOAK_BIN) $(SOAK_STREAM) $(FAKE_CUDA) ## mkrt-soak: every workload and fault mode, drift verdicts, SECONDS=N (default 60)
	$(SOAK_BIN) --seconds $(SOAK_SECONDS) $(SOAK_ARGS)
	@echo "== mkrt-soak: the streaming graph plugin ($(SOAK_STREAM))"
	$(SOAK_BIN) --plugin $(SOAK_STREAM) --workloads plugin --seconds $(SOAK_SECONDS) $(SOAK_ARGS)
	$(if $(SAN),@echo "soak: the MPI soak is not run under a sanitizer",@$(MAKE) --no-print-directory soak-mpi)

# Sanitizer builds live in their own trees; stress and soak runs stay
# short unless SECONDS is given.
SAN_SECONDS ?= 2
# gcc warns that TSan does not model atomic_thread_fence (-Wtsan). The one
# fence-only pairing (base/waitq.h's symmetric protocol) orders no data,
# only whether a waker sees a waiter's arming; the data a waiter then reads
# is published by release stores TSan does see. Quieted where the compiler
# knows the warning.
TSAN_FENCE = $(shell $(CC) -Werror -Wno-tsan -x c -c /dev/null -o /dev/null 2>/dev/null && echo -Wno-tsan)
TSAN_SAN = -fsanitize=thread $(TSAN_FENCE)
tsan: ## check, short stress and soak under ThreadSanitizer, in $(BUILD)/tsan
	TSAN_OPTIONS="suppressions=$(CURDIR)/tsan.supp halt_on_error=1 $(TSAN_OPTIONS)" \
	$(MAKE) BUILD=$(BUILD)/tsan SAN="$(TSAN_SAN)" OPT="-O1 -g" \
	    SECONDS=$(SAN_SECONDS) check stress soak
asan: ## check, short stress and soak under ASan+UBSan, in $(BUILD)/asan
	ASAN_OPTIONS="detect_leaks=1 $(ASAN_OPTIONS)" \
	$(MAKE) BUILD=$(BUILD)/asan OPT="-O1 -g -fno-omit-frame-pointer" \
	    SAN="-fsanitize=address,undefined -fno-sanitize-recover=all" \
	    SECONDS=$(SAN_SECONDS) check stress soak


$(BUILD)/examples/%: examples/%.c $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(STATIC) $(LDFLAGS) $(LDLIBS)

examples: $(EXAMPLES) ## build examples/*.c into $(BUILD)/examples

# GRAPH_BFS_LIBS: libmkrt_mpi's link line where graph_bfs has its
# distributed mode (mk/mpi.mk).
$(BUILD)/examples/graph_bfs: $(BUILD)/obj/examples/graph_bfs.o $(G500_OBJS) $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(GRAPH_BFS_LIBS) $(LDLIBS)

$(BUILD)/tests/test_graph500_kit: $(BUILD)/tobj/tests/test_graph500_kit.o $(G500_KIT_OBJS) \
                                  $(TEST_HELPLIB) $(TEST_STATIC)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The four kernels of mkrt's engine (traverse_mkrt.c) on CPU and SIM.
$(BUILD)/tests/test_graph_kernels: $(BUILD)/tobj/tests/test_graph_kernels.o $(G500_OBJS) \
                                   $(TEST_HELPLIB) $(TEST_STATIC)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lm

demo-graph: $(BUILD)/examples/graph_bfs ## the graph example: BFS+SSSP from 16 roots, CC and PageRank, validated (GRAPH_SCALE=16)
	$(BUILD)/examples/graph_bfs --scale $(GRAPH_SCALE)

# The README's main demo: a dataflow analysis through the runtime (CPU).
demo: $(EXAMPLES) ## run the minimal example and the dataflow analysis demo
	$(BUILD)/examples/minimal
	$(BUILD)/examples/analysis_demo
