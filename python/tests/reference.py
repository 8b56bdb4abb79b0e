# SPDX-License-Identifier: BSD-2-Clause
"""Small pure-Python references the tests compare mkrt with."""
import heapq
from collections import deque

INF = 2**64 - 1
MASK = 2**64 - 1


def adjacency(n, src, dst, w=None):
    adj = [[] for _ in range(n)]
    for i, (u, v) in enumerate(zip(src, dst)):
        adj[int(u)].append((int(v), 1 if w is None else int(w[i])))
    return adj


def bfs(adj, root):
    depth = [INF] * len(adj)
    depth[root] = 0
    q = deque([root])
    while q:
        u = q.popleft()
        for v, _ in adj[u]:
            if depth[v] == INF:
                depth[v] = depth[u] + 1
                q.append(v)
    return depth


def sssp(adj, root):
    dist = [INF] * len(adj)
    dist[root] = 0
    h = [(0, root)]
    while h:
        d, u = heapq.heappop(h)
        if d > dist[u]:
            continue
        for v, w in adj[u]:
            if d + w < dist[v]:
                dist[v] = d + w
                heapq.heappush(h, (d + w, v))
    return dist


def cc(adj):
    """Smallest vertex of each vertex's component (undirected adjacency)."""
    label = [INF] * len(adj)
    for s in range(len(adj)):
        if label[s] != INF:
            continue
        label[s] = s
        q = deque([s])
        while q:
            u = q.popleft()
            for v, _ in adj[u]:
                if label[v] == INF:
                    label[v] = s
                    q.append(v)
    return label


def pagerank(adj, damping=0.85, tolerance=1e-12, max_iterations=1000):
    """GAPBS's PageRank (Jacobi): score(v) = (1 - d)/n + d * sum over v's row u of score(u)/deg(u)."""
    n = len(adj)
    score = [1.0 / n] * n
    for _ in range(max_iterations):
        contrib = [score[u] / len(adj[u]) if adj[u] else 0.0 for u in range(n)]
        new = [(1 - damping) / n + damping * sum(contrib[u] for u, _ in adj[v]) for v in range(n)]
        change = sum(abs(a - b) for a, b in zip(new, score))
        score = new
        if change < tolerance:
            break
    return score


def run_items(cells, items, log):
    """Runs items one after another as mkrt's built-ins define them (op.h)."""
    for op, i, o, p in items:
        op, i, o, p = int(op), int(i), int(o), int(p)
        if op == 1:    # STORE
            cells[o] = p
        elif op == 2:  # ADD
            cells[o] = (cells[i] + p) & MASK
        elif op == 3:  # APPEND
            log.setdefault(o, []).append(p)
        elif op == 4:  # MIN (the sum saturates)
            cells[o] = min(cells[o], min(cells[i] + p, MASK))
        elif op == 6:  # OR
            cells[o] |= cells[i] | p
        elif op == 7:  # ACC
            cells[o] = (cells[o] + p) & MASK
    return cells
