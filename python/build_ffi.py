# SPDX-License-Identifier: BSD-2-Clause
"""cffi (API mode) builder of mkrt._mkrt over the public headers include/mkrt/.

The declarations below are the subset of include/mkrt/*.h the Python
package binds. In API mode the C compiler checks every one of them against
the real header when the extension is built (a field, type or constant that
does not match fails the build), and structs end in `...;` so that fields
the C library adds later do not break it. Constants of the traversal kinds
are read from include/mkrt/graph.h, so a kind the C library gains appears
in `lib` without an edit here (mkrt/_graph.py then names it in one line);
PageRank's calls are declared where the header has them.

Linking: libmkrt.a (position-independent, the whole public API; and
libmkrt_stream.a where the streaming graph is a layer of its own) is linked
into the extension, its internal symbols kept local (--exclude-libs); the
liburcu shared objects it needs are copied next to the extension and found
through rpath $ORIGIN (Debian's liburcu*.a are not position-independent, so
they cannot go into a shared object), so a wheel works without the source
tree and without liburcu installed.

Environment:
  MKRT_ROOT     the mkrt source tree (default: the parent of this folder)
  MKRT_BUILD    its build folder, relative to MKRT_ROOT or absolute (default: build)
  MKRT_NO_MAKE  1: do not run make first (the caller built libmkrt.a)
  CC            the C compiler (as for the library)

Run as a script (`python3 build_ffi.py OUTDIR`) it compiles the extension
into OUTDIR/mkrt/ (what `make check-python` does).
"""
import os
import re
import shutil
import subprocess
import sys

from cffi import FFI

HERE = os.path.dirname(os.path.abspath(__file__))


class BuildError(RuntimeError):
    pass


def mkrt_root():
    root = os.environ.get("MKRT_ROOT") or os.path.dirname(HERE)
    if not os.path.isfile(os.path.join(root, "include", "mkrt", "mkrt.h")):
        raise BuildError(
            "mkrt's public headers are not at %s/include/mkrt/mkrt.h. Fix: build from the "
            "mkrt source tree (pip install ./python in it), or set MKRT_ROOT to that tree" % root)
    return os.path.abspath(root)


ROOT = mkrt_root()
BUILD = os.path.join(ROOT, os.environ.get("MKRT_BUILD", "build"))
STATIC = os.path.join(BUILD, "libmkrt.a")
# The streaming graph: include/mkrt/stream.h inside libmkrt, or (the
# packaging rule of issue 32) a layer of its own, include/mkrt_stream/
# stream.h and libmkrt_stream.a, linked before libmkrt.a.
STREAM_LAYER = os.path.isfile(os.path.join(ROOT, "include", "mkrt_stream", "stream.h"))
STREAM_STATIC = os.path.join(BUILD, "libmkrt_stream.a")
LIBS = [STREAM_STATIC, STATIC] if STREAM_LAYER else [STATIC]
URCU_PKGS = ["liburcu-cds", "liburcu-memb"]


def build_library():
    """Runs the repository's make for libmkrt.a (up to date: nothing to do)."""
    if os.environ.get("MKRT_NO_MAKE") == "1":
        for lib_ in LIBS:
            if not os.path.isfile(lib_):
                raise BuildError("MKRT_NO_MAKE=1 but %s does not exist. Fix: run make in %s first"
                                 % (lib_, ROOT))
        return
    cmd = ["make", "-C", ROOT, "--no-print-directory",
           "BUILD=" + os.path.relpath(BUILD, ROOT)] + [os.path.relpath(lib_, ROOT) for lib_ in LIBS]
    try:
        subprocess.run(cmd, check=True, stdout=sys.stderr)
    except (OSError, subprocess.CalledProcessError) as e:
        raise BuildError("building %s with `%s` failed (%s). Fix: run `make deps` and `make` in %s "
                         "and read the first error" % (", ".join(LIBS), " ".join(cmd), e, ROOT))


