# store/: canonical JSON, refs, hashing, the SQLite store, the integrity scan.
libworld_a_SOURCES += store/error.c store/error.h store/store.h
