// SPDX-License-Identifier: BSD-2-Clause
// bench/risgraph_driver.cpp - the peer side of stream_bench --risgraph DIR:
// RisGraph (SIGMOD'21; a build of it at DIR, see bench/results/stream.md)
// run on exactly the workload stream_bench gives mkrt. It is built inside
// RisGraph's own CMake tree (mk/bench.mk adds it there), with RisGraph's
// flags and libraries; it only calls RisGraph's core/graph.hpp, as
// RisGraph's own *_inc_batch programs do, with the graph kept undirected
// (symmetric storage, each edge both ways) and up to three trees on it.
//
//   mkrt_stream_driver EDGES VERTICES LOADED BATCH WINDOW MASK ROOT OUT
//
// EDGES: a file of (u, v, w) uint32 triples, unique undirected edges, no
// self-loops. The first LOADED are loaded, the trees built; then
// WINDOW / BATCH batches each insert the next BATCH edges and delete the
// oldest BATCH (the sliding window), every tree exact after each batch.
// MASK: 1 BFS, 2 SSSP, 4 CC from ROOT. OUT receives, per analysis in mask
// order, VERTICES uint64 values (UINT64_MAX for unreached). Prints one line:
//   updates_per_s p50_us p99_us p999_us resident_bytes
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

#include <omp.h>

#include "core/graph.hpp"
#include "core/type.hpp"

namespace {

struct Triple {
    uint32_t u, v, w;
};

uint64_t resident_bytes()
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long size = 0, rss = 0;
    if (f != nullptr) {
        if (fscanf(f, "%llu %llu", &size, &rss) != 2)
            rss = 0;
        fclose(f);
    }
    return rss * 4096ull;
}

const uint64_t UNREACHED_BFS = 65536, UNREACHED_SSSP = 1ull << 40;

template <typename G, int K> struct Analysis {
    // K: 0 BFS, 1 SSSP, 2 CC (min label)
    uint64_t root;
    uint64_t unreached() const { return K == 0 ? UNREACHED_BFS : UNREACHED_SSSP; }
    static uint64_t step(uint64_t s, const typename G::adjedge_type &e)
    {
        if constexpr (K == 1)
            return s + e.data;
        else
            return K == 0 ? s + 1 : s;
    }
    std::pair<bool, uint64_t> update(uint64_t s, uint64_t d, typename G::adjedge_type e) const
    {
        uint64_t c = step(s, e);
        return std::make_pair(c < d, c);
    }
    std::pair<uint64_t, bool> init(uint64_t vid) const
    {
        if (K == 2)
            return {vid, true};
        return {vid == root ? 0 : unreached(), vid == root};
    }
    bool equal(uint64_t s, uint64_t d, typename G::adjedge_type e) const { return step(s, e) == d; }
};

auto continue_reduce = [](uint64_t, uint64_t total, uint64_t local) -> std::pair<bool, uint64_t> {
    return std::make_pair(local > 0, total + local);
};
auto active_result = [](uint64_t old, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) -> uint64_t { return old + 1; };

template <typename G, int K> struct Tree {
    using Labels = std::vector<typename G::template VertexTree<uint64_t>>;
    using AE = typename G::adjedge_type;
    using EV = std::vector<typename G::edge_type>;
    Analysis<G, K> a;
    Labels labels;
    Tree(G &g, uint64_t root) : a{root}, labels(g.template alloc_vertex_tree_array<uint64_t>())
    {
        auto init = [this](uint64_t v) { return a.init(v); };
        auto upd = [this](uint64_t, uint64_t, uint64_t s, uint64_t d, AE e) { return a.update(s, d, e); };
        g.template build_tree<uint64_t, uint64_t>(init, continue_reduce, upd, active_result, labels);
    }
    void added(G &g, const EV &e, uint64_t n)
    {
        auto upd = [this](uint64_t, uint64_t, uint64_t s, uint64_t d, AE x) { return a.update(s, d, x); };
        g.template update_tree_add<uint64_t, uint64_t>(continue_reduce, upd, active_result, labels, e, n, false);
    }
    void deleted(G &g, const EV &e, uint64_t n)
    {
        auto init = [this](uint64_t v) { return a.init(v); };
        auto upd = [this](uint64_t, uint64_t, uint64_t s, uint64_t d, AE x) { return a.update(s, d, x); };
        auto eq = [this](uint64_t, uint64_t, uint64_t s, uint64_t d, AE x) { return a.equal(s, d, x); };
        g.template update_tree_del<uint64_t, uint64_t>(init, continue_reduce, upd, active_result, eq, labels, e, n, false);
    }
    void write(FILE *f) const
    {
        std::vector<uint64_t> out(labels.size());
        for (size_t v = 0; v < labels.size(); v++)
            out[v] = K != 2 && labels[v].data >= a.unreached() ? UINT64_MAX : labels[v].data;
        fwrite(out.data(), sizeof(uint64_t), out.size(), f);
    }
};

double pct(std::vector<double> &v, double p)
{
    if (v.empty())
        return -1;
    size_t i = (size_t)(p * (double)(v.size() - 1) + 0.5);
    return v[i];
}

} // namespace

// One edge of the workload as the graph takes it: weighted only for SSSP
// (RisGraph's own BFS and WCC programs use Graph<void>).
template <typename G> typename G::edge_type edge_of(const Triple &e)
{
    if constexpr (std::is_same_v<typename G::edge_type, Edge<void>>)
        return {e.u, e.v};
    else
        return {e.u, e.v, e.w};
}

template <typename G>
int run(const std::vector<Triple> &edges, uint64_t n, uint64_t loaded, uint64_t batch, uint64_t window,
        unsigned mask, uint64_t root, const char *out_path)
{
    constexpr bool weighted = !std::is_same_v<typename G::edge_type, Edge<void>>;
    using SSSP = std::conditional_t<weighted, Tree<G, 1>, Tree<G, 0>>;
    uint64_t base = resident_bytes();
    G g(n, edges.size(), true, false); // the hint RisGraph's own programs give
#pragma omp parallel for
    for (uint64_t i = 0; i < loaded; i++)
        g.add_edge(edge_of<G>(edges[i]), false);
    Tree<G, 0> *bfs = (mask & 1) ? new Tree<G, 0>(g, root) : nullptr;
    SSSP *sssp = weighted && (mask & 2) ? new SSSP(g, root) : nullptr;
    Tree<G, 2> *cc = (mask & 4) ? new Tree<G, 2>(g, root) : nullptr;
    std::vector<typename G::edge_type> add(batch), del(batch);
    std::vector<double> lat;
    lat.reserve(window / batch + 1);
    uint64_t updates = 0;
    auto t_start = std::chrono::steady_clock::now();
    for (uint64_t at = loaded, old = 0; at < loaded + window; at += batch, old += batch) {
        auto t0 = std::chrono::steady_clock::now();
        uint64_t b = std::min(batch, loaded + window - at);
        std::atomic_uint64_t na(0), nd(0);
        auto adds = [&](uint64_t i) {
            if (g.add_edge(edge_of<G>(edges[at + i]), false) == 0)
                add[na.fetch_add(1)] = edge_of<G>(edges[at + i]);
        };
        auto dels = [&](uint64_t i) {
            if (g.del_edge(edge_of<G>(edges[old + i]), false) == 1)
                del[nd.fetch_add(1)] = edge_of<G>(edges[old + i]);
        };
        // As RisGraph's *_inc_batch: the graph change in parallel past
        // 1024 edges, and no OpenMP region at all below.
        if (b > 1024) {
#pragma omp parallel for
            for (uint64_t i = 0; i < b; i++)
                adds(i);
        } else {
            for (uint64_t i = 0; i < b; i++)
                adds(i);
        }
        if (bfs)
            bfs->added(g, add, na.load());
        if (sssp)
            sssp->added(g, add, na.load());
        if (cc)
            cc->added(g, add, na.load());
        if (b > 1024) {
#pragma omp parallel for
            for (uint64_t i = 0; i < b; i++)
                dels(i);
        } else {
            for (uint64_t i = 0; i < b; i++)
                dels(i);
        }
        if (bfs)
            bfs->deleted(g, del, nd.load());
        if (sssp)
            sssp->deleted(g, del, nd.load());
        if (cc)
            cc->deleted(g, del, nd.load());
        updates += 2 * b;
        lat.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
    uint64_t rss = resident_bytes() - base;
    FILE *out = fopen(out_path, "wb");
    if (out == nullptr)
        return 2;
    if (bfs)
        bfs->write(out);
    if (sssp)
        sssp->write(out);
    if (cc)
        cc->write(out);
    fclose(out);
    std::sort(lat.begin(), lat.end());
    printf("%.0f %.3f %.3f %.3f %llu\n", (double)updates / secs, pct(lat, 0.5), pct(lat, 0.99), pct(lat, 0.999),
           (unsigned long long)rss);
    delete bfs;
    delete sssp;
    delete cc;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 9) {
        fprintf(stderr, "usage: %s EDGES VERTICES LOADED BATCH WINDOW MASK ROOT OUT\n", argv[0]);
        return 2;
    }
    uint64_t n = strtoull(argv[2], nullptr, 10), loaded = strtoull(argv[3], nullptr, 10);
    uint64_t batch = strtoull(argv[4], nullptr, 10), window = strtoull(argv[5], nullptr, 10);
    unsigned mask = (unsigned)strtoul(argv[6], nullptr, 10);
    uint64_t root = strtoull(argv[7], nullptr, 10);
    FILE *f = fopen(argv[1], "rb");
    if (f == nullptr || batch == 0 || mask == 0 || mask > 7) {
        fprintf(stderr, "mkrt_stream_driver: cannot read %s or bad arguments\n", argv[1]);
        return 2;
    }
    fseek(f, 0, SEEK_END);
    uint64_t m = (uint64_t)ftell(f) / sizeof(Triple);
    fseek(f, 0, SEEK_SET);
    std::vector<Triple> edges(m);
    if (fread(edges.data(), sizeof(Triple), m, f) != m || loaded + window > m) {
        fprintf(stderr, "mkrt_stream_driver: %s holds %llu edges, fewer than %llu + %llu\n", argv[1],
                (unsigned long long)m, (unsigned long long)loaded, (unsigned long long)window);
        return 2;
    }
    fclose(f);
    if (mask & 2)
        return run<Graph<uint64_t>>(edges, n, loaded, batch, window, mask, root, argv[8]);
    return run<Graph<void>>(edges, n, loaded, batch, window, mask, root, argv[8]);
}
