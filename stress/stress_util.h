/* stress/stress_util.h - argument parsing and timing shared by stress programs. */
#ifndef MKRT_STRESS_UTIL_H
#define MKRT_STRESS_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline uint64_t stress_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Parses "--name value" pairs into the unsigned options listed in `names`
 * (NULL-terminated); unknown options print usage and exit 2. */
static inline void stress_parse(int argc, char **argv, const char *const *names, unsigned *vals,
                                const char *usage)
{
    for (int i = 1; i < argc; i++) {
        int matched = 0;
        for (int k = 0; names[k] != NULL; k++) {
            if (strcmp(argv[i], names[k]) == 0 && i + 1 < argc) {
                char *end;
                unsigned long v = strtoul(argv[++i], &end, 10);
                if (*end != '\0') {
                    fprintf(stderr, "%s: %s needs a number, got '%s'\n", argv[0], names[k], argv[i]);
                    exit(2);
                }
                vals[k] = (unsigned)v;
                matched = 1;
                break;
            }
        }
        if (!matched) {
            fprintf(stderr, "usage: %s %s\n", argv[0], usage);
            exit(2);
        }
    }
}

#endif
