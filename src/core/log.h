#ifndef MC_LOG_H
#define MC_LOG_H
/* Diagnostics go to stderr, prefixed with the world rank. */
void mc_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void mc_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#endif
