/* store/scan.h: the integrity scan (docs/design.md §6.5, docs/store.md).
 *
 * Owns: walking log_entries (by index) then worlds (by ref), and with
 * `objects` every object (by ref), within a row and time budget,
 * recomputing every hash on the way. For each entry: its entryHash from its
 * canonical JSON, its columns against that JSON, the chain (index =
 * previous + 1, prevEntryHash = previous entryHash), and everything the
 * committed call depends on: the invocation record it names (transitionRef:
 * payload hash, kind world/invocation-record/v1|v2, transitionFn,
 * interpreter and semanticsEpoch = the header), the record's input, plan,
 * output, effect records (kind, hash, and their law when the caller gives
 * effect_record_check) with their requests and results, the transition
 * source (kind, hash, canonical source form), the archived interpreter file (hash) and its manifest.json, and the
 * journal's committed outcome naming the record. For each world: its ref
 * from its payload, its columns, its logHead against the entry of its
 * revision, and the payload hash of its stateRoot. It prints exactly these
 * lines and nothing on a clean complete scan:
 *   integrity_hole table=log_entries index=N field=F
 *   integrity_hole table=objects index=N field=F ref=R      (a dependency of entry N)
 *   integrity_hole table=artifacts index=N field=F ref=R    (interpreter file / manifest)
 *   integrity_hole table=journal index=N field=F ref=R      (the invocation's outcome)
 *   integrity_hole table=worlds ref=R field=F
 *   integrity_hole table=log_tree index=N field=hash         (schema 3: the Merkle tree's
 *                                                            hashes entry N's append stored)
 *   integrity_hole table=objects ref=R field=payload        (objects pass)
 *   integrity_scan_incomplete log_rows=N world_rows=N holes=N resume_log_index=N resume_world_ref=R
 *     [object_rows=N resume_object_ref=R]                   (objects pass only)
 * A later scan resumes from the printed cursors (resume_log_index is the next
 * entry to check; resume_world_ref / resume_object_ref the next ref, all
 * zeros = from the first). It never repairs anything.
 *
 * Runs on the store's SQL driver (store/db.h): a store on SQLite or on
 * PostgreSQL, the same lines (docs/store.md, "Integrity scan", On
 * PostgreSQL: its cursors paged by their keys, one REPEATABLE READ
 * snapshot, the interpreter checked from the archive table). */
#ifndef WORLD_STORE_SCAN_H
#define WORLD_STORE_SCAN_H
#include <stdint.h>
#include <stdio.h>
#include "store/store.h"
#include <jansson.h>

#define WORLD_SCAN_START_ROWS 20000   /* daemon start-up budget */
#define WORLD_SCAN_START_SECONDS 2.0
/* A full scan (no budget, no resume point) reads objects, the journal's
 * invocation intents, worlds and the log each once in storage order and
 * checks every reference against sets in memory (about 40 bytes an object,
 * 130 a v1 record, 100 an intent, 70 an entry and a world: some 700 MB at
 * 10^6 coordinator-shaped entries); a store of more objects or intents
 * than this (or a log index beyond it) is scanned by the indexed path,
 * entry by entry, as a budgeted or resumed scan always is. Either way an
 * object is verified once however many entries name it: a budgeted or
 * resumed scan keeps the verdicts it made (scan.c, "the verdicts of a
 * budgeted scan"; bounded: past 524,288 objects they are dropped and made
 * again as needed); only `indexed` below, the tests' comparison, verifies
 * at each reference. */
#define WORLD_SCAN_STREAM_MAX_OBJECTS 16000000LL
#define WORLD_SCAN_ZERO_REF "sha256:0000000000000000000000000000000000000000000000000000000000000000"

struct world_scan_opts {
	long long max_rows;        /* 0 = no row limit */
	double max_seconds;        /* 0 = no time limit */
	long long resume_log_index;/* 0 or 1 = from the first entry */
	const char *resume_world_ref; /* NULL = from the first world */
	int objects;               /* also recompute every object (orphans included) */
	const char *resume_object_ref; /* NULL = from the first object */
	/* The effect record law (broker/effect.h broker_record_check), given by
	 * the caller because the law is the broker's; NULL = kind and hash only. */
	int (*effect_record_check)(const json_t *record, struct world_err *err);
	/* 1: the indexed path even for a full scan (the tests' comparison) */
	int indexed;
};
struct world_scan_result {
	long long log_rows, world_rows, holes;
	int complete;
	long long resume_log_index;
	char resume_world_ref[WORLD_REF_SIZE];
	long long object_rows;
	char resume_object_ref[WORLD_REF_SIZE];
	uint64_t bytes_hashed;
	/* object payloads hashed (each verification of an object: a full or
	 * budgeted scan verifies each object at most once, the indexed path
	 * each time an entry names it) */
	long long objects_verified;
};
/* Lines go to out (may be NULL). Returns 0 when the scan ran (holes or not;
 * see res), -1 with err when it could not run (bad cursor, database error). */
int world_scan(struct world_store *st, const struct world_scan_opts *opts, FILE *out, struct world_scan_result *res,
               struct world_err *err);
/* The daemon's start-up scan (`worldd serve`, docs/daemon.md): world_scan
 * from the first entry within WORLD_SCAN_START_ROWS rows and
 * WORLD_SCAN_START_SECONDS, with the caller's record law (serve passes
 * broker_record_check). */
int world_scan_start(struct world_store *st, int (*effect_record_check)(const json_t *record, struct world_err *err),
                     FILE *out, struct world_scan_result *res, struct world_err *err);
#endif
