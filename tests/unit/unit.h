/* Minimal assertion helpers for the unit tests (no MPI launcher needed). */
#ifndef MCOLL_UNIT_H
#define MCOLL_UNIT_H
#include <stdio.h>

static long unit_failures, unit_checks;

#define CHECK(cond, ...)                                                                       \
    do {                                                                                       \
        unit_checks++;                                                                         \
        if (!(cond)) {                                                                         \
            if (++unit_failures <= 30) {                                                       \
                printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                         \
                printf(__VA_ARGS__);                                                           \
                printf("\n");                                                                  \
            }                                                                                  \
        }                                                                                      \
    } while (0)

static inline int unit_summary(const char *name)
{
    printf("%s: %ld checks, %ld failures%s\n", name, unit_checks, unit_failures,
           unit_failures ? "" : " (passed)");
    return unit_failures ? 1 : 0;
}
#endif
