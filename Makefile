# mkrt - plain GNU make. `make help` lists the targets.
#
#   make            libmkrt.a and libmkrt.so into $(BUILD)
#   make check      TAP unit tests through prove (+ public headers compile alone)
#   make stress     stress programs, SECONDS=N each (default 3)
#   make soak       runtimes in rounds with fault injection, SECONDS=N (default 60)
#   make tsan/asan  unit + stress tests under ThreadSanitizer / ASan+UBSan
#   make bench      benchmarks vs peers (make bench-deps), printed; RECORD=1 writes bench/results/
#   make install    PREFIX=/usr/local DESTDIR=
#   make deps       apt-get install what the build and tests need (idempotent)

CC       ?= cc
BUILD    ?= build
PREFIX   ?= /usr/local
LIBDIR   ?= $(PREFIX)/lib
INCDIR   ?= $(PREFIX)/include
SECONDS  ?= 3
TEST_TIMEOUT ?= 300
OPT      ?= -O2 -g
SAN      ?=
VERSION  := 0.1.0
SOMAJOR  := 0

WARN     := -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
            -Wmissing-prototypes -Wpointer-arith -Wformat=2 -Wvla
CPPFLAGS += -D_GNU_SOURCE -Iinclude
CFLAGS   += $(OPT) $(WARN) $(SAN) -fPIC -pthread -MMD -MP
LDFLAGS  += $(SAN) -pthread
URCU_LIBS := -lurcu-cds -lurcu-memb -lurcu-common
LDLIBS   += $(URCU_LIBS) -ldl -lm

