/* SPDX-License-Identifier: BSD-2-Clause */
/* examples/graph500/edgelist.c - GAPBS's text edge lists: the kit writes
 * its CSR as .el / .wel for GAPBS to read (bench/graph_bench.c --gapbs),
 * and reads such lists back, refusing what is not one (a truncated line,
 * an id out of range) with the line number. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph500.h"

/* Decimal digits of x at the end of buf[0..len) (no terminator); the start. */
static char *put_u32(char *end, uint32_t x)
{
    do {
        *--end = (char)('0' + x % 10);
        x /= 10;
    } while (x != 0);
    return end;
}

int g500_write_el(const g500_csr *g, const char *path, int weighted, char *why, size_t why_len)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        snprintf(why, why_len, "cannot write the edge list %s: %s. Fix: a writable folder", path,
                 strerror(errno));
        return -1;
    }
    static const size_t cap = 1 << 16;
    char buf[1 << 16];
    size_t len = 0;
    int bad = 0;
    const uint32_t n = g->vertices;
    for (uint32_t u = 0; u < n && !bad; u++)
        for (uint64_t k = g->offsets[u]; k < g->offsets[u + 1]; k++) {
            uint32_t v = g->targets[k];
            if (v <= u)
                continue; /* each undirected edge once; self loops are not in the CSR */
            char line[40], *end = line + sizeof line, *p = end;
            *--p = '\n';
            if (weighted) {
                p = put_u32(p, g->weights != NULL ? g->weights[k] : 1u);
                *--p = ' ';
            }
            p = put_u32(p, v);
            *--p = ' ';
            p = put_u32(p, u);
            size_t l = (size_t)(end - p);
            if (len + l > cap) {
                bad |= fwrite(buf, 1, len, f) != len;
                len = 0;
            }
            memcpy(buf + len, p, l);
            len += l;
        }
    bad |= fwrite(buf, 1, len, f) != len;
    if (n > 0 && g->offsets[n] == g->offsets[n - 1]) /* vertex n - 1 has no edge */
        bad |= fprintf(f, weighted ? "%u %u 1\n" : "%u %u\n", n - 1, n - 1) < 0;
    bad |= fclose(f) != 0;
    if (bad) {
        snprintf(why, why_len, "writing the edge list %s failed (disk full?). Fix: free space", path);
        return -1;
    }
    return 0;
}

/* One decimal field at *p (after blanks) into *x; false when none. */
static int field(const char **p, uint64_t *x, int *overflow)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s < '0' || *s > '9')
        return 0;
    uint64_t v = 0;
    while (*s >= '0' && *s <= '9') {
        if (v > (UINT64_MAX - 9) / 10)
            *overflow = 1;
        else
            v = v * 10 + (uint64_t)(*s - '0');
        s++;
    }
    *p = s;
    *x = v;
    return 1;
}

static int read_fail(FILE *f, g500_edge *e, char *why, size_t why_len, const char *path,
                     unsigned long line, const char *what, const char *fix)
{
    fclose(f);
    free(e);
    if (line > 0)
        snprintf(why, why_len, "edge list %s, line %lu: %s. Fix: %s", path, line, what, fix);
    else
        snprintf(why, why_len, "edge list %s: %s. Fix: %s", path, what, fix);
    return -1;
}

int g500_read_el(const char *path, uint32_t vertices, g500_edge_list *out, char *why,
                 size_t why_len)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(why, why_len, "cannot read the edge list %s: %s. Fix: the path of a .el file",
                 path, strerror(errno));
        return -1;
    }
    const uint64_t limit = vertices > 0 ? vertices : (uint64_t)UINT32_MAX; /* ids below it */
    g500_edge *e = NULL;
    uint64_t n = 0, cap = 0, max_id = 0;
    char line[256], what[160];
    unsigned long no = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        no++;
        size_t l = strlen(line);
        if (l == sizeof line - 1 && line[l - 1] != '\n' && !feof(f))
            return read_fail(f, e, why, why_len, path, no, "line longer than 254 characters",
                             "lines \"u v\" or \"u v w\"");
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\n' || *p == '\r' || *p == '\0' || *p == '#')
            continue;
        uint64_t id[3];
        int overflow = 0, got = 0;
        while (got < 3 && field(&p, &id[got], &overflow))
            got++;
        while (*p == ' ' || *p == '\t' || *p == '\r')
            p++;
        if (got < 2 || (*p != '\n' && *p != '\0')) {
            snprintf(what, sizeof what, got < 2 ? "%d id(s) where an edge needs two (truncated line?)"
                                                : "%d field(s), then text that is not a decimal id",
                     got);
            return read_fail(f, e, why, why_len, path, no, what,
                             "each line \"u v\" or \"u v w\" with decimal vertex ids");
        }
        if (overflow || id[0] >= limit || id[1] >= limit) {
            uint64_t bad = overflow ? UINT64_MAX : id[0] >= limit ? id[0] : id[1];
            snprintf(what, sizeof what, "vertex id %llu is out of range (ids 0..%llu)",
                     (unsigned long long)bad, (unsigned long long)limit - 1);
            return read_fail(f, e, why, why_len, path, no, what,
                             vertices > 0 ? "ids below the vertex count, or a larger count"
                                          : "ids below 4294967295");
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 4096;
            g500_edge *m = realloc(e, (size_t)cap * sizeof *e);
            if (m == NULL)
                return read_fail(f, e, why, why_len, path, 0, "out of memory", "a smaller list");
            e = m;
        }
        e[n++] = (g500_edge){(uint32_t)id[0], (uint32_t)id[1]};
        max_id = id[0] > max_id ? id[0] : max_id;
        max_id = id[1] > max_id ? id[1] : max_id;
    }
    if (ferror(f))
        return read_fail(f, e, why, why_len, path, 0, "read error", "a readable file");
    if (n == 0)
        return read_fail(f, e, why, why_len, path, 0, "no edges", "a file with \"u v\" lines");
    fclose(f);
    uint32_t nv = vertices > 0 ? vertices : (uint32_t)max_id + 1;
    uint32_t scale = 0;
    while (scale < 32 && (1ull << scale) < nv)
        scale++;
    *out = (g500_edge_list){scale, nv, n, 1, e};
    return 0;
}