def pkg_config(*args):
    try:
        out = subprocess.run(["pkg-config"] + list(args), check=True, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as e:
        raise BuildError("pkg-config %s failed (%s): liburcu is needed to link mkrt. "
                         "Fix: make deps (installs pkg-config and liburcu-dev)" % (" ".join(args), e))
    return out.stdout.split()


def urcu_shared_objects():
    """The liburcu shared objects the extension loads, by their SONAME file names."""
    libdirs = [a[2:] for a in pkg_config("--libs-only-L", *URCU_PKGS)]
    libdirs += [pkg_config("--variable=libdir", p)[0] for p in URCU_PKGS]
    names = [a[2:] for a in pkg_config("--libs-only-l", *URCU_PKGS)]
    found = []
    for name in names:
        for d in libdirs:
            so = os.path.join(d, "lib%s.so" % name)
            if os.path.exists(so):
                real = os.path.realpath(so)
                soname = soname_of(real) or os.path.basename(real)
                found.append((real, soname))
                break
        else:
            raise BuildError("lib%s.so is not in %s. Fix: make deps (installs liburcu-dev)"
                             % (name, ", ".join(libdirs)))
    return names, libdirs, found


def soname_of(path):
    try:
        out = subprocess.run(["objdump", "-p", path], check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    m = re.search(r"^\s*SONAME\s+(\S+)", out, re.M)
    return m.group(1) if m else None


def traversal_kinds():
    """The MKRT_TRAVERSAL_* enumerators of include/mkrt/graph.h."""
    with open(os.path.join(ROOT, "include", "mkrt", "graph.h")) as f:
        text = f.read()
    m = re.search(r"typedef enum mkrt_traversal_kind \{(.*?)\} mkrt_traversal_kind;", text, re.S)
    if not m:
        raise BuildError("include/mkrt/graph.h has no `typedef enum mkrt_traversal_kind`. Fix: update "
                         "python/build_ffi.py to the header")
    body = re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)
    return re.findall(r"\b(MKRT_TRAVERSAL_[A-Z0-9_]+)\b", body)


CDEF_HEAD = r"""
typedef enum mkrt_status {
    MKRT_OK, MKRT_EAGAIN, MKRT_EINVAL, MKRT_ENOMEM, MKRT_EOVERFLOW, MKRT_ECLOSED,
    MKRT_ETIMEDOUT, MKRT_ECYCLE, MKRT_EBUDGET, MKRT_EDEVICE, MKRT_ENOTSUP, MKRT_ESTATE, ...
} mkrt_status;
#define MKRT_ERROR_MESSAGE_MAX ...
typedef struct mkrt_error { mkrt_status status; char message[...]; ...; } mkrt_error;
const char *mkrt_status_name(mkrt_status status);
const char *mkrt_status_describe(mkrt_status status);
#define MKRT_TIMEOUT_INFINITE ...

const char *mkrt_version(void);
unsigned mkrt_version_number(void);

typedef struct mkrt_item { uint32_t op; uint32_t in; uint32_t out; uint32_t param; } mkrt_item;

#define MKRT_OP_MAX ...
#define MKRT_OP_NOP ...
#define MKRT_OP_STORE ...
#define MKRT_OP_ADD ...
#define MKRT_OP_APPEND ...
#define MKRT_OP_MIN ...
#define MKRT_OP_RELAX ...
#define MKRT_OP_OR ...
#define MKRT_OP_ACC ...
#define MKRT_OP_USER_FIRST ...
#define MKRT_CONFIG_WORKERS_MAX ...
#define MKRT_CONFIG_CELLS_MAX ...
#define MKRT_PLAN_ALL ...

typedef enum mkrt_backend_kind { MKRT_BACKEND_AUTO, MKRT_BACKEND_CPU, MKRT_BACKEND_CUDA,
                                 MKRT_BACKEND_SIM, ... } mkrt_backend_kind;
typedef struct mkrt_runtime mkrt_runtime;
typedef struct mkrt_producer mkrt_producer;
typedef void (*mkrt_error_fn)(void *ctx, const mkrt_item *item, mkrt_status why, const char *message);
typedef struct mkrt_config {
    mkrt_backend_kind backend;
    uint32_t workers;
    size_t ring_capacity;
    size_t max_batch;
    uint32_t max_producers;
    size_t burst_per_ring;
    uint64_t device_memory_budget;
    uint32_t watchdog_ms;
    uint32_t cells;
    size_t append_log_capacity;
    mkrt_error_fn on_error;
    void *error_ctx;
    size_t dead_letter_capacity;
    uint32_t cuda_max_blocks;
    uint32_t device_idle_us;
    uint32_t device_resident_us;
    uint32_t cuda_device_state;
    uint32_t cuda_blocks_per_sm;
    size_t emit_capacity;
    uint32_t plan_off;
    ...;
} mkrt_config;
mkrt_config mkrt_config_default(void);

mkrt_status mkrt_create(const mkrt_config *cfg, mkrt_runtime **rt, mkrt_error *err);
mkrt_status mkrt_destroy(mkrt_runtime *rt, uint64_t timeout_ns, mkrt_error *err);
mkrt_status mkrt_drain(mkrt_runtime *rt, uint64_t timeout_ns);
mkrt_status mkrt_quiesce(mkrt_runtime *rt, uint64_t timeout_ns);
mkrt_status mkrt_cell_read(mkrt_runtime *rt, uint32_t handle, uint64_t *value);
mkrt_status mkrt_cells_read(mkrt_runtime *rt, uint32_t first, size_t count, uint64_t *out);
mkrt_status mkrt_cell_write(mkrt_runtime *rt, uint32_t handle, uint64_t value);
typedef struct mkrt_append_entry { uint32_t handle, param; } mkrt_append_entry;
size_t mkrt_append_log_read(mkrt_runtime *rt, uint32_t handle, uint32_t *out, size_t max);
size_t mkrt_append_log_consume(mkrt_runtime *rt, mkrt_append_entry *out, size_t max);

mkrt_producer *mkrt_producer_open(mkrt_runtime *rt, mkrt_error *err);
void mkrt_producer_close(mkrt_producer *p);
mkrt_status mkrt_publish_some(mkrt_producer *p, const mkrt_item *items, size_t n, uint64_t timeout_ns,
                              size_t *published, mkrt_error *err);
mkrt_status mkrt_fence(mkrt_producer *p, uint64_t *ticket);
mkrt_status mkrt_wait(mkrt_producer *p, uint64_t ticket, uint64_t timeout_ns);

typedef enum mkrt_plan_counter {
    MKRT_PLAN_N_WAKE_NARROWED, MKRT_PLAN_N_SHED, MKRT_PLAN_N_FUSED, MKRT_PLAN_N_CPU_ROUTED,
    MKRT_PLAN_N_REQUEUES, MKRT_PLAN_N_PROMOTED, MKRT_PLAN_N_FULLEST_FIRST, MKRT_PLAN_N_PULL_LEVELS,
    MKRT_PLAN_N_PUSH_LEVELS, MKRT_PLAN_N_ARMS_SKIPPED, MKRT_PLAN_N_QUEUE_LEVELS,
    MKRT_PLAN_N_BITSET_LEVELS, MKRT_PLAN_COUNTERS, ...
} mkrt_plan_counter;
typedef struct mkrt_stats {
    uint64_t published, executed, pruned, failed;
    uint64_t batches, layers, global_barriers;
    uint64_t plan_cache_hits, plan_cache_misses;
    uint64_t ring_high_water;
    uint64_t dead_letters_dropped;
    uint64_t latency_samples;
    uint64_t latency_p50_ns, latency_p99_ns, latency_p999_ns;
    uint32_t producers_open;
    uint32_t workers;
    const char *backend;
    uint64_t device_batches;
    uint64_t device_failures;
    const char *backend_detail;
    uint64_t emitted;
    uint64_t changed;
    uint64_t plan_counts[...];
    uint64_t levels_pushed;
    uint64_t levels_pulled;
    uint64_t edges_examined;
    uint64_t units_run;
    uint64_t units_by_planner;
    ...;
} mkrt_stats;
mkrt_status mkrt_stats_read(mkrt_runtime *rt, mkrt_stats *out);
const char *mkrt_backend_describe(mkrt_runtime *rt);

typedef struct mkrt_plan_record {
    uint64_t batch; uint64_t items; uint32_t layers; uint32_t on_device;
    uint64_t ring_waiting; uint32_t pressure; uint32_t memory_bps; uint64_t cpu_ps_per_item;
    uint64_t handoff_ns; uint64_t device_trip_ns; uint32_t frontier_bps; uint32_t frontier_class;
    uint32_t width; uint32_t workers; uint32_t share_min; uint32_t grid_barriers;
    uint32_t fused_layers; uint32_t topology; uint32_t route; uint32_t first_reason;
    uint32_t first_slot; uint32_t pulled; uint32_t arms; uint32_t arm_skipped;
    uint32_t frontier_queue; uint64_t run_ns;
    ...;
} mkrt_plan_record;
size_t mkrt_plan_explain(struct mkrt_runtime *rt, mkrt_plan_record *out, size_t max);

typedef struct mkrt_graph {
    uint32_t vertices; const uint64_t *offsets; const uint32_t *targets; const uint32_t *weights; ...;
} mkrt_graph;
mkrt_status mkrt_graph_register(mkrt_runtime *rt, const mkrt_graph *g, mkrt_error *err);
#define MKRT_TRAVERSALS_MAX ...
typedef struct mkrt_traversal mkrt_traversal;
typedef int... mkrt_traversal_kind;
typedef struct mkrt_traversal_desc { mkrt_traversal_kind kind; bool symmetric; ...; } mkrt_traversal_desc;
typedef struct mkrt_traversal_stats {
    uint64_t levels_pushed; uint64_t levels_pulled; uint64_t edges_examined; ...;
} mkrt_traversal_stats;
mkrt_status mkrt_traversal_open(mkrt_runtime *rt, const mkrt_traversal_desc *d, mkrt_traversal **out,
                                mkrt_error *err);
mkrt_status mkrt_traversal_start(mkrt_traversal *t, uint32_t root, mkrt_error *err);
mkrt_status mkrt_traversal_wait(mkrt_traversal *t, uint64_t timeout_ns);
mkrt_status mkrt_traversal_read(const mkrt_traversal *t, uint32_t first, size_t count, uint64_t *out,
                                mkrt_error *err);
mkrt_status mkrt_traversal_parents(const mkrt_traversal *t, uint32_t first, size_t count, uint32_t *out,
                                   mkrt_error *err);
mkrt_status mkrt_traversal_stats_read(const mkrt_traversal *t, mkrt_traversal_stats *out);
mkrt_status mkrt_traversal_close(mkrt_traversal *t, mkrt_error *err);

#define MKRT_STREAM_QUERIES_MAX ...
#define MKRT_STREAM_WEIGHT_LIMIT ...
#define MKRT_STREAM_OPS ...
typedef enum mkrt_stream_kind { MKRT_STREAM_BFS, MKRT_STREAM_SSSP, MKRT_STREAM_CC, ... } mkrt_stream_kind;
typedef struct mkrt_stream_query { mkrt_stream_kind kind; uint32_t source; ...; } mkrt_stream_query;
typedef struct mkrt_stream_config {
    uint32_t vertices; uint32_t weight_max; uint32_t op_base; uint32_t queries;
    mkrt_stream_query query[...];
    ...;
} mkrt_stream_config;
typedef struct mkrt_stream mkrt_stream;
typedef struct mkrt_stream_stats {
    uint64_t inserted, deleted, duplicates;
    uint64_t failed_invalid; uint64_t failed_absent; uint64_t failed_resource; uint64_t failed_queries;
    uint64_t applies; uint64_t position; uint64_t reset; uint64_t relaxed; uint64_t edges;
    uint64_t graph_bytes; uint64_t csr_bytes;
    ...;
} mkrt_stream_stats;
typedef struct mkrt_stream_view { mkrt_stream *stream; uint64_t position; ...; } mkrt_stream_view;
mkrt_stream_config mkrt_stream_config_default(void);
mkrt_status mkrt_stream_create(const mkrt_stream_config *cfg, mkrt_stream **out, mkrt_error *err);
void mkrt_stream_destroy(mkrt_stream *s);
mkrt_status mkrt_stream_load(mkrt_stream *s, const uint32_t *src, const uint32_t *dst, const uint32_t *w,
                             size_t n, uint64_t *skipped, mkrt_error *err);
mkrt_status mkrt_stream_register(mkrt_stream *s, mkrt_runtime *rt, mkrt_error *err);
mkrt_status mkrt_stream_view_open(mkrt_stream *s, mkrt_stream_view *view);
mkrt_status mkrt_stream_view_read(const mkrt_stream_view *view, uint32_t query, uint32_t first, size_t count,
                                  uint64_t *out, mkrt_error *err);
void mkrt_stream_view_close(mkrt_stream_view *view);
mkrt_status mkrt_stream_recompute(const mkrt_stream *s, uint32_t query, uint64_t *out, mkrt_error *err);
mkrt_status mkrt_stream_stats_read(const mkrt_stream *s, mkrt_stream_stats *out);

/* The binding's own helpers (python/build_ffi.py, over the public API only). */
typedef struct mkrtpy_failure { mkrt_item item; int32_t status; char message[...]; ...; } mkrtpy_failure;
typedef struct mkrtpy_log mkrtpy_log;
mkrtpy_log *mkrtpy_log_new(size_t cap);
void mkrtpy_log_free(mkrtpy_log *log);
void mkrtpy_config_set_log(mkrt_config *cfg, mkrtpy_log *log);
int mkrtpy_log_add_stream(mkrtpy_log *log, mkrt_stream *s);
size_t mkrtpy_log_take(mkrtpy_log *log, mkrtpy_failure *out, size_t max, uint64_t *total, uint64_t *dropped);
mkrt_status mkrtpy_stream_items(const mkrt_stream *s, int del, const uint32_t *u, const uint32_t *v,
                                const uint32_t *w, size_t n, mkrt_item *out);
mkrt_status mkrtpy_nop_calls(size_t n);
"""

# C helpers compiled into the extension: they use the public API only.
HELPERS = r"""
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "mkrt/mkrt.h"

#define MKRTPY_STREAMS_MAX 16

/* One failed item, as the runtime's error callback reported it. */
typedef struct mkrtpy_failure {
    mkrt_item item;
    int32_t status;
    char message[MKRT_ERROR_MESSAGE_MAX];
} mkrtpy_failure;

/* The failures of one runtime, kept for Python (Runtime.failures()): the
 * first cap since the last take, then only counted. The callback runs on
 * the dispatcher (or a waiting thread) and never enters Python. */
typedef struct mkrtpy_log {
    pthread_mutex_t mu;
    mkrtpy_failure *slots;
    size_t cap, count;
    uint64_t total, dropped;
    mkrt_stream *streams[MKRTPY_STREAMS_MAX];
    unsigned nstreams;
} mkrtpy_log;

static mkrtpy_log *mkrtpy_log_new(size_t cap)
{
    mkrtpy_log *log = calloc(1, sizeof *log);
    if (!log)
        return NULL;
    log->slots = calloc(cap ? cap : 1, sizeof *log->slots);
    if (!log->slots || pthread_mutex_init(&log->mu, NULL) != 0) {
        free(log->slots);
        free(log);
        return NULL;
    }
    log->cap = cap;
    return log;
}

static void mkrtpy_log_free(mkrtpy_log *log)
{
    if (!log)
        return;
    pthread_mutex_destroy(&log->mu);
    free(log->slots);
    free(log);
}

static void mkrtpy_on_error(void *ctx, const mkrt_item *item, mkrt_status why, const char *message)
{
    mkrtpy_log *log = ctx;
    pthread_mutex_lock(&log->mu);
    log->total++;
    if (log->count == log->cap) {
        log->dropped++;
        pthread_mutex_unlock(&log->mu);
        return;
    }
    mkrtpy_failure *f = &log->slots[log->count++];
    f->item = *item;
    f->status = why;
    f->message[0] = 0;
    /* A stream's items: the stream explains them (and counts the ones its
     * ops never saw); any other item keeps the runtime's message. */
    int explained = 0;
    for (unsigned i = 0; i < log->nstreams && !explained; i++)
        explained = mkrt_stream_failed(log->streams[i], item, why, f->message, sizeof f->message) == MKRT_OK;
    if (!explained) {
        strncpy(f->message, message ? message : "", sizeof f->message - 1);
        f->message[sizeof f->message - 1] = 0;
    }
    pthread_mutex_unlock(&log->mu);
}

static void mkrtpy_config_set_log(mkrt_config *cfg, mkrtpy_log *log)
{
    cfg->on_error = mkrtpy_on_error;
    cfg->error_ctx = log;
}

static int mkrtpy_log_add_stream(mkrtpy_log *log, mkrt_stream *s)
{
    int ok = 0;
    pthread_mutex_lock(&log->mu);
    if (log->nstreams < MKRTPY_STREAMS_MAX) {
        log->streams[log->nstreams++] = s;
        ok = 1;
    }
    pthread_mutex_unlock(&log->mu);
    return ok;
}

/* Takes up to max failures, oldest first; the rest stay (in order). */
static size_t mkrtpy_log_take(mkrtpy_log *log, mkrtpy_failure *out, size_t max, uint64_t *total,
                              uint64_t *dropped)
{
    pthread_mutex_lock(&log->mu);
    size_t n = log->count < max ? log->count : max;
    memcpy(out, log->slots, n * sizeof *out);
    memmove(log->slots, log->slots + n, (log->count - n) * sizeof *out);
    log->count -= n;
    *total = log->total;
    *dropped = log->dropped;
    pthread_mutex_unlock(&log->mu);
    return n;
}

/* The items that insert (del = 0) or delete (del = 1) n edges. */
static mkrt_status mkrtpy_stream_items(const mkrt_stream *s, int del, const uint32_t *u, const uint32_t *v,
                                       const uint32_t *w, size_t n, mkrt_item *out)
{
    for (size_t i = 0; i < n; i++) {
        mkrt_status st = del ? mkrt_stream_delete_item(s, u[i], v[i], &out[i])
                             : mkrt_stream_insert_item(s, u[i], v[i], w ? w[i] : 1, &out[i]);
        if (st != MKRT_OK)
            return st;
    }
    return MKRT_OK;
}

/* n calls of a public function that does nothing but answer: the cost of
 * a C call without Python, beside the binding's per-call cost (bench). */
static mkrt_status mkrtpy_nop_calls(size_t n)
{
    unsigned sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += mkrt_version_number();
    return sum == (unsigned)n * mkrt_version_number() ? MKRT_OK : MKRT_EINVAL;
}
"""


# PageRank's own calls, declared where include/mkrt/graph.h has them.
CDEF_PAGERANK = r"""
typedef struct mkrt_pagerank_params { double damping; double tolerance; uint32_t max_iterations; ...; }
    mkrt_pagerank_params;
mkrt_status mkrt_traversal_start_pagerank(mkrt_traversal *t, const mkrt_pagerank_params *p, mkrt_error *err);
mkrt_status mkrt_traversal_read_ranks(const mkrt_traversal *t, uint32_t first, size_t count, double *out,
                                      uint32_t *iterations, mkrt_error *err);
"""


def graph_header_has(name):
    with open(os.path.join(ROOT, "include", "mkrt", "graph.h")) as f:
        return re.search(r"\b%s\b" % re.escape(name), f.read()) is not None


def make_ffibuilder():
    names, libdirs, _ = urcu_shared_objects()
    kinds = traversal_kinds()
    cdef = CDEF_HEAD + "".join("#define %s ...\n" % k for k in kinds)
    if graph_header_has("mkrt_traversal_read_ranks"):
        cdef += CDEF_PAGERANK
    ffi = FFI()
    ffi.cdef(cdef)
    ffi.set_source(
        "mkrt._mkrt",
        ('#include "mkrt_stream/stream.h"\n' if STREAM_LAYER else "") + HELPERS,
        include_dirs=[os.path.join(ROOT, "include")],
        extra_objects=LIBS,
        libraries=names + ["dl", "m", "pthread"],
        library_dirs=libdirs,
        extra_compile_args=["-std=c11", "-D_GNU_SOURCE", "-O2"],
        extra_link_args=["-Wl,--exclude-libs,ALL", "-Wl,-rpath,$ORIGIN", "-pthread"],
    )
    return ffi


def copy_urcu(dest_dir):
    """Copies the liburcu shared objects next to the extension (rpath $ORIGIN)."""
    for real, soname in urcu_shared_objects()[2]:
        target = os.path.join(dest_dir, soname)
        if os.path.exists(target):
            os.chmod(target, 0o755)
        shutil.copyfile(real, target)
        os.chmod(target, 0o755)


build_library()
ffibuilder = make_ffibuilder()

if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: build_ffi.py OUTDIR   (compiles the extension into OUTDIR/mkrt/)")
    out = os.path.abspath(sys.argv[1])
    os.makedirs(os.path.join(out, "mkrt"), exist_ok=True)
    so = ffibuilder.compile(tmpdir=out, verbose=False)
    copy_urcu(os.path.dirname(so))
    print(so)