LIB_SRCS := $(sort $(wildcard src/*.c src/backend/*.c queue/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/megakernel_fatbin.o \
            $(BUILD)/obj/gen/megakernel_link_fatbin.o

# The CUDA megakernel: built by nvcc when there is one (SASS for sm_80 and
# sm_90, PTX for compute_90 so newer GPUs JIT it) and embedded in the
# library; without nvcc the library says "not built". `make NVCC=` forces
# the no-CUDA build. Two variants: whole-program, and relocatable (-rdc)
# for linking the user's PTX ops at run time. The fatbins are shared by
# every build tree. USER_PTX is the device user-op sample the GPU tests
# link (tests/cuda/user_ops.cu).
NVCC      ?= $(firstword $(shell command -v nvcc 2>/dev/null) $(wildcard /usr/local/cuda/bin/nvcc))
CUDA_ARCH := -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=[sm_90,compute_90]
FATBIN    := build/cuda/megakernel.fatbin
LINK_FATBIN := build/cuda/megakernel_link.fatbin
USER_PTX  := build/cuda/user_ops.ptx
BIN2C     := build/tools/bin2c
STATIC   := $(BUILD)/libmkrt.a
SHARED   := $(BUILD)/libmkrt.so.$(VERSION)

# tests/cuda_*.c need a GPU and skip (TAP SKIP) without one.
TEST_SRCS   := $(sort $(wildcard tests/test_*.c tests/cuda_*.c))
TEST_BINS   := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)
TEST_HELP   := $(sort $(filter-out tests/test_%.c tests/cuda_%.c,$(wildcard tests/*.c)))
TEST_HELPLIB := $(BUILD)/libtesthelp.a
STRESS_SRCS := $(sort $(wildcard stress/*_stress.c))
STRESS_BINS := $(STRESS_SRCS:stress/%.c=$(BUILD)/stress/%)
SOAK_BIN    := $(BUILD)/stress/soak
HEADERS     := $(sort $(wildcard include/mkrt/*.h))

.PHONY: all check headers-check stress soak tsan asan bench bench-quick bench-cuda plots demo examples install \
        uninstall deps bench-deps clean help tests
.DEFAULT_GOAL := all

all: $(STATIC) $(SHARED) $(BUILD)/libmkrt.so $(BUILD)/mkrt.pc

help:
	@sed -n '1,12p' Makefile

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BIN2C): tools/bin2c.c
	@mkdir -p $(@D)
	$(CC) -O2 -o $@ $<

ifneq ($(NVCC),)
$(FATBIN): src/cuda/megakernel.cu src/cuda/protocol.h
	@mkdir -p $(@D)
	$(NVCC) -O3 -fatbin $(CUDA_ARCH) -Isrc/cuda $< -o $@
$(LINK_FATBIN): src/cuda/megakernel.cu src/cuda/protocol.h
	@mkdir -p $(@D)
	$(NVCC) -O3 -fatbin -rdc=true -DMKRT_MK_USER_OPS=1 $(CUDA_ARCH) -Isrc/cuda $< -o $@
$(USER_PTX): tests/cuda/user_ops.cu
	@mkdir -p $(@D)
	$(NVCC) -O3 -rdc=true -ptx -arch=compute_80 $< -o $@
$(BUILD)/gen/megakernel_fatbin.c: $(FATBIN) $(BIN2C)
	@mkdir -p $(@D)
	$(BIN2C) mkrt__megakernel_fatbin $(FATBIN) $@
$(BUILD)/gen/megakernel_link_fatbin.c: $(LINK_FATBIN) $(BIN2C)
	@mkdir -p $(@D)
	$(BIN2C) mkrt__megakernel_link_fatbin $(LINK_FATBIN) $@
CUDA_TEST_DATA := $(USER_PTX)
else
$(BUILD)/gen/megakernel_fatbin.c: $(BIN2C)
	@mkdir -p $(@D)
	$(BIN2C) mkrt__megakernel_fatbin - $@
$(BUILD)/gen/megakernel_link_fatbin.c: $(BIN2C)
	@mkdir -p $(@D)
	$(BIN2C) mkrt__megakernel_link_fatbin - $@
CUDA_TEST_DATA :=
endif

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(OPT) $(SAN) -fPIC -c $< -o $@

$(STATIC): $(LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(SHARED): $(LIB_OBJS)
	$(CC) -shared -Wl,-soname,libmkrt.so.$(SOMAJOR) -Wl,--no-undefined $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/libmkrt.so: $(SHARED)
	ln -sf libmkrt.so.$(VERSION) $(BUILD)/libmkrt.so.$(SOMAJOR)
	ln -sf libmkrt.so.$(VERSION) $@

$(BUILD)/mkrt.pc: mkrt.pc.in Makefile
	@mkdir -p $(@D)
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
	    -e 's|@INCDIR@|$(INCDIR)|g' -e 's|@VERSION@|$(VERSION)|g' $< > $@

# Tests and stress programs link the static library so they can reach the
# internal hooks declared in src/ and queue/ headers.
$(TEST_HELPLIB): $(TEST_HELP:%.c=$(BUILD)/obj/%.o)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(TEST_HELPLIB) $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/stress/%: $(BUILD)/obj/stress/%.o $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# A stand-in libcuda.so.1 for the loader's failure paths (tests only).
FAKE_CUDA := $(BUILD)/tests/libfakecuda.so
$(FAKE_CUDA): tests/fakes/fake_libcuda.c src/backend/mk_loop.h src/cuda/protocol.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -shared -o $@ $< -lpthread

tests: $(TEST_BINS) $(STRESS_BINS) $(SOAK_BIN)

headers-check:
	@for h in $(HEADERS); do \
	  echo "#include \"$${h#include/}\"" | $(CC) $(CPPFLAGS) $(WARN) -fsyntax-only -x c - \
	    || { echo "header $$h does not compile on its own"; exit 1; }; \
	done; echo "headers: $(words $(HEADERS)) public headers compile on their own"

check: all $(TEST_BINS) $(EXAMPLES) $(FAKE_CUDA) $(CUDA_TEST_DATA) headers-check
	prove -f --exec 'timeout -k 5 $(TEST_TIMEOUT)' $(TEST_BINS)
	@echo "== again with the RMW wake-up protocol (MKRT_WAITQ_SYMMETRIC=1)"
	MKRT_WAITQ_SYMMETRIC=1 prove -f --exec 'timeout -k 5 $(TEST_TIMEOUT)' \
	    $(filter %_ring %_waitq %_runtime,$(TEST_BINS))

stress: $(STRESS_BINS) $(FAKE_CUDA)
	@set -e; for s in $(STRESS_BINS); do echo "== $$s $(SECONDS)s"; $$s --seconds $(SECONDS); done
ifneq ($(NVCC),)
	@echo "== $(BUILD)/stress/runtime_stress $(SECONDS)s on the CUDA backend (stand-in driver)"
	MKRT_LIBCUDA=$(CURDIR)/$(FAKE_CUDA) $(BUILD)/stress/runtime_stress --seconds $(SECONDS) --want-cuda 1
endif

# The soak (stress/soak.c) is not one of the stress programs: it runs for
# SECONDS when given on the command line, else 60 (or SOAK_SECONDS).
SOAK_SECONDS ?= $(if $(filter command line,$(origin SECONDS)),$(SECONDS),60)
soak: $(SOAK_BIN)
	$(SOAK_BIN) --seconds $(SOAK_SECONDS)

# Sanitizer builds live in their own trees; stress and soak runs stay
# short unless SECONDS is given.
SAN_SECONDS ?= 2
tsan:
	TSAN_OPTIONS="suppressions=$(CURDIR)/tsan.supp halt_on_error=1 $(TSAN_OPTIONS)" \
	$(MAKE) BUILD=$(BUILD)/tsan SAN="-fsanitize=thread" OPT="-O1 -g" \
	    SECONDS=$(SAN_SECONDS) check stress soak
asan:
	ASAN_OPTIONS="detect_leaks=1 $(ASAN_OPTIONS)" \
	$(MAKE) BUILD=$(BUILD)/asan OPT="-O1 -g -fno-omit-frame-pointer" \
	    SAN="-fsanitize=address,undefined -fno-sanitize-recover=all" \
	    SECONDS=$(SAN_SECONDS) check stress soak

# Benchmarks compare against peer libraries (make bench-deps).
BENCH_CFLAGS := $(OPT) -std=gnu11 -Wall -Wextra -Werror -pthread -Iinclude -D_GNU_SOURCE
BENCH_DPDK   := -I/usr/include/dpdk -I/usr/include/x86_64-linux-gnu/dpdk -include rte_config.h -msse4.2
$(BUILD)/bench/ring_bench: bench/ring_bench.c bench/bench_util.h $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) $(BENCH_DPDK) -o $@ bench/ring_bench.c $(STATIC) \
	    -lck $(URCU_LIBS) -lrte_ring -lrte_eal -lm -pthread

$(BUILD)/bench/plan_bench: bench/plan_bench.c bench/bench_util.h $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ bench/plan_bench.c $(STATIC) $(URCU_LIBS) -lm -pthread

$(BUILD)/bench/cache_bench: bench/cache_bench.c bench/bench_util.h $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ bench/cache_bench.c $(STATIC) $(URCU_LIBS) -lm -pthread

$(BUILD)/bench/runtime_bench: bench/runtime_bench.c bench/bench_util.h $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ bench/runtime_bench.c $(STATIC) $(URCU_LIBS) -lm -pthread

# The CUDA benchmark skips (exit 0) without a GPU; its per-layer kernel is
# built by nvcc when there is one.
$(BUILD)/bench/cuda_bench: bench/cuda_bench.c bench/bench_util.h $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ bench/cuda_bench.c $(STATIC) $(URCU_LIBS) -ldl -lm -pthread
BENCH_LAYER := build/cuda/bench_layer.fatbin
ifneq ($(NVCC),)
$(BENCH_LAYER): bench/cuda/layer_kernel.cu src/cuda/protocol.h
	@mkdir -p $(@D)
	$(NVCC) -O3 -fatbin $(CUDA_ARCH) $< -o $@
CUDA_BENCH_DATA := $(BENCH_LAYER)
endif

BENCHES := $(BUILD)/bench/ring_bench $(BUILD)/bench/plan_bench $(BUILD)/bench/cache_bench \
           $(BUILD)/bench/runtime_bench $(BUILD)/bench/cuda_bench $(CUDA_BENCH_DATA)
# `make bench` prints the figures and writes nothing; `make bench RECORD=1`
# (also `make bench-cuda RECORD=1`) records them as bench/results/NAME.md
# and NAME.csv, replacing the committed ones. bench-quick never records.
BENCH_RECORD = $(if $(filter-out 0,$(RECORD)),--out bench/results/$(1).md --csv bench/results/$(1).csv)
bench: $(BENCHES) ## benchmarks against peers, printed; RECORD=1 writes bench/results/*.md and *.csv
	$(BUILD)/bench/ring_bench $(call BENCH_RECORD,ring)
	$(BUILD)/bench/plan_bench $(call BENCH_RECORD,plan)
	$(BUILD)/bench/cache_bench $(call BENCH_RECORD,cache)
	$(BUILD)/bench/runtime_bench $(call BENCH_RECORD,runtime)
	$(BUILD)/bench/cuda_bench $(call BENCH_RECORD,cuda)

# On a GPU machine (no peer libraries needed): the CUDA figures alone.
bench-cuda: $(BUILD)/bench/cuda_bench $(CUDA_BENCH_DATA) ## the GPU benchmark alone; RECORD=1 writes bench/results/cuda.*
	$(BUILD)/bench/cuda_bench $(call BENCH_RECORD,cuda)

bench-quick: $(BENCHES) ## every benchmark in quick mode (what CI runs); writes nothing
	$(BUILD)/bench/ring_bench --quick
	$(BUILD)/bench/plan_bench --quick
	$(BUILD)/bench/cache_bench --quick
	$(BUILD)/bench/runtime_bench --quick
	$(BUILD)/bench/cuda_bench --quick

# Charts of the recorded figures: bench/plots/NAME.gp reads
# bench/results/NAME.csv and draws bench/results/plots/NAME.png. cuda.gp
# skips, with a note, while there is no bench/results/cuda.csv.
PLOTS := ring runtime cuda
plots: ## PNG charts of bench/results/*.csv into bench/results/plots/ (needs gnuplot: make bench-deps)
	@command -v gnuplot >/dev/null || { echo "plots: no gnuplot (make bench-deps installs gnuplot-nox)"; exit 1; }
	@mkdir -p bench/results/plots
	@set -e; for p in $(PLOTS); do echo "gnuplot bench/plots/$$p.gp"; gnuplot bench/plots/$$p.gp; done

$(BUILD)/examples/%: examples/%.c $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(STATIC) $(LDFLAGS) $(LDLIBS)

EXAMPLES := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))
examples: $(EXAMPLES)

# The README's main demo: a dataflow analysis through the runtime (CPU).
demo: $(EXAMPLES)
	$(BUILD)/examples/minimal
	$(BUILD)/examples/analysis_demo

install: all
	install -d $(DESTDIR)$(INCDIR)/mkrt $(DESTDIR)$(LIBDIR)/pkgconfig
	install -m 644 $(HEADERS) $(DESTDIR)$(INCDIR)/mkrt/
	install -m 644 $(STATIC) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(SHARED) $(DESTDIR)$(LIBDIR)/
	ln -sf libmkrt.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libmkrt.so.$(SOMAJOR)
	ln -sf libmkrt.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libmkrt.so
	install -m 644 $(BUILD)/mkrt.pc $(DESTDIR)$(LIBDIR)/pkgconfig/

uninstall:
	rm -rf $(DESTDIR)$(INCDIR)/mkrt
	rm -f $(DESTDIR)$(LIBDIR)/libmkrt.* $(DESTDIR)$(LIBDIR)/pkgconfig/mkrt.pc

# Debian packages. `deps` is what build + tests need; `bench-deps` adds the
# peer libraries the benchmarks compare against and gnuplot for `make plots`.
DEPS_PKGS       := make gcc clang perl pkg-config liburcu-dev libclang-rt-dev
BENCH_DEPS_PKGS := libck-dev dpdk-dev liburcu-dev gnuplot-nox
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
define apt_install
	@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' \
	    || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	else echo "deps: all of $(1) installed"; fi
endef
deps:
	$(call apt_install,$(DEPS_PKGS))
bench-deps: ## apt-get install the benchmarks' peer libraries and gnuplot (idempotent)
	$(call apt_install,$(BENCH_DEPS_PKGS))

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
.SECONDARY:
