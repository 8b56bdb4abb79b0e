# SPDX-License-Identifier: BSD-2-Clause
# mk/stream.mk - libmkrt_stream, the streaming graph layer (included by the
# Makefile). A layer on libmkrt's public API, packaged by the one rule of
# docs/design.md, "Packaging": its sources in stream/, its header in
# include/mkrt_stream/, libmkrt_stream.a and libmkrt_stream.so (exporting
# mkrt_stream_* only, stream/libmkrt_stream.map), mkrt-stream.pc, and
# `make install-stream` (part of `make install`). `make check` runs
# check-stream: its null probe, header, API docs and exports.
#
# The sources call base/'s allocation and error functions, which
# libmkrt.so does not export: libmkrt_stream.so carries its own build of
# base/alloc.c and base/error.c (hidden by its map), alloc.c built with
# MKRT_LAYER_BUILD so that it allocates through the allocator installed
# in libmkrt.so (mkrt_allocator_get). The static library holds the
# stream's objects only: a program links it before libmkrt.a.

STREAM_SRCS      := $(sort $(wildcard stream/*.c))
STREAM_OBJS      := $(STREAM_SRCS:%.c=$(BUILD)/obj/%.o)
STREAM_STATIC    := $(BUILD)/libmkrt_stream.a
STREAM_SHARED    := $(BUILD)/libmkrt_stream.so.$(VERSION)
STREAM_HEADERS   := $(sort $(wildcard include/mkrt_stream/*.h))
STREAM_BASE_OBJS := $(BUILD)/lobj/base/alloc.o $(BUILD)/lobj/base/error.o
STREAM_NULL_PROBE := $(BUILD)/stream/tests/null_probe

.PHONY: stream check-stream install-stream

stream: $(STREAM_STATIC) $(STREAM_SHARED) ## libmkrt_stream.a and libmkrt_stream.so (the streaming graph layer)

$(STREAM_OBJS) $(STREAM_BASE_OBJS): | $(FLOORS_OK)
$(BUILD)/lobj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -DMKRT_LAYER_BUILD $(CFLAGS) -c $< -o $@

$(STREAM_STATIC): $(STREAM_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(STREAM_SHARED): $(STREAM_OBJS) $(STREAM_BASE_OBJS) stream/libmkrt_stream.map $(BUILD)/libmkrt.so
	$(CC) -shared -Wl,-soname,libmkrt_stream.so.$(SOVERSION) -Wl,--version-script=stream/libmkrt_stream.map \
	    -Wl,--no-undefined $(LDFLAGS) -o $@ $(STREAM_OBJS) $(STREAM_BASE_OBJS) -L$(BUILD) -lmkrt -lm
	ln -sf libmkrt_stream.so.$(VERSION) $(BUILD)/libmkrt_stream.so.$(SOVERSION)
	ln -sf libmkrt_stream.so.$(VERSION) $(BUILD)/libmkrt_stream.so

# The programs of the tree that use the layer link it before libmkrt.
$(BUILD)/examples/stream_graph: examples/stream_graph.c $(STREAM_STATIC) $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(STREAM_STATIC) $(STATIC) $(LDFLAGS) $(LDLIBS)

$(eval $(call layer_null_probe,stream,$(STREAM_HEADERS),$(STREAM_STATIC),$(STREAM_NULL_PROBE)))

check-stream: $(STREAM_NULL_PROBE) $(STREAM_SHARED) ## libmkrt_stream: null probe, header alone, API docs, exports
	prove -f --exec 'timeout -k 5 $(TEST_TIMEOUT)' $(STREAM_NULL_PROBE)
	@for h in $(STREAM_HEADERS); do \
	  echo "#include \"$${h#include/}\"" | $(CC) $(CPPFLAGS) $(WARN) -fsyntax-only -x c - \
	    || { echo "header $$h does not compile on its own"; exit 1; }; \
	done; echo "headers: $(STREAM_HEADERS) compiles on its own"
	$(call layer_docs_check,stream)
	@nm -D --defined-only $(STREAM_SHARED) | awk '{ sub(/@.*/, "", $$NF); print $$NF }' | \
	  grep -v '^mkrt_stream_' | grep -v '^$$' > $(BUILD)/stream_extra_exports.txt || true; \
	if [ -s $(BUILD)/stream_extra_exports.txt ]; then echo "libmkrt_stream exports more than mkrt_stream_*:"; \
	  cat $(BUILD)/stream_extra_exports.txt; exit 1; fi; \
	nm -D --defined-only $(STREAM_SHARED) | grep -q ' T mkrt_stream_create$$' || \
	  { echo "libmkrt_stream.so does not export mkrt_stream_create"; exit 1; }; \
	echo "exports: libmkrt_stream.so exports mkrt_stream_* only"

install-stream: $(STREAM_STATIC) $(STREAM_SHARED) ## libmkrt_stream, include/mkrt_stream/ and mkrt-stream.pc into $(DESTDIR)$(PREFIX)
	$(call install_layer,stream,$(STREAM_HEADERS),$(STREAM_STATIC),$(STREAM_SHARED))
