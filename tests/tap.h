/* tests/tap.h: the tiny TAP producer every C test uses.
 * Each ok() is one assertion that the automake TAP driver counts; a test
 * program ends with done_testing(), which prints the plan and returns the
 * exit status. Assertions print what was expected and what was seen. */
#ifndef WORLD_TESTS_TAP_H
#define WORLD_TESTS_TAP_H
#include <stdbool.h>
#include <stddef.h>

bool tap_ok(bool cond, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
bool tap_is_str(const char *got, const char *want, const char *file, int line,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));
bool tap_is_int(long long got, long long want, const char *file, int line,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void tap_skip(const char *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tap_bail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
int tap_done(void);

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define is_str(got, want, ...) tap_is_str((got), (want), __FILE__, __LINE__, __VA_ARGS__)
#define is_int(got, want, ...) tap_is_int((long long)(got), (long long)(want), __FILE__, __LINE__, __VA_ARGS__)
#define skip(why, ...) tap_skip((why), __VA_ARGS__)
#define diag(...) tap_diag(__VA_ARGS__)
#define bail(...) tap_bail(__VA_ARGS__)
#define done_testing() tap_done()
#endif
