/* capsule/profile_diff.h: the layer-by-layer difference of two profiles.
 *
 * Owns: comparing two profile documents as `profile show --format json`
 * prints them (capsule_profile_json), whether both come from this build or
 * one was saved from another build (`worldd profile diff A B`, `--against
 * FILE`), and printing that difference for a reviewer. Rules, mounts and
 * landlock rules are matched by what names them (syscall, path), not by
 * their place, so one added syscall is one change and not a shifted list.
 * The "this_host" layer (facts of the machine that printed it) and the
 * "profile" name are left out: the difference is the profile's own. */
#ifndef WORLD_CAPSULE_PROFILE_DIFF_H
#define WORLD_CAPSULE_PROFILE_DIFF_H
#include <jansson.h>
#include <stdio.h>

/* The changes from a to b, a JSON array of
 * {"layer","path","op":"added"|"removed"|"changed","a"?,"b"?} in document
 * order; [] when they are the same. NULL on OOM. */
json_t *capsule_profile_diff(json_t *a, json_t *b);
/* The changes as text: one "[layer]" header per layer that changed, then
 * one line per change ("+ path: value", "- path: value", "~ path: A -> B"),
 * or "no difference". Returns 0, -1 when out could not be written. */
int capsule_profile_diff_text(json_t *changes, const char *name_a, const char *name_b, FILE *out);
#endif
