/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_bitmap.c - base/bitmap.h: each operation's contract, and
 * set_new's "exactly one caller sees the bit as new" from two threads. */
#include <stdlib.h>

#include "../base/bitmap.h"
#include "../base/thread.h"
#include "tap.h"

#define BITS 1000u
#define WORDS ((BITS + 63) / 64)

static mkrt__bitmap shared[WORDS];

typedef struct racer {
    unsigned won;
} racer;

/* Every bit set by both racers: each bit is new to exactly one. */
static int race(void *arg)
{
    racer *r = arg;
    for (size_t i = 0; i < BITS; i++)
        r->won += mkrt__bitmap_set_new(shared, i);
    return 0;
}

/* mkrt__popcount64 (the inline count where the build has no POPCNT)
 * against a bit at a time, on edge words and pseudo-random ones; and
 * mkrt__bitmap_count (POPCNT where the CPU has it) over the same words. */
static void popcounts(void)
{
    static const uint64_t edge[] = {0, 1, UINT64_MAX, (uint64_t)1 << 63, 0x5555555555555555u,
                                    0xaaaaaaaaaaaaaaaau, 0x8000000000000001u, 0x0f0f0f0f0f0f0f0fu};
    mkrt__bitmap words[64];
    uint64_t x = 0x9e3779b97f4a7c15u, total = 0;
    unsigned wrong = 0;
    for (size_t i = 0; i < 64 + sizeof edge / sizeof *edge; i++) {
        uint64_t v = x;
        if (i < sizeof edge / sizeof *edge) {
            v = edge[i];
        } else {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            v = i % 3 == 0 ? x & (x >> 5) : x; /* sparser words too */
            atomic_init(&words[i - sizeof edge / sizeof *edge], v);
        }
        uint64_t n = 0;
        for (unsigned bit = 0; bit < 64; bit++)
            n += (v >> bit) & 1;
        wrong += mkrt__popcount64(v) != n;
        total += i < sizeof edge / sizeof *edge ? 0 : n;
    }
    is(wrong, 0, "popcount64: every word's count is its bits' (%zu words)", 64 + sizeof edge / sizeof *edge);
    is(mkrt__bitmap_count(words, 64), total, "bitmap_count over 64 random words: %llu bits",
       (unsigned long long)total);
    is(mkrt__bitmap_count(words, 0), 0, "bitmap_count of no words: 0");
}

int main(void)
{
    popcounts();
    is(mkrt__bitmap_words(0), 0, "0 bits: 0 words");
    is(mkrt__bitmap_words(64), 1, "64 bits: 1 word");
    is(mkrt__bitmap_words(65), 2, "65 bits: 2 words");

    mkrt__bitmap b[WORDS];
    for (size_t w = 0; w < WORDS; w++)
        atomic_init(&b[w], 0);
    ok(!mkrt__bitmap_test(b, 5), "empty: bit 5 clear");
    is(mkrt__bitmap_next(b, WORDS, 0), MKRT__BITMAP_NONE, "empty: no next bit");
    mkrt__bitmap_set(b, 5);
    mkrt__bitmap_set(b, 5);
    ok(mkrt__bitmap_test(b, 5) && !mkrt__bitmap_test(b, 4) && !mkrt__bitmap_test(b, 6), "set 5: only 5");
    ok(mkrt__bitmap_set_new(b, 63), "set_new 63: new");
    ok(!mkrt__bitmap_set_new(b, 63), "set_new 63 again: not new");
    ok(mkrt__bitmap_set_new(b, 64), "set_new 64 (the next word): new");
    ok(mkrt__bitmap_set_new(b, BITS - 1), "set_new the last bit: new");
    is(mkrt__bitmap_count(b, WORDS), 4, "count: 4");
    size_t seen[8], n = 0;
    for (size_t i = mkrt__bitmap_next(b, WORDS, 0); i != MKRT__BITMAP_NONE && n < 8;
         i = mkrt__bitmap_next(b, WORDS, i + 1))
        seen[n++] = i;
    ok(n == 4 && seen[0] == 5 && seen[1] == 63 && seen[2] == 64 && seen[3] == BITS - 1,
       "iterate: 5, 63, 64, %u in order", BITS - 1);
    is(mkrt__bitmap_next(b, WORDS, 6), 63, "next from 6: 63");
    is(mkrt__bitmap_next(b, WORDS, 65), BITS - 1, "next from 65: the last");
    mkrt__bitmap_clear(b, 63);
    ok(!mkrt__bitmap_test(b, 63) && mkrt__bitmap_test(b, 64), "clear 63: 64 stays");
    for (size_t i = 0; i < BITS; i++)
        mkrt__bitmap_set(b, i);
    mkrt__bitmap_clear_range(b, 10, 130);
    ok(mkrt__bitmap_test(b, 9) && !mkrt__bitmap_test(b, 10) && !mkrt__bitmap_test(b, 64) &&
           !mkrt__bitmap_test(b, 129) && mkrt__bitmap_test(b, 130),
       "clear_range [10, 130): 9 and 130 stay");
    is(mkrt__bitmap_count(b, WORDS), BITS - 120, "... 120 bits cleared");
    mkrt__bitmap_clear_range(b, 200, 200);
    is(mkrt__bitmap_count(b, WORDS), BITS - 120, "clear_range of nothing: nothing");
    mkrt__bitmap_clear_range(b, 192, 256);
    ok(!mkrt__bitmap_test(b, 192) && !mkrt__bitmap_test(b, 255) && mkrt__bitmap_test(b, 256) &&
           mkrt__bitmap_test(b, 191),
       "clear_range of one whole word");

    for (size_t w = 0; w < WORDS; w++)
        atomic_init(&shared[w], 0);
    racer r[2] = {{0}, {0}};
    mkrt__thread th[2];
    for (int i = 0; i < 2; i++)
        if (mkrt__thread_start(&th[i], race, &r[i]) != 0)
            bail_out("thread start");
    for (int i = 0; i < 2; i++)
        mkrt__thread_join_result(th[i], NULL);
    is(r[0].won + r[1].won, BITS, "two threads set_new every bit: each bit new exactly once (%u + %u)", r[0].won,
       r[1].won);
    is(mkrt__bitmap_count(shared, WORDS), BITS, "... and every bit is set");
    return done_testing();
}
