/* store/store.h: the content-addressed SQLite store (DESIGN §6).
 * Placeholder until the store issue lands; see docs/HACKING.md. */
#ifndef WORLD_STORE_STORE_H
#define WORLD_STORE_STORE_H
#include "store/error.h"
#endif
