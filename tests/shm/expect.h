/* EXPECT(cond, fmt, ...) of the shared-memory test programs: prints the first 20 failed
 * checks with the world rank. The program defines `static long fails` and `static int wrank`
 * before including this. */
#ifndef MC_TEST_EXPECT_H
#define MC_TEST_EXPECT_H
#include <stdio.h>

#define EXPECT(cond, ...)                                                                                    \
    do {                                                                                                     \
        if (!(cond) && ++fails <= 20) {                                                                      \
            printf("FAIL rank %d: %s: ", wrank, #cond);                                                      \
            printf(__VA_ARGS__);                                                                             \
            printf("\n");                                                                                    \
            fflush(stdout);                                                                                  \
        }                                                                                                    \
    } while (0)
#endif
